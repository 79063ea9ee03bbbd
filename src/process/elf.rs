//! The program interpreter an ELF executable names (`PT_INTERP`): a dynamically linked
//! readygate has one and cannot run in an image without it and the C library, which `install`
//! says before it copies such a build into a shared folder.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// `p_type` of the program header that holds the interpreter's path.
const PT_INTERP: u32 = 3;
/// Bounds on what is read, so a damaged file costs nothing: more program headers or a longer
/// path than any linker writes means "not an executable we understand".
const MAX_HEADERS: u64 = 4096;
const MAX_INTERP: u64 = 4096;

/// The interpreter `file` names (`/lib64/ld-linux-x86-64.so.2`), or `None` for a static
/// executable — or for a file that is not ELF or cannot be read, which is left for the copy to
/// report. Reads at offsets, so the file's position is left where it was.
pub fn interpreter(file: &File) -> Option<String> {
    let mut ident = [0u8; 64];
    file.read_exact_at(&mut ident, 0).ok()?;
    if ident[..4] != *b"\x7fELF" {
        return None;
    }
    let wide = match ident[4] {
        1 => false,
        2 => true,
        _ => return None,
    };
    let little = match ident[5] {
        1 => true,
        2 => false,
        _ => return None,
    };
    let number = |bytes: &[u8]| -> u64 {
        let mut value = 0u64;
        for (at, byte) in bytes.iter().enumerate() {
            let shift = if little { at } else { bytes.len() - 1 - at };
            value |= u64::from(*byte) << (8 * shift);
        }
        value
    };
    // e_phoff, e_phentsize, e_phnum: offsets differ between ELF32 and ELF64.
    let (phoff, phentsize, phnum) = if wide {
        (
            number(&ident[32..40]),
            number(&ident[54..56]),
            number(&ident[56..58]),
        )
    } else {
        (
            number(&ident[28..32]),
            number(&ident[42..44]),
            number(&ident[44..46]),
        )
    };
    let least = if wide { 56 } else { 32 };
    if phnum > MAX_HEADERS || phentsize < least {
        return None;
    }
    for index in 0..phnum {
        let mut header = vec![0u8; least as usize];
        let at = phoff.checked_add(index.checked_mul(phentsize)?)?;
        file.read_exact_at(&mut header, at).ok()?;
        if number(&header[0..4]) != u64::from(PT_INTERP) {
            continue;
        }
        let (offset, size) = if wide {
            (number(&header[8..16]), number(&header[32..40]))
        } else {
            (number(&header[4..8]), number(&header[16..20]))
        };
        if size == 0 || size > MAX_INTERP {
            return None;
        }
        let mut path = vec![0u8; size as usize];
        file.read_exact_at(&mut path, offset).ok()?;
        let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
        return Some(String::from_utf8_lossy(&path[..end]).into_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// `bytes` as an open file whose name is already gone.
    fn opened(bytes: &[u8]) -> File {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("readygate-elf-{}-{n}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let file = File::open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }

    /// An ELF64 little-endian file with one program header of `p_type`, holding `interp`.
    fn elf(p_type: u32, interp: &[u8]) -> File {
        let mut bytes = vec![0u8; 64 + 56];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2;
        bytes[5] = 1;
        bytes[32..40].copy_from_slice(&64u64.to_le_bytes());
        bytes[54..56].copy_from_slice(&56u16.to_le_bytes());
        bytes[56..58].copy_from_slice(&1u16.to_le_bytes());
        bytes[64..68].copy_from_slice(&p_type.to_le_bytes());
        bytes[72..80].copy_from_slice(&120u64.to_le_bytes());
        bytes[96..104].copy_from_slice(&(interp.len() as u64).to_le_bytes());
        bytes.extend_from_slice(interp);
        opened(&bytes)
    }

    #[test]
    fn a_pt_interp_header_names_the_interpreter() {
        let file = elf(PT_INTERP, b"/lib/ld-musl-x86_64.so.1\0");
        assert_eq!(
            interpreter(&file).as_deref(),
            Some("/lib/ld-musl-x86_64.so.1")
        );
    }

    #[test]
    fn no_pt_interp_is_static_and_other_files_are_not_judged() {
        // PT_LOAD only: a static executable.
        assert_eq!(interpreter(&elf(1, b"")), None);
        assert_eq!(interpreter(&opened(b"#!/bin/sh\n")), None);
        assert_eq!(interpreter(&opened(b"")), None);
    }

    #[test]
    fn the_test_binary_itself_is_read() {
        // cargo's test binaries are linked dynamically on Linux: they name an interpreter.
        let me = File::open("/proc/self/exe").unwrap();
        let found = interpreter(&me).expect("a dynamically linked test binary");
        assert!(found.starts_with('/') && found.contains("ld"), "{found}");
    }
}
