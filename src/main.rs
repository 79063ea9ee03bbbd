//! readygate: make Kubernetes workloads start in the right order. The binary reads how it was
//! invoked, runs that, and exits with its status; the program is the library (`src/lib.rs`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let invocation = readygate::Invocation::parse();
    ExitCode::from(invocation.run())
}
