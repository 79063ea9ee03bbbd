//! readygate(1), generated from the clap definitions: clap_mangen's top-level sections, one
//! section per command, then exit statuses and environment. The page is committed as
//! docs/readygate.1 (clap_mangen is a dev-dependency, so the shipped binary does not carry it);
//! the test below fails when the two differ, and `UPDATE_MAN=1 cargo test --bin readygate man`
//! writes the page anew.

use std::io::Write;

use clap::CommandFactory;
use clap_mangen::Man;

use crate::cli::Cli;

/// One page for the whole tool: clap_mangen's top-level sections, then one section per
/// command with its synopsis, description and options, then exit statuses and environment.
fn man_page() -> Vec<u8> {
    let mut cmd = Cli::command();
    cmd.build();
    let top = Man::new(cmd.clone());
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = top.render_title(&mut out);
    let _ = top.render_name_section(&mut out);
    let _ = top.render_synopsis_section(&mut out);
    let _ = top.render_description_section(&mut out);
    let _ = top.render_options_section(&mut out);
    for command in leaf_commands(&cmd) {
        let name = command.get_bin_name().unwrap_or(command.get_name());
        let _ = writeln!(out, ".SH \"{}\"", name.to_uppercase());
        let page = Man::new(command.clone());
        let mut part = Vec::new();
        let _ = page.render_synopsis_section(&mut part);
        let _ = page.render_description_section(&mut part);
        let _ = page.render_options_section(&mut part);
        // Each part's sections become subsections of the command's own section.
        for line in String::from_utf8_lossy(&part).lines() {
            let line = line
                .strip_prefix(".SH ")
                .map_or(line.to_owned(), |rest| format!(".SS {}", title_case(rest)));
            let _ = writeln!(out, "{line}");
        }
    }
    out.extend_from_slice(TAIL.as_bytes());
    tidy(&out)
}

/// Every roff rendering starts with the same two-line preamble (the `Aq` string); the page
/// needs it once, at the top. Non-ASCII characters (the help's `…`) become groff escapes, so
/// that troff reads the page without preconv.
fn tidy(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(page);
    let mut seen = 0;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let preamble = line.starts_with(".ie \\n(.g .ds Aq") || line.starts_with(".el .ds Aq");
        seen += usize::from(preamble);
        if !preamble || seen <= 2 {
            for c in line.chars() {
                if c.is_ascii() {
                    out.push(c);
                } else {
                    out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
                }
            }
            out.push('\n');
        }
    }
    out.into_bytes()
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

/// `SYNOPSIS` → `Synopsis`, for a subsection heading.
fn title_case(heading: &str) -> String {
    let mut chars = heading.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_string() + &chars.as_str().to_lowercase()
    })
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

#[test]
fn the_committed_man_page_matches_the_clap_definitions() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/readygate.1");
    let page = String::from_utf8(man_page()).expect("roff is ASCII");
    if std::env::var_os("UPDATE_MAN").is_some() {
        std::fs::write(&path, &page).expect("write docs/readygate.1");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == page,
        "docs/readygate.1 is not what the clap definitions give: run \
         UPDATE_MAN=1 cargo test --bin readygate man, and commit the page"
    );
}
