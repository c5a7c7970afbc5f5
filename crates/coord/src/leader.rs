//! The leader of a run on one host: starts one thread per client, collects
//! each cell's outcomes from all clients, stops everyone when a client fails,
//! and hands every complete cell to the caller before the next one is due.

use crate::{local_group, LocalCoordinator};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// Why a client has no figures for a cell.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClientFailure {
    pub rank: usize,
    /// One line: what failed, where, and the system's word for it.
    pub message: String,
    /// True when the client stopped because it was told to, not by an error.
    pub stopped: bool,
}

impl ClientFailure {
    pub fn error(rank: usize, message: String) -> Self {
        ClientFailure { rank, message, stopped: false }
    }
    pub fn stopped(rank: usize) -> Self {
        ClientFailure { rank, message: "stopped".into(), stopped: true }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Completed,
    /// The stop flag was raised from outside (Ctrl-C) with no client failing.
    Interrupted,
    /// A client failed in cell `cell` (an index); the others were stopped.
    ClientFailed {
        cell: usize,
        failures: Vec<ClientFailure>,
    },
    /// The caller refused a cell (the database could not be written).
    SinkFailed(String),
}

/// What a client sends the leader: a cell index and its outcome there.
pub type Report<R> = (usize, Result<R, ClientFailure>);

/// Runs `client` on `clients` threads, each with its own coordinator and a
/// channel for its reports, for a plan of `cells` cells. A client must report
/// every cell exactly once, in order, and take part in every barrier even
/// after a failure (skipping the work), so that nobody waits for a client
/// that left. `on_cell` gets each cell's figures, ordered by rank, when all
/// clients have reported it. Returns the number of cells accepted and how
/// the run ended; `stop` is raised when a client fails or `on_cell` refuses.
pub fn lead_local<R, C>(
    clients: usize,
    cells: usize,
    stop: &AtomicBool,
    client: C,
    mut on_cell: impl FnMut(usize, Vec<R>) -> Result<(), String>,
) -> (usize, Ending)
where
    R: Send,
    C: Fn(LocalCoordinator, mpsc::Sender<Report<R>>) + Sync,
{
    let (tx, rx) = mpsc::channel::<Report<R>>();
    let mut done = 0;
    let mut ending = Ending::Completed;
    std::thread::scope(|scope| {
        for coord in local_group(clients) {
            let tx = tx.clone();
            let client = &client;
            scope.spawn(move || client(coord, tx));
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Vec<Result<R, ClientFailure>>> = BTreeMap::new();
        let mut next = 0;
        for (index, outcome) in rx {
            pending.entry(index).or_default().push(outcome);
            while pending.get(&next).is_some_and(|v| v.len() == clients) {
                let outcomes = pending.remove(&next).unwrap_or_default();
                let cell = next;
                next += 1;
                if ending != Ending::Completed {
                    continue; // the run is ending; later cells only drain
                }
                let mut figures = Vec::with_capacity(clients);
                let mut failures = Vec::new();
                for outcome in outcomes {
                    match outcome {
                        Ok(f) => figures.push(f),
                        Err(f) => failures.push(f),
                    }
                }
                if failures.iter().any(|f| !f.stopped) {
                    stop.store(true, Ordering::SeqCst);
                    failures.retain(|f| !f.stopped);
                    failures.sort_by_key(|f| f.rank);
                    ending = Ending::ClientFailed { cell, failures };
                } else if !failures.is_empty() {
                    ending = Ending::Interrupted;
                } else {
                    match on_cell(cell, figures) {
                        Ok(()) => done += 1,
                        Err(e) => {
                            stop.store(true, Ordering::SeqCst);
                            ending = Ending::SinkFailed(e);
                        }
                    }
                }
            }
        }
    });
    if ending == Ending::Completed && done < cells {
        // Every client was stopped before reporting a failure of its own.
        ending = Ending::Interrupted;
    }
    (done, ending)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Coordinator;

    #[test]
    fn cells_arrive_complete_and_a_failure_stops_the_rest() {
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        let (done, ending) = lead_local(
            3,
            5,
            &stop,
            |coord, tx| {
                for cell in 0..5 {
                    coord.barrier();
                    let outcome = if stop.load(Ordering::SeqCst) {
                        Err(ClientFailure::stopped(coord.rank()))
                    } else if cell == 2 && coord.rank() == 1 {
                        stop.store(true, Ordering::SeqCst);
                        Err(ClientFailure::error(1, "disk full".into()))
                    } else {
                        Ok((cell, coord.rank()))
                    };
                    tx.send((cell, outcome)).unwrap();
                }
            },
            |cell, figures| {
                assert_eq!(figures.len(), 3);
                assert!(figures.iter().all(|(c, _)| *c == cell));
                seen.push(cell);
                Ok(())
            },
        );
        assert_eq!(seen, [0, 1]);
        assert_eq!(done, 2);
        match ending {
            Ending::ClientFailed { cell: 2, failures } => assert_eq!(failures[0].message, "disk full"),
            other => panic!("{other:?}"),
        }
    }
}
