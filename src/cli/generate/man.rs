//! readygate(1) and readygate-cluster(1), generated from the clap definitions: clap_mangen's
//! top-level sections, one section per command, then exit statuses and environment. The pages
//! are committed as docs/readygate.1 and docs/readygate-cluster.1 (clap_mangen is a
//! dev-dependency, so the shipped binaries do not carry it); the tests below fail when a page
//! and its definitions differ, and `UPDATE_MAN=1 cargo test --lib man` writes them anew.

use std::io::Write;

use clap::CommandFactory;
use clap_mangen::Man;

use crate::cli::cluster::ClusterCli;
use crate::cli::help::{DOCTOR_EXAMPLES, EXAMPLES, INJECT_EXAMPLES, WEBHOOK_EXAMPLES};
use crate::cli::Cli;

/// readygate's page.
fn man_page() -> String {
    page(Cli::command(), TAIL, &examples(&[EXAMPLES]))
}

/// readygate-cluster's page.
fn cluster_man_page() -> String {
    let examples = examples(&[INJECT_EXAMPLES, WEBHOOK_EXAMPLES, DOCTOR_EXAMPLES]);
    page(ClusterCli::command(), CLUSTER_TAIL, &examples)
}

/// The page of `cmd`, ending with `tail` and `examples`; non-ASCII characters (the help's `…`)
/// become groff escapes, so that troff reads it without preconv.
fn page(cmd: clap::Command, tail: &str, examples: &str) -> String {
    // The page names the release only: it must not change with every commit.
    let mut cmd = cmd.version(env!("CARGO_PKG_VERSION"));
    cmd.build();
    let top = Man::new(with_env(&cmd));
    let mut roff = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = top.render_title(&mut roff);
    let _ = top.render_name_section(&mut roff);
    sections(&top, &mut roff);
    for command in leaf_commands(&cmd) {
        let name = command.get_bin_name().unwrap_or(command.get_name());
        let _ = writeln!(roff, ".SH \"{}\"", name.to_uppercase());
        let mut part = Vec::new();
        sections(&Man::new(with_env(command)), &mut part);
        let part = without_hidden_positionals(command, &part);
        // Each part's sections become subsections of the command's own section.
        for line in part.lines() {
            let _ = match line.strip_prefix(".SH ") {
                Some(title) => writeln!(roff, ".SS {}{}", &title[..1], title[1..].to_lowercase()),
                None => writeln!(roff, "{line}"),
            };
        }
    }
    roff.extend_from_slice(tail.as_bytes());
    roff.extend_from_slice(examples.as_bytes());
    let mut page = String::new();
    // Every rendering starts with the same two-line preamble (the `Aq` string): once is enough.
    let mut preambles = 0;
    for line in String::from_utf8_lossy(&roff).lines() {
        let preamble = line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq");
        preambles += usize::from(preamble);
        if preamble && preambles > 2 {
            continue;
        }
        for c in line.chars() {
            match c.is_ascii() {
                true => page.push(c),
                false => page += &format!("\\[u{:04X}]", u32::from(c)),
            }
        }
        page.push('\n');
    }
    page
}

/// `command` with each option's variable shown, as `--help` leaves it to one line of rule: a
/// page has room for them.
fn with_env(command: &clap::Command) -> clap::Command {
    command.clone().mut_args(|arg| arg.hide_env(false))
}

/// The synopsis, description and options sections of `man`.
fn sections(man: &Man, out: &mut Vec<u8>) {
    let _ = man.render_synopsis_section(out);
    let _ = man.render_description_section(out);
    let _ = man.render_options_section(out);
}

/// clap_mangen's synopsis lists positionals even when hidden (`probe … [COMMAND]`, which is
/// only there to catch a command given to `probe` and say why it takes none): drop them.
fn without_hidden_positionals(command: &clap::Command, part: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(part).into_owned();
    for arg in command.get_positionals().filter(|arg| arg.is_hide_set()) {
        for name in arg.get_value_names().into_iter().flatten() {
            for (open, close) in [("[", "]"), ("<", ">")] {
                text = text.replace(&format!("{open}\\fI{name}\\fR{close} "), "");
            }
        }
    }
    text
}

/// The commands a user runs, depth first (`sidecar native`, not `sidecar`).
fn leaf_commands(cmd: &clap::Command) -> Vec<&clap::Command> {
    let mut leaves = Vec::new();
    for sub in cmd.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        if sub.has_subcommands() {
            leaves.extend(leaf_commands(sub));
        } else {
            leaves.push(sub);
        }
    }
    leaves
}

/// The page ends as `--help` does, with its EXAMPLES (`blocks`, each the end of a `--help`):
/// each recipe's words, then its lines of YAML (or commands) as they are.
fn examples(blocks: &[&str]) -> String {
    let mut section = String::from(".SH EXAMPLES\n");
    let recipes = blocks
        .iter()
        .map(|block| block.strip_prefix("Examples:\n").unwrap_or(block))
        .collect::<String>();
    for line in recipes.lines() {
        match line.strip_prefix("    ") {
            Some(yaml) => {
                section += &format!(".RS 4\n.nf\n{}\n.fi\n.RE\n", yaml.replace('-', "\\-"))
            }
            None => section += &format!(".PP\n{}\n", line.trim()),
        }
    }
    section
}

/// Exit statuses and environment, which clap does not know about; docs/cli.md has the rest.
const TAIL: &str = r#".SH "EXIT STATUS"
.TP
0
ready (wait, probe); installed (install)
.TP
1
not ready: the deadline passed (wait) or the attempt failed (probe); or a folder that is right could not be written (install, sidecar)
.TP
2
usage error: bad target, option, duration, range, regex or environment value, named in one line on stderr
.TP
126, 127
the COMMAND after \-\- could not be executed / was not found
.TP
128+N
stopped by signal N (SIGINT: 130, SIGTERM: 143) before readiness
.SH ENVIRONMENT
Every option of wait and probe can also be set as READYGATE_<OPTION> (upper case, _ for \-), e.g. READYGATE_TIMEOUT=30s; the command line wins.
.TP
READYGATE_TARGETS
targets, comma\-separated, when none is given on the command line
.TP
READYGATE_DISABLED
true: wait goes straight to COMMAND (or exits 0), probe exits 0
.SH "DROP\-IN NAMES"
Invoked as wait\-for\-it or wait\-for\-it.sh, or as wait\-for or wait\-for.sh (argv[0]), readygate takes that script's command line instead.
"#;

/// readygate-cluster's exit statuses, which clap does not know about; docs/cli.md has the rest.
const CLUSTER_TAIL: &str = r#".SH "EXIT STATUS"
.TP
0
written (inject); stopped by SIGTERM or SIGINT (webhook); built\-in sidecars work everywhere (doctor)
.TP
1
stdout could not be written, or \-\-mode auto could not list the nodes (inject); the webhook could not listen; a problem found (doctor)
.TP
2
usage error: bad option, manifest, annotation, certificate or sidecar file, named in one line on stderr
.TP
3
a check could not be made (doctor)
.SH ENVIRONMENT
.TP
KUBECONFIG
the kubeconfig files of doctor and \-\-mode auto, as kubectl reads them; in a pod without one, the service account
"#;

/// Fails when the page committed at `file` (under docs/) is not `page`; writes it with
/// `UPDATE_MAN`.
fn committed(file: &str, page: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(file);
    if std::env::var_os("UPDATE_MAN").is_some() {
        std::fs::write(&path, page).expect("write the man page");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == page,
        "docs/{file} is not what the clap definitions give: run \
         UPDATE_MAN=1 cargo test --lib man, and commit the page"
    );
}

#[test]
fn the_committed_man_page_matches_the_clap_definitions() {
    committed("readygate.1", &man_page());
}

#[test]
fn the_committed_cluster_man_page_matches_the_clap_definitions() {
    let page = cluster_man_page();
    for command in [
        ".SH \"READYGATE-CLUSTER INJECT\"",
        ".SH \"READYGATE-CLUSTER WEBHOOK\"",
        ".SH \"READYGATE-CLUSTER DOCTOR\"",
        ".SH \"READYGATE-CLUSTER COMPLETIONS\"",
        "readygate-cluster inject --output patch pod.json",
    ] {
        assert!(page.contains(command), "no {command} in the page:\n{page}");
    }
    committed("readygate-cluster.1", &page);
}

#[test]
fn synopses_show_no_hidden_argument() {
    let page = man_page();
    let probe = page
        .lines()
        .find(|line| line.starts_with("\\fBreadygate probe\\fR"));
    let probe = probe.expect("a synopsis of probe");
    assert!(
        probe.contains("TARGET") && !probe.contains("COMMAND"),
        "{probe}"
    );
    let wait = page
        .lines()
        .find(|line| line.starts_with("\\fBreadygate wait\\fR"));
    assert!(wait
        .expect("a synopsis of wait")
        .contains("[\\fICOMMAND\\fR]"));
}
