//! Keeping a client's thread on one CPU (`run access --pin shallow|spread`), and letting it go.
//!
//! Why: a thread that waits for every request (psync, or io_uring at depth 1) is woken by the
//! device's completion, and the kernel chooses on each wake-up where it runs next. On a small
//! machine that choice settles, run by run, into one of two patterns, and the same work then
//! measures up to a fifth apart (docs/measuring.md, "Where a client runs"). A thread kept on
//! one CPU measures the same in every run. A thread with a deep queue rarely waits, and kept on
//! one CPU it leaves the kernel's own workers for the device only the others: it is let go
//! ([`allow_on`]) for such cells.

use std::io;

/// The CPUs this thread may run on (its affinity, narrowed by cpusets, taskset or mpirun's
/// binding), lowest first.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    let set = rustix::thread::sched_getaffinity(None)?;
    Ok((0..rustix::thread::CpuSet::MAX_CPU).filter(|&cpu| set.is_set(cpu)).collect())
}

/// The CPU that client `rank` is kept on under `spread`: the (rank mod N)-th of the N CPUs in
/// `allowed`, so clients share a CPU only when there are more clients than CPUs.
pub fn spread_pick(allowed: &[usize], rank: usize) -> Option<usize> {
    (!allowed.is_empty()).then(|| allowed[rank % allowed.len()])
}

/// Keeps the calling thread on `cpu` from now on.
pub fn keep_on(cpu: usize) -> io::Result<()> {
    allow_on(&[cpu])
}

/// Lets the calling thread run on any of `cpus` from now on (what [`allowed_cpus`] said
/// before [`keep_on`] narrowed it, to undo that).
pub fn allow_on(cpus: &[usize]) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for &cpu in cpus {
        if cpu >= rustix::thread::CpuSet::MAX_CPU {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("CPU {cpu} is beyond the CPU set's size")));
        }
        set.set(cpu);
    }
    rustix::thread::sched_setaffinity(None, &set)?;
    Ok(())
}

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> usize {
    rustix::thread::sched_getcpu()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_each_cpu_once_before_any_twice() {
        let allowed = [2, 3, 5];
        let picks: Vec<_> = (0..7).map(|rank| spread_pick(&allowed, rank).unwrap()).collect();
        assert_eq!(picks, [2, 3, 5, 2, 3, 5, 2]);
        assert_eq!(spread_pick(&[], 0), None);
    }

    #[test]
    fn a_kept_thread_runs_where_it_was_kept_and_nowhere_else() {
        let allowed = allowed_cpus().unwrap();
        let last = *allowed.last().unwrap();
        std::thread::spawn(move || {
            keep_on(last).unwrap();
            assert_eq!(allowed_cpus().unwrap(), [last]);
            for _ in 0..1000 {
                std::hint::black_box(0u64);
                assert_eq!(current_cpu(), last);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_kept_thread_let_go_may_run_where_it_could_before() {
        let allowed = allowed_cpus().unwrap();
        std::thread::spawn(move || {
            keep_on(allowed[0]).unwrap();
            assert_eq!(allowed_cpus().unwrap(), [allowed[0]]);
            allow_on(&allowed).unwrap();
            assert_eq!(allowed_cpus().unwrap(), allowed);
            assert_eq!(allow_on(&[usize::MAX]).unwrap_err().kind(), io::ErrorKind::InvalidInput);
            assert_eq!(allowed_cpus().unwrap(), allowed, "a refused set changes nothing");
        })
        .join()
        .unwrap();
    }
}
