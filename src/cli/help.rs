//! The help's headings, its closing lines and its EXAMPLES: `-h` is one screen of the common
//! options, grouped; `--help` has them all and ends with the pod recipes people write (the
//! man page ends with the same, [`EXAMPLES`]).

/// Deadlines, pacing and what counts as ready.
pub const TIMING: &str = "Timing";
/// What an HTTP answer (or a file's content) must hold, and how to ask.
pub const HTTP: &str = "HTTP";
/// Certificates and credentials.
pub const TLS: &str = "TLS";
/// Logs and the files readygate writes for others.
pub const OUTPUT: &str = "Output";
/// COMMAND and how it runs.
pub const PROCESS: &str = "Process";
/// `serve`'s own options.
pub const SERVE: &str = "Serve";

/// The last line of `-h`: where the rest is.
macro_rules! more {
    ($command:literal) => {
        concat!(
            "Every option also reads READYGATE_<OPTION>. All options and examples: readygate ",
            $command,
            " --help"
        )
    };
}

/// The end of `wait --help`'s and `probe --help`'s option list: the variables, once.
macro_rules! environment {
    () => {
        "Environment:\n  Every option of wait, probe and serve but --group can also be set as \
         READYGATE_<OPTION> (upper case, _ for -), e.g. READYGATE_TIMEOUT=30s; the command line \
         wins. READYGATE_TARGETS: targets, comma-separated, when none is given. \
         READYGATE_DISABLED=true: wait goes straight to COMMAND, probe exits 0.\n\n"
    };
}

macro_rules! wait_examples {
    () => {
        "  An init container that holds the pod until its database and cache answer (5 min at most):
    args: [wait, --timeout, 5m, postgres://db:5432, redis://cache:6379]
  The app's own command, exec'd once its database is up (same PID, same signals):
    command: [/shared/readygate, wait, -t, 2m, tcp://db:5432, --, /app/server]
  A sidecar's postStart hook: the containers after it start once it serves:
    lifecycle: { postStart: { exec: { command: [/shared/readygate, wait, http://127.0.0.1:80/] } } }
"
    };
}

macro_rules! probe_examples {
    () => {
        "  A startupProbe on a built-in sidecar: the app starts once it serves; why not, in the events:
    startupProbe: { exec: { command: [/shared/readygate, probe, http://127.0.0.1:80/] } }
"
    };
}

macro_rules! serve_examples {
    () => {
        "  A built-in sidecar that answers the app's readinessProbe for the app's dependencies:
    args: [serve, postgres://db:5432, http://auth:8080/healthz]
    readinessProbe: { httpGet: { path: /ready, port: 9090 } }
"
    };
}

macro_rules! install_examples {
    () => {
        "  Copy readygate into a shared emptyDir (an init container), for images without it:
    { image: ghcr.io/readygate/readygate:0.1.0, args: [install, /shared] }
"
    };
}

macro_rules! sidecar_examples {
    () => {
        "  One sidecar for nodes with and without built-in sidecars (state in a shared emptyDir):
    command: [/shared/readygate, sidecar, native, --state, /shared/state, --, envoy]
    command: [/shared/readygate, sidecar, legacy, --state, /shared/state, --, envoy]
"
    };
}

/// `-h`'s last line, per command.
pub const MORE_WAIT: &str = more!("wait");
/// See [`MORE_WAIT`].
pub const MORE_PROBE: &str = more!("probe");
/// See [`MORE_WAIT`].
pub const MORE_SERVE: &str = more!("serve");

/// The end of `wait --help`.
pub const WAIT_EXAMPLES: &str = concat!(environment!(), "Examples:\n", wait_examples!());
/// The end of `probe --help`.
pub const PROBE_EXAMPLES: &str = concat!(environment!(), "Examples:\n", probe_examples!());
/// The end of `serve --help`.
pub const SERVE_EXAMPLES: &str = concat!(environment!(), "Examples:\n", serve_examples!());
/// `readygate-cluster doctor --help`'s end.
pub const DOCTOR_EXAMPLES: &str = "Examples:
  From a laptop, the current context, nodes grouped by their pool:
    readygate-cluster doctor --namespace shop --node-label cloud.google.com/gke-nodepool
  For a script: readygate-cluster doctor --output json | jq .verdict
";
/// The end of `install --help`.
pub const INSTALL_EXAMPLES: &str = concat!("Examples:\n", install_examples!());
/// The end of `inject --help`.
pub const INJECT_EXAMPLES: &str = "Examples:
  readygate-cluster inject deploy.yaml | kubectl apply -f -
  readygate-cluster inject --sidecar proxy.yaml --mode universal app.yaml > app.injected.yaml
  readygate-cluster inject --output patch pod.json
";
/// The end of `webhook --help`.
pub const WEBHOOK_EXAMPLES: &str = "Examples:
  readygate-cluster webhook --tls-cert /tls/tls.crt --tls-key /tls/tls.key
";
/// The end of `sidecar --help`.
pub const SIDECAR_EXAMPLES: &str = concat!("Examples:\n", sidecar_examples!());

/// Every recipe: the end of `readygate --help` and of the man page.
pub const EXAMPLES: &str = concat!(
    "Examples:\n",
    wait_examples!(),
    probe_examples!(),
    serve_examples!(),
    install_examples!(),
    sidecar_examples!()
);
