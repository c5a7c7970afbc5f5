//! Free and total space of a file system, from `statvfs(3)`.

use std::path::Path;

/// Space on the file system holding a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// `f_bavail * f_frsize`: what an unprivileged writer may still use.
    pub free_bytes: u64,
    /// `f_blocks * f_frsize`: the size of the file system.
    pub total_bytes: u64,
}

/// `statvfs` of any path: free bytes for unprivileged writers and total bytes.
pub fn space(path: &Path) -> std::io::Result<Space> {
    let st = rustix::fs::statvfs(path)?;
    Ok(Space {
        free_bytes: st.f_bavail.saturating_mul(st.f_frsize),
        total_bytes: st.f_blocks.saturating_mul(st.f_frsize),
    })
}
