//! Every backend writes a file and reads back exactly what it wrote, in order
//! and out of order, buffered and (where the backend allows) with O_DIRECT.
use iomatrix_backend::{AlignedBuf, FileIo, MmapFile, OpenHow, PsyncFile, StdioFile, SyncFile};
use std::path::Path;

const RECORD: usize = 8192;
const RECORDS: u64 = 16;

fn pattern(i: u64) -> Vec<u8> {
    (0..RECORD).map(|b| (b as u64 * 31 + i * 7) as u8).collect()
}

fn roundtrip<F: FileIo>(dir: &Path, direct: bool) {
    let path = dir.join(format!("{}-{direct}", F::KIND));
    let size = RECORD as u64 * RECORDS;
    let mut buf = AlignedBuf::new(RECORD);
    let mut f = F::open(&path, &OpenHow::create(size, direct)).unwrap();
    // Out of order on purpose: sync and stdio must seek, mmap must stay in bounds.
    for i in (0..RECORDS).rev() {
        buf.as_mut_slice().copy_from_slice(&pattern(i));
        f.write_at(buf.as_slice(), i * RECORD as u64).unwrap();
    }
    f.flush_to_storage().unwrap();
    f.close().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);

    let mut f = F::open(&path, &OpenHow::read(size, direct)).unwrap();
    for i in [3, 4, 5, 0, 15, 1] {
        f.read_at(buf.as_mut_slice(), i * RECORD as u64).unwrap();
        assert_eq!(buf.as_slice(), &pattern(i)[..], "{} record {i}", F::KIND);
    }
    let err = f.read_at(buf.as_mut_slice(), size).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof, "{}", F::KIND);
    f.close().unwrap();
}

fn mixed_directions<F: FileIo>(dir: &Path) {
    let path = dir.join(format!("{}-mixed", F::KIND));
    let size = RECORD as u64 * 4;
    let mut buf = AlignedBuf::new(RECORD);
    let mut f = F::open(&path, &OpenHow::create(size, false)).unwrap();
    for i in 0..4 {
        buf.as_mut_slice().copy_from_slice(&pattern(i));
        f.write_at(buf.as_slice(), i * RECORD as u64).unwrap();
    }
    // Read, write, read: stdio must flush and reposition between directions.
    f.read_at(buf.as_mut_slice(), RECORD as u64).unwrap();
    assert_eq!(buf.as_slice(), &pattern(1)[..]);
    buf.as_mut_slice().copy_from_slice(&pattern(9));
    f.write_at(buf.as_slice(), 2 * RECORD as u64).unwrap();
    f.read_at(buf.as_mut_slice(), 3 * RECORD as u64).unwrap();
    assert_eq!(buf.as_slice(), &pattern(3)[..]);
    f.read_at(buf.as_mut_slice(), 2 * RECORD as u64).unwrap();
    assert_eq!(buf.as_slice(), &pattern(9)[..], "{}", F::KIND);
    f.close().unwrap();
}

#[test]
fn every_backend_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    roundtrip::<SyncFile>(dir.path(), false);
    roundtrip::<PsyncFile>(dir.path(), false);
    roundtrip::<MmapFile>(dir.path(), false);
    roundtrip::<StdioFile>(dir.path(), false);
    mixed_directions::<SyncFile>(dir.path());
    mixed_directions::<PsyncFile>(dir.path());
    mixed_directions::<MmapFile>(dir.path());
    mixed_directions::<StdioFile>(dir.path());
}

#[test]
fn direct_backends_round_trip_where_the_file_system_allows() {
    let dir = tempfile::tempdir().unwrap();
    if let Err(e) = iomatrix_backend::probe_direct(dir.path()) {
        return iomatrix_testkit::skip(format!("{} refuses O_DIRECT ({e})", dir.path().display()));
    }
    roundtrip::<SyncFile>(dir.path(), true);
    roundtrip::<PsyncFile>(dir.path(), true);
}

#[test]
fn opening_a_missing_file_for_reading_fails() {
    let dir = tempfile::tempdir().unwrap();
    let err = PsyncFile::open(&dir.path().join("nope"), &OpenHow::read(4096, false)).err().unwrap();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}
