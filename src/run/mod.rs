//! `wait` and `probe`: run the plan's checks through the engine, then act on the outcome.

pub mod report;

use std::sync::Arc;

use crate::cli::dashes;
use crate::engine::{self, Entry};
use crate::error::describe_io;
use crate::exit::Exit;
use crate::grammar::duration::humanize;
use crate::kind::Kind;
use crate::kind::{Check, Context};
use crate::plan::{Mode, Plan, TerminationLog};
use crate::process::signal::{stopped, Terminations};
use crate::runtime::lane::{self, Lane, Stop};

/// Runs a `wait` or `probe` plan to its exit status (or replaces the process with COMMAND).
/// With `--on-exit`, every way it ends sends the notice: COMMAND's exit, but also readiness
/// that never came or a signal, so a Job whose sidecar waits for it always completes.
pub async fn wait_or_probe(mut plan: Plan) -> Exit {
    crate::log::init(plan.log);
    crate::process::fdlimit::make_room(plan.targets.len());
    // Standing for COMMAND, readygate must not be ended by a signal COMMAND should get.
    let mut signals = match plan.on_exit {
        Some(_) => Terminations::forwarded(),
        None => Terminations::listen(),
    };
    let read = crate::plan::read_files(&mut plan, &mut signals).await;
    let context = Context::new(std::mem::take(&mut plan.options));
    let exit = match read {
        Ok(()) => run(&plan, &context, &mut signals).await,
        Err(exit) => exit,
    };
    if let Some(url) = &plan.on_exit {
        let timeout = plan.policy.attempt_timeout;
        crate::process::supervise::notify(url, timeout, &context).await;
    }
    exit
}

async fn run(plan: &Plan, context: &Arc<Context>, signals: &mut Terminations) -> Exit {
    if plan.disabled {
        tracing::info!(event = "disabled", "READYGATE_DISABLED is set: not waiting");
        return ready(plan, signals).await;
    }
    let entries: Vec<Entry<Check>> = (plan.targets.iter())
        .map(|target| Entry {
            condition: Check::new(target.clone(), context.clone()),
            name: target.to_string(),
            schedule: plan.spacing.of(target),
        })
        .collect();
    let looks = command_among_targets(plan, &entries);
    tokio::pin!(looks);
    // Said before anything else, unless a look is slow (a dead mount): then alongside the wait.
    let looked = match tokio::time::timeout(LOOK_FIRST, &mut looks).await {
        Ok(Some(usage)) => return usage,
        Ok(None) => true,
        Err(_) => false,
    };
    if plan.mode == Mode::Wait {
        let deadline = match plan.policy.deadline {
            Some(deadline) => format!("up to {}", humanize(deadline)),
            None => "with no deadline".into(),
        };
        let goal = if plan.policy.invert {
            "not to be ready"
        } else {
            "to be ready"
        };
        let names: Vec<String> = entries.iter().map(|entry| entry.name.clone()).collect();
        let names = engine::first_few(&names);
        let partial = crate::kind::uses::note(&plan.partial);
        tracing::info!(
            event = "waiting",
            "waiting {deadline} for {names} {goal}{partial}"
        );
    } else if !plan.partial.is_empty() {
        tracing::debug!(
            event = "note",
            "{}",
            crate::kind::uses::note(&plan.partial).trim_start()
        );
    }
    let started = tokio::time::Instant::now();
    let report = tokio::select! {
        // First: a target that is the command is found by its look before its attempt.
        biased;
        Some(usage) = &mut looks, if !looked => return usage,
        report = engine::run(entries, &plan.policy) => report,
        signal = signals.next() => return stopped(signal, "before readiness"),
        usage = touch_folder(plan) => return usage,
    };
    if report.ready {
        return ready(plan, signals).await;
    }
    let message = report::not_ready(plan, &report, started.elapsed());
    if let Some((log, message)) = plan.termination_log.clone().zip(message) {
        let kubelet = log == TerminationLog::Kubelet;
        let shown = match &log {
            TerminationLog::File(path) => format!("--termination-log {}", path.display()),
            TerminationLog::Kubelet => crate::plan::KUBELET_TERMINATION_LOG.to_string(),
        };
        let secrets = plan.secrets.clone();
        let job = move || report::write_termination_log(&log, &message, &secrets);
        // Off the runtime's thread, as checks' file work is, for one attempt's time.
        let done = lane::run_alone(plan.policy.attempt_timeout, signals.next(), job).await;
        let written = match done {
            Ok(written) => written.map_err(|e| describe_io(&e)),
            Err(Stop::Failed(failure)) => Err(failure.to_string()),
            Err(Stop::Signal(signal)) => {
                return stopped(signal, "while writing the --termination-log")
            }
        };
        match written {
            Ok(()) => {}
            // Outside a container the kubelet's file is not there, nor meant to be.
            Err(reason) if kubelet => {
                tracing::debug!(
                    event = "termination_log",
                    reason,
                    "not writing {shown}: {reason}"
                )
            }
            Err(reason) => {
                tracing::warn!(
                    event = "termination_log",
                    reason,
                    "cannot write {shown}: {reason}"
                )
            }
        }
    }
    Exit::NotReady
}

/// How long the start waits for the looks at targets that may be the command before it says
/// it is waiting: such a look takes microseconds, unless the path is on a dead mount.
const LOOK_FIRST: std::time::Duration = std::time::Duration::from_millis(100);

/// The usage error of a target that may be the command (`wait db:5432 ./app`) and is an
/// executable file, which would be found at once and never run; `None` when none is. Each look
/// runs on its target's lane, ahead of its first attempt, never on the runtime's thread.
fn command_among_targets(
    plan: &Plan,
    entries: &[Entry<Check>],
) -> impl std::future::Future<Output = Option<Exit>> {
    let looks: Vec<_> = (entries.iter().enumerate())
        .filter(|(index, _)| plan.may_be_the_command(*index))
        .filter_map(|(_, entry)| {
            let check = &entry.condition;
            let Kind::File(path) = &check.target.kind else {
                return None;
            };
            let path = path.clone();
            let look = check.lane.start(move || dashes::is_executable(&path));
            Some((entry.name.clone(), look))
        })
        .collect();
    async move {
        for (target, look) in looks {
            if look.await == Ok(true) {
                return Some(Exit::Usage(dashes::executable_target(&target)));
            }
        }
        None
    }
}

/// `--touch` naming a folder that exists is a usage error: looked for at start, off the
/// runtime's thread (the path may be on a dead mount) and alongside the wait, which it never
/// delays; the touch once ready looks again, should readiness come first. Resolves (to the
/// usage error) only when the path is a folder.
async fn touch_folder(plan: &Plan) -> Exit {
    let Some(path) = plan.touch.clone() else {
        return std::future::pending().await;
    };
    let look = move || is_folder(&path).then_some(path);
    match Lane::default()
        .run_within(plan.policy.attempt_timeout, look)
        .await
    {
        Ok(Some(folder)) => touch_is_a_folder(&folder),
        _ => std::future::pending().await,
    }
}

/// Whether `path` is a folder (following symlinks); blocking.
fn is_folder(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_dir())
}

/// The usage error of a `--touch` that names a folder.
fn touch_is_a_folder(path: &std::path::Path) -> Exit {
    Exit::Usage(format!(
        "--touch {} is a folder: name the file to create in it, as in {}",
        crate::text::quoted(&path.display().to_string()),
        crate::text::quoted(&path.join("ready").display().to_string())
    ))
}

/// Everything that follows readiness: the marker file, then COMMAND (exec, or as a child with
/// `--on-exit`) if any. A signal that came meanwhile still stops readygate: once COMMAND runs,
/// one caught by readygate would be lost.
async fn ready(plan: &Plan, signals: &mut Terminations) -> Exit {
    if let Some(path) = plan.touch.clone() {
        let shown = path.display().to_string();
        let job = move || match is_folder(&path) {
            true => Ok(Err(path)),
            false => report::touch(&path).map(Ok),
        };
        let done = lane::run_alone(plan.policy.attempt_timeout, signals.next(), job).await;
        let touched = match done {
            Ok(Ok(Err(folder))) => return touch_is_a_folder(&folder),
            Ok(touched) => touched.map(drop),
            Err(Stop::Failed(failure)) => {
                Err(format!("cannot create --touch file {shown}: {failure}"))
            }
            Err(Stop::Signal(signal)) => return stopped(signal, "while creating the --touch file"),
        };
        if let Err(reason) = touched {
            tracing::error!(event = "touch", status = Exit::NotReady.code(), "{reason}");
            return Exit::NotReady;
        }
    }
    if plan.command.is_empty() {
        return Exit::Ready;
    }
    if let Some(signal) = signals.arrived().await {
        return stopped(signal, "before running the command");
    }
    // exec looks COMMAND up on the runtime's thread: the look-up runs first off it, so that a
    // dead mount on its path (or in PATH) is found within one attempt's time, and the exec's
    // own look-up finds the answer cached.
    let program = plan.command[0].clone();
    let shown = crate::text::quoted(&program.to_string_lossy());
    let in_path = match program.as_encoded_bytes().contains(&b'/') {
        true => "",
        false => " in PATH",
    };
    tracing::debug!(event = "lookup", "looking up the command {shown}{in_path}");
    let look_up = move || crate::process::exec::find_program(&program).map(std::fs::metadata);
    match lane::run_alone(plan.policy.attempt_timeout, signals.next(), look_up).await {
        Ok(_) => {}
        Err(Stop::Failed(failure)) => {
            let why = failure.to_string();
            return crate::process::exec::say_cannot_run(&shown, why, Exit::CannotExecute);
        }
        Err(Stop::Signal(signal)) => return stopped(signal, "while looking up the command"),
    }
    match &plan.on_exit {
        Some(url) => crate::process::supervise::supervise(&plan.command, url, signals).await,
        None => crate::process::exec::exec(&plan.command),
    }
}
