//! Clients as threads of this process, meeting at a `std::sync::Barrier`.
//! Threads cannot die apart from the process, and a failing client still
//! attends every barrier ([`crate::lead`] sees to it), so the wait needs no bound.

use crate::{unix_ns, Coordinator, GaveUp, StartTimes};
use std::sync::{Arc, Barrier};

pub struct LocalCoordinator {
    rank: usize,
    size: usize,
    barrier: Arc<Barrier>,
}

/// One coordinator for each of `size` client threads.
pub fn local_group(size: usize) -> Vec<LocalCoordinator> {
    let barrier = Arc::new(Barrier::new(size));
    (0..size).map(|rank| LocalCoordinator { rank, size, barrier: barrier.clone() }).collect()
}

impl Coordinator for LocalCoordinator {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn barrier(&self) -> Result<StartTimes, GaveUp> {
        let arrived_unix_ns = unix_ns();
        self.barrier.wait();
        Ok(StartTimes { arrived_unix_ns, left_unix_ns: unix_ns() })
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
}
