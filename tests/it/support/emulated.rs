//! The tests that measure the emulator rather than readygate when the suite runs for aarch64
//! under qemu-user (scripts/arm64-tests.sh): each calls [`skip_under_qemu`] with the reason, so
//! it returns early there and is never loosened on the machine it was built for.

use std::io::Write;
use std::time::Duration;

/// What emulation adds to one run of the binary, from its spawn to its exit: qemu's start and
/// the translation of every code path the run takes the first time (about 1 s on a loaded
/// 2-core machine). Added to upper time bounds under qemu only.
pub const QEMU_ALLOWANCE: Duration = Duration::from_secs(2);

/// `limit` for a run that took `elapsed`: natively `limit` itself; under qemu, a run over it
/// gets [`QEMU_ALLOWANCE`] more, and the test is recorded as one that needed it.
pub fn time_limit(elapsed: Duration, limit: Duration) -> Duration {
    if elapsed < limit || !under_qemu() {
        return limit;
    }
    skip_under_qemu(&format!(
        "a time bound of {limit:?} held only with qemu's allowance (took {elapsed:?})"
    ));
    limit + QEMU_ALLOWANCE
}

/// A time bound the test gives readygate itself (`-t`, `--attempt-timeout`) that a TLS
/// handshake or a large answer must fit in: `native` itself; under qemu, where that work takes
/// the emulator several times as long, [`QEMU_ALLOWANCE`] more, and the test is recorded.
pub fn given(native: &str) -> String {
    if !under_qemu() {
        return native.to_string();
    }
    let bound = humantime::parse_duration(native).expect("a duration") + QEMU_ALLOWANCE;
    skip_under_qemu(&format!(
        "readygate was given {bound:?} where natively it has {native}"
    ));
    format!("{}ms", bound.as_millis())
}

/// Whether this is a foreign-architecture build run under qemu-user: scripts/arm64-tests.sh
/// sets READYGATE_UNDER_QEMU=1; an x86_64 build never counts as emulated.
pub fn under_qemu() -> bool {
    cfg!(not(target_arch = "x86_64"))
        && std::env::var_os("READYGATE_UNDER_QEMU").is_some_and(|value| value == "1")
}

/// True under qemu, after recording the calling test and `why` (on stderr, and as a line in
/// READYGATE_QEMU_SKIPS for the script's report): the caller then skips what `why` names.
pub fn skip_under_qemu(why: &str) -> bool {
    if !under_qemu() {
        return false;
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    eprintln!("{test}: under qemu: {why}");
    if let Some(path) = std::env::var_os("READYGATE_QEMU_SKIPS") {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .expect("READYGATE_QEMU_SKIPS");
        writeln!(file, "{test}: {why}").expect("write READYGATE_QEMU_SKIPS");
    }
    true
}
