//! readygate-cluster: readygate's cluster-side commands (`inject`, `webhook`), a binary of its
//! own so that the one every pod carries stays small; the program is the library's
//! [`readygate::cluster`].

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(readygate::cluster::run())
}
