//! Runs a plan: the data tests on one file, then the file tests, as
//! bonnie++ does, each result handed to the sink as soon as it is known.
//!
//! Timing follows bonnie++: opening (and creating) the file is outside the
//! timing, closing it is inside ("we always close the file before measuring
//! time, in an effort to force as much of the I/O out as we can").

use crate::error::io_error;
use crate::files::FileTests;
use crate::io::{derive_seed, on_own_file_table, Gate, GetcReader, PutcWriter};
use crate::local::{LocalData, LocalFiles};
use crate::place::{Access, DataFile, DataPlace};
use crate::plan::{BonniePlan, PerChar, UPDATE_EVERY};
use crate::remote::{session, RemoteData, RemoteFiles};
use crate::timing::{figures, Ready, Timed, Timing};
use crate::{planned_tests, BonnieError, BonnieResult, BonnieTest};
use iomatrix_backend::AlignedBuf;
use iomatrix_backend::Place;
use iomatrix_core::figures::CachedAtStart;
use iomatrix_random::scramble;
use iomatrix_stats::{Measured, Span};
use iomatrix_verify::{Content, Tally};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// The test file's name inside the working folder.
pub const DATA_FILE: &str = "bonnie.dat";
/// The file tests' folder inside the working folder (made by each create
/// test, removed by each delete test).
pub const FILES_DIR: &str = "bonnie.files";

/// One client's tests, in its own folder: the data file and the file
/// tests' folder, run one planned (repeat, test) at a time.
pub(crate) struct ClientTests<'a> {
    planned: Vec<(u32, BonnieTest)>,
    plan: &'a BonniePlan,
    stop: &'a AtomicBool,
    workdir: PathBuf,
    /// The client's own place: on a server, its folder there.
    place: Place<'a>,
    /// Made at the first test (on a server, that is where the client connects).
    tests: Option<(Runner<'a>, FileTests<'a>)>,
    /// The data file's stamped blocks (`--verify`, `--compressible`); the client's rank is the file id.
    content: Option<Content>,
    /// What the last test stamped and checked, for its cell.
    verify: Option<Tally>,
    /// How much of the data file the page cache held as the last test's clock started.
    cached_at_start: Option<CachedAtStart>,
}

impl<'a> ClientTests<'a> {
    /// `stop` is checked at least once per chunk and once per file. `workdir`
    /// is the client's local folder (unused for a remote place).
    pub(crate) fn new(
        plan: &'a BonniePlan,
        workdir: &Path,
        stop: &'a AtomicBool,
        place: &Place<'a>,
        rank: usize,
    ) -> Self {
        ClientTests {
            planned: planned_tests(plan),
            plan,
            stop,
            workdir: workdir.to_path_buf(),
            place: place.of_client(rank),
            tests: None,
            content: plan.content.stamped().then(|| Content::new(plan.content, rank as u64)),
            verify: None,
            cached_at_start: None,
        }
    }

    /// Untimed: the client's places, and on a server its own session and folder `folder/client-N`.
    fn prepare(&self) -> Result<(Runner<'a>, FileTests<'a>), BonnieError> {
        let (plan, stop) = (self.plan, self.stop);
        match &self.place {
            Place::Local => Ok((
                Runner { plan, stop, data: Box::new(LocalData { path: self.workdir.join(DATA_FILE) }) },
                FileTests::new(plan, stop, Box::new(LocalFiles::new(self.workdir.join(FILES_DIR)))),
            )),
            Place::Remote { connect, folder } => {
                let mut fs = connect().map_err(|e| BonnieError(format!("connecting: {e}")))?;
                let target = fs.target();
                let dir = folder;
                fs.mkdir(dir).map_err(|e| BonnieError(format!("making {dir} on {target}: {e}")))?;
                let shared = session(fs);
                let data = RemoteData {
                    session: shared.clone(),
                    connect: *connect,
                    path: format!("{dir}/{DATA_FILE}"),
                    target: target.clone(),
                };
                let files = RemoteFiles { session: shared, dir: format!("{dir}/{FILES_DIR}"), target };
                Ok((Runner { plan, stop, data: Box::new(data) }, FileTests::new(plan, stop, Box::new(files))))
            }
        }
    }

    /// Runs planned test `index`; None when a raised stop cut it short (its
    /// figures are dropped, not reported).
    pub(crate) fn run(&mut self, index: usize, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        let Some(&(repeat, test)) = self.planned.get(index) else {
            return Err(BonnieError(format!("there is no planned test {index} (a bug)")));
        };
        // Whatever passed validate() with the machine's RAM passes it with 0:
        // this only guards against plans nobody checked.
        self.plan.validate(0).map_err(|e| BonnieError(format!("the Bonnie plan cannot run: {e}")))?;
        if self.tests.is_none() {
            self.tests = Some(self.prepare()?);
        }
        let Some((runner, files)) = self.tests.as_mut() else {
            return Err(BonnieError("the client's tests are not prepared (a bug)".into()));
        };
        let content = self.content.as_mut();
        self.cached_at_start = None;
        let result = if test.is_file_test() {
            // Many small files made and removed by the test itself: no one file's state to state.
            files.run(test, repeat, ready)?
        } else if let Place::Local = self.place {
            // The data file as the test's clock meets it: after its untimed open (a write test's
            // open has just created it anew), before the other clients are waited for.
            let path = self.workdir.join(DATA_FILE);
            let held = &mut self.cached_at_start;
            let mut looked_then_ready = || {
                *held = cached_now(&path)?;
                ready()
            };
            runner.run(test, repeat, &mut looked_then_ready, content)?
        } else {
            // A server's cache is not visible from its client.
            runner.run(test, repeat, ready, content)?
        };
        self.verify = match self.content.as_mut() {
            Some(content) if carries_content(test) => Some(content.take_tally()),
            _ => None,
        };
        if result.is_some() && test == BonnieTest::RandomSeeks {
            // The last test on the file; bonnie++ removes it here too (untimed).
            runner.data.remove()?;
        }
        Ok(result)
    }

    /// What the last test stamped and checked: Some for putc, block write,
    /// rewrite and block read when the plan stamps its data.
    pub(crate) fn take_verify(&mut self) -> Option<Tally> {
        self.verify.take()
    }

    /// How much of the data file the page cache held as the last test began: Some for a data
    /// test on a local file system, None for the file tests and on a server.
    pub(crate) fn take_cached_at_start(&mut self) -> Option<CachedAtStart> {
        self.cached_at_start.take()
    }
}

/// How much of the data file at `path` the page cache holds now (mincore; nothing is read). None
/// where there is no regular file to look at (something else under its name): the test's own
/// I/O then names that, not the look.
fn cached_now(path: &Path) -> Result<Option<CachedAtStart>, BonnieError> {
    match iomatrix_backend::residency(path) {
        Ok(now) => Ok(Some(now)),
        Err(_) if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) => Ok(None),
        Err(e) => Err(BonnieError(format!("looking at {} in the page cache (mincore): {e}", path.display()))),
    }
}

/// The tests whose data is stamped blocks: putc, block write and rewrite
/// write them, rewrite and block read check them. getc and the seekers are
/// left out: getc's per-byte calls would measure the checking, and the
/// seekers' write-backs race each other on shared chunks.
fn carries_content(test: BonnieTest) -> bool {
    matches!(test, BonnieTest::PutcWrite | BonnieTest::BlockWrite | BonnieTest::Rewrite | BonnieTest::BlockRead)
}

/// A test that makes the file anew: its blocks are generation 1, the only one a reader accepts.
fn new_file(content: &mut Option<&mut Content>) {
    if let Some(c) = content.as_deref_mut() {
        (c.generation, c.oldest) = (1, 1);
    }
}

pub(crate) struct Runner<'a> {
    plan: &'a BonniePlan,
    stop: &'a AtomicBool,
    data: Box<dyn DataPlace + 'a>,
}

impl Runner<'_> {
    pub(crate) fn run(
        &self,
        test: BonnieTest,
        repeat: u32,
        ready: &mut Ready<'_>,
        content: Option<&mut Content>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        match test {
            BonnieTest::PutcWrite => self.putc(repeat, ready, content),
            BonnieTest::BlockWrite => self.block_write(repeat, ready, content),
            BonnieTest::Rewrite => self.rewrite(repeat, ready, content),
            BonnieTest::GetcRead => self.getc(repeat, ready),
            BonnieTest::BlockRead => self.block_read(repeat, ready, content),
            BonnieTest::RandomSeeks => self.seeks(repeat, ready),
            other => Err(BonnieError(format!("{other} is a file test, not a data test"))),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn size(&self) -> u64 {
        self.plan.size.bytes()
    }

    fn chunk(&self) -> usize {
        // validate() keeps the chunk at or below MAX_CHUNK, so it fits.
        self.plan.chunk.bytes() as usize
    }

    fn open(&self, what: &str, access: Access, direct: bool) -> Result<Box<dyn DataFile>, BonnieError> {
        self.data.open(what, access, direct, false)
    }

    /// Where the data file is, for messages.
    fn here(&self) -> String {
        self.data.location()
    }

    /// Inside the timing: fsync (COMMIT, FLUSH) under `-b` or with the
    /// plan's `fsync_close` (bonnie++ 2.00a's close), then close.
    fn close(&self, what: &str, file: Box<dyn DataFile>) -> Result<(), BonnieError> {
        self.close_with(what, file, self.plan.sync || self.plan.fsync_close)
    }

    /// Inside the timing: fsync whatever `-b` says, then close, as bonnie++
    /// 2.00a closes every file.
    fn close_synced(&self, what: &str, file: Box<dyn DataFile>) -> Result<(), BonnieError> {
        self.close_with(what, file, true)
    }

    fn close_with(&self, what: &str, mut file: Box<dyn DataFile>, sync: bool) -> Result<(), BonnieError> {
        if sync {
            file.sync().map_err(|e| io_error(&format!("{what} fsync"), &self.here(), None, &e))?;
        }
        file.close().map_err(|e| io_error(&format!("{what} close"), &self.here(), None, &e))
    }

    /// Sequential output per character, in the plan's style ([`PerChar`]).
    fn putc(
        &self,
        repeat: u32,
        ready: &mut Ready<'_>,
        content: Option<&mut Content>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        match self.plan.per_char {
            PerChar::Bonnie => self.putc_buffered(repeat, ready, content),
            PerChar::BonniePlus => self.putc_syscalls(repeat, ready, content),
        }
    }

    /// Bonnie's putc: the per-char bytes written one byte per call into a
    /// user-space buffer of the file's st_blksize, as putc into a stdio
    /// FILE. The bytes are an incompressible pattern, one chunk long; with
    /// `content`, each chunk is stamped for its offset before its bytes go out.
    fn putc_buffered(
        &self,
        repeat: u32,
        ready: &mut Ready<'_>,
        mut content: Option<&mut Content>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        let file = self.open("putc", Access::Create, false)?;
        let capacity = file.stdio_buffer(true);
        let chunk = self.chunk();
        let total = self.plan.per_char_bytes();
        let mut pattern = AlignedBuf::try_new(chunk, "a chunk").map_err(|e| BonnieError(e.to_string()))?;
        let mut writer = PutcWriter::new(file, capacity);
        new_file(&mut content);
        let span = Span::start(ready()?);
        let (mut calls, mut at, mut timing) = (0u64, 0u64, Timing::new(self.plan.series_interval_ns));
        while at < total {
            if self.stopped() {
                return Ok(None);
            }
            if let Some(c) = content.as_deref_mut() {
                c.stamp(pattern.as_mut_slice(), at);
            }
            let n = (total - at).min(chunk as u64) as usize;
            let t = Instant::now();
            let before = calls;
            for &byte in pattern.as_slice().get(..n).unwrap_or(&[]) {
                writer.putc(byte).map_err(|e| io_error("putc write", &self.here(), Some(writer.flushed), &e))?;
                calls += 1;
            }
            // The chunk's calls, timed as one (bonnie++'s latency is a chunk's).
            timing.since(t, calls - before, n as u64, true);
            at += n as u64;
        }
        let flushed = writer.flushed;
        let file = writer.finish().map_err(|e| io_error("putc write", &self.here(), Some(flushed), &e))?;
        self.close("putc", file)?;
        let measured = span.finish();
        Ok(Some(figures(BonnieTest::PutcWrite, repeat, total, calls, 0, &[measured]).timed(timing.finish())))
    }

    /// bonnie++ 2.00a's putc: the per-char bytes written with one write(2)
    /// system call each (byte `j & 0x7f` at offset j of each chunk, or the
    /// chunk's stamped blocks with `content`), then fsync and close inside
    /// the timing, as bonnie++ closes its file; on a thread with a file
    /// table of its own, as bonnie++'s process has ([`on_own_file_table`]).
    fn putc_syscalls(
        &self,
        repeat: u32,
        ready: &mut Ready<'_>,
        mut content: Option<&mut Content>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        let chunk = self.chunk();
        let total = self.plan.per_char_bytes();
        let open = || self.open("putc", Access::Create, false);
        let measured = on_own_file_table(ready, open, |mut file, origin| {
            let mut pattern = AlignedBuf::try_new(chunk, "a chunk").map_err(|e| BonnieError(e.to_string()))?;
            for (j, b) in pattern.as_mut_slice().iter_mut().enumerate() {
                *b = (j & 0x7f) as u8;
            }
            new_file(&mut content);
            let span = Span::start(origin);
            let (mut at, mut timing) = (0u64, Timing::new(self.plan.series_interval_ns));
            while at < total {
                if self.stopped() {
                    return Ok(None);
                }
                if let Some(c) = content.as_deref_mut() {
                    c.stamp(pattern.as_mut_slice(), at);
                }
                let n = (total - at).min(chunk as u64) as usize;
                let t = Instant::now();
                for byte in pattern.as_slice().get(..n).unwrap_or(&[]) {
                    file.write_all(std::slice::from_ref(byte))
                        .map_err(|e| io_error("putc write", &self.here(), Some(at), &e))?;
                    at += 1;
                }
                // The chunk's n one-byte writes, timed as one (bonnie++'s latency is a chunk's).
                timing.since(t, n as u64, n as u64, true);
            }
            self.close_synced("putc", file)?;
            Ok(Some((span.finish(), timing.finish())))
        })?;
        Ok(measured.map(|(m, timed)| figures(BonnieTest::PutcWrite, repeat, total, total, 0, &[m]).timed(timed)))
    }

    /// Sequential output per block: the file made anew in chunk-sized
    /// write(2) calls; as in bonnie++, one byte of the buffer changes before
    /// each chunk (chunk i has byte i mod chunk incremented once more), so
    /// no two neighbouring chunks are equal. With `content`, each chunk is
    /// stamped blocks of generation 1 instead.
    fn block_write(
        &self,
        repeat: u32,
        ready: &mut Ready<'_>,
        mut content: Option<&mut Content>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        let chunk = self.chunk();
        new_file(&mut content);
        let open = || self.open("block write", Access::Create, self.plan.direct);
        let done = on_own_file_table(ready, open, |mut file, origin| {
            let mut buf = AlignedBuf::try_new(chunk, "a chunk").map_err(|e| BonnieError(e.to_string()))?;
            let span = Span::start(origin);
            let (mut calls, mut timing) = (0u64, Timing::new(self.plan.series_interval_ns));
            for i in 0..self.plan.chunks() {
                if self.stopped() {
                    return Ok(None);
                }
                let data = buf.as_mut_slice();
                match content.as_deref_mut() {
                    Some(c) => c.stamp(data, i * chunk as u64),
                    None => {
                        if let Some(b) = data.get_mut((i % chunk as u64) as usize) {
                            *b = b.wrapping_add(1);
                        }
                    }
                }
                let t = Instant::now();
                file.write_all(data).map_err(|e| io_error("block write", &self.here(), Some(i * chunk as u64), &e))?;
                timing.since(t, 1, chunk as u64, true);
                calls += 1;
            }
            self.close("block write", file)?;
            Ok(Some((span.finish(), calls, timing.finish())))
        })?;
        Ok(done
            .map(|(m, calls, timed)| figures(BonnieTest::BlockWrite, repeat, self.size(), calls, 0, &[m]).timed(timed)))
    }

    /// Rewrite: each chunk read with read(2), byte (i mod chunk) of chunk i
    /// incremented, lseek(2) back one chunk, written with write(2). With
    /// `content`, the chunk read is checked (when verifying) and stamped
    /// anew as the next generation instead of the one-byte change.
    fn rewrite(
        &self,
        repeat: u32,
        ready: &mut Ready<'_>,
        mut content: Option<&mut Content>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        let chunk = self.chunk();
        let back = SeekFrom::Current(-(chunk as i64));
        let open = || self.open("rewrite", Access::ReadWrite, self.plan.direct);
        let done = on_own_file_table(ready, open, |mut file, origin| {
            let mut buf = AlignedBuf::try_new(chunk, "a chunk").map_err(|e| BonnieError(e.to_string()))?;
            let span = Span::start(origin);
            let (mut chunks, mut timing) = (0u64, Timing::new(self.plan.series_interval_ns));
            for i in 0..self.plan.chunks() {
                if self.stopped() {
                    return Ok(None);
                }
                let t = Instant::now();
                let at = i * chunk as u64;
                let data = buf.as_mut_slice();
                file.read_exact(data).map_err(|e| io_error("rewrite read", &self.here(), Some(at), &e))?;
                match content.as_deref_mut() {
                    Some(c) => c.check_then_restamp(data, at),
                    None => {
                        if let Some(b) = data.get_mut((i % chunk as u64) as usize) {
                            *b = b.wrapping_add(1);
                        }
                    }
                }
                file.seek(back).map_err(|e| io_error("rewrite lseek", &self.here(), Some(at), &e))?;
                file.write_all(data).map_err(|e| io_error("rewrite write", &self.here(), Some(at), &e))?;
                // A chunk rewritten (read, changed, written back) is one operation, its bytes once.
                timing.since(t, 1, chunk as u64, true);
                chunks += 1;
            }
            self.close("rewrite", file)?;
            Ok(Some((span.finish(), chunks, timing.finish())))
        })?;
        let Some((measured, chunks, timed)) = done else { return Ok(None) };
        if let Some(c) = content {
            // Every block now carries the rewrite's generation: an older one read back is a lost write.
            c.generation += 1;
            c.oldest = c.generation;
        }
        Ok(Some(figures(BonnieTest::Rewrite, repeat, self.size(), chunks, 0, &[measured]).timed(timed)))
    }

    /// Sequential input per character, in the plan's style ([`PerChar`]).
    fn getc(&self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        match self.plan.per_char {
            PerChar::Bonnie => self.getc_buffered(repeat, ready),
            PerChar::BonniePlus => self.getc_syscalls(repeat, ready),
        }
    }

    /// Bonnie's getc: one byte per call from a user-space buffer of the
    /// file's st_blksize, as getc from a stdio FILE.
    fn getc_buffered(&self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        let file = self.open("getc", Access::Read, false)?;
        let capacity = file.stdio_buffer(false);
        let chunk = self.chunk() as u64;
        let total = self.plan.per_char_bytes();
        let mut reader = GetcReader::new(file, capacity);
        let span = Span::start(ready()?);
        let (mut sum, mut timing, mut t) = (0u64, Timing::new(self.plan.series_interval_ns), Instant::now());
        for at in 0..total {
            if at % chunk == 0 {
                if at > 0 {
                    // The chunk's calls, timed as one (bonnie++'s latency is a chunk's).
                    timing.since(t, chunk, chunk, false);
                }
                if self.stopped() {
                    return Ok(None);
                }
                t = Instant::now();
            }
            match reader.getc() {
                Ok(Some(byte)) => sum = sum.wrapping_add(u64::from(byte)),
                Ok(None) => {
                    let e = io::Error::new(io::ErrorKind::UnexpectedEof, "the file ended early");
                    return Err(io_error("getc read", &self.here(), Some(at), &e));
                }
                Err(e) => return Err(io_error("getc read", &self.here(), Some(at), &e)),
            }
        }
        if total > 0 {
            let last = total - (total - 1) / chunk * chunk;
            timing.since(t, last, last, false);
        }
        std::hint::black_box(sum);
        self.close("getc", reader.into_file())?;
        let measured = span.finish();
        Ok(Some(figures(BonnieTest::GetcRead, repeat, total, total, 0, &[measured]).timed(timing.finish())))
    }

    /// bonnie++ 2.00a's getc: the per-char bytes read with one read(2)
    /// system call each, then fsync and close inside the timing; on a
    /// thread with a file table of its own ([`on_own_file_table`]).
    fn getc_syscalls(&self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        let chunk = self.chunk() as u64;
        let total = self.plan.per_char_bytes();
        let open = || self.open("getc", Access::Read, false);
        let measured = on_own_file_table(ready, open, |mut file, origin| {
            let mut byte = [0u8; 1];
            let span = Span::start(origin);
            let (mut sum, mut timing, mut t) = (0u64, Timing::new(self.plan.series_interval_ns), Instant::now());
            for at in 0..total {
                if at % chunk == 0 {
                    if at > 0 {
                        timing.since(t, chunk, chunk, false);
                    }
                    if self.stopped() {
                        return Ok(None);
                    }
                    t = Instant::now();
                }
                let got = loop {
                    match file.read(&mut byte) {
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        other => break other,
                    }
                };
                match got {
                    Ok(1) => sum = sum.wrapping_add(u64::from(byte[0])),
                    Ok(_) => {
                        let e = io::Error::new(io::ErrorKind::UnexpectedEof, "the file ended early");
                        return Err(io_error("getc read", &self.here(), Some(at), &e));
                    }
                    Err(e) => return Err(io_error("getc read", &self.here(), Some(at), &e)),
                }
            }
            if total > 0 {
                let last = total - (total - 1) / chunk * chunk;
                timing.since(t, last, last, false);
            }
            std::hint::black_box(sum);
            self.close_synced("getc", file)?;
            Ok(Some((span.finish(), timing.finish())))
        })?;
        Ok(measured.map(|(m, timed)| figures(BonnieTest::GetcRead, repeat, total, total, 0, &[m]).timed(timed)))
    }

    /// Sequential input per block: chunk-sized read(2) calls, each checked
    /// against what the last whole-file write left, when verifying.
    fn block_read(
        &self,
        repeat: u32,
        ready: &mut Ready<'_>,
        mut content: Option<&mut Content>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        let chunk = self.chunk();
        let open = || self.open("block read", Access::Read, self.plan.direct);
        let done = on_own_file_table(ready, open, |mut file, origin| {
            let mut buf = AlignedBuf::try_new(chunk, "a chunk").map_err(|e| BonnieError(e.to_string()))?;
            let span = Span::start(origin);
            let (mut calls, mut timing) = (0u64, Timing::new(self.plan.series_interval_ns));
            for i in 0..self.plan.chunks() {
                if self.stopped() {
                    return Ok(None);
                }
                let t = Instant::now();
                file.read_exact(buf.as_mut_slice())
                    .map_err(|e| io_error("block read", &self.here(), Some(i * chunk as u64), &e))?;
                timing.since(t, 1, chunk as u64, false);
                if let Some(c) = content.as_deref_mut() {
                    c.check(buf.as_slice(), i * chunk as u64);
                }
                calls += 1;
            }
            self.close("block read", file)?;
            Ok(Some((span.finish(), calls, timing.finish())))
        })?;
        Ok(done
            .map(|(m, calls, timed)| figures(BonnieTest::BlockRead, repeat, self.size(), calls, 0, &[m]).timed(timed)))
    }

    /// Random seeks: `seekers` threads, each with its own descriptor, take
    /// numbered tickets until `seeks` are gone (bonnie++ hands out tickets
    /// through a pipe, so a faster seeker does more). Ticket t seeks to
    /// chunk hash(seed, t) mod chunks and reads it; tickets 0, 10, 20, ...
    /// (bonnie++'s UpdateSeek: one in ten) change one byte and write the
    /// chunk back. Which seeks happen is fixed by the seed; only which
    /// thread does each one depends on timing.
    fn seeks(&self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        let seed = derive_seed(self.plan.seed, repeat, 6);
        let mut files = Vec::with_capacity(self.plan.seekers);
        for _ in 0..self.plan.seekers {
            files.push(self.data.open("seek test", Access::ReadWrite, self.plan.direct, true)?);
        }
        // The seekers' clocks start after the gate; the common start is before their threads exist.
        let origin = ready()?;
        let tickets = AtomicU64::new(0);
        let failed = AtomicBool::new(false);
        let gate = Gate::new();
        let outcomes: Vec<Result<SeekerFigures, BonnieError>> = std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(files.len());
            let mut spawn_error = None;
            for (rank, file) in files.into_iter().enumerate() {
                let seeker =
                    Seeker { runner: self, file, seed, origin, tickets: &tickets, failed: &failed, gate: &gate };
                match std::thread::Builder::new()
                    .name(format!("bonnie-seeker-{rank}"))
                    .spawn_scoped(scope, || seeker.run())
                {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        spawn_error = Some(BonnieError(format!("starting seeker thread {rank}: {e}")));
                        break;
                    }
                }
            }
            gate.open(spawn_error.is_none());
            let mut out: Vec<Result<SeekerFigures, BonnieError>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(BonnieError("a seeker thread panicked".into()))))
                .collect();
            if let Some(e) = spawn_error {
                out.push(Err(e));
            }
            out
        });
        let mut measured = Vec::with_capacity(outcomes.len());
        let mut timings = Vec::with_capacity(outcomes.len());
        let (mut seeks, mut writes) = (0u64, 0u64);
        for outcome in outcomes {
            let f = outcome?;
            measured.push(f.measured);
            seeks += f.seeks;
            writes += f.writes;
            timings.push(f.timed);
        }
        if self.stopped() || seeks < self.plan.seeks {
            return Ok(None);
        }
        let bytes = (seeks + writes) * self.chunk() as u64;
        let result = figures(BonnieTest::RandomSeeks, repeat, bytes, seeks, writes, &measured);
        Ok(Some(result.timed(Timed::together(&timings))))
    }
}

struct SeekerFigures {
    measured: Measured,
    seeks: u64,
    writes: u64,
    /// Its seeks (each with its write-back) timed: the slowest, and all over time.
    timed: Timed,
}

struct Seeker<'r, 'a> {
    runner: &'r Runner<'a>,
    file: Box<dyn DataFile>,
    seed: u64,
    origin: Instant,
    tickets: &'r AtomicU64,
    failed: &'r AtomicBool,
    gate: &'r Gate,
}

impl Seeker<'_, '_> {
    fn run(self) -> Result<SeekerFigures, BonnieError> {
        let failed = self.failed;
        let result = self.seek_away();
        if result.is_err() {
            failed.store(true, Ordering::SeqCst);
        }
        result
    }

    fn seek_away(mut self) -> Result<SeekerFigures, BonnieError> {
        let runner = self.runner;
        let path = &runner.here();
        let chunk = runner.chunk() as u64;
        let chunks = runner.plan.chunks();
        let mut buf = AlignedBuf::try_new(chunk as usize, "a chunk").map_err(|e| BonnieError(e.to_string()))?;
        let interval = runner.plan.series_interval_ns;
        if !self.gate.wait() {
            let measured = Span::start(self.origin).finish();
            return Ok(SeekerFigures { measured, seeks: 0, writes: 0, timed: Timing::new(interval).finish() });
        }
        let span = Span::start(self.origin);
        let (mut seeks, mut writes, mut timing) = (0u64, 0u64, Timing::new(interval));
        loop {
            if runner.stopped() || self.failed.load(Ordering::Relaxed) {
                break;
            }
            let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
            if ticket >= runner.plan.seeks {
                break;
            }
            let t = Instant::now();
            let hash = scramble(self.seed ^ ticket);
            let at = (hash % chunks) * chunk;
            let file = &mut self.file;
            file.seek(SeekFrom::Start(at)).map_err(|e| io_error("seek test lseek", path, Some(at), &e))?;
            file.read_exact(buf.as_mut_slice()).map_err(|e| io_error("seek test read", path, Some(at), &e))?;
            seeks += 1;
            let wrote_back = ticket % UPDATE_EVERY == 0;
            if wrote_back {
                let data = buf.as_mut_slice();
                if let Some(b) = data.get_mut((scramble(hash) % chunk) as usize) {
                    *b = b.wrapping_sub(1);
                }
                file.seek(SeekFrom::Start(at)).map_err(|e| io_error("seek test lseek", path, Some(at), &e))?;
                file.write_all(data).map_err(|e| io_error("seek test write", path, Some(at), &e))?;
                if runner.plan.sync {
                    file.sync().map_err(|e| io_error("seek test fsync", path, Some(at), &e))?;
                }
                writes += 1;
            }
            timing.seek_since(t, chunk, wrote_back);
        }
        if self.failed.load(Ordering::Relaxed) {
            // Another seeker failed first and reports why; this one's close would only repeat it
            // (on a dead server, with a misleading operation).
            let _ = self.file.close();
            return Ok(SeekerFigures { measured: span.finish(), seeks, writes, timed: timing.finish() });
        }
        // Inside the timing, as in bonnie++'s seekers (whose close fsyncs first, in 2.00a).
        if runner.plan.fsync_close {
            self.file.sync().map_err(|e| io_error("seek test fsync", path, None, &e))?;
        }
        self.file.close().map_err(|e| io_error("seek test close", path, None, &e))?;
        let measured = span.finish();
        Ok(SeekerFigures { measured, seeks, writes, timed: timing.finish() })
    }
}
