//! `--shared-file interleaved` on real files: every client writes exactly its own transfers of
//! the one shared file (IO500's ior-hard layout), and the figures add up.
#![forbid(unsafe_code)]

use iomatrix_access::{execute, AccessPlan, AccessResult, Limit, Live, Pin, Prepare, SharedFile};
use iomatrix_coord::{Ending, Group, Hooks, OnClientError, Setup};
use iomatrix_core::{BackendKind, ByteSize};
use std::sync::atomic::AtomicBool;

/// ior-hard's transfer.
const TRANSFER: u64 = 47008;
const CLIENTS: usize = 3;
/// Each client's transfers (ior's -s).
const SEGMENTS: u64 = 40;

fn plan(read_percents: Vec<u8>, backend: BackendKind) -> AccessPlan {
    AccessPlan {
        block_sizes: vec![ByteSize(TRANSFER)],
        read_percents,
        random_percents: vec![0],
        queue_depths: vec![1],
        clients: CLIENTS,
        file_size: ByteSize(SEGMENTS * TRANSFER),
        limit: Limit::Bytes(SEGMENTS * TRANSFER),
        ramp_ms: 0,
        distribution: Default::default(),
        alignment: None,
        direct: false,
        backend,
        rate_iops: None,
        poll_completions_us: None,
        submit_batch: None,
        seed: 7,
        repeats: 1,
        only: None,
        device: None,
        content: Default::default(),
        prepare: Prepare::Cached,
        pin: Pin::Off,
        shared_file: SharedFile::Interleaved,
        series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
        arrivals: None,
        curve: None,
        latency_target: None,
        steady: None,
        block_split: None,
        together: Vec::new(),
    }
}

/// Runs `plan` with [`CLIENTS`] client threads in `work`; every cell merged, in order.
fn run(plan: &AccessPlan, work: &std::path::Path) -> Vec<AccessResult> {
    plan.validate(1).unwrap();
    let stop = AtomicBool::new(false);
    let hooks = Hooks::default();
    let cells = plan.cells().len();
    let setup = Setup { cells, workdir: Some(work), hooks: &hooks, on_error: OnClientError::Abort, stop: &stop };
    let mut results = Vec::new();
    let (done, ending) = execute(plan, &Group::Local(CLIENTS), &setup, &Live::new(CLIENTS), |r: &AccessResult| {
        results.push(r.clone());
        Ok::<(), String>(())
    })
    .unwrap()
    .unwrap();
    assert_eq!((done, ending), (cells, Ending::Completed));
    results
}

/// The client (rank + 1) and offset a transfer's first 16 bytes say wrote it.
fn tag(transfer: &[u8]) -> (u64, u64) {
    let word = |at: usize| u64::from_le_bytes(transfer[at..at + 8].try_into().unwrap());
    (word(0), word(8))
}

fn check_figures(result: &AccessResult, write: bool) {
    let share = SEGMENTS * TRANSFER;
    let (bytes, ops) =
        if write { (result.write_bytes, result.writes.count()) } else { (result.read_bytes, result.reads.count()) };
    assert_eq!(bytes, CLIENTS as u64 * share, "every client moved its share once");
    assert_eq!(ops, CLIENTS as u64 * SEGMENTS);
    for c in &result.clients {
        assert_eq!(c.bytes(), share, "client {} moved its share", c.rank);
    }
    // The rate is every byte over the common wall time, as ior's aggregate.
    let mib = bytes as f64 / 1048576.0 / (result.wall_ns as f64 / 1e9);
    println!("{} {:.1} MiB/s over {} ns", if write { "write" } else { "read" }, result.mib_per_sec, result.wall_ns);
    assert!(result.wall_ns > 0);
    assert!((result.mib_per_sec - mib).abs() <= mib * 1e-9, "{} against {mib}", result.mib_per_sec);
    assert!((result.iops - ops as f64 / (result.wall_ns as f64 / 1e9)).abs() <= result.iops * 1e-9);
}

#[test]
fn each_client_writes_exactly_its_own_interleaved_transfers() {
    for backend in [BackendKind::Psync, BackendKind::Sync] {
        let work = tempfile::tempdir().unwrap();
        let results = run(&plan(vec![0, 100], backend), work.path());
        check_figures(&results[0], true);
        check_figures(&results[1], false);
        let file = std::fs::read(work.path().join(SharedFile::FILE_NAME)).unwrap();
        assert_eq!(file.len() as u64, CLIENTS as u64 * SEGMENTS * TRANSFER, "{backend}: the file holds every transfer");
        for (t, transfer) in file.chunks(TRANSFER as usize).enumerate() {
            let (client, offset) = tag(transfer);
            let owner = t as u64 % CLIENTS as u64;
            assert_eq!(
                (client, offset),
                (owner + 1, t as u64 * TRANSFER),
                "{backend}: transfer {t} is client {owner}'s (segment {})",
                t / CLIENTS
            );
        }
        for rank in 0..CLIENTS {
            let own = work.path().join(format!("client-{rank}")).join("access.dat");
            assert!(!own.exists(), "no client writes a file of its own: {}", own.display());
        }
    }
}

#[test]
fn a_client_that_runs_past_its_share_wraps_to_its_own_first_transfer() {
    let work = tempfile::tempdir().unwrap();
    let mut twice = plan(vec![0], BackendKind::Psync);
    twice.limit = Limit::Bytes(2 * SEGMENTS * TRANSFER);
    let results = run(&twice, work.path());
    assert_eq!(results[0].write_bytes, 2 * CLIENTS as u64 * SEGMENTS * TRANSFER);
    let file = std::fs::read(work.path().join(SharedFile::FILE_NAME)).unwrap();
    assert_eq!(file.len() as u64, CLIENTS as u64 * SEGMENTS * TRANSFER, "never past the clients' shares");
    for (t, transfer) in file.chunks(TRANSFER as usize).enumerate() {
        assert_eq!(tag(transfer), (t as u64 % CLIENTS as u64 + 1, t as u64 * TRANSFER), "transfer {t}");
    }
}
