//! Parsing `/proc/self/mountinfo` and choosing the mount holding a path.
//!
//! A line looks like (see proc_pid_mountinfo(5)):
//! `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`
//! i.e. mount id, parent id, major:minor, root, mount point, per-mount
//! options, zero or more optional fields ended by a lone `-`, then file
//! system type, mount source and super options.

use std::path::Path;

/// One parsed line of mountinfo, with octal escapes decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: String,
    pub options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

impl MountEntry {
    /// Per-mount options and super options joined with a comma, as both
    /// appear in mountinfo (an option present in both appears twice).
    pub fn joined_options(&self) -> String {
        match (self.options.is_empty(), self.super_options.is_empty()) {
            (_, true) => self.options.clone(),
            (true, false) => self.super_options.clone(),
            (false, false) => format!("{},{}", self.options, self.super_options),
        }
    }
}

/// Decode the kernel's `\NNN` octal escapes (`\040` space, `\011` tab,
/// `\012` newline, `\134` backslash). Anything else is kept as is.
pub(crate) fn decode_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && is_octal_triplet(&b[i + 1..i + 4]) {
            let v = b[i + 1..i + 4].iter().fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_octal_triplet(t: &[u8]) -> bool {
    t.len() == 3 && t.iter().all(|d| (b'0'..=b'7').contains(d))
}

/// Parse one mountinfo line; `None` if it is malformed.
pub(crate) fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').filter(|f| !f.is_empty()).collect();
    if fields.len() < 7 {
        return None;
    }
    let (major, minor) = fields[2].split_once(':')?;
    let major = major.parse().ok()?;
    let minor = minor.parse().ok()?;
    // Optional fields start at index 6 and end at a lone "-".
    let sep = 6 + fields[6..].iter().position(|f| *f == "-")?;
    let fs_type = fields.get(sep + 1)?;
    let source = fields.get(sep + 2)?;
    let super_options = fields.get(sep + 3).copied().unwrap_or("");
    Some(MountEntry {
        major,
        minor,
        mount_point: decode_octal(fields[4]),
        options: fields[5].to_string(),
        fs_type: decode_octal(fs_type),
        source: decode_octal(source),
        super_options: decode_octal(super_options),
    })
}

/// Parse a whole mountinfo text, skipping malformed lines.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// The entry whose mount point is the longest component-wise prefix of
/// `path` (which should be canonical). When several entries share that
/// mount point, the last one wins: it is the top of the stack.
pub(crate) fn choose_mount<'a>(entries: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for e in entries {
        // Path::starts_with compares whole components: /mnt/a is not a
        // prefix of /mnt/ab.
        if !path.starts_with(Path::new(&e.mount_point)) {
            continue;
        }
        if best.is_none_or(|b| e.mount_point.len() >= b.mount_point.len()) {
            best = Some(e);
        }
    }
    best
}

/// Read and parse `/proc/self/mountinfo` of the calling process.
pub(crate) fn read_mountinfo() -> std::io::Result<Vec<MountEntry>> {
    let raw = std::fs::read("/proc/self/mountinfo")?;
    Ok(parse_mountinfo(&String::from_utf8_lossy(&raw)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard,errors=remount-ro
25 27 0:23 / /dev/shm rw,nosuid,nodev shared:2 master:3 - tmpfs tmpfs rw,size=24682416k
40 27 7:1 / /mnt/my\\040disk rw,noatime shared:7 master:2 propagate_from:1 - ext4 /dev/loop0p1 rw
41 27 0:45 / /mnt/a rw,relatime - tmpfs tmpfs rw
42 27 0:46 / /mnt/ab rw,relatime - tmpfs other rw
43 27 0:47 / /mnt/a rw,relatime - xfs /dev/sdb1 rw,attr2,inode64
44 27 0:48 /sub /srv/btr rw,relatime - btrfs /dev/sdc rw,space_cache=v2,subvol=/sub
45 27 0:49 / /home/u/remote rw,nosuid,nodev - fuse.sshfs u@host:/x rw,user_id=0,group_id=0
";

    #[test]
    fn parses_line_without_optional_fields() {
        let e = parse_mountinfo_line("22 27 0:21 / /proc rw,relatime - proc proc rw").unwrap();
        assert_eq!((e.major, e.minor), (0, 21));
        assert_eq!(e.mount_point, "/proc");
        assert_eq!(e.fs_type, "proc");
        assert_eq!(e.source, "proc");
        assert_eq!(e.joined_options(), "rw,relatime,rw");
    }

    #[test]
    fn parses_optional_fields_and_escapes() {
        let line = "40 27 7:1 / /mnt/my\\040disk rw,noatime shared:7 master:2 - ext4 /dev/loop0p1 rw,errors=remount-ro";
        let e = parse_mountinfo_line(line).unwrap();
        assert_eq!((e.major, e.minor), (7, 1));
        assert_eq!(e.mount_point, "/mnt/my disk");
        assert_eq!(e.options, "rw,noatime");
        assert_eq!(e.fs_type, "ext4");
        assert_eq!(e.source, "/dev/loop0p1");
        assert_eq!(e.super_options, "rw,errors=remount-ro");
        assert_eq!(e.joined_options(), "rw,noatime,rw,errors=remount-ro");
    }

    #[test]
    fn decodes_octal_escapes() {
        assert_eq!(decode_octal("/a\\040b"), "/a b");
        assert_eq!(decode_octal("/t\\011x\\012y\\134z"), "/t\tx\ny\\z");
        // Not an escape: too short, not octal, or out of byte range.
        assert_eq!(decode_octal("/x\\04"), "/x\\04");
        assert_eq!(decode_octal("/x\\089"), "/x\\089");
        assert_eq!(decode_octal("/x\\777"), "/x\\777");
        assert_eq!(decode_octal("trailing\\"), "trailing\\");
    }

    #[test]
    fn rejects_malformed_lines() {
        assert_eq!(parse_mountinfo_line(""), None);
        assert_eq!(parse_mountinfo_line("1 2 3:4 / /x rw"), None);
        assert_eq!(parse_mountinfo_line("1 2 3:4 / /x rw shared:1"), None); // no "-"
        assert_eq!(parse_mountinfo_line("1 2 x:4 / /x rw - ext4 /dev/x rw"), None);
        assert_eq!(parse_mountinfo_line("1 2 3:4 / /x rw -"), None);
        assert_eq!(parse_mountinfo(SAMPLE).len(), 9);
    }

    fn chosen(path: &str) -> MountEntry {
        let entries = parse_mountinfo(SAMPLE);
        choose_mount(&entries, Path::new(path)).unwrap().clone()
    }

    #[test]
    fn longest_component_prefix_wins() {
        assert_eq!(chosen("/").mount_point, "/");
        assert_eq!(chosen("/usr/lib").fs_type, "ext4");
        assert_eq!(chosen("/dev/shm/x").fs_type, "tmpfs");
        assert_eq!(chosen("/mnt/my disk/data").source, "/dev/loop0p1");
        // /mnt/ab must not be matched by /mnt/a, and vice versa.
        assert_eq!(chosen("/mnt/ab/c").source, "other");
        assert_eq!(chosen("/mnt/abc").mount_point, "/");
        assert_eq!(chosen("/home/u/remote/f").fs_type, "fuse.sshfs");
    }

    #[test]
    fn last_of_stacked_mounts_wins() {
        let e = chosen("/mnt/a/deep/file");
        assert_eq!(e.mount_point, "/mnt/a");
        assert_eq!(e.fs_type, "xfs");
        assert_eq!(e.source, "/dev/sdb1");
    }

    #[test]
    fn no_mount_for_relative_path() {
        let entries = parse_mountinfo(SAMPLE);
        assert_eq!(choose_mount(&entries, Path::new("relative/x")), None);
    }

    #[test]
    fn real_mountinfo_has_root() {
        let entries = read_mountinfo().unwrap();
        assert!(choose_mount(&entries, Path::new("/")).is_some());
    }
}
