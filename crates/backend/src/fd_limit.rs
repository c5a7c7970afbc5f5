//! Enough file descriptors for a run's connections: every suite whose clients hold many files or
//! sessions open at once raises the open-file limit the same way.

use std::io;

/// The open-file limit (RLIMIT_NOFILE) as found and as left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// Soft limit before [`raise_fd_limit`].
    pub was: u64,
    /// Soft limit now.
    pub now: u64,
    /// The hard limit: how far the soft limit can be raised.
    pub hard: u64,
}

impl FdLimit {
    /// Whether [`raise_fd_limit`] raised the soft limit.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fd_limit_is_never_lowered() {
        let limit = raise_fd_limit(16).unwrap();
        assert!(limit.now >= limit.was && limit.now <= limit.hard);
        assert_eq!(raise_fd_limit(16).unwrap().now, limit.now);
    }
}
