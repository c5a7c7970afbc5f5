//! The one reader of input files (study and personality files, dbench load
//! files, size profiles, hostfiles, imports): a regular file of bounded size
//! and line length, or it is refused before it costs memory or time.
//!
//! - Anything but a regular file (a device such as /dev/zero, a FIFO, a
//!   socket, a folder) is refused from its metadata, before it is opened:
//!   opening a FIFO would wait for a writer. The file is then opened
//!   non-blocking and looked at again, so one swapped in between is refused
//!   too.
//! - A file larger than its kind's bound (a 10 GiB sparse file) is refused
//!   unread; one that grows while it is read is refused at the bound.
//! - Binary data (a NUL byte, which none of these text formats holds) is
//!   refused with its offset, and what it looks like where that is known
//!   (gzip, an SQLite database, an executable).
//! - A line longer than its kind's bound is refused as soon as it is seen:
//!   a single 100 MB line costs at most the bound in memory.
//!
//! The bounds of each kind are [`Input`] constants here, in one place.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// What an input file is and the bounds it is read within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    /// What the file is, for messages: "study file".
    pub what: &'static str,
    /// Largest file accepted, in bytes.
    pub max_bytes: u64,
    /// Longest line accepted, in bytes (None: only `max_bytes` bounds it).
    pub max_line: Option<u64>,
    /// The size bound's name in messages: "the import bound" (`... more than the import bound of 256m`).
    pub bound: &'static str,
    /// How the user raises the bound, where a flag does ("raise --max-input-size").
    pub raise: Option<&'static str>,
    /// What to do instead with a stream (a FIFO, a character device), where there is a way.
    pub stream: Option<&'static str>,
}

impl Input {
    /// A study file (TOML): a few hundred lines at most.
    pub const STUDY: Input = Input {
        what: "study file",
        max_bytes: MIB,
        max_line: Some(64 * KIB),
        bound: "bound of a study file",
        raise: None,
        stream: None,
    };
    /// A personality file (TOML): smaller still than a study.
    pub const PERSONALITY: Input = Input {
        what: "personality file",
        max_bytes: MIB,
        max_line: Some(64 * KIB),
        bound: "bound of a personality file",
        raise: None,
        stream: None,
    };
    /// A dbench load file: dbench's client.txt is 26 MB; traces run longer, lines stay short.
    pub const DBENCH_LOAD_FILE: Input = Input {
        what: "dbench load file",
        max_bytes: GIB,
        max_line: Some(64 * KIB),
        bound: "bound of a load file",
        raise: None,
        stream: None,
    };
    /// A size profile (`scan --save-profile`): one line per power-of-two class, some 70 lines.
    pub const PROFILE: Input = Input {
        what: "size profile",
        max_bytes: 16 * MIB,
        max_line: Some(MIB),
        bound: "bound of a size profile",
        raise: None,
        stream: None,
    };
    /// An MPI hostfile (`--hosts FILE`): a line per host.
    pub const HOSTFILE: Input = Input {
        what: "hostfile",
        max_bytes: MIB,
        max_line: Some(64 * KIB),
        bound: "bound of a hostfile",
        raise: None,
        stream: None,
    };
    /// mdtest's stonewall status file (`iomatrix mdtest -x`, read back by a run without -C):
    /// one number.
    pub const STONEWALL_STATUS: Input = Input {
        what: "mdtest stonewall status file (one number)",
        max_bytes: 4 * KIB,
        max_line: Some(4 * KIB),
        bound: "bound of a stonewall status file",
        raise: None,
        stream: None,
    };
    /// Another tool's results (`import`): its size bound is the command's `--max-input-size`;
    /// fio, IOzone, bonnie++ and Iometer print short lines (fio's JSON is indented).
    pub const IMPORT: Input = Input {
        what: "results file",
        max_bytes: 256 * MIB,
        max_line: Some(16 * MIB),
        bound: "import bound",
        raise: Some("raise --max-input-size"),
        stream: Some("give `-` and feed it on standard input (read up to --max-input-size)"),
    };
}

/// Why an input file was not read: names the file, the problem and the fix.
/// Always the user's to fix (a usage error, exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ReadError {
    /// The whole message: the file, the problem and the fix, as shown to the user.
    pub message: String,
    /// A NUL byte at this offset: binary data.
    pub binary_at: Option<u64>,
}

impl ReadError {
    fn new(message: String) -> ReadError {
        ReadError { message, binary_at: None }
    }
}

impl From<ReadError> for iomatrix_core::UsageError {
    fn from(e: ReadError) -> Self {
        iomatrix_core::UsageError(e.message)
    }
}

/// What a file that is not a regular file is, in words.
pub fn file_type_words(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a folder"
    } else if t.is_char_device() {
        "a device (character)"
    } else if t.is_block_device() {
        "a device (block)"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "not a regular file"
    }
}

/// Reads the input file at `path` whole, within `input`'s bounds.
pub fn read(path: &Path, input: &Input) -> Result<Vec<u8>, ReadError> {
    let shown = path.display();
    let what = input.what;
    let refused_type = |t: std::fs::FileType| {
        let endless = t.is_fifo() || t.is_char_device() || t.is_socket();
        ReadError::new(format!(
            "{shown} is {}, not a {what}: give the path of a regular file{}",
            file_type_words(t),
            match (endless, input.stream) {
                (true, Some(instead)) => format!(" (a stream could be endless: for a stream, {instead})"),
                (true, None) => " (a stream could be endless, and is not read)".to_string(),
                _ => String::new(),
            }
        ))
    };
    // Looked at before opening: opening a FIFO would wait for a writer.
    let meta =
        std::fs::metadata(path).map_err(|e| ReadError::new(format!("{shown}: cannot read it (the {what}): {e}")))?;
    if !meta.is_file() {
        return Err(refused_type(meta.file_type()));
    }
    if meta.len() > input.max_bytes {
        return Err(too_big(&shown.to_string(), Some(meta.len()), input));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32 | rustix::fs::OFlags::NOCTTY.bits() as i32)
        .open(path)
        .map_err(|e| ReadError::new(format!("{shown}: cannot read it (the {what}): {e}")))?;
    // The name may have been pointed elsewhere since it was looked at.
    let opened = file.metadata().map_err(|e| ReadError::new(format!("{shown}: cannot read it (the {what}): {e}")))?;
    if !opened.is_file() {
        return Err(refused_type(opened.file_type()));
    }
    read_stream(file, &shown.to_string(), input, opened.len())
}

/// Reads a stream (standard input) within `input`'s bounds; `expected` bytes are reserved up
/// front (a file's size: it takes its size in memory, not up to twice that as the buffer grows).
pub fn read_stream(mut from: impl Read, shown: &str, input: &Input, expected: u64) -> Result<Vec<u8>, ReadError> {
    let what = input.what;
    let mut bytes = Vec::new();
    let reserve = expected.min(input.max_bytes.saturating_add(1));
    bytes
        .try_reserve_exact(reserve as usize)
        .map_err(|_| ReadError::new(format!("{shown}: not enough memory to read a {what} of {reserve} bytes")))?;
    let mut chunk = vec![0u8; 64 * 1024];
    let mut line = LineCount { number: 1, length: 0 };
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ReadError::new(format!("{shown}: cannot read it (the {what}): {e}"))),
        };
        let part = &chunk[..n];
        if let Some(at) = part.iter().position(|&b| b == 0) {
            let offset = bytes.len() as u64 + at as u64;
            bytes.extend_from_slice(part);
            return Err(ReadError {
                message: format!(
                    "{shown} holds binary data (a NUL byte at offset {offset}), not a {what}{}",
                    looks_like(&bytes)
                        .map(|k| format!(": it looks like {k}"))
                        .unwrap_or_else(|| ": is it the right file?".into())
                ),
                binary_at: Some(offset),
            });
        }
        if let Some(max) = input.max_line {
            line.add(part, max).map_err(|number| {
                ReadError::new(format!(
                    "{shown}: line {number} is longer than a line of a {what} can be ({max} bytes): is it the right \
                     file?"
                ))
            })?;
        }
        if bytes.len() as u64 + n as u64 > input.max_bytes {
            return Err(too_big(shown, None, input));
        }
        bytes.try_reserve(n).map_err(|_| ReadError::new(format!("{shown}: not enough memory to read it")))?;
        bytes.extend_from_slice(part);
    }
    Ok(bytes)
}

/// Reads an input file as UTF-8 text; invalid UTF-8 is refused with its line.
pub fn read_text(path: &Path, input: &Input) -> Result<String, ReadError> {
    let bytes = read(path, input)?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..valid].iter().filter(|&&b| b == b'\n').count();
        ReadError::new(format!(
            "{}: line {line} is not UTF-8 text (byte offset {valid}), not a {}: is it the right file?",
            path.display(),
            input.what
        ))
    })
}

fn too_big(shown: &str, size: Option<u64>, input: &Input) -> ReadError {
    let size = size.map(|s| format!("{s} bytes, ")).unwrap_or_default();
    ReadError::new(format!(
        "{shown}: {size}more than the {} of {}: is it the right file?{}",
        input.bound,
        iomatrix_core::ByteSize(input.max_bytes),
        input.raise.map(|r| format!(" If it is, {r}")).unwrap_or_default()
    ))
}

/// What binary data looks like, from its first bytes, where that helps the user.
fn looks_like(start: &[u8]) -> Option<&'static str> {
    const KINDS: [(&[u8], &str); 7] = [
        (&[0x1f, 0x8b], "gzip-compressed: uncompress it first (gunzip -k FILE)"),
        (&[0x28, 0xb5, 0x2f, 0xfd], "zstd-compressed: uncompress it first (unzstd FILE)"),
        (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz-compressed: uncompress it first (unxz -k FILE)"),
        (b"BZh", "bzip2-compressed: uncompress it first (bunzip2 -k FILE)"),
        (b"PK\x03\x04", "a zip archive (or an .xlsx workbook)"),
        (b"SQLite format 3\0", "an SQLite database (a results database?)"),
        (b"\x7fELF", "an executable"),
    ];
    KINDS.iter().find(|(magic, _)| start.starts_with(magic)).map(|(_, k)| *k)
}

/// The line being read: its number and its length so far.
struct LineCount {
    number: u64,
    length: u64,
}

impl LineCount {
    /// Counts `part`'s lines; Err(line number) at the first longer than `max`.
    fn add(&mut self, part: &[u8], max: u64) -> Result<(), u64> {
        for piece in part.split_inclusive(|&b| b == b'\n') {
            self.length += piece.len() as u64;
            let ended = piece.last() == Some(&b'\n');
            // The newline itself is not part of the line's length.
            if self.length - u64::from(ended) > max {
                return Err(self.number);
            }
            if ended {
                self.number += 1;
                self.length = 0;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const SMALL: Input = Input {
        what: "test file",
        max_bytes: 1000,
        max_line: Some(10),
        bound: "test bound",
        raise: Some("raise --max"),
        stream: None,
    };

    fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    #[test]
    fn a_text_file_within_bounds_is_read_whole() {
        let f = file(b"one\ntwo is 10\n\nlast");
        assert_eq!(read_text(f.path(), &SMALL).unwrap(), "one\ntwo is 10\n\nlast");
    }

    #[test]
    fn devices_fifos_and_folders_are_refused_unopened() {
        let e = read(Path::new("/dev/zero"), &SMALL).unwrap_err().message;
        assert!(e.contains("/dev/zero is a device (character), not a test file"), "{e}");
        assert!(e.contains("a stream could be endless"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = read(dir.path(), &SMALL).unwrap_err().message;
        assert!(e.contains("is a folder"), "{e}");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o600.into(), 0).unwrap();
        // No writer: opening it would wait forever; it is refused before.
        let e = read(&fifo, &SMALL).unwrap_err().message;
        assert!(e.contains("is a FIFO (named pipe)"), "{e}");
        let e = read(&dir.path().join("missing"), &SMALL).unwrap_err().message;
        assert!(e.ends_with("missing: cannot read it (the test file): No such file or directory (os error 2)"), "{e}");
    }

    #[test]
    fn a_file_too_large_is_refused_unread_and_names_the_flag() {
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(10 << 30).unwrap();
        let e = read(f.path(), &SMALL).unwrap_err().message;
        assert!(e.contains("10737418240 bytes, more than the test bound of 1000"), "{e}");
        assert!(e.ends_with("If it is, raise --max"), "{e}");
        let e = read_stream(&[b'a'; 1001][..], "standard input", &Input { max_line: None, ..SMALL }, 0)
            .unwrap_err()
            .message;
        assert!(e.contains("standard input: more than the test bound of 1000"), "{e}");
    }

    #[test]
    fn binary_data_is_refused_with_its_offset_and_kind() {
        let e = read(file(b"ab\ncd\0ef").path(), &SMALL).unwrap_err();
        assert_eq!(e.binary_at, Some(5));
        assert!(e.message.contains("binary data (a NUL byte at offset 5)"), "{}", e.message);
        let e = read(file(&[0x1f, 0x8b, 8, 0, 1]).path(), &SMALL).unwrap_err().message;
        assert!(e.contains("it looks like gzip-compressed: uncompress it first"), "{e}");
        let e = read(file(b"SQLite format 3\0...").path(), &SMALL).unwrap_err().message;
        assert!(e.contains("an SQLite database"), "{e}");
    }

    #[test]
    fn a_long_line_is_refused_as_soon_as_it_is_seen() {
        let e = read(file(b"short\n0123456789\n0123456789x\n").path(), &SMALL).unwrap_err().message;
        assert!(e.contains("line 3 is longer than a line of a test file can be (10 bytes)"), "{e}");
        // A line exactly at the bound, without its newline, is fine.
        assert!(read(file(b"0123456789").path(), &SMALL).is_ok());
        // A stream of one endless line stops at the line bound, far before the size bound.
        let endless = std::io::repeat(b'x').take(1 << 30);
        let e = read_stream(endless, "stdin", &Input { max_bytes: 1 << 31, ..SMALL }, 0).unwrap_err().message;
        assert!(e.contains("line 1 is longer"), "{e}");
    }

    #[test]
    fn invalid_utf8_is_refused_with_its_line() {
        let e = read_text(file(b"ok\nstill ok\n\xff\xfe").path(), &SMALL).unwrap_err().message;
        assert!(e.contains("line 3 is not UTF-8 text"), "{e}");
    }

    #[test]
    fn lines_are_counted_across_chunks() {
        let mut count = LineCount { number: 1, length: 0 };
        assert_eq!(count.add(b"abc", 5), Ok(()));
        assert_eq!(count.add(b"de\nfgh", 5), Ok(()));
        assert_eq!(count.number, 2);
        assert_eq!(count.add(b"ij\n", 5), Ok(()));
        assert_eq!(count.add(b"123456", 5), Err(3));
    }
}
