//! Targets on a server reached by iomatrix's own protocol clients
//! (`nfs://host[:port]/export[/path]`, `smb://[user@]host[:port]/share[/path]`),
//! and the working folder made there.

use iomatrix_backend::RemoteFs;
use iomatrix_core::UsageError;
use std::path::Path;
use std::time::Duration;

/// How long any one call to a server may take before the client gives up.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A `--target` that names a server rather than a local folder.
pub fn url_of(target: &Path) -> Option<&str> {
    target.to_str().filter(|t| t.starts_with("nfs://") || t.starts_with("smb://"))
}

/// The parsed target, checked before anything runs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum RemoteTarget {
    Nfs(iomatrix_nfs::NfsUrl),
    Smb(iomatrix_smb::SmbUrl),
}

impl RemoteTarget {
    pub fn parse(text: &str) -> Result<RemoteTarget, UsageError> {
        if text.starts_with("smb://") {
            return iomatrix_smb::SmbUrl::parse(text, iomatrix_smb::password_from_environment)
                .map(RemoteTarget::Smb)
                .map_err(|e| UsageError::new(format!("--target: {e}")));
        }
        iomatrix_nfs::NfsUrl::parse(text).map(RemoteTarget::Nfs).map_err(|e| UsageError::new(format!("--target: {e}")))
    }

    /// The target as reports show it (never with a password).
    pub fn url(&self) -> String {
        match self {
            RemoteTarget::Nfs(url) => url.to_string(),
            RemoteTarget::Smb(url) => url.to_string(),
        }
    }

    /// A fresh session: each client has its own, as separate machines would.
    pub fn connect(&self) -> std::io::Result<Box<dyn RemoteFs>> {
        match self {
            RemoteTarget::Nfs(url) => iomatrix_nfs::NfsFs::connect(url, CALL_TIMEOUT)
                .map(|fs| Box::new(fs) as Box<dyn RemoteFs>)
                .map_err(|e| std::io::Error::other(e.0)),
            RemoteTarget::Smb(url) => {
                // The password is never sent to other MPI ranks: each reads its own environment.
                let mut url = url.clone();
                if url.password.is_empty() {
                    url.password =
                        iomatrix_smb::password_from_environment().map_err(std::io::Error::other)?.unwrap_or_default();
                }
                iomatrix_smb::SmbFs::connect(&url, CALL_TIMEOUT).map(|fs| Box::new(fs) as Box<dyn RemoteFs>)
            }
        }
    }
}

/// The run's working folder on the server, `iomatrix-PID-MS`, removed at
/// the end with everything the clients left in it (unless kept).
pub struct RemoteWorkDir {
    fs: Box<dyn RemoteFs>,
    pub name: String,
    keep: bool,
}

impl RemoteWorkDir {
    pub fn create(mut fs: Box<dyn RemoteFs>, keep: bool) -> anyhow::Result<RemoteWorkDir> {
        let stamp =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
        let name = format!("iomatrix-{}-{stamp}", std::process::id());
        fs.mkdir(&name).map_err(|e| {
            UsageError::new(format!(
                "cannot create a working folder on {}: {e}; choose an export and path you can write to",
                fs.target()
            ))
        })?;
        Ok(RemoteWorkDir { fs, name, keep })
    }

    pub fn target(&self) -> String {
        format!("{}/{}", self.fs.target(), self.name)
    }

    pub fn describe(&self) -> serde_json::Value {
        self.fs.describe()
    }

    pub fn kept(&self) -> bool {
        self.keep
    }
}

/// Removes `path` and everything below it. Stops at the first call that
/// fails: on a server that is gone each call would wait out its timeout.
fn remove_tree(fs: &mut dyn RemoteFs, path: &str) -> std::io::Result<()> {
    for entry in fs.read_dir(path)? {
        let below = format!("{path}/{}", entry.name);
        match entry.kind {
            iomatrix_backend::RemoteKind::Folder => remove_tree(fs, &below)?,
            _ => fs.remove(&below)?,
        }
    }
    fs.rmdir(path)
}

impl Drop for RemoteWorkDir {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Err(e) = remove_tree(self.fs.as_mut(), &self.name) {
            eprintln!("iomatrix: warning: could not remove the working folder {}: {e}", self.target());
        }
    }
}
