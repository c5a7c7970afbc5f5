//! `--target` parsed once, at the command line, into a [`Target`]: a local
//! folder, a raw block device, a tree that is only read, or a server reached
//! by iomatrix's own protocol client ([`Server`]: `nfs://host[:port]/export[/path]`,
//! `smb://[user@]host[:port]/share[/path]`). This is the one place where a
//! target's text is read as a URL; nothing downstream looks at it again.

use iomatrix_backend::RemoteFs;
use iomatrix_core::UsageError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long any one call to a server may take before the client gives up.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a run's I/O goes.
#[derive(Debug, Clone)]
pub enum Target {
    /// A local folder (or a mounted share's): the run works in a fresh
    /// working folder inside it.
    Folder(PathBuf),
    /// A raw block device, read and written in place (its data is destroyed).
    Device(PathBuf),
    /// A local tree that is only read (the backup walk): no working folder.
    Tree(PathBuf),
    /// A folder on a server: the run works in a fresh working folder there.
    Server(Server),
    /// A tree on a server that is only read.
    ServerTree(Server),
}

impl Target {
    /// `--target` of a suite that writes: a folder here, or one on a server.
    pub fn parse_folder(text: &str) -> Result<Target, UsageError> {
        Ok(match Server::parse(text)? {
            Some(server) => Target::Server(server),
            None => Target::Folder(PathBuf::from(text)),
        })
    }

    /// A front end's folder, judged before the run so that a refusal names the flag the user
    /// typed (bonnie++'s `-d`, IOzone's `-f`), not `--target`, which they never gave. `given`
    /// is the flag with its value as typed, `fix` what to give instead. A server's folder is
    /// judged when the run connects.
    pub fn check_front_end_folder(&self, given: &str, fix: &str) -> Result<(), UsageError> {
        let Target::Folder(dir) = self else { return Ok(()) };
        match std::fs::metadata(dir) {
            Err(e) => Err(UsageError::new(format!("{given}: folder {}: {e}; {fix}", dir.display()))),
            Ok(meta) if !meta.is_dir() => {
                Err(UsageError::new(format!("{given}: {} is not a folder; {fix}", dir.display())))
            }
            Ok(_) => Ok(()),
        }
    }

    /// `--target` of a suite that only reads: a tree here, or one on a server.
    pub fn parse_tree(text: &str) -> Result<Target, UsageError> {
        Ok(match Server::parse(text)? {
            Some(server) => Target::ServerTree(server),
            None => Target::Tree(PathBuf::from(text)),
        })
    }

    /// The system's temporary folder: where a run goes without `--target`.
    pub fn default_folder() -> Target {
        Target::Folder(std::env::temp_dir())
    }

    pub fn server(&self) -> Option<&Server> {
        match self {
            Target::Server(s) | Target::ServerTree(s) => Some(s),
            _ => None,
        }
    }

    /// The target as the user gave it (a server's never with its password).
    pub fn shown(&self) -> String {
        match self {
            Target::Folder(p) | Target::Device(p) | Target::Tree(p) => p.display().to_string(),
            Target::Server(s) | Target::ServerTree(s) => s.url(),
        }
    }
}

/// A server reached by iomatrix's own protocol client, checked before
/// anything runs. MPI ranks receive it with the job (without an SMB
/// password: each rank reads its own environment).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Server {
    Nfs(iomatrix_nfs::NfsUrl),
    Smb(iomatrix_smb::SmbUrl),
}

impl Server {
    /// `Some` for an `nfs://` or `smb://` URL (an error if it is malformed),
    /// `None` for anything else (a path).
    pub fn parse(text: &str) -> Result<Option<Server>, UsageError> {
        let bad = |e: String| UsageError::new(format!("--target: {e}"));
        if text.starts_with("smb://") {
            return iomatrix_smb::SmbUrl::parse(text, iomatrix_smb::password_from_environment)
                .map(|url| Some(Server::Smb(url)))
                .map_err(|e| bad(e.to_string()));
        }
        if text.starts_with("nfs://") {
            return iomatrix_nfs::NfsUrl::parse(text).map(|url| Some(Server::Nfs(url))).map_err(|e| bad(e.to_string()));
        }
        Ok(None)
    }

    /// The target as reports show it (never with a password).
    pub fn url(&self) -> String {
        match self {
            Server::Nfs(url) => url.to_string(),
            Server::Smb(url) => url.to_string(),
        }
    }

    /// The server's host as the URL names it.
    pub fn host(&self) -> &str {
        match self {
            Server::Nfs(url) => &url.host,
            Server::Smb(url) => &url.host,
        }
    }

    /// The server's IPv4 address (its name resolved), whose route a client's interface is
    /// chosen by; None where it does not resolve to one.
    pub fn address(&self) -> Option<std::net::Ipv4Addr> {
        use std::net::ToSocketAddrs;
        let host = self.host().trim_start_matches('[').trim_end_matches(']');
        (host, 0).to_socket_addrs().ok()?.find_map(|a| match a.ip() {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        })
    }

    /// What stored cells name as their backend.
    pub fn protocol(&self) -> &'static str {
        match self {
            Server::Nfs(_) => "nfs",
            Server::Smb(_) => "smb",
        }
    }

    /// A fresh session: each client has its own, as separate machines would. At most
    /// [`CONNECTS_AT_ONCE`] of this process's sessions are being set up at any moment.
    pub fn connect(&self) -> std::io::Result<Box<dyn RemoteFs>> {
        let _slot = ConnectSlot::take();
        match self {
            Server::Nfs(url) => iomatrix_nfs::NfsFs::connect(url, CALL_TIMEOUT)
                .map(|fs| Box::new(fs) as Box<dyn RemoteFs>)
                .map_err(|e| std::io::Error::other(e.0)),
            Server::Smb(url) => {
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

/// How many sessions one process sets up at once. Hundreds of connections asked for together (the
/// file-server load's 148 per client, seed 003's 590 over four hosts) would otherwise all reach the
/// server's accept queue in the same moment, and on a busy server some waited there past
/// [`CALL_TIMEOUT`] (a run failed "connecting: no answer within 30 s"). Setting up sessions is not
/// timed (every connection starts the timed phase together, after all are up), so pacing them
/// changes no figure; each session's own time limit starts when its turn comes.
pub const CONNECTS_AT_ONCE: usize = 16;

/// One of the [`CONNECTS_AT_ONCE`] turns to set up a session, given back when dropped (also when the
/// setup fails or panics).
struct ConnectSlot;

static CONNECTS_UNDER_WAY: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static CONNECT_SLOT_FREED: std::sync::Condvar = std::sync::Condvar::new();

impl ConnectSlot {
    /// Waits for a turn.
    fn take() -> ConnectSlot {
        let mut under_way = CONNECTS_UNDER_WAY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while *under_way >= CONNECTS_AT_ONCE {
            under_way = CONNECT_SLOT_FREED.wait(under_way).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *under_way += 1;
        ConnectSlot
    }
}

impl Drop for ConnectSlot {
    fn drop(&mut self) {
        let mut under_way = CONNECTS_UNDER_WAY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *under_way -= 1;
        CONNECT_SLOT_FREED.notify_one();
    }
}

/// An existing folder whose tree is walked, canonical; anything else is the
/// user's mistake (exit 2). `what` names the argument in the message.
pub fn existing_tree(dir: &Path, what: &str) -> Result<PathBuf, UsageError> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| UsageError::new(format!("{what} {}: {e}; give an existing folder to walk", dir.display())))?;
    if !meta.is_dir() {
        return Err(UsageError::new(format!(
            "{what} {} is not a folder; give the root of the tree to walk",
            dir.display()
        )));
    }
    dir.canonicalize().map_err(|e| UsageError::new(format!("{what} {}: {e}", dir.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_more_than_connects_at_once_sessions_are_set_up_together() {
        let peak = std::sync::atomic::AtomicUsize::new(0);
        let now = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..(CONNECTS_AT_ONCE * 3) {
                scope.spawn(|| {
                    let _slot = ConnectSlot::take();
                    let inside = now.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    peak.fetch_max(inside, std::sync::atomic::Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    now.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                });
            }
        });
        let peak = peak.into_inner();
        assert!(peak <= CONNECTS_AT_ONCE, "{peak} sessions were set up at once, at most {CONNECTS_AT_ONCE} may be");
        assert_eq!(*CONNECTS_UNDER_WAY.lock().unwrap(), 0, "every turn was given back");
    }

    #[test]
    fn a_url_is_a_server_and_anything_else_a_path() {
        assert!(matches!(Target::parse_folder("/mnt/x").unwrap(), Target::Folder(p) if p == Path::new("/mnt/x")));
        assert!(matches!(Target::parse_tree("rel/dir").unwrap(), Target::Tree(_)));
        assert!(matches!(Target::parse_folder("nfs://10.0.0.1/export/x").unwrap(), Target::Server(Server::Nfs(_))));
        assert!(matches!(Target::parse_tree("smb://u@h/share").unwrap(), Target::ServerTree(Server::Smb(_))));
        assert!(Target::parse_folder("nfs://").unwrap_err().to_string().starts_with("--target: "));
        // A folder whose name merely contains "nfs://" further in is a path.
        assert!(matches!(Target::parse_folder("./nfs://x").unwrap(), Target::Folder(_)));
    }
}
