//! The layer map that opens src/lib.rs holds: every top-level module of src/ is on it, and each
//! imports (`crate::m`, `use crate::{m, …}`, a `super::m` that reaches the crate root) only
//! modules on lines below its own. An import pointing up or sideways (a cycle in the making)
//! fails here, naming the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the map's module column ends and its description starts.
const MODULE_COLUMN: usize = 28;

/// The map's lines, top first: each top-level module and the line it is on.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let map: Vec<&str> = lib
        .lines()
        .map(|line| {
            line.strip_prefix("//!")
                .unwrap_or("")
                .trim_start_matches(' ')
        })
        .skip_while(|line| *line != "```text")
        .skip(1)
        .take_while(|line| *line != "```")
        .collect();
    let mut layer = BTreeMap::new();
    for (at, line) in map.iter().enumerate() {
        let column = &line[..line.len().min(MODULE_COLUMN)];
        for module in column.split_whitespace() {
            layer.insert(module.to_owned(), at);
        }
    }
    assert!(!layer.is_empty(), "src/lib.rs has no ```text layer map");
    layer
}

/// Every `.rs` file under `dir`, but unit-test files (`tests.rs`, `proptests.rs`).
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("src/ is readable").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            sources(&path, into);
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "proptests.rs" {
            into.push(path);
        }
    }
}

/// The file's text without comments: a path in a doc comment is no import.
fn code(text: &str) -> String {
    let mut code = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        code.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    code.push_str(rest);
    let lines = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""));
    lines.collect::<Vec<_>>().join("\n")
}

/// The identifier at the start of `text`, if any.
fn ident(text: &str) -> &str {
    let text = text.trim_start();
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first segment of each item of a `crate::{…}` group, at its outer level.
fn group_heads(group: &str) -> Vec<&str> {
    let (mut heads, mut depth, mut start) = (Vec::new(), 0, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident(&group[start..at]));
                start = at + 1;
            }
            _ => {}
        }
    }
    heads.push(ident(&group[start..]));
    heads
}

/// The top-level modules a file's code names: `crate::m`, `crate::{m, …}`, and `super::m`
/// where the `super`s climb from `depth` (the file's module path length) to the root.
fn imports(code: &str, depth: usize) -> Vec<String> {
    let mut named = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let mut level = 1;
                let end = group
                    .char_indices()
                    .find(|(_, c)| {
                        level += match c {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        level == 0
                    })
                    .map_or(group.len(), |(end, _)| end);
                named.extend(group_heads(&group[..end]).into_iter().map(str::to_owned));
            }
            None => named.push(ident(rest).to_owned()),
        }
    }
    for (at, _) in code.match_indices("super::") {
        let before = &code[..at];
        if before.ends_with("super::")
            || before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let mut rest = &code[at..];
        let mut ups = 0;
        while let Some(next) = rest.strip_prefix("super::") {
            ups += 1;
            rest = next;
        }
        if ups == depth {
            named.push(ident(rest).to_owned());
        }
    }
    named
}

#[test]
fn each_module_imports_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs is readable");
    let layer = layers(&lib);
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    let mut seen = 0;
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src/");
        let mut parts: Vec<String> = relative
            .iter()
            .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_owned())
            .collect();
        if parts.last().map(String::as_str) == Some("mod") {
            parts.pop();
        }
        let me = parts[0].clone();
        if me == "lib" || me == "main" || me == "bin" {
            continue;
        }
        let Some(&mine) = layer.get(&me) else {
            wrong.push(format!(
                "{}: module {me} is not on the map",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("a source file is readable");
        for other in imports(&code(&text), parts.len()) {
            let Some(&theirs) = layer.get(&other) else {
                continue;
            };
            seen += 1;
            if other != me && theirs <= mine {
                wrong.push(format!("{}: {me} imports {other}", relative.display()));
            }
        }
    }
    assert!(seen > 100, "only {seen} imports found: the scan is broken");
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports against the layer map in src/lib.rs:\n{}",
        wrong.join("\n")
    );
}
