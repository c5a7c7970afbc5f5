//! The leader's side: each cell's reports from all clients, put together in
//! cell order and handed on at once; the decision to go on or end the run.

use crate::client::ClientCell;
use crate::{ClientFailure, Ending, OnClientError, StartTimes};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// One cell from all clients.
#[derive(Debug, Clone)]
pub struct Gathered<R> {
    /// The figures of the clients that finished the cell, by rank: empty when every client
    /// failed it (`--on-client-error continue`), and then `failures` names them all.
    pub figures: Vec<R>,
    /// The clients that failed it (only with `--on-client-error continue`).
    pub failures: Vec<ClientFailure>,
    /// Every client's arrival at and release from the start barrier, by rank.
    pub starts: Vec<StartTimes>,
}

/// Puts reports together cell by cell and decides how the run goes on.
pub(crate) struct Collector<'a, R> {
    clients: usize,
    cells: usize,
    on_error: OnClientError,
    stop: &'a AtomicBool,
    pending: BTreeMap<usize, Vec<ClientCell<R>>>,
    next: usize,
    done: usize,
    ending: Ending,
    lost: Vec<(usize, ClientFailure)>,
    /// Cells run back to back (see [`crate::lead_together`]); 1: each handed on as it is gathered.
    together: usize,
    /// Gathered cells of the run of cells under way, handed on at its last.
    held: Vec<(usize, Gathered<R>)>,
}

impl<'a, R> Collector<'a, R> {
    pub(crate) fn new(clients: usize, cells: usize, on_error: OnClientError, stop: &'a AtomicBool) -> Self {
        Collector {
            clients,
            cells,
            on_error,
            stop,
            pending: BTreeMap::new(),
            next: 0,
            done: 0,
            ending: Ending::Completed,
            lost: Vec::new(),
            together: 1,
            held: Vec::new(),
        }
    }

    /// Cells run `together` at a time: each run's cells are handed on at its last cell (or when
    /// the run ends), never while the clients work on the next.
    pub(crate) fn together(mut self, together: usize) -> Self {
        self.together = together.max(1);
        self
    }

    /// The first cell not yet handed on: every cell before it is handled.
    pub(crate) fn next(&self) -> usize {
        self.next
    }

    /// True while the run goes on (no failure under `abort`, no interruption).
    pub(crate) fn going(&self) -> bool {
        self.ending == Ending::Completed
    }

    /// The run broke outside any cell's reports (an MPI rank gone): end it so.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn broken(&mut self, cell: usize, failures: Vec<ClientFailure>) {
        self.stop.store(true, Ordering::SeqCst);
        if self.going() {
            self.ending = Ending::ClientFailed { cell, failures };
        }
    }

    /// A signal stopped the run while every rank was still there: it was interrupted, not failed.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn interrupted(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if self.going() {
            self.ending = Ending::Interrupted;
        }
    }

    pub(crate) fn add<E: std::fmt::Display>(
        &mut self,
        index: usize,
        cell: ClientCell<R>,
        on_cell: &mut dyn FnMut(usize, Gathered<R>) -> Result<(), E>,
    ) {
        self.pending.entry(index).or_default().push(cell);
        while self.pending.get(&self.next).is_some_and(|v| v.len() == self.clients) {
            let mut reports = self.pending.remove(&self.next).unwrap_or_default();
            let index = self.next;
            self.next += 1;
            if !self.going() {
                continue; // the run is ending; later cells only drain
            }
            reports.sort_by_key(|r| r.rank);
            let starts = reports.iter().map(|r| r.start).collect();
            let mut figures = Vec::with_capacity(self.clients);
            let (mut errors, mut stopped) = (Vec::new(), false);
            for report in reports {
                match report.outcome {
                    Ok(f) => figures.push(f),
                    Err(f) if f.stopped => stopped = true,
                    Err(f) => errors.push(f),
                }
            }
            if !errors.is_empty() && (self.on_error == OnClientError::Abort || stopped) {
                self.stop.store(true, Ordering::SeqCst);
                self.ending = Ending::ClientFailed { cell: index, failures: errors };
            } else if stopped {
                // A client stopped by a signal of its own (one MPI rank signalled) stops the others too.
                self.stop.store(true, Ordering::SeqCst);
                self.ending = Ending::Interrupted;
            } else {
                // Under `continue` a cell every client failed is handed on too, with no figures:
                // the leader stores it failed (0 of n) in its place, so it is never missing.
                self.lost.extend(errors.iter().cloned().map(|f| (index, f)));
                self.held.push((index, Gathered { figures, failures: errors, starts }));
            }
            if !self.going() || crate::client::handled_before_next(index, self.together, self.cells) {
                self.hand_on(on_cell);
            }
        }
    }

    /// Hands on the cells held so far, in order (every cell gathered before the run ended is
    /// handed on); a failure to take one ends the run.
    pub(crate) fn hand_on<E: std::fmt::Display>(
        &mut self,
        on_cell: &mut dyn FnMut(usize, Gathered<R>) -> Result<(), E>,
    ) {
        for (index, gathered) in std::mem::take(&mut self.held) {
            if matches!(self.ending, Ending::SinkFailed(_)) {
                return;
            }
            match on_cell(index, gathered) {
                Ok(()) => self.done += 1,
                Err(e) => {
                    self.stop.store(true, Ordering::SeqCst);
                    self.ending = Ending::SinkFailed(e.to_string());
                }
            }
        }
    }

    pub(crate) fn finish(self) -> (usize, Ending) {
        let ending = match self.ending {
            Ending::Completed if self.next < self.cells => Ending::Interrupted,
            Ending::Completed if !self.lost.is_empty() => Ending::ClientsLost(self.lost),
            other => other,
        };
        (self.done, ending)
    }
}
