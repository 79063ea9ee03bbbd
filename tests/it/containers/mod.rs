//! readygate in real containers: podman with runc, images built here FROM scratch, no registry.
//! Run with `tests/containers/run.sh`, which installs podman and gives it a private config and
//! storage; in a plain `cargo test` these cases are ignored, except the check that every
//! example is accounted for below.
//!
//! - `image`: readygate's image (`images/build-image.sh`) alone, as uid 65532 with a read-only
//!   root: probe and wait, ready, not ready, past the deadline.
//! - `recipes`: every manifest in `examples/`, with stand-in images (`standins/`) tagged with the
//!   names the manifests use: played by `podman kube play` where podman can, otherwise driven
//!   in the kubelet's order (`kubelet.rs`); the Services they name are stand-ins on the pod's
//!   loopback, the Kubernetes API the suite's stand-in on the host's (`support/kube.rs`).

mod image;
mod images;
mod kubelet;
mod manifest;
mod recipes;
mod sandbox;

/// Every manifest in `examples/`, and the cases that run it in real containers.
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "install-and-wrap.yaml",
        &["install_and_wrap_played_by_podman_kube_play"],
    ),
    (
        "native-sidecar-startup-probe.yaml",
        &["native_sidecar_startup_probe_driven_in_kubelet_order"],
    ),
    (
        "native-sidecar-serve.yaml",
        &["native_sidecar_serve_driven_in_kubelet_order"],
    ),
    (
        "native-sidecar-poststart.yaml",
        &["native_sidecar_poststart_driven_in_kubelet_order"],
    ),
    (
        "job-native-sidecar.yaml",
        &["job_native_sidecar_driven_in_kubelet_order"],
    ),
    (
        "job-legacy-sidecar-on-exit.yaml",
        &["job_legacy_sidecar_on_exit_driven_in_kubelet_order"],
    ),
    (
        "readiness-by-file.yaml",
        &["readiness_by_file_driven_in_kubelet_order"],
    ),
    (
        "init-container-postgres-redis.yaml",
        &["init_container_postgres_redis_driven_in_kubelet_order"],
    ),
    (
        "wait-for-migration-job.yaml",
        &["wait_for_migration_job_driven_in_kubelet_order"],
    ),
    (
        "universal-sidecar.yaml",
        &[
            "universal_sidecar_driven_on_a_kubelet_with_built_in_sidecars",
            "universal_sidecar_driven_on_a_kubelet_without_built_in_sidecars",
        ],
    ),
];

/// A new manifest in `examples/` needs its case here: this fails until it has one.
#[test]
fn every_example_is_accounted_for() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/")
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml") || name.ends_with(".yml"))
        // Not a manifest: it names the image for all of them (scripts/check-deploy.sh).
        .filter(|name| name != "kustomization.yaml")
        .collect();
    files.sort();
    let listed: Vec<&str> = EXAMPLES.iter().map(|(file, _)| *file).collect();
    let missing: Vec<&String> = files
        .iter()
        .filter(|f| !listed.contains(&f.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "examples not run in real containers: {missing:?}; add a case to \
         tests/it/containers/recipes.rs and to EXAMPLES in tests/it/containers/mod.rs"
    );
    let source = include_str!("recipes.rs");
    for (file, cases) in EXAMPLES {
        assert!(
            files.iter().any(|f| f == file),
            "EXAMPLES names {file}, which is gone"
        );
        for case in *cases {
            assert!(
                source.contains(&format!("fn {case}()")) && source.contains(&format!("\"{file}\"")),
                "tests/it/containers/recipes.rs has no case {case} running {file}"
            );
        }
    }
}
