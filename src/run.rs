//! `wait` and `probe`: run the plan's checks through the engine, then act on the outcome.

use std::sync::Arc;

use crate::check::{Check, Context};
use crate::engine::{self, humanize};
use crate::exit::Exit;
use crate::plan::{Mode, Plan};
use crate::process::signal::Terminations;
use crate::report;

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
    let context = Context::new(std::mem::take(&mut plan.options));
    let exit = run(&plan, &context, &mut signals).await;
    if let Some(url) = &plan.on_exit {
        let timeout = plan.policy.attempt_timeout;
        crate::process::supervise::notify(url, timeout, &context.options).await;
    }
    exit
}

async fn run(plan: &Plan, context: &Arc<Context>, signals: &mut Terminations) -> Exit {
    if plan.disabled {
        tracing::info!("READYGATE_DISABLED is set: not waiting");
        return ready(plan, signals).await;
    }
    let names: Vec<String> = plan.targets.iter().map(ToString::to_string).collect();
    report::warn_of_commands(plan);
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
        tracing::info!("waiting {deadline} for {} {goal}", names.join(", "));
    }
    let checks = plan
        .targets
        .iter()
        .map(|target| Check::new(target.clone(), context.clone()))
        .collect();
    let started = tokio::time::Instant::now();
    let report = tokio::select! {
        report = engine::run(checks, &names, &plan.schedules, &plan.policy) => report,
        signal = signals.next() => {
            tracing::warn!("stopped by signal {signal} before readiness");
            return Exit::Signal(signal);
        }
    };
    if report.ready {
        ready(plan, signals).await
    } else {
        report::not_ready(plan, &report, started.elapsed());
        Exit::NotReady
    }
}

/// Everything that follows readiness: the marker file, then COMMAND (exec, or as a child with
/// `--on-exit`) if any. A signal that came meanwhile still stops readygate: once COMMAND runs,
/// one caught by readygate would be lost.
async fn ready(plan: &Plan, signals: &mut Terminations) -> Exit {
    if let Some(path) = &plan.touch {
        if let Err(reason) = report::touch(path) {
            tracing::error!("{reason}");
            return Exit::NotReady;
        }
    }
    if plan.command.is_empty() {
        return Exit::Ready;
    }
    if let Some(signal) = signals.arrived().await {
        tracing::warn!("stopped by signal {signal} before running the command");
        return Exit::Signal(signal);
    }
    match &plan.on_exit {
        Some(url) => crate::process::supervise::supervise(&plan.command, url, signals).await,
        None => crate::process::exec::exec(&plan.command),
    }
}
