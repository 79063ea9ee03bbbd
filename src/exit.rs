//! The exit statuses of the contract, and the one place that turns an outcome into a status.

/// How a readygate run ended, whatever the command: a wait's result, but also a usage error, a
/// signal or a child's status, which no wait's report holds. `main` maps it to a status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// Ready (`wait`, `probe`), installed (`install`), or a sidecar done its job.
    Ready,
    /// Not ready: the deadline passed or the one probe attempt failed.
    NotReady,
    /// The command line or environment was wrong; the message names the fault.
    Usage(String),
    /// The command line was right but the pod's environment was not (a read-only folder, an
    /// unwritable state file): status 1, with the message naming what failed.
    Failed(String),
    /// `-- COMMAND` exists but could not be executed (126).
    CannotExecute,
    /// `-- COMMAND` was not found (127).
    CommandNotFound,
    /// Stopped by signal N before readiness (128 + N).
    Signal(i32),
    /// A child's own exit status, passed through unchanged (`--on-exit`, `sidecar`).
    Child(u8),
}

impl Exit {
    /// The numeric process status for this outcome.
    pub fn code(&self) -> u8 {
        match self {
            Exit::Ready => 0,
            Exit::NotReady | Exit::Failed(_) => 1,
            Exit::Usage(_) => 2,
            Exit::CannotExecute => 126,
            Exit::CommandNotFound => 127,
            Exit::Signal(n) => (128 + n).clamp(0, 255) as u8,
            Exit::Child(code) => *code,
        }
    }

    /// Says the message of a usage error or failure on stderr, and returns the status.
    pub fn report(self) -> u8 {
        let message = match &self {
            Exit::Usage(message) | Exit::Failed(message) => message.clone(),
            _ => return self.code(),
        };
        let mut fields = crate::log::json::Fields::new("error", &message);
        fields.status = Some(self.code().into());
        crate::log::say(tracing::Level::ERROR, fields);
        self.code()
    }
}
