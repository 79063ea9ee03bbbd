//! The images the tests run, all built here FROM scratch: readygate's own, by
//! `images/build-image.sh`, and the stand-ins of `standins/` in place of the images the
//! manifests name, tagged with those very names so that the manifests run unchanged.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use super::sandbox::{podman_ok, run, sandbox};

/// readygate's image as `images/build-image.sh` builds it.
pub const READYGATE: &str = "localhost/readygate-test/readygate:latest";
/// busybox with every applet linked in /bin: `busybox:1.36`, and the stand-ins' base.
pub const BUSYBOX: &str = "localhost/readygate-test/busybox:base";
/// The aggregator that readiness-by-file.yaml waits for, outside the pod.
pub const FLUENTD: &str = "localhost/readygate-test/fluentd:latest";
/// The database and the cache that init-container-postgres-redis.yaml waits for.
pub const POSTGRES: &str = "localhost/readygate-test/postgres:latest";
pub const REDIS: &str = "localhost/readygate-test/redis:latest";

/// Stand-in folders under `standins/`, by the repository a manifest names.
const STAND_INS: &[(&str, &str)] = &[
    ("nginx", "nginx"),
    ("nginxinc/nginx-unprivileged", "nginx"),
    ("envoyproxy/envoy", "envoy"),
    ("postgres", "postgres"),
    ("redis", "redis"),
    ("registry.example.com/app", "app"),
    ("fluent/fluent-bit", "fluent-bit"),
    ("fluentd", "fluentd"),
];

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Builds every image once per test run.
pub fn built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let script = repo_root().join("images/build-image.sh");
        let build = run(
            script.to_str().unwrap(),
            &[READYGATE],
            Duration::from_secs(600),
        );
        assert!(
            build.code == 0 && build.stdout.lines().last() == Some(READYGATE),
            "images/build-image.sh failed or did not print the image on its last line:\n{}",
            build.output()
        );
        build_base();
        for (_, folder) in STAND_INS {
            let context = repo_root().join("tests/containers/standins").join(folder);
            let tag = format!("localhost/readygate-test/{folder}:latest");
            podman_build(&context, &tag);
        }
    });
}

/// `podman build` without any registry.
fn podman_build(context: &Path, tag: &str) {
    let context = context.to_str().unwrap();
    podman_ok(&[
        "build",
        "--quiet",
        "--pull=never",
        "--layers=false",
        "--tag",
        tag,
        context,
    ]);
}

/// busybox-static and a link per applet, `/tmp`, PATH: what the busybox image holds.
fn build_base() {
    let context = sandbox().join("busybox-base");
    let bin = context.join("rootfs/bin");
    let _ = fs::remove_dir_all(&context);
    fs::create_dir_all(&bin).unwrap();
    fs::copy("/bin/busybox", bin.join("busybox"))
        .expect("/bin/busybox is needed (scripts/install-container-deps.sh)");
    let applets = run("/bin/busybox", &["--list"], Duration::from_secs(10)).stdout;
    for applet in applets.lines().filter(|a| *a != "busybox") {
        symlink("busybox", bin.join(applet)).unwrap();
    }
    let tmp = context.join("rootfs/tmp");
    fs::create_dir(&tmp).unwrap();
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o1777)).unwrap();
    fs::write(
        context.join("Containerfile"),
        "FROM scratch\nCOPY rootfs/ /\nENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nCMD [\"sh\"]\n",
    )
    .unwrap();
    podman_build(&context, BUSYBOX);
}

/// The image built here that stands in for `reference`, if any.
fn local_image_for(reference: &str) -> Option<String> {
    let repository = match reference.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') => repository,
        _ => reference,
    };
    let repository = repository
        .strip_prefix("docker.io/library/")
        .or_else(|| repository.strip_prefix("docker.io/"))
        .unwrap_or(repository);
    if repository.ends_with("/readygate") {
        return Some(READYGATE.to_string());
    }
    if repository == "busybox" {
        return Some(BUSYBOX.to_string());
    }
    STAND_INS
        .iter()
        .find(|(name, _)| *name == repository)
        .map(|(_, folder)| format!("localhost/readygate-test/{folder}:latest"))
}

/// Makes `reference` (an image a manifest names) resolve to the image built for it.
pub fn provide(reference: &str) {
    built();
    let local = local_image_for(reference).unwrap_or_else(|| {
        panic!(
            "no stand-in image for {reference}: add one under tests/containers/standins/ and to \
             STAND_INS in tests/it/containers/images.rs"
        )
    });
    if local != reference {
        podman_ok(&["tag", &local, reference]);
    }
    podman_ok(&["image", "exists", reference]);
}
