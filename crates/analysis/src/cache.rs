//! Whether a run's figures measure the storage or the page cache: decided here once, for the
//! warning a run starts with, the `files_vs_ram` condition it stores, and the summary it ends
//! with.

use iomatrix_core::figures::CachedAtStart;

/// What a run's figures measure, as far as the page cache goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheVerdict {
    /// O_DIRECT: every request went to the storage.
    Bypassed,
    /// The files are at least twice the RAM: most requests miss the cache.
    FilesExceedTwiceRam {
        /// The machine's RAM in bytes.
        ram_bytes: u64,
    },
    /// The files exceed the RAM, but not twice over: part of what was read came from the cache.
    Partly {
        /// The machine's RAM in bytes.
        ram_bytes: u64,
    },
    /// The suite drops the page cache before it reads (a cold walk, `--drop-caches`): reads come
    /// from the storage.
    Dropped,
    /// The suite dropped the page cache before it read, but a meaningful part of the files
    /// stayed cached (counted with mincore after the drop: pages another process maps or has
    /// locked stay): that part of the reads came from the cache.
    DroppedButCached {
        /// The files' bytes still cached after the drop.
        cached_bytes: u64,
        /// The files' bytes in all.
        file_bytes: u64,
    },
    /// Every file fits in the RAM: the figures measure the page cache.
    Cached {
        /// The machine's RAM in bytes.
        ram_bytes: u64,
    },
    /// Through iomatrix's own protocol client, which keeps no cache: the server's cache, which a
    /// client cannot see, may serve what it asks.
    Server,
    /// Through a protocol client to a server whose RAM is known (the lab's published facts, or
    /// `--describe server=FILE`): every file fits in it, so the server's page cache may serve
    /// every read.
    ServerCached {
        /// The server's RAM in bytes.
        ram_bytes: u64,
    },
    /// The files exceed the server's RAM, but not twice over: part of the reads may come from
    /// the server's cache.
    ServerPartly {
        /// The server's RAM in bytes.
        ram_bytes: u64,
    },
    /// The files are at least twice the server's RAM: most reads miss the server's cache.
    ServerExceedsTwiceRam {
        /// The server's RAM in bytes.
        ram_bytes: u64,
    },
    /// The target's file system lives in RAM (tmpfs, ramfs): whatever the flags, the figures
    /// measure memory.
    InMemory {
        /// The file system's type ("tmpfs", "ramfs").
        fs_type: &'static str,
    },
    /// The machine's RAM is not known.
    Unknown,
}

/// File systems whose files live in RAM, by the name /proc/mounts gives them (devtmpfs is /dev's
/// tmpfs).
const IN_MEMORY: [&str; 3] = ["tmpfs", "ramfs", "devtmpfs"];

impl CacheVerdict {
    /// The verdict for a run whose files take `peak_bytes` at most, on a machine of `ram_bytes`
    /// (0: not known); `direct`: O_DIRECT; `on_server`: through a protocol client.
    pub fn of(direct: bool, peak_bytes: u64, ram_bytes: u64, on_server: bool) -> CacheVerdict {
        CacheVerdict::on(direct, peak_bytes, ram_bytes, on_server, "")
    }

    /// [`CacheVerdict::of`] on a file system of `fs_type` (`/proc/mounts`' name): one in RAM
    /// measures memory whatever else holds.
    pub fn on(direct: bool, peak_bytes: u64, ram_bytes: u64, on_server: bool, fs_type: &str) -> CacheVerdict {
        if let Some(fs_type) = IN_MEMORY.iter().find(|t| **t == fs_type).filter(|_| !on_server) {
            CacheVerdict::InMemory { fs_type }
        } else if on_server {
            CacheVerdict::Server
        } else if direct {
            CacheVerdict::Bypassed
        } else if ram_bytes == 0 {
            CacheVerdict::Unknown
        } else if peak_bytes < ram_bytes {
            CacheVerdict::Cached { ram_bytes }
        } else if peak_bytes < ram_bytes.saturating_mul(2) {
            CacheVerdict::Partly { ram_bytes }
        } else {
            CacheVerdict::FilesExceedTwiceRam { ram_bytes }
        }
    }

    /// Through a protocol client to a server of `server_ram_bytes` (0: not known, the plain
    /// [`CacheVerdict::Server`]): the server's RAM decides, as the machine's does for a local
    /// target; O_DIRECT at the client does not bypass the server's cache.
    pub fn on_server(peak_bytes: u64, server_ram_bytes: u64) -> CacheVerdict {
        let ram_bytes = server_ram_bytes;
        if ram_bytes == 0 {
            CacheVerdict::Server
        } else if peak_bytes < ram_bytes {
            CacheVerdict::ServerCached { ram_bytes }
        } else if peak_bytes < ram_bytes.saturating_mul(2) {
            CacheVerdict::ServerPartly { ram_bytes }
        } else {
            CacheVerdict::ServerExceedsTwiceRam { ram_bytes }
        }
    }

    /// The verdict once the cells are stored: a drop ([`CacheVerdict::Dropped`]) after which the
    /// cell that kept most cached kept a meaningful part ([`CachedAtStart::stayed`]) is
    /// [`CacheVerdict::DroppedButCached`]; any other verdict, or cells that did not count, stay.
    #[must_use]
    pub fn after_drop(self, counted: impl IntoIterator<Item = CachedAtStart>) -> CacheVerdict {
        if self != CacheVerdict::Dropped {
            return self;
        }
        match counted.into_iter().filter(CachedAtStart::stayed).max_by(|a, b| a.percent().total_cmp(&b.percent())) {
            Some(held) => {
                CacheVerdict::DroppedButCached { cached_bytes: held.cached_bytes, file_bytes: held.file_bytes }
            }
            None => self,
        }
    }

    /// The figures come from a cache, wholly or in part (this machine's, or a server's whose RAM
    /// is known): the warning and the summary say how to measure the storage instead.
    pub fn cached(self) -> bool {
        matches!(
            self,
            CacheVerdict::Cached { .. }
                | CacheVerdict::Partly { .. }
                | CacheVerdict::DroppedButCached { .. }
                | CacheVerdict::InMemory { .. }
                | CacheVerdict::ServerCached { .. }
                | CacheVerdict::ServerPartly { .. }
        )
    }

    /// The server's RAM the verdict weighed, where it weighed one.
    pub fn server_ram_bytes(self) -> Option<u64> {
        match self {
            CacheVerdict::ServerCached { ram_bytes }
            | CacheVerdict::ServerPartly { ram_bytes }
            | CacheVerdict::ServerExceedsTwiceRam { ram_bytes } => Some(ram_bytes),
            _ => None,
        }
    }

    /// The `files_vs_ram` condition of a run through a protocol client to a server of known RAM.
    pub fn files_vs_server_ram(peak_bytes: u64, server_ram_bytes: u64) -> &'static str {
        match CacheVerdict::on_server(peak_bytes, server_ram_bytes) {
            CacheVerdict::ServerCached { .. } => "all files fit in the server's RAM",
            CacheVerdict::ServerPartly { .. } | CacheVerdict::ServerExceedsTwiceRam { .. } => {
                "files exceed the server's RAM"
            }
            _ => CacheVerdict::files_vs_ram(peak_bytes, 0, true),
        }
    }

    /// The `files_vs_ram` condition a run stores, by the files' size alone (O_DIRECT or not; its
    /// words kept from before this type, so stored runs and new ones read alike).
    pub fn files_vs_ram(peak_bytes: u64, ram_bytes: u64, on_server: bool) -> &'static str {
        match CacheVerdict::of(false, peak_bytes, ram_bytes, on_server) {
            CacheVerdict::Server => "unknown: the server's RAM (its cache) is what counts, and a client cannot see it",
            CacheVerdict::Unknown => "unknown",
            CacheVerdict::Cached { .. } => "all files fit in RAM",
            CacheVerdict::ServerCached { .. } => "all files fit in the server's RAM",
            CacheVerdict::ServerPartly { .. } | CacheVerdict::ServerExceedsTwiceRam { .. } => {
                "files exceed the server's RAM"
            }
            CacheVerdict::Bypassed
            | CacheVerdict::Dropped
            | CacheVerdict::DroppedButCached { .. }
            | CacheVerdict::InMemory { .. }
            | CacheVerdict::Partly { .. }
            | CacheVerdict::FilesExceedTwiceRam { .. } => "files exceed RAM",
        }
    }

    /// A size for `--file-size` and its kin that no cache of this machine holds: twice the RAM,
    /// rounded up to a whole GiB, as the size flags take it (`34g`). None where the RAM is not known.
    pub fn twice_ram_flag(ram_bytes: u64) -> Option<String> {
        const GIB: u64 = 1 << 30;
        (ram_bytes > 0).then(|| format!("{}g", ram_bytes.saturating_mul(2).div_ceil(GIB)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_verdict_follows_direct_io_the_files_and_the_ram() {
        assert_eq!(CacheVerdict::of(true, GIB, 16 * GIB, false), CacheVerdict::Bypassed);
        assert_eq!(CacheVerdict::of(false, GIB, 16 * GIB, false), CacheVerdict::Cached { ram_bytes: 16 * GIB });
        assert_eq!(CacheVerdict::of(false, 20 * GIB, 16 * GIB, false), CacheVerdict::Partly { ram_bytes: 16 * GIB });
        assert_eq!(
            CacheVerdict::of(false, 32 * GIB, 16 * GIB, false),
            CacheVerdict::FilesExceedTwiceRam { ram_bytes: 16 * GIB }
        );
        assert_eq!(CacheVerdict::of(false, GIB, 0, false), CacheVerdict::Unknown);
        assert_eq!(CacheVerdict::of(true, GIB, 16 * GIB, true), CacheVerdict::Server);
        assert!(CacheVerdict::of(false, 20 * GIB, 16 * GIB, false).cached());
        assert!(!CacheVerdict::of(true, GIB, 16 * GIB, false).cached());
        assert_eq!(CacheVerdict::on(true, GIB, 16 * GIB, false, "tmpfs"), CacheVerdict::InMemory { fs_type: "tmpfs" });
        assert_eq!(
            CacheVerdict::on(true, GIB, 16 * GIB, false, "devtmpfs"),
            CacheVerdict::InMemory { fs_type: "devtmpfs" }
        );
        assert_eq!(CacheVerdict::on(true, GIB, 16 * GIB, false, "ext4"), CacheVerdict::Bypassed);
        assert_eq!(CacheVerdict::files_vs_ram(GIB, 16 * GIB, false), "all files fit in RAM", "O_DIRECT or not");
    }

    #[test]
    fn a_servers_known_ram_decides_the_verdict_as_the_machines_does() {
        assert_eq!(CacheVerdict::on_server(GIB, 0), CacheVerdict::Server, "unknown RAM: the plain server verdict");
        assert_eq!(CacheVerdict::on_server(GIB, 16 * GIB), CacheVerdict::ServerCached { ram_bytes: 16 * GIB });
        assert_eq!(CacheVerdict::on_server(20 * GIB, 16 * GIB), CacheVerdict::ServerPartly { ram_bytes: 16 * GIB });
        assert_eq!(
            CacheVerdict::on_server(32 * GIB, 16 * GIB),
            CacheVerdict::ServerExceedsTwiceRam { ram_bytes: 16 * GIB }
        );
        assert!(CacheVerdict::on_server(GIB, 16 * GIB).cached());
        assert!(!CacheVerdict::on_server(32 * GIB, 16 * GIB).cached());
        assert_eq!(CacheVerdict::on_server(GIB, 16 * GIB).server_ram_bytes(), Some(16 * GIB));
        assert_eq!(CacheVerdict::files_vs_server_ram(GIB, 16 * GIB), "all files fit in the server's RAM");
        assert_eq!(CacheVerdict::files_vs_server_ram(32 * GIB, 16 * GIB), "files exceed the server's RAM");
        assert!(CacheVerdict::files_vs_server_ram(GIB, 0).starts_with("unknown: the server's RAM"));
    }

    #[test]
    fn a_drop_that_left_a_part_cached_is_no_longer_a_drop() {
        let held = |cached_bytes: u64| CachedAtStart { cached_bytes, file_bytes: 256 << 20 };
        let dropped = CacheVerdict::Dropped;
        assert_eq!(dropped.after_drop([held(0), held(4096)]), dropped, "a page is no part");
        assert_eq!(dropped.after_drop([]), dropped, "nothing counted: the verdict stays");
        let kept = dropped.after_drop([held(0), held(256 << 20), held(64 << 20)]);
        assert_eq!(kept, CacheVerdict::DroppedButCached { cached_bytes: 256 << 20, file_bytes: 256 << 20 });
        assert!(kept.cached());
        let cached = CacheVerdict::Cached { ram_bytes: 16 * GIB };
        assert_eq!(cached.after_drop([held(256 << 20)]), cached, "only a drop is judged by its count");
    }

    #[test]
    fn twice_the_ram_is_rounded_up_to_a_whole_gib() {
        assert_eq!(CacheVerdict::twice_ram_flag(16 * GIB).as_deref(), Some("32g"));
        assert_eq!(CacheVerdict::twice_ram_flag(7 * GIB + 1).as_deref(), Some("15g"));
        assert_eq!(CacheVerdict::twice_ram_flag(0), None);
    }
}
