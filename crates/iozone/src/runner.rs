//! Runs a plan on every client of a group (threads here, or MPI ranks), a
//! barrier before every cell, and a leader that merges each cell's figures
//! and hands the cell to a sink (the store) before the next one finishes,
//! so a crash loses at most one cell.

use crate::figures::IozoneCellFigures;
use crate::order::Order;
use crate::pass::{run_pass_content, run_pass_timed, Direction, Marker, Marks, Moved, Pass, PassError, Timeline};
use crate::plan::{CellSpec, IozonePlan};
use crate::IozoneTest;
use iomatrix_backend::{
    AlignedBuf, FileIo, MmapFile, OpenHow, Place, PsyncFile, RecordIo, RemoteFile, RemoteFs, StdioFile, SyncFile,
};
use iomatrix_coord::{lead, ClientFailure, ClientWork, Ending, Gathered, Group, Setup, Start};
use iomatrix_core::figures::CachedAtStart;
use iomatrix_core::BackendKind;
use iomatrix_stats::{kib_per_sec, ClientSeries, Measured, Series, SeriesRecorder, Span};
use iomatrix_verify::{Content, Tally};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// IOzone's stride: 17 records.
pub const STRIDE_RECORDS: u64 = 17;

/// One client's figures for one cell. Times count from the cell's common
/// start (the release from the barrier), so clients on other hosts compare.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientFigures {
    /// The client's rank (0-based).
    pub rank: usize,
    /// What its pass moved.
    pub moved: Moved,
    /// When its pass started and ended, and the CPU it used.
    pub measured: Measured,
    /// Progress through the pass, for the stonewalled figure; not stored.
    #[serde(default, skip_serializing_if = "Marks::is_empty")]
    pub marks: Marks,
    /// Blocks checked and mismatches found (`--verify`), and the time
    /// stamping and checking took inside the timed pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<Tally>,
    /// The client's file in the page cache just before the start barrier, as the timed pass met
    /// it (a write test's file is the one its open just created: empty); None on a server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// Its records over time from its own start of the pass; merged into the cell's
    /// ([`IozoneCellFigures::series`]), not stored by client.
    #[serde(default, skip_serializing_if = "no_intervals")]
    pub series: ClientSeries,
}

fn no_intervals(series: &ClientSeries) -> bool {
    series.intervals.is_empty()
}

impl ClientFigures {
    /// Its own rate: its bytes over its own wall time, in KiB/s.
    pub fn kib_per_sec(&self) -> f64 {
        kib_per_sec(self.moved.bytes, self.measured.wall())
    }
}

/// A finished cell, merged over all clients: its clients' own figures, and the figures its row
/// stores beside its columns, built here as the row stores them ([`IozoneCellFigures`]). The
/// row's columns (bytes, operations, times, rates) are read off the clients, not kept a second time.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellResult {
    /// Which cell.
    pub spec: CellSpec,
    /// The clients that finished, by rank.
    pub clients: Vec<ClientFigures>,
    /// What the row stores beside its columns.
    pub figures: IozoneCellFigures,
}

impl CellResult {
    /// The cell from every client's figures: the overall and stonewalled rates, the failures, the
    /// barrier times, verification and cache tallies.
    pub fn merge(spec: CellSpec, gathered: Gathered<ClientFigures>) -> CellResult {
        let Gathered { figures: mut clients, failures, starts } = gathered;
        clients.sort_by_key(|c| c.rank);
        let (start, wall_ns) = span(&clients);
        let first_finish_ns = clients.iter().map(|c| c.measured.end_ns).min().unwrap_or(0);
        let kib_per_sec_overall = kib_per_sec(bytes(&clients), Duration::from_nanos(wall_ns));
        let stonewalled: u64 =
            clients
                .iter()
                .map(|c| {
                    if c.measured.end_ns <= first_finish_ns {
                        c.moved.bytes
                    } else {
                        c.marks.bytes_by(first_finish_ns)
                    }
                })
                .sum();
        let kib_per_sec_stonewalled = if clients.len() == 1 {
            kib_per_sec_overall
        } else {
            kib_per_sec(stonewalled, Duration::from_nanos(first_finish_ns.saturating_sub(start)))
        };
        let verify = Tally::sum(clients.iter().filter_map(|c| c.verify.as_ref()));
        let cached_at_start = cached_at_start(&clients);
        let series = clients
            .iter()
            .any(|c| !c.series.intervals.is_empty())
            .then(|| Series::merge(&clients.iter().map(|c| &c.series).collect::<Vec<_>>()));
        for c in &mut clients {
            c.marks = Marks::default();
            c.series = ClientSeries::default();
        }
        let figures = IozoneCellFigures {
            kib_per_sec_overall,
            kib_per_sec_stonewalled: Some(kib_per_sec_stonewalled),
            first_finish_ns,
            lost_bytes: failures.len() as u64 * spec.file_size.bytes(),
            failed_clients: failures,
            start_barrier: starts,
            repeat: spec.repeat,
            verify,
            cached_at_start,
            series,
        };
        CellResult { spec, clients, figures }
    }

    /// Bytes moved, over all clients.
    pub fn bytes(&self) -> u64 {
        bytes(&self.clients)
    }

    /// Operations, over all clients.
    pub fn ops(&self) -> u64 {
        self.clients.iter().map(|c| c.moved.ops()).sum()
    }

    /// From the common start to the last client's end.
    pub fn wall_ns(&self) -> u64 {
        span(&self.clients).1
    }

    /// CPU time in user mode of every client (ns).
    pub fn user_ns(&self) -> u64 {
        self.clients.iter().map(|c| c.measured.cpu.user_ns).sum()
    }

    /// CPU time in the kernel of every client (ns).
    pub fn sys_ns(&self) -> u64 {
        self.clients.iter().map(|c| c.measured.cpu.sys_ns).sum()
    }

    /// IOzone's figure: the sum of the clients' own rates (its "children see").
    pub fn kib_per_sec(&self) -> f64 {
        self.clients.iter().map(ClientFigures::kib_per_sec).sum()
    }

    /// CPU (user + sys, all clients) as % of the common wall time.
    pub fn cpu_percent(&self) -> f64 {
        iomatrix_stats::cpu_percent(self.user_ns() + self.sys_ns(), self.wall_ns())
    }

    /// The client with the lowest rate, if more than one finished.
    pub fn slowest(&self) -> Option<&ClientFigures> {
        iomatrix_harness::clients::slowest(&self.clients, ClientFigures::kib_per_sec)
    }
}

/// The clients' files summed: of the clients that looked, None when none could (a server's files).
fn cached_at_start(clients: &[ClientFigures]) -> Option<CachedAtStart> {
    CachedAtStart::sum(clients.iter().filter_map(|c| c.cached_at_start))
}

fn bytes(clients: &[ClientFigures]) -> u64 {
    clients.iter().map(|c| c.moved.bytes).sum()
}

/// The clients' common start and the time from it to the last client's end.
fn span(clients: &[ClientFigures]) -> (u64, u64) {
    let start = clients.iter().map(|c| c.measured.start_ns).min().unwrap_or(0);
    let end = clients.iter().map(|c| c.measured.end_ns).max().unwrap_or(0);
    (start, end.saturating_sub(start))
}

/// Where finished cells go. An error stops the run: results that cannot be
/// kept are not worth measuring.
pub trait CellSink {
    /// Why a cell could not be kept; the run's ending says it.
    type Error: std::fmt::Display;
    /// Called once before the first cell finishes, with every cell that will run.
    fn started(&mut self, _cells: &[CellSpec]) {}
    /// Keeps a finished cell (stores it); an error stops the run.
    fn cell_done(&mut self, cell: &CellResult) -> Result<(), Self::Error>;
}

/// Runs `plan` on every client of `group`, each in `client-N` of the
/// working folder in `setup`. Raise `setup.stop` to end the run after the
/// current requests. Returns, at the leader, how many cells were handed to
/// the sink and how the run ended; `None` at the other MPI ranks.
pub fn execute<E: std::fmt::Display>(
    plan: &IozonePlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    sink: &mut dyn CellSink<Error = E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    execute_at(plan, group, setup, &Place::Local, sink)
}

/// [`execute`] with the clients' files at `place`.
pub fn execute_at<E: std::fmt::Display>(
    plan: &IozonePlan,
    group: &Group<'_>,
    setup: &Setup<'_>,
    place: &Place<'_>,
    sink: &mut dyn CellSink<Error = E>,
) -> std::io::Result<Option<(usize, Ending)>> {
    let cells = plan.cells();
    sink.started(&cells);
    let marked = group.size() > 1;
    lead(
        group,
        setup,
        |rank, dir| Client::new(rank, plan, dir, setup.stop, &cells, marked, place.of_client(rank)),
        |index, gathered| sink.cell_done(&CellResult::merge(cells[index], gathered)),
    )
}

/// One client's state across the cells of a run.
struct Client<'a> {
    rank: usize,
    plan: &'a IozonePlan,
    cells: &'a [CellSpec],
    path: PathBuf,
    stop: &'a AtomicBool,
    /// The largest record's bytes, allocated at the first cell (a placeholder until then).
    buf: AlignedBuf,
    largest_record: usize,
    /// Record progress marks (only worth it with more than one client).
    marked: bool,
    /// The size the client's file has, if it exists and is complete.
    file_ready: Option<u64>,
    /// The client's own place: on a server, its folder there.
    place: Place<'a>,
    /// Its own connection to the server (made at its first cell), for a remote place.
    remote: Option<Box<dyn RemoteFs>>,
    /// Stamps and checks the client's file, when the plan asks for stamped data.
    content: Option<Content>,
}

impl ClientWork for Client<'_> {
    type Figures = ClientFigures;

    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<ClientFigures, ClientFailure> {
        let cell = &self.cells[index];
        if self.buf.len() < self.largest_record {
            // A record the user chose: memory the machine lacks fails the client, it does not abort the run.
            self.buf = AlignedBuf::try_new(self.largest_record, "the client's record buffer")
                .map_err(|e| self.failure(e.to_string()))?;
        }
        if self.place.is_remote() {
            return self.remote_cell(cell, start);
        }
        let outcome = match cell.backend {
            BackendKind::Sync => self.cell::<SyncFile>(cell, start),
            BackendKind::Psync => self.cell::<PsyncFile>(cell, start),
            BackendKind::Mmap => self.cell::<MmapFile>(cell, start),
            BackendKind::Stdio => self.cell::<StdioFile>(cell, start),
            // IozonePlan::validate refuses queued backends.
            BackendKind::IoUring => {
                Err(self.failure("the iozone suite issues one request at a time; io_uring is for `run access`".into()))
            }
        };
        if outcome.is_err() {
            self.file_ready = None;
        }
        if cell.last_for_pair {
            // Untimed; IOzone also starts every file/record pair with a fresh file.
            let _ = std::fs::remove_file(&self.path);
            self.file_ready = None;
        }
        outcome
    }
}

impl<'a> Client<'a> {
    fn new(
        rank: usize,
        plan: &'a IozonePlan,
        dir: &Path,
        stop: &'a AtomicBool,
        cells: &'a [CellSpec],
        marked: bool,
        place: Place<'a>,
    ) -> Self {
        let largest_record = plan.record_sizes.iter().map(|r| r.bytes()).max().unwrap_or(4096);
        Client {
            rank,
            plan,
            cells,
            path: dir.join(&plan.file_name),
            stop,
            buf: AlignedBuf::new(1),
            largest_record: largest_record as usize,
            marked,
            file_ready: None,
            place,
            remote: None,
            content: plan.content.stamped().then(|| Content::new(plan.content, rank as u64)),
        }
    }

    /// Performs `pass` on `file` with this client's buffer, marks, timeline and content.
    fn pass<F: RecordIo + ?Sized>(
        &mut self,
        file: &mut F,
        pass: &Pass,
        marker: Option<Marker<'_>>,
        timeline: Option<Timeline<'_>>,
    ) -> Result<Moved, PassError> {
        match self.content.as_mut() {
            Some(content) => run_pass_content(file, pass, &mut self.buf, self.stop, (marker, timeline), content),
            None => run_pass_timed(file, pass, &mut self.buf, self.stop, marker, timeline),
        }
    }

    /// Before a cell's pass (or a lay-out for it): writes carry the cell's generation.
    fn begin_writes(&mut self, cell: &CellSpec) {
        if let Some(content) = self.content.as_mut() {
            content.generation = cell.index as u64 + 1;
        }
    }

    /// After a pass that wrote every block: anything older is stale from now on.
    /// Returns the cell's tally (stamping and checking of the pass only).
    fn end_pass(&mut self, wrote_whole_file: bool) -> Option<Tally> {
        let content = self.content.as_mut()?;
        if wrote_whole_file {
            content.oldest = content.generation;
        }
        Some(content.take_tally())
    }

    fn cell<F: FileIo>(&mut self, cell: &CellSpec, start: &mut Start<'_>) -> Result<ClientFigures, ClientFailure> {
        let mut file = self.prepare::<F>(cell)?;
        let cached_at_start = match self.cached_now() {
            Ok(held) => held,
            Err(f) => {
                let _ = file.close();
                return Err(f);
            }
        };
        let origin = match start.together() {
            Ok(origin) => origin,
            Err(f) => {
                let _ = file.close();
                return Err(f);
            }
        };
        let record = cell.record_size.bytes();
        let pass = Pass {
            order: self.order(cell),
            direction: self.direction(cell),
            record,
            records: cell.file_size.bytes() / record,
        };
        if cell.test.writes() {
            self.begin_writes(cell);
        }
        let mut series = SeriesRecorder::new(self.plan.series_interval_ns);
        let span = Span::start(origin);
        let mut marks = Marks::default();
        let marker = self.marked.then_some(Marker { origin, marks: &mut marks });
        let own_start = std::time::Instant::now();
        let moved = self.pass(&mut file, &pass, marker, Some(Timeline { origin: own_start, series: &mut series }));
        let verify = self.end_pass(moved.is_ok() && writes_whole_file(cell.test));
        let moved = moved.map_err(|e| match e {
            PassError::Stopped => self.stopped(),
            PassError::Io { .. } => self.failure(format!("{e} in {}", self.path.display())),
        })?;
        if self.plan.fsync && cell.test.writes() {
            file.flush_to_storage().map_err(|e| self.failure(format!("fsync of {}: {e}", self.path.display())))?;
        }
        let (measured, timed_ns) = if self.plan.close {
            file.close().map_err(|e| self.failure(format!("close of {}: {e}", self.path.display())))?;
            (span.finish(), own_start.elapsed())
        } else {
            let ended = (span.finish(), own_start.elapsed());
            file.close().map_err(|e| self.failure(format!("close of {}: {e}", self.path.display())))?;
            ended
        };
        if matches!(cell.test, IozoneTest::Write | IozoneTest::Fwrite) {
            self.file_ready = Some(cell.file_size.bytes());
        }
        // The series runs to the cell's timed end: an fsync or close it times is its last interval's.
        let series = series.finish(timed_ns.as_nanos() as u64);
        Ok(ClientFigures { rank: self.rank, moved, measured, marks, verify, cached_at_start, series })
    }

    /// Untimed, after the open: how much of the client's file the page cache holds as the pass
    /// will meet it (mincore; nothing is read).
    /// None where there is no regular file to look at (something else under its name): the pass
    /// then names that, not the look.
    fn cached_now(&self) -> Result<Option<CachedAtStart>, ClientFailure> {
        match iomatrix_backend::residency(&self.path) {
            Ok(held) => Ok(Some(held)),
            Err(_) if !std::fs::metadata(&self.path).is_ok_and(|m| m.is_file()) => Ok(None),
            Err(e) => Err(self.failure(format!("looking at {} in the page cache (mincore): {e}", self.path.display()))),
        }
    }

    /// Untimed: lays the file out if the test needs one, and opens it.
    fn prepare<F: FileIo>(&mut self, cell: &CellSpec) -> Result<F, ClientFailure> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(self.stopped());
        }
        let size = cell.file_size.bytes();
        if cell.test.needs_existing_file() && self.file_ready != Some(size) {
            self.begin_writes(cell);
            self.lay_out(size, cell.record_size.bytes())?;
            self.file_ready = Some(size);
        }
        let how = match cell.test {
            IozoneTest::Write | IozoneTest::Fwrite => OpenHow::create(size, cell.direct),
            t if t.writes() => OpenHow::update(size, cell.direct),
            _ => OpenHow::read(size, cell.direct),
        };
        F::open(&self.path, &how).map_err(|e| self.failure(format!("open of {}: {e}", self.path.display())))
    }

    /// Writes the whole file and syncs it, so read tests read real data.
    fn lay_out(&mut self, size: u64, record: u64) -> Result<(), ClientFailure> {
        let pass = Pass { order: Order::Sequential, direction: Direction::Write, record, records: size / record };
        let shown = self.path.display().to_string();
        let what = |e: &dyn std::fmt::Display| format!("laying out {shown}: {e}");
        let mut file =
            PsyncFile::open(&self.path, &OpenHow::create(size, false)).map_err(|e| self.failure(what(&e)))?;
        let laid = self.pass(&mut file, &pass, None, None);
        // Untimed: the lay-out's stamping is no cell's cost.
        self.end_pass(laid.is_ok());
        laid.map_err(|e| match e {
            PassError::Stopped => self.stopped(),
            e @ PassError::Io { .. } => self.failure(what(&e)),
        })?;
        file.flush_to_storage().map_err(|e| self.failure(what(&e)))?;
        file.close().map_err(|e| self.failure(what(&e)))
    }

    /// A cell on a server: the same passes as a local cell, through the
    /// client's own protocol session. Connecting and laying out are untimed.
    fn remote_cell(&mut self, cell: &CellSpec, start: &mut Start<'_>) -> Result<ClientFigures, ClientFailure> {
        let outcome = self.remote_cell_inner(cell, start);
        if outcome.is_err() {
            // A server that stopped answering would make every cleanup call wait out its timeout too:
            // the run's cleanup tries once at the end.
            self.file_ready = None;
            return outcome;
        }
        if cell.last_for_pair {
            let path = self.remote_path();
            if let Some(fs) = self.remote.as_mut() {
                let _ = fs.remove(&path);
            }
            self.file_ready = None;
        }
        outcome
    }

    /// `folder/client-N/file`.
    fn remote_path(&self) -> String {
        self.place
            .remote_folder()
            .map(|folder| iomatrix_backend::below(folder, &self.plan.file_name))
            .unwrap_or_default()
    }

    fn remote_cell_inner(&mut self, cell: &CellSpec, start: &mut Start<'_>) -> Result<ClientFigures, ClientFailure> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(self.stopped());
        }
        let path = self.remote_path();
        if self.remote.is_none() {
            let Place::Remote { connect, folder } = &self.place else {
                unreachable!("a remote cell has a remote place")
            };
            let mut fs = connect().map_err(|e| self.failure(format!("connecting: {e}")))?;
            let dir = folder.clone();
            fs.mkdir(&dir).map_err(|e| self.failure(format!("making {dir} on {}: {e}", fs.target())))?;
            self.remote = Some(fs);
        }
        let size = cell.file_size.bytes();
        let record = cell.record_size.bytes();
        if cell.test.needs_existing_file() && self.file_ready != Some(size) {
            self.begin_writes(cell);
            self.remote_lay_out(&path, size, record)?;
            self.file_ready = Some(size);
        }
        let rank = self.rank;
        let fail = |m: String| ClientFailure::error(rank, m);
        let pass = Pass { order: self.order(cell), direction: self.direction(cell), record, records: size / record };
        if cell.test.writes() {
            self.begin_writes(cell);
        }
        // The file borrows the connection, so the pass runs with the client's parts passed one by one.
        let Some(mut fs) = self.remote.take() else { return Err(fail("no connection (a bug)".into())) };
        let target = fs.target();
        let opened = if matches!(cell.test, IozoneTest::Write) {
            RemoteFile::create(fs.as_mut(), &path)
        } else {
            RemoteFile::open(fs.as_mut(), &path)
        };
        let mut series = SeriesRecorder::new(self.plan.series_interval_ns);
        let outcome = opened.map_err(|e| fail(format!("open of {path} on {target}: {e}"))).and_then(|mut file| {
            let origin = start.together()?;
            let span = Span::start(origin);
            let mut marks = Marks::default();
            let marker = self.marked.then_some(Marker { origin, marks: &mut marks });
            let own_start = std::time::Instant::now();
            let moved = self.pass(&mut file, &pass, marker, Some(Timeline { origin: own_start, series: &mut series }));
            let verify = self.end_pass(moved.is_ok() && writes_whole_file(cell.test));
            let moved = moved.map_err(|e| match e {
                PassError::Stopped => ClientFailure::stopped(rank),
                PassError::Io { .. } => fail(format!("{e} in {path} on {target}")),
            })?;
            if self.plan.fsync && cell.test.writes() {
                file.flush().map_err(|e| fail(format!("flush of {path} on {target}: {e}")))?;
            }
            // Closing is local bookkeeping for a protocol client: -c times nothing more.
            let measured = span.finish();
            let timed_ns = own_start.elapsed().as_nanos() as u64;
            file.close().map_err(|e| fail(format!("close of {path} on {target}: {e}")))?;
            Ok((
                ClientFigures {
                    rank,
                    moved,
                    measured,
                    marks,
                    verify,
                    cached_at_start: None,
                    series: Default::default(),
                },
                timed_ns,
            ))
        });
        self.remote = Some(fs);
        let (mut figures, timed_ns) = outcome?;
        figures.series = series.finish(timed_ns);
        if matches!(cell.test, IozoneTest::Write) {
            self.file_ready = Some(size);
        }
        Ok(figures)
    }

    /// Writes the whole file on the server and commits it.
    fn remote_lay_out(&mut self, path: &str, size: u64, record: u64) -> Result<(), ClientFailure> {
        let rank = self.rank;
        let Some(mut fs) = self.remote.take() else { return Err(self.failure("no connection (a bug)".into())) };
        let target = fs.target();
        let what =
            |e: &dyn std::fmt::Display| ClientFailure::error(rank, format!("laying out {path} on {target}: {e}"));
        let pass = Pass { order: Order::Sequential, direction: Direction::Write, record, records: size / record };
        let outcome = RemoteFile::create(fs.as_mut(), path).map_err(|e| what(&e)).and_then(|mut file| {
            let laid = self.pass(&mut file, &pass, None, None);
            // Untimed: the lay-out's stamping is no cell's cost.
            self.end_pass(laid.is_ok());
            laid.map_err(|e| match e {
                PassError::Stopped => ClientFailure::stopped(rank),
                e @ PassError::Io { .. } => what(&e),
            })?;
            file.flush().map_err(|e| what(&e))?;
            file.close().map_err(|e| what(&e))
        });
        self.remote = Some(fs);
        outcome
    }

    fn order(&self, cell: &CellSpec) -> Order {
        let seed = self.plan.seed ^ (cell.index as u64).wrapping_mul(0x9e37_79b9) ^ ((self.rank as u64) << 40);
        match cell.test {
            IozoneTest::RandomRead | IozoneTest::RandomWrite | IozoneTest::Mixed => Order::Random { seed },
            IozoneTest::BackwardRead => Order::Backward,
            IozoneTest::RecordRewrite => Order::SameRecord,
            IozoneTest::StrideRead => Order::Stride(STRIDE_RECORDS),
            _ => Order::Sequential,
        }
    }

    fn direction(&self, cell: &CellSpec) -> Direction {
        match cell.test {
            IozoneTest::Mixed => Direction::Mixed { seed: self.plan.seed ^ cell.index as u64 ^ self.rank as u64 },
            t if t.writes() => Direction::Write,
            _ => Direction::Read,
        }
    }

    fn failure(&self, message: String) -> ClientFailure {
        ClientFailure::error(self.rank, message)
    }

    fn stopped(&self) -> ClientFailure {
        ClientFailure::stopped(self.rank)
    }
}

/// Tests that write every block of the file (a record rewrite or a mixed
/// pass leaves older blocks in place).
fn writes_whole_file(test: IozoneTest) -> bool {
    matches!(
        test,
        IozoneTest::Write | IozoneTest::Rewrite | IozoneTest::RandomWrite | IozoneTest::Fwrite | IozoneTest::Frewrite
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_coord::StartTimes;
    use iomatrix_core::ByteSize;
    use iomatrix_stats::CpuTimes;

    const MIB: u64 = 1 << 20;
    const SEC: u64 = 1_000_000_000;

    fn client(rank: usize, end_ns: u64, marks: &[(u64, u64)], (user_ns, sys_ns): (u64, u64)) -> ClientFigures {
        ClientFigures {
            rank,
            moved: Moved { bytes: 2 * MIB, reads: 0, writes: 512 },
            measured: Measured { start_ns: 0, end_ns, cpu: CpuTimes { user_ns, sys_ns } },
            marks: Marks { points: marks.to_vec() },
            verify: None,
            cached_at_start: None,
            series: ClientSeries::default(),
        }
    }

    fn spec(test: IozoneTest, file_size: u64, repeat: u32) -> CellSpec {
        CellSpec {
            index: 0,
            test,
            file_size: ByteSize(file_size),
            record_size: ByteSize(4096),
            backend: BackendKind::Sync,
            direct: false,
            last_for_pair: false,
            repeat,
        }
    }

    /// Two clients (handed over out of rank order), one failed: the cell's row columns and its
    /// stored figures are computed once, here, from the clients.
    #[test]
    fn a_merged_cell_builds_the_figures_its_row_stores() {
        let spec = spec(IozoneTest::Write, 4 * MIB, 3);
        let fast = ClientFigures {
            cached_at_start: Some(CachedAtStart { cached_bytes: MIB, file_bytes: 4 * MIB }),
            ..client(0, SEC, &[(SEC, 2 * MIB)], (100_000_000, 50_000_000))
        };
        let slow = ClientFigures {
            cached_at_start: Some(CachedAtStart { cached_bytes: 4 * MIB, file_bytes: 4 * MIB }),
            ..client(1, 2 * SEC, &[(SEC / 2, MIB / 2), (SEC, MIB), (2 * SEC, 2 * MIB)], (200_000_000, 150_000_000))
        };
        let lost = ClientFailure::error(2, "client 2: write: ENOSPC".into());
        let starts = vec![StartTimes { arrived_unix_ns: 1, left_unix_ns: 2 }; 3];
        let gathered = Gathered { figures: vec![slow, fast], failures: vec![lost.clone()], starts: starts.clone() };
        let cell = CellResult::merge(spec, gathered);

        assert_eq!(cell.clients.iter().map(|c| c.rank).collect::<Vec<_>>(), [0, 1]);
        assert!(cell.clients.iter().all(|c| c.marks.is_empty()), "marks are not stored");
        assert_eq!(cell.bytes(), 4 * MIB);
        assert_eq!(cell.ops(), 1024);
        assert_eq!(cell.wall_ns(), 2 * SEC);
        assert_eq!((cell.user_ns(), cell.sys_ns()), (300_000_000, 200_000_000));
        assert_eq!(cell.cpu_percent(), 25.0);
        // Children see: 2 MiB in 1 s plus 2 MiB in 2 s.
        assert_eq!(cell.kib_per_sec(), 3072.0);
        assert_eq!(cell.slowest().map(|c| c.rank), Some(1));

        let f = &cell.figures;
        // Parent sees: 4 MiB over the 2 s from the common start to the last finish.
        assert_eq!(f.kib_per_sec_overall, 2048.0);
        // When the first client finished (1 s): its 2 MiB and the other's 1 MiB.
        assert_eq!(f.kib_per_sec_stonewalled, Some(3072.0));
        assert_eq!(f.first_finish_ns, SEC);
        assert_eq!(f.failed_clients, [lost]);
        assert_eq!(f.lost_bytes, 4 * MIB, "the failed client's file");
        assert_eq!(f.start_barrier, starts);
        assert_eq!(f.repeat, 3);
        assert_eq!(f.verify, None);
        assert_eq!(f.cached_at_start, Some(CachedAtStart { cached_bytes: 5 * MIB, file_bytes: 8 * MIB }));
    }

    #[test]
    fn one_client_is_stonewalled_at_its_own_rate() {
        let spec = spec(IozoneTest::Read, 2 * MIB, 1);
        let only = client(0, 4 * SEC, &[], (0, 0));
        let cell = CellResult::merge(spec, Gathered { figures: vec![only], failures: Vec::new(), starts: Vec::new() });
        assert_eq!(cell.figures.kib_per_sec_overall, 512.0);
        assert_eq!(cell.figures.kib_per_sec_stonewalled, Some(512.0));
        assert_eq!(cell.slowest(), None);
        assert_eq!(cell.figures.lost_bytes, 0);
        assert_eq!(cell.figures.cached_at_start, None, "a client that could not look (on a server) claims nothing");
    }
}
