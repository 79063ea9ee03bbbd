//! The words of an `exec:` target, split as a shell splits one simple command but with no shell:
//! spaces separate words, quotes (`'…'`, `"…"`) and `\` keep spaces and quotes inside one, and
//! nothing is expanded. What a shell would expand (`$HOME`, `` `cmd` ``) or an operator it would
//! act on (`|`, `&&`, `>`) is refused unquoted, so that no one is surprised it is passed as text.

use std::ops::Range;

/// Words a shell would act on, refused unquoted.
const OPERATORS: &[&str] = &[
    "|", "||", "&", "&&", ";", ">", ">>", "<", "<<", "2>", "2>&1",
];

/// One word of a command: what the program gets, and where it is written in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The argument, quotes and escapes undone.
    pub text: String,
    /// Its bytes in the text as written, quotes included.
    pub written: Range<usize>,
    /// For each byte of `text`, the bytes that write its character (a `\` escaping it too).
    pub sources: Vec<Range<usize>>,
}

/// A word being read.
#[derive(Default)]
struct Reading {
    text: String,
    /// Whether any of it was quoted (`''` is an empty word).
    quoted: bool,
    start: usize,
    sources: Vec<Range<usize>>,
}

impl Reading {
    /// Adds `c`, written at `source`.
    fn push(&mut self, c: char, source: Range<usize>) {
        self.text.push(c);
        let bytes = std::iter::repeat(source).take(c.len_utf8());
        self.sources.extend(bytes);
    }
}

/// The words of `text` (the part after `exec:`), at least one, each with where it is written;
/// the error names the fault.
pub fn split(text: &str) -> Result<Vec<Word>, String> {
    split_as(text, true)
}

/// The words of a script a shell runs (`sh -c '…'`), split as [`split`] does but keeping what
/// the shell acts on (`$PW`, `&&`) as text: for finding the passwords in it.
pub fn split_script(text: &str) -> Result<Vec<Word>, String> {
    split_as(text, false)
}

/// [`split`], refusing what a shell acts on when `strict`.
fn split_as(text: &str, strict: bool) -> Result<Vec<Word>, String> {
    let mut words: Vec<Word> = Vec::new();
    let mut word: Option<Reading> = None;
    let mut chars = text.char_indices();
    let to = |at: usize, c: char| at..at + c.len_utf8();
    while let Some((at, c)) = chars.next() {
        if c == ' ' {
            if let Some(done) = word.take() {
                words.push(finished(done, at, strict)?);
            }
            continue;
        }
        let current = word.get_or_insert_with(|| Reading {
            start: at,
            ..Reading::default()
        });
        match c {
            '\'' => {
                current.quoted = true;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((at, c)) => current.push(c, to(at, c)),
                        None => return Err(UNCLOSED_SINGLE.into()),
                    }
                }
            }
            '"' => {
                current.quoted = true;
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((escape, '\\')) => match chars.next() {
                            Some((at, c @ ('"' | '\\'))) => current.push(c, escape..to(at, c).end),
                            Some((at, c)) => {
                                current.push('\\', to(escape, '\\'));
                                current.push(c, to(at, c));
                            }
                            None => return Err(UNCLOSED_DOUBLE.into()),
                        },
                        Some((at, c)) => current.push(c, to(at, c)),
                        None => return Err(UNCLOSED_DOUBLE.into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some((escaped, c)) => {
                    current.quoted = true;
                    current.push(c, at..to(escaped, c).end);
                }
                None => return Err("a \\ at the end escapes nothing".into()),
            },
            '$' | '`' if strict => return Err(expansion(c)),
            c => current.push(c, to(at, c)),
        }
    }
    if let Some(done) = word.take() {
        words.push(finished(done, text.len(), strict)?);
    }
    if words.is_empty() {
        return Err("no command after \"exec:\": write it as in \"exec:pg_isready -h db\"".into());
    }
    Ok(words)
}

const UNCLOSED_SINGLE: &str = "a ' is not closed";
const UNCLOSED_DOUBLE: &str = "a \" is not closed";

/// A word read whole, written up to `end`: refused when it is an unquoted operator and
/// `strict`.
fn finished(word: Reading, end: usize, strict: bool) -> Result<Word, String> {
    if strict && !word.quoted && OPERATORS.contains(&word.text.as_str()) {
        return Err(format!(
            "exec: runs no shell, so {} would be passed to the command as an argument: quote \
             it to mean that, or run a shell: exec:sh -c '…'",
            crate::text::quoted(&word.text)
        ));
    }
    Ok(Word {
        text: word.text,
        written: word.start..end,
        sources: word.sources,
    })
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

    /// The words of `text` as the program gets them.
    fn texts(text: &str) -> Result<Vec<String>, String> {
        Ok(split(text)?.into_iter().map(|word| word.text).collect())
    }

    #[test]
    fn each_word_knows_where_it_is_written() {
        let text = " mysql  -p'a b' x";
        let words = split(text).unwrap();
        let written: Vec<&str> = words.iter().map(|w| &text[w.written.clone()]).collect();
        assert_eq!(written, ["mysql", "-p'a b'", "x"]);
    }

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
            assert_eq!(texts(text).unwrap(), *expected, "{text}");
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
            let err = texts(text).unwrap_err();
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
