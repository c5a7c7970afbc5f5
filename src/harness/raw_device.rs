//! A raw block device as a target: everything on it is overwritten, so it is
//! used only when the user names it twice (`--device D --destroy-data-on D`),
//! and only while no one else holds it. The claim is an exclusive open
//! (`O_EXCL` on a block device: the kernel refuses it with EBUSY while the
//! device is mounted, a member of an md/LVM/dm stack, or claimed by another
//! program), held until the run ends so nothing can mount it meanwhile.

use iomatrix_core::UsageError;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub struct RawDevice {
    path: PathBuf,
    size: u64,
    /// Held open with O_EXCL for the run; the clients open the device again
    /// without O_EXCL (which an exclusive holder does not block).
    _claim: File,
}

impl RawDevice {
    /// Checks that `device` is a block device the user confirmed with
    /// `--destroy-data-on`, and claims it.
    pub fn claim(device: &Path, confirmed: Option<&Path>) -> Result<RawDevice, UsageError> {
        let shown = device.display();
        let meta = std::fs::metadata(device)
            .map_err(|e| UsageError::new(format!("--device {shown}: {e}; give a block device such as /dev/sdb")))?;
        if !meta.file_type().is_block_device() {
            return Err(UsageError::new(format!(
                "--device {shown} is not a block device; to test in a folder use --target instead"
            )));
        }
        let path = device.canonicalize().map_err(|e| UsageError::new(format!("--device {shown}: {e}")))?;
        let same = confirmed.and_then(|c| c.canonicalize().ok()).is_some_and(|c| c == path);
        if !same {
            return Err(UsageError::new(format!(
                "a run on the raw device {} overwrites the data on it; if that is what you want, name the device \
                 again: --destroy-data-on {shown}",
                path.display()
            )));
        }
        let mut claim =
            std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_EXCL).open(&path).map_err(|e| {
                if e.raw_os_error() == Some(libc::EBUSY) {
                    UsageError::new(format!(
                        "{} is in use (mounted, part of a RAID/LVM/device-mapper stack, or held by another \
                         program); unmount or release it first",
                        path.display()
                    ))
                } else {
                    UsageError::new(format!("cannot open {} for writing: {e}", path.display()))
                }
            })?;
        let size = claim
            .seek(SeekFrom::End(0))
            .map_err(|e| UsageError::new(format!("cannot read the size of {}: {e}", path.display())))?;
        if size == 0 {
            return Err(UsageError::new(format!("{} has no capacity (size 0); is a medium in it?", path.display())));
        }
        Ok(RawDevice { path, size, _claim: claim })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}
