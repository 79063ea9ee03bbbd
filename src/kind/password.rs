//! A target's password given apart from its URL (`--password-file`, `--password-env`), so that
//! a Secret holding `/`, `#`, `?` or `@` needs no percent-encoding: matched to its targets by
//! HOST or HOST:PORT, and set on those that use a password (`redis(s)://`, `http(s)://`).

use super::target::Target;
use super::Kind;
use crate::secrets::Secret;

/// `HOST[:PORT]=VALUE`: the targets it names (indices) and the value (a file or a variable).
pub fn parse<'a>(
    option: &str,
    given: &'a str,
    targets: &[Target],
) -> Result<(Vec<usize>, &'a str), String> {
    let shown = crate::text::quoted(given);
    let Some((key, value)) = given
        .split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
    else {
        return Err(format!("{option} {shown}: expected HOST[:PORT]=VALUE"));
    };
    let named: Vec<usize> = (0..targets.len())
        .filter(|&i| names(&targets[i].kind, key))
        .collect();
    if named.is_empty() {
        let all: Vec<String> = targets.iter().map(ToString::to_string).collect();
        return Err(format!(
            "{option} {shown}: no target has host {} (targets: {})",
            crate::text::quoted(key),
            crate::engine::first_few(&all)
        ));
    }
    for &i in &named {
        if !matches!(targets[i].kind, Kind::Redis(_) | Kind::Http(_)) {
            return Err(format!(
                "{option} {shown}: {} uses no password (readiness needs no login); only \
                 redis(s):// and http(s):// targets send one",
                targets[i]
            ));
        }
    }
    Ok((named, value))
}

/// Whether `key` is the host, or HOST:PORT, of a networked target.
fn names(kind: &Kind, key: &str) -> bool {
    let endpoint = match kind {
        Kind::Http(target) => &target.endpoint,
        Kind::Redis(target) => &target.endpoint,
        Kind::Tcp(endpoint)
        | Kind::Mysql(endpoint)
        | Kind::Memcached(endpoint)
        | Kind::Nats(endpoint)
        | Kind::Zookeeper(endpoint) => endpoint,
        Kind::Postgres(target) => &target.endpoint,
        Kind::Amqp(target) => &target.endpoint,
        Kind::Kafka(target) => &target.endpoint,
        Kind::Grpc(target) => &target.endpoint,
        _ => return false,
    };
    let host = endpoint.host.to_string();
    key == host || key == format!("{host}:{}", endpoint.port)
}

/// Sets `password` (a file's content, one final newline dropped, or a variable's value) on a
/// target; a URL that has a password already is refused, not overridden.
pub fn set(target: &mut Target, password: &str, option: &str) -> Result<(), String> {
    let password = sent(password);
    let shown = target.to_string();
    if password.is_empty() {
        return Err(format!("{option}: the password for {shown} is empty"));
    }
    let twice = || format!("{option}: {shown} has a password in its URL already");
    match &mut target.kind {
        Kind::Redis(redis) => match &redis.auth {
            Some(_) => return Err(twice()),
            None => {
                redis.auth = Some(super::redis::RedisAuth {
                    user: None,
                    password: Secret::new(password.to_string()),
                })
            }
        },
        Kind::Http(http) => {
            let user = match &http.credentials {
                Some(given) if given.contains(&b':') => return Err(twice()),
                Some(user) => user.clone(),
                None => Vec::new(),
            };
            let mut credentials = user;
            credentials.push(b':');
            credentials.extend_from_slice(password.as_bytes());
            http.credentials = Some(credentials);
        }
        _ => {}
    }
    Ok(())
}

/// The password sent for a file's or variable's `text`: without one final newline (`echo`
/// adds one; a Secret's key has none).
pub fn sent(text: &str) -> &str {
    text.strip_suffix('\n')
        .map_or(text, |p| p.strip_suffix('\r').unwrap_or(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(texts: &[&str]) -> Vec<Target> {
        texts.iter().map(|t| Target::parse(t).unwrap()).collect()
    }

    #[test]
    fn a_key_names_its_targets_by_host_or_host_and_port() {
        let all = targets(&["redis://cache:6379", "http://ops@api:8080/h", "db:5432"]);
        assert_eq!(parse("--password-env", "cache=P", &all), Ok((vec![0], "P")));
        assert_eq!(
            parse("--password-env", "api:8080=P", &all),
            Ok((vec![1], "P"))
        );
        let none = parse("--password-env", "nope=P", &all).unwrap_err();
        assert!(none.contains("no target has host \"nope\""), "{none}");
        let unused = parse("--password-env", "db=P", &all).unwrap_err();
        assert!(unused.contains("db:5432 uses no password"), "{unused}");
        assert!(parse("--password-env", "cache", &all).is_err());
    }

    #[test]
    fn a_password_is_set_with_any_character_and_never_twice() {
        let mut all = targets(&["redis://cache", "http://ops@api/h", "redis://:x@other"]);
        set(&mut all[0], "a/b#c?d@e\n", "--password-file").unwrap();
        let Kind::Redis(redis) = &all[0].kind else {
            panic!()
        };
        assert_eq!(redis.auth.as_ref().unwrap().password.expose(), "a/b#c?d@e");
        set(&mut all[1], "p:w", "--password-env").unwrap();
        let Kind::Http(http) = &all[1].kind else {
            panic!()
        };
        assert_eq!(http.credentials.as_deref(), Some(&b"ops:p:w"[..]));
        assert!(set(&mut all[2], "y", "--password-env").is_err());
        assert!(set(&mut all[0].clone(), "\n", "--password-env").is_err());
    }
}
