//! The tests that measure the emulator rather than readygate when the suite runs for aarch64
//! under qemu-user (scripts/arm64-tests.sh): each calls [`skip_under_qemu`] with the reason, so
//! it returns early there and is never loosened on the machine it was built for.

use std::io::Write;

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
