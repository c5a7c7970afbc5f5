//! The run's live state, published for other processes ([`iomatrix_store::LiveState`], beside the
//! database): written by the thread that redraws the live line, at most once a second, and at
//! each cell's end by the thread that stores it; removed when the run ends, however it ends (the
//! publisher is dropped with the job). A state that cannot be written is said once on stderr and
//! not tried again: the run goes on, only its watchers see less.

use super::live::LiveSample;
use super::progress::Estimator;
use iomatrix_store::LiveState;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The live state's writer for one run (rank 0's, under MPI).
pub struct LivePublisher {
    db: PathBuf,
    run_id: i64,
    inner: Mutex<Published>,
    estimator: Arc<Mutex<Estimator>>,
}

struct Published {
    state: LiveState,
    /// The running cell's index in the pass under way (the live line's cell names are the pass's).
    in_pass: usize,
    last_write: Option<Instant>,
    /// A write failed (said once): nothing more is tried, and nothing is left to remove.
    gave_up: bool,
}

impl LivePublisher {
    /// The live state is written at most this often by the live line's thread.
    pub const EVERY: Duration = Duration::from_secs(1);

    /// Publishes run `run_id` of the database at `db`, of `cells_total` cells, at once (a watcher
    /// sees it before the first cell ends); its ETA read from `estimator` (the progress bar's).
    pub fn start(db: &Path, run_id: i64, cells_total: usize, estimator: Arc<Mutex<Estimator>>) -> LivePublisher {
        let state = LiveState {
            run_id,
            pid: std::process::id(),
            host: iomatrix_store::ProcessId::this_host(),
            written_ms: 0,
            cells_done: 0,
            cells_total,
            cell_index: (cells_total > 0).then_some(0),
            cell_name: None,
            line: String::new(),
            bytes_per_sec: 0.0,
            ops_per_sec: 0.0,
            eta_seconds: None,
        };
        let publisher = LivePublisher {
            db: db.to_path_buf(),
            run_id,
            inner: Mutex::new(Published { state, in_pass: 0, last_write: None, gave_up: false }),
            estimator,
        };
        publisher.write(&mut publisher.lock());
        publisher
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Published> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether [`LivePublisher::tick`] would write now: a second has passed since the last write.
    pub fn due(&self) -> bool {
        let inner = self.lock();
        !inner.gave_up && inner.last_write.is_none_or(|at| at.elapsed() >= Self::EVERY)
    }

    /// The live line's thread's news: the line as shown (None where the suite shows none), the
    /// clients' last sample, and the cells' names by index in the pass. Written if due.
    pub fn tick(&self, line: Option<String>, sample: LiveSample, name: &dyn Fn(usize) -> String) {
        let mut inner = self.lock();
        if inner.gave_up || inner.last_write.is_some_and(|at| at.elapsed() < Self::EVERY) {
            return;
        }
        let in_pass = inner.in_pass;
        let state = &mut inner.state;
        state.line = line.unwrap_or_default();
        state.bytes_per_sec = sample.bytes_per_sec;
        state.ops_per_sec = sample.ops_per_sec;
        state.cell_name = state.cell_index.map(|_| name(in_pass)).filter(|n| !n.is_empty());
        self.write(&mut inner);
    }

    /// A cell is stored: written at once, with the next cell as the running one.
    pub fn cell_done(&self) {
        let mut inner = self.lock();
        inner.in_pass += 1;
        let state = &mut inner.state;
        state.cells_done += 1;
        state.cell_index = (state.cells_done < state.cells_total).then_some(state.cells_done);
        state.cell_name = None;
        state.line.clear();
        self.write(&mut inner);
    }

    /// `more` cells planned in a new pass (noisy cells measured again), which starts now.
    pub fn add_pass(&self, more: usize) {
        let mut inner = self.lock();
        inner.in_pass = 0;
        inner.state.cells_total += more;
        let state = &mut inner.state;
        state.cell_index = (state.cells_done < state.cells_total).then_some(state.cells_done);
    }

    fn write(&self, inner: &mut Published) {
        if inner.gave_up {
            return;
        }
        let eta = self.estimator.lock().unwrap_or_else(|e| e.into_inner()).remaining(Instant::now());
        inner.state.eta_seconds = eta.map(|d| d.as_secs_f64());
        inner.state.written_ms = iomatrix_store::unix_now_ms();
        inner.last_write = Some(Instant::now());
        if let Err(e) = inner.state.write(&self.db) {
            inner.gave_up = true;
            let _ = LiveState::remove(&self.db, self.run_id);
            eprintln!(
                "iomatrix: warning: cannot publish run #{}'s live state in {}: {e}; the run goes on (`iomatrix \
                 watch` shows its stored cells, without the live line)",
                self.run_id,
                iomatrix_store::live_folder(&self.db).display()
            );
        }
    }
}

impl Drop for LivePublisher {
    /// The run has ended (completed, failed, stopped by a signal, or an error on the way).
    fn drop(&mut self) {
        if let Err(e) = LiveState::remove(&self.db, self.run_id) {
            eprintln!(
                "iomatrix: warning: cannot remove run #{}'s live state {}: {e} (readers take it for a dead run's \
                 after 10 s)",
                self.run_id,
                LiveState::path(&self.db, self.run_id).display()
            );
        }
    }
}
