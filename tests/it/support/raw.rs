//! Hostile and broken peers on 127.0.0.1: raw TCP servers that misbehave on purpose (accept and
//! never answer, drip, flood, reset), a Unix socket that hangs up at once, and a file that keeps
//! changing shape. Each runs on its own threads and lives until the test process ends.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::events::Stop;

/// What a hostile TCP peer does with each connection it accepts.
pub type Behaviour = fn(TcpStream);

/// A hostile TCP server: accepts every connection and hands it to its behaviour on a thread.
pub struct Peer {
    /// Where it listens.
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl Peer {
    /// Starts a peer on a free loopback port.
    pub fn start(behaviour: Behaviour) -> Peer {
        Peer::start_with(behaviour)
    }

    /// As [`Peer::start`], with a behaviour made for the test (a closure).
    pub fn start_with(behaviour: impl Fn(TcpStream) + Send + Sync + 'static) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind hostile peer");
        let addr = listener.local_addr().expect("local addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let behaviour = Arc::new(behaviour);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                counter.fetch_add(1, Ordering::SeqCst);
                let behaviour = behaviour.clone();
                thread::spawn(move || behaviour(stream));
            }
        });
        Peer { addr, accepted }
    }

    /// `SCHEME://127.0.0.1:PORT` + `path`.
    pub fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://{}{path}", self.addr)
    }

    /// How many connections it has accepted: a test whose peer was never reached proves nothing.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Reads until the end of an HTTP request head (or the peer goes away).
fn read_head(stream: &mut TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 64 * 1024 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
}

/// Reads and discards everything until the client hangs up.
fn drain(stream: &mut TcpStream) {
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
}

/// Accepts, reads whatever comes, never writes a byte: a hung process, or a TLS listener that
/// never finishes its handshake (the ClientHello is read, no ServerHello ever comes).
pub fn silent(mut stream: TcpStream) {
    drain(&mut stream);
}

/// Answers with a valid status line, then drips a header one byte a second, forever.
pub fn drip_headers(mut stream: TcpStream) {
    read_head(&mut stream);
    if stream.write_all(b"HTTP/1.1 200 OK\r\n").is_err() {
        return;
    }
    let header = b"X-Drip: ".iter().chain(b"a".iter().cycle()).copied();
    drip(&mut stream, header, Duration::from_secs(1));
}

/// Writes `bytes` one at a time, each `every` after the last (the peer's pace, the behaviour
/// under test), until the client hangs up.
pub fn drip(stream: &mut TcpStream, bytes: impl IntoIterator<Item = u8>, every: Duration) {
    for byte in bytes {
        thread::sleep(every);
        if stream.write_all(&[byte]).is_err() {
            return;
        }
    }
}

/// Answers 200 with a body that never ends (no length: it would end when the peer closes), as
/// fast as the client reads.
pub fn endless_body(mut stream: TcpStream) {
    read_head(&mut stream);
    let chunk = vec![b'x'; 64 * 1024];
    if stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
        .is_err()
    {
        return;
    }
    while stream.write_all(&chunk).is_ok() {}
}

/// Sends half a response head, then resets the connection (RST, not FIN).
pub fn reset_in_head(mut stream: TcpStream) {
    read_head(&mut stream);
    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Le");
    reset(stream);
}

/// Sends a complete head and part of the promised body, then resets the connection.
pub fn reset_in_body(mut stream: TcpStream) {
    read_head(&mut stream);
    let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\npartial body");
    reset(stream);
}

/// Closes with SO_LINGER 0, so the kernel sends RST and discards unsent data: once what was
/// written has been acknowledged, so the client has it (to read before the reset) whatever
/// the machine's pace.
fn reset(stream: TcpStream) {
    super::wait_until("the peer to acknowledge the partial response", || {
        let mut unacknowledged: libc::c_int = 0;
        // SAFETY: TIOCOUTQ on a valid socket writes one int.
        let asked = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCOUTQ, &mut unacknowledged) };
        asked != 0 || unacknowledged == 0
    });
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket descriptor owned by `stream`, and a correctly sized option value.
    let done = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(done, 0, "SO_LINGER");
    drop(stream);
}

/// Answers with one header whose value is 1 MiB long.
pub fn huge_header(mut stream: TcpStream) {
    read_head(&mut stream);
    let mut response = b"HTTP/1.1 200 OK\r\nX-Huge: ".to_vec();
    response.extend_from_slice(&vec![b'a'; 1 << 20]);
    response.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    let _ = stream.write_all(&response);
    drain(&mut stream);
}

/// Answers with 1 MiB of small headers (tens of thousands of them).
pub fn header_flood(mut stream: TcpStream) {
    read_head(&mut stream);
    let mut response = b"HTTP/1.1 200 OK\r\n".to_vec();
    let mut n = 0;
    while response.len() < 1 << 20 {
        response.extend_from_slice(format!("X-{n}: v\r\n").as_bytes());
        n += 1;
    }
    response.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    let _ = stream.write_all(&response);
    drain(&mut stream);
}

/// Answers with `103 Early Hints` heads, each with 50 `Link` headers, forever and as fast as
/// the client reads: never the real answer.
pub fn informational_forever(mut stream: TcpStream) {
    read_head(&mut stream);
    let mut head = b"HTTP/1.1 103 Early Hints\r\n".to_vec();
    for n in 0..50 {
        head.extend_from_slice(
            format!("Link: </asset-{n}.css>; rel=preload; as=style\r\n").as_bytes(),
        );
    }
    head.extend_from_slice(b"\r\n");
    while stream.write_all(&head).is_ok() {}
}

/// Answers 200 with a promised body of 100 bytes, sends 10 of them, and never the rest.
pub fn stalled_body(mut stream: TcpStream) {
    read_head(&mut stream);
    if stream
        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
        .is_err()
    {
        return;
    }
    drain(&mut stream);
}

/// A Unix socket whose server accepts every connection and closes it at once.
pub struct HangUpSocket {
    /// The socket's path.
    pub path: PathBuf,
    accepted: Arc<AtomicUsize>,
}

impl HangUpSocket {
    /// Listens at `path`.
    pub fn start(path: &Path) -> HangUpSocket {
        let listener = UnixListener::bind(path).expect("bind unix socket");
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                counter.fetch_add(1, Ordering::SeqCst);
                drop(stream);
            }
        });
        HangUpSocket {
            path: path.to_path_buf(),
            accepted,
        }
    }

    /// How many connections it has accepted (and hung up on).
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A path that, until dropped, keeps being replaced (rename over), truncated, turned into a
/// folder and into a FIFO: never holding the content a test waits for.
pub struct ShapeShifter {
    stop: Arc<Stop>,
    changes: Arc<AtomicUsize>,
    thread: Option<thread::JoinHandle<()>>,
}

impl ShapeShifter {
    /// Starts changing `path` (inside a folder the test owns) about every millisecond.
    pub fn start(path: &Path) -> ShapeShifter {
        let stop = Arc::new(Stop::default());
        let changes = Arc::new(AtomicUsize::new(0));
        let (path, told, counter) = (path.to_path_buf(), stop.clone(), changes.clone());
        std::fs::write(&path, "starting").expect("seed file");
        let thread = thread::spawn(move || {
            let staged = path.with_extension("staged");
            let mut step = 0usize;
            loop {
                let _ = match step % 4 {
                    // Replaced: a new file renamed over the old one (or over the FIFO).
                    0 => std::fs::write(&staged, "replaced, not yet")
                        .and_then(|()| std::fs::rename(&staged, &path)),
                    // Truncated while a reader may be half-way through it, then refilled.
                    1 => std::fs::OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .and_then(|mut file| {
                            file.set_len(0)?;
                            file.write_all(&vec![b'.'; 256 * 1024])
                        }),
                    // Turned into a folder.
                    2 => std::fs::remove_file(&path).and_then(|()| std::fs::create_dir(&path)),
                    // Turned into a FIFO nobody writes to: opening it for reading would block.
                    _ => std::fs::remove_dir(&path).and_then(|()| super::make_fifo(&path)),
                };
                step += 1;
                counter.fetch_add(1, Ordering::SeqCst);
                // Its pace, cut short when the test is done with it.
                if !told.pause(Duration::from_millis(1)) {
                    break;
                }
            }
        });
        ShapeShifter {
            stop,
            changes,
            thread: Some(thread),
        }
    }

    /// How many changes it has made so far.
    pub fn changes(&self) -> usize {
        self.changes.load(Ordering::SeqCst)
    }
}

impl Drop for ShapeShifter {
    fn drop(&mut self) {
        self.stop.give();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
