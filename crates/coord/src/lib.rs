//! How the clients of a run stay in step.
//!
//! - [`Coordinator`]: the seam. A client knows its `rank` among `size`
//!   clients and waits at a `barrier` before each cell, so all begin together.
//! - [`LocalCoordinator`]: clients as threads of this process; [`local_group`]
//!   makes one per client. MPI ranks across hosts implement the same trait
//!   later (behind a feature), never a home-made protocol.
//!
//! - [`make_client_dirs`]: each client's own folder in the working folder.
//! - [`lead_local`]: the leader of a run on one host: one thread per client,
//!   each cell's outcomes collected from all clients and handed on at once;
//!   a failing client ([`ClientFailure`]) stops the others ([`Ending`]).

mod leader;

pub use leader::{lead_local, ClientFailure, Ending, Report};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

/// Makes each client's own folder, `workdir/client-N`, and returns them by
/// rank: clients never share a file name (seed 001's collisions).
pub fn make_client_dirs(workdir: &Path, clients: usize) -> std::io::Result<Vec<PathBuf>> {
    let dirs: Vec<PathBuf> = (0..clients).map(|rank| workdir.join(format!("client-{rank}"))).collect();
    for dir in &dirs {
        std::fs::create_dir(dir)?;
    }
    Ok(dirs)
}

pub trait Coordinator: Send {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Blocks until every client of the run has arrived.
    fn barrier(&self);
}

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
    fn barrier(&self) {
        self.barrier.wait();
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
                    c.barrier();
                    arrived.load(Ordering::SeqCst)
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), 4);
        }
    }
}
