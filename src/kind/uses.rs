//! Which options each kind of target uses: the one table the plan checks the given options
//! against, so that an option no target can use is refused instead of silently ignored.

use super::target::Target;
use super::Kind;

/// An option as the user names it, the kinds it applies to (in words, for the error), and
/// the test of a kind.
type Row = (&'static str, &'static str, fn(&Kind) -> bool);

/// The options that shape the attempts of some kinds only.
pub const OPTIONS: &[Row] = &[
    ("--status", HTTP, http),
    ("--contains", HTTP_OR_FILE, http_or_file),
    ("--matches", HTTP_OR_FILE, http_or_file),
    ("--json-field", HTTP, http),
    ("--header-matches", HTTP, http),
    ("--method", HTTP, http),
    ("--header", HTTP_OR_GRPC, http_or_grpc),
    ("--unix-socket", HTTP_OR_GRPC, http_or_grpc),
    ("--insecure", TLS, tls),
    ("--cacert", TLS, tls),
    ("--cert", TLS, tls),
    ("--key", TLS, tls),
    ("--tls-server-name", TLS, tls),
    ("--k8s-serviceaccount-dir", K8S, k8s),
    ("--kubeconfig", K8S, k8s),
    ("--context", K8S, k8s),
];

const HTTP: &str = "http(s):// targets";
const HTTP_OR_FILE: &str = "http(s):// and file targets";
const HTTP_OR_GRPC: &str = "http(s):// and grpc(s):// targets";
const TLS: &str = "http(s)://, grpcs://, rediss://, amqps:// and kafkas:// targets";
const K8S: &str = "k8s:// targets";

fn http(kind: &Kind) -> bool {
    matches!(kind, Kind::Http(_))
}

fn http_or_file(kind: &Kind) -> bool {
    matches!(kind, Kind::Http(_) | Kind::File(_))
}

fn http_or_grpc(kind: &Kind) -> bool {
    matches!(kind, Kind::Http(_) | Kind::Grpc(_))
}

/// `http://` too: a redirect on the same host may lead to `https://`. `k8s://` trusts its
/// service account's CA alone.
fn tls(kind: &Kind) -> bool {
    match kind {
        Kind::Http(_) => true,
        Kind::Grpc(target) => target.tls,
        Kind::Redis(target) => target.tls,
        Kind::Amqp(target) => target.tls,
        Kind::Kafka(target) => target.tls,
        _ => false,
    }
}

fn k8s(kind: &Kind) -> bool {
    matches!(kind, Kind::K8s(_))
}

/// Checks the `given` options (named as in [`OPTIONS`]) against the targets. One that none of
/// them uses is the usage error, naming it and the targets; each that only some use comes back
/// with the names of those, to be said when the run starts.
pub fn check(given: &[&'static str], targets: &[Target]) -> Result<Vec<Partial>, String> {
    let mut partial: Vec<Partial> = Vec::new();
    for (option, applies_to, uses) in OPTIONS.iter().filter(|(o, ..)| given.contains(o)) {
        let using: Vec<String> = targets
            .iter()
            .filter(|target| uses(&target.kind))
            .map(ToString::to_string)
            .collect();
        if using.is_empty() {
            return Err(unused(option, applies_to, targets));
        }
        if using.len() == targets.len() {
            continue;
        }
        match partial.iter_mut().find(|p| p.targets == using) {
            Some(same) => same.options.push(option),
            None => partial.push(Partial {
                options: vec![option],
                targets: using,
            }),
        }
    }
    Ok(partial)
}

/// Options that apply to some targets only, and the targets they apply to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partial {
    pub options: Vec<&'static str>,
    pub targets: Vec<String>,
}

impl std::fmt::Display for Partial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = if self.options.len() == 1 {
            "applies"
        } else {
            "apply"
        };
        let (options, targets) = (self.options.join(", "), self.targets.join(", "));
        write!(f, "{options} {verb} to {targets} only")
    }
}

/// The error of an option no target uses: a bare HOST:PORT is a TCP target, so the fix for an
/// HTTP option there is most often the URL.
fn unused(option: &str, applies_to: &str, targets: &[Target]) -> String {
    let names: Vec<String> = targets.iter().map(ToString::to_string).collect();
    let names = crate::engine::first_few(&names);
    let tcp = targets.iter().any(|t| matches!(t.kind, Kind::Tcp(_)));
    let hint = match tcp && applies_to.starts_with("http") {
        true => " (for an HTTP check, write the target as http://HOST:PORT/PATH)",
        false => "",
    };
    format!("{option} does nothing for {names}: it applies to {applies_to} only{hint}")
}

/// The start line's note of the options that apply to some targets only, e.g.
/// ` (--json-field applies to http://api/health only)`; empty when there is none.
pub fn note(partial: &[Partial]) -> String {
    match partial.is_empty() {
        true => String::new(),
        false => {
            let notes: Vec<String> = partial.iter().map(ToString::to_string).collect();
            format!(" ({})", notes.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::target::Target;

    fn uses(option: &str, target: &str) -> bool {
        let (.., test) = OPTIONS.iter().find(|(name, ..)| *name == option).unwrap();
        test(&Target::parse(target).unwrap().kind)
    }

    #[test]
    fn each_kind_uses_its_options_only() {
        assert!(uses("--json-field", "http://a/health"));
        assert!(!uses("--json-field", "127.0.0.1:8080"));
        assert!(!uses("--contains", "redis://db:6379"));
        assert!(uses("--contains", "/tmp/ready"));
        assert!(!uses("--header-matches", "grpc://a:50051"));
        assert!(uses("--header", "grpc://a:50051"));
        assert!(!uses("--insecure", "grpc://a:50051"));
        assert!(uses("--insecure", "grpcs://a:50051"));
        assert!(uses("--cacert", "rediss://a:6380"));
        assert!(!uses("--cacert", "redis://a:6379"));
        assert!(uses("--cacert", "kafkas://a:9092"));
        assert!(!uses("--insecure", "kafka://a:9092"));
        assert!(!uses("--cacert", "k8s://job/migrate"));
        assert!(uses("--k8s-serviceaccount-dir", "k8s://job/migrate"));
    }
}
