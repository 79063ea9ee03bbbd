//! A path on a mount that never answers (a dead NFS server) stops neither the deadline nor a
//! signal: every file-system call on a path the user named (the target, its folders, `--touch`,
//! `--termination-log`, `--cacert`, `--cert`/`--key`, the service account folder,
//! `SSL_CERT_FILE`, COMMAND and PATH) runs off readygate's runtime thread. The kernel keeps a process whose
//! thread is stuck on such a mount from exiting until the mount answers or goes, so each run
//! here is judged by its lines, then the mount is released and its exit status read.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::certs::Certs;
use crate::support::emulated::time_limit;
use crate::support::http::{Answer, HttpServer};
use crate::support::hung_mount::HungMount;
use crate::support::{closed_addr, readygate, Running};

const SECOND: Duration = Duration::from_secs(1);

/// How late a line may come after the time it is due: wide enough for a loaded machine,
/// narrow enough to see an overrun of one attempt.
const MARGIN: Duration = Duration::from_millis(500);

/// Why an attempt on the hung mount failed, as readygate words it.
const SILENT: &str = "no answer from the file system within";

/// Releases the mount and returns the run's exit code.
fn released(mut mount: HungMount, running: Running) -> Option<i32> {
    mount.release();
    running.finish().code
}

/// Sends SIGTERM: its line must come within [`MARGIN`], and the run must end with 143 once the
/// mount lets go.
#[track_caller]
fn answers_sigterm(mut running: Running, mount: HungMount, line: &str) {
    let sent = Instant::now();
    running.signal(libc::SIGTERM);
    let said = running.line(line);
    assert_within(sent, said, MARGIN, &format!("the signal's line {line:?}"));
    assert_eq!(released(mount, running), Some(143), "{line}");
}

#[track_caller]
fn assert_within(from: Instant, to: Instant, limit: Duration, what: &str) {
    let took = to.saturating_duration_since(from);
    let limit = time_limit(took, limit);
    assert!(took < limit, "{what} took {took:?}, limit {limit:?}");
}

#[test]
fn wait_on_a_path_under_a_hung_mount_says_not_ready_at_its_deadline() {
    // The target itself on the mount, then a folder of it, then as a file:// URL.
    for name in ["ready", "a/b/ready", "file:"] {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let target = match name {
            "file:" => format!("file://{}", mount.arg("ready")),
            _ => mount.arg(name),
        };
        let mut running = Running::spawn(&mut readygate(["wait", "-t", "2s", &target]));
        let began = running.line("waiting up to 2.0s");
        let ended = running.line(&format!("{target}: {SILENT}"));
        assert!(running.said("not ready after"), "{target}");
        assert_within(began, ended, 2 * SECOND + MARGIN, "the not-ready line");
        assert_eq!(released(mount, running), Some(1), "{target}");
    }
}

#[test]
fn sigterm_while_a_lookup_hangs_is_answered_at_once() {
    // The target itself on the mount, then a folder of it: the lookup that hangs is the first.
    for (name, hangs) in [("ready", "ready"), ("a/ready", "a")] {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let target = mount.arg(name);
        let mut running = Running::spawn(&mut readygate(["wait", "-t", "60s", &target]));
        running.line("waiting up to 60.0s");
        mount.asked(hangs);
        answers_sigterm(running, mount, "stopped by signal 15 before readiness");
    }
}

#[test]
fn sigterm_after_attempts_have_hung_is_answered_at_once() {
    let Some(mount) = HungMount::new() else {
        return;
    };
    let target = mount.arg("ready");
    let argv = ["wait", "-v", "--attempt-timeout", "300ms", "-t", "60s"];
    let mut running = Running::spawn(&mut readygate(argv.iter().copied().chain([&*target])));
    // Two attempts cut: the first's thread is stuck on the mount, the second waited for it.
    running.line(&format!("{target}: attempt 2: {SILENT}"));
    answers_sigterm(running, mount, "stopped by signal 15");
}

#[test]
fn probe_of_a_path_under_a_hung_mount_prints_its_reason_in_time() {
    for name in ["ready", "a/b/ready"] {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let target = format!("file://{}", mount.arg(name));
        let mut running = Running::spawn(&mut readygate(["probe", &target]));
        let said = running.stdout_within(&format!("{target}: {SILENT}"), 30 * SECOND);
        // The probe's deadline is 1 s.
        assert_within(running.started(), said, SECOND + MARGIN, "probe's line");
        assert_eq!(released(mount, running), Some(1), "{target}");
    }
}

#[test]
fn with_any_a_healthy_target_beside_a_hung_mount_decides() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let healthy = listener.local_addr().unwrap().to_string();
    for hung_first in [true, false] {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let hung = mount.arg("ready");
        let targets = match hung_first {
            true => [&*hung, &*healthy],
            false => [&*healthy, &*hung],
        };
        let argv = ["wait", "--any", "-t", "60s"];
        let mut running = Running::spawn(&mut readygate(argv.into_iter().chain(targets)));
        let began = running.line("waiting up to 60.0s");
        let ready = running.line(&format!("{healthy}: ready after"));
        // Found at its first attempt: any wait at all is the hung target's.
        assert_within(began, ready, 5 * SECOND, "the healthy target");
        assert_eq!(released(mount, running), Some(0), "{targets:?}");
    }
}

#[test]
fn touch_under_a_hung_mount_fails_after_one_attempts_time() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let healthy = listener.local_addr().unwrap().to_string();
    // The marker itself on the mount, then folders to make there.
    for name in ["marker", "a/b/marker"] {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let marker = mount.arg(name);
        let argv = ["wait", "-t", "60s", "--touch", &marker, &healthy];
        let mut running = Running::spawn(&mut readygate(argv));
        let ready = running.line(&format!("{healthy}: ready after"));
        let failed = running.line(&format!(
            "cannot create --touch file {marker}: {SILENT} 1.0s"
        ));
        assert_within(ready, failed, SECOND + MARGIN, "the --touch failure");
        assert_eq!(released(mount, running), Some(1), "{marker}");
    }
}

#[test]
fn sigterm_while_touch_hangs_is_answered_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let healthy = listener.local_addr().unwrap().to_string();
    let Some(mount) = HungMount::new() else {
        return;
    };
    let marker = mount.arg("marker");
    // The --touch file is given one attempt's time: 30 s here.
    let argv = [
        "wait",
        "--attempt-timeout",
        "30s",
        "-t",
        "60s",
        "--touch",
        &marker,
        &healthy,
    ];
    let mut running = Running::spawn(&mut readygate(argv));
    running.line(&format!("{healthy}: ready after"));
    answers_sigterm(
        running,
        mount,
        "stopped by signal 15 while creating the --touch file",
    );
}

#[test]
fn termination_log_under_a_hung_mount_fails_after_one_attempts_time() {
    let closed = format!("tcp://{}", closed_addr());
    for name in ["termination-log", "dev/termination-log"] {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let log = mount.arg(name);
        let argv = ["wait", "-t", "1s", "--termination-log", &log, &closed];
        let mut running = Running::spawn(&mut readygate(argv));
        let began = running.line("waiting up to 1.0s");
        let not_ready = running.line(&format!(
            "not ready after 1.0s: {closed}: connection refused"
        ));
        assert_within(began, not_ready, SECOND + MARGIN, "the not-ready line");
        let failed = running.line(&format!(
            "cannot write --termination-log {log}: {SILENT} 1.0s"
        ));
        assert_within(
            not_ready,
            failed,
            SECOND + MARGIN,
            "the termination-log failure",
        );
        assert_eq!(released(mount, running), Some(1), "{log}");
    }
}

#[test]
fn install_into_a_hung_mount_answers_sigterm_at_once() {
    let Some(mount) = HungMount::new() else {
        return;
    };
    let running = Running::spawn(&mut readygate(["install", &mount.arg("shared")]));
    // Its handler is in place before it looks anything up. (Not `Running::catches`: under
    // qemu-user, `SigCgt` shows the emulator's own handlers from the start.)
    mount.asked("shared");
    answers_sigterm(running, mount, "readygate: install: stopped by signal 15");
}

#[test]
fn install_into_a_hung_mount_gives_up_after_30_seconds() {
    let Some(mount) = HungMount::new() else {
        return;
    };
    let dir = mount.arg("shared");
    let mut running = Running::spawn(&mut readygate(["install", &dir]));
    let expected = format!("readygate: install: {dir}: {SILENT} 30.0s");
    let said = running.line_within(&expected, 60 * SECOND);
    assert_within(running.started(), said, 30 * SECOND + 2 * MARGIN, "install");
    assert_eq!(released(mount, running), Some(1));
}

#[test]
fn sidecar_native_with_its_state_on_a_hung_mount_answers_sigterm_at_once() {
    let Some(mount) = HungMount::new() else {
        return;
    };
    let state = mount.arg("state");
    let argv = ["sidecar", "native", "--state", &state, "--", "true"];
    let running = Running::spawn(&mut readygate(argv));
    mount.asked("state");
    answers_sigterm(running, mount, "stopped by signal 15 at the state file");
}

/// A file an option names, under the hung mount: the option, and the words around it.
struct OptionFile {
    /// The name under the mount whose lookup hangs.
    name: &'static str,
    /// What the line says it was reading (`--cacert "…"`).
    what: String,
    /// The command line's words after the command, target included.
    words: Vec<String>,
    /// Environment the run needs.
    env: Vec<(&'static str, String)>,
}

/// Each file an option names and readygate reads before any attempt, under `mount`.
fn option_files(mount: &HungMount) -> Vec<OptionFile> {
    let file = mount.arg("file.pem");
    let quoted = format!("\"{file}\"");
    let https = "https://127.0.0.1:1/".to_string();
    vec![
        OptionFile {
            name: "file.pem",
            what: format!("--cacert {quoted}"),
            words: vec!["--cacert".into(), file.clone(), https.clone()],
            env: vec![],
        },
        OptionFile {
            name: "file.pem",
            what: format!("--cert/--key {quoted}"),
            words: vec!["--cert".into(), file.clone(), https.clone()],
            env: vec![],
        },
        OptionFile {
            name: "serviceaccount",
            what: "the service account folder".into(),
            words: vec![
                "--k8s-serviceaccount-dir".into(),
                mount.arg("serviceaccount"),
                "k8s://pod/web".into(),
            ],
            env: vec![
                ("KUBERNETES_SERVICE_HOST", "127.0.0.1".into()),
                ("KUBERNETES_SERVICE_PORT", "1".into()),
            ],
        },
    ]
}

#[test]
fn files_options_name_under_a_hung_mount_end_the_run_by_its_deadline() {
    for (command, deadline, shown) in [("wait", "2s", "2.0s"), ("probe", "1s", "1.0s")] {
        for index in 0..3 {
            let Some(mount) = HungMount::new() else {
                return;
            };
            let file = option_files(&mount).swap_remove(index);
            let argv = [command, "-t", deadline].into_iter().map(String::from);
            let mut run = readygate(argv.chain(file.words.iter().cloned()));
            let mut running = Running::spawn(run.envs(file.env.iter().cloned()));
            let said = running.line(&format!("cannot read {}: {SILENT} {shown}", file.what));
            let limit = humantime::parse_duration(deadline).unwrap() + MARGIN;
            assert_within(running.started(), said, limit, &file.what);
            assert_eq!(released(mount, running), Some(1), "{command} {}", file.what);
        }
    }
}

#[test]
fn sigterm_while_reading_files_options_name_is_answered_at_once() {
    for index in 0..3 {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let file = option_files(&mount).swap_remove(index);
        let argv = ["wait", "-t", "60s"].into_iter().map(String::from);
        let mut run = readygate(argv.chain(file.words.iter().cloned()));
        let running = Running::spawn(run.envs(file.env.iter().cloned()));
        mount.asked(file.name);
        answers_sigterm(
            running,
            mount,
            &format!("stopped by signal 15 while reading {}", file.what),
        );
    }
}

#[test]
fn a_ca_bundle_under_a_hung_mount_bounds_tls_attempts_and_answers_sigterm() {
    let certs = Certs::localhost();
    let server = HttpServer::start_tls_and_plain(&certs, |_, _| Answer::status(200));
    let url = format!("https://localhost:{}/", server.addr.port());
    let bundle = "CA bundle (SSL_CERT_FILE, or the system's) not read within";
    let Some(mount) = HungMount::new() else {
        return;
    };
    let mut run = readygate(["wait", "-t", "2s", &url]);
    let mut running = Running::spawn(run.env("SSL_CERT_FILE", mount.join("bundle.pem")));
    let began = running.line("waiting up to 2.0s");
    let ended = running.line(&format!("{url}: {bundle}"));
    assert!(running.said("not ready after"), "{url}");
    assert_within(began, ended, 2 * SECOND + MARGIN, "the not-ready line");
    assert_eq!(released(mount, running), Some(1));

    let Some(mount) = HungMount::new() else {
        return;
    };
    let mut run = readygate(["probe", &url]);
    let mut running = Running::spawn(run.env("SSL_CERT_FILE", mount.join("bundle.pem")));
    let said = running.stdout_within(&format!("{url}: {bundle}"), 30 * SECOND);
    assert_within(running.started(), said, SECOND + MARGIN, "probe's line");
    assert_eq!(released(mount, running), Some(1));

    let Some(mount) = HungMount::new() else {
        return;
    };
    let mut run = readygate(["wait", "-v", "-t", "60s", &url]);
    let mut running = Running::spawn(run.env("SSL_CERT_FILE", mount.join("bundle.pem")));
    running.line(&format!("{url}: attempt 2: {bundle}"));
    answers_sigterm(running, mount, "stopped by signal 15 before readiness");
    assert_eq!(
        server.hits(),
        0,
        "no request without a verified certificate"
    );
}

#[test]
fn a_command_under_a_hung_mount_fails_after_one_attempts_time() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let healthy = listener.local_addr().unwrap().to_string();
    // COMMAND itself on the mount, then a PATH whose first folder is there.
    for on_path in [false, true] {
        let Some(mount) = HungMount::new() else {
            return;
        };
        let command = match on_path {
            true => "true".to_string(),
            false => mount.arg("app"),
        };
        let mut run = readygate(["wait", "-t", "60s", &healthy, "--", &command]);
        if on_path {
            run.env("PATH", format!("{}:/usr/bin:/bin", mount.arg("bin")));
        }
        let mut running = Running::spawn(&mut run);
        let ready = running.line(&format!("{healthy}: ready after"));
        let failed = running.line(&format!(
            "readygate: cannot run \"{command}\": {SILENT} 1.0s"
        ));
        assert_within(ready, failed, SECOND + MARGIN, "the command's failure");
        assert_eq!(released(mount, running), Some(126), "{command}");
    }
}

#[test]
fn sigterm_while_the_command_is_looked_up_is_answered_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let healthy = listener.local_addr().unwrap().to_string();
    let Some(mount) = HungMount::new() else {
        return;
    };
    let app = mount.arg("app");
    let argv = [
        "wait",
        "-v",
        "--attempt-timeout",
        "30s",
        "-t",
        "60s",
        &healthy,
        "--",
        &app,
    ];
    let mut running = Running::spawn(&mut readygate(argv));
    running.line(&format!("looking up the command \"{app}\""));
    answers_sigterm(
        running,
        mount,
        "stopped by signal 15 while looking up the command",
    );
}
