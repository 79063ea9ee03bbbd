//! The words of an `exec:` target, split as a shell splits one simple command but with no shell:
//! spaces separate words, quotes (`'…'`, `"…"`) and `\` keep spaces and quotes inside one, and
//! nothing is expanded. What a shell would expand (`$HOME`, `` `cmd` ``) or an operator it would
//! act on (`|`, `&&`, `>`) is refused unquoted, so that no one is surprised it is passed as text.

/// Words a shell would act on, refused unquoted.
const OPERATORS: &[&str] = &[
    "|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "2>", "2>&1",
];

/// The words of `text` (the part after `exec:`), at least one; the error names the fault.
pub fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words: Vec<String> = Vec::new();
    // The word being read, and whether any of it was quoted (`''` is an empty word).
    let mut word: Option<(String, bool)> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == ' ' {
            if let Some(done) = word.take() {
                words.push(finished(done)?);
            }
            continue;
        }
        let (current, quoted) = word.get_or_insert_with(Default::default);
        match c {
            '\'' => {
                *quoted = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => current.push(c),
                        None => return Err(UNCLOSED_SINGLE.into()),
                    }
                }
            }
            '"' => {
                *quoted = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => current.push(c),
                            Some(c) => current.extend(['\\', c]),
                            None => return Err(UNCLOSED_DOUBLE.into()),
                        },
                        Some(c) => current.push(c),
                        None => return Err(UNCLOSED_DOUBLE.into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => {
                    *quoted = true;
                    current.push(c);
                }
                None => return Err("a \\ at the end escapes nothing".into()),
            },
            '$' | '`' => return Err(expansion(c)),
            c => current.push(c),
        }
    }
    if let Some(done) = word.take() {
        words.push(finished(done)?);
    }
    if words.is_empty() {
        return Err("no command after \"exec:\": write it as in \"exec:pg_isready -h db\"".into());
    }
    Ok(words)
}

const UNCLOSED_SINGLE: &str = "a ' is not closed";
const UNCLOSED_DOUBLE: &str = "a \" is not closed";

/// A word read whole: refused when it is an unquoted operator.
fn finished((word, quoted): (String, bool)) -> Result<String, String> {
    if !quoted && OPERATORS.contains(&word.as_str()) {
        return Err(format!(
            "exec: runs no shell, so {} would be passed to the command as an argument: quote \
             it to mean that, or run a shell: exec:sh -c '…'",
            crate::text::quoted(&word)
        ));
    }
    Ok(word)
}

/// The error of an unquoted `$` or backtick.
fn expansion(c: char) -> String {
    format!(
        "exec: runs no shell, so nothing is expanded: quote the {} ('{c}') to pass it as \
         written, or run a shell: exec:sh -c '…'",
        crate::text::quoted(&c.to_string())
    )
}

/// Where the `exec:` target that starts `text` ends in a list separated by commas
/// (`READYGATE_TARGETS`, `--group`): at the first comma outside its quotes.
pub fn end_in_list(text: &str) -> usize {
    let mut quote = None;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('"') | None, '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some(open), c) if c == open => quote = None,
            (None, ',') => return at,
            _ => {}
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_spaces_and_keep_what_is_quoted() {
        let cases: &[(&str, &[&str])] = &[
            ("pg_isready -h db", &["pg_isready", "-h", "db"]),
            ("  mysqladmin   ping  ", &["mysqladmin", "ping"]),
            (
                "psql 'host=db user=app' -c \"select 1\"",
                &["psql", "host=db user=app", "-c", "select 1"],
            ),
            ("sh -c 'test -f /ready'", &["sh", "-c", "test -f /ready"]),
            ("echo a'b c'd", &["echo", "ab cd"]),
            ("echo '' x", &["echo", "", "x"]),
            ("echo \"a \\\"b\\\" \\\\ \\n\"", &["echo", "a \"b\" \\ \\n"]),
            ("echo it\\'s a\\ b", &["echo", "it's", "a b"]),
            (
                "echo '$HOME' '|' \"&&\" \\>",
                &["echo", "$HOME", "|", "&&", ">"],
            ),
            ("echo a,b é", &["echo", "a,b", "é"]),
        ];
        for (text, expected) in cases {
            assert_eq!(split(text).unwrap(), *expected, "{text}");
        }
    }

    #[test]
    fn what_a_shell_would_do_is_refused_by_name() {
        let cases = [
            ("", "no command"),
            ("   ", "no command"),
            ("echo 'a", "' is not closed"),
            ("echo \"a", "\" is not closed"),
            ("echo \"a\\", "\" is not closed"),
            ("echo a\\", "escapes nothing"),
            ("pg_isready -h db && echo ok", "\"&&\" would be passed"),
            ("ready | grep x", "\"|\" would be passed"),
            ("check > /dev/null", "\">\" would be passed"),
            ("echo $HOME", "nothing is expanded"),
            ("echo `id`", "nothing is expanded"),
        ];
        for (text, fault) in cases {
            let err = split(text).unwrap_err();
            assert!(err.contains(fault), "{text}: {err}");
        }
    }

    #[test]
    fn a_list_ends_a_command_at_a_comma_outside_its_quotes() {
        let cases = [
            ("exec:true,db:1", "exec:true"),
            (
                "exec:psql -c 'select 1, 2',db:1",
                "exec:psql -c 'select 1, 2'",
            ),
            ("exec:a \"x,\\\"y,\" b,c", "exec:a \"x,\\\"y,\" b"),
            ("exec:a \\, b,c", "exec:a \\, b"),
            ("exec:a 'open,", "exec:a 'open,"),
        ];
        for (text, first) in cases {
            assert_eq!(&text[..end_in_list(text)], first, "{text}");
        }
    }
}
