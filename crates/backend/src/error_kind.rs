//! An I/O error named by the errno it stands for, as every suite counts its failed operations
//! ("ENOSPC", "ETIMEDOUT"): the file-server load, the personalities and the dbench replay alike.

use std::io;

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
}
