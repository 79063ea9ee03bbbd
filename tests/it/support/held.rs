//! One thread of a child held still while the rest of the process runs (ptrace's seize and
//! interrupt): how a test plays a loaded machine whose scheduler has not run that thread yet,
//! which a signal cannot do (SIGSTOP stops every thread).

use std::marker::PhantomData;

/// A thread of a child, stopped until this is dropped. Not `Send`: only the thread that seized
/// it may let it go, or reap it.
pub struct Held {
    /// The thread's id.
    tid: libc::pid_t,
    /// Keeps the value on the test's thread, the tracer.
    tracer: PhantomData<*const ()>,
}

impl Held {
    /// Stops thread `tid` of a child of this process, and returns once it is stopped.
    #[track_caller]
    pub fn thread(tid: libc::pid_t) -> Held {
        let null = std::ptr::null_mut::<libc::c_void>();
        // SAFETY: ptrace on a thread of our own child, with no address arguments.
        let seized = unsafe { libc::ptrace(libc::PTRACE_SEIZE, tid, null, null) };
        assert_eq!(seized, 0, "ptrace seize {tid}: {}", errno());
        let held = Held {
            tid,
            tracer: PhantomData,
        };
        // SAFETY: as above; the thread is ours to trace now.
        let stopped = unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, tid, null, null) };
        assert_eq!(stopped, 0, "ptrace interrupt {tid}: {}", errno());
        let mut status = 0;
        // SAFETY: waiting for the stop of our own tracee.
        let waited = unsafe { libc::waitpid(tid, &mut status, libc::__WALL) };
        assert_eq!(waited, tid, "waitpid {tid}: {}", errno());
        assert!(libc::WIFSTOPPED(status), "thread {tid}: status {status:#x}");
        held
    }

    /// The output writer threads of process `pid` (`readygate-output`, cut to the 15 bytes a
    /// thread's name holds).
    pub fn output_writers(pid: u32) -> Vec<libc::pid_t> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the child's threads");
        tasks
            .filter_map(|task| {
                let task = task.ok()?;
                let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
                let tid = task.file_name().to_str()?.parse().ok()?;
                name.starts_with("readygate-outpu").then_some(tid)
            })
            .collect()
    }
}

impl Drop for Held {
    /// Lets the thread run on; if its process ended meanwhile, reaps it, since a traced
    /// thread's end is told to its tracer, and until then the process's exit is told to no one.
    fn drop(&mut self) {
        let null = std::ptr::null_mut::<libc::c_void>();
        // SAFETY: ptrace on our own tracee, from the thread that seized it.
        if unsafe { libc::ptrace(libc::PTRACE_DETACH, self.tid, null, null) } != 0 {
            let mut status = 0;
            // SAFETY: reaping our own tracee, which has ended.
            unsafe { libc::waitpid(self.tid, &mut status, libc::__WALL) };
        }
    }
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}
