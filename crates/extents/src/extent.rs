//! One extent as FIEMAP reports it ([`Extent`]: logical and physical
//! offset, length, `fe_flags`), the `fe_flags` bits (linux/fiemap.h) and
//! their names as `filefrag -v` prints them ([`flag_names`]).

/// One extent, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extent {
    /// Offset in the file (bytes).
    pub logical: u64,
    /// Offset on the device (bytes).
    pub physical: u64,
    /// Length (bytes).
    pub length: u64,
    /// FIEMAP's `fe_flags` bits (the `FIEMAP_EXTENT_*` constants).
    pub flags: u32,
}

/// Last extent of the file.
pub const FIEMAP_EXTENT_LAST: u32 = 0x0000_0001;
/// Data location unknown.
pub const FIEMAP_EXTENT_UNKNOWN: u32 = 0x0000_0002;
/// Location still pending (delayed allocation); sets UNKNOWN.
pub const FIEMAP_EXTENT_DELALLOC: u32 = 0x0000_0004;
/// Data cannot be read while the file system is unmounted (e.g. compressed).
pub const FIEMAP_EXTENT_ENCODED: u32 = 0x0000_0008;
/// Offsets not block aligned.
pub const FIEMAP_EXTENT_NOT_ALIGNED: u32 = 0x0000_0100;
/// Data stored with the metadata (inline).
pub const FIEMAP_EXTENT_DATA_INLINE: u32 = 0x0000_0200;
/// Several files' tails packed in one block.
pub const FIEMAP_EXTENT_DATA_TAIL: u32 = 0x0000_0400;
/// Space allocated, not written (preallocated).
pub const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x0000_0800;
/// File system merged block-mapped ranges into this extent.
pub const FIEMAP_EXTENT_MERGED: u32 = 0x0000_1000;
/// Space shared with other files (reflinks, snapshots).
pub const FIEMAP_EXTENT_SHARED: u32 = 0x0000_2000;

const FLAG_NAMES: [(u32, &str); 11] = [
    (FIEMAP_EXTENT_LAST, "last"),
    (FIEMAP_EXTENT_UNKNOWN, "unknown"),
    (FIEMAP_EXTENT_DELALLOC, "delalloc"),
    (FIEMAP_EXTENT_ENCODED, "encoded"),
    (0x0000_0080, "encrypted"),
    (FIEMAP_EXTENT_NOT_ALIGNED, "not_aligned"),
    (FIEMAP_EXTENT_DATA_INLINE, "inline"),
    (FIEMAP_EXTENT_DATA_TAIL, "tail_packed"),
    (FIEMAP_EXTENT_UNWRITTEN, "unwritten"),
    (FIEMAP_EXTENT_MERGED, "merged"),
    (FIEMAP_EXTENT_SHARED, "shared"),
];

/// The names of the `fe_flags` bits set in `flags`, as `filefrag -v` prints them.
pub fn flag_names(flags: u32) -> Vec<&'static str> {
    FLAG_NAMES.iter().filter(|(bit, _)| flags & bit != 0).map(|(_, name)| *name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_have_filefrags_names() {
        assert_eq!(flag_names(FIEMAP_EXTENT_LAST | FIEMAP_EXTENT_UNWRITTEN), vec!["last", "unwritten"]);
        assert!(flag_names(0).is_empty());
    }
}
