use std::fmt;
use std::str::FromStr;

/// How one client issues I/O to a local target. `direct` (O_DIRECT) is a flag
/// on top of a backend, never a backend of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// `read`/`write` on a file position, `lseek` only where the position jumps.
    Sync,
    /// `pread`/`pwrite` at explicit offsets.
    Psync,
    /// The file mapped into memory; I/O is `memcpy`, flush is `msync`.
    Mmap,
    /// Buffered library I/O in user space, as C's stdio (`fwrite`/`fread`).
    Stdio,
    /// Linux io_uring: many requests in flight from one thread.
    #[serde(rename = "io_uring")]
    IoUring,
}

impl BackendKind {
    /// Every backend, in the order help and errors list them.
    pub const ALL: [BackendKind; 5] = [Self::Sync, Self::Psync, Self::Mmap, Self::Stdio, Self::IoUring];

    /// The name the command line takes and runs store (`sync`, `psync`, `mmap`, `stdio`, `io_uring`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Sync => "sync",
            Self::Psync => "psync",
            Self::Mmap => "mmap",
            Self::Stdio => "stdio",
            Self::IoUring => "io_uring",
        }
    }

    /// Whether the backend can open files with O_DIRECT: mmap and user-space
    /// buffering defeat the point of bypassing the page cache.
    pub fn supports_direct(self) -> bool {
        matches!(self, Self::Sync | Self::Psync | Self::IoUring)
    }

    /// Whether the backend keeps many requests in flight (queue depth above 1).
    pub fn is_queued(self) -> bool {
        matches!(self, Self::IoUring)
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("unknown backend '{s}': choose one of sync, psync, mmap, stdio, io_uring"))
    }
}
