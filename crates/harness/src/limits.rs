//! Threads, memory and address space checked at plan time: before the run
//! is stored, before the working folder is made, before the first thread.
//!
//! Each suite counts what its plan really starts and holds in this process
//! ([`super::Suite::demand`]): threads (each with its stack), and memory
//! (buffers, per-file tables, histograms). The harness adds its own threads
//! and compares the total with what [`SystemLimits`] says is left. A plan
//! that does not fit is refused with exit 2, naming the limit, what is left
//! under it, and the largest count of each flag the plan grows with that
//! fits (the others kept).
//!
//! How a thread is counted (Linux, glibc, Rust's std):
//! - it takes one PID and counts once against RLIMIT_NPROC, threads-max and
//!   the cgroup's pids.max;
//! - it maps four areas (`vm.max_map_count` is per process): its stack and
//!   the stack's guard page (glibc), and the alternate signal stack Rust's
//!   std gives every thread, with its own guard page. Past the map limit the
//!   std aborts the process (exit 134) from inside the new thread, where no
//!   error can be caught: this check is the only guard;
//! - its stack is address space (RLIMIT_AS), but only the pages it touches
//!   are memory: [`RESIDENT_PER_THREAD`] stands for those, the kernel's own
//!   stack of the thread and its task structures.

use iomatrix_core::human::bytes as human;
use iomatrix_core::UsageError;
use iomatrix_environment::{SystemLimits, Used};

/// Threads the harness starts itself during a run: the signal watcher, the
/// live line's updater and the progress bar's ticker.
pub const HARNESS_THREADS: u64 = 3;
/// Memory maps of one thread: its stack, the stack's guard page, the alternate signal stack and its guard page.
pub const MAPS_PER_THREAD: u64 = 4;
/// Maps kept back for what the run maps besides its threads' stacks: large
/// buffers (glibc maps every allocation above 128 KiB-32 MiB on its own),
/// malloc's per-thread arenas, the database, libraries loaded late.
pub const MAPS_KEPT_BACK: u64 = 1024;
/// Memory of a thread besides what its code allocates: the pages of its
/// stack it touches, its kernel stack (16 KiB) and task structures.
pub const RESIDENT_PER_THREAD: u64 = 64 * 1024;
/// Address space of a thread besides its stack: the guard page and the
/// alternate signal stack with its guard (SIGSTKSZ rounded up, 64 KiB at most).
pub const ADDRESS_PER_THREAD: u64 = 72 * 1024;
/// Threads kept back under the thread and PID limits for the rest of the
/// machine (and, for pid_max, the 300 PIDs the kernel never hands out again
/// after the numbers wrap).
const THREADS_KEPT_BACK: u64 = 32;
const PIDS_KEPT_BACK: u64 = 300;

/// What a plan starts and holds in this process, or what one more of a count adds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    pub threads: u64,
    /// Address space that is not memory until touched: the threads' stacks
    /// (their touched pages are in [`RESIDENT_PER_THREAD`]), files mapped with mmap.
    pub mapped_bytes: u64,
    /// Memory allocated and used: buffers, per-file state, tables.
    pub memory_bytes: u64,
}

impl Cost {
    /// `n` threads of `stack` bytes each.
    pub fn threads(n: u64, stack: u64) -> Cost {
        Cost { threads: n, mapped_bytes: n.saturating_mul(stack), memory_bytes: 0 }
    }

    pub fn memory(bytes: u64) -> Cost {
        Cost { memory_bytes: bytes, ..Cost::default() }
    }

    /// Address space only (a file mapped with mmap).
    pub fn mapped(bytes: u64) -> Cost {
        Cost { mapped_bytes: bytes, ..Cost::default() }
    }

    #[must_use]
    pub fn plus(self, o: Cost) -> Cost {
        Cost {
            threads: self.threads.saturating_add(o.threads),
            mapped_bytes: self.mapped_bytes.saturating_add(o.mapped_bytes),
            memory_bytes: self.memory_bytes.saturating_add(o.memory_bytes),
        }
    }

    #[must_use]
    pub fn times(self, n: u64) -> Cost {
        Cost {
            threads: self.threads.saturating_mul(n),
            mapped_bytes: self.mapped_bytes.saturating_mul(n),
            memory_bytes: self.memory_bytes.saturating_mul(n),
        }
    }
}

/// A count the user chose that the plan's cost grows with, e.g. `--clients`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Knob {
    /// As the user sets it: `--clients`, `--connections`, `files = N`.
    pub flag: String,
    pub value: u64,
    /// What one more adds to the whole plan (the other counts as they are).
    pub each: Cost,
    /// A size in bytes (`--records`), shown as one: not a count.
    pub bytes: bool,
}

/// What a run's plan starts and holds in this process at its peak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Demand {
    pub total: Cost,
    /// The counts the plan grows with, for the largest that fits.
    pub knobs: Vec<Knob>,
    /// How it is counted, in words: "4 client(s) x (1 thread + a 16 MiB buffer)".
    pub counted: String,
}

impl Demand {
    /// `clients` clients of this process, each costing `client` (its own
    /// thread included), plus the harness's threads; `--clients` is a knob.
    pub fn of_clients(clients: usize, client: Cost, counted: impl Into<String>) -> Demand {
        let clients = clients as u64;
        Demand {
            total: client.times(clients).plus(Cost::threads(HARNESS_THREADS, default_stack())),
            knobs: vec![Knob { flag: "--clients".into(), value: clients, each: client, bytes: false }],
            counted: counted.into(),
        }
    }

    /// Adds a count the plan grows with; `each`: what one more of it adds to the whole plan.
    #[must_use]
    pub fn knob(mut self, flag: impl Into<String>, value: u64, each: Cost) -> Demand {
        self.knobs.push(Knob { flag: flag.into(), value, each, bytes: false });
        self
    }

    /// Adds a size the plan grows with (a record, a buffer); `each`: what one more byte of it adds.
    #[must_use]
    pub fn knob_bytes(mut self, flag: impl Into<String>, value: u64, each: Cost) -> Demand {
        self.knobs.push(Knob { flag: flag.into(), value, each, bytes: true });
        self
    }

    /// Adds a cost held once by this process (not per client).
    #[must_use]
    pub fn and(mut self, cost: Cost, counted: &str) -> Demand {
        self.total = self.total.plus(cost);
        self.counted = format!("{}, plus {counted}", self.counted);
        self
    }
}

/// The stack of a thread started without a size: Rust's std default of
/// 2 MiB, or RUST_MIN_STACK where set.
pub fn default_stack() -> u64 {
    std::env::var("RUST_MIN_STACK").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(2 << 20)
}

/// What a limit counts of a [`Cost`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Threads,
    /// Memory maps: [`MAPS_PER_THREAD`] per thread.
    Maps,
    /// Memory in use: what is allocated and [`RESIDENT_PER_THREAD`] per thread.
    Memory,
    /// Address space: memory, stacks and mapped files, and [`ADDRESS_PER_THREAD`] per thread.
    Address,
}

impl Measure {
    fn of(self, c: &Cost) -> u64 {
        match self {
            Measure::Threads => c.threads,
            Measure::Maps => c.threads.saturating_mul(MAPS_PER_THREAD),
            Measure::Memory => c.memory_bytes.saturating_add(c.threads.saturating_mul(RESIDENT_PER_THREAD)),
            Measure::Address => c
                .memory_bytes
                .saturating_add(c.mapped_bytes)
                .saturating_add(c.threads.saturating_mul(ADDRESS_PER_THREAD)),
        }
    }

    fn amount(self, n: u64) -> String {
        match self {
            Measure::Threads => format!("{n} threads"),
            Measure::Maps => format!("{n} maps"),
            Measure::Memory | Measure::Address => human(n),
        }
    }
}

/// One limit: what is left under it, and what it is.
struct Limit {
    /// "vm.max_map_count".
    name: &'static str,
    /// What is left under it, after what this process and the machine hold now, and its margin.
    left: u64,
    /// The limit and its use in words: "65530 maps, 40 held by this process".
    state: String,
    /// How to get more.
    raise: &'static str,
    measure: Measure,
}

fn limits(l: &SystemLimits) -> Vec<Limit> {
    let mut out = Vec::new();
    let mut add = |u: Option<Used>, name, kept: u64, state: &dyn Fn(Used) -> String, raise, measure| {
        if let Some(u) = u {
            out.push(Limit { name, left: u.left().saturating_sub(kept), state: state(u), raise, measure });
        }
    };
    add(
        l.nproc,
        "RLIMIT_NPROC",
        THREADS_KEPT_BACK,
        &|u| format!("{} threads for this user, who runs {} now", u.limit, u.used),
        "raise it (ulimit -u, /etc/security/limits.conf)",
        Measure::Threads,
    );
    add(
        l.threads_max,
        "kernel.threads-max",
        THREADS_KEPT_BACK,
        &|u| format!("{} threads on this machine, {} running now", u.limit, u.used),
        "raise it (sysctl kernel.threads-max)",
        Measure::Threads,
    );
    add(
        l.pid_max,
        "kernel.pid_max",
        PIDS_KEPT_BACK,
        &|u| {
            format!("{} PIDs, one per thread, {} threads running now and 300 kept back by the kernel", u.limit, u.used)
        },
        "raise it (sysctl kernel.pid_max)",
        Measure::Threads,
    );
    add(
        l.cgroup_pids,
        "the cgroup's pids.max",
        0,
        &|u| format!("{} tasks, {} in use", u.limit, u.used),
        "raise the cgroup's pids.max (systemd: TasksMax=)",
        Measure::Threads,
    );
    add(
        l.max_map_count,
        "vm.max_map_count",
        MAPS_KEPT_BACK,
        &|u| {
            format!(
                "{} memory maps per process, {} held by this one now, {MAPS_KEPT_BACK} kept back for buffers; each \
                 thread takes {MAPS_PER_THREAD}: its stack, its guard page, its signal stack and that one's guard",
                u.limit, u.used
            )
        },
        "raise it (sysctl vm.max_map_count)",
        Measure::Maps,
    );
    add(
        l.mem_available.map(|u| Used { limit: u.limit, used: u.limit / 8 }),
        "MemAvailable",
        0,
        &|u| {
            format!("{} in /proc/meminfo, of which an eighth is kept for the page cache and the kernel", human(u.limit))
        },
        "free memory, or run where there is more",
        Measure::Memory,
    );
    add(
        l.cgroup_memory,
        "the cgroup's memory limit",
        0,
        &|u| format!("{}, {} in use (page cache not counted)", human(u.limit), human(u.used)),
        "raise the cgroup's memory.max (systemd: MemoryMax=)",
        Measure::Memory,
    );
    add(
        l.address_space,
        "RLIMIT_AS",
        0,
        &|u| format!("{} of address space, {} mapped now", human(u.limit), human(u.used)),
        "raise it (ulimit -v)",
        Measure::Address,
    );
    out
}

/// A size as the flags take it, rounded down to a whole unit: `19g`, `512m`, `4k`.
fn flag_size(bytes: u64) -> String {
    use iomatrix_core::{GIB, KIB, MIB};
    match bytes {
        b if b >= GIB => format!("{}g", b / GIB),
        b if b >= MIB => format!("{}m", b / MIB),
        b if b >= KIB => format!("{}k", b / KIB),
        b => b.to_string(),
    }
}

/// The one plan-time check of every command that starts threads (`run`, `iomatrix fio`):
/// `demand` against the limits this process has now, before anything is stored or printed.
pub fn check_now(demand: &Demand) -> Result<(), UsageError> {
    check(demand, &SystemLimits::read())
}

/// Refuses a plan that does not fit under every limit, naming the binding one
/// (the limit the plan passes by the largest factor, so the same counts name the
/// same limit however far past it they are) and the largest count of each knob
/// that fits under it.
pub fn check(demand: &Demand, system: &SystemLimits) -> Result<(), UsageError> {
    let passed =
        limits(system).into_iter().map(|l| (l.measure.of(&demand.total), l)).filter(|(need, l)| *need > l.left);
    // need_a / left_a > need_b / left_b, without division (a left of 0 is passed infinitely).
    let binding = passed.max_by(|(need_a, a), (need_b, b)| {
        (u128::from(*need_a) * u128::from(b.left)).cmp(&(u128::from(*need_b) * u128::from(a.left)))
    });
    match binding {
        Some((need, limit)) => Err(refusal(demand, &limit, need)),
        None => Ok(()),
    }
}

/// The refusal of `demand`, which needs `need` under `limit`.
fn refusal(demand: &Demand, limit: &Limit, need: u64) -> UsageError {
    let fits: Vec<String> = demand
        .knobs
        .iter()
        .filter_map(|k| {
            let each = limit.measure.of(&k.each);
            if each == 0 {
                return None;
            }
            let rest = need.saturating_sub(each.saturating_mul(k.value));
            let most = if rest >= limit.left { 0 } else { ((limit.left - rest) / each).min(k.value.saturating_sub(1)) };
            Some(match most {
                0 if k.bytes => format!("no {} fits", k.flag),
                0 => format!("not even {} 1 fits", k.flag),
                most if k.bytes => format!("at most {} {} fits", k.flag, flag_size(most)),
                most => format!("at most {} {most} fits", k.flag),
            })
        })
        .collect();
    let needs = match limit.measure {
        Measure::Threads => format!("starts {need} threads"),
        Measure::Maps => format!("needs {need} memory maps for its {} threads", demand.total.threads),
        Measure::Memory => format!("holds {} of memory", human(need)),
        Measure::Address => format!("needs {} of address space", human(need)),
    };
    UsageError::new(format!(
        "this plan {needs} in this process ({}), but {} leaves room for {} ({}): {}; give smaller counts, or {}",
        demand.counted,
        limit.name,
        limit.measure.amount(limit.left),
        limit.state,
        if fits.is_empty() { "no count of the plan changes that".to_string() } else { fits.join(", ") },
        limit.raise
    ))
}

/// Raises the open-file limit (RLIMIT_NOFILE) for `connections` of a run's clients here, each
/// holding `per_connection` descriptors (its files or sessions), plus 64 for the database, the
/// terminal and some slack; warns where the limit stays below that (a connection that then
/// fails with EMFILE is counted; the others go on). `said`: the connections the lines name,
/// with a line where the limit was raised (the file-server load's); None names none and says
/// nothing of a raise (the personality suite's).
pub fn raise_open_files(connections: u64, per_connection: u64, said: Option<usize>) {
    let needed = connections.saturating_mul(per_connection).saturating_add(64);
    let limit = match iomatrix_backend::raise_fd_limit(needed) {
        Ok(limit) => limit,
        Err(e) => return eprintln!("iomatrix: warning: cannot read the open-file limit: {e}"),
    };
    if let Some(n) = said.filter(|_| limit.raised()) {
        eprintln!(
            "iomatrix: raised the open-file limit (RLIMIT_NOFILE) from {} to {} for {n} connection(s)",
            limit.was, limit.now
        );
    }
    if limit.now < needed {
        let holders = said
            .map_or_else(|| "the connections may hold".to_string(), |n| format!("{n} connection(s) may hold at once"));
        eprintln!(
            "iomatrix: warning: the open-file limit is {} (hard limit {}), below the {needed} descriptors {holders}: \
             some may fail with EMFILE (counted; the others go on)",
            limit.now, limit.hard
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn system() -> SystemLimits {
        SystemLimits {
            threads_max: Some(Used { limit: 10_000, used: 500 }),
            max_map_count: Some(Used { limit: 65_530, used: 130 }),
            mem_available: Some(Used { limit: 8 << 30, used: 0 }),
            ..SystemLimits::default()
        }
    }

    #[test]
    fn a_plan_that_fits_passes() {
        let d = Demand::of_clients(100, Cost::threads(1, 2 << 20).plus(Cost::memory(1 << 20)), "100 clients");
        check(&d, &system()).unwrap();
    }

    #[test]
    fn too_many_threads_name_the_limit_and_the_largest_count() {
        let d = Demand::of_clients(20_000, Cost::threads(1, 2 << 20), "20000 client(s) x 1 thread");
        let e = check(&d, &system()).unwrap_err().0;
        // threads-max: 10,000 - 500 running - 32 kept back = 9,468 threads; the harness takes 3.
        assert!(e.contains("kernel.threads-max leaves room for 9468 threads"), "{e}");
        assert!(e.contains("at most --clients 9465 fits"), "{e}");
    }

    #[test]
    fn maps_bind_before_threads_max_where_they_are_tighter() {
        let s = SystemLimits { threads_max: Some(Used { limit: 200_000, used: 500 }), ..system() };
        let d = Demand::of_clients(20_000, Cost::threads(1, 2 << 20), "20000 client(s)");
        let e = check(&d, &s).unwrap_err().0;
        // (65,530 - 130 - 1,024) / 4 = 16,094 threads; 3 are the harness's.
        assert!(e.contains("vm.max_map_count leaves room for 64376 maps"), "{e}");
        assert!(e.contains("at most --clients 16091 fits"), "{e}");
    }

    #[test]
    fn the_binding_limit_is_named_however_far_past_it_the_count_is() {
        // threads-max leaves 199,468 threads, the maps 16,094: the maps bind at any count past both.
        let s = SystemLimits { threads_max: Some(Used { limit: 200_000, used: 500 }), ..system() };
        for clients in [20_000usize, 300_000, 100_000_000] {
            let d = Demand::of_clients(clients, Cost::threads(1, 2 << 20), "clients");
            let e = check(&d, &s).unwrap_err().0;
            assert!(e.contains("vm.max_map_count leaves room"), "{clients}: {e}");
            assert!(e.contains("at most --clients 16091 fits"), "{clients}: {e}");
        }
    }

    #[test]
    fn memory_names_each_knob() {
        let per_file = 48;
        let files = 1_000_000_000u64;
        let d = Demand::of_clients(1, Cost::threads(1, 2 << 20), "1 client")
            .knob("--connections", 1, Cost::memory(files * per_file))
            .knob("files", files, Cost::memory(per_file));
        let d = Demand { total: d.total.plus(Cost::memory(files * per_file)), ..d };
        let e = check(&d, &system()).unwrap_err().0;
        assert!(e.contains("MemAvailable"), "{e}");
        assert!(e.contains("not even --connections 1 fits"), "{e}");
        let left = (8u64 << 30) - (1 << 30) - 4 * RESIDENT_PER_THREAD;
        assert!(e.contains(&format!("at most files {} fits", left / per_file)), "{e}");
    }

    #[test]
    fn unknown_limits_are_not_checked() {
        let d = Demand::of_clients(1_000_000, Cost::threads(1, 2 << 20), "many");
        check(&d, &SystemLimits::default()).unwrap();
    }
}
