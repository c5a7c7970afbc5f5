//! Runs a plan: one thread per client, a barrier before every cell, and a
//! leader that merges each cell's figures and hands the cell to a sink
//! (the store) before the next one finishes, so a crash loses at most one cell.

use crate::plan::{CellSpec, IozonePlan};
use crate::IozoneTest;
use iomatrix_backend::{AlignedBuf, FileIo, MmapFile, OpenHow, PsyncFile, StdioFile, SyncFile};
use iomatrix_coord::{lead_local, make_client_dirs, ClientFailure, Coordinator, Ending, Report};
use iomatrix_core::BackendKind;
use iomatrix_engine::{run_pass, Direction, Moved, Order, Pass, PassError};
use iomatrix_stats::{kib_per_sec, Measured, Span};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// IOzone's stride: 17 records.
pub const STRIDE_RECORDS: u64 = 17;

/// One client's figures for one cell.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientFigures {
    pub rank: usize,
    pub moved: Moved,
    pub measured: Measured,
}

impl ClientFigures {
    pub fn kib_per_sec(&self) -> f64 {
        kib_per_sec(self.moved.bytes, self.measured.wall())
    }
}

/// A finished cell, merged over all clients.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CellResult {
    pub spec: CellSpec,
    pub clients: Vec<ClientFigures>,
    pub bytes: u64,
    pub ops: u64,
    /// From the first client's start to the last client's end.
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    /// IOzone's figure: the sum of the clients' own rates (its "children see").
    pub kib_per_sec: f64,
    /// All bytes over the common wall time (IOzone's "parent sees").
    pub kib_per_sec_overall: f64,
    /// CPU (user + sys, all clients) as % of the common wall time.
    pub cpu_percent: f64,
}

impl CellResult {
    fn merge(spec: CellSpec, mut clients: Vec<ClientFigures>) -> CellResult {
        clients.sort_by_key(|c| c.rank);
        let start = clients.iter().map(|c| c.measured.start_ns).min().unwrap_or(0);
        let end = clients.iter().map(|c| c.measured.end_ns).max().unwrap_or(0);
        let wall_ns = end.saturating_sub(start);
        let bytes = clients.iter().map(|c| c.moved.bytes).sum();
        let ops = clients.iter().map(|c| c.moved.ops()).sum();
        let user_ns = clients.iter().map(|c| c.measured.cpu.user_ns).sum();
        let sys_ns: u64 = clients.iter().map(|c| c.measured.cpu.sys_ns).sum();
        let kib_per_sec = clients.iter().map(ClientFigures::kib_per_sec).sum();
        let kib_per_sec_overall = iomatrix_stats::kib_per_sec(bytes, Duration::from_nanos(wall_ns));
        let cpu_percent = if wall_ns > 0 { (user_ns + sys_ns) as f64 * 100.0 / wall_ns as f64 } else { 0.0 };
        CellResult {
            spec,
            clients,
            bytes,
            ops,
            wall_ns,
            user_ns,
            sys_ns,
            kib_per_sec,
            kib_per_sec_overall,
            cpu_percent,
        }
    }
}

/// Where finished cells go. An error stops the run: results that cannot be
/// kept are not worth measuring.
pub trait CellSink {
    /// Called once before the first cell finishes, with every cell that will run.
    fn started(&mut self, _cells: &[CellSpec]) {}
    fn cell_done(&mut self, cell: &CellResult) -> Result<(), String>;
}

/// Runs `plan` with each client in `workdir/client-N`, which this makes.
/// `stop` is the run's stop flag: raise it to end the run after the current
/// requests; a failing client raises it too. Returns how many cells were
/// handed to the sink and how the run ended.
pub fn execute(
    plan: &IozonePlan,
    workdir: &Path,
    stop: &AtomicBool,
    sink: &mut dyn CellSink,
) -> std::io::Result<(usize, Ending)> {
    let cells = plan.cells();
    let dirs = make_client_dirs(workdir, plan.clients)?;
    sink.started(&cells);
    let epoch = Instant::now();
    Ok(lead_local(
        plan.clients,
        cells.len(),
        stop,
        |coord, tx| {
            let rank = coord.rank();
            Client::new(coord, plan, &dirs[rank], epoch, stop).run(&cells, &tx)
        },
        |index, figures| sink.cell_done(&CellResult::merge(cells[index], figures)),
    ))
}

/// One client's state across the cells of a run.
struct Client<'a, C: Coordinator> {
    coord: C,
    plan: &'a IozonePlan,
    path: PathBuf,
    epoch: Instant,
    stop: &'a AtomicBool,
    buf: AlignedBuf,
    /// The size the client's file has, if it exists and is complete.
    file_ready: Option<u64>,
}

impl<'a, C: Coordinator> Client<'a, C> {
    fn new(coord: C, plan: &'a IozonePlan, dir: &Path, epoch: Instant, stop: &'a AtomicBool) -> Self {
        let largest_record = plan.record_sizes.iter().map(|r| r.bytes()).max().unwrap_or(4096);
        Client {
            coord,
            plan,
            path: dir.join(&plan.file_name),
            epoch,
            stop,
            buf: AlignedBuf::new(largest_record as usize),
            file_ready: None,
        }
    }

    /// Every client takes part in every barrier, also after a failure or a
    /// stop (it then skips the work), so no client ever waits for one that left.
    fn run(mut self, cells: &[CellSpec], tx: &mpsc::Sender<Report<ClientFigures>>) {
        for cell in cells {
            let outcome = match cell.backend {
                BackendKind::Sync => self.cell::<SyncFile>(cell),
                BackendKind::Psync => self.cell::<PsyncFile>(cell),
                BackendKind::Mmap => self.cell::<MmapFile>(cell),
                BackendKind::Stdio => self.cell::<StdioFile>(cell),
                // IozonePlan::validate refuses queued backends; keep the barrier count right regardless.
                BackendKind::IoUring => {
                    self.coord.barrier();
                    Err(self
                        .failure("the iozone suite issues one request at a time; io_uring is for `run access`".into()))
                }
            };
            if let Err(f) = &outcome {
                self.file_ready = None;
                if !f.stopped {
                    self.stop.store(true, Ordering::SeqCst);
                }
            }
            if cell.last_for_pair {
                // Untimed; IOzone also starts every file/record pair with a fresh file.
                let _ = std::fs::remove_file(&self.path);
                self.file_ready = None;
            }
            if tx.send((cell.index, outcome)).is_err() {
                return;
            }
        }
    }

    fn cell<F: FileIo>(&mut self, cell: &CellSpec) -> Result<ClientFigures, ClientFailure> {
        let prepared = self.prepare::<F>(cell);
        self.coord.barrier();
        let mut file = prepared?;
        if self.stop.load(Ordering::SeqCst) {
            let _ = file.close();
            return Err(self.stopped());
        }
        let record = cell.record_size.bytes();
        let pass = Pass {
            order: self.order(cell),
            direction: self.direction(cell),
            record,
            records: cell.file_size.bytes() / record,
        };
        let span = Span::start(self.epoch);
        let moved = run_pass(&mut file, &pass, &mut self.buf, self.stop).map_err(|e| match e {
            PassError::Stopped => self.stopped(),
            PassError::Io { .. } => self.failure(format!("{e} in {}", self.path.display())),
        })?;
        if self.plan.fsync && cell.test.writes() {
            file.flush_to_storage().map_err(|e| self.failure(format!("fsync of {}: {e}", self.path.display())))?;
        }
        let measured = if self.plan.close {
            file.close().map_err(|e| self.failure(format!("close of {}: {e}", self.path.display())))?;
            span.finish()
        } else {
            let measured = span.finish();
            file.close().map_err(|e| self.failure(format!("close of {}: {e}", self.path.display())))?;
            measured
        };
        if matches!(cell.test, IozoneTest::Write | IozoneTest::Fwrite) {
            self.file_ready = Some(cell.file_size.bytes());
        }
        Ok(ClientFigures { rank: self.coord.rank(), moved, measured })
    }

    /// Untimed: lays the file out if the test needs one, and opens it.
    fn prepare<F: FileIo>(&mut self, cell: &CellSpec) -> Result<F, ClientFailure> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(self.stopped());
        }
        let size = cell.file_size.bytes();
        if cell.test.needs_existing_file() && self.file_ready != Some(size) {
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
        let what = |e: &dyn std::fmt::Display| format!("laying out {}: {e}", self.path.display());
        let mut file =
            PsyncFile::open(&self.path, &OpenHow::create(size, false)).map_err(|e| self.failure(what(&e)))?;
        run_pass(&mut file, &pass, &mut self.buf, self.stop).map_err(|e| match e {
            PassError::Stopped => self.stopped(),
            e => self.failure(what(&e)),
        })?;
        file.flush_to_storage().map_err(|e| self.failure(what(&e)))?;
        file.close().map_err(|e| self.failure(what(&e)))
    }

    fn order(&self, cell: &CellSpec) -> Order {
        let seed = self.plan.seed ^ (cell.index as u64).wrapping_mul(0x9e37_79b9) ^ ((self.coord.rank() as u64) << 40);
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
            IozoneTest::Mixed => {
                Direction::Mixed { seed: self.plan.seed ^ cell.index as u64 ^ self.coord.rank() as u64 }
            }
            t if t.writes() => Direction::Write,
            _ => Direction::Read,
        }
    }

    fn failure(&self, message: String) -> ClientFailure {
        ClientFailure::error(self.coord.rank(), message)
    }

    fn stopped(&self) -> ClientFailure {
        ClientFailure::stopped(self.coord.rank())
    }
}
