//! Where a command's words hold a password, in one place: what readiness scripts write
//! (`mysqladmin ping -pSECRET`, `redis-cli -a SECRET ping`, `PGPASSWORD=SECRET pg_isready`,
//! `psql postgres://u:SECRET@db`, `curl -u ops:SECRET`, `-H 'Authorization: Bearer SECRET'`,
//! the same inside `sh -c '…'`). The target is shown with them hidden, and the run learns them
//! as secrets, so that a command quoting its arguments back shows none either. What runs is
//! unchanged.

use std::ops::Range;

use super::words::{self, Word};
use crate::secrets::{looks_secret, name_parts, query_secrets, userinfos, Secrets};

/// How a program takes a password among its words.
#[derive(Debug, Clone, Copy)]
enum Given {
    /// `--NAME=VALUE` (or `-NAME=VALUE`), or `--NAME VALUE` when the next word is no option.
    Long(&'static str),
    /// `-XVALUE`, or `-X VALUE` when the next word is no option.
    Short(char),
    /// `-X USER:PASSWORD` (also `-X` last in a bundle of flags: `-fsu`) or `-XUSER:PASSWORD`:
    /// what follows the first `:` (curl's `-u`).
    ShortUser(char),
    /// `--NAME USER:PASSWORD` or `--NAME=USER:PASSWORD`.
    LongUser(&'static str),
}

use Given::{Long, LongUser, Short, ShortUser};

/// MySQL's and MariaDB's clients: `-pSECRET`, `--password=SECRET`. A bare `-p` or `--password`
/// asks for it, and the next word is then the database; it is hidden all the same, since a
/// password written apart (`-p SECRET`) is a common slip.
const MYSQL: &[Given] = &[Short('p')];
/// `redis-cli -a SECRET`, `--pass SECRET`.
const REDIS: &[Given] = &[Short('a'), Long("pass")];
/// `mongosh -p SECRET`, `cqlsh -p SECRET`.
const DASH_P: &[Given] = &[Short('p')];

/// Programs by name (its file name; a trailing `*` is a prefix) and how each takes a password
/// beyond [`ANY`].
const PROGRAMS: &[(&str, &[Given])] = &[
    ("mysql*", MYSQL),
    ("mariadb*", MYSQL),
    ("redis-cli", REDIS),
    ("valkey-cli", REDIS),
    ("keydb-cli", REDIS),
    ("mongosh", DASH_P),
    ("mongo", DASH_P),
    ("cqlsh", DASH_P),
    ("sshpass", DASH_P),
    ("sqlcmd", &[Short('P')]),
    (
        "curl",
        &[
            ShortUser('u'),
            LongUser("user"),
            ShortUser('U'),
            LongUser("proxy-user"),
        ],
    ),
    ("etcdctl", &[LongUser("user")]),
];

/// Options whose value is a password in any program, unless the program's own rule for the
/// same name says otherwise. Any other `--NAME=VALUE` whose name says it is secret is hidden
/// too (see [`joined_secret`]); these are the ones also written as two words.
const ANY: &[Given] = &[
    Long("password"),
    Long("passwd"),
    Long("pass"),
    Long("token"),
    Long("auth-token"),
    Long("access-token"),
    Long("api-key"),
    Long("apikey"),
    Long("secret"),
    Long("client-secret"),
    Long("http-password"),
    Long("proxy-password"),
    Long("ftp-password"),
];

/// Programs that run the next program: the password rules are those of the program after
/// them (`env PGPASSWORD=… psql`, `timeout 5 mysqladmin -p…`).
const WRAPPERS: &[&str] = &[
    "env", "exec", "command", "nice", "nohup", "timeout", "stdbuf", "time",
];

/// Names in `NAME=VALUE` that hold a secret word but are not secrets: the working folder.
const NOT_SECRET: &[&str] = &["PWD", "OLDPWD"];

/// Parts of an option's name that say its value names where a secret is, not the secret
/// (`--password-file=/run/pw`, `--authenticationDatabase=admin`).
const NOT_THE_VALUE: &[&str] = &[
    "file",
    "path",
    "dir",
    "env",
    "stdin",
    "database",
    "db",
    "source",
    "mechanism",
    "method",
    "type",
    "mode",
];

/// One password among a command's words.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Found {
    /// The word it is in.
    word: usize,
    /// Its bytes in that word (quotes a script puts around it included).
    range: Range<usize>,
    /// The password as the program gets it.
    value: String,
    /// Whether it is a header's value (`Authorization: Bearer …`), whose parts a peer may
    /// quote alone.
    header: bool,
}

/// The passwords among `words` (a command, its program first).
fn find(words: &[&str]) -> Vec<Found> {
    let pieces: Vec<Piece> = (words.iter().enumerate())
        .map(|(word, text)| Piece {
            text,
            word,
            sources: None,
        })
        .collect();
    let mut found = Vec::new();
    in_command(&pieces, &mut found);
    found
}

/// `rest` (what follows `exec:`) as it may be shown: as written, each password `***`. A rest
/// that does not split (an unclosed quote) is cut at spaces, so that its error hides them too.
pub fn shown(rest: &str) -> String {
    match words::split(rest) {
        Ok(words) => shown_words(rest, &words),
        Err(_) => shown_words(rest, &loose(rest)),
    }
}

/// `rest`, split into `words`, with each password `***`: as written where that reads back as
/// the same word, passwords aside (quotes and escapes around them kept), else quoted anew.
pub fn shown_words(rest: &str, words: &[Word]) -> String {
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let found = find(&texts);
    let mut shown = String::with_capacity(rest.len());
    let mut from = 0;
    for (index, word) in words.iter().enumerate() {
        let ranges = merged(
            found
                .iter()
                .filter(|f| f.word == index)
                .map(|f| f.range.clone()),
        );
        if ranges.is_empty() {
            continue;
        }
        let hidden = hide_ranges(&word.text, &ranges);
        let mut replaced = String::new();
        let mut at = word.written.start;
        for range in &ranges {
            let written = word.sources[range.start].start..word.sources[range.end - 1].end;
            replaced.push_str(&rest[at..written.start.max(at)]);
            replaced.push_str("***");
            at = written.end.max(at);
        }
        replaced.push_str(&rest[at..word.written.end]);
        let reads_back =
            words::split(&replaced).is_ok_and(|back| back.len() == 1 && back[0].text == hidden);
        shown.push_str(&rest[from..word.written.start]);
        shown.push_str(&match reads_back {
            true => replaced,
            false => quote(&hidden),
        });
        from = word.written.end;
    }
    shown.push_str(&rest[from..]);
    shown
}

/// Learns the passwords of every `exec:` command in `text` (an argument, a variable's value:
/// a target, `--group NAME=…`, a list separated by commas) as secrets of the run.
pub fn learn(secrets: &Secrets, text: &str) {
    for start in starts(text) {
        let rest = &text[start..];
        let rest = &rest[..words::end_in_list(rest)];
        let words = words::split(rest).unwrap_or_else(|_| loose(rest));
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        for found in find(&texts) {
            match found.header {
                true => secrets.learn_header_value(found.value.as_bytes()),
                false => secrets.learn(found.value.as_bytes()),
            }
        }
    }
}

/// Where each command of `text` starts, after its `exec:`: at the start, or after `=`, `,` or
/// white space.
fn starts(text: &str) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    (lower.match_indices(super::PREFIX))
        .filter(|&(at, _)| {
            let before = text[..at].chars().next_back();
            before.map_or(true, |c| c.is_whitespace() || c == '=' || c == ',')
        })
        .map(|(at, _)| at + super::PREFIX.len())
        .filter(|&at| super::written(&text[at - super::PREFIX.len()..]).is_some())
        .collect()
}

/// `text` cut at spaces, as written: for a command that does not split.
fn loose(text: &str) -> Vec<Word> {
    pieces_of(text)
        .map(|(at, piece)| Word {
            text: piece.to_string(),
            written: at..at + piece.len(),
            sources: (at..at + piece.len()).map(|byte| byte..byte + 1).collect(),
        })
        .collect()
}

/// The pieces of `text` between white space, each with where it starts.
fn pieces_of(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(char::is_whitespace)
        .filter(|piece| !piece.is_empty())
        .map(move |piece| (piece.as_ptr() as usize - text.as_ptr() as usize, piece))
}

/// One word of a command, or one word of a script a word holds (`sh -c 'mysql -p…'`).
#[derive(Debug, Clone, Copy)]
struct Piece<'a> {
    text: &'a str,
    /// The command's word it is in.
    word: usize,
    /// In a script: where each byte of `text` is written in that word.
    sources: Option<&'a [Range<usize>]>,
}

impl Piece<'_> {
    /// Found: `range` of this piece, unless it is a variable a script expands (`-p"$PW"`).
    fn found(&self, range: Range<usize>, header: bool, found: &mut Vec<Found>) {
        let value = &self.text[range.clone()];
        if value.is_empty() || (self.sources.is_some() && value.starts_with('$')) {
            return;
        }
        let range = match self.sources {
            Some(sources) => sources[range.start].start..sources[range.end - 1].end,
            None => range,
        };
        found.push(Found {
            word: self.word,
            range,
            value: value.to_string(),
            header,
        });
    }
}

/// The passwords of one command's pieces, its program's rules and [`ANY`]'s applied after it.
fn in_command(pieces: &[Piece], found: &mut Vec<Found>) {
    let program = program(pieces);
    let rules = rules(program.map(|(_, name)| name));
    let mut skip = false;
    for (index, piece) in pieces.iter().enumerate() {
        if std::mem::take(&mut skip) {
            continue;
        }
        // A word holding white space may be a script (`sh -c '…'`), or a conninfo string.
        let spaced = piece.sources.is_none() && piece.text.contains(char::is_whitespace);
        let after_c = index > 0 && is_script_flag(pieces[index - 1].text);
        anywhere(piece, spaced && after_c, found);
        if spaced {
            in_script(piece, found);
        }
        if program.map_or(true, |(at, _)| index <= at) {
            continue;
        }
        let next = pieces.get(index + 1);
        for given in &rules {
            match hit(*given, piece.text) {
                None => continue,
                Some(Hit::Here(range)) => piece.found(range, false, found),
                Some(Hit::Next { user }) => {
                    let Some(next) = next.filter(|next| !is_option(next.text)) else {
                        break;
                    };
                    skip = true;
                    let from = match user {
                        true => next.text.find(':').map(|colon| colon + 1),
                        false => Some(0),
                    };
                    if let Some(from) = from {
                        next.found(from..next.text.len(), false, found);
                    }
                }
            }
            break;
        }
    }
}

/// The commands of a script a word holds (`sh -c 'PGPASSWORD=… psql && mysql -p…'`), split
/// as a shell splits them, and cut at `;`, `&&`, `||`, `|` and `&`.
fn in_script(word: &Piece, found: &mut Vec<Found>) {
    let words = words::split_script(word.text).unwrap_or_else(|_| loose(word.text));
    let mut command: Vec<Piece> = Vec::new();
    for script_word in &words {
        let text = script_word.text.as_str();
        let operator = matches!(text, ";" | "&&" | "||" | "|" | "&");
        let (text, ends) = match text.strip_suffix(';') {
            Some(before) if !operator => (before, true),
            _ => (text, operator),
        };
        if !operator && !text.is_empty() {
            command.push(Piece {
                text,
                word: word.word,
                sources: Some(&script_word.sources),
            });
        }
        if ends {
            in_command(&command, found);
            command.clear();
        }
    }
    in_command(&command, found);
}

/// The rules that apply to `program`'s words: its own, then those of [`ANY`] whose name its
/// own do not take.
fn rules(program: Option<&str>) -> Vec<Given> {
    let own: &[Given] = (PROGRAMS.iter())
        .find(|(name, _)| match name.strip_suffix('*') {
            Some(prefix) => program.is_some_and(|p| p.starts_with(prefix)),
            None => program == Some(*name),
        })
        .map_or(&[], |(_, rules)| rules);
    let named = |given: &Given| match given {
        Long(name) | LongUser(name) => Some(*name),
        _ => None,
    };
    let taken: Vec<&str> = own.iter().filter_map(named).collect();
    let any = ANY
        .iter()
        .filter(|given| named(given).map_or(true, |name| !taken.contains(&name)));
    own.iter().chain(any).copied().collect()
}

/// The program of a command (its index and file name): the first piece that sets no variable
/// and is not a [`WRAPPERS`]' or their options and durations.
fn program<'a>(pieces: &[Piece<'a>]) -> Option<(usize, &'a str)> {
    let mut after_wrapper = false;
    for (index, piece) in pieces.iter().enumerate() {
        let name = piece.text.rsplit('/').next().unwrap_or(piece.text);
        if assignment(piece.text).is_some() {
            continue;
        }
        if WRAPPERS.contains(&name) {
            after_wrapper = true;
            continue;
        }
        let wrapper_argument =
            piece.text.starts_with('-') || piece.text.starts_with(|c: char| c.is_ascii_digit());
        if after_wrapper && wrapper_argument {
            continue;
        }
        return Some((index, name));
    }
    None
}

/// What one rule finds in a piece.
enum Hit {
    /// The password is this range of the piece.
    Here(Range<usize>),
    /// The password is the next piece (after its first `:` when `user`), unless that is an
    /// option.
    Next { user: bool },
}

/// What `given` finds in `text`, if it applies to it.
fn hit(given: Given, text: &str) -> Option<Hit> {
    let long = |name: &str| {
        let bare = text.strip_prefix("--").or_else(|| text.strip_prefix('-'))?;
        let after = bare.strip_prefix(name)?;
        match after.strip_prefix('=') {
            Some(_) => Some(Some(text.len() - after.len() + 1)),
            None => after.is_empty().then_some(None),
        }
    };
    // `-X`, or `-X` last in a bundle of flags (curl's `-fsu USER:PASSWORD`): the value is the
    // next word; `-XVALUE`: the rest.
    let short = |flag: char, bundles: bool| {
        let flags = text.strip_prefix('-')?;
        let bundle = flags.len() > 1 && flags.bytes().all(|b| b.is_ascii_alphabetic());
        if bundles && bundle && flags.ends_with(flag) && flags.len() <= 4 {
            return Some(None);
        }
        let rest = flags.strip_prefix(flag)?;
        Some((!rest.is_empty()).then_some(text.len() - rest.len()))
    };
    let user = |from: usize| text[from..].find(':').map(|colon| from + colon + 1);
    match given {
        Long(name) => Some(match long(name)? {
            Some(from) => Hit::Here(from..text.len()),
            None => Hit::Next { user: false },
        }),
        Short(flag) => Some(match short(flag, false)? {
            Some(from) => Hit::Here(from..text.len()),
            None => Hit::Next { user: false },
        }),
        ShortUser(flag) => Some(match short(flag, true)? {
            Some(from) => Hit::Here(user(from)?..text.len()),
            None => Hit::Next { user: true },
        }),
        LongUser(name) => Some(match long(name)? {
            Some(from) => Hit::Here(user(from)?..text.len()),
            None => Hit::Next { user: true },
        }),
    }
}

/// Whether a word is a shell's `-c` (also last in a bundle: `-ec`, `-lc`): a script follows.
fn is_script_flag(text: &str) -> bool {
    let flags = text.strip_prefix('-').unwrap_or_default();
    flags.ends_with('c') && flags.bytes().all(|b| b.is_ascii_alphabetic())
}

/// Whether a word is an option rather than a value: it starts with `-` and is not `-` alone.
fn is_option(text: &str) -> bool {
    text.starts_with('-') && text != "-"
}

/// The passwords a piece holds whoever reads it: a URL's, a secret header's value, a secret
/// variable's (`PGPASSWORD=…`) and a secret option's joined value (`--api-key=…`).
fn anywhere(piece: &Piece, script: bool, found: &mut Vec<Found>) {
    let text = piece.text;
    let offset = |inner: &str| inner.as_ptr() as usize - text.as_ptr() as usize;
    for userinfo in userinfos(text) {
        let start = offset(userinfo);
        let password = userinfo.find(':').map_or(0, |colon| colon + 1);
        piece.found(start + password..start + userinfo.len(), false, found);
    }
    for value in query_secrets(text) {
        piece.found(offset(value)..offset(value) + value.len(), false, found);
    }
    if let Some(from) = header_value(text) {
        piece.found(from..text.len(), true, found);
        return;
    }
    // A script's words are read one by one (`PGPASSWORD=… pg_isready`).
    if script {
        return;
    }
    if let Some(from) = assignment(text).filter(|(name, _)| secret_variable(name)) {
        piece.found(from.1..text.len(), false, found);
    } else if let Some(from) = joined_secret(text) {
        piece.found(from..text.len(), false, found);
    }
}

/// `NAME=VALUE` with NAME a variable's name: the name, and where the value starts.
fn assignment(text: &str) -> Option<(&str, usize)> {
    let (name, _) = text.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, name.len() + 1))
}

/// Whether a variable's name says its value is a secret (`PGPASSWORD`, `MYSQL_PWD`,
/// `REDISCLI_AUTH`, `API_KEY`, a conninfo's `password`).
fn secret_variable(name: &str) -> bool {
    looks_secret(name) && !NOT_SECRET.contains(&name)
}

/// Where the value of `--NAME=VALUE` starts when NAME says it is a secret and no part of it
/// says the value only names where one is.
fn joined_secret(text: &str) -> Option<usize> {
    let bare = text.strip_prefix("--").or_else(|| text.strip_prefix('-'))?;
    let (name, _) = bare.split_once('=')?;
    let parts = name_parts(name);
    let names_a_place = parts
        .iter()
        .any(|part| NOT_THE_VALUE.contains(&part.as_str()));
    (looks_secret(name) && !names_a_place).then_some(text.len() - bare.len() + name.len() + 1)
}

/// Where the value of a secret header starts (`Authorization: Bearer …`, also after curl's
/// `-H` or `--header=`).
fn header_value(text: &str) -> Option<usize> {
    let line = (text.strip_prefix("--header="))
        .or_else(|| text.strip_prefix("-H"))
        .unwrap_or(text);
    let (name, value) = line.split_once(':')?;
    let token = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let value = value.trim_start();
    (token && looks_secret(name) && !value.is_empty()).then(|| text.len() - value.len())
}

/// `ranges` in order, those that overlap or touch made one.
fn merged(ranges: impl Iterator<Item = Range<usize>>) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = ranges.collect();
    ranges.sort_by_key(|range| range.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// `text` with each of `ranges` (in order, apart) written `***`.
fn hide_ranges(text: &str, ranges: &[Range<usize>]) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut from = 0;
    for range in ranges {
        shown.push_str(&text[from..range.start]);
        shown.push_str("***");
        from = range.end;
    }
    shown.push_str(&text[from..]);
    shown
}

/// A word written so that `exec:` reads it back whole: as it is when nothing in it needs
/// quoting, else in `'…'`.
fn quote(word: &str) -> String {
    let plain = !word.is_empty() && !word.contains([' ', '\'', '"', '\\', '$', '`']);
    match plain {
        true => word.to_string(),
        false => format!("'{}'", word.replace('\'', "'\\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_readiness_scripts_write_is_shown_without_its_passwords() {
        let cases = [
            (
                "mysqladmin ping -h db -pS3cret",
                "mysqladmin ping -h db -p***",
            ),
            (
                "/usr/bin/mysql -u root -pS3cret -e 'select 1'",
                "/usr/bin/mysql -u root -p*** -e 'select 1'",
            ),
            (
                "mariadb-admin ping --password=S3cret",
                "mariadb-admin ping --password=***",
            ),
            ("mysql -p --password mydb", "mysql -p --password ***"),
            ("mysql -p S3cret", "mysql -p ***"),
            (
                "redis-cli -h cache -a S3cret ping",
                "redis-cli -h cache -a *** ping",
            ),
            (
                "redis-cli --no-auth-warning --pass S3cret ping",
                "redis-cli --no-auth-warning --pass *** ping",
            ),
            ("redis-cli --askpass ping", "redis-cli --askpass ping"),
            (
                "mongosh -u admin -p S3cret --eval 1",
                "mongosh -u admin -p *** --eval 1",
            ),
            (
                "check --password S3cret --token=T0ken",
                "check --password *** --token=***",
            ),
            ("check --password --verbose", "check --password --verbose"),
            (
                "check -api-key=K3y --password-file=/run/pw",
                "check -api-key=*** --password-file=/run/pw",
            ),
            (
                "env PGPASSWORD=S3cret MYSQL_PWD=S3cret PWD=/srv pg_isready",
                "env PGPASSWORD=*** MYSQL_PWD=*** PWD=/srv pg_isready",
            ),
            (
                "psql postgres://app:S3cret@db/x -c 'select 1'",
                "psql postgres://app:***@db/x -c 'select 1'",
            ),
            (
                "psql 'host=db user=app password=S3cret'",
                "psql 'host=db user=app password=***'",
            ),
            (
                "curl -fsu ops:S3cret http://h/",
                "curl -fsu ops:*** http://h/",
            ),
            (
                "curl -u ops:S3cret --user=ops:S3cret http://h/",
                "curl -u ops:*** --user=ops:*** http://h/",
            ),
            (
                "curl -H 'Authorization: Bearer T0ken' http://h/",
                "curl -H 'Authorization: ***' http://h/",
            ),
            ("curl http://h/?token=T0ken", "curl http://h/?token=***"),
            (
                "timeout 5 mysqladmin -pS3cret ping",
                "timeout 5 mysqladmin -p*** ping",
            ),
            (
                "sh -c 'mysqladmin ping -pS3cret && redis-cli -a S3cret ping'",
                "sh -c 'mysqladmin ping -p*** && redis-cli -a *** ping'",
            ),
            (
                "sh -c \"PGPASSWORD='S3cret' pg_isready; mysql -p\\\"$PW\\\"\"",
                "sh -c \"PGPASSWORD='***' pg_isready; mysql -p\\\"$PW\\\"\"",
            ),
            // Escaped where it was written: quoted anew.
            ("mysql -p'a b'c", "mysql -p***"),
            ("mysql '-pa b'", "mysql '-p***'"),
            ("env 'PGPASSWORD=a b' psql", "env 'PGPASSWORD=***' psql"),
            ("mysql -pa\\ b", "mysql -p***"),
            ("pg_isready -h db -p 5432", "pg_isready -h db -p 5432"),
        ];
        for (rest, expected) in cases {
            assert_eq!(shown(rest), expected, "{rest}");
        }
    }

    #[test]
    fn a_command_that_does_not_split_is_shown_without_its_passwords() {
        assert_eq!(shown("mysql -pS3cret -e 'x"), "mysql -p*** -e 'x");
    }

    #[test]
    fn the_run_learns_every_command_s_passwords() {
        let secrets = Secrets::default();
        learn(
            &secrets,
            "db=exec:mysqladmin -pAbcd1 ping,EXEC:redis-cli -a Efgh2",
        );
        learn(&secrets, "exec:curl -H 'Authorization: Bearer Ijkl3'");
        learn(&secrets, "no exec:mysql -pMnop4");
        learn(&secrets, "exec:sh -c \"PGPASSWORD='Qrst5' pg_isready\"");
        let line = "Abcd1 Efgh2 Ijkl3 Mnop4 Qrst5";
        assert_eq!(secrets.hide(line), "*** *** *** *** ***");
    }
}
