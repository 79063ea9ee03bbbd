//! The clap definitions of every command and option (a module of its own so the fuzz targets
//! can include it alone).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::help::{self, EXAMPLES, HTTP, OUTPUT, PROCESS, SERVE, TIMING, TLS};
use crate::grammar::duration::parse_duration;
use crate::grammar::expect::{HeaderMatch, JsonField};
use crate::grammar::header::{Header, HeaderParser};
use crate::grammar::matcher::Matcher;
use crate::grammar::status::StatusRanges;

#[derive(Debug, Parser)]
#[command(
    name = "readygate",
    version = crate::cli::version::VERSION,
    about = "Make Kubernetes workloads start in the right order: wait until TCP ports, HTTP \
             endpoints, files, Unix sockets and gRPC services are ready.",
    // Without a command, say so in one line rather than print the help as an error.
    arg_required_else_help = false,
    // The last of a repeated single-value option wins (as curl's and kubectl's), so an
    // overlay that appends args overrides a default.
    args_override_self = true,
    // Our own -h/--help (in `LogArgs`), under a heading as every other option is.
    disable_help_flag = true,
    // Help wraps to the terminal, and to 100 columns when there is none or it is wider.
    max_term_width = 100,
    after_long_help = EXAMPLES,
)]
pub struct Cli {
    #[command(flatten)]
    pub log: LogArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// How much readygate logs, and how: global, so they may come before the command.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// Log only failures.
    #[arg(short, long, env = "READYGATE_QUIET", global = true, conflicts_with = "verbose",
          value_parser = Boolean, help_heading = OUTPUT, hide_env = true)]
    pub quiet: bool,

    /// Log every attempt.
    #[arg(short, long, env = "READYGATE_VERBOSE", global = true, value_parser = Boolean,
          help_heading = OUTPUT, hide_env = true)]
    pub verbose: bool,

    /// Log lines as text or json.
    ///
    /// JSON lines carry event, target, attempt, elapsed_ms, reason and status fields
    /// (docs/cli.md).
    #[arg(long, env = "READYGATE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text,
          global = true, value_name = "FORMAT", help_heading = OUTPUT, hide_env = true,
          hide_possible_values = true)]
    pub log_format: LogFormat,

    /// Print help (all options and examples with --help).
    #[arg(short, long, action = clap::ArgAction::Help, global = true, help_heading = OUTPUT)]
    pub help: Option<bool>,
}

/// The commands. `defer` builds only the given one's arguments (half of clap's start-up work);
/// a deferred command's `--help` text is its struct's doc comment, so both carry the text.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Retry the targets until they are ready or the deadline passes, then exec COMMAND.
    ///
    /// Ready means, with --invert, not ready; COMMAND, if given, replaces readygate (exec).
    #[command(after_help = help::MORE_WAIT, after_long_help = help::WAIT_EXAMPLES)]
    Wait(WaitArgs),
    /// One attempt per target, in parallel, then exit: for exec startup/readiness probes.
    #[command(after_help = help::MORE_PROBE, after_long_help = help::PROBE_EXAMPLES)]
    Probe(ProbeArgs),
    /// Answer the kubelet's httpGet and grpc probes on one port, checking targets on demand.
    ///
    /// Paths /ready, /ready/GROUP, /livez and /metrics (Prometheus), and gRPC health.
    #[command(after_help = help::MORE_SERVE, after_long_help = help::SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// Copy this executable to DIR/readygate (mode 0755, atomically).
    #[command(after_long_help = help::INSTALL_EXAMPLES)]
    Install(InstallArgs),
    /// The run-time handshake for one sidecar that works with and without built-in sidecars.
    #[command(
        subcommand,
        arg_required_else_help = false,
        disable_help_subcommand = true,
        after_long_help = help::SIDECAR_EXAMPLES
    )]
    Sidecar(SidecarCommand),
    /// Print a shell completion script (bash, zsh or fish) to stdout.
    Completions(CompletionsArgs),
}

/// Retry the targets until they are ready or the deadline passes, then exec COMMAND.
///
/// Ready means, with --invert, not ready; COMMAND, if given, replaces readygate (exec).
#[derive(Debug, Args)]
pub struct WaitArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub pacing: PacingArgs,
    /// Run COMMAND as a child, and POST to URL when it exits.
    ///
    /// With -- COMMAND only, instead of exec; the POST is sent however the run ends, so that a
    /// Job's old-style sidecar always hears the work is over.
    #[arg(long, env = "READYGATE_ON_EXIT", value_name = "URL", help_heading = PROCESS,
          hide_env = true)]
    pub on_exit: Option<String>,
    /// What to exec once ready (no shell).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// The retrying `wait` does and `probe` (one attempt) does not.
#[derive(Debug, Args)]
pub struct PacingArgs {
    /// First retry delay, growing up to --max-interval.
    ///
    /// It grows exponentially, with jitter. Default: 10ms for a local target, 100ms for a
    /// remote one.
    #[arg(long, env = "READYGATE_INTERVAL", value_name = "DURATION", value_parser = parse_duration, allow_negative_numbers = true,
          help_heading = TIMING, hide_env = true)]
    pub interval: Option<Duration>,

    /// Cap on the retry delay (default: 100ms local, 5s remote).
    #[arg(long, env = "READYGATE_MAX_INTERVAL", value_name = "DURATION", value_parser = parse_duration, allow_negative_numbers = true,
          help_heading = TIMING, hide_env = true, hide_short_help = true)]
    pub max_interval: Option<Duration>,

    /// Consecutive successful attempts a target needs.
    ///
    /// However close together (10 ms apart for a local target): a count of attempts, unlike the
    /// kubelet's successThreshold, which counts probes a period apart; for a time span, use
    /// --stable-for.
    #[arg(long, env = "READYGATE_SUCCESS_THRESHOLD", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..), help_heading = TIMING,
          hide_env = true, hide_short_help = true)]
    pub success_threshold: u32,

    /// Ready once a target has stayed ready for DURATION.
    ///
    /// Every attempt in that span must succeed (attempts every --interval meanwhile): what the
    /// kubelet's successThreshold × periodSeconds gives.
    #[arg(long, env = "READYGATE_STABLE_FOR", value_name = "DURATION", value_parser = parse_duration, allow_negative_numbers = true,
          help_heading = TIMING, hide_env = true)]
    pub stable_for: Option<Duration>,
}

/// One attempt per target, in parallel, then exit: for exec startup/readiness probes.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Words after `--`: not accepted (a probe runs no command), caught to say so.
    #[arg(last = true, hide = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
    /// `wait`'s pacing options: not accepted (a probe makes one attempt), caught to say so
    /// rather than suggest a look-alike.
    #[arg(long = "interval", hide = true, value_name = "DURATION")]
    pub interval: Option<OsString>,
    /// See `interval`.
    #[arg(long = "max-interval", hide = true, value_name = "DURATION")]
    pub max_interval: Option<OsString>,
    /// See `interval`.
    #[arg(long = "success-threshold", hide = true, value_name = "N")]
    pub success_threshold: Option<OsString>,
    /// See `interval`.
    #[arg(long = "stable-for", hide = true, value_name = "DURATION")]
    pub stable_for: Option<OsString>,
    /// `wait`'s `--on-exit`: not accepted (a probe runs no command), caught to say so.
    #[arg(long = "on-exit", hide = true, value_name = "URL")]
    pub on_exit: Option<OsString>,
}

impl ProbeArgs {
    /// The first of `wait`'s options given to `probe`, if any.
    pub fn wait_option(&self) -> Option<&'static str> {
        [
            (self.interval.is_some(), "--interval"),
            (self.max_interval.is_some(), "--max-interval"),
            (self.success_threshold.is_some(), "--success-threshold"),
            (self.stable_for.is_some(), "--stable-for"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// Answer the kubelet's httpGet and grpc probes on one port, checking targets on demand.
///
/// Paths /ready, /ready/GROUP, /livez and /metrics (Prometheus), and gRPC health.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Where to listen.
    ///
    /// IP:PORT, or :PORT or PORT for every IPv4 address. Any client that can reach it may ask
    /// (in a pod: the pod network).
    #[arg(long, env = "READYGATE_LISTEN", value_name = "ADDR", default_value = "0.0.0.0:9090",
          value_parser = listen_address, help_heading = SERVE, hide_env = true)]
    pub listen: std::net::SocketAddr,
    /// Targets answered at /ready/NAME; repeatable.
    ///
    /// A named set of targets, also answered as gRPC service NAME.
    #[arg(long = "group", value_name = "NAME=TARGET[,TARGET...]",
          help_heading = SERVE)]
    pub groups: Vec<String>,
    /// How long one attempt's result answers requests.
    ///
    /// After that, a request makes a new attempt.
    #[arg(long, env = "READYGATE_FRESH_FOR", value_name = "DURATION", default_value = "1s",
          value_parser = parse_duration, allow_negative_numbers = true, help_heading = SERVE, hide_env = true)]
    pub fresh_for: Duration,
    /// Answer with the status alone: no body naming the targets and their reasons.
    #[arg(long, env = "READYGATE_QUIET_BODY", value_parser = Boolean, help_heading = SERVE,
          hide_env = true, hide_short_help = true)]
    pub quiet_body: bool,
}

/// `--listen`: `IP:PORT`, or `:PORT` and `PORT` for every IPv4 address (the default's
/// `0.0.0.0`), as Go servers read `:PORT`.
fn listen_address(text: &str) -> Result<std::net::SocketAddr, String> {
    let port = text.strip_prefix(':').unwrap_or(text);
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        let port: u16 = port
            .parse()
            .map_err(|_| format!("port {port} is above 65535"))?;
        return Ok((std::net::Ipv4Addr::UNSPECIFIED, port).into());
    }
    text.parse().map_err(|_| {
        format!(
            "expected IP:PORT, :PORT or PORT (0.0.0.0:9090, [::]:9090, 127.0.0.1:9090, :9090, \
             9090), not {}",
            crate::text::quoted(text)
        )
    })
}

/// The options `wait`, `probe` and `serve` share.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// tcp://HOST:PORT, http(s)://…, /PATH, grpc://…, postgres://…, k8s://… and more.
    ///
    /// All kinds: tcp://HOST:PORT, HOST:PORT, http(s)://…, file:///PATH, /PATH, ./PATH,
    /// unix:///PATH, grpc(s)://HOST:PORT[/SERVICE], postgres://, redis(s)://, mysql://,
    /// amqp(s)://, memcached://, nats://, zk://, kafka(s)://HOST[:PORT], dns://NAME,
    /// k8s://KIND/NAME, k8s://pods?selector=LABELS, k8s://TYPE.VERSION.GROUP/NAME?condition=C,
    /// and a command as one argument: "exec:pg_isready -h db".
    /// Default: $READYGATE_TARGETS (comma-separated).
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,

    /// Overall deadline (default: wait 60s, probe 1s; 0: none).
    #[arg(short = 't', long, env = "READYGATE_TIMEOUT", value_name = "DURATION", value_parser = parse_duration, allow_negative_numbers = true,
          help_heading = TIMING, hide_env = true)]
    pub timeout: Option<Duration>,

    /// Bound on one attempt (default 1s).
    ///
    /// Connect, TLS, request and body; never beyond the deadline.
    #[arg(long, env = "READYGATE_ATTEMPT_TIMEOUT", value_name = "DURATION", value_parser = parse_duration, allow_negative_numbers = true,
          help_heading = TIMING, hide_env = true)]
    pub attempt_timeout: Option<Duration>,

    /// Ready as soon as any one target is ready (default: all of them).
    #[arg(long, env = "READYGATE_ANY", value_parser = Boolean, help_heading = TIMING,
          hide_env = true)]
    pub any: bool,

    /// Succeed when the targets are NOT ready (port closed, file gone).
    #[arg(long, env = "READYGATE_INVERT", value_parser = Boolean, help_heading = TIMING,
          hide_env = true)]
    pub invert: bool,

    /// Accepted HTTP statuses (default 200-399).
    ///
    /// For example 200, or 200-299,304.
    #[arg(long, env = "READYGATE_STATUS", value_name = "RANGES", value_parser = StatusRanges::parse,
          help_heading = HTTP, hide_env = true)]
    pub status: Option<StatusRanges>,

    /// The body (or file content) must contain TEXT.
    ///
    /// Its first 1 MiB.
    #[arg(long, env = "READYGATE_CONTAINS", value_name = "TEXT", conflicts_with = "matches",
          help_heading = HTTP, hide_env = true)]
    pub contains: Option<String>,

    /// The HTTP body (first 1 MiB) or file content must match REGEX (multi-line: ^ and $ match
    /// at each line).
    #[arg(long, env = "READYGATE_MATCHES", value_name = "REGEX", value_parser = Matcher::regex,
          help_heading = HTTP, hide_env = true, hide_short_help = true)]
    pub matches: Option<Matcher>,

    /// The JSON body's value at PATH must be VALUE.
    ///
    /// PATH is dotted (items.0.ready); PATH alone: present, not false or null. Repeatable.
    #[arg(long = "json-field", env = "READYGATE_JSON_FIELD", value_name = "PATH[=VALUE]",
          value_parser = JsonField::parse, help_heading = HTTP, hide_env = true)]
    pub json_fields: Vec<JsonField>,

    /// A response header must match, as "Name: REGEX". Repeatable.
    #[arg(long = "header-matches", env = "READYGATE_HEADER_MATCHES", value_name = "HEADER",
          value_parser = HeaderMatch::parse, help_heading = HTTP, hide_env = true,
          hide_short_help = true)]
    pub header_matches: Vec<HeaderMatch>,

    /// Extra request header "Name: value"; repeatable.
    ///
    /// Host: overrides the host header.
    #[arg(short = 'H', long = "header", env = "READYGATE_HEADER", value_name = "HEADER",
          value_parser = HeaderParser, help_heading = HTTP, hide_env = true)]
    pub headers: Vec<Header>,

    /// HTTP method (default GET).
    #[arg(long, env = "READYGATE_METHOD", value_enum, ignore_case = true,
          help_heading = HTTP, hide_env = true, hide_short_help = true)]
    pub method: Option<HttpMethod>,

    /// Send http(s):// and grpc(s):// requests through this Unix socket instead of TCP.
    #[arg(long, env = "READYGATE_UNIX_SOCKET", value_name = "PATH", help_heading = HTTP,
          hide_env = true, hide_short_help = true)]
    pub unix_socket: Option<PathBuf>,

    /// Do not verify TLS certificates.
    #[arg(long, env = "READYGATE_INSECURE", value_parser = Boolean, help_heading = TLS,
          hide_env = true)]
    pub insecure: bool,

    /// Also trust the CA certificates in this PEM file.
    ///
    /// In addition to the built-in and system roots.
    #[arg(long, env = "READYGATE_CACERT", value_name = "FILE", help_heading = TLS,
          hide_env = true)]
    pub cacert: Option<PathBuf>,

    /// Client certificate (PEM) for https:// and grpcs:// servers that ask for one.
    #[arg(long, env = "READYGATE_CERT", value_name = "FILE", help_heading = TLS,
          hide_env = true, hide_short_help = true)]
    pub cert: Option<PathBuf>,

    /// Private key (PEM) of --cert.
    #[arg(long, env = "READYGATE_KEY", value_name = "FILE", help_heading = TLS,
          hide_env = true, hide_short_help = true)]
    pub key: Option<PathBuf>,

    /// TLS server name to send and verify instead of the URL's host.
    #[arg(long, env = "READYGATE_TLS_SERVER_NAME", value_name = "NAME", help_heading = TLS,
          hide_env = true, hide_short_help = true)]
    pub tls_server_name: Option<String>,

    /// The password of the targets on HOST (or HOST:PORT) is FILE's content; repeatable.
    ///
    /// For redis(s):// and http(s):// targets, with no percent-encoding: a mounted Secret's key
    /// as it is (one final newline dropped). Read once, at start.
    #[arg(long = "password-file", env = "READYGATE_PASSWORD_FILE", value_name = "HOST[:PORT]=FILE",
          help_heading = TLS, hide_env = true, hide_short_help = true)]
    pub password_files: Vec<String>,

    /// The password of the targets on HOST (or HOST:PORT) is variable VAR's value; repeatable.
    ///
    /// As --password-file, from an env entry with valueFrom.secretKeyRef.
    #[arg(long = "password-env", env = "READYGATE_PASSWORD_ENV", value_name = "HOST[:PORT]=VAR",
          help_heading = TLS, hide_env = true, hide_short_help = true)]
    pub password_envs: Vec<String>,

    /// Folder with the service account's token, ca.crt and namespace, for k8s:// targets
    /// (default /var/run/secrets/kubernetes.io/serviceaccount).
    #[arg(long, env = "READYGATE_K8S_SERVICEACCOUNT_DIR", value_name = "DIR", help_heading = TLS,
          hide_env = true, hide_short_help = true)]
    pub k8s_serviceaccount_dir: Option<PathBuf>,

    /// Kubeconfig for k8s:// targets outside a pod (default: $KUBECONFIG, ~/.kube/config).
    ///
    /// Its current context's cluster and user: token, client certificate, exec plugin.
    #[arg(long, env = "READYGATE_KUBECONFIG", value_name = "FILE", help_heading = TLS,
          hide_env = true, hide_short_help = true)]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig's context for k8s:// targets, instead of its current-context.
    #[arg(long, env = "READYGATE_CONTEXT", value_name = "NAME", help_heading = TLS,
          hide_env = true, hide_short_help = true)]
    pub context: Option<String>,

    /// When ready, create FILE: a marker for other containers.
    ///
    /// And its parent folders.
    #[arg(long, env = "READYGATE_TOUCH", value_name = "FILE", help_heading = PROCESS,
          hide_env = true)]
    pub touch: Option<PathBuf>,

    /// When not ready, also write the failure reason to FILE; '' for none. `wait` writes it by
    /// default to the kubelet's /dev/termination-log when that file is there.
    #[arg(long, env = "READYGATE_TERMINATION_LOG", value_name = "FILE", help_heading = PROCESS,
          hide_env = true, hide_short_help = true)]
    pub termination_log: Option<OsString>,
}

/// The one boolean syntax of every `READYGATE_*` variable: `true`/`false`, `1`/`0`, `yes`/`no`
/// (`on`/`off` too), in any case; empty is false.
pub fn boolean(variable: &str, value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" | "" => Ok(false),
        _ => Err(format!(
            "{variable}={} is not a boolean: use true or false (1/0, yes/no)",
            crate::text::quoted(value)
        )),
    }
}

/// clap's reader for a flag's environment variable, with [`boolean`]'s syntax and message. A
/// flag on the command line takes no value, so any other value came from the environment.
#[derive(Clone)]
struct Boolean;

impl clap::builder::TypedValueParser for Boolean {
    type Value = bool;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<bool, clap::Error> {
        let variable = arg
            .and_then(clap::Arg::get_env)
            .map_or("a variable".into(), |name| name.to_string_lossy());
        let fail = |message: String| {
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, message + "\n")
        };
        let text = value
            .to_str()
            .ok_or_else(|| fail(format!("{variable} is not valid UTF-8")))?;
        boolean(&variable, text).map_err(fail)
    }
}

/// Copy this executable to DIR/readygate (mode 0755, atomically).
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The folder to put `readygate` into (e.g. a shared emptyDir).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Add readygate's gate and a sidecar to manifests (files or stdin), written to stdout.
///
/// Acts on the readygate.dev/ annotations of each pod and template; see docs/cli.md.
#[derive(Debug, Args)]
pub struct InjectArgs {
    /// Manifests to read: YAML (several documents) or JSON; `-` or none: stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub injection: InjectionArgs,
    /// Write the manifests, or one JSON Patch per document (a line each).
    #[arg(long, value_enum, default_value_t = InjectOutput::Manifest, value_name = "FORMAT")]
    pub output: InjectOutput,
}

/// What `inject` and `webhook` add to every pod besides what its annotations ask for.
#[derive(Debug, Args)]
pub struct InjectionArgs {
    /// A container to add to every pod, as YAML or JSON.
    #[arg(long, value_name = "CONTAINER.yaml")]
    pub sidecar: Option<PathBuf>,
    /// How --sidecar is added: native (built-in sidecar), legacy (regular container),
    /// universal (both, with the handshake) or auto (chosen by the nodes' kubelet versions).
    #[arg(long, value_enum, default_value_t = SidecarMode::Native, value_name = "MODE",
          requires = "sidecar")]
    pub mode: SidecarMode,
    /// With --mode auto: the kubeconfig to read (default: KUBECONFIG, else ~/.kube/config;
    /// in a pod without either, the service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// With --mode auto: the kubeconfig's context to use instead of its current-context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Folder with the service account's token, ca.crt and namespace, in a pod.
    #[arg(
        long,
        env = "READYGATE_K8S_SERVICEACCOUNT_DIR",
        value_name = "DIR",
        hide = true
    )]
    pub k8s_serviceaccount_dir: Option<PathBuf>,
    /// readygate's image, for the init containers inject adds.
    #[arg(long, value_name = "IMAGE", default_value = DEFAULT_IMAGE)]
    pub image: String,
}

/// How `--sidecar` is added to each pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SidecarMode {
    /// An init container with `restartPolicy: Always` (Kubernetes 1.29+).
    Native,
    /// A regular container, first among the containers.
    Legacy,
    /// Both, joined by `readygate sidecar native|legacy` over a state file.
    Universal,
    /// Native where every node's kubelet has built-in sidecars, else universal or legacy.
    Auto,
}

/// Serve a mutating admission webhook that injects pods as `inject` does, over TLS.
///
/// admission.k8s.io/v1 at /mutate (a JSONPatch for Pod CREATE); /healthz, /readyz and
/// /metrics. The certificate and key are read again when their files change.
#[derive(Debug, Args)]
pub struct WebhookArgs {
    /// Address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8443")]
    pub listen: std::net::SocketAddr,
    /// The server's certificate chain (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: PathBuf,
    /// Its private key (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_key: PathBuf,
    #[command(flatten)]
    pub injection: InjectionArgs,
}

/// The image inject puts in the init containers it adds: this release's.
pub const DEFAULT_IMAGE: &str = concat!("ghcr.io/readygate/readygate:", env!("CARGO_PKG_VERSION"));

/// What `inject` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InjectOutput {
    /// The manifests, injected (documents left alone as they were written).
    Manifest,
    /// An RFC 6902 JSON Patch per document.
    Patch,
}

/// Tell whether a cluster can run built-in sidecars, and how to run them where it cannot.
///
/// Asks the API server (its version and feature gate), every node (the kubelet's version
/// and gate, through the node proxy) and admission (a dry-run pod CREATE), then gives a
/// verdict with the fix. Exit 0: fine; 1: a problem found; 3: a check failed.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The kubeconfig to read (default: KUBECONFIG, else ~/.kube/config; in a pod without
    /// either, the service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig's context to use instead of its current-context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Where the dry-run pod is created: the namespace your pods run in (default: the
    /// context's, else default).
    #[arg(short, long, value_name = "NS")]
    pub namespace: Option<String>,
    /// The node label that groups nodes (a node pool's), for the affinity fix.
    #[arg(long, value_name = "LABEL")]
    pub node_label: Option<String>,
    /// The report as a table for people, or json for scripts.
    #[arg(long, value_enum, default_value_t = DoctorOutput::Table, value_name = "FORMAT",
          hide_possible_values = true)]
    pub output: DoctorOutput,
    /// Give up on the cluster after this long (all checks together).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30s")]
    pub timeout: Duration,
    /// Folder with the service account's token, ca.crt and namespace, in a pod.
    #[arg(
        long,
        env = "READYGATE_K8S_SERVICEACCOUNT_DIR",
        value_name = "DIR",
        hide = true
    )]
    pub k8s_serviceaccount_dir: Option<PathBuf>,
}

/// How `doctor` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DoctorOutput {
    /// A short table for people.
    Table,
    /// One JSON object, for scripts.
    Json,
}

/// Print a shell completion script (bash, zsh or fish) to stdout.
#[derive(Debug, Args)]
#[command(after_help = "Install: readygate completions bash > /etc/bash_completion.d/readygate")]
pub struct CompletionsArgs {
    /// The shell to complete readygate's commands and options in.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// The shells `completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// GNU bash.
    Bash,
    /// Z shell.
    Zsh,
    /// fish.
    Fish,
}

#[derive(Debug, Subcommand)]
pub enum SidecarCommand {
    /// Run as a built-in sidecar (init container with restartPolicy: Always).
    #[command(after_long_help = help::SIDECAR_EXAMPLES)]
    Native(SidecarNativeArgs),
    /// Run as a regular container; stand down if the native sidecar runs.
    #[command(after_long_help = help::SIDECAR_EXAMPLES)]
    Legacy(SidecarLegacyArgs),
}

#[derive(Debug, Args)]
pub struct SidecarNativeArgs {
    /// The state file shared through an emptyDir.
    #[arg(long, value_name = "FILE")]
    pub state: PathBuf,
    /// The real sidecar to exec.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct SidecarLegacyArgs {
    /// The state file shared through an emptyDir.
    #[arg(long, value_name = "FILE")]
    pub state: PathBuf,
    /// How long to wait for the state file to say `native`.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub grace: Duration,
    /// What to do when the native sidecar runs.
    #[arg(long, value_enum, default_value_t = OnNative::Sleep)]
    pub on_native: OnNative,
    /// The real sidecar to exec when built-in sidecars do not work.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_last_single_value_wins_and_lists_gather() {
        let cli = Cli::try_parse_from([
            "readygate",
            "wait",
            "-t",
            "5s",
            "--timeout",
            "10s",
            "--json-field",
            "a",
            "--json-field",
            "b=c",
            "-q",
            "-q",
            "db:1",
        ])
        .unwrap();
        let Command::Wait(wait) = cli.command else {
            panic!("not wait")
        };
        assert_eq!(wait.common.timeout, Some(Duration::from_secs(10)));
        assert_eq!(wait.common.json_fields.len(), 2);
    }

    #[test]
    fn listen_takes_a_port_alone() {
        let any = |port| std::net::SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, port));
        assert_eq!(listen_address("9090"), Ok(any(9090)));
        assert_eq!(listen_address(":9090"), Ok(any(9090)));
        assert_eq!(listen_address("127.0.0.1:1").unwrap().port(), 1);
        assert!(listen_address("[::]:9090").is_ok());
        assert!(listen_address("70000").unwrap_err().contains("above 65535"));
        assert!(listen_address("localhost:9090")
            .unwrap_err()
            .contains(":PORT or PORT"));
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// `--help` gives the variables as one rule, READYGATE_ and the option's name: it holds.
    #[test]
    fn every_variable_is_readygate_and_its_options_name() {
        let mut cli = Cli::command();
        cli.build();
        let mut checked = 0;
        for command in cli.get_subcommands().chain([&cli]) {
            for arg in command.get_arguments() {
                let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
                    continue;
                };
                let rule = format!("READYGATE_{}", long.to_uppercase().replace('-', "_"));
                assert_eq!(env.to_str(), Some(rule.as_str()), "--{long}");
                checked += 1;
            }
        }
        assert!(checked > 40, "{checked}");
    }
}

/// The form of a log line (`--log-format`); the plan maps it to the log's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The HTTP methods `--method` offers; the plan maps it to the one the check sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HttpMethod {
    /// GET (the default).
    Get,
    /// HEAD: no body is ever read.
    Head,
}

/// What the legacy copy does when the native copy runs (`--on-native`); the plan maps it to
/// the sidecar's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnNative {
    /// Sleep until terminated (pods with restartPolicy: Always).
    Sleep,
    /// Exit 0 at once.
    Exit,
}
