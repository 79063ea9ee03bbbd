//! readygate's image on its own: FROM scratch, the static binary alone, run as uid 65532 with a
//! read-only root, no capabilities and loopback only, as a hardened pod runs it.

use std::time::Duration;

use super::images::{BUSYBOX, READYGATE};
use super::kubelet::Pod;
use super::sandbox::{podman, podman_ok, Finished};

/// The image's size goal: `readygate` and `readygate-cluster`, each within the static binary's
/// budget (docs/performance.md: Size, where the 5 MB of `readygate` alone grew with the second).
const MAX_IMAGE_BYTES: u64 = 8_000_000;

/// `podman run` options for readygate: read-only root, no capabilities, no new privileges.
const HARDENED: &[&str] = &[
    "--read-only",
    "--cap-drop",
    "all",
    "--security-opt",
    "no-new-privileges",
];

/// Runs readygate's image in `pod` with `args`, to its end.
fn readygate(pod: &Pod, args: &[&str]) -> Finished {
    let mut command = vec!["run", "--rm", "--pod", &pod.name];
    command.extend(HARDENED);
    command.push(READYGATE);
    command.extend(args);
    podman(&command)
}

/// Fails with the command's output unless it exited with `code`.
fn expect(what: &str, finished: Finished, code: i32) -> Finished {
    assert_eq!(
        finished.code,
        code,
        "{what}: exit {} instead of {code}:\n{}",
        finished.code,
        finished.output()
    );
    println!("  {what}: exit {code} in {:.2?}", finished.took);
    finished
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn the_image_is_the_two_static_binaries_alone_non_root_and_small() {
    super::images::built();
    let format = "{{.Size}} {{.Config.User}} {{json .Config.Entrypoint}}";
    let inspect = podman_ok(&["image", "inspect", "--format", format, READYGATE]);
    let mut fields = inspect.splitn(3, ' ');
    let size: u64 = fields.next().unwrap().parse().unwrap();
    assert!(
        size <= MAX_IMAGE_BYTES,
        "the image is {size} bytes, over 8 MB"
    );
    assert_eq!(fields.next(), Some("65532:65532"), "{inspect}");
    assert_eq!(fields.next(), Some("[\"/readygate\"]"), "{inspect}");
    println!("  {READYGATE}: {size} bytes, user 65532:65532, entrypoint /readygate");

    // Its file system is the two binaries and nothing else.
    let root = podman_ok(&["image", "mount", READYGATE]);
    let mut entries: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    let sizes = ["readygate", "readygate-cluster"]
        .map(|name| std::fs::metadata(format!("{root}/{name}")).map(|m| m.len()));
    podman_ok(&["image", "unmount", READYGATE]);
    assert_eq!(
        entries,
        ["readygate", "readygate-cluster"],
        "the image holds more than the binaries"
    );
    // The static binary's budget (docs/performance.md: Size), for each.
    for size in sizes {
        let size = size.unwrap();
        assert!(size <= 4_718_592, "{size} bytes");
    }
}

#[test]
#[ignore = "in real containers: tests/containers/run.sh"]
fn probe_and_wait_in_the_image_as_non_root_with_a_read_only_root() {
    let mut pod = Pod::empty("readygate-image");

    // Who it runs as, seen from inside: uid and gid 65532, no capabilities.
    let ids = r"(?s)Uid:\s+65532\s+65532\s+65532\s+65532\nGid:\s+65532\s+65532\s+65532\s+65532\n.*CapEff:\s+0+\n";
    expect(
        "probe: uid/gid 65532, no capabilities",
        readygate(
            &pod,
            &["probe", "--matches", ids, "file:///proc/self/status"],
        ),
        0,
    );
    let install = expect(
        "install / on the read-only root",
        readygate(&pod, &["install", "/"]),
        1,
    );
    assert!(
        install
            .output()
            .to_lowercase()
            .contains("read-only file system"),
        "{}",
        install.output()
    );

    // Nothing listens yet: not ready, and a wait ends at its deadline.
    let refused = expect(
        "probe: not ready",
        readygate(&pod, &["probe", "tcp://127.0.0.1:8080"]),
        1,
    );
    assert!(
        refused.stdout.starts_with("tcp://127.0.0.1:8080: ") && refused.stdout.contains("refused"),
        "{}",
        refused.output()
    );
    let late = expect(
        "wait: past its 2 s deadline",
        readygate(&pod, &["wait", "--timeout", "2s", "tcp://127.0.0.1:8080"]),
        1,
    );
    assert!(
        late.took >= Duration::from_secs(2) && late.took < Duration::from_secs(30),
        "wait --timeout 2s took {:?}",
        late.took
    );

    // A wait started before the server is ready once the server serves.
    let mut waiter: Vec<&str> = HARDENED.to_vec();
    waiter.extend([
        READYGATE,
        "wait",
        "--timeout",
        "60s",
        "http://localhost:8080/ready",
    ]);
    pod.start_extra("waiter", &waiter);
    let (state, _) = pod.state("waiter");
    assert_eq!(state, "running", "the wait ended before the server started");
    pod.start_extra(
        "web",
        &[
            BUSYBOX,
            "sh",
            "-c",
            "echo ok >/tmp/ready && exec httpd -f -p 127.0.0.1:8080 -h /tmp",
        ],
    );
    let code = pod.wait_exit("waiter", Duration::from_secs(60));
    if code != 0 {
        pod.fail("the wait did not end ready once the server served");
    }
    pod.print_timeline();

    expect(
        "probe: ready",
        readygate(&pod, &["probe", "http://127.0.0.1:8080/ready"]),
        0,
    );
    let missing = expect(
        "probe: answered 404",
        readygate(&pod, &["probe", "http://127.0.0.1:8080/missing"]),
        1,
    );
    assert!(
        missing.stdout.contains("status 404"),
        "{}",
        missing.output()
    );
}
