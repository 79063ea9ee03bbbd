//! A pipe already full (nobody has read it): a child's stdout or stderr that takes nothing
//! until the test reads it, as a stopped log shipper or a reader that comes late leaves it.

use std::io::Write;
use std::os::unix::io::FromRawFd;

/// Its read end, and its write end for the child (blocking, as a shell's pipe is): the read
/// end is kept open so that the child's writes block rather than fail. The pipe holds 64 KiB
/// of `.` that a reader gets first.
pub fn full_pipe() -> (std::fs::File, std::fs::File) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 returns.
    assert_eq!(
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) },
        0
    );
    // SAFETY: both descriptors are fresh and owned here alone.
    let (reader, mut writer) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    while writer.write(&[b'.'; 4096]).is_ok() {}
    // SAFETY: fcntl on our own descriptors: both block from now on.
    unsafe {
        libc::fcntl(fds[0], libc::F_SETFL, 0);
        libc::fcntl(fds[1], libc::F_SETFL, 0);
    }
    (reader, writer)
}
