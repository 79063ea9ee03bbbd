//! The static binary in an empty root: what a `FROM scratch` container is, minus the registry.
//!
//! `images/static-build.sh` builds the release binary once per test run (cargo's own cache makes
//! a rebuild cheap when nothing changed). The root holds only that binary, `etc/hosts`,
//! `etc/resolv.conf`, an empty `shared/` (the emptyDir) and a `proc/` mount point, as a container
//! runtime and the kubelet would provide. Commands run there through `unshare -m` + `chroot` as
//! uid/gid 65532, the image's `USER`; a chroot shares the host's network namespace, so servers
//! on the host's loopback are reachable.

use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::support::http::{Answer, HttpServer};
use crate::support::run::{Outcome, RunExt};
use crate::support::{copy_executable, free_port, require, skip_under_qemu, TempDir};

/// The image's `USER`: the distroless "nonroot" ids.
const USERSPEC: &str = "65532:65532";

/// Builds the static binary once for all tests here and returns its path.
fn static_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/images/static-build.sh");
        let started = Instant::now();
        let output = Command::new(script)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|err| panic!("cannot run {script}: {err}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{script} failed ({}):\n{}\n{}",
            output.status,
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
        let path = PathBuf::from(stdout.lines().last().expect("a path on the last line"));
        eprintln!(
            "static build took {:.1?}: {} ({} bytes)",
            started.elapsed(),
            path.display(),
            fs::metadata(&path).map(|m| m.len()).unwrap_or(0)
        );
        path
    })
}

/// Runs a tool that CI installs; a missing one fails the test with its name.
fn tool(program: &str, args: &[&str]) -> String {
    let output = Command::new(require(program))
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run {program}: {err}"));
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// An empty root: the static binary, `etc/hosts`, `etc/resolv.conf`, `shared/`, `proc/`.
struct EmptyRoot {
    /// Keeps the folder alive for the test.
    dir: TempDir,
}

impl EmptyRoot {
    fn new() -> EmptyRoot {
        let dir = TempDir::new();
        copy_executable(static_binary(), &dir.join("readygate"));
        fs::create_dir(dir.join("etc")).unwrap();
        fs::write(
            dir.join("etc/hosts"),
            "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
        )
        .unwrap();
        // Loopback only: a lookup that reaches DNS must never leave this machine.
        fs::write(
            dir.join("etc/resolv.conf"),
            "nameserver 127.0.0.1\nsearch default.svc.cluster.local svc.cluster.local\noptions ndots:5 timeout:1 attempts:1\n",
        )
        .unwrap();
        fs::create_dir(dir.join("proc")).unwrap();
        // An emptyDir is world-writable; the image runs as 65532.
        fs::create_dir(dir.join("shared")).unwrap();
        fs::set_permissions(dir.join("shared"), fs::Permissions::from_mode(0o777)).unwrap();
        fs::set_permissions(&dir.0, fs::Permissions::from_mode(0o755)).unwrap();
        EmptyRoot { dir }
    }

    /// Runs `program` (a path inside the root) with `args` in the root as uid 65532, with
    /// `/proc` mounted and an empty environment, as a container's entrypoint runs.
    fn run(&self, program: &str, args: &[&str]) -> Outcome {
        self.run_with_proc(true, program, args)
    }

    /// As `run`, choosing whether `/proc` is mounted.
    fn run_with_proc(&self, proc: bool, program: &str, args: &[&str]) -> Outcome {
        Command::new(require("unshare"))
            .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(
                r#"root=$1; shift
                   if [ "$MOUNT_PROC" = yes ]; then mount -t proc proc "$root/proc" || exit 90; fi
                   exec chroot --userspec="$USERSPEC" "$root" "$@""#,
            )
            .arg("sh")
            .arg(&self.dir.0)
            .arg(program)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .env("USERSPEC", USERSPEC)
            .env("MOUNT_PROC", if proc { "yes" } else { "no" })
            .stdin(Stdio::null())
            .outcome()
    }
}

#[test]
fn the_static_binary_links_nothing_and_needs_no_nss() {
    let binary = static_binary();
    let path = binary.to_str().unwrap();
    let file = tool("file", &["-b", path]);
    // Static-pie: no loader, and ASLR still covers readygate's own code and data.
    assert!(file.contains("static-pie linked"), "file: {file}");
    let ldd = tool("ldd", &[path]);
    assert!(
        ldd.contains("not a dynamic executable") || ldd.contains("statically linked"),
        "ldd: {ldd}"
    );
    assert!(!ldd.contains("=>"), "ldd lists libraries: {ldd}");
    // Static glibc drags in its NSS loader (and these names) with getaddrinfo or getpwnam;
    // such a binary cannot resolve names in an empty root.
    let bytes = fs::read(binary).unwrap();
    for needle in ["getaddrinfo", "getpwnam", "libnss_", "nsswitch.conf"] {
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
            "the static binary contains {needle:?}: it would need NSS at run time"
        );
    }
}

#[test]
fn the_static_binary_fits_the_size_budget() {
    let size = fs::metadata(static_binary()).unwrap().len();
    assert!(
        size <= 4_718_592,
        "the static binary is {size} bytes, over the 4.5 MiB budget (docs/performance.md: Size)"
    );
}

#[test]
fn the_empty_root_really_is_empty() {
    let root = EmptyRoot::new();
    // The dynamically linked test binary cannot start there: no loader, no libc.
    copy_executable(
        Path::new(env!("CARGO_BIN_EXE_readygate")),
        &root.dir.join("dynamic"),
    );
    let outcome = root.run("/dynamic", &["--version"]);
    if !skip_under_qemu("qemu, not the kernel, reports the missing loader: exit 255, not 127") {
        outcome.expect_code(127);
    }
    let version = root.run("/readygate", &["--version"]);
    version
        .expect_code(0)
        .expect_stdout(concat!("readygate ", env!("CARGO_PKG_VERSION")));
}

#[test]
fn wait_and_probe_work_in_the_empty_root() {
    let root = EmptyRoot::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();

    root.run(
        "/readygate",
        &[
            "wait",
            "--timeout",
            "10s",
            &format!("tcp://localhost:{port}"),
        ],
    )
    .expect_code(0)
    .expect_faster_than(Duration::from_secs(5));

    let closed = free_port();
    root.run(
        "/readygate",
        &[
            "wait",
            "--timeout",
            "1s",
            &format!("tcp://localhost:{closed}"),
        ],
    )
    .expect_code(1)
    .expect_slower_than(Duration::from_secs(1))
    .expect_faster_than(Duration::from_secs(6));

    let server = HttpServer::start(|_, _| Answer::body("ok"));
    root.run("/readygate", &["probe", &server.url("/")])
        .expect_code(0);
    assert_eq!(server.hits(), 1);

    let failing = HttpServer::start(|_, _| Answer::status(503));
    root.run("/readygate", &["probe", &failing.url("/")])
        .expect_code(1)
        .expect_stdout("status 503");
    assert_eq!(failing.hits(), 1);
    drop(listener);
}

#[test]
fn install_in_the_empty_root_gives_a_working_copy() {
    let root = EmptyRoot::new();
    let outcome = root.run("/readygate", &["install", "/shared"]);
    outcome
        .expect_code(0)
        .expect_stderr("installed /shared/readygate");
    // The static build has no interpreter to warn about: the one line says it was installed.
    assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
    let installed = root.dir.join("shared/readygate");
    let meta = fs::metadata(&installed).expect("installed copy");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o755);
    assert!(fs::read(&installed).unwrap() == fs::read(static_binary()).unwrap());

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().unwrap().port();
    root.run(
        "/shared/readygate",
        &["probe", &format!("tcp://localhost:{port}")],
    )
    .expect_code(0);
    // The installed copy installs itself again, over its own running file.
    root.run("/shared/readygate", &["install", "/shared"])
        .expect_code(0);
    let names: Vec<_> = fs::read_dir(root.dir.join("shared"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["readygate"]);
    root.run("/shared/readygate", &["--version"]).expect_code(0);
    drop(listener);
}

#[test]
fn install_without_proc_says_what_is_missing() {
    if skip_under_qemu("qemu answers /proc/self/exe itself, with or without /proc") {
        return;
    }
    let root = EmptyRoot::new();
    let outcome = root.run_with_proc(false, "/readygate", &["install", "/shared"]);
    outcome
        .expect_code(1)
        .expect_stderr("cannot read /proc/self/exe (is /proc mounted?)");
    assert_eq!(outcome.stderr.lines().count(), 1, "{outcome:#?}");
    assert_eq!(fs::read_dir(root.dir.join("shared")).unwrap().count(), 0);
}

#[test]
fn wait_writes_the_kubelets_termination_log_by_default_and_probe_does_not() {
    let root = EmptyRoot::new();
    // As the kubelet provides it: an empty regular file every container may write.
    fs::create_dir(root.dir.join("dev")).unwrap();
    let log = root.dir.join("dev/termination-log");
    fs::write(&log, "").unwrap();
    fs::set_permissions(&log, fs::Permissions::from_mode(0o666)).unwrap();
    let target = format!("tcp://127.0.0.1:{}", free_port());
    let wait = |extra: &[&str]| {
        let mut args = vec!["wait", "--timeout", "200ms"];
        args.extend_from_slice(extra);
        args.push(&target);
        root.run("/readygate", &args).expect_code(1);
        fs::read_to_string(&log).unwrap()
    };

    assert_eq!(wait(&["--termination-log", ""]), "", "'' turns it off");
    root.run("/readygate", &["probe", &target]).expect_code(1);
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        "",
        "probe leaves it alone"
    );
    assert_eq!(
        wait(&[]),
        format!("readygate: not ready: {target}: connection refused\n")
    );

    // Without the file (outside a container) nothing is created and nothing is said of it.
    fs::remove_file(&log).unwrap();
    let outcome = root.run("/readygate", &["wait", "--timeout", "200ms", &target]);
    outcome.expect_code(1);
    assert!(!log.exists());
    assert!(!outcome.stderr.contains("termination"), "{outcome:#?}");
}
