//! What went wrong, and where: [`BonnieError`], and [`io_error`], which names
//! the operation, the file and the byte an I/O failure happened at.

use std::io;

/// An I/O failure with what and where, e.g. "putc write of /x/bonnie.dat at
/// byte 1048576: No space left on device (os error 28)".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BonnieError(pub String);

/// "putc write of /x/bonnie.dat at byte 1048576: No space left on device (os error 28)";
/// `place` is a path, or a URL on a server.
pub(crate) fn io_error(what: &str, place: &str, at: Option<u64>, e: &io::Error) -> BonnieError {
    let hint = if e.raw_os_error() == Some(libc::EINVAL) && what.contains("O_DIRECT") {
        " (the file system refuses O_DIRECT; run without -D)"
    } else {
        ""
    };
    match at {
        Some(byte) => BonnieError(format!("{what} of {place} at byte {byte}: {e}{hint}")),
        None => BonnieError(format!("{what} of {place}: {e}{hint}")),
    }
}
