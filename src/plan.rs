//! The validated plan: everything `wait` and `probe` need, built once from the command line and
//! environment before any I/O. Defaults and cross-option rules live here.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::cli::{self, CommonArgs, LogArgs, PacingArgs, ProbeArgs, WaitArgs};
use crate::engine::{Policy, Schedule};
use crate::exit::Exit;
use crate::kind::command;
use crate::kind::http::HttpTarget;
use crate::kind::target::{self, Target};
use crate::kind::uses::Partial;
use crate::kind::{HttpMethod, Kind, Options, Reach, Redirects};
use crate::log::{LogFormat, LogSettings};
use crate::process::sidecar::{Legacy, Native, OnNative, Side};
use crate::process::signal::Terminations;
use crate::runtime::lane::{self, Stop, FS_SILENT, UNBOUNDED_WITHIN};
use crate::secrets::Secrets;
use crate::text::quoted;
use tokio::time::Instant;

/// `wait`'s default deadline.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(60);
/// `probe`'s default deadline: the kubelet's default `timeoutSeconds`.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// Default bound on one attempt, like the kubelet's `timeoutSeconds`.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(1);
/// The schedule of a target on this machine (a loopback host, a Unix socket, a file): a
/// connect there costs microseconds, so it is polled fast, from 10 ms doubling to 100 ms.
pub const LOCAL: Schedule = Schedule {
    label: "local",
    first: Duration::from_millis(10),
    max: Duration::from_millis(100),
    growth: (2, 1),
    steady: 0,
};
/// The schedule of a peer over the network: every 100 ms or less for its first 15 retries (about
/// 1.1 s), so that one coming up then is seen within ~40 ms, then growing to under one attempt a
/// second for a dependency that stays down. More steady retries would cost a waiting pod more
/// CPU than its goal allows (docs/performance.md, "Load on the cluster").
pub const REMOTE: Schedule = Schedule {
    label: "remote",
    first: Duration::from_millis(100),
    max: Duration::from_secs(5),
    growth: (13, 10),
    steady: 15,
};
/// The schedule of a `k8s://` target: the remote one with no steady start, as a watch sees
/// readiness at once and its retries ask the API server every pod shares.
pub const API_SERVER: Schedule = Schedule {
    label: "api server",
    steady: 0,
    ..REMOTE
};
/// The schedule of an `exec:` target: the remote one with no steady start, as each attempt
/// costs a process.
pub const COMMAND: Schedule = Schedule {
    label: "command",
    steady: 0,
    ..REMOTE
};

/// The file the kubelet bind-mounts into every container for its termination message.
pub const KUBELET_TERMINATION_LOG: &str = "/dev/termination-log";

/// Where a run that is not ready leaves its reason for `kubectl describe pod`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminationLog {
    /// `--termination-log FILE`: created, with its folders, if need be.
    File(PathBuf),
    /// `wait` without `--termination-log`: the kubelet's file, written only if it is there,
    /// so that the reason shows as the container's message with no flag in the manifest.
    Kubelet,
}

/// `--termination-log`: a file, `''` for none; absent, the kubelet's file for `wait` only (a
/// probe's reason goes to the probe's event, and a stale one must not become the message of a
/// container that later ends for another reason).
fn termination_log(mode: Mode, given: Option<OsString>) -> Option<TerminationLog> {
    match given {
        Some(file) if file.is_empty() => None,
        Some(file) => Some(TerminationLog::File(file.into())),
        None => (mode == Mode::Wait).then_some(TerminationLog::Kubelet),
    }
}

/// The files the options name: read once, before any attempt, each off the runtime's thread
/// (a path may be on a mount that does not answer) by [`read_files`].
#[derive(Debug, Default)]
pub struct Files {
    /// `--password-file`: each file and the targets (indices) whose password it holds.
    pub passwords: Vec<(PathBuf, Vec<usize>)>,
    /// `--cacert`.
    pub cacert: Option<PathBuf>,
    /// `--cert`.
    pub cert: Option<PathBuf>,
    /// `--key`.
    pub key: Option<PathBuf>,
    /// When a `k8s://` target needs a cluster: where to find it (`--kubeconfig`, `--context`,
    /// `--k8s-serviceaccount-dir`), and the attempts' bound.
    pub cluster: Option<(crate::kind::k8s::kubeconfig::Access, Duration)>,
}

/// Reads the plan's [`Files`] into its options, within the deadline (else
/// [`UNBOUNDED_WITHIN`]) and until a terminating signal. A fault in a file is a usage error;
/// a file system that does not answer ends the run with a line naming the file.
pub async fn read_files(plan: &mut Plan, signals: &mut Terminations) -> Result<(), Exit> {
    let files = std::mem::take(&mut plan.files);
    let within = plan.policy.deadline.unwrap_or(UNBOUNDED_WITHIN);
    let end = (Instant::now() + within, within);
    for (path, named) in files.passwords {
        let what = format!("--password-file {}", quoted(&path.display().to_string()));
        let fault = what.clone();
        let job = move || {
            std::fs::read_to_string(&path)
                .map_err(|e| format!("{fault}: {}", crate::error::describe_io(&e)))
        };
        let password = read(end, signals, what, job).await?;
        plan.secrets
            .learn(crate::kind::password::sent(&password).as_bytes());
        for index in named {
            let target = &mut plan.targets[index];
            crate::kind::password::set(target, &password, "--password-file")
                .map_err(Exit::Usage)?;
        }
    }
    if let Some(path) = files.cacert {
        let what = format!("--cacert {}", quoted(&path.display().to_string()));
        let job = move || crate::net::tls::read_cacert(&path);
        plan.options.cacert = read(end, signals, what, job).await?;
    }
    if let Some(shown) = files.cert.as_ref().or(files.key.as_ref()) {
        let what = format!("--cert/--key {}", quoted(&shown.display().to_string()));
        let (cert, key) = (files.cert, files.key);
        let job = move || crate::net::tls::read_identity(cert.as_deref(), key.as_deref());
        plan.options.client_cert = read(end, signals, what, job).await?;
    }
    if let Some((access, bound)) = files.cluster {
        // Named as for_targets chooses: the kubeconfig given, the service account folder given
        // (without --context), or whichever it finds.
        let what = match (
            &access.kubeconfig,
            &access.service_account_dir,
            &access.context,
        ) {
            (Some(file), _, _) => {
                format!("the kubeconfig {}", quoted(&file.display().to_string()))
            }
            (None, Some(_), None) => "the service account folder".to_string(),
            _ => "the cluster's credentials".to_string(),
        };
        let secrets = plan.secrets.clone();
        let job = move || crate::kind::k8s::kubeconfig::for_targets(&access, secrets, bound);
        plan.options.k8s = Some(read(end, signals, what, job).await?);
    }
    // A command target's program that is not there is a usage error now, not a retry.
    // Disabled, nothing is looked up: the same manifest runs anywhere.
    for index in (0..plan.targets.len()).filter(|_| !plan.disabled) {
        let Kind::Command(command) = &plan.targets[index].kind else {
            continue;
        };
        let (program, shown) = (command.program.clone(), plan.targets[index].to_string());
        let what = format!("the command {}", quoted(&program));
        let job = move || {
            crate::kind::command::program::find(&program)
                .map_err(|why| format!("invalid target {}: {why}", quoted(&shown)))
        };
        let path = read(end, signals, what, job).await?;
        if let Kind::Command(command) = &mut plan.targets[index].kind {
            command.path = Some(path);
        }
    }
    Ok(())
}

/// Runs `job`, which reads `what`, off the runtime's thread until `end` (an instant, and the
/// whole span that ends there) or a signal.
async fn read<T: Send + 'static>(
    (end, span): (Instant, Duration),
    signals: &mut Terminations,
    what: String,
    job: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, Exit> {
    let within = end.saturating_duration_since(Instant::now());
    match lane::run_alone(within, signals.next(), job).await {
        Ok(read) => read.map_err(Exit::Usage),
        // Said with the whole span: what ended the wait is the deadline.
        Err(Stop::Failed(_)) if Instant::now() >= end => Err(Exit::Failed(format!(
            "cannot read {what}: {FS_SILENT} within {}",
            crate::grammar::duration::humanize(span)
        ))),
        Err(Stop::Failed(failure)) => Err(Exit::Failed(format!("cannot read {what}: {failure}"))),
        Err(Stop::Signal(signal)) => {
            tracing::warn!("stopped by signal {signal} while reading {what}");
            Err(Exit::Signal(signal))
        }
    }
}

/// Which command the plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Retry until the deadline.
    Wait,
    /// One attempt per target.
    Probe,
    /// One attempt per target per request (`serve`).
    Serve,
}

/// Everything a `wait` or `probe` run does, validated.
#[derive(Debug)]
pub struct Plan {
    pub mode: Mode,
    /// The targets, in the order given.
    pub targets: Vec<Target>,
    /// How each target's attempts are spaced.
    pub spacing: Spacing,
    pub policy: Policy,
    pub options: Options,
    /// Options that apply to some of the targets only: said when the run starts.
    pub partial: Vec<Partial>,
    /// Marker file to create when ready.
    pub touch: Option<PathBuf>,
    /// Where to write the failure reason when not ready.
    pub termination_log: Option<TerminationLog>,
    /// The files the options name, read into `options` by [`read_files`] before any attempt.
    pub files: Files,
    /// `-- COMMAND`: exec'd once ready.
    pub command: Vec<OsString>,
    /// `--on-exit URL`: run COMMAND as a child and POST here when it exits.
    pub on_exit: Option<HttpTarget>,
    pub log: LogSettings,
    /// `READYGATE_DISABLED=true`: skip all waiting.
    pub disabled: bool,
    /// The targets came from the command line, not from `READYGATE_TARGETS`.
    pub from_command_line: bool,
    /// Every secret of the run, hidden from all it writes: its URLs' passwords, its secret
    /// headers' values, and the service-account token once read.
    pub secrets: Arc<Secrets>,
}

impl Plan {
    /// The plan of `readygate wait`.
    pub fn for_wait(args: WaitArgs, log: &LogArgs, secrets: Arc<Secrets>) -> Result<Plan, String> {
        let on_exit = match &args.on_exit {
            None => None,
            Some(_) if args.command.is_empty() => {
                return Err("--on-exit needs a command after --".into())
            }
            Some(url) => match Target::parse(url)
                .inspect(|_| secrets.learn_urls(url))
                .map_err(|e| format!("--on-exit: {e}"))?
                .kind
            {
                Kind::Http(target) => Some(target),
                _ => return Err("--on-exit needs an http:// or https:// URL".into()),
            },
        };
        let may_forget = args.command.is_empty();
        let pacing = Some(&args.pacing);
        let mut plan = Plan::common(
            Mode::Wait,
            args.common,
            pacing,
            log,
            may_forget,
            on_exit.is_some(),
            secrets,
        )?;
        plan.command = args.command;
        plan.on_exit = on_exit;
        Ok(plan)
    }

    /// The plan of `readygate probe`.
    pub fn for_probe(
        args: ProbeArgs,
        log: &LogArgs,
        secrets: Arc<Secrets>,
    ) -> Result<Plan, String> {
        if let Some(first) = args.command.first() {
            return Err(format!(
                "probe takes no command ({} after --): it makes one attempt and exits; to run a \
                 command once the targets are ready, use wait",
                crate::text::quoted(&first.to_string_lossy())
            ));
        }
        if args.on_exit.is_some() {
            return Err(
                "--on-exit is an option of wait with -- COMMAND: probe runs no command, \
                        so there is no exit to announce"
                    .into(),
            );
        }
        if let Some(option) = args.wait_option() {
            return Err(format!(
                "{option} is an option of wait: probe makes one attempt (the kubelet's \
                 periodSeconds and successThreshold pace probes)"
            ));
        }
        Plan::common(Mode::Probe, args.common, None, log, false, false, secrets)
    }

    /// Whether the user may have meant target `index` (counted from 0) as the command: `wait`
    /// without `-- COMMAND`, a target after the first, given as a bare path.
    pub fn may_be_the_command(&self, index: usize) -> bool {
        let wait_without_command =
            self.mode == Mode::Wait && self.command.is_empty() && self.from_command_line;
        matches!(self.targets[index].kind, Kind::File(_))
            && cli::dashes::may_be_the_command(
                wait_without_command,
                index,
                &self.targets[index].to_string(),
            )
    }

    /// What `wait`, `probe` and `serve` share; `may_forget`: COMMAND may be among the targets;
    /// `on_exit`: `--on-exit` uses the TLS trust options too.
    pub(crate) fn common(
        mode: Mode,
        args: CommonArgs,
        pacing: Option<&PacingArgs>,
        log: &LogArgs,
        may_forget: bool,
        on_exit: bool,
        secrets: Arc<Secrets>,
    ) -> Result<Plan, String> {
        let from_command_line = !args.targets.is_empty();
        let mut targets = targets(&args.targets, may_forget, &secrets)?;
        let passwords = passwords(&args, &mut targets, &secrets)?;
        let secret_headers = args.headers.iter().filter(|h| h.value.is_sensitive());
        for header in secret_headers {
            secrets.learn_header_value(header.value.as_bytes());
        }
        let policy = policy(mode, &args, pacing)?;
        let spacing = Spacing {
            given: pacing.and_then(explicit_schedule),
            through_socket: args.unix_socket.is_some(),
        };
        if !args.json_fields.is_empty() && args.method == Some(cli::HttpMethod::Head) {
            return Err("--json-field needs a body: not with --method HEAD".into());
        }
        let partial = crate::kind::uses::check(&given(&args, on_exit), &targets)?;
        if let Some(touch) = args.touch.as_ref().map(|path| path.to_string_lossy()) {
            if touch.ends_with('/') || touch.ends_with("/.") || touch == "." {
                return Err(format!(
                    "--touch {} names a folder: name the file to create, as in {}",
                    crate::text::quoted(&touch),
                    crate::text::quoted(&format!("{}/ready", touch.trim_end_matches('/')))
                ));
            }
        }
        let matcher = match (args.contains, args.matches) {
            (Some(text), _) => Some(crate::grammar::matcher::Matcher::Contains(text)),
            (None, matcher) => matcher,
        };
        let disabled = match env("READYGATE_DISABLED")? {
            Some(value) => cli::boolean("READYGATE_DISABLED", &value)?,
            None => false,
        };
        // The pod's API server and credentials, found once when a `k8s://` target needs them:
        // outside a pod that is a usage error. Disabled, nothing is checked: no cluster to find
        // (the same manifest runs anywhere).
        let k8s = !disabled && targets.iter().any(|t| matches!(t.kind, Kind::K8s(_)));
        let files = Files {
            passwords,
            cacert: args.cacert,
            cert: args.cert,
            key: args.key,
            cluster: k8s.then(|| {
                let bound = args.attempt_timeout.unwrap_or(ATTEMPT_TIMEOUT);
                let access = crate::kind::k8s::kubeconfig::Access {
                    kubeconfig: args.kubeconfig,
                    context: args.context,
                    service_account_dir: args.k8s_serviceaccount_dir,
                };
                (access, bound)
            }),
        };
        let usual = match mode {
            Mode::Wait | Mode::Serve => tracing::Level::INFO,
            Mode::Probe => tracing::Level::WARN,
        };
        Ok(Plan {
            mode,
            targets,
            spacing,
            policy,
            options: Options {
                statuses: args.status.unwrap_or_default(),
                matcher,
                json_fields: args.json_fields,
                header_matches: args.header_matches,
                headers: args.headers,
                method: match args.method {
                    None | Some(cli::HttpMethod::Get) => HttpMethod::Get,
                    Some(cli::HttpMethod::Head) => HttpMethod::Head,
                },
                unix_socket: args.unix_socket,
                insecure: args.insecure,
                tls_server_name: args
                    .tls_server_name
                    .as_deref()
                    .map(crate::net::tls::parse_server_name)
                    .transpose()?,
                redirects: Redirects::SameHost,
                ..Options::default()
            },
            partial,
            touch: args.touch,
            termination_log: termination_log(mode, args.termination_log),
            files,
            command: Vec::new(),
            on_exit: None,
            log: log_settings(log, usual),
            from_command_line,
            disabled,
            secrets,
        })
    }
}

/// `--password-env`'s passwords set on their targets now (a variable is no I/O), and
/// `--password-file`'s files with their targets, read by [`read_files`]. Each is a secret.
fn passwords(
    args: &CommonArgs,
    targets: &mut [Target],
    secrets: &Secrets,
) -> Result<Vec<(PathBuf, Vec<usize>)>, String> {
    for given in &args.password_envs {
        let (named, variable) = crate::kind::password::parse("--password-env", given, targets)?;
        let password = env(variable)?
            .ok_or_else(|| format!("--password-env {}: {variable} is not set", quoted(given)))?;
        secrets.learn(crate::kind::password::sent(&password).as_bytes());
        for index in named {
            crate::kind::password::set(&mut targets[index], &password, "--password-env")?;
        }
    }
    let mut files = Vec::new();
    for given in &args.password_files {
        let (named, file) = crate::kind::password::parse("--password-file", given, targets)?;
        files.push((PathBuf::from(file), named));
    }
    Ok(files)
}

/// The options given that shape the attempts of some kinds only (see [`crate::kind::uses`]);
/// with `on_exit`, `--insecure` and `--cacert` serve `--on-exit`'s URL whatever the targets.
fn given(args: &CommonArgs, on_exit: bool) -> Vec<&'static str> {
    [
        (args.status.is_some(), "--status"),
        (args.contains.is_some(), "--contains"),
        (args.matches.is_some(), "--matches"),
        (!args.json_fields.is_empty(), "--json-field"),
        (!args.header_matches.is_empty(), "--header-matches"),
        (args.method.is_some(), "--method"),
        (!args.headers.is_empty(), "--header"),
        (args.unix_socket.is_some(), "--unix-socket"),
        (args.insecure && !on_exit, "--insecure"),
        (args.cacert.is_some() && !on_exit, "--cacert"),
        (args.cert.is_some(), "--cert"),
        (args.key.is_some(), "--key"),
        (args.tls_server_name.is_some(), "--tls-server-name"),
        (
            args.k8s_serviceaccount_dir.is_some(),
            "--k8s-serviceaccount-dir",
        ),
        (args.kubeconfig.is_some(), "--kubeconfig"),
        (args.context.is_some(), "--context"),
    ]
    .into_iter()
    .filter_map(|(given, option)| given.then_some(option))
    .collect()
}

/// The targets from the command line, else from `READYGATE_TARGETS` (comma-separated). With
/// `may_forget`, a later target on the command line that does not parse may be the command.
/// Each target's password is learned as a secret of the run.
fn targets(given: &[String], may_forget: bool, secrets: &Secrets) -> Result<Vec<Target>, String> {
    let from_env;
    let texts: Vec<&str> = if given.is_empty() {
        from_env = env("READYGATE_TARGETS")?.unwrap_or_default();
        crate::kind::command::split_list(&from_env)
    } else {
        given.iter().map(String::as_str).collect()
    };
    let spaced = texts
        .iter()
        .find(|text| target::list_separator(text) == Some("white space"));
    if let (true, Some(spaced)) = (given.is_empty(), spaced) {
        return Err(format!(
            "READYGATE_TARGETS: invalid target {}: targets in it are separated by commas, not \
             white space",
            crate::text::quoted(&target::redact_userinfo(spaced))
        ));
    }
    if texts.is_empty() {
        return Err("no target given: pass TARGET... or set READYGATE_TARGETS".into());
    }
    let hint = may_forget && !given.is_empty();
    let parsed: Result<Vec<Target>, String> = (texts.iter().enumerate())
        .map(|(index, text)| {
            secrets.learn_urls(text);
            command::secrets::learn(secrets, text);
            Target::parse(text).map_err(|message| {
                let argv: Vec<OsString> = std::env::args_os().collect();
                let split = cli::placement::split_duration(text, &argv);
                // `exec:mysqladmin ping` unquoted: the command's words came apart.
                let after_command = index > 0 && command::written(texts[index - 1]).is_some();
                match (split, after_command, hint && index > 0) {
                    (Some(fix), ..) if !given.is_empty() => {
                        format!("invalid target {}: {fix}", quoted(text))
                    }
                    (_, true, _) => {
                        let whole = format!("{} {text}", texts[index - 1]);
                        command::secrets::learn(secrets, &whole);
                        let shown = command::shown(&whole).unwrap_or_default();
                        format!(
                            "{message} (a command target is one argument: quote it whole, as \
                             in {})",
                            quoted(&shown)
                        )
                    }
                    (_, _, true) => format!("{message} ({})", cli::dashes::HINT),
                    _ => message,
                }
            })
        })
        .collect();
    parsed
}

fn policy(mode: Mode, args: &CommonArgs, pacing: Option<&PacingArgs>) -> Result<Policy, String> {
    if let (Some(timeout), Some(attempt)) = (args.timeout, args.attempt_timeout) {
        if !timeout.is_zero() && attempt > timeout {
            return Err(format!(
                "--attempt-timeout {} is longer than --timeout {}",
                humantime::format_duration(attempt),
                humantime::format_duration(timeout)
            ));
        }
    }
    let attempt_timeout = args.attempt_timeout.unwrap_or(ATTEMPT_TIMEOUT);
    if attempt_timeout.is_zero() {
        return Err("--attempt-timeout must be above 0".into());
    }
    if let Some((interval, max)) = pacing.and_then(|p| p.interval.zip(p.max_interval)) {
        if interval > max {
            return Err(format!(
                "--interval {} is above --max-interval {}",
                humantime::format_duration(interval),
                humantime::format_duration(max)
            ));
        }
    }
    let timeout = args.timeout.unwrap_or(match mode {
        Mode::Wait => WAIT_TIMEOUT,
        Mode::Probe => PROBE_TIMEOUT,
        // An answer of `serve` is bounded by `--attempt-timeout` alone unless `--timeout` is given.
        Mode::Serve => Duration::ZERO,
    });
    let stable_for = pacing.and_then(|p| p.stable_for).unwrap_or_default();
    if !timeout.is_zero() && stable_for >= timeout {
        return Err(format!(
            "--stable-for {} is not shorter than --timeout {}: it could never be met",
            humantime::format_duration(stable_for),
            humantime::format_duration(timeout)
        ));
    }
    Ok(Policy {
        deadline: Some(timeout).filter(|timeout| !timeout.is_zero()),
        attempt_timeout,
        success_threshold: pacing.map_or(1, |pacing| pacing.success_threshold),
        stable_for,
        any: args.any,
        invert: args.invert,
        max_attempts: (mode != Mode::Wait).then_some(1),
    })
}

/// `--interval`/`--max-interval` as given (flag or environment): one schedule for every target,
/// doubling as the local one does; `None` when neither is given.
fn explicit_schedule(pacing: &PacingArgs) -> Option<Schedule> {
    if pacing.interval.is_none() && pacing.max_interval.is_none() {
        return None;
    }
    let first = pacing.interval.unwrap_or(LOCAL.first);
    Some(Schedule {
        label: "--interval/--max-interval",
        first,
        max: pacing.max_interval.unwrap_or(LOCAL.max.max(first)),
        growth: (2, 1),
        steady: 0,
    })
}

/// How a run spaces its targets' attempts: as `--interval`/`--max-interval` say, else by
/// how each target is reached.
#[derive(Debug, Clone, Copy)]
pub struct Spacing {
    /// The schedule of every target, when `--interval`/`--max-interval` set one.
    given: Option<Schedule>,
    /// Requests go through `--unix-socket`: every HTTP(S) and gRPC target is local.
    through_socket: bool,
}

impl Spacing {
    /// The schedule of `target`'s attempts.
    pub fn of(&self, target: &Target) -> Schedule {
        let by_reach = || schedule(target.reach(self.through_socket));
        self.given.unwrap_or_else(by_reach)
    }
}

/// The schedule of a target by how it is reached, unless `--interval`/`--max-interval` set one.
pub fn schedule(reach: Reach) -> Schedule {
    match reach {
        Reach::Local => LOCAL,
        Reach::Network => REMOTE,
        Reach::ApiServer => API_SERVER,
        Reach::Command => COMMAND,
    }
}

/// The environment variable `name`, if set; one that is not UTF-8 is a usage error.
pub(crate) fn env(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not valid UTF-8")),
    }
}

/// Logging as the user chose: `-q` failures only, `-v` every attempt, else at `usual`.
pub(crate) fn log_settings(log: &LogArgs, usual: tracing::Level) -> LogSettings {
    let level = match (log.quiet, log.verbose) {
        (true, _) => tracing::Level::ERROR,
        (_, true) => tracing::Level::DEBUG,
        _ => usual,
    };
    LogSettings {
        level,
        format: match log.log_format {
            cli::LogFormat::Text => LogFormat::Text,
            cli::LogFormat::Json => LogFormat::Json,
        },
    }
}

/// `install`'s logging: its lines follow `--log-format` (`-q` and `-v` change nothing: it says
/// one line, outside `tracing`).
pub fn install_log(log: &LogArgs) -> LogSettings {
    log_settings(log, tracing::Level::INFO)
}

/// The side of the sidecar handshake to run, from `sidecar native|legacy`, and its logging.
pub fn sidecar(command: cli::SidecarCommand, log: &LogArgs) -> (Side, LogSettings) {
    let side = match command {
        cli::SidecarCommand::Native(args) => Side::Native(Native {
            state: args.state,
            command: args.command,
        }),
        cli::SidecarCommand::Legacy(args) => Side::Legacy(Legacy {
            state: args.state,
            grace: args.grace,
            on_native: match args.on_native {
                cli::OnNative::Sleep => OnNative::Sleep,
                cli::OnNative::Exit => OnNative::Exit,
            },
            command: args.command,
        }),
    };
    (side, log_settings(log, tracing::Level::INFO))
}
