//! What the run asks of the system around it: enough file descriptors, a
//! page-cache drop between phases, and errno names for the error counts.

use std::io;

/// The open-file limit (RLIMIT_NOFILE) as found and as left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// Soft limit before [`raise_fd_limit`].
    pub was: u64,
    /// Soft limit now.
    pub now: u64,
    pub hard: u64,
}

impl FdLimit {
    pub fn raised(&self) -> bool {
        self.now > self.was
    }
}

/// Raises the soft open-file limit to the hard limit when it is below
/// `needed`, so many connections do not hit EMFILE needlessly. The hard
/// limit is never exceeded; `now < needed` afterwards means some connections
/// may fail with EMFILE.
pub fn raise_fd_limit(needed: u64) -> io::Result<FdLimit> {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // rlim_t is 64 bits on 64-bit Linux, 32 on some 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    let (was, hard) = (rl.rlim_cur as u64, rl.rlim_max as u64);
    if was >= needed || hard <= was {
        return Ok(FdLimit { was, now: was, hard });
    }
    rl.rlim_cur = rl.rlim_max;
    // SAFETY: setrlimit reads the struct we pass; raising the soft limit up to the hard one is always allowed.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &rl) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(FdLimit { was, now: hard, hard })
}

/// Where the kernel takes page-cache drops.
pub const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// `sync`, then drop the page cache, dentries and inodes (`echo 3 >
/// /proc/sys/vm/drop_caches`), so the next reads come from the storage. Root only.
pub fn drop_caches() -> io::Result<()> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write(DROP_CACHES, "3")
}

/// Whether [`drop_caches`] can work here: the file opens for writing (root,
/// and /proc/sys not read-only). Nothing is dropped.
pub fn can_drop_caches() -> io::Result<()> {
    std::fs::OpenOptions::new().write(true).open(DROP_CACHES).map(drop)
}

/// The symbolic name of an errno (`ENOSPC`), or `errno N` for one not listed.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::EMLINK => "EMLINK",
        libc::EPIPE => "EPIPE",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOLCK => "ENOLCK",
        libc::ENOSYS => "ENOSYS",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ELOOP => "ELOOP",
        libc::ESTALE => "ESTALE",
        libc::EDQUOT => "EDQUOT",
        libc::ENOTCONN => "ENOTCONN",
        libc::ECONNRESET => "ECONNRESET",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ECONNABORTED => "ECONNABORTED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EHOSTDOWN => "EHOSTDOWN",
        libc::EREMOTEIO => "EREMOTEIO",
        libc::EUCLEAN => "EUCLEAN",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::ECANCELED => "ECANCELED",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        _ => return format!("errno {errno}"),
    };
    name.to_string()
}

/// The kind an I/O error is counted under: its errno name; for an error
/// without one (a protocol client's), the errno its kind stands for
/// (`ENOENT`, `ETIMEDOUT`, `ECONNRESET`...), or `other`.
pub fn error_kind(e: &io::Error) -> String {
    use io::ErrorKind as K;
    if let Some(errno) = e.raw_os_error() {
        return errno_name(errno);
    }
    let errno = match e.kind() {
        K::NotFound => libc::ENOENT,
        K::PermissionDenied => libc::EACCES,
        K::AlreadyExists => libc::EEXIST,
        K::StorageFull => libc::ENOSPC,
        K::TimedOut => libc::ETIMEDOUT,
        K::ConnectionRefused => libc::ECONNREFUSED,
        K::ConnectionReset => libc::ECONNRESET,
        K::ConnectionAborted => libc::ECONNABORTED,
        K::NotConnected => libc::ENOTCONN,
        K::BrokenPipe => libc::EPIPE,
        K::WouldBlock => libc::EAGAIN,
        K::Unsupported => libc::EOPNOTSUPP,
        K::DirectoryNotEmpty => libc::ENOTEMPTY,
        K::IsADirectory => libc::EISDIR,
        K::NotADirectory => libc::ENOTDIR,
        K::ResourceBusy => libc::EBUSY,
        K::InvalidInput => libc::EINVAL,
        K::UnexpectedEof => return "unexpected end of file".to_string(),
        _ => return "other".to_string(),
    };
    errno_name(errno)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_names() {
        assert_eq!(errno_name(libc::ENOSPC), "ENOSPC");
        assert_eq!(errno_name(libc::EMFILE), "EMFILE");
        assert_eq!(errno_name(libc::EIO), "EIO");
        assert_eq!(errno_name(4095), "errno 4095");
        assert_eq!(error_kind(&io::Error::from_raw_os_error(libc::EDQUOT)), "EDQUOT");
        assert_eq!(error_kind(&io::Error::other("x")), "other");
        // A protocol client's errors carry a kind, not an errno.
        assert_eq!(error_kind(&io::Error::new(io::ErrorKind::TimedOut, "no answer within 30 s")), "ETIMEDOUT");
        assert_eq!(error_kind(&io::Error::new(io::ErrorKind::StorageFull, "NFS3ERR_NOSPC")), "ENOSPC");
    }

    #[test]
    fn the_fd_limit_is_never_lowered() {
        let limit = raise_fd_limit(16).unwrap();
        assert!(limit.now >= limit.was && limit.now <= limit.hard);
        assert_eq!(raise_fd_limit(16).unwrap().now, limit.now);
    }
}
