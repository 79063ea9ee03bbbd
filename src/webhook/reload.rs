//! The certificate and key read again whenever their folders change: cert-manager (through
//! the kubelet's Secret volume) swaps both files at once by renaming a folder, and an operator
//! may copy them one at a time. A pair that does not read or match (half-way through a copy)
//! is skipped: the one before stays in use until the next change completes it.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use futures_core::Stream;
use inotify::{Inotify, WatchMask};

use crate::net::tls::server_cert::{self, Current};

/// The certificate files and the pair read from them.
pub struct Files {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub current: Arc<Current>,
}

/// Watches the files' folders and replaces the pair on every change, for as long as the task
/// runs; an error means inotify is unavailable (said at start, not fatal to the caller).
pub fn watch(files: Files) -> std::io::Result<impl std::future::Future<Output = ()>> {
    let inotify = Inotify::init()?;
    let mask = WatchMask::CREATE
        | WatchMask::MOVED_TO
        | WatchMask::CLOSE_WRITE
        | WatchMask::DELETE
        | WatchMask::ATTRIB;
    let folders = [folder(&files.cert), folder(&files.key)];
    for dir in &folders {
        inotify.watches().add(dir, mask)?;
    }
    let mut events = inotify.into_event_stream([0u8; 4096])?;
    Ok(async move {
        loop {
            let next = std::future::poll_fn(|cx| Pin::new(&mut events).poll_next(cx)).await;
            match next {
                Some(Ok(_)) => reload(&files),
                Some(Err(e)) => {
                    tracing::warn!(
                        event = "certificate",
                        "no longer watching the certificate: {e}"
                    );
                    return;
                }
                None => return,
            }
        }
    })
}

/// Reads the pair again and presents it if it reads, matches and differs.
fn reload(files: &Files) {
    let flags = ("--tls-cert", "--tls-key");
    match server_cert::read(&files.cert, &files.key, flags) {
        Ok(pair) if pair.cert != files.current.get().cert => {
            files.current.replace(pair);
            tracing::info!(
                event = "certificate",
                "certificate reloaded from {}",
                files.cert.display()
            );
        }
        Ok(_) => {}
        Err(reason) => tracing::debug!(event = "certificate", "not reloaded yet: {reason}"),
    }
}

/// The folder a file is in (`.` for a bare name).
fn folder(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
