//! Every line readygate writes to stderr or stdout passes here: secrets are hidden once for all
//! of them ([`crate::redact::secrets`]), and a reader that stops reading (a full pipe, a
//! stopped terminal) never blocks the engine. Lines are queued, bounded, for a writer thread;
//! what does not fit is dropped and counted, and exit waits only briefly for the queue.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Condvar, Mutex, OnceLock};
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
    for stream in [Stream::Out, Stream::Err] {
        if let Some(sink) = SINKS[stream as usize].get() {
            sink.drain(until);
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

/// One stream's queue and the thread that empties it.
struct Sink {
    stream: Stream,
    state: Mutex<Queue>,
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
    /// Lines dropped since the last note about it.
    dropped: u64,
    /// The thread is writing a line taken off the queue.
    writing: bool,
    /// No writer thread could be started (a tiny `ulimit -u`): lines are written directly,
    /// as a last resort, rather than lost.
    dead: bool,
}

impl Sink {
    fn start(stream: Stream) -> Sink {
        let sink = Sink {
            stream,
            state: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        };
        let started = std::thread::Builder::new()
            .name("readygate-output".into())
            .spawn(move || write_all(stream));
        if started.is_err() {
            sink.queue().dead = true;
        }
        sink
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, line: &str) {
        let mut bytes = crate::redact::secrets(line).into_bytes();
        bytes.push(b'\n');
        let mut queue = self.queue();
        if queue.dead {
            drop(queue);
            write_line(self.stream, &bytes, 0);
            return;
        }
        if queue.bytes + bytes.len() > QUEUE_BYTES {
            queue.dropped += 1;
            return;
        }
        // The writer looks at the queue again after every write, so it needs waking only when
        // it may be waiting: the queue was empty and nothing was being written.
        let idle = queue.lines.is_empty() && !queue.writing;
        queue.bytes += bytes.len();
        queue.lines.push_back(bytes);
        if idle {
            self.changed.notify_all();
        }
    }

    fn drain(&self, until: Instant) {
        let mut queue = self.queue();
        while !queue.dead && (queue.writing || !queue.lines.is_empty()) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            queue = match self.changed.wait_timeout(queue, left) {
                Ok((queue, _)) => queue,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

/// The writer thread: blocking writes, in order; a write that fails drops its lines. It takes
/// every queued line at once, so a burst (500 targets ready together) costs one wake-up and one
/// write, not one of each per line.
fn write_all(stream: Stream) {
    let sink = sink(stream);
    loop {
        let (lines, dropped) = {
            let mut queue = sink.queue();
            while queue.lines.is_empty() {
                queue = match sink.changed.wait(queue) {
                    Ok(queue) => queue,
                    Err(poisoned) => poisoned.into_inner(),
                };
            }
            let lines: Vec<u8> = queue.lines.drain(..).flatten().collect();
            queue.bytes = 0;
            queue.writing = true;
            (lines, std::mem::take(&mut queue.dropped))
        };
        write_line(stream, &lines, dropped);
        sink.queue().writing = false;
        sink.changed.notify_all();
    }
}

/// Writes whole lines (blocking), after a note of the `dropped` lines before them, if any.
fn write_line(stream: Stream, line: &[u8], dropped: u64) {
    let note = (dropped > 0)
        .then(|| format!("readygate: {dropped} lines dropped: this stream was not being read\n"));
    match stream {
        Stream::Err => {
            let mut out = std::io::stderr().lock();
            if let Some(note) = note {
                let _ = out.write_all(note.as_bytes());
            }
            let _ = out.write_all(line);
        }
        Stream::Out => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line).and_then(|()| out.flush());
            if let Some(note) = note {
                let _ = std::io::stderr().write_all(note.as_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts() {
        let sink = Sink {
            stream: Stream::Err,
            state: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        };
        let big = "x".repeat(QUEUE_BYTES / 3);
        sink.push(&big);
        sink.push(&big);
        sink.push(&big);
        let queue = sink.queue();
        assert_eq!(queue.lines.len(), 2);
        assert_eq!(queue.dropped, 1);
        drop(queue);
        let small = Sink {
            stream: Stream::Err,
            state: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        };
        small.push("http://u:pw@h/");
        assert_eq!(small.queue().lines[0], b"http://u:***@h/\n");
    }
}
