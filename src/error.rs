//! Why a target is not ready, in words a person can act on: the one outcome type of an attempt,
//! from the check that failed (or the engine that cut it) to the report. Only a connect failure
//! keeps its parts, which the report shortens beside its target's name, and a target that can
//! never be ready says so, which the engine acts on; every other reason is its words
//! (`status 503`, `no such host web`, `no answer within 1.0s`, a server's own message).

use std::fmt;
use std::io;
use std::net::SocketAddr;

/// Why one attempt missed its target's goal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No TCP connection: `connection refused to 127.0.0.1:5432 (and 1 other address)`:
    /// [`describe_io`]'s words for the last address tried (`None` where the target's own name
    /// shows it), and how many addresses were tried in all.
    Connect {
        addr: Option<SocketAddr>,
        cause: String,
        tried: usize,
    },
    /// Any other reason, as shown: a status outside `--status`, a body that does not match, a
    /// name that does not resolve, TLS, a local fault, what a server said, what the engine saw
    /// (`no answer within 1.0s`, `still ready`).
    Text(String),
    /// Never going to be ready (a Job that failed): the engine stops trying this target, and
    /// without `--any` ends the wait at once.
    Never(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Connect { addr, cause, tried } => {
                f.write_str(cause)?;
                if let Some(addr) = addr {
                    write!(f, " to {addr}")?;
                }
                match tried {
                    0 | 1 => Ok(()),
                    2 => write!(f, " (and 1 other address)"),
                    n => write!(f, " (and {} other addresses)", n - 1),
                }
            }
            Failure::Text(text) | Failure::Never(text) => f.write_str(text),
        }
    }
}

impl Failure {
    /// An HTTP status outside `--status`: `status 503`.
    pub fn status(status: u16) -> Failure {
        Failure::Text(format!("status {status}"))
    }

    /// The failure as shown next to the target named `name`: a connect failure does not repeat
    /// the one address that name shows (`127.0.0.1:1: connection refused`), but keeps one the
    /// name does not (`localhost:1: connection refused to [::1]:1`).
    pub fn for_target(mut self, name: &str) -> Failure {
        if let Failure::Connect { addr, tried: 1, .. } = &mut self {
            if addr.is_some_and(|addr| name.contains(&addr.to_string())) {
                *addr = None;
            }
        }
        self
    }
}

/// A failure said in words.
impl<T: Into<String>> From<T> for Failure {
    fn from(text: T) -> Failure {
        Failure::Text(text.into())
    }
}

/// An I/O error in a few lower-case words, without the `(os error N)` noise.
pub fn describe_io(err: &io::Error) -> String {
    use io::ErrorKind::*;
    let words = match err.kind() {
        ConnectionRefused => "connection refused",
        ConnectionReset => "connection reset",
        ConnectionAborted => "connection aborted",
        NotFound => "no such file",
        PermissionDenied => "permission denied",
        TimedOut => "timed out",
        AddrNotAvailable => "address not available",
        UnexpectedEof | BrokenPipe => "connection closed",
        _ => {
            let text = err.to_string();
            return match text.split_once(" (os error") {
                Some((words, _)) => words.to_ascii_lowercase(),
                None => text,
            };
        }
    };
    words.to_string()
}

/// An error with its chain of causes in a few words: I/O causes as [`describe_io`] puts them,
/// repeated wording left out.
pub fn describe_error(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = match cause.downcast_ref::<io::Error>() {
            Some(io) => describe_io(io),
            None => cause.to_string(),
        };
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_failures_name_the_address_unless_their_target_shows_it() {
        // target; last address tried; addresses tried; cause; shown beside the target
        for row in [
            "127.0.0.1:1; 127.0.0.1:1; 1; refused; refused",
            "tcp://[::1]:80; [::1]:80; 1; refused; refused",
            "http://127.0.0.1:8080/x; 127.0.0.1:8080; 1; refused; refused",
            // The name does not show the address: it stays.
            "localhost:1; [::1]:1; 1; refused; refused to [::1]:1",
            "http://127.0.0.1/; 127.0.0.1:80; 1; refused; refused to 127.0.0.1:80",
            "localhost:1; [::1]:1; 2; refused; refused to [::1]:1 (and 1 other address)",
            "localhost:1; [::1]:1; 3; unreachable; unreachable to [::1]:1 (and 2 other addresses)",
        ] {
            let [name, addr, tried, cause, shown] = row.split("; ").collect::<Vec<_>>()[..] else {
                panic!("{row}");
            };
            let failure = Failure::Connect {
                addr: Some(addr.parse().unwrap()),
                cause: cause.into(),
                tried: tried.parse().unwrap(),
            };
            assert_eq!(failure.for_target(name).to_string(), shown, "{row}");
        }
        assert_eq!(Failure::status(503).to_string(), "status 503");
    }
}
