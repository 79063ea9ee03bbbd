//! The man page (docs/readygate.1), the shell completions and docs/cli.md against what
//! `--help` shows: every command and option the binary accepts is in each of them, so none can
//! drift from the CLI.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::support::readygate;
use crate::support::run::RunExt;

/// One command a user runs (`["wait"]`, `["sidecar", "native"]`) and the options its `--help`
/// lists (`-h` shows the common ones only).
struct Listed {
    path: Vec<String>,
    options: Vec<String>,
}

/// `readygate ARGS --help`, which must succeed.
fn help(args: &[String]) -> String {
    let outcome = readygate(args.iter().chain([&"--help".to_owned()])).outcome();
    outcome.expect_code(0);
    outcome.stdout
}

/// The words after two spaces under `heading:` in a help text, up to the next blank line.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|line| *line != heading)
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .collect()
}

/// `-t` and `--timeout` from `  -t, --timeout <DURATION>  …`; `--help` included.
fn options(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        let rest = rest.trim_start();
        if !rest.starts_with('-') || line.len() - rest.len() > 6 {
            continue;
        }
        for word in rest.split_whitespace() {
            let word = word.trim_end_matches(',');
            if !word.starts_with('-') {
                break;
            }
            found.push(word.to_owned());
        }
    }
    found
}

/// Every command reachable from `readygate --help`, with its options; `readygate` itself first.
fn everything() -> Vec<Listed> {
    let mut listed = Vec::new();
    let mut queue = vec![Vec::<String>::new()];
    while let Some(path) = queue.pop() {
        if path.last().is_some_and(|last| last == "help") {
            // `readygate help [COMMAND]` prints the others' help; it has no options of its own.
            listed.push(Listed {
                options: Vec::new(),
                path,
            });
            continue;
        }
        let text = help(&path);
        for sub in section(&text, "Commands:") {
            let mut next = path.clone();
            next.push(sub.to_owned());
            queue.push(next);
        }
        listed.push(Listed {
            options: options(&text),
            path,
        });
    }
    let names: BTreeSet<String> = listed.iter().map(|l| l.path.join(" ")).collect();
    for expected in [
        "wait",
        "probe",
        "install",
        "sidecar native",
        "completions",
        "help",
    ] {
        assert!(
            names.contains(expected),
            "`{expected}` missing from {names:?}"
        );
    }
    let wait = listed.iter().find(|l| l.path == ["wait"]).unwrap();
    assert!(
        wait.options.contains(&"--timeout".to_owned()) && wait.options.len() > 15,
        "the help parser found too little: {:?}",
        wait.options
    );
    listed
}

fn output(args: &[&str]) -> String {
    let outcome = readygate(args).outcome();
    outcome.expect_code(0);
    assert_eq!(outcome.stderr, "");
    outcome.stdout
}

#[test]
fn the_man_page_has_a_section_for_every_command_with_all_its_options() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/readygate.1");
    let page = std::fs::read_to_string(path)
        .expect("docs/readygate.1")
        .replace("\\-", "-");
    assert!(page.contains("\n.TH readygate 1 "), "{page:.200}");
    assert_eq!(
        page.matches(".ds Aq").count(),
        2,
        "one roff preamble (.ie/.el)"
    );
    for must in [
        ".SH NAME",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        "READYGATE_DISABLED",
    ] {
        assert!(page.contains(must), "the man page lacks {must}");
    }
    for listed in everything() {
        let help = listed.path.last().is_some_and(|last| last == "help");
        if listed.path.is_empty() || listed.path == ["sidecar"] || help {
            continue;
        }
        let heading = format!(".SH \"READYGATE {}\"", listed.path.join(" ").to_uppercase());
        let start = page
            .find(&heading)
            .unwrap_or_else(|| panic!("no {heading} in the man page"));
        let end = page[start + 1..]
            .find("\n.SH ")
            .map_or(page.len(), |at| start + 1 + at);
        let own = &page[start..end];
        for option in &listed.options {
            assert!(own.contains(option.as_str()), "{heading} lacks {option}");
        }
    }
}

#[test]
fn completions_offer_every_command_and_option_in_each_shell() {
    let bash = output(&["completions", "bash"]);
    let zsh = output(&["completions", "zsh"]);
    let fish = output(&["completions", "fish"]);
    for listed in everything() {
        if let Some(name) = listed.path.last() {
            for (shell, script) in [("bash", &bash), ("zsh", &zsh), ("fish", &fish)] {
                assert!(script.contains(name.as_str()), "{shell} lacks {name}");
            }
        }
        for option in listed.options.iter().filter(|o| o.starts_with("--")) {
            assert!(bash.contains(option.as_str()), "bash lacks {option}");
            assert!(zsh.contains(option.as_str()), "zsh lacks {option}");
            let fish_long = format!("-l {}", &option[2..]);
            assert!(fish.contains(&fish_long), "fish lacks {fish_long}");
        }
    }
}

#[test]
fn bash_completes_a_command_and_an_option_from_the_script() {
    let bash = Path::new("/bin/bash");
    assert!(
        bash.exists(),
        "bash is missing: run scripts/install-test-deps.sh"
    );
    let script = output(&["completions", "bash"]);
    let session = format!(
        "{script}\n\
         COMP_WORDS=(readygate wa); COMP_CWORD=1; _readygate readygate wa readygate; \
         echo \"commands: ${{COMPREPLY[*]}}\"\n\
         COMP_WORDS=(readygate probe --attempt-t); COMP_CWORD=2; \
         _readygate readygate --attempt-t probe; echo \"options: ${{COMPREPLY[*]}}\"\n"
    );
    let out = Command::new(bash)
        .args(["--norc", "-c", &session])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("commands: wait\n"), "{stdout}");
    assert!(stdout.contains("options: --attempt-timeout\n"), "{stdout}");
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    readygate(["completions", "tcsh"])
        .outcome()
        .expect_code(2)
        .expect_stderr("tcsh");
}

/// docs/cli.md, the contract.
fn contract() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    std::fs::read_to_string(path).expect("docs/cli.md")
}

#[test]
fn docs_cli_md_lists_every_command_option_and_variable_help_shows() {
    let contract = contract();
    for listed in everything() {
        if !listed.path.is_empty() {
            let command = format!("readygate {}", listed.path.join(" "));
            assert!(contract.contains(&command), "docs/cli.md lacks `{command}`");
        }
        for option in &listed.options {
            assert!(
                contract.contains(&format!("`{option}"))
                    || contract.contains(&format!(" {option}"))
                    || contract.contains(&format!("{option},")),
                "docs/cli.md lacks {option} of `readygate {}`",
                listed.path.join(" ")
            );
        }
    }
    // `--help` states the variables' rule once: READYGATE_ and the option's name.
    for command in ["wait", "probe", "serve"] {
        let text = help(&[command.to_owned()]);
        assert!(text.contains("READYGATE_<OPTION>"), "{text}");
        for option in options(&text).iter().filter(|o| o.starts_with("--")) {
            if ["--help", "--group"].contains(&option.as_str()) {
                continue;
            }
            let name = format!("READYGATE_{}", option[2..].to_uppercase().replace('-', "_"));
            assert!(contract.contains(&name), "docs/cli.md lacks {name}");
        }
    }
}

/// The contract shows `--version`'s line in the form the binary prints it.
#[test]
fn docs_cli_md_shows_the_version_line_the_binary_prints() {
    let printed = output(&["--version"]);
    let commit_at = printed
        .find("(commit ")
        .expect("--version names the commit");
    let documented = format!("`{}(commit COMMIT, TARGET)`", &printed[..commit_at])
        .replace(env!("CARGO_PKG_VERSION"), "VERSION");
    assert!(
        contract().contains(&documented),
        "docs/cli.md lacks {documented} (the binary prints {printed:?})"
    );
}

#[test]
fn every_option_docs_cli_md_documents_is_one_the_binary_has() {
    let contract = contract();
    let table = contract
        .split("\n## Options of `wait` and `probe`")
        .nth(1)
        .expect("docs/cli.md has an options section")
        .split("\n## ")
        .next()
        .unwrap();
    let known: BTreeSet<String> = ["wait", "probe"]
        .iter()
        .flat_map(|command| options(&help(&[command.to_string()])))
        .collect();
    let mut documented = 0;
    for cell in table.split('`').skip(1).step_by(2) {
        let option = cell.split([' ', ',']).next().unwrap();
        if option.starts_with('-') && option != "--" {
            assert!(
                known.contains(option),
                "docs/cli.md documents {option}, which `--help` lacks"
            );
            documented += 1;
        }
    }
    assert!(
        documented > 15,
        "only {documented} options found in docs/cli.md"
    );
}

#[test]
fn the_readme_stays_a_short_guide_that_links_the_contract() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(path).expect("README.md");
    assert!(
        readme.len() <= 15 * 1024,
        "README.md is {} bytes, over 15 KiB: engineering detail belongs in docs/",
        readme.len()
    );
    assert!(
        readme.contains("(docs/cli.md)"),
        "README.md does not link docs/cli.md"
    );
    assert!(
        !readme.contains("../"),
        "README.md links outside the repository"
    );
    // Sizes in whole megabytes ("about 4 MB"): a figure to the tenth goes stale with each change.
    let words: Vec<&str> = readme.split_whitespace().collect();
    for pair in words.windows(2).filter(|pair| pair[1].starts_with("MB")) {
        assert!(!pair[0].contains('.'), "README.md gives a size as {pair:?}");
    }
}

#[test]
fn cluster_completions_offer_its_commands_and_complete_in_bash() {
    let script = |shell: &str| {
        let out = crate::support::readygate_cluster(["completions", shell]).outcome();
        out.expect_code(0);
        out.stdout
    };
    for shell in ["bash", "zsh", "fish"] {
        let script = script(shell);
        for word in [
            "inject",
            "webhook",
            "doctor",
            "kubeconfig",
            "node-label",
            "tls-cert",
        ] {
            assert!(script.contains(word), "{shell} lacks {word}");
        }
    }
    let session = format!(
        "{}\nCOMP_WORDS=(readygate-cluster web); COMP_CWORD=1; \
         _readygate__cluster readygate-cluster web readygate-cluster; \
         echo \"commands: ${{COMPREPLY[*]}}\"\n",
        script("bash")
    );
    let out = Command::new("/bin/bash")
        .args(["--norc", "-c", &session])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("commands: webhook\n"), "{stdout} {out:?}");
}
