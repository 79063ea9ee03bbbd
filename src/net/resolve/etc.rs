//! Reading `/etc/hosts` and `/etc/resolv.conf` so that a hostile or broken one cannot hang or
//! bloat an attempt: as [`crate::regular_file`] reads, at most [`MAX_SIZE`] of it.

use std::path::Path;

/// The most of such a file that is read; real ones are a few kilobytes.
pub const MAX_SIZE: u64 = 4 << 20;

/// The text of the file at `path`, empty when it is missing, not a regular file or not
/// readable (as a C library treats a missing one); bytes past [`MAX_SIZE`] are ignored.
pub fn read(path: &str) -> String {
    match try_read(path) {
        Ok(text) => text,
        Err(why) => {
            tracing::debug!("not reading {path}: {why}");
            String::new()
        }
    }
}

fn try_read(path: &str) -> Result<String, String> {
    let bytes = crate::regular_file::read_head(Path::new(path), MAX_SIZE)
        .map_err(|e| crate::error::describe_io(&e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_only_so_much() {
        let dir = std::env::temp_dir().join(format!("readygate-etc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hosts");
        std::fs::write(&file, "127.0.0.1 localhost\n").unwrap();
        assert_eq!(read(file.to_str().unwrap()), "127.0.0.1 localhost\n");
        let fifo = dir.join("fifo");
        crate::regular_file::make_fifo(&fifo);
        assert_eq!(read(fifo.to_str().unwrap()), "", "a FIFO with no writer");
        assert_eq!(read("/dev/zero"), "");
        assert_eq!(read(dir.to_str().unwrap()), "", "a folder");
        assert_eq!(read(dir.join("missing").to_str().unwrap()), "");
        let big = dir.join("big");
        let line = "10.0.0.1 name\n";
        let copies = (MAX_SIZE as usize) / line.len() + 100;
        std::fs::write(&big, line.repeat(copies)).unwrap();
        assert_eq!(read(big.to_str().unwrap()).len() as u64, MAX_SIZE);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
