//! Running the binary and measuring what it cost: wall time and peak resident memory, read
//! from the kernel's own account of the finished process (`ru_maxrss`, as GNU time reports
//! it), which needs no sampling and cannot miss a short peak.

use std::process::{Command, Stdio};

use super::run::{finish, Outcome, RunExt};

/// Why a peak-memory bound is not checked under qemu-user.
pub const MEMORY_UNDER_QEMU: &str = "peak memory not checked: it counts qemu's own ~40 MB";

/// One measured run.
#[derive(Debug)]
pub struct Measured {
    /// Status, output, wall time.
    pub outcome: Outcome,
    /// Peak resident set size of the process, in KiB.
    pub peak_kib: u64,
}

impl Measured {
    /// Panics unless the peak resident memory stayed under `mib` MiB. Not checked under qemu,
    /// whose own memory the kernel counts in the peak.
    #[track_caller]
    pub fn expect_memory_under(&self, mib: u64) -> &Self {
        if super::skip_under_qemu(MEMORY_UNDER_QEMU) {
            return self;
        }
        assert!(
            self.peak_kib < mib * 1024,
            "peak memory {} KiB, limit {mib} MiB: {:#?}",
            self.peak_kib,
            self.outcome
        );
        self
    }
}

/// As [`measured`], for a run that should end at `bound`: one that ends late is run once more,
/// as [`super::run::RunExt::outcome_at`] does.
pub fn measured_at(command: &mut Command, bound: std::time::Duration) -> Measured {
    let first = measured(command);
    match super::run::late(first.outcome.elapsed, bound) {
        true => measured(command),
        false => first,
    }
}

/// Runs `command` to completion under GNU time, collecting its output, wall time and peak
/// memory. GNU time forks the measured process from its own small image, so the kernel's peak
/// figure is readygate's alone (a child forked straight from this large test process would
/// inherit the test's peak in `ru_maxrss` across `exec`).
pub fn measured(command: &mut Command) -> Measured {
    let time = super::require("time");
    let report = super::TempDir::new();
    let report_file = report.join("peak");
    let mut timed = Command::new(&time);
    timed
        .args(["--format", "%M", "--output"])
        .arg(&report_file)
        .arg(command.get_program())
        .args(command.get_args())
        .stdin(Stdio::null());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => timed.env(key, value),
            None => timed.env_remove(key),
        };
    }
    let (child, started) = timed.spawn_captured();
    let outcome = finish(child, started);
    let written = std::fs::read_to_string(&report_file).expect("time's report");
    // The last line is %M; a line before it may say "Command exited with non-zero status 1".
    let peak_kib = written
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .unwrap_or_else(|| panic!("unexpected report from {}: {written:?}", time.display()));
    Measured { outcome, peak_kib }
}
