//! One run of a command: started in a process group of its own with stdin on `/dev/null`, its
//! stdout and stderr read as they come (only their last lines kept), until its leader exits.
//! Blocking, so it runs on the target's lane; its [`Group`] is how the attempt kills it.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::process::{pidfd_open, waitid, Pid, PidfdFlags, WaitId, WaitIdOptions};
use tokio::sync::oneshot;

use super::group::Group;
use super::last_line::LastLine;
use crate::error::{describe_io, Failure};
use crate::text::quoted;

/// How often the leader's exit is looked for where the kernel has no pidfd (before 5.3).
const POLL_EVERY: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 10_000_000,
};

/// Most reads of what is left in the pipes once the leader exited: a process that left the
/// group (`setsid`) and writes on cannot keep the attempt from ending.
const DRAIN_READS: usize = 64;

/// How a run ended: the leader's status, and the last line of each stream.
#[derive(Debug)]
pub struct Ran {
    pub status: ExitStatus,
    pub stderr: LastLine,
    pub stdout: LastLine,
}

impl Ran {
    /// Exit 0 is ready; anything else says how it ended, with the last line the command wrote
    /// (stderr's, else stdout's): `exit status 2: db:5432 - no response`.
    pub fn judge(&self) -> Result<(), Failure> {
        if self.status.success() {
            return Ok(());
        }
        let how = match (self.status.code(), self.status.signal()) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "ended without a status".into(),
        };
        match self.stderr.shown().or_else(|| self.stdout.shown()) {
            Some(line) => Err(format!("{how}: {line}").into()),
            None => Err(how.into()),
        }
    }
}

/// One stream of the command: its pipe until it closes, and its last line.
struct Stream {
    pipe: Option<File>,
    last: LastLine,
}

impl Stream {
    fn new(pipe: Option<impl Into<OwnedFd>>) -> Stream {
        let pipe = pipe.map(|pipe| File::from(pipe.into()));
        Stream {
            pipe,
            last: LastLine::default(),
        }
    }

    /// Reads what the pipe holds now (it was found readable); closed at its end or on an error.
    fn read(&mut self, buffer: &mut [u8]) {
        let Some(pipe) = &mut self.pipe else { return };
        match pipe.read(buffer) {
            Ok(0) => self.pipe = None,
            Ok(read) => self.last.feed(&buffer[..read]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => self.pipe = None,
        }
    }

    /// Whether the pipe has bytes (or its end) to read right now.
    fn readable_now(&self) -> bool {
        let Some(pipe) = &self.pipe else { return false };
        let mut fds = [PollFd::new(pipe, PollFlags::IN)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        poll(&mut fds, Some(&now)).is_ok_and(|n| n > 0)
    }
}

/// Runs `program` (found as `path`) with `args` once, to its leader's exit; `started` hears
/// when the spawn is done. `None` when the attempt ended before it could start.
pub fn run(
    path: &Path,
    (program, args): (&str, &[String]),
    group: &Group,
    started: oneshot::Sender<()>,
) -> Result<Option<Ran>, Failure> {
    let mut command = Command::new(path);
    command
        .arg0(program)
        .args(args)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !group.may_start() {
        return Ok(None);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            group.started(None);
            return Err(cannot_run(program, &e));
        }
    };
    let pid = Pid::from_child(&child);
    group.started(Some(pid));
    let _ = started.send(());
    let mut streams = [
        Stream::new(child.stderr.take()),
        Stream::new(child.stdout.take()),
    ];
    let pidfd = pidfd_open(pid, PidfdFlags::empty()).ok();
    let mut buffer = [0u8; 8192];
    while !exited(pid) {
        let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(3);
        let mut open: Vec<usize> = Vec::with_capacity(2);
        for (index, stream) in streams.iter().enumerate() {
            if let Some(pipe) = &stream.pipe {
                fds.push(PollFd::new(pipe, PollFlags::IN));
                open.push(index);
            }
        }
        if let Some(pidfd) = &pidfd {
            fds.push(PollFd::new(pidfd, PollFlags::IN));
        }
        let every = pidfd.is_none().then_some(&POLL_EVERY);
        if poll(&mut fds, every).is_err() {
            // Interrupted by a signal (or, rarely, out of memory): look again; the attempt's
            // end kills the group, and the leader's exit ends this loop.
            continue;
        }
        let readable: Vec<usize> = (open.iter().zip(&fds))
            .filter(|(_, fd)| !fd.revents().is_empty())
            .map(|(index, _)| *index)
            .collect();
        drop(fds);
        for index in readable {
            streams[index].read(&mut buffer);
        }
    }
    group.leader_exited();
    for stream in &mut streams {
        for _ in 0..DRAIN_READS {
            if !stream.readable_now() {
                break;
            }
            stream.read(&mut buffer);
        }
    }
    let status = child
        .wait()
        .map_err(|e| Failure::Text(format!("cannot wait for the command: {}", describe_io(&e))))?;
    let [stderr, stdout] = streams.map(|stream| stream.last);
    Ok(Some(Ran {
        status,
        stderr,
        stdout,
    }))
}

/// Whether the leader has exited, leaving it a zombie (not reaped), so its group's ID stays
/// its own until [`Group::leader_exited`] has killed the rest.
fn exited(pid: Pid) -> bool {
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    match waitid(WaitId::Pid(pid), options) {
        Ok(status) => status.is_some(),
        Err(rustix::io::Errno::INTR) => false,
        // Not a child of ours any more: nothing left to wait for.
        Err(_) => true,
    }
}

/// Why the command could not start. A program or interpreter that went missing since it was
/// found, or lost its permission, will not come back: the target is not ready for good.
fn cannot_run(program: &str, err: &std::io::Error) -> Failure {
    let shown = quoted(program);
    match err.kind() {
        ErrorKind::NotFound => Failure::Never(format!(
            "cannot run {shown}: no such file (the program, or the interpreter it names, is gone)"
        )),
        ErrorKind::PermissionDenied => {
            Failure::Never(format!("cannot run {shown}: permission denied"))
        }
        _ => Failure::Text(format!("cannot run {shown}: {}", describe_io(err))),
    }
}
