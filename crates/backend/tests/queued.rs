//! The submit/reap seam against real files and the real kernel: io_uring at
//! several depths and the synchronous backends through `Immediate` write a
//! file at random offsets with the queue kept full and read every record back.
use iomatrix_backend::{
    default_submit_batch, open_queued, probe_direct, probe_io_uring, Completion, OpenHow, QueuedFile, Request,
    Submitted, UringFile,
};
use iomatrix_core::BackendKind;
use iomatrix_testkit::skip;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

const RECORD: usize = 64 << 10;
const FILE_SIZE: u64 = 4 << 20;
const RECORDS: u64 = FILE_SIZE / RECORD as u64;

/// The record at `offset`: 8-byte words holding `offset + word index`, so a
/// record read from the wrong place (or not read at all) cannot pass.
fn fill(buf: &mut [u8], offset: u64) {
    for (i, word) in buf.chunks_exact_mut(8).enumerate() {
        word.copy_from_slice(&(offset + i as u64).to_le_bytes());
    }
}

fn holds(buf: &[u8], offset: u64) -> bool {
    buf.chunks_exact(8).enumerate().all(|(i, word)| word == (offset + i as u64).to_le_bytes())
}

/// Distinct record offsets in a shuffled order.
fn shuffled_offsets(seed: u64) -> Vec<u64> {
    let mut offsets: Vec<u64> = (0..RECORDS).map(|i| i * RECORD as u64).collect();
    iomatrix_random::Generator::seeded(seed).shuffle(&mut offsets);
    offsets
}

/// Runs every offset through the file, keeping the queue full: submit into
/// free slots until the backend says Busy (or slots run out), then reap.
/// Returns (completions, bytes, deepest queue seen).
fn pass(f: &mut dyn QueuedFile, write: bool, offsets: &[u64]) -> (usize, u64, usize) {
    let depth = f.depth();
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut offset_of = vec![u64::MAX; depth];
    let mut next = offsets.iter().copied().peekable();
    let (mut completions, mut bytes, mut deepest) = (0, 0, 0);
    let mut out: Vec<Completion> = Vec::new();
    while next.peek().is_some() || f.in_flight() > 0 {
        while let (Some(&offset), Some(&slot)) = (next.peek(), free.last()) {
            if write {
                fill(&mut f.buffer(slot)[..RECORD], offset);
            }
            match f.submit(Request { slot, write, offset, len: RECORD }).unwrap() {
                Submitted::Done | Submitted::Queued => {
                    free.pop();
                    next.next();
                    offset_of[slot] = offset;
                }
                Submitted::Busy => break,
            }
        }
        deepest = deepest.max(f.in_flight());
        f.reap(1, &mut out).unwrap();
        for c in out.drain(..) {
            let n = c.result.unwrap_or_else(|e| panic!("{}: slot {} failed: {e}", f.describe(), c.slot));
            assert_eq!(n, RECORD);
            if !write {
                assert!(holds(&f.buffer(c.slot)[..RECORD], offset_of[c.slot]), "record at {}", offset_of[c.slot]);
            }
            completions += 1;
            bytes += n as u64;
            free.push(c.slot);
        }
    }
    (completions, bytes, deepest)
}

fn roundtrip(kind: BackendKind, depth: usize, dir: &Path, direct: bool) {
    let path = dir.join(format!("{kind}-{depth}-{direct}"));
    let label = format!("{kind} depth {depth} direct {direct}");

    let mut f = open_queued(kind, &path, &OpenHow::create(FILE_SIZE, direct), depth, RECORD).unwrap();
    eprintln!("{label}: {}", f.describe());
    let (completions, bytes, deepest) = pass(f.as_mut(), true, &shuffled_offsets(depth as u64));
    assert_eq!((completions, bytes), (RECORDS as usize, FILE_SIZE), "{label}: write");
    assert_eq!(deepest, depth, "{label}: the queue never filled");
    f.flush_to_storage().unwrap();
    f.close().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), FILE_SIZE);

    let mut f = open_queued(kind, &path, &OpenHow::read(FILE_SIZE, direct), depth, RECORD).unwrap();
    let (completions, bytes, _) = pass(f.as_mut(), false, &shuffled_offsets(depth as u64 + 77));
    assert_eq!((completions, bytes), (RECORDS as usize, FILE_SIZE), "{label}: read");
    f.close().unwrap();
}

/// Whether io_uring works here; if not, the calling test skips (its io_uring
/// part, or all of it). Call it on the test's own thread, not in `within`.
fn uring_available() -> bool {
    match probe_io_uring() {
        Ok(support) => {
            eprintln!("io_uring: {support:?}");
            true
        }
        Err(reason) => {
            skip(format!("io_uring unusable here: {reason}"));
            false
        }
    }
}

#[test]
fn queued_round_trip_buffered() {
    let dir = tempfile::tempdir().unwrap();
    roundtrip(BackendKind::Psync, 1, dir.path(), false);
    roundtrip(BackendKind::Sync, 1, dir.path(), false);
    if uring_available() {
        for depth in [1, 4, 32] {
            roundtrip(BackendKind::IoUring, depth, dir.path(), false);
        }
    }
}

#[test]
fn queued_round_trip_direct() {
    let dir = tempfile::tempdir().unwrap();
    if let Err(e) = probe_direct(dir.path()) {
        return skip(format!("{} refuses O_DIRECT ({e})", dir.path().display()));
    }
    roundtrip(BackendKind::Psync, 1, dir.path(), true);
    roundtrip(BackendKind::Sync, 1, dir.path(), true);
    if uring_available() {
        for depth in [1, 4, 32] {
            roundtrip(BackendKind::IoUring, depth, dir.path(), true);
        }
    }
}

#[test]
fn unregistered_io_uring_round_trips() {
    if !uring_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plain");
    let mut f = UringFile::open(&path, &OpenHow::create(FILE_SIZE, false), 8, RECORD, false).unwrap();
    assert_eq!(f.registered(), (false, false));
    assert!(f.describe().contains("plain buffers, plain fd"), "{}", f.describe());
    assert_eq!(pass(&mut f, true, &shuffled_offsets(5)).1, FILE_SIZE);
    assert_eq!(pass(&mut f, false, &shuffled_offsets(6)).1, FILE_SIZE);
    Box::new(f).close().unwrap();
}

/// Runs `work` on its own thread and fails the test if it takes longer than
/// `secs` (a hang), instead of hanging the test run.
fn within<T: Send + 'static>(secs: u64, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung for more than {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the worker panicked"),
    }
}

/// Reads past the end and across it: both complete with UnexpectedEof.
fn eof_reads(kind: BackendKind, depth: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short");
    std::fs::write(&path, vec![7u8; RECORD]).unwrap();
    let mut f = open_queued(kind, &path, &OpenHow::read(RECORD as u64, false), depth, RECORD).unwrap();
    let mut out = Vec::new();
    // Entirely past the end, then straddling it (a short read, then 0 bytes).
    for offset in [RECORD as u64 * 3, RECORD as u64 / 2] {
        f.submit(Request { slot: 0, write: false, offset, len: RECORD }).unwrap();
        f.reap(1, &mut out).unwrap();
        let c = out.pop().unwrap();
        assert_eq!(c.slot, 0);
        let err = c.result.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnexpectedEof, "{kind} at {offset}: {err}");
        if kind == BackendKind::IoUring && offset < RECORD as u64 {
            // The short first read was resubmitted for the rest, which found the end.
            assert!(err.to_string().contains(&format!("after {} bytes", RECORD / 2)), "{err}");
        }
        assert_eq!(f.in_flight(), 0);
    }
    // The file is still usable.
    f.submit(Request { slot: 0, write: false, offset: 0, len: RECORD }).unwrap();
    f.reap(1, &mut out).unwrap();
    assert_eq!(out.pop().unwrap().result.unwrap(), RECORD);
    assert!(f.buffer(0)[..RECORD].iter().all(|&b| b == 7));
    f.close().unwrap();
}

#[test]
fn reading_past_the_end_is_an_error_completion() {
    let uring = uring_available();
    within(60, move || {
        eof_reads(BackendKind::Psync, 1);
        eof_reads(BackendKind::Sync, 1);
        if uring {
            eof_reads(BackendKind::IoUring, 4);
        }
    });
}

#[test]
fn bad_depths_and_unqueueable_backends_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let how = OpenHow::create(FILE_SIZE, false);
    let refused = |kind, depth| match open_queued(kind, &path, &how, depth, RECORD) {
        Ok(f) => panic!("{kind} depth {depth} accepted: {}", f.describe()),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{kind} depth {depth}: {e}");
            e.to_string()
        }
    };
    for kind in [BackendKind::Psync, BackendKind::Sync] {
        for depth in [0, 2, 1 << 20] {
            let msg = refused(kind, depth);
            assert!(msg.contains("must be 1"), "{msg}");
        }
    }
    for kind in [BackendKind::Mmap, BackendKind::Stdio] {
        let msg = refused(kind, 1);
        assert!(msg.contains("cannot queue; use psync, sync or io_uring"), "{msg}");
    }
    if let Ok(support) = probe_io_uring() {
        let limit = support.max_depth.to_string();
        for depth in [0, 1 << 20, support.max_depth as usize + 1] {
            let msg = refused(BackendKind::IoUring, depth);
            assert!(msg.contains(&limit) && msg.contains("IORING_MAX_ENTRIES"), "{msg}");
        }
        // The limit itself is accepted, memory permitting (unprivileged users
        // pay for ring memory out of RLIMIT_MEMLOCK).
        match open_queued(BackendKind::IoUring, &path, &how, support.max_depth as usize, 4096) {
            Ok(f) => f.close().unwrap(),
            Err(e) => assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}"),
        }
    }
    let msg = open_queued(BackendKind::Psync, &path, &how, 1, 0).err().unwrap().to_string();
    assert!(msg.contains("buffer"), "{msg}");
}

/// Misuse is an Err from submit/reap; a full queue is Busy.
fn misuse(kind: BackendKind, depth: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("misuse");
    let mut f = open_queued(kind, &path, &OpenHow::create(FILE_SIZE, false), depth, RECORD).unwrap();
    let req = |slot| Request { slot, write: true, offset: slot as u64 * RECORD as u64, len: RECORD };
    let invalid = |r: std::io::Result<Submitted>| assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidInput);
    invalid(f.submit(req(depth)));
    invalid(f.submit(Request { len: RECORD + 1, ..req(0) }));
    invalid(f.submit(Request { len: 0, ..req(0) }));
    assert_eq!(f.reap(1, &mut Vec::new()).unwrap_err().kind(), ErrorKind::InvalidInput);
    for slot in 0..depth {
        assert_ne!(f.submit(req(slot)).unwrap(), Submitted::Busy);
    }
    assert_eq!(f.in_flight(), depth);
    assert_eq!(f.submit(req(0)).unwrap(), Submitted::Busy);
    if depth > 1 {
        // One slot back, but slot 1 is still in flight: misuse, not Busy.
        let mut out = Vec::new();
        while out.iter().all(|c: &Completion| c.slot != 0) {
            f.reap(1, &mut out).unwrap();
        }
        if let Some(busy) = (0..depth).find(|s| out.iter().all(|c| c.slot != *s)) {
            invalid(f.submit(req(busy)));
        }
    }
    let mut out = Vec::new();
    let in_flight = f.in_flight();
    f.reap(in_flight, &mut out).unwrap();
    assert!(out.iter().all(|c| c.result.is_ok()));
    assert_eq!(f.in_flight(), 0);
    f.close().unwrap();
}

#[test]
fn misuse_is_refused_and_a_full_queue_is_busy() {
    misuse(BackendKind::Psync, 1);
    if uring_available() {
        misuse(BackendKind::IoUring, 1);
        misuse(BackendKind::IoUring, 8);
    }
}

#[test]
fn dropping_with_requests_in_flight_drains_them() {
    if !uring_available() {
        return;
    }
    within(120, || {
        let dir = tempfile::tempdir().unwrap();
        let depth = 32;
        for (round, register) in [(0, true), (1, false), (2, true)] {
            let path = dir.path().join(format!("drop-{round}"));
            let mut f = UringFile::open(&path, &OpenHow::create(FILE_SIZE, false), depth, RECORD, register).unwrap();
            for slot in 0..depth {
                let offset = slot as u64 * RECORD as u64;
                fill(&mut f.buffer(slot)[..RECORD], offset);
                assert_eq!(f.submit(Request { slot, write: true, offset, len: RECORD }).unwrap(), Submitted::Queued);
            }
            let mut reaped = Vec::new();
            if round == 2 {
                // Into the kernel, then dropped while running (not merely queued).
                // Fast page-cache writes may already be done: those come back here.
                f.reap(0, &mut reaped).unwrap();
            }
            assert_eq!(f.in_flight() + reaped.len(), depth);
            assert!(reaped.iter().all(|c| c.result.as_ref().is_ok_and(|n| *n == RECORD)));
            drop(f);
            // Drop waited: every write landed.
            let data = std::fs::read(&path).unwrap();
            assert_eq!(data.len(), depth * RECORD);
            for (i, record) in data.chunks_exact(RECORD).enumerate() {
                assert!(holds(record, (i * RECORD) as u64), "round {round}: record {i}");
            }
        }
        // Through the trait object, with reads in flight.
        let path = dir.path().join("drop-0");
        let mut f = open_queued(BackendKind::IoUring, &path, &OpenHow::read(FILE_SIZE, false), depth, RECORD).unwrap();
        for slot in 0..depth {
            f.submit(Request { slot, write: false, offset: slot as u64 * RECORD as u64, len: RECORD }).unwrap();
        }
        f.reap(0, &mut Vec::new()).unwrap();
        drop(f);
    });
}

#[test]
fn flush_keeps_completions_for_reap() {
    if !uring_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flush");
    let mut f = open_queued(BackendKind::IoUring, &path, &OpenHow::create(FILE_SIZE, false), 4, RECORD).unwrap();
    for slot in 0..4 {
        f.submit(Request { slot, write: true, offset: slot as u64 * RECORD as u64, len: RECORD }).unwrap();
    }
    f.flush_to_storage().unwrap();
    assert_eq!(f.in_flight(), 4);
    let mut out = Vec::new();
    f.reap(0, &mut out).unwrap();
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|c| matches!(c.result, Ok(RECORD))));
    f.close().unwrap();
}

#[test]
fn probe_reports_this_machine() {
    match probe_io_uring() {
        Ok(support) => {
            eprintln!("io_uring: {support:?}");
            assert!(support.max_depth >= 1);
            let dir = tempfile::tempdir().unwrap();
            let f = UringFile::open(&dir.path().join("p"), &OpenHow::create(0, false), 32, RECORD, true).unwrap();
            eprintln!("{}", f.describe());
            if support.registered_files {
                assert!(f.registered().1, "{}", f.describe());
            }
        }
        Err(reason) => {
            assert!(reason.to_string().contains("io_uring"), "{reason}");
            eprintln!("io_uring unusable: {reason}");
        }
    }
}

/// `poll_completions`: io_uring asks for completions without sleeping before
/// it waits, and hands out the same completions, records and all; a budget
/// shorter than any request (1 us) falls through to the wait. The synchronous
/// backends have nothing to poll and say so.
#[test]
fn polled_io_uring_round_trips_and_the_others_refuse_polling() {
    let dir = tempfile::tempdir().unwrap();
    for kind in [BackendKind::Psync, BackendKind::Sync] {
        let path = dir.path().join(format!("{kind}"));
        let mut f = open_queued(kind, &path, &OpenHow::create(FILE_SIZE, false), 1, RECORD).unwrap();
        let e = f.poll_completions(Duration::from_micros(50)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{kind}: {e}");
        assert!(e.to_string().contains("only io_uring"), "{kind}: {e}");
        f.close().unwrap();
    }
    if !uring_available() {
        return;
    }
    for (depth, budget_us) in [(1, 50), (8, 50), (32, 1)] {
        let label = format!("io_uring depth {depth}, polled up to {budget_us} us");
        let path = dir.path().join(format!("polled-{depth}-{budget_us}"));
        let mut f =
            open_queued(BackendKind::IoUring, &path, &OpenHow::create(FILE_SIZE, false), depth, RECORD).unwrap();
        f.poll_completions(Duration::from_micros(budget_us)).unwrap();
        let (completions, bytes, deepest) = pass(f.as_mut(), true, &shuffled_offsets(depth as u64 + 3));
        assert_eq!((completions, bytes, deepest), (RECORDS as usize, FILE_SIZE, depth), "{label}: write");
        f.flush_to_storage().unwrap();
        f.close().unwrap();
        let mut f = open_queued(BackendKind::IoUring, &path, &OpenHow::read(FILE_SIZE, false), depth, RECORD).unwrap();
        f.poll_completions(Duration::from_micros(budget_us)).unwrap();
        let (completions, bytes, _) = pass(f.as_mut(), false, &shuffled_offsets(depth as u64 + 4));
        assert_eq!((completions, bytes), (RECORDS as usize, FILE_SIZE), "{label}: read");
        f.close().unwrap();
    }
}

/// Submission groups: io_uring hands prepared requests to the kernel as soon
/// as a group is full, except the group that fills the queue, which waits for
/// `reap` to go in with the wait; every group size moves the same data, and
/// the synchronous backends, which have no groups, say so.
#[test]
fn io_uring_submits_in_groups_and_keeps_the_filling_group_for_the_wait() {
    assert_eq!([1, 8, 15, 16, 32, 63, 64, 128, 4096].map(default_submit_batch), [1, 1, 1, 2, 4, 7, 8, 8, 8]);
    let dir = tempfile::tempdir().unwrap();
    for kind in [BackendKind::Psync, BackendKind::Sync] {
        let path = dir.path().join(format!("{kind}"));
        let mut f = open_queued(kind, &path, &OpenHow::create(FILE_SIZE, false), 1, RECORD).unwrap();
        let e = f.submit_batch(4).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{kind}: {e}");
        assert!(e.to_string().contains("only io_uring submits in groups"), "{kind}: {e}");
        f.close().unwrap();
    }
    if !uring_available() {
        return;
    }
    let path = dir.path().join("groups");
    let mut f = UringFile::open(&path, &OpenHow::create(FILE_SIZE, false), 8, RECORD, true).unwrap();
    assert_eq!(f.submit_batch(0).unwrap_err().kind(), ErrorKind::InvalidInput);
    f.submit_batch(3).unwrap();
    assert!(f.describe().contains("submitted in groups of up to 3"), "{}", f.describe());
    let mut waiting = Vec::new();
    for slot in 0..8 {
        let offset = slot as u64 * RECORD as u64;
        fill(&mut f.buffer(slot)[..RECORD], offset);
        assert!(matches!(f.submit(Request { slot, write: true, offset, len: RECORD }).unwrap(), Submitted::Queued));
        waiting.push(f.unsubmitted());
    }
    // Every third goes in at once; the 7th and the 8th (which fills the queue) stay for the wait.
    assert_eq!(waiting, [1, 2, 0, 1, 2, 0, 1, 2]);
    let mut out = Vec::new();
    f.reap(8, &mut out).unwrap();
    assert_eq!(f.unsubmitted(), 0);
    assert_eq!(out.len(), 8);
    assert!(out.iter().all(|c| matches!(c.result, Ok(n) if n == RECORD)));
    Box::new(f).close().unwrap();

    for (depth, group) in [(1, 1), (8, 1), (8, 3), (32, 4), (32, 32), (32, 100)] {
        let label = format!("io_uring depth {depth}, groups of up to {group}");
        let path = dir.path().join(format!("grouped-{depth}-{group}"));
        let mut f =
            open_queued(BackendKind::IoUring, &path, &OpenHow::create(FILE_SIZE, false), depth, RECORD).unwrap();
        f.submit_batch(group).unwrap();
        let (completions, bytes, deepest) = pass(f.as_mut(), true, &shuffled_offsets(depth as u64 + group as u64));
        assert_eq!((completions, bytes, deepest), (RECORDS as usize, FILE_SIZE, depth), "{label}: write");
        f.flush_to_storage().unwrap();
        f.close().unwrap();
        let mut f = open_queued(BackendKind::IoUring, &path, &OpenHow::read(FILE_SIZE, false), depth, RECORD).unwrap();
        f.submit_batch(group).unwrap();
        let (completions, bytes, _) = pass(f.as_mut(), false, &shuffled_offsets(depth as u64 + 5));
        assert_eq!((completions, bytes), (RECORDS as usize, FILE_SIZE), "{label}: read");
        f.close().unwrap();
    }
}
