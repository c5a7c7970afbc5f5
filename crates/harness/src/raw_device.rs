//! A raw block device as a target: everything on it is overwritten, so it is
//! used only when the user names it twice (`--device D --destroy-data-on D`),
//! and only while no one else holds it. The claim is an exclusive open
//! (`O_EXCL` on a block device: the kernel refuses it with EBUSY while the
//! device is mounted, a member of an md/LVM/dm stack, or claimed by another
//! program), held until the run ends so nothing can mount it meanwhile.
//!
//! Before the claim, a device whose blocks are in use through an alias the kernel's claim does
//! not see is refused: a loop device over the results database (or any file on its file system),
//! another loop device over a mounted image, the disk of a mounted partition, a device under a
//! mounted holder ([`iomatrix_environment::refuse_if_in_use`]). Under `rerun`, the claimed device
//! must have the identity the run stored ([`EXPECTED_IDENTITY`]).

use iomatrix_core::UsageError;
use iomatrix_environment::DeviceIdentity;
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
    /// `--destroy-data-on`, whose blocks are not those of the results database `db` or of a mounted
    /// file system, and claims it.
    pub fn claim(device: &Path, confirmed: Option<&Path>, db: &Path) -> Result<RawDevice, UsageError> {
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
        iomatrix_environment::refuse_if_in_use(&path, db).map_err(|cause| UsageError::new(cause.to_string()))?;
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
        check_expected_identity(&path)?;
        Ok(RawDevice { path, size, _claim: claim })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}

/// The environment variable by which `rerun` hands its run the identity the device had when the
/// original run wrote it (JSON: `{"run": ID, "identity": {...}}`); the claimed device must match.
pub const EXPECTED_IDENTITY: &str = "IOMATRIX_RERUN_DEVICE";

/// What `rerun` expects of the device ([`EXPECTED_IDENTITY`]).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Expected {
    pub run: i64,
    pub identity: DeviceIdentity,
}

/// Under `rerun`, refuses a device (claimed: nothing can take its name meanwhile) whose identity
/// differs from the one the original run stored.
fn check_expected_identity(path: &Path) -> Result<(), UsageError> {
    let Some(text) = std::env::var_os(EXPECTED_IDENTITY) else { return Ok(()) };
    let expected: Expected = serde_json::from_str(&text.to_string_lossy()).map_err(|e| {
        UsageError::new(format!("{EXPECTED_IDENTITY} does not hold a device identity ({e}); leave it unset"))
    })?;
    let now = DeviceIdentity::of(path)
        .map_err(|e| UsageError::new(format!("cannot read the identity of {}: {e}", path.display())))?;
    if expected.identity.differences(&now).is_empty() {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "{} is not the device run #{} wrote: it was [{}], it is now [{now}]; nothing was written. If the data on \
         this device may be destroyed, type the run's command again: iomatrix {}",
        path.display(),
        expected.run,
        expected.identity,
        iomatrix_core::text::command_text(std::env::args().skip(1))
    )))
}
