//! iomatrix-smb: iomatrix's own SMB2/3 client, so a share is measured with
//! no mount and no client cache in between.
//!
//! - [`SmbUrl`]: `smb://[user[:password]@]host[:port]/share[/path]`; the
//!   password may also come from `IOMATRIX_SMB_PASSWORD` or the file named
//!   by `IOMATRIX_SMB_PASSWORD_FILE` (so it need not sit on a command line).
//! - [`SmbFs`]: one session to one share (the pure-Rust `smb` crate, driven
//!   by a single-threaded runtime of its own, every call bounded by a
//!   timeout) as the benchmark's [`iomatrix_backend::RemoteFs`]: the
//!   negotiated dialect and transfer sizes, folders, files by number.
#![warn(missing_docs)]

use futures_util::StreamExt;
use iomatrix_backend::{listing_too_long, RemoteEntry, RemoteFs, RemoteKind, MAX_LISTED};
use smb::{
    Client, ClientConfig, CreateOptions, Directory, FileAccessMask, FileAttributes, FileCreateArgs,
    FileDirectoryInformation, FileStandardInformation, ReadAt, Resource, UncPath, WriteAt,
};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

mod nodelay;
mod queued;

/// `smb://[user[:password]@]host[:port]/share[/path]`.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SmbUrl {
    /// The server's name or address, as written in the URL.
    pub host: String,
    /// The port given in the URL; None for SMB's own, 445.
    pub port: Option<u16>,
    /// The share's name: the URL path's first part.
    pub share: String,
    /// Below the share, without leading or trailing `/`; empty for its root.
    pub path: String,
    /// The user to log on as; `guest` when the URL names none.
    pub user: String,
    /// Never printed; not stored with a run.
    #[serde(skip)]
    pub password: String,
}

impl std::fmt::Debug for SmbUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for SmbUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "smb://{}@{}", self.user, self.host)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        write!(f, "/{}", self.share)?;
        if !self.path.is_empty() {
            write!(f, "/{}", self.path)?;
        }
        Ok(())
    }
}

/// Why an `smb://` target cannot be used as written (no share, a bad port, `..` in its path), or
/// its password cannot be read; or why the session's socket could not be tuned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SmbError(pub String);

impl SmbUrl {
    /// `password_from` supplies the environment's password (variable or
    /// file) when the URL has none.
    pub fn parse(
        text: &str,
        password_from: impl FnOnce() -> Result<Option<String>, SmbError>,
    ) -> Result<SmbUrl, SmbError> {
        let rest = text.strip_prefix("smb://").ok_or_else(|| {
            SmbError(format!("'{text}' is not an SMB target: write smb://[user@]host[:port]/share[/path]"))
        })?;
        let (authority, path) = rest
            .split_once('/')
            .ok_or_else(|| SmbError(format!("'{text}' names no share: write smb://[user@]host[:port]/share[/path]")))?;
        let (credentials, hostport) = match authority.rsplit_once('@') {
            Some((c, h)) => (Some(c), h),
            None => (None, authority),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h,
                Some(
                    p.parse::<u16>()
                        .ok()
                        .filter(|p| *p > 0)
                        .ok_or_else(|| SmbError(format!("'{text}': port '{p}' is not a port number (1..65535)")))?,
                ),
            ),
            None => (hostport, None),
        };
        if host.is_empty() {
            return Err(SmbError(format!("'{text}' names no host: write smb://[user@]host[:port]/share[/path]")));
        }
        let (user, url_password) = match credentials {
            Some(c) => match c.split_once(':') {
                Some((u, p)) => (u.to_string(), Some(p.to_string())),
                None => (c.to_string(), None),
            },
            None => ("guest".to_string(), None),
        };
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let share = parts.next().ok_or_else(|| SmbError(format!("'{text}' names no share: write smb://host/share")))?;
        let below: Vec<&str> = parts.collect();
        if below.contains(&"..") {
            return Err(SmbError(format!("'{text}': '..' is not allowed in the path")));
        }
        let password = match url_password {
            Some(p) => p,
            None => password_from()?.unwrap_or_default(),
        };
        Ok(SmbUrl { host: host.to_string(), port, share: share.to_string(), path: below.join("/"), user, password })
    }

    /// `path` (below the URL's folder) as the share sees it: from the
    /// share's root, parts between `\`, as SET_INFO's rename takes it.
    fn share_relative(&self, below: &str) -> String {
        let full: Vec<&str> = self.path.split('/').chain(below.split('/')).filter(|p| !p.is_empty()).collect();
        full.join("\\")
    }

    /// `\\host\share[\path]` for the SMB protocol.
    fn unc(&self, below: &str) -> Result<UncPath, SmbError> {
        let unc =
            UncPath::from_str(&format!(r"\\{}\{}", self.host, self.share)).map_err(|e| SmbError(e.to_string()))?;
        let full: Vec<&str> = self.path.split('/').chain(below.split('/')).filter(|p| !p.is_empty()).collect();
        Ok(if full.is_empty() { unc } else { unc.with_path(&full.join("\\")) })
    }
}

/// The password from `IOMATRIX_SMB_PASSWORD`, else from the file named by
/// `IOMATRIX_SMB_PASSWORD_FILE` (its first line).
pub fn password_from_environment() -> Result<Option<String>, SmbError> {
    if let Ok(p) = std::env::var("IOMATRIX_SMB_PASSWORD") {
        return Ok(Some(p));
    }
    match std::env::var("IOMATRIX_SMB_PASSWORD_FILE") {
        Ok(file) => std::fs::read_to_string(&file)
            .map(|t| Some(t.lines().next().unwrap_or("").to_string()))
            .map_err(|e| SmbError(format!("IOMATRIX_SMB_PASSWORD_FILE {file}: {e}"))),
        Err(_) => Ok(None),
    }
}

/// One session to one share.
pub struct SmbFs {
    url: SmbUrl,
    runtime: tokio::runtime::Runtime,
    /// Taken in `drop`, to close the session inside the runtime.
    client: Option<Client>,
    timeout: Duration,
    open: HashMap<u64, smb::File>,
    next: u64,
    described: serde_json::Value,
    /// Set when a call got no answer within the timeout: the link or the
    /// server is gone, so later calls (and the closing in `drop`) fail at
    /// once instead of each waiting out the timeout again.
    silent: std::sync::atomic::AtomicBool,
}

/// Tries at connecting a session that the server's kernel turned away. Samba listens with a
/// backlog of 50 (compiled in): a burst of hundreds of sessions at once (seed 003's 590
/// connections) overflows it and the excess are reset. Windows clients try again, and so does
/// this one, a few times, within the connect timeout and untimed (before any phase starts).
const CONNECT_ATTEMPTS: u32 = 6;

/// A reset or aborted TCP connection somewhere in the error's sources. Not a refused one: nothing
/// listens there, and the user should hear so at once.
fn turned_away(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<io::Error>() {
            use io::ErrorKind as K;
            if matches!(io.kind(), K::ConnectionReset | K::ConnectionAborted) {
                return true;
            }
        }
        cause = c.source();
    }
    false
}

fn err(url: &SmbUrl, what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{url}: {what}: {e}"))
}

// SMB2_LOCK_ELEMENT flags (MS-SMB2 2.2.26.1). Set by value: smb-msg 0.12.1's `LockFlag` puts
// `fail_immediately` at bit 3 (0x8), which servers refuse (STATUS_INVALID_PARAMETER); it is 0x10.
const LOCKFLAG_SHARED: u32 = 0x1;
const LOCKFLAG_EXCLUSIVE: u32 = 0x2;
const LOCKFLAG_UNLOCK: u32 = 0x4;
const LOCKFLAG_FAIL_IMMEDIATELY: u32 = 0x10;

fn lock_flags(bits: u32) -> smb::LockFlag {
    smb::LockFlag::from_bytes(bits.to_le_bytes())
}

/// The NT status the server answered with, where the error is one.
fn status_of(e: &(dyn std::any::Any + 'static)) -> Option<u32> {
    match e.downcast_ref::<smb::Error>()? {
        smb::Error::ReceivedErrorMessage(status, _) | smb::Error::UnexpectedMessageStatus(status) => Some(*status),
        _ => None,
    }
}

/// The error kind callers count by (a file that is not there, a range
/// another holder has locked...) for the server's NT status.
fn status_kind(status: u32) -> io::ErrorKind {
    use io::ErrorKind as K;
    match status {
        // STATUS_NO_SUCH_FILE, OBJECT_NAME_NOT_FOUND, OBJECT_PATH_NOT_FOUND
        0xC000_000F | 0xC000_0034 | 0xC000_003A => K::NotFound,
        // STATUS_OBJECT_NAME_COLLISION
        0xC000_0035 => K::AlreadyExists,
        // STATUS_ACCESS_DENIED
        0xC000_0022 => K::PermissionDenied,
        // STATUS_SHARING_VIOLATION
        0xC000_0043 => K::ResourceBusy,
        // STATUS_FILE_LOCK_CONFLICT, STATUS_LOCK_NOT_GRANTED
        0xC000_0054 | 0xC000_0055 => K::WouldBlock,
        // STATUS_DISK_FULL
        0xC000_007F => K::StorageFull,
        // STATUS_FILE_IS_A_DIRECTORY
        0xC000_00BA => K::IsADirectory,
        // STATUS_NOT_SUPPORTED
        0xC000_00BB => K::Unsupported,
        // STATUS_DIRECTORY_NOT_EMPTY
        0xC000_0101 => K::DirectoryNotEmpty,
        // STATUS_NOT_A_DIRECTORY
        0xC000_0103 => K::NotADirectory,
        _ => K::Other,
    }
}

impl SmbFs {
    /// Connects and authenticates within `timeout`.
    pub fn connect(url: &SmbUrl, timeout: Duration) -> io::Result<SmbFs> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| err(url, "starting the SMB client's runtime", e))?;
        // The smb crate ends its sessions in tasks of the runtime, also when a connection fails: stay inside it.
        let connected = {
            let _inside = runtime.enter();
            Self::session(&runtime, url, timeout)
        };
        let (client, described) = connected?;
        Ok(SmbFs {
            url: url.clone(),
            runtime,
            client: Some(client),
            timeout,
            open: HashMap::new(),
            next: 1,
            described,
            silent: Default::default(),
        })
    }

    fn session(
        runtime: &tokio::runtime::Runtime,
        url: &SmbUrl,
        timeout: Duration,
    ) -> io::Result<(Client, serde_json::Value)> {
        // The crate's own timeout a little later than ours, so that a silent server is always met by ours
        // (which names the call and marks the session as silent) rather than by the crate's.
        let crate_timeout = timeout + Duration::from_secs(5);
        let share = url.unc("").map_err(|e| err(url, "the share's path", e))?;
        let deadline = std::time::Instant::now() + timeout;
        let mut attempt = 0;
        let client = loop {
            let connection =
                smb::ConnectionConfig { port: url.port, timeout: Some(crate_timeout), ..Default::default() };
            let client = Client::new(ClientConfig { dfs: false, connection, ..ClientConfig::default() });
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let connected = runtime.block_on(async {
                tokio::time::timeout(left, client.share_connect(&share, &url.user, url.password.clone())).await
            });
            match connected {
                Ok(Ok(())) => break client,
                Ok(Err(e)) if attempt + 1 < CONNECT_ATTEMPTS && turned_away(&e) => {
                    attempt += 1;
                    // Spread the retries of a burst of sessions: 100, 200, 400... ms plus up to 100 ms.
                    let jitter = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.subsec_nanos() % 100_000_000);
                    let pause = Duration::from_millis(100 << (attempt - 1)) + Duration::from_nanos(jitter.into());
                    if std::time::Instant::now() + pause >= deadline {
                        return Err(err(url, &format!("connecting to share {} as {}", url.share, url.user), e));
                    }
                    std::thread::sleep(pause);
                }
                Ok(Err(e)) => return Err(err(url, &format!("connecting to share {} as {}", url.share, url.user), e)),
                Err(_) => return Err(err(url, "connecting", format!("no answer within {} s", timeout.as_secs()))),
            }
        };
        let nodelay_sockets = Self::set_nodelay(url);
        let described = runtime.block_on(async {
            let mut d = serde_json::json!({
                "protocol": "SMB",
                "client": "iomatrix built-in (smb crate, no client cache)",
                "server": url.host,
                "share": url.share,
                "user": url.user,
                "tcp_nodelay": nodelay_sockets.is_ok(),
            });
            if let Err(why) = &nodelay_sockets {
                // Without TCP_NODELAY each small request waits for the server's delayed ACK: written down with the run.
                d["known_limits"] = serde_json::json!(format!(
                    "TCP_NODELAY could not be set ({why}): each request may wait ~40 ms for the server's delayed \
                     acknowledgement, so small-record figures measure the client, not the server"
                ));
            }
            if let Ok(conn) = client.get_connection(&url.host).await {
                if let Some(info) = conn.conn_info() {
                    d["version"] = serde_json::json!(format!("{:?}", info.negotiation.dialect_rev));
                    d["read_max_bytes"] = serde_json::json!(info.negotiation.max_read_size);
                    d["write_max_bytes"] = serde_json::json!(info.negotiation.max_write_size);
                    d["signing"] = serde_json::json!(format!("{:?}", info.negotiation.signing_algo));
                    d["encryption"] = serde_json::json!(format!("{:?}", info.negotiation.encryption_cipher));
                }
            }
            d
        });
        Ok((client, described))
    }

    /// TCP_NODELAY on the session's socket (see [`nodelay`]): the sockets
    /// connected to the server's address and port (at least one, or it failed).
    fn set_nodelay(url: &SmbUrl) -> Result<usize, SmbError> {
        use std::net::ToSocketAddrs;
        let port = url.port.unwrap_or(smb::transport::TcpTransport::DEFAULT_PORT);
        let peers: Vec<_> = (url.host.as_str(), port).to_socket_addrs().map_err(|e| SmbError(e.to_string()))?.collect();
        match nodelay::set_on_sockets_connected_to(&peers) {
            Ok(0) => Err(SmbError(format!("no socket connected to {}:{port} was found", url.host))),
            Ok(n) => Ok(n),
            Err(e) => Err(SmbError(format!("listing {}: {e}", nodelay::FD_FOLDER))),
        }
    }

    fn block<T, E: std::fmt::Display + 'static>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, E>>,
    ) -> io::Result<T> {
        use std::sync::atomic::Ordering;
        let no_answer = || format!("no answer within {} s", self.timeout.as_secs());
        if self.silent.load(Ordering::Relaxed) {
            return Err(err(&self.url, what, format!("not sent: an earlier call got {}", no_answer())));
        }
        match self.runtime.block_on(async { tokio::time::timeout(self.timeout, call).await }) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => {
                let kind = status_of(&e).map_or(io::ErrorKind::Other, status_kind);
                Err(io::Error::new(kind, format!("{}: {what}: {e}", self.url)))
            }
            Err(_) => {
                self.silent.store(true, Ordering::Relaxed);
                Err(err(&self.url, what, no_answer()))
            }
        }
    }

    fn open_with(&self, path: &str, args: &FileCreateArgs, what: &str) -> io::Result<Resource> {
        let unc = self.url.unc(path).map_err(|e| err(&self.url, what, e))?;
        let client = self.client.as_ref().ok_or_else(|| err(&self.url, what, "the session is closed"))?;
        self.block(&format!("{what} {path}"), client.create_file(&unc, args))
    }

    fn file(&self, file: u64) -> io::Result<&smb::File> {
        self.open.get(&file).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such open file"))
    }

    fn keep(&mut self, resource: Resource, path: &str) -> io::Result<u64> {
        let Resource::File(file) = resource else {
            return Err(err(&self.url, path, "not a file"));
        };
        let id = self.next;
        self.next += 1;
        self.open.insert(id, file);
        Ok(id)
    }

    /// Opens `path` for deletion and closes it: the server removes it then.
    fn delete(&mut self, path: &str, directory: bool) -> io::Result<()> {
        let args = FileCreateArgs {
            options: CreateOptions::new().with_delete_on_close(true).with_directory_file(directory),
            ..FileCreateArgs::make_open_existing(FileAccessMask::new().with_delete(true))
        };
        let resource = self.open_with(path, &args, "deleting")?;
        let what = format!("closing {path} to delete it");
        match resource {
            Resource::File(f) => self.block(&what, f.close()),
            Resource::Directory(d) => self.block(&what, d.close()),
            Resource::Pipe(p) => self.block(&what, p.close()),
        }
    }
}

impl Drop for SmbFs {
    fn drop(&mut self) {
        // The smb crate closes its trees and sessions in tasks of the runtime: end them inside it.
        let _inside = self.runtime.enter();
        // One call timeout for the whole ending, however many files are open (on a server that is gone
        // each close would otherwise wait out a timeout of its own), and none after a call went unanswered.
        let budget = if *self.silent.get_mut() { Duration::ZERO } else { self.timeout };
        let deadline = tokio::time::Instant::now() + budget;
        for (_, file) in self.open.drain() {
            let _ = self.runtime.block_on(async { tokio::time::timeout_at(deadline, file.close()).await });
        }
        if let Some(client) = self.client.take() {
            let _ = self.runtime.block_on(async { tokio::time::timeout_at(deadline, client.close()).await });
            drop(client);
        }
    }
}

impl RemoteFs for SmbFs {
    fn target(&self) -> String {
        self.url.to_string()
    }

    fn describe(&self) -> serde_json::Value {
        self.described.clone()
    }

    fn free_bytes(&mut self) -> io::Result<Option<u64>> {
        let args = FileCreateArgs {
            options: CreateOptions::new().with_directory_file(true),
            ..FileCreateArgs::make_open_existing(FileAccessMask::new().with_file_read_attributes(true))
        };
        let Resource::Directory(dir) = self.open_with("", &args, "opening the share's folder")? else {
            return Err(err(&self.url, "the share's folder", "is not a folder"));
        };
        let size = self.block("QUERY_INFO (file system size)", dir.query_fs_info::<smb::FileFsFullSizeInformation>());
        let closed = self.block("CLOSE", dir.close());
        let size = size?;
        closed?;
        let unit = u64::from(size.sectors_per_allocation_unit) * u64::from(size.bytes_per_sector);
        Ok(Some(size.caller_available_allocation_units.saturating_mul(unit)))
    }

    fn mkdir(&mut self, path: &str) -> io::Result<()> {
        let args = FileCreateArgs::make_create_new(
            FileAttributes::new().with_directory(true),
            CreateOptions::new().with_directory_file(true),
        );
        match self.open_with(path, &args, "making the folder") {
            Ok(Resource::Directory(d)) => self.block("closing a new folder", d.close()),
            Ok(_) => Err(err(&self.url, path, "made something that is not a folder")),
            // STATUS_OBJECT_NAME_COLLISION: the folder is there already.
            Err(e) if e.to_string().contains("0xc0000035") => {
                Err(io::Error::new(io::ErrorKind::AlreadyExists, e.to_string()))
            }
            Err(e) => Err(e),
        }
    }

    fn rmdir(&mut self, path: &str) -> io::Result<()> {
        self.delete(path, true)
    }

    fn create(&mut self, path: &str) -> io::Result<u64> {
        let args = FileCreateArgs::make_overwrite(FileAttributes::new(), CreateOptions::new());
        let resource = self.open_with(path, &args, "creating")?;
        self.keep(resource, path)
    }

    fn create_new(&mut self, path: &str) -> io::Result<u64> {
        let args = FileCreateArgs::make_create_new(FileAttributes::new(), CreateOptions::new());
        match self.open_with(path, &args, "creating") {
            Ok(resource) => self.keep(resource, path),
            // STATUS_OBJECT_NAME_COLLISION: the file is there already.
            Err(e) if e.to_string().contains("0xc0000035") => {
                Err(io::Error::new(io::ErrorKind::AlreadyExists, e.to_string()))
            }
            Err(e) => Err(e),
        }
    }

    fn stat(&mut self, path: &str) -> io::Result<RemoteEntry> {
        let access = FileAccessMask::new().with_file_read_attributes(true);
        let resource = self.open_with(path, &FileCreateArgs::make_open_existing(access), "looking up")?;
        let what = format!("QUERY_INFO {path}");
        let name = path.trim_matches('/').rsplit('/').next().unwrap_or("").to_string();
        let (info, closed) = match &resource {
            Resource::File(f) => {
                (self.block(&what, f.query_info::<FileStandardInformation>()), self.block("CLOSE", f.close()))
            }
            Resource::Directory(d) => {
                (self.block(&what, d.query_info::<FileStandardInformation>()), self.block("CLOSE", d.close()))
            }
            Resource::Pipe(p) => {
                return self.block("CLOSE", p.close()).map(|_| RemoteEntry { name, kind: RemoteKind::Other, size: 0 })
            }
        };
        let info = info?;
        closed?;
        Ok(if bool::from(info.directory) {
            RemoteEntry { name, kind: RemoteKind::Folder, size: 0 }
        } else {
            RemoteEntry { name, kind: RemoteKind::File, size: info.end_of_file }
        })
    }

    fn read_dir(&mut self, path: &str) -> io::Result<Vec<RemoteEntry>> {
        let args = FileCreateArgs {
            options: CreateOptions::new().with_directory_file(true),
            ..FileCreateArgs::make_open_existing(FileAccessMask::new().with_generic_read(true))
        };
        let Resource::Directory(dir) = self.open_with(path, &args, "listing")? else {
            return Err(err(&self.url, path, "is not a folder"));
        };
        let dir = Arc::new(dir);
        let what = format!("QUERY_DIRECTORY {path}");
        let too_long = listing_too_long(&format!("{}: {what}", self.url));
        let listed = self.block(&what, async {
            let mut stream = Directory::query::<FileDirectoryInformation>(&dir, "*").await?;
            let mut found = Vec::new();
            while let Some(item) = stream.next().await {
                if found.len() == MAX_LISTED {
                    return Ok(Err(too_long));
                }
                found.push(item?);
            }
            Ok::<_, smb::Error>(Ok(found))
        });
        let closed = self.block("CLOSE", dir.close());
        let listed = listed?.map_err(io::Error::other);
        closed?;
        let listed = listed?;
        Ok(listed
            .into_iter()
            .filter_map(|e| {
                let name = e.file_name.to_string();
                if name == "." || name == ".." {
                    return None;
                }
                let a = &e.file_attributes;
                let kind = if a.reparse_point() {
                    RemoteKind::Symlink
                } else if a.directory() {
                    RemoteKind::Folder
                } else {
                    RemoteKind::File
                };
                Some(RemoteEntry { name, size: if kind == RemoteKind::File { e.end_of_file } else { 0 }, kind })
            })
            .collect())
    }

    fn open(&mut self, path: &str) -> io::Result<u64> {
        let access = FileAccessMask::new().with_generic_read(true).with_generic_write(true);
        let resource = self.open_with(path, &FileCreateArgs::make_open_existing(access), "opening")?;
        self.keep(resource, path)
    }

    fn open_read(&mut self, path: &str) -> io::Result<u64> {
        let access = FileAccessMask::new().with_generic_read(true);
        let resource = self.open_with(path, &FileCreateArgs::make_open_existing(access), "opening to read")?;
        self.keep(resource, path)
    }

    fn remove(&mut self, path: &str) -> io::Result<()> {
        self.delete(path, false)
    }

    fn read_at(&mut self, file: u64, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let f = self.file(file)?;
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done as u64;
            let n = self.block(&format!("READ at byte {at}"), f.read_at(&mut buf[done..], at))?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("{}: the file ends at byte {at}", self.url),
                ));
            }
            done += n;
        }
        Ok(())
    }

    fn write_at(&mut self, file: u64, buf: &[u8], offset: u64) -> io::Result<()> {
        let f = self.file(file)?;
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done as u64;
            let n = self.block(&format!("WRITE at byte {at}"), f.write_at(&buf[done..], at))?;
            if n == 0 {
                return Err(err(&self.url, &format!("WRITE at byte {at}"), "the server wrote nothing"));
            }
            done += n;
        }
        Ok(())
    }

    fn flush(&mut self, file: u64) -> io::Result<()> {
        let f = self.file(file)?;
        self.block("FLUSH", f.flush())
    }

    fn close(&mut self, file: u64) -> io::Result<()> {
        match self.open.remove(&file) {
            Some(f) => self.block("CLOSE", f.close()),
            None => Ok(()),
        }
    }

    /// SET_INFO FileRenameInformation with ReplaceIfExists on `from`
    /// opened for DELETE (a file or a folder), as rename(2) does.
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        let args = FileCreateArgs::make_open_existing(FileAccessMask::new().with_delete(true));
        let resource = self.open_with(from, &args, "opening to rename")?;
        let info = smb::FileRenameInformation {
            replace_if_exists: true.into(),
            root_directory: 0,
            file_name: self.url.share_relative(to).as_str().into(),
        };
        let what = format!("SET_INFO rename {from} to {to}");
        let (renamed, closed) = match &resource {
            Resource::File(f) => (self.block(&what, f.set_info(info)), self.block("CLOSE", f.close())),
            Resource::Directory(d) => (self.block(&what, d.set_info(info)), self.block("CLOSE", d.close())),
            Resource::Pipe(p) => {
                let _ = self.block("CLOSE", p.close());
                return Err(err(&self.url, from, "is a pipe, not a file or folder"));
            }
        };
        renamed?;
        closed
    }

    /// SET_INFO FileBasicInformation: the last-write and last-access times
    /// now (by this client's clock), the others left as they are (zero).
    fn touch(&mut self, file: u64) -> io::Result<()> {
        let f = self.file(file)?;
        // FILETIME: 100 ns units since 1601-01-01; 11644473600 s lie between that and 1970.
        let since_1970 = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let now = smb::binrw_util::file_time::FileTime::from(
            (since_1970.as_nanos() / 100) as u64 + 11_644_473_600 * 10_000_000,
        );
        let info = smb::FileBasicInformation {
            creation_time: smb::binrw_util::file_time::FileTime::from(0),
            last_access_time: now,
            last_write_time: now,
            change_time: smb::binrw_util::file_time::FileTime::from(0),
            file_attributes: FileAttributes::new(),
        };
        self.block("SET_INFO (times)", f.set_info(info))
    }

    /// SMB2 LOCK with FAIL_IMMEDIATELY: a range held by another open
    /// fails with STATUS_LOCK_NOT_GRANTED (or FILE_LOCK_CONFLICT): `WouldBlock`.
    fn lock(&mut self, file: u64, offset: u64, length: u64, exclusive: bool) -> io::Result<()> {
        let f = self.file(file)?;
        let flags =
            lock_flags(if exclusive { LOCKFLAG_EXCLUSIVE } else { LOCKFLAG_SHARED } | LOCKFLAG_FAIL_IMMEDIATELY);
        let what = format!("LOCK {length} bytes at {offset}");
        self.block(&what, f.lock(vec![smb::LockElement { offset, length, flags }]))
    }

    fn unlock(&mut self, file: u64, offset: u64, length: u64) -> io::Result<()> {
        let f = self.file(file)?;
        let flags = lock_flags(LOCKFLAG_UNLOCK);
        let what = format!("UNLOCK {length} bytes at {offset}");
        self.block(&what, f.lock(vec![smb::LockElement { offset, length, flags }]))
    }

    fn queues(&self) -> bool {
        true
    }

    /// Up to `depth` requests in flight at once on this session.
    fn open_queued(
        &mut self,
        path: &str,
        depth: usize,
        buffer_len: usize,
    ) -> io::Result<Box<dyn iomatrix_backend::QueuedFile + '_>> {
        Ok(Box::new(queued::SmbQueued::open(self, path, depth, buffer_len)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_flags_are_the_values_ms_smb2_gives() {
        let bytes = |bits| lock_flags(bits).into_bytes();
        assert_eq!(bytes(LOCKFLAG_EXCLUSIVE | LOCKFLAG_FAIL_IMMEDIATELY), [0x12, 0, 0, 0]);
        assert_eq!(bytes(LOCKFLAG_SHARED | LOCKFLAG_FAIL_IMMEDIATELY), [0x11, 0, 0, 0]);
        assert_eq!(bytes(LOCKFLAG_UNLOCK), [0x04, 0, 0, 0]);
    }

    #[test]
    fn nt_statuses_map_to_the_kinds_callers_count() {
        use io::ErrorKind as K;
        assert_eq!(status_kind(0xC000_0034), K::NotFound);
        assert_eq!(status_kind(0xC000_003A), K::NotFound);
        assert_eq!(status_kind(0xC000_0055), K::WouldBlock);
        assert_eq!(status_kind(0xC000_0054), K::WouldBlock);
        assert_eq!(status_kind(0xC000_0035), K::AlreadyExists);
        assert_eq!(status_kind(0xC000_0001), K::Other);
    }

    #[test]
    fn only_a_reset_or_aborted_connection_is_tried_again() {
        #[derive(Debug, thiserror::Error)]
        #[error("Transport error: IO Error: {0}")]
        struct Wrapped(#[source] io::Error);
        for kind in [io::ErrorKind::ConnectionReset, io::ErrorKind::ConnectionAborted] {
            assert!(turned_away(&Wrapped(io::Error::from(kind))), "{kind:?}");
        }
        for kind in [io::ErrorKind::ConnectionRefused, io::ErrorKind::PermissionDenied] {
            assert!(!turned_away(&Wrapped(io::Error::from(kind))), "{kind:?}");
        }
        assert!(!turned_away(&io::Error::other("logon failure")));
    }

    #[test]
    fn urls_parse_and_passwords_come_from_the_environment_when_absent() {
        let none = || Ok(None);
        let u = SmbUrl::parse("smb://smbtest@10.0.0.2:4450/share/bench", none).unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.share.as_str(), u.path.as_str()),
            ("10.0.0.2", Some(4450), "share", "bench")
        );
        assert_eq!(u.user, "smbtest");
        let u = SmbUrl::parse("smb://u:pw@h/s", none).unwrap();
        assert_eq!(u.password, "pw");
        assert!(!format!("{u} {u:?}").contains("pw"), "the password is never printed");
        let u = SmbUrl::parse("smb://u@h/s", || Ok(Some("from-env".into()))).unwrap();
        assert_eq!(u.password, "from-env");
        assert!(SmbUrl::parse("smb://h", none).unwrap_err().0.contains("names no share"));
        assert!(SmbUrl::parse("smb://h:x/s", none).unwrap_err().0.contains("not a port number"));
        assert!(SmbUrl::parse("nfs://h/s", none).unwrap_err().0.contains("not an SMB target"));
    }
}
