//! Test support: running the real binary, and servers on 127.0.0.1 to point it at.

#![allow(dead_code)]

pub mod certs;
pub mod daemon;
pub mod deps;
pub mod dns;
pub mod emulated;
pub mod etcd;
pub mod events;
pub mod grpc;
pub mod h2c;
pub mod held;
pub mod http;
pub mod hung_mount;
pub mod json_patch;
pub mod kafka;
pub mod kube;
pub mod mariadb;
pub mod measure;
pub mod nginx;
pub mod pipe;
pub mod pod;
pub mod postgres;
pub mod rabbitmq;
pub mod raw;
pub mod redis;
pub mod run;
pub mod running;
pub mod scraped;
pub mod served;
pub mod shared;
pub mod small_servers;
pub mod trailerless;
pub mod zookeeper;

pub use deps::require;
pub use emulated::skip_under_qemu;
pub use events::{wait_for_path, wait_until};
pub use run::{readygate, readygate_cluster};
pub use running::Running;

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

/// A second, for timing bounds written in whole seconds.
pub const SECOND: Duration = Duration::from_secs(1);

/// `n` milliseconds, for timing bounds and `--timeout` values written in milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A loopback port that was free a moment ago, taken below the kernel's ephemeral range: a
/// port released there could be handed to another test's `bind(:0)` or to a connection's own
/// end, and a connect to it would then succeed.
pub fn free_port() -> u16 {
    let first_ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let low = first_ephemeral.saturating_sub(12_000).max(1024);
    for _ in 0..1000 {
        let port = fastrand::u16(low..first_ephemeral);
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {low}..{first_ephemeral}");
}

/// A loopback address on which nothing listens (connections are refused).
pub fn closed_addr() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], free_port()))
}

/// Makes a FIFO nobody writes to at `path`: a file target or option file that must not hang.
pub fn make_fifo(path: &std::path::Path) -> std::io::Result<()> {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())?;
    // SAFETY: a NUL-terminated path.
    match unsafe { libc::mkfifo(name.as_ptr(), 0o600) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Copies `from` to `to` with `cp`, a child process: a file this multi-threaded test process
/// held open for writing could be inherited by another test's fork and fail exec (ETXTBSY).
pub fn copy_executable(from: &std::path::Path, to: &std::path::Path) {
    let status = std::process::Command::new("cp")
        .arg(from)
        .arg(to)
        .status()
        .expect("run cp");
    assert!(status.success(), "cp {from:?} {to:?}: {status}");
}

/// Writes an executable script at `path`, through `cp` for the reason above.
pub fn write_executable(path: &std::path::Path, text: &str) {
    let source = std::env::temp_dir().join(format!(
        "readygate-script-{}-{}",
        std::process::id(),
        path.display().to_string().replace('/', "_")
    ));
    std::fs::write(&source, text).expect("write script source");
    std::fs::set_permissions(&source, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod script source");
    copy_executable(&source, path);
    let _ = std::fs::remove_file(&source);
}

/// A fresh temporary folder, removed when dropped.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    /// Creates a unique folder under the system's temp dir.
    pub fn new() -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "readygate-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path)
    }

    /// A path inside the folder.
    pub fn join(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Serves `listener` from a thread of its own (a current-thread runtime, so a test's own code
/// stays synchronous): each accepted connection goes to `serve` on a task of its own. The thread
/// ends with the test binary.
pub fn serve_on_thread<F, Fut>(listener: TcpListener, serve: F)
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(serve(stream));
            }
        });
    });
}
