//! iomatrix-nfs: iomatrix's own NFSv3 client, so a server is measured with
//! no mount and no client cache in between (seed 000: "I need to be able to
//! test NCP-on-Linux in an uncached state").
//!
//! - [`NfsUrl`]: `nfs://host[:port]/export[/path]` parsed and checked; the
//!   port, if given, is the server's portmapper (default 111).
//! - [`NfsSession`]: one connection to one export (over the pure-Rust
//!   `nfs3_client`, driven by a single-threaded runtime of its own so the
//!   calls are plain blocking calls), every call bounded by a timeout; what
//!   the server negotiated ([`ServerInfo`]: transfer sizes).
//! - [`NfsFs`]: the session as the benchmark's [`iomatrix_backend::RemoteFs`]:
//!   paths relative to the URL's folder, open files by number.
//! - [`NfsFile`]: a file handle with `read_at`/`write_at` in the server's
//!   transfer size, `commit` (the NFS meaning of fsync), and the folder
//!   operations a benchmark needs (`mkdir`, `create`, `remove`, `rmdir`).
//!
//! Errors ([`NfsError`]) name the server, the operation, the path and the
//! server's status (`NFS3ERR_NOENT`...), or the timeout that passed.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use nfs3_client::nfs3_types::nfs3::{
    self, createhow3, diropargs3, filename3, nfs_fh3, sattr3, set_mode3, stable_how, Nfs3Option, Nfs3Result,
};
use nfs3_client::nfs3_types::rpc::{auth_unix, opaque_auth};
use nfs3_client::nfs3_types::xdr_codec::Opaque;
use nfs3_client::Nfs3ConnectionBuilder;
use std::fmt;
use std::future::Future;
use std::time::Duration;

mod bounded;
mod fs;
pub use bounded::{MAX_REPLY, MAX_TRANSFER};
pub use fs::NfsFs;

use bounded::BoundedConnector;
use iomatrix_backend::MAX_LISTED;

type Connection = nfs3_client::Nfs3Connection<<BoundedConnector as nfs3_client::net::Connector>::Connection>;

/// `nfs://host[:port]/export[/path]`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NfsUrl {
    /// The server's name or address, as written in the URL.
    pub host: String,
    /// The server's portmapper (rpcbind) port.
    pub portmapper_port: u16,
    /// What the server exports, e.g. `/export`.
    pub export: String,
    /// Below the export, `/` for its root.
    pub path: String,
}

impl NfsUrl {
    /// The first path component is the export; the rest is a path below it.
    pub fn parse(text: &str) -> Result<NfsUrl, NfsError> {
        let rest = text
            .strip_prefix("nfs://")
            .ok_or_else(|| NfsError(format!("'{text}' is not an NFS target: write nfs://host[:port]/export[/path]")))?;
        let (authority, path) = rest.split_once('/').ok_or_else(|| {
            NfsError(format!(
                "'{text}' names no export: write nfs://host[:port]/export[/path], e.g. nfs://10.0.0.2/export"
            ))
        })?;
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| NfsError(format!("'{text}': port '{p}' is not a port number (1..65535)")))?,
            ),
            None => (authority, nfs3_client::nfs3_types::portmap::PMAP_PORT),
        };
        if host.is_empty() {
            return Err(NfsError(format!("'{text}' names no host: write nfs://host[:port]/export[/path]")));
        }
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let export =
            parts.next().ok_or_else(|| NfsError(format!("'{text}' names no export: write nfs://host/export")))?;
        let below: Vec<&str> = parts.collect();
        if below.contains(&"..") {
            return Err(NfsError(format!("'{text}': '..' is not allowed in the path")));
        }
        Ok(NfsUrl {
            host: host.to_string(),
            portmapper_port: port,
            export: format!("/{export}"),
            path: format!("/{}", below.join("/")),
        })
    }
}

impl fmt::Display for NfsUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nfs://{}:{}{}", self.host, self.portmapper_port, self.export)?;
        if self.path != "/" {
            f.write_str(&self.path)?;
        }
        Ok(())
    }
}

/// What went wrong, where, on which server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NfsError(pub String);

/// What the server said about itself at mount time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerInfo {
    /// Largest READ size (bytes, FSINFO's rtmax).
    pub read_max: u32,
    /// Preferred READ size (bytes, FSINFO's rtpref).
    pub read_pref: u32,
    /// Largest WRITE size (bytes, FSINFO's wtmax).
    pub write_max: u32,
    /// Preferred WRITE size (bytes, FSINFO's wtpref).
    pub write_pref: u32,
    /// The port the server's mount daemon answered on (from the portmapper).
    pub mount_port: u16,
    /// The port the server's NFSv3 service answered on (from the portmapper).
    pub nfs_port: u16,
}

/// A file or folder on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfsFile {
    handle: nfs_fh3,
    /// Its path below the export, for messages.
    pub path: String,
}

/// One connection to one export.
pub struct NfsSession {
    url: NfsUrl,
    runtime: tokio::runtime::Runtime,
    connection: Connection,
    timeout: Duration,
    /// What the server said about itself when this session mounted the export.
    pub info: ServerInfo,
}

impl NfsSession {
    /// Mounts the export (as uid/gid 0, AUTH_UNIX) within `timeout`.
    pub fn connect(url: &NfsUrl, timeout: Duration) -> Result<NfsSession, NfsError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| NfsError(format!("{url}: cannot start the NFS client's runtime: {e}")))?;
        let auth = auth_unix { stamp: 0, machinename: Opaque::borrowed(b"iomatrix"), uid: 0, gid: 0, gids: vec![] };
        let builder = Nfs3ConnectionBuilder::new(BoundedConnector, url.host.clone(), url.export.clone())
            .portmapper_port(url.portmapper_port)
            .credential(opaque_auth::auth_unix(&auth));
        let mount = runtime.block_on(async { tokio::time::timeout(timeout, builder.mount()).await });
        let mut connection = match mount {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(NfsError(format!("{url}: mounting {} failed: {e}", url.export))),
            Err(_) => {
                return Err(NfsError(format!(
                    "{url}: no answer from the server within {} s (is it up, and the link?)",
                    timeout.as_secs()
                )))
            }
        };
        let root = connection.root_nfs_fh3();
        let fsinfo = runtime.block_on(async {
            tokio::time::timeout(timeout, connection.fsinfo(&nfs3::FSINFO3args { fsroot: root })).await
        });
        let info = match fsinfo {
            Ok(Ok(Nfs3Result::Ok(ok))) => ServerInfo {
                read_max: ok.rtmax,
                read_pref: ok.rtpref,
                write_max: ok.wtmax,
                write_pref: ok.wtpref,
                mount_port: connection.mount_port,
                nfs_port: connection.nfs3_port,
            },
            Ok(Ok(Nfs3Result::Err((status, _)))) => return Err(NfsError(format!("{url}: FSINFO failed: {status}"))),
            Ok(Err(e)) => return Err(NfsError(format!("{url}: FSINFO failed: {e}"))),
            Err(_) => return Err(NfsError(format!("{url}: FSINFO got no answer within {} s", timeout.as_secs()))),
        };
        Ok(NfsSession { url: url.clone(), runtime, connection, timeout, info })
    }

    /// The URL this session was opened for; messages name it.
    pub fn url(&self) -> &NfsUrl {
        &self.url
    }

    /// The folder the URL names (its path below the export).
    pub fn root(&mut self) -> Result<NfsFile, NfsError> {
        let mut here = NfsFile { handle: self.connection.root_nfs_fh3(), path: "/".into() };
        for part in self.url.path.clone().split('/').filter(|p| !p.is_empty()) {
            here = self.lookup(&here, part)?;
        }
        Ok(here)
    }

    /// The entry `name` in folder `dir` (LOOKUP); an error names the path and the server's status.
    pub fn lookup(&mut self, dir: &NfsFile, name: &str) -> Result<NfsFile, NfsError> {
        let args =
            nfs3::LOOKUP3args { what: diropargs3 { dir: dir.handle.clone(), name: filename3::from(name.as_bytes()) } };
        let path = join(&dir.path, name);
        match block(&self.runtime, self.timeout, &self.url, &format!("LOOKUP {path}"), self.connection.lookup(&args))? {
            Nfs3Result::Ok(ok) => Ok(NfsFile { handle: ok.object, path }),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: LOOKUP {path}: {status}", self.url))),
        }
    }

    /// Makes folder `name` in `dir`, mode 0755 (MKDIR), and returns it.
    pub fn mkdir(&mut self, dir: &NfsFile, name: &str) -> Result<NfsFile, NfsError> {
        let args = nfs3::MKDIR3args {
            where_: diropargs3 { dir: dir.handle.clone(), name: filename3::from(name.as_bytes()) },
            attributes: sattr3 { mode: set_mode3::Some(0o755), ..sattr3::default() },
        };
        let path = join(&dir.path, name);
        match block(&self.runtime, self.timeout, &self.url, &format!("MKDIR {path}"), self.connection.mkdir(&args))? {
            Nfs3Result::Ok(ok) => match ok.obj {
                Nfs3Option::Some(handle) => Ok(NfsFile { handle, path }),
                Nfs3Option::None => self.lookup(dir, name),
            },
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: MKDIR {path}: {status}", self.url))),
        }
    }

    /// Creates (or truncates) a file.
    pub fn create(&mut self, dir: &NfsFile, name: &str) -> Result<NfsFile, NfsError> {
        let attributes = sattr3 { mode: set_mode3::Some(0o644), size: nfs3::set_size3::Some(0), ..sattr3::default() };
        self.create_how(dir, name, createhow3::UNCHECKED(attributes)).map_err(|(e, _)| e)
    }

    /// Creates a file that must not exist yet (GUARDED): the error's flag
    /// says whether it did (NFS3ERR_EXIST).
    pub fn create_new(&mut self, dir: &NfsFile, name: &str) -> Result<NfsFile, (NfsError, bool)> {
        let attributes = sattr3 { mode: set_mode3::Some(0o644), ..sattr3::default() };
        self.create_how(dir, name, createhow3::GUARDED(attributes))
    }

    fn create_how(&mut self, dir: &NfsFile, name: &str, how: createhow3) -> Result<NfsFile, (NfsError, bool)> {
        let args = nfs3::CREATE3args {
            where_: diropargs3 { dir: dir.handle.clone(), name: filename3::from(name.as_bytes()) },
            how,
        };
        let path = join(&dir.path, name);
        let answer =
            block(&self.runtime, self.timeout, &self.url, &format!("CREATE {path}"), self.connection.create(&args))
                .map_err(|e| (e, false))?;
        match answer {
            Nfs3Result::Ok(ok) => match ok.obj {
                Nfs3Option::Some(handle) => Ok(NfsFile { handle, path }),
                Nfs3Option::None => self.lookup(dir, name).map_err(|e| (e, false)),
            },
            Nfs3Result::Err((status, _)) => Err((
                NfsError(format!("{}: CREATE {path}: {status}", self.url)),
                status == nfs3::nfsstat3::NFS3ERR_EXIST,
            )),
        }
    }

    /// What `file` is and how big (GETATTR).
    pub fn getattr(&mut self, file: &NfsFile) -> Result<(nfs3::ftype3, u64), NfsError> {
        let args = nfs3::GETATTR3args { object: file.handle.clone() };
        let what = format!("GETATTR {}", file.path);
        match block(&self.runtime, self.timeout, &self.url, &what, self.connection.getattr(&args))? {
            Nfs3Result::Ok(ok) => Ok((ok.obj_attributes.type_, ok.obj_attributes.size)),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: {what}: {status}", self.url))),
        }
    }

    /// Every entry of folder `dir` (READDIRPLUS, as many calls as the
    /// server needs), without `.` and `..`: name, type and size.
    pub fn readdir(&mut self, dir: &NfsFile) -> Result<Vec<(String, nfs3::ftype3, u64)>, NfsError> {
        let mut entries = Vec::new();
        let mut cookie = 0;
        let mut cookieverf = nfs3::cookieverf3::default();
        let what = format!("READDIRPLUS {}", dir.path);
        loop {
            let args = nfs3::READDIRPLUS3args {
                dir: dir.handle.clone(),
                cookie,
                cookieverf,
                dircount: 64 * 1024,
                maxcount: 256 * 1024,
            };
            let ok = match block(&self.runtime, self.timeout, &self.url, &what, self.connection.readdirplus(&args))? {
                Nfs3Result::Ok(ok) => ok,
                Nfs3Result::Err((status, _)) => return Err(NfsError(format!("{}: {what}: {status}", self.url))),
            };
            cookieverf = ok.cookieverf;
            let before = cookie;
            for entry in &ok.reply.entries.0 {
                cookie = entry.cookie;
                let name = String::from_utf8_lossy(entry.name.as_ref()).into_owned();
                if name == "." || name == ".." {
                    continue;
                }
                let (kind, size) = match &entry.name_attributes {
                    Nfs3Option::Some(a) => (a.type_, a.size),
                    // The server left the attributes out: ask for them.
                    Nfs3Option::None => {
                        let file = self.lookup(dir, &name)?;
                        self.getattr(&file)?
                    }
                };
                entries.push((name, kind, size));
                if entries.len() > MAX_LISTED {
                    return Err(NfsError(iomatrix_backend::listing_too_long(&format!("{}: {what}", self.url))));
                }
            }
            if ok.reply.eof || ok.reply.entries.0.is_empty() {
                return Ok(entries);
            }
            if cookie == before {
                return Err(NfsError(format!(
                    "{}: {what}: the server's listing does not go on (it gave cookie {cookie} again)",
                    self.url
                )));
            }
        }
    }

    /// Removes file `name` from `dir` (REMOVE); folders go with [`NfsSession::rmdir`].
    pub fn remove(&mut self, dir: &NfsFile, name: &str) -> Result<(), NfsError> {
        let args = nfs3::REMOVE3args {
            object: diropargs3 { dir: dir.handle.clone(), name: filename3::from(name.as_bytes()) },
        };
        let path = join(&dir.path, name);
        match block(&self.runtime, self.timeout, &self.url, &format!("REMOVE {path}"), self.connection.remove(&args))? {
            Nfs3Result::Ok(_) => Ok(()),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: REMOVE {path}: {status}", self.url))),
        }
    }

    /// Sets the file's modification and access times to the server's clock (SETATTR).
    pub fn touch(&mut self, file: &NfsFile) -> Result<(), NfsError> {
        let args = nfs3::SETATTR3args {
            object: file.handle.clone(),
            new_attributes: sattr3 {
                atime: nfs3::set_atime::SET_TO_SERVER_TIME,
                mtime: nfs3::set_mtime::SET_TO_SERVER_TIME,
                ..sattr3::default()
            },
            guard: Nfs3Option::None,
        };
        let what = format!("SETATTR {} (times)", file.path);
        match block(&self.runtime, self.timeout, &self.url, &what, self.connection.setattr(&args))? {
            Nfs3Result::Ok(_) => Ok(()),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: {what}: {status}", self.url))),
        }
    }

    /// Renames `from_dir/from` to `to_dir/to`, replacing `to` where it
    /// exists (RENAME, as rename(2)).
    pub fn rename(&mut self, from_dir: &NfsFile, from: &str, to_dir: &NfsFile, to: &str) -> Result<(), NfsError> {
        let args = nfs3::RENAME3args {
            from: diropargs3 { dir: from_dir.handle.clone(), name: filename3::from(from.as_bytes()) },
            to: diropargs3 { dir: to_dir.handle.clone(), name: filename3::from(to.as_bytes()) },
        };
        let what = format!("RENAME {} to {}", join(&from_dir.path, from), join(&to_dir.path, to));
        match block(&self.runtime, self.timeout, &self.url, &what, self.connection.rename(&args))? {
            Nfs3Result::Ok(_) => Ok(()),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: {what}: {status}", self.url))),
        }
    }

    /// Removes the empty folder `name` from `dir` (RMDIR).
    pub fn rmdir(&mut self, dir: &NfsFile, name: &str) -> Result<(), NfsError> {
        let args =
            nfs3::RMDIR3args { object: diropargs3 { dir: dir.handle.clone(), name: filename3::from(name.as_bytes()) } };
        let path = join(&dir.path, name);
        match block(&self.runtime, self.timeout, &self.url, &format!("RMDIR {path}"), self.connection.rmdir(&args))? {
            Nfs3Result::Ok(_) => Ok(()),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: RMDIR {path}: {status}", self.url))),
        }
    }

    /// Writes all of `data` at `offset`, in pieces of the server's largest
    /// WRITE, UNSTABLE (the server may cache until [`commit`](Self::commit)).
    pub fn write_at(&mut self, file: &NfsFile, data: &[u8], offset: u64) -> Result<(), NfsError> {
        let piece = self.info.write_max.clamp(4096, MAX_TRANSFER) as usize;
        let mut done = 0;
        while done < data.len() {
            let chunk = &data[done..(done + piece).min(data.len())];
            let at = offset + done as u64;
            let args = nfs3::WRITE3args {
                file: file.handle.clone(),
                offset: at,
                count: chunk.len() as u32,
                stable: stable_how::UNSTABLE,
                data: Opaque::borrowed(chunk),
            };
            let what = format!("WRITE {} at byte {at}", file.path);
            match block(&self.runtime, self.timeout, &self.url, &what, self.connection.write(&args))? {
                Nfs3Result::Ok(ok) if ok.count as usize > chunk.len() => {
                    return Err(NfsError(format!(
                        "{}: {what}: the server says it wrote {} bytes of the {} sent",
                        self.url,
                        ok.count,
                        chunk.len()
                    )))
                }
                Nfs3Result::Ok(ok) if ok.count > 0 => done += ok.count as usize,
                Nfs3Result::Ok(_) => return Err(NfsError(format!("{}: {what}: the server wrote nothing", self.url))),
                Nfs3Result::Err((status, _)) => return Err(NfsError(format!("{}: {what}: {status}", self.url))),
            }
        }
        Ok(())
    }

    /// Fills `buf` from `offset`; a file that ends first is an error.
    pub fn read_at(&mut self, file: &NfsFile, buf: &mut [u8], offset: u64) -> Result<(), NfsError> {
        let piece = self.info.read_max.clamp(4096, MAX_TRANSFER) as usize;
        let mut done = 0;
        while done < buf.len() {
            let want = piece.min(buf.len() - done);
            let at = offset + done as u64;
            let args = nfs3::READ3args { file: file.handle.clone(), offset: at, count: want as u32 };
            let what = format!("READ {} at byte {at}", file.path);
            match block(&self.runtime, self.timeout, &self.url, &what, self.connection.read(&args))? {
                Nfs3Result::Ok(ok) => {
                    let got = ok.data.as_ref();
                    if got.is_empty() {
                        return Err(NfsError(format!("{}: {what}: the file ends there", self.url)));
                    }
                    let n = got.len().min(want);
                    buf[done..done + n].copy_from_slice(&got[..n]);
                    done += n;
                }
                Nfs3Result::Err((status, _)) => return Err(NfsError(format!("{}: {what}: {status}", self.url))),
            }
        }
        Ok(())
    }

    /// Makes everything written to `file` durable on the server (COMMIT).
    pub fn commit(&mut self, file: &NfsFile) -> Result<(), NfsError> {
        let args = nfs3::COMMIT3args { file: file.handle.clone(), offset: 0, count: 0 };
        let what = format!("COMMIT {}", file.path);
        match block(&self.runtime, self.timeout, &self.url, &what, self.connection.commit(&args))? {
            Nfs3Result::Ok(_) => Ok(()),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: {what}: {status}", self.url))),
        }
    }

    /// Bytes the caller may still write on the export (FSSTAT `abytes`).
    pub fn available_bytes(&mut self, file: &NfsFile) -> Result<u64, NfsError> {
        let args = nfs3::FSSTAT3args { fsroot: file.handle.clone() };
        let what = format!("FSSTAT {}", file.path);
        match block(&self.runtime, self.timeout, &self.url, &what, self.connection.fsstat(&args))? {
            Nfs3Result::Ok(ok) => Ok(ok.abytes),
            Nfs3Result::Err((status, _)) => Err(NfsError(format!("{}: {what}: {status}", self.url))),
        }
    }

    /// The file's size, from the server.
    pub fn size(&mut self, file: &NfsFile) -> Result<u64, NfsError> {
        self.getattr(file).map(|(_, size)| size)
    }
}

/// Runs one call to the server within `timeout`; `what` names it in errors.
fn block<T, E: fmt::Display>(
    runtime: &tokio::runtime::Runtime,
    timeout: Duration,
    url: &NfsUrl,
    what: &str,
    call: impl Future<Output = Result<T, E>>,
) -> Result<T, NfsError> {
    match runtime.block_on(async { tokio::time::timeout(timeout, call).await }) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(NfsError(format!("{url}: {what}: {e}"))),
        Err(_) => Err(NfsError(format!("{url}: {what}: no answer within {} s", timeout.as_secs()))),
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_bad_ones_say_why() {
        let u = NfsUrl::parse("nfs://10.0.0.2/export").unwrap();
        assert_eq!(
            (u.host.as_str(), u.portmapper_port, u.export.as_str(), u.path.as_str()),
            ("10.0.0.2", 111, "/export", "/")
        );
        let u = NfsUrl::parse("nfs://srv:1111/export/a/b/").unwrap();
        assert_eq!((u.portmapper_port, u.export.as_str(), u.path.as_str()), (1111, "/export", "/a/b"));
        assert_eq!(u.to_string(), "nfs://srv:1111/export/a/b");
        assert!(NfsUrl::parse("smb://x/share").unwrap_err().0.contains("not an NFS target"));
        assert!(NfsUrl::parse("nfs://host").unwrap_err().0.contains("names no export"));
        assert!(NfsUrl::parse("nfs:///export").unwrap_err().0.contains("names no host"));
        assert!(NfsUrl::parse("nfs://h:0/e").unwrap_err().0.contains("not a port number"));
        assert!(NfsUrl::parse("nfs://h/e/../x").unwrap_err().0.contains("'..'"));
    }

    #[test]
    fn a_server_that_is_not_there_is_named_within_the_timeout() {
        // Port 1 on loopback: nothing listens there, the connection is refused at once.
        let url = NfsUrl::parse("nfs://127.0.0.1:1/export").unwrap();
        let started = std::time::Instant::now();
        let err = NfsSession::connect(&url, Duration::from_secs(5)).err().expect("no server");
        assert!(err.0.starts_with("nfs://127.0.0.1:1/export: "), "{err}");
        assert!(started.elapsed() < Duration::from_secs(6));
    }

    /// A "server" that answers the first call (the portmapper's GETPORT) with a record header
    /// announcing a 2 GiB reply, then keeps the connection open: the client refuses the reply at
    /// its header, at once, instead of sizing a 2 GiB buffer by it and waiting out the timeout.
    #[test]
    fn a_reply_announced_larger_than_any_request_is_refused_at_its_header() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut call = [0u8; 4];
            conn.read_exact(&mut call).unwrap();
            conn.write_all(&0xffff_ffffu32.to_be_bytes()).unwrap();
            // Held open until the client has gone: it must not wait for the 2 GiB.
            let _ = conn.read(&mut vec![0u8; 65536]);
        });
        let url = NfsUrl::parse(&format!("nfs://127.0.0.1:{port}/export")).unwrap();
        let started = std::time::Instant::now();
        let err = NfsSession::connect(&url, Duration::from_secs(10)).err().expect("refused");
        assert!(started.elapsed() < Duration::from_secs(5), "{err}");
        assert!(err.0.contains("2147483647 bytes") && err.0.contains("refused, not read"), "{err}");
        server.join().unwrap();
    }
}
