//! Every line readygate writes to stderr or stdout passes here: secrets are hidden once for all
//! of them ([`crate::redact::secrets`]), and a reader that stops reading (a full pipe, a
//! stopped terminal) never blocks the engine. Lines go to a writer thread through a channel
//! bounded in bytes; what does not fit is dropped and counted, and exit waits only briefly.

use std::io::Write;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Most bytes queued for one stream; past it lines are dropped (and counted).
const QUEUE_BYTES: usize = 1 << 20;
/// How long exit (or exec) waits for queued lines to be written.
const FLUSH_WITHIN: Duration = Duration::from_millis(200);

/// Writes `line` (a newline is added) to stderr, secrets hidden.
pub fn stderr(line: &str) {
    sink(Stream::Err).push(line);
}

/// Writes `line` (a newline is added) to stdout, secrets hidden.
pub fn stdout(line: &str) {
    sink(Stream::Out).push(line);
}

/// Waits, at most briefly, until what was queued is written: before exit or exec.
pub fn flush() {
    let until = Instant::now() + FLUSH_WITHIN;
    for queue in SINKS.iter().filter_map(|sink| sink.get()?.queue.as_ref()) {
        let (done, written) = sync_channel(1);
        if queue.send(Message::Flush(done)).is_ok() {
            let _ = written.recv_timeout(until.saturating_duration_since(Instant::now()));
        }
    }
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

#[derive(Clone, Copy)]
enum Stream {
    Out = 0,
    Err = 1,
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
        let (bytes, dropped) = (AtomicUsize::new(0), AtomicU64::new(0));
        Sink {
            stream,
            queue,
            bytes,
            dropped,
        }
    }

    /// Never blocks: sending wakes the writer only when it is waiting for lines.
    fn push(&self, line: &str) {
        let mut bytes = crate::redact::secrets(line).into_bytes();
        bytes.push(b'\n');
        let Some(queue) = &self.queue else {
            return write_lines(self.stream, &bytes, 0);
        };
        if self.bytes.fetch_add(bytes.len(), Relaxed) + bytes.len() > QUEUE_BYTES {
            self.bytes.fetch_sub(bytes.len(), Relaxed);
            self.dropped.fetch_add(1, Relaxed);
            return;
        }
        let _ = queue.send(Message::Line(bytes));
    }
}

/// The writer thread: blocking writes, in order; a write that fails drops its lines. It takes
/// every queued line at once, so a burst (500 targets ready together) costs one wake-up and one
/// write, not one of each per line.
fn write_all(stream: Stream, queue: Receiver<Message>) {
    let sink = sink(stream);
    while let Ok(first) = queue.recv() {
        let (mut lines, mut flushes) = (Vec::new(), Vec::new());
        for message in std::iter::once(first).chain(queue.try_iter()) {
            match message {
                Message::Line(line) => lines.extend(line),
                Message::Flush(done) => flushes.push(done),
            }
        }
        sink.bytes.fetch_sub(lines.len(), Relaxed);
        write_lines(stream, &lines, sink.dropped.swap(0, Relaxed));
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// Writes whole lines (blocking), after a note of the `dropped` lines before them, if any.
fn write_lines(stream: Stream, lines: &[u8], dropped: u64) {
    let note = (dropped > 0)
        .then(|| format!("readygate: {dropped} lines dropped: this stream was not being read\n"));
    let note = note.as_deref().unwrap_or_default().as_bytes();
    match stream {
        Stream::Err => {
            let mut out = std::io::stderr().lock();
            let _ = out.write_all(note).and_then(|()| out.write_all(lines));
        }
        Stream::Out => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(lines).and_then(|()| out.flush());
            let _ = std::io::stderr().write_all(note);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts() {
        let (queue, lines) = channel();
        let sink = Sink::new(Stream::Err, Some(queue));
        let big = "x".repeat(QUEUE_BYTES / 3);
        sink.push(&big);
        sink.push(&big);
        sink.push(&big);
        assert_eq!(lines.try_iter().count(), 2);
        assert_eq!(sink.dropped.load(Relaxed), 1);
        let (queue, lines) = channel();
        Sink::new(Stream::Err, Some(queue)).push("http://u:pw@h/");
        let Ok(Message::Line(line)) = lines.try_recv() else {
            panic!("nothing queued");
        };
        assert_eq!(line, b"http://u:***@h/\n");
    }
}
