//! Clients as threads of this process, meeting at a `std::sync::Barrier`.
//! Threads cannot die apart from the process, and a failing client still
//! attends every barrier ([`crate::lead`] sees to it), so the wait needs no bound.
//! The barrier lets everyone go when the last thread arrives: that instant is
//! the clients' common start ([`Coordinator::released`]).

use crate::{unix_ns, Coordinator, GaveUp, StartTimes};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, PoisonError};
use std::time::Instant;

/// The clients as threads of this process, meeting at a shared barrier; one value per thread,
/// made by [`local_group`].
pub struct LocalCoordinator {
    rank: usize,
    size: usize,
    barrier: Arc<Barrier>,
    /// The latest arrival at a barrier, by its generation's parity: every thread raises it before
    /// it waits, so after the wait it holds the last arrival, the instant all were let go. Two
    /// slots: a fast thread may arrive at the next barrier before a slow one has read this one's
    /// (never at the one after: that needs the slow thread's arrival at the next).
    arrivals: Arc<[Mutex<Option<Instant>>; 2]>,
    /// Barriers this client has crossed.
    crossed: AtomicU64,
    released: Mutex<Option<Instant>>,
}

/// One coordinator for each of `size` client threads.
pub fn local_group(size: usize) -> Vec<LocalCoordinator> {
    let barrier = Arc::new(Barrier::new(size));
    let arrivals = Arc::new([Mutex::new(None), Mutex::new(None)]);
    (0..size)
        .map(|rank| LocalCoordinator {
            rank,
            size,
            barrier: barrier.clone(),
            arrivals: arrivals.clone(),
            crossed: AtomicU64::new(0),
            released: Mutex::new(None),
        })
        .collect()
}

impl Coordinator for LocalCoordinator {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn barrier(&self) -> Result<StartTimes, GaveUp> {
        let slot = &self.arrivals[(self.crossed.fetch_add(1, Ordering::Relaxed) % 2) as usize];
        let arrived_unix_ns = unix_ns();
        {
            // A value left by the barrier two before is older than any arrival at this one.
            let now = Instant::now();
            let mut latest = slot.lock().unwrap_or_else(PoisonError::into_inner);
            if latest.is_none_or(|t| t < now) {
                *latest = Some(now);
            }
        }
        self.barrier.wait();
        let released = *slot.lock().unwrap_or_else(PoisonError::into_inner);
        *self.released.lock().unwrap_or_else(PoisonError::into_inner) = released;
        Ok(StartTimes { arrived_unix_ns, left_unix_ns: unix_ns() })
    }

    fn released(&self) -> Option<Instant> {
        *self.released.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn nobody_passes_the_barrier_before_everyone_arrives() {
        let arrived = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = local_group(4)
            .into_iter()
            .map(|c| {
                let arrived = arrived.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(10 * c.rank() as u64));
                    arrived.fetch_add(1, Ordering::SeqCst);
                    let times = c.barrier().unwrap();
                    (arrived.load(Ordering::SeqCst), times)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(results.iter().all(|(n, _)| *n == 4));
        let last_arrival = results.iter().map(|(_, t)| t.arrived_unix_ns).max().unwrap();
        assert!(results.iter().all(|(_, t)| t.left_unix_ns >= last_arrival));
    }

    #[test]
    fn every_client_gets_the_same_release_instant_at_every_barrier() {
        // The last to arrive releases all: each barrier's instant is one for every client, at or
        // after every arrival, and later at each barrier than at the one before.
        let handles: Vec<_> = local_group(3)
            .into_iter()
            .map(|c| {
                std::thread::spawn(move || {
                    (0..50)
                        .map(|round| {
                            if (round + c.rank()) % 3 == 0 {
                                std::thread::sleep(Duration::from_micros(300));
                            }
                            let arrived = Instant::now();
                            c.barrier().unwrap();
                            let released = c.released().unwrap();
                            assert!(released >= arrived);
                            released
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let all: Vec<Vec<Instant>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for round in 0..50 {
            assert!(all.iter().all(|r| r[round] == all[0][round]), "round {round}");
            if round > 0 {
                assert!(all[0][round] > all[0][round - 1]);
            }
        }
    }
}
