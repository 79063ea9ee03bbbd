//! Every line readygate writes to stderr or stdout passes here: secrets are hidden once for all
//! of them (the run's known ones and whatever looks like one, [`Secrets::hide`]), and a reader
//! that stops reading (a full pipe, a stopped terminal) never blocks the engine. Lines go to a
//! writer thread through a channel bounded in bytes; a line too long is cut, what does not fit
//! is dropped and counted, and exit waits only briefly, then says how many lines it could not
//! write.
//!
//! Its state is process-wide on purpose, as tracing's subscriber is: the process has one
//! stdout and one stderr, and a line from anywhere (a panic hook, `say!`, a log line) must pass
//! the same queue and the same secrets. Only this module touches its statics; others reach
//! them through its functions ([`hide`], [`notes_as`], [`flush`]).

#[macro_use]
mod say;

use std::io::{Stderr, Stdout, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::secrets::Secrets;

/// Most bytes queued for one stream; past it lines are dropped (and counted).
const QUEUE_BYTES: usize = 1 << 20;
/// Most bytes of one line; a longer one is cut, saying so, rather than dropped.
const MAX_LINE: usize = 16 * 1024;
/// How long exit (or exec) waits for queued lines to be written to a stream that is behind.
const FLUSH_WITHIN: Duration = Duration::from_millis(200);
/// How long it waits when the stream has room and only the writer has not run yet (a loaded
/// machine): a reader that keeps up never loses a line to the scheduler.
const FLUSH_AT_MOST: Duration = Duration::from_secs(2);
/// A pipe holds its bytes in pages, and a write takes a new page unless it fits in the last.
const PAGE: usize = 4096;
/// Room a pipe keeps free of lines, counted in bytes: one page for the final note (a write of
/// up to a page to a pipe with a free page never blocks), and one each for the page the reader
/// is halfway through, the unfilled end of the last page and a write that missed filling it.
const PIPE_RESERVE: usize = 4 * PAGE;

/// Writes `line` (a newline is added) to stderr, secrets hidden.
pub fn stderr(line: &str) {
    sink(Stream::Err).push(line);
}

/// Writes `line` (a newline is added) to stdout, secrets hidden.
pub fn stdout(line: &str) {
    sink(Stream::Out).push(line);
}

/// The run's secrets, hidden from every line: set once, as the run starts. The streams are
/// the process's, so what they must never show is kept with them.
static SECRETS: OnceLock<Arc<Secrets>> = OnceLock::new();

/// Hides `secrets` (and whatever they learn later) from every line from now on.
pub fn hide(secrets: Arc<Secrets>) {
    let _ = SECRETS.set(secrets);
}

/// `line` as it may be written: the run's secrets and whatever looks like one hidden.
fn hidden(line: &str) -> String {
    match SECRETS.get() {
        Some(secrets) => secrets.hide(line),
        None => crate::secrets::hide_by_shape(line),
    }
}

/// Waits, at most briefly, until what was queued is written: before exit or exec. Lines still
/// queued then are given up, and a last note on stderr says how many.
pub fn flush() {
    let started = Instant::now();
    let mut waited = FLUSH_WITHIN;
    for sink in SINKS.iter().filter_map(|sink| sink.get()) {
        let Some(queue) = &sink.queue else { continue };
        let (done, written) = sync_channel(1);
        if queue.send(Message::Flush(done)).is_err() {
            continue;
        }
        loop {
            let wait = match sink.has_room() {
                true => FLUSH_AT_MOST,
                false => FLUSH_WITHIN,
            };
            let left = (started + wait).saturating_duration_since(Instant::now());
            if left.is_zero() {
                waited = wait;
                break;
            }
            match written.recv_timeout(left.min(Duration::from_millis(20))) {
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
                _ => break,
            }
        }
    }
    let lost: Vec<(Stream, u64)> = SINKS
        .iter()
        .filter_map(|sink| sink.get())
        .map(|sink| (sink.stream, sink.give_up()))
        .filter(|&(_, lost)| lost > 0)
        .collect();
    if lost.is_empty() {
        return;
    }
    let notes: String = lost
        .iter()
        .map(|(stream, lost)| {
            let name = stream.name();
            let within = waited.as_millis();
            note(&format!(
                "{lost} lines not written: {name} did not take them within {within}ms of exit"
            ))
        })
        .collect();
    // The writer has stopped, so the note cannot land inside a line; it goes in the room the
    // writer left in a pipe, and is skipped rather than waited for when there is none.
    let Some(pen) = pen(&sink(Stream::Err).pen) else {
        return;
    };
    let prefix = if pen.mid_line { "\n" } else { "" };
    if writable_now(Stream::Err.fd()) {
        let _ = raw(Stream::Err).write(format!("{prefix}{notes}").as_bytes());
    }
}

/// The pen, unless a write holds it for more than a moment.
fn pen(pen: &Mutex<Pen>) -> Option<std::sync::MutexGuard<'_, Pen>> {
    for _ in 0..20 {
        match pen.try_lock() {
            Ok(pen) => return Some(pen),
            Err(std::sync::TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(1))
            }
        }
    }
    None
}

/// A note of readygate's own about its output, as a whole line: text, or a JSON line shaped
/// as the log lines are.
fn note(text: &str) -> String {
    match NOTES.get() {
        Some(shape) => format!("{}\n", shape(text)),
        None => format!("readygate: {text}\n"),
    }
}

/// How readygate's own notes are shaped when not as text: set once, when the log's format is.
static NOTES: OnceLock<fn(&str) -> String> = OnceLock::new();

/// Shapes readygate's own notes about its output as the log lines are (`--log-format json`).
pub fn notes_as(shape: fn(&str) -> String) {
    let _ = NOTES.set(shape);
}

/// A `tracing` writer: the formatter writes one event into it, and it is queued when dropped.
#[derive(Default)]
pub struct LogLine(Vec<u8>);

impl Write for LogLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let line = text.strip_suffix('\n').unwrap_or(&text);
        if !line.is_empty() {
            stderr(line);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stream {
    Out = 0,
    Err = 1,
}

/// std's handles, kept for their descriptors: std keeps fds 1 and 2 open (on `/dev/null` when
/// readygate was started without them), so they can be lent for the whole run.
static STDOUT: LazyLock<Stdout> = LazyLock::new(std::io::stdout);
static STDERR: LazyLock<Stderr> = LazyLock::new(std::io::stderr);

impl Stream {
    fn fd(self) -> BorrowedFd<'static> {
        match self {
            Stream::Out => STDOUT.as_fd(),
            Stream::Err => STDERR.as_fd(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Stream::Out => "stdout",
            Stream::Err => "stderr",
        }
    }
}

static SINKS: [OnceLock<Sink>; 2] = [OnceLock::new(), OnceLock::new()];

fn sink(stream: Stream) -> &'static Sink {
    SINKS[stream as usize].get_or_init(|| Sink::start(stream))
}

enum Message {
    Line(Vec<u8>),
    /// Answered once every line sent before it is written.
    Flush(SyncSender<()>),
}

/// One stream's queue to the thread that empties it.
struct Sink {
    stream: Stream,
    /// `None` when no writer thread could be started (a tiny `ulimit -u`): lines are written
    /// directly, as a last resort, rather than lost.
    queue: Option<Sender<Message>>,
    /// Bytes queued and not yet taken by the writer.
    bytes: AtomicUsize,
    /// Lines dropped since the last note about it.
    dropped: AtomicU64,
    /// Lines queued, and lines wholly written, since the start: the difference is in flight.
    queued: AtomicU64,
    written: AtomicU64,
    /// Held for each write, so that exit's note never lands inside a line.
    pen: Mutex<Pen>,
}

/// What exit needs to know of the writes so far.
#[derive(Default)]
struct Pen {
    /// Exit gave up on the lines still queued: the writer stops.
    closed: bool,
    /// The last write ended inside a line.
    mid_line: bool,
    /// Lines in flight already said lost.
    reported: u64,
    /// Bytes in a pipe's last page, as readygate's own writes filled it.
    tail: usize,
}

impl Sink {
    fn start(stream: Stream) -> Sink {
        let (queue, lines) = channel();
        let started = std::thread::Builder::new()
            .name("readygate-output".into())
            .spawn(move || write_all(stream, lines));
        Sink::new(stream, started.ok().map(|_| queue))
    }

    fn new(stream: Stream, queue: Option<Sender<Message>>) -> Sink {
        Sink {
            stream,
            queue,
            bytes: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            queued: AtomicU64::new(0),
            written: AtomicU64::new(0),
            pen: Mutex::default(),
        }
    }

    /// Never blocks: sending wakes the writer only when it is waiting for lines.
    fn push(&self, line: &str) {
        let mut bytes = hidden(&cut(line)).into_bytes();
        bytes.push(b'\n');
        let Some(queue) = &self.queue else {
            let _ = raw(self.stream).write_all(&bytes);
            return;
        };
        if self.bytes.fetch_add(bytes.len(), Relaxed) + bytes.len() > QUEUE_BYTES {
            self.bytes.fetch_sub(bytes.len(), Relaxed);
            self.dropped.fetch_add(1, Relaxed);
            return;
        }
        self.queued.fetch_add(newlines(&bytes), Relaxed);
        let _ = queue.send(Message::Line(bytes));
    }

    /// Whether the stream could take more now: a pipe with room beyond the reserve (its reader
    /// keeps up), or any other stream that polls writable.
    fn has_room(&self) -> bool {
        let fd = self.stream.fd();
        match pipe_capacity(fd) {
            Some(capacity) => unread(fd) + 2 * PIPE_RESERVE <= capacity,
            None => writable_now(fd),
        }
    }

    /// Stops the writer and counts the lines it has not written (or that were dropped), once.
    /// A writer blocked inside a write (a stopped terminal, a socket) keeps the pen: then
    /// nothing can be said, and nothing is waited for.
    fn give_up(&self) -> u64 {
        let Some(mut pen) = pen(&self.pen) else {
            return 0;
        };
        let unwritten = (self.queued.load(Relaxed)).saturating_sub(self.written.load(Relaxed));
        // Only a stream that is behind is given up on: one that kept up goes on (a COMMAND
        // that cannot be exec'd is still said).
        pen.closed |= unwritten > 0;
        let new = unwritten.saturating_sub(pen.reported) + self.dropped.swap(0, Relaxed);
        pen.reported = pen.reported.max(unwritten);
        new
    }

    /// Writes `lines` (whole lines) in order, blocking; `false` once exit gave up on them. Into
    /// a pipe, only what leaves [`PIPE_RESERVE`] free, whole lines at a time.
    fn write(&self, mut lines: &[u8], pipe: Option<usize>) -> bool {
        let mut out = raw(self.stream);
        while !lines.is_empty() {
            let mut pen = self.pen.lock().unwrap_or_else(|e| e.into_inner());
            if pen.closed {
                return false;
            }
            let take = match pipe {
                None => lines.len(),
                Some(capacity) => {
                    let unread = unread(self.stream.fd());
                    if unread == 0 {
                        pen.tail = 0;
                    }
                    let room = capacity.saturating_sub(unread + PIPE_RESERVE);
                    let whole = lines[..room.min(lines.len())]
                        .iter()
                        .rposition(|&b| b == b'\n');
                    whole.map_or(0, |at| at + 1)
                }
            };
            if take == 0 {
                drop(pen);
                wait_for_room(self.stream.fd());
                continue;
            }
            let mut chunk = &lines[..take];
            while !chunk.is_empty() {
                // Into a pipe, the first piece fills the last page exactly: pages stay full,
                // and the reserve counted in bytes is there in pages.
                let piece = match (pipe, pen.tail) {
                    (Some(_), tail) if tail > 0 => chunk.len().min(PAGE - tail),
                    _ => chunk.len(),
                };
                match out.write(&chunk[..piece]) {
                    Ok(n) if n > 0 => {
                        self.written.fetch_add(newlines(&chunk[..n]), Relaxed);
                        pen.mid_line = chunk[n - 1] != b'\n';
                        pen.tail = (pen.tail + n) % PAGE;
                        chunk = &chunk[n..];
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // The reader is gone: the rest is lost, and counted so at exit.
                    _ => return true,
                }
            }
            lines = &lines[take..];
        }
        true
    }
}

/// `line` cut to [`MAX_LINE`] bytes (at characters), saying how much was cut: its start and
/// its end are kept, since what a line says of the text inside it often comes last
/// (`invalid value '…' for '--timeout': out of range`).
fn cut(line: &str) -> std::borrow::Cow<'_, str> {
    if line.len() <= MAX_LINE {
        return line.into();
    }
    let head = crate::text::head(line, MAX_LINE * 3 / 4);
    let tail = crate::text::tail(line, MAX_LINE / 4 - 64);
    let cut = line.len() - head.len() - tail.len();
    format!("{head} … ({cut} bytes cut) … {tail}").into()
}

fn newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').count() as u64
}

/// The stream itself, unbuffered, never closed: writes go straight to its descriptor, past
/// std's buffer.
fn raw(stream: Stream) -> Raw {
    Raw(stream.fd())
}

struct Raw(BorrowedFd<'static>);

impl Write for Raw {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        Ok(rustix::io::write(self.0, bytes)?)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The capacity of `fd` if it is a pipe (or FIFO), where a writer can see how full it is.
fn pipe_capacity(fd: BorrowedFd) -> Option<usize> {
    let stat = rustix::fs::fstat(fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::Fifo {
        return None;
    }
    let capacity = rustix::pipe::fcntl_getpipe_size(fd).ok()?;
    Some(capacity).filter(|&c| c > PIPE_RESERVE)
}

/// Bytes in the pipe `fd` not read yet.
fn unread(fd: BorrowedFd) -> usize {
    let unread = rustix::io::ioctl_fionread(fd).unwrap_or(0);
    usize::try_from(unread).unwrap_or(0)
}

/// Waits a little for the reader to take some of a pipe: a page frees as it reads, and the
/// room past the reserve follows.
fn wait_for_room(fd: BorrowedFd) {
    if poll_out(fd, 20_000_000).is_some() {
        // Writable but short of the reserve: the reader is slow; do not spin.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a write of a page or less to `fd` would not block now.
fn writable_now(fd: BorrowedFd) -> bool {
    poll_out(fd, 0).is_some_and(|events| events.contains(rustix::event::PollFlags::OUT))
}

/// Polls `fd` for writing for up to `nanoseconds`: its events, if any came.
fn poll_out(fd: BorrowedFd, nanoseconds: i64) -> Option<rustix::event::PollFlags> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(&fd, PollFlags::OUT)];
    let within = Timespec {
        tv_sec: 0,
        tv_nsec: nanoseconds,
    };
    (poll(&mut fds, Some(&within)).ok()? > 0).then(|| fds[0].revents())
}

/// The writer thread: blocking writes, in order. It takes every queued line at once, so a
/// burst (500 targets ready together) costs one wake-up and one write, not one of each per line.
fn write_all(stream: Stream, queue: Receiver<Message>) {
    let sink = sink(stream);
    let pipe = pipe_capacity(stream.fd());
    while let Ok(first) = queue.recv() {
        let (mut lines, mut flushes) = (Vec::new(), Vec::new());
        for message in std::iter::once(first).chain(queue.try_iter()) {
            match message {
                Message::Line(line) => lines.extend(line),
                Message::Flush(done) => flushes.push(done),
            }
        }
        sink.bytes.fetch_sub(lines.len(), Relaxed);
        let dropped = sink.dropped.swap(0, Relaxed);
        if dropped > 0 {
            let full = QUEUE_BYTES >> 20;
            let name = stream.name();
            let text = format!(
                "{dropped} lines dropped: {full} MiB of lines was already waiting to be written to {name}"
            );
            let text = note(&text);
            sink_note(&text);
        }
        if !sink.write(&lines, pipe) {
            return;
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// Queues a note (a whole line, newline included) on stderr.
fn sink_note(text: &str) {
    stderr(text.strip_suffix('\n').unwrap_or(text));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_and_a_long_line_is_cut() {
        let (queue, lines) = channel();
        let sink = Sink::new(Stream::Err, Some(queue));
        let line = "x".repeat(MAX_LINE - 1);
        for _ in 0..(QUEUE_BYTES / MAX_LINE + 5) {
            sink.push(&line);
        }
        assert_eq!(lines.try_iter().count(), QUEUE_BYTES / MAX_LINE);
        assert_eq!(sink.dropped.load(Relaxed), 5);
        let (queue, lines) = channel();
        let sink = Sink::new(Stream::Err, Some(queue));
        sink.push(&"é".repeat(QUEUE_BYTES));
        let Ok(Message::Line(line)) = lines.try_recv() else {
            panic!("a long line was not queued");
        };
        let line = String::from_utf8(line).unwrap();
        assert!(line.len() <= MAX_LINE, "{}", line.len());
        let cut = 2 * QUEUE_BYTES - MAX_LINE + 64;
        let marker = format!("é … ({cut} bytes cut) … é");
        assert!(line.contains(&marker), "{}", &line[MAX_LINE * 3 / 4 - 40..]);
        let (queue, lines) = channel();
        Sink::new(Stream::Err, Some(queue)).push("http://u:pw@h/");
        let Ok(Message::Line(line)) = lines.try_recv() else {
            panic!("nothing queued");
        };
        assert_eq!(line, b"http://u:***@h/\n");
    }
}
