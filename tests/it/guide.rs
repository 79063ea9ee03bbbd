//! The user's guide — README.md and one page per job under docs/guide/ — against the binary and
//! the repository: every page is reachable from the README, every example is shown by a page,
//! every relative link lands on a file (and heading), and every readygate command line in a
//! page's `sh` and `yaml` blocks is accepted by the real binary, run as examples.rs runs the
//! manifests' (nothing waits, nothing is exec'd); a manifest that asks for injection with
//! `readygate.dev/` annotations is injected by `readygate-cluster inject`.

use std::path::{Path, PathBuf};

use yaml_rust2::YamlLoader;

use crate::examples::{examples, invocations, root, run, Invocation};
use crate::support::run::RunExt;
use crate::support::{readygate_cluster, TempDir};

/// README.md and the guide's pages.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs/guide"))
        .expect("docs/guide/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 4, "guide pages missing: {pages:?}");
    pages.insert(0, root().join("README.md"));
    pages
}

/// Every Markdown file a user reads: the pages above, docs/ and deploy/README.md.
fn every_markdown_file() -> Vec<PathBuf> {
    let mut files = pages();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            files.push(path);
        }
    }
    files.push(root().join("deploy/README.md"));
    files
}

/// The bodies of the fenced blocks of `text` whose info string is `lang`.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line.trim_start() == format!("```{lang}") => current = Some(String::new()),
            Some(_) if line.trim_start() == "```" => found.extend(current.take()),
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    found
}

/// The targets of the Markdown links of `text`: `[…](TARGET)`.
fn links(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .collect()
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_relative_link_lands_on_a_file_and_heading() {
    let mut checked = 0;
    for file in every_markdown_file() {
        let text = std::fs::read_to_string(&file).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
            let target = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            assert!(
                target.exists(),
                "{}: the link {link} leads nowhere",
                file.display()
            );
            if !fragment.is_empty() {
                let headings = std::fs::read_to_string(&target).unwrap_or_default();
                let found = headings
                    .lines()
                    .filter_map(|line| line.strip_prefix('#'))
                    .any(|heading| anchor(heading.trim_start_matches('#')) == fragment);
                assert!(
                    found,
                    "{}: {link}: no such heading in {}",
                    file.display(),
                    target.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} links found");
}

#[test]
fn the_readme_links_every_guide_page_and_the_guide_shows_every_example() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let pages = pages();
    for page in &pages[1..] {
        let link = format!(
            "(docs/guide/{})",
            page.file_name().unwrap().to_string_lossy()
        );
        assert!(readme.contains(&link), "README.md does not link {link}");
    }
    let guide: String = pages[1..]
        .iter()
        .map(|page| std::fs::read_to_string(page).unwrap())
        .collect();
    for example in examples() {
        let link = format!(
            "(../../examples/{})",
            example.file_name().unwrap().to_string_lossy()
        );
        assert!(guide.contains(&link), "no guide page shows {link}");
    }
}

/// The readygate command lines of a page's `sh` blocks (a line that starts with `readygate `,
/// up to a `&` or a `#` comment), split at spaces: the guide keeps them free of quotes.
fn shell_invocations(page: &Path, text: &str) -> Vec<Invocation> {
    let name = page.file_name().unwrap().to_string_lossy();
    let mut found = Vec::new();
    for block in blocks(text, "sh") {
        for line in block.lines().map(str::trim) {
            if !line.starts_with("readygate ") {
                continue;
            }
            let line = line.split(" #").next().unwrap();
            let line = line.trim_end().trim_end_matches('&');
            assert!(
                !line.contains(['"', '\'', '$', '|', ';']),
                "{name}: keep guide command lines free of shell syntax: {line}"
            );
            found.push(Invocation {
                origin: format!("{name}: {line}"),
                argv: line.split_whitespace().map(str::to_owned).collect(),
                env: Vec::new(),
                mounts: Vec::new(),
            });
        }
    }
    found
}

#[test]
fn every_readygate_command_line_of_the_guide_is_accepted_by_the_cli() {
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut all = shell_invocations(&page, &text);
        for block in blocks(&text, "yaml") {
            let documents = YamlLoader::load_from_str(&block)
                .unwrap_or_else(|e| panic!("{}: a yaml block is not YAML: {e}", page.display()));
            all.extend(invocations(&page, &documents));
        }
        for invocation in all {
            let sandbox = TempDir::new();
            let (code, stderr) = run(&invocation, &sandbox.0);
            // `doctor` needs a cluster: its command line is accepted when what it lacks is one.
            if invocation.argv.get(1).map(String::as_str) == Some("doctor") {
                assert!(
                    stderr.contains("no cluster to ask"),
                    "{}: {stderr}",
                    invocation.origin
                );
                checked += 1;
                continue;
            }
            assert!(
                code == Some(0) || code.is_none(),
                "{}: {:?} exited {code:?}: {stderr}",
                invocation.origin,
                invocation.argv
            );
            checked += 1;
        }
    }
    assert!(checked >= 8, "only {checked} command lines found");
}

#[test]
fn a_guide_command_line_the_cli_rejects_is_caught() {
    // The check above is only worth something if a wrong command line fails it.
    let page = "```sh\nreadygate wait --timout 5s tcp://127.0.0.1:5432 -- ./app\n```\n";
    let found = shell_invocations(Path::new("bad.md"), page);
    assert_eq!(found.len(), 1);
    let sandbox = TempDir::new();
    let (code, stderr) = run(&found[0], &sandbox.0);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--timout"), "{stderr}");
}

/// A `yaml` block that asks for injection (`readygate.dev/` annotations) is a manifest that
/// `readygate-cluster inject` takes, and adds readygate to.
#[test]
fn every_annotated_manifest_of_the_guide_is_injected() {
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in blocks(&text, "yaml")
            .into_iter()
            .filter(|block| block.contains("readygate.dev/"))
        {
            let sandbox = TempDir::new();
            let file = sandbox.join("manifest.yaml");
            std::fs::write(&file, &block).unwrap();
            let outcome = readygate_cluster(["inject".as_ref(), file.as_os_str()]).outcome();
            assert_eq!(outcome.code, Some(0), "{}: {outcome:#?}", page.display());
            assert!(
                outcome.stdout.contains("readygate-"),
                "{}: inject added nothing: {}",
                page.display(),
                outcome.stdout
            );
            checked += 1;
        }
    }
    assert!(checked >= 1, "no annotated manifest in the guide");
}
