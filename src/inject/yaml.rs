//! YAML streams in and out. A stream is cut into documents at its `---` lines, so that a
//! document inject leaves alone is written back as its own text, byte for byte; a changed one
//! is written from the tree by a small block-style emitter that keeps every scalar as written.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

use super::tree::{Node, Scalar};

/// Most nodes one document may expand to (aliases copy what they name): a bound on memory for
/// a stream such as "a billion laughs".
const MAX_NODES: usize = 1_000_000;

/// One document of a stream: the `---` line that opened it (empty for the first when it has
/// none) and its text up to the next one.
pub struct Piece<'a> {
    pub separator: &'a str,
    pub body: &'a str,
}

/// Cuts `text` into documents at lines that start with `---` (followed by nothing or white
/// space), as YAML does: such a line ends a document wherever it stands.
pub fn split(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut separator = "";
    let mut start = 0;
    let mut at = 0;
    while at < text.len() {
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
        let line = &text[at..end];
        if is_separator(line) {
            if at > 0 || !separator.is_empty() {
                pieces.push(Piece {
                    separator,
                    body: &text[start..at],
                });
            }
            separator = line;
            start = end;
        }
        at = end;
    }
    pieces.push(Piece {
        separator,
        body: &text[start..],
    });
    pieces
}

/// `---`, alone or followed by white space (and perhaps a node: `--- {}`).
fn is_separator(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\n', '\r']))
}

/// The node of one document's text (its `---` line included), or `None` when it holds only
/// comments; the error says what is wrong and on which line of the document.
pub fn load(separator: &str, body: &str) -> Result<Option<Node>, String> {
    let text = format!("{separator}{body}");
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(&text);
    let mut documents = 0;
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|e| format!("not YAML: {} at line {}", e.info(), e.marker().line()))?;
        match event {
            Event::StreamEnd => break,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return Err(format!(
                        "a second document at line {} without a `---` line",
                        mark.line()
                    ));
                }
            }
            event => builder.event(event)?,
        }
    }
    Ok(builder.done)
}

/// Builds the tree from the parser's events.
#[derive(Default)]
struct Builder {
    /// Open sequences and mappings, innermost last.
    open: Vec<Open>,
    /// Anchored nodes, by anchor id (the parser gives each anchor written its own), for aliases.
    anchors: HashMap<usize, Node>,
    /// The document's node, once complete.
    done: Option<Node>,
    /// Nodes made so far, aliases' copies counted.
    count: usize,
}

/// A sequence or mapping being read.
struct Open {
    node: Node,
    /// Its anchor id (0: none).
    anchor: usize,
    /// A mapping's key whose value is still to come.
    key: Option<Node>,
}

impl Builder {
    fn event(&mut self, event: Event) -> Result<(), String> {
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                // `!!str 5` is a string; any other tag leaves the scalar as written.
                let string_tag = tag.is_some_and(|tag| tag.suffix == "str");
                let plain = style == TScalarStyle::Plain && !string_tag;
                self.add(Node::Scalar(Scalar { text, plain }), anchor, 1)
            }
            Event::SequenceStart(anchor, _) => self.start(Node::Seq(Vec::new()), anchor),
            Event::MappingStart(anchor, _) => self.start(Node::Map(Vec::new()), anchor),
            Event::SequenceEnd | Event::MappingEnd => {
                let open = self.open.pop().ok_or("unbalanced YAML")?;
                if let Node::Map(entries) = &open.node {
                    if let Some(key) = duplicate_key(entries) {
                        return Err(format!("duplicate key {key:?}"));
                    }
                }
                self.add(open.node, open.anchor, 0)
            }
            Event::Alias(id) => {
                let node =
                    (self.anchors.get(&id).cloned()).ok_or("an alias to an unknown anchor")?;
                let size = size(&node);
                self.add(node, 0, size)
            }
            _ => Ok(()),
        }
    }

    /// Opens a sequence or mapping.
    fn start(&mut self, node: Node, anchor: usize) -> Result<(), String> {
        self.count += 1;
        if self.open.len() >= MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH}"));
        }
        self.open.push(Open {
            node,
            anchor,
            key: None,
        });
        Ok(())
    }

    /// Adds a finished node to the open collection (or makes it the document).
    fn add(&mut self, node: Node, anchor: usize, cost: usize) -> Result<(), String> {
        // An anchor keeps a copy of its node, counted as an alias's is: anchors nested around
        // a large node cannot multiply it.
        let kept = if anchor > 0 { size(&node) } else { 0 };
        self.count += cost + kept;
        if self.count > MAX_NODES {
            return Err(format!("more than {MAX_NODES} nodes (aliases expanded)"));
        }
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        let Some(open) = self.open.last_mut() else {
            self.done = Some(node);
            return Ok(());
        };
        match (&mut open.node, open.key.take()) {
            (Node::Seq(items), _) => items.push(node),
            (Node::Map(entries), Some(key)) => entries.push((key, node)),
            (Node::Map(_), None) => open.key = Some(node),
            (Node::Scalar(_), _) => return Err("unbalanced YAML".into()),
        }
        Ok(())
    }
}

/// The deepest nesting read: far beyond any manifest, and well within the stack.
const MAX_DEPTH: usize = 100;

/// The number of nodes in `node`.
fn size(node: &Node) -> usize {
    match node {
        Node::Scalar(_) => 1,
        Node::Seq(items) => 1 + items.iter().map(size).sum::<usize>(),
        Node::Map(entries) => {
            1 + entries
                .iter()
                .map(|(k, v)| size(k) + size(v))
                .sum::<usize>()
        }
    }
}

/// The first key written twice in a mapping (YAML forbids it; Kubernetes refuses it).
fn duplicate_key(entries: &[(Node, Node)]) -> Option<&str> {
    let mut keys: Vec<&str> = entries.iter().filter_map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

/// The `---` line of a document written from its tree: as it was, unless the node began on it
/// (`--- {kind: Pod, …}`, `--- &anchor`), which would then be written twice.
pub fn bare_separator(separator: &str) -> &str {
    let rest = separator
        .strip_prefix("---")
        .unwrap_or_default()
        .trim_start();
    match rest.is_empty() || rest.starts_with('#') {
        true => separator,
        false => "---\n",
    }
}

/// The leading comment and blank lines of a document's text, kept above its rewritten form.
pub fn leading_comments(body: &str) -> &str {
    let mut end = 0;
    for line in body.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if !(trimmed.is_empty() || trimmed.starts_with('#')) {
            break;
        }
        // YAML ends a line at a lone CR too (YAML 1.1 readers also at NEL, LS and PS): what
        // follows one is no comment, and is in the tree written below.
        let text = line.strip_suffix('\n').unwrap_or(line);
        if (text.strip_suffix('\r').unwrap_or(text))
            .contains(['\r', '\u{85}', '\u{2028}', '\u{2029}'])
        {
            break;
        }
        end += line.len();
    }
    &body[..end]
}

/// Writes `node` as a block-style YAML document (no `---`), ending with a newline.
pub fn emit(node: &Node) -> Result<String, String> {
    let mut out = String::new();
    match node {
        Node::Scalar(scalar) => {
            out.push_str(&scalar_text(scalar, 0));
            out.push('\n');
        }
        _ => block(node, 0, &mut out)?,
    }
    Ok(out)
}

/// Writes a mapping or sequence in block style at `indent`, starting on a fresh line.
fn block(node: &Node, indent: usize, out: &mut String) -> Result<(), String> {
    let pad = " ".repeat(indent);
    match node {
        Node::Map(entries) if entries.is_empty() => out.push_str(&format!("{pad}{{}}\n")),
        Node::Seq(items) if items.is_empty() => out.push_str(&format!("{pad}[]\n")),
        Node::Map(entries) => {
            for (key, value) in entries {
                let Node::Scalar(key) = key else {
                    return Err("a mapping key that is not a scalar".into());
                };
                let key = scalar_text(key, indent);
                if key.contains('\n') {
                    return Err("a mapping key on several lines".into());
                }
                out.push_str(&pad);
                out.push_str(&key);
                out.push(':');
                value_after(value, indent, indent + 2, out)?;
            }
        }
        Node::Seq(items) => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                value_after(item, indent, indent + 2, out)?;
            }
        }
        Node::Scalar(scalar) => {
            out.push_str(&pad);
            out.push_str(&scalar_text(scalar, indent));
            out.push('\n');
        }
    }
    Ok(())
}

/// Writes a value after `key:` or `-`: a scalar or an empty collection on the same line, a
/// sequence item's mapping starting on the same line, anything else on the lines below.
fn value_after(value: &Node, indent: usize, inner: usize, out: &mut String) -> Result<(), String> {
    match value {
        Node::Scalar(scalar) => {
            let text = scalar_text(scalar, indent);
            if !text.is_empty() {
                out.push(' ');
                out.push_str(&text);
            }
            out.push('\n');
        }
        Node::Map(entries) if entries.is_empty() => out.push_str(" {}\n"),
        Node::Seq(items) if items.is_empty() => out.push_str(" []\n"),
        // `- name: x` then the other keys under `name`.
        Node::Map(_) | Node::Seq(_) if out.ends_with('-') => {
            let mut nested = String::new();
            block(value, inner, &mut nested)?;
            out.push(' ');
            out.push_str(&nested[inner..]);
        }
        _ => {
            out.push('\n');
            block(value, inner, out)?;
        }
    }
    Ok(())
}

/// A scalar's text as YAML: plain ones as written; strings plain when that reads back as the
/// same string, as a literal block when on several lines, else double-quoted.
fn scalar_text(scalar: &Scalar, indent: usize) -> String {
    let text = &scalar.text;
    if scalar.plain && !text.contains('\n') {
        return text.clone();
    }
    if reads_as_string(text) {
        return text.clone();
    }
    if let Some(literal) = literal_block(text, indent) {
        return literal;
    }
    serde_json::to_string(text).unwrap_or_default()
}

/// Whether `text` written plain reads back as this very string in YAML 1.1 and 1.2 (what
/// Kubernetes reads): conservative, anything doubtful is quoted.
fn reads_as_string(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    // `-c` and `--timeout` are strings; `-1` and `- x` are not.
    let option =
        first == '-' && text[1..].starts_with(|c: char| c == '-' || c.is_ascii_alphabetic());
    let special_start = !(first.is_ascii_alphabetic() || first == '/' || first == '_' || option);
    let safe_chars = text.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                ' ' | '.' | '_' | '/' | '-' | ':' | '=' | '@' | '+' | ',' | '(' | ')'
            )
    });
    let resolves = matches!(
        text.to_ascii_lowercase().as_str(),
        "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "nan" | "inf"
    );
    !special_start
        && safe_chars
        && !resolves
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.contains("  ")
}

/// `text` as a literal block scalar (`|`, `|-` or `|+`), when it is on several lines and each
/// line is safe in one; `None` otherwise.
fn literal_block(text: &str, indent: usize) -> Option<String> {
    let lines_ok = text.contains('\n')
        && !text.starts_with([' ', '\n'])
        && text.chars().all(|c| c == '\n' || !c.is_control())
        && text.lines().all(|line| !line.ends_with(' '));
    if !lines_ok {
        return None;
    }
    let body = text.trim_end_matches('\n');
    let chomp = match text.len() - body.len() {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let pad = " ".repeat(indent + 2);
    let mut out = format!("|{chomp}");
    for line in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    Some(out)
}
