//! A raw HTTP/2 client over cleartext TCP (h2c with prior knowledge, as gRPC clients speak):
//! frames written by hand, so a test can misbehave exactly as it means to (streams left open,
//! bodies that never end, resets, SETTINGS, PING and CONTINUATION floods) and also ask a
//! well-behaved gRPC health check and read its answer.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The connection preface every HTTP/2 client sends first.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame types used.
pub const DATA: u8 = 0;
pub const HEADERS: u8 = 1;
pub const RST_STREAM: u8 = 3;
pub const SETTINGS: u8 = 4;
pub const PING: u8 = 6;
pub const GOAWAY: u8 = 7;
pub const CONTINUATION: u8 = 9;

/// Frame flags used.
pub const END_STREAM: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

/// `HealthCheckResponse { status: SERVING }`, framed as gRPC sends it.
pub const SERVING: [u8; 7] = [0, 0, 0, 0, 2, 0x08, 0x01];

/// `HealthCheckRequest { service: "" }`, framed: an empty message.
pub const EMPTY_REQUEST: [u8; 5] = [0; 5];

/// One frame: its 9-byte header, then `payload`.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let length = payload.len() as u32;
    let mut out = length.to_be_bytes()[1..].to_vec();
    out.extend([kind, flags]);
    out.extend((stream & 0x7fff_ffff).to_be_bytes());
    out.extend(payload);
    out
}

/// An HPACK integer with an `n`-bit prefix, the prefix's other bits `first`.
fn integer(out: &mut Vec<u8>, first: u8, n: u32, value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

/// A header block of literal fields, never indexed and never Huffman-coded: plain to read.
pub fn header_block(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in fields {
        out.push(0x00);
        integer(&mut out, 0, 7, name.len());
        out.extend(name.as_bytes());
        integer(&mut out, 0, 7, value.len());
        out.extend(value.as_bytes());
    }
    out
}

/// The header block of a gRPC health check.
pub fn grpc_check_headers() -> Vec<u8> {
    header_block(&[
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/grpc.health.v1.Health/Check"),
        (":authority", "readygate"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    ])
}

/// The header block of `GET PATH`.
pub fn get_headers(path: &str) -> Vec<u8> {
    header_block(&[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", path),
        (":authority", "readygate"),
    ])
}

/// A connection that has sent the preface and an empty SETTINGS frame.
pub struct H2c {
    pub stream: TcpStream,
    /// The next client stream id (odd).
    next: u32,
}

impl H2c {
    /// Connects to `addr` and sends the preface; `None` if the connection is refused.
    pub fn connect(addr: SocketAddr) -> Option<H2c> {
        let stream = TcpStream::connect(addr).ok()?;
        stream.set_nodelay(true).ok()?;
        H2c::start(stream)
    }

    /// Sends the preface on `stream`, connected by the caller (from an address of its own).
    pub fn start(mut stream: TcpStream) -> Option<H2c> {
        let mut start = PREFACE.to_vec();
        start.extend(frame(SETTINGS, 0, 0, &[]));
        stream.write_all(&start).ok()?;
        Some(H2c { stream, next: 1 })
    }

    /// A new stream id.
    pub fn next_stream(&mut self) -> u32 {
        let id = self.next;
        self.next += 2;
        id
    }

    /// Writes `bytes`; false once the server has closed the connection.
    pub fn send(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }

    /// Asks the gRPC health check of service "" and reads until its answer's message came:
    /// true for `SERVING` within `limit`.
    pub fn check_serving(&mut self, limit: Duration) -> bool {
        let id = self.next_stream();
        let mut call = frame(HEADERS, END_HEADERS, id, &grpc_check_headers());
        call.extend(frame(DATA, END_STREAM, id, &EMPTY_REQUEST));
        if !self.send(&call) {
            return false;
        }
        let by = Instant::now() + limit;
        while let Some((kind, _, on, payload)) = self.read_frame(by) {
            if kind == DATA && on == id {
                return payload == SERVING;
            }
            if kind == RST_STREAM && on == id || kind == GOAWAY {
                return false;
            }
        }
        false
    }

    /// The next frame from the server (type, flags, stream, payload), before `by`.
    pub fn read_frame(&mut self, by: Instant) -> Option<(u8, u8, u32, Vec<u8>)> {
        let mut head = [0u8; 9];
        self.read_exact_by(&mut head, by)?;
        let length = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; length];
        self.read_exact_by(&mut payload, by)?;
        Some((head[3], head[4], stream, payload))
    }

    fn read_exact_by(&mut self, buf: &mut [u8], by: Instant) -> Option<()> {
        let mut filled = 0;
        while filled < buf.len() {
            let left = by.checked_duration_since(Instant::now())?;
            self.stream
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .ok()?;
            match self.stream.read(&mut buf[filled..]) {
                Ok(0) | Err(_) => return None,
                Ok(n) => filled += n,
            }
        }
        Some(())
    }
}
