//! `iomatrix run fileserver`: seed 003's file-server load. Many connections,
//! each in its own folder, write their files and read them back (or mix
//! reads and rewrites); every operation type is timed on its own. One cell
//! per phase. From one client or many (threads, or MPI ranks): each client
//! runs its own connections in its own folder, every phase started together.
//! On an `nfs://` or `smb://` target every connection is a session of
//! iomatrix's own protocol client, its own TCP connection to the server.

use crate::cli::RunFileserverArgs;
use crate::clients::ClientPlan;
use crate::job::{human, Job, JobSpec, JobTarget, Output};
use crate::progress::LiveLine;
use crate::ranks::{LiveBoard, LiveSample, Shared};
use crate::remote::RemoteTarget;
use iomatrix_coord::{Ending, Setup};
use iomatrix_core::{parse_size_list, BackendKind, ByteSize, UsageError};
use iomatrix_fileserver::{FileSizes, FileserverCell, FileserverPlan, Live, LiveSnapshot, Phase, Planned, Then};
use iomatrix_store::CellRow;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Seed 003's file sizes.
pub const DEFAULT_SIZES: &str = "4k,8k,16k,32k,64k,128k,256k,512k,1m,2m";

pub fn run(args: RunFileserverArgs, db: &Path, ranks: &crate::ranks::Ranks) -> anyhow::Result<ExitCode> {
    let repeat = crate::repeat::Repeat::from_args(&args.common.repeat)?;
    if repeat.tolerance_pct.is_some() {
        return Err(UsageError::new(
            "--tolerance: `run fileserver` does not run noisy phases again yet; use --repeat N (every phase stored)",
        )
        .into());
    }
    let clients = ClientPlan::from_args(&args.common.client, ranks.mpi_size())?;
    let mut plan = plan(&args)?;
    plan.repeats = repeat.count;
    let target = args.common.target.clone().unwrap_or_else(std::env::temp_dir);
    let remote = crate::remote::url_of(&target).map(RemoteTarget::parse).transpose()?;
    if remote.is_some() {
        check_remote_plan(&plan)?;
    }
    check_memory(&plan)?;
    if plan.drop_caches {
        check_drop_caches()?;
    }
    // Local clients share this process's descriptors; an MPI rank has its own.
    raise_fd_limit(&plan, if ranks.mpi_size().is_some() { 1 } else { clients.count }, remote.is_some());
    let phases = plan.phases();
    let total_bytes = plan.total_bytes() * clients.count as u64;
    let labels = crate::cmd::run_iozone::labels(&args.common.labels)?;
    let mut job = Job::start(
        JobSpec {
            suite: "fileserver",
            target: match &remote {
                Some(remote) => JobTarget::Remote(remote.clone()),
                None => JobTarget::Folder(target.clone()),
            },
            labels,
            keep: args.common.keep,
            space_check: !args.common.no_space_check,
            peak_bytes: total_bytes,
            peak_detail: format!(
                "{} client(s) x {} connection(s) x {} files, {} in all",
                clients.count,
                plan.connections,
                plan.files_per_connection,
                human(total_bytes)
            ),
            backend: BackendKind::Sync,
            direct: false,
            clients: clients.count,
            plan: serde_json::to_value(&plan)?,
            conditions: {
                let mut all = conditions(&plan, remote.as_ref());
                if let (Some(all), Some(data)) =
                    (all.as_object_mut(), crate::data_content::conditions(&plan.content).as_object())
                {
                    all.extend(data.clone());
                }
                all
            },
            total_cells: phases.len(),
            keep_cell_lines: true,
            uncached_hint: "use --drop-caches (reads then come from storage), or more data than RAM,",
        },
        db,
    )?;
    // Local: a working folder here. Remote: one on the server, each connection connecting on its own.
    let (workdir, remote_folder) = match (&remote, &job.remote) {
        (Some(_), Some(dir)) => (None, Some(dir.name.clone())),
        _ => match job.workdir.as_ref() {
            Some(w) => (Some(w.path().to_path_buf()), None),
            None => anyhow::bail!("the file-server load needs a folder target"),
        },
    };
    ranks.share(
        &Shared::Fileserver {
            plan: plan.clone(),
            workdir: workdir.clone().unwrap_or_default(),
            clients: clients.clone(),
            remote: remote.clone().zip(remote_folder.clone()),
        },
        &clients,
    )?;
    let connect = crate::remote::connector(remote.as_ref());
    let place = match &remote_folder {
        Some(folder) => iomatrix_fileserver::Place::Remote { connect: &connect, folder: folder.clone() },
        None => iomatrix_fileserver::Place::Local,
    };
    let setup = Setup {
        cells: phases.len(),
        workdir: workdir.as_deref(),
        hooks: &clients.hooks,
        on_error: clients.on_error,
        stop: job.stop,
    };
    // Under MPI, rank 0 sees only its own client live; the others' figures arrive with the phase.
    let lives: Vec<Live> =
        (0..if ranks.mpi_size().is_some() { 1 } else { clients.count }).map(|_| Live::new()).collect();
    let finished = AtomicBool::new(false);
    let sampler = Sampler::default();
    let sample = || sampler.sample(&lives[0]);
    let board = ranks.live_board();
    let mpi = ranks.mpi_size().map(|n| (n, &board));
    // What the stored cells name as the backend: the protocol client, or system calls.
    let backend = match &remote {
        Some(RemoteTarget::Nfs(_)) => "nfs",
        Some(RemoteTarget::Smb(_)) => "smb",
        None => BackendKind::Sync.name(),
    };
    // Connections that failed (a full disk, a server gone): the run completes, and says so in its exit code.
    let failed_connections = std::cell::Cell::new(0usize);
    let outcome = ranks.relay_live(&sample, || {
        std::thread::scope(|scope| {
            if let Some(line) = job.progress.live_line() {
                let (lives, finished, phases) = (&lives, &finished, &phases);
                scope.spawn(move || live_display(&line, lives, finished, phases, mpi));
            }
            let outcome = iomatrix_fileserver::execute_clients(
                &plan,
                &ranks.group(clients.count),
                &setup,
                &place,
                &lives,
                |cell| {
                    failed_connections.set(failed_connections.get() + cell.merged.connections_failed);
                    job.store_cell(&row(&plan, cell, backend), &summary_line(cell))
                },
            );
            finished.store(true, Ordering::Relaxed);
            outcome
        })
    });
    let outcome = outcome.map(|o| o.unwrap_or((0, Ending::Completed)));
    let completed = matches!(outcome, Ok((_, Ending::Completed)));
    let run_id = job.run_id;
    let code = job.finish(
        outcome,
        |i| phases.get(i).map_or_else(String::new, |p| format!("the {} phase", p.name())),
        &Output { json: args.common.json, ..Output::default() },
    )?;
    let failed = failed_connections.get();
    if completed && failed > 0 {
        // Seed 003's connections are the clients: some failed, every phase ran (exit 3, as README "Exit codes").
        eprintln!(
            "iomatrix: run #{run_id} completed, but {failed} connection(s) failed (their errors and lost samples are \
             stored with the phases)"
        );
        return Ok(ExitCode::from(crate::app::EXIT_CLIENTS_LOST));
    }
    Ok(code)
}

/// One updating line: the phase under way, files done, MiB/s over the last
/// interval summed over the clients, and the slowest client.
fn live_display(
    line: &LiveLine,
    lives: &[Live],
    finished: &AtomicBool,
    phases: &[Phase],
    mpi: Option<(usize, &LiveBoard)>,
) {
    let mut last: Vec<(u64, usize)> = vec![(0, usize::MAX); lives.len()];
    let mut last_at = Instant::now();
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(250));
        let snaps: Vec<LiveSnapshot> = lives.iter().map(Live::snapshot).collect();
        let Some(first) = snaps.iter().find(|s| s.started) else { continue };
        let secs = last_at.elapsed().as_secs_f64().max(1e-3);
        last_at = Instant::now();
        let rates: Vec<f64> = snaps
            .iter()
            .zip(&mut last)
            .map(|(s, (bytes, phase))| {
                if s.phase != *phase {
                    (*bytes, *phase) = (0, s.phase);
                }
                let rate = s.bytes.saturating_sub(*bytes) as f64 / 1048576.0 / secs;
                *bytes = s.bytes;
                rate
            })
            .collect();
        let mut msg = format!(
            "{}: {}/{} files, {:.1} MiB/s, {} connection(s) failed",
            phases.get(first.phase).map_or("?", |p| p.name()),
            snaps.iter().map(|s| s.files_done).sum::<u64>(),
            snaps.iter().map(|s| s.files_total).sum::<u64>(),
            rates.iter().sum::<f64>(),
            snaps.iter().map(|s| s.failed).sum::<usize>()
        );
        if let Some((ranks, board)) = mpi {
            let mine = LiveSample { cell: first.phase, bytes_per_sec: rates[0] * 1048576.0, ops_per_sec: 0.0 };
            let rate = |s: &LiveSample| format!("{:.1} MiB/s", s.bytes_per_sec / 1048576.0);
            msg = format!("rank 0's client: {msg}; {}", board.summary(ranks, mine, rate));
        } else if let Some((rank, rate)) =
            rates.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1)).filter(|_| rates.len() > 1)
        {
            msg += &format!(", slowest client {rank}: {rate:.1} MiB/s");
        }
        line.set_message(msg);
    }
}

/// This rank's bytes per second since its last sample, as sent to rank 0 under MPI.
#[derive(Default)]
pub struct Sampler(std::sync::Mutex<Option<(usize, u64, Instant)>>);

impl Sampler {
    pub fn sample(&self, live: &Live) -> LiveSample {
        let now = live.snapshot();
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let rate = match *last {
            Some((phase, bytes, at)) if phase == now.phase => {
                now.bytes.saturating_sub(bytes) as f64 / at.elapsed().as_secs_f64().max(1e-3)
            }
            _ => 0.0,
        };
        *last = Some((now.phase, now.bytes, Instant::now()));
        LiveSample { cell: now.phase, bytes_per_sec: rate, ops_per_sec: 0.0 }
    }
}

/// The raw arguments as a validated plan.
fn plan(args: &RunFileserverArgs) -> Result<FileserverPlan, UsageError> {
    let sizes = match (&args.profile, &args.sizes) {
        (Some(path), _) => FileSizes::load_profile(path)?,
        (None, text) => FileSizes::List(size_list(text.as_deref().unwrap_or(DEFAULT_SIZES))?),
    };
    let record = args
        .record
        .parse::<ByteSize>()
        .map_err(|e| UsageError::new(format!("--record {}: {e}; e.g. --record 4k", args.record)))?;
    let then = match &args.mix {
        None => Then::Read,
        Some(text) => Then::Mix { read_percent: percent(text)? },
    };
    let plan = FileserverPlan {
        connections: args.connections,
        files_per_connection: args.files_per_connection,
        sizes,
        record,
        then,
        fsync_every: args.fsync_every.as_deref().map(|t| count("fsync-every", t)).transpose()?,
        interleave: args.interleave.as_deref().map(|t| count("interleave", t)).transpose()?,
        drop_caches: args.drop_caches,
        seed: args.seed,
        repeats: 1,
        content: args.data.content(),
    };
    plan.validate()?;
    Ok(plan)
}

/// `4k,8k,1m` in the order given (file i gets the (i mod n)-th), ranges
/// `4k..2m` expanding to their powers of two; every size above zero.
fn size_list(text: &str) -> Result<Vec<ByteSize>, UsageError> {
    let bad = |e: String| UsageError::new(format!("--sizes {text}: {e}"));
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part.contains("..") {
            out.extend(parse_size_list(part, 1).map_err(|e| bad(e.to_string()))?);
        } else {
            out.push(part.parse::<ByteSize>().map_err(|e| bad(e.to_string()))?);
        }
    }
    if out.is_empty() {
        return Err(bad("no sizes: give at least one, e.g. 4k,8k,1m".into()));
    }
    if out.iter().any(|s| s.bytes() == 0) {
        return Err(bad("a size of 0: every file needs at least one byte; give sizes such as 4k,8k,1m".into()));
    }
    Ok(out)
}

fn percent(text: &str) -> Result<u8, UsageError> {
    let n: u64 = text.trim().parse().map_err(|_| {
        UsageError::new(format!("--mix {text}: not a whole number; give the percent of visits that read, 0..100"))
    })?;
    u8::try_from(n).ok().filter(|&p| p <= 100).ok_or_else(|| {
        UsageError::new(format!("--mix {n}: {n}% is over 100; give the percent of visits that read, 0..100"))
    })
}

fn count(flag: &str, text: &str) -> Result<u64, UsageError> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| UsageError::new(format!("--{flag} {text}: not a whole number; give a count such as 1, 4 or 16")))
}

/// Each connection holds a record to read into: refuse plans whose buffers alone would crowd the RAM.
fn check_memory(plan: &FileserverPlan) -> Result<(), UsageError> {
    let ram = iomatrix_environment::machine_ram_bytes();
    let buffers = plan.record.bytes().saturating_mul(plan.connections as u64);
    if ram > 0 && buffers > ram / 2 {
        return Err(UsageError::new(format!(
            "{} connections x --record {} need {} of buffers, over half this machine's RAM ({}); choose a smaller \
             --record or fewer --connections",
            plan.connections,
            plan.record,
            human(buffers),
            human(ram)
        )));
    }
    Ok(())
}

/// What makes no sense through a protocol client: dropping a cache it does not have.
fn check_remote_plan(plan: &FileserverPlan) -> Result<(), UsageError> {
    if plan.drop_caches {
        return Err(UsageError::new(
            "--drop-caches: iomatrix's own protocol client keeps no cache (every request goes to the server), and \
             the server's cache cannot be dropped from here; leave --drop-caches out (or drop it on the server \
             between runs)",
        ));
    }
    Ok(())
}

/// Descriptors one connection holds through a protocol client: its socket
/// and its runtime's epoll and wake-up descriptors, with room to spare.
const REMOTE_FDS_PER_CONNECTION: u64 = 4;

fn check_drop_caches() -> Result<(), UsageError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(UsageError::new(
            "--drop-caches needs root (it writes /proc/sys/vm/drop_caches); run as root, or leave it out and read \
             the read phase as possibly served by the page cache",
        ));
    }
    iomatrix_fileserver::can_drop_caches().map_err(|e| {
        UsageError::new(format!(
            "--drop-caches: cannot write {} ({e}); on this system the page cache cannot be dropped, leave it out",
            iomatrix_fileserver::DROP_CACHES
        ))
    })
}

/// Raises the open-file limit where the connections need more, and says so.
fn raise_fd_limit(plan: &FileserverPlan, clients: usize, remote: bool) {
    // The connections' files (or sessions), plus the database, the terminal and some slack.
    let per_connection = if remote { REMOTE_FDS_PER_CONNECTION } else { plan.fds_per_connection() };
    let needed = (plan.connections as u64 * clients as u64).saturating_mul(per_connection).saturating_add(64);
    match iomatrix_fileserver::raise_fd_limit(needed) {
        Ok(limit) => {
            if limit.raised() {
                eprintln!(
                    "iomatrix: raised the open-file limit (RLIMIT_NOFILE) from {} to {} for {} connection(s)",
                    limit.was, limit.now, plan.connections
                );
            }
            if limit.now < needed {
                eprintln!(
                    "iomatrix: warning: the open-file limit is {} (hard limit {}), below the {needed} descriptors \
                     {} connection(s) may hold at once: some may fail with EMFILE (counted; the others go on)",
                    limit.now, limit.hard, plan.connections
                );
            }
        }
        Err(e) => eprintln!("iomatrix: warning: cannot read the open-file limit: {e}"),
    }
}

fn conditions(plan: &FileserverPlan, remote: Option<&RemoteTarget>) -> Value {
    if remote.is_some() {
        return json!({
            "cache": "no client cache: iomatrix's own protocol client sends every request to the server (whose own \
                      cache may serve it)",
            "backend": "iomatrix protocol client",
            "drop_caches": false,
            "largest_file_bytes": plan.largest_file(),
            "connections": plan.connections,
            "files_per_connection": plan.files_per_connection,
            "record_bytes": plan.record.bytes(),
            "interleave": plan.interleave,
            "fsync_every": plan.fsync_every,
            "sessions": "one session (TCP connection) per connection, connected and its folder made before the \
                         write phase, untimed (stored per connection as setup_ns)",
            "timing": "each request timed on its own: create = exclusive create (NFS CREATE GUARDED, SMB CREATE \
                       FILE_CREATE) + close (SMB CLOSE; nothing to send on NFSv3), open = NFS LOOKUP / SMB \
                       CREATE, one WRITE or READ per record (split at the negotiated maximum), fsync = NFS COMMIT / \
                       SMB FLUSH (only with --fsync-every), close = SMB CLOSE (nothing on NFSv3); all connections \
                       start each phase together; a connection's KB/s is its bytes over the common start to its \
                       last operation, the total is all bytes over the phase's completion time",
        });
    }
    let cache = if plan.drop_caches {
        "page cache in use for writes; synced and dropped (drop_caches=3) before the read phase, so reads come \
         from the storage"
    } else {
        "page cache in use; the read phase may be served by the page cache (no --drop-caches)"
    };
    json!({
        "cache": cache,
        "drop_caches": plan.drop_caches,
        "largest_file_bytes": plan.largest_file(),
        "connections": plan.connections,
        "files_per_connection": plan.files_per_connection,
        "record_bytes": plan.record.bytes(),
        "interleave": plan.interleave,
        "fsync_every": plan.fsync_every,
        "timing": "each operation timed on its own (create = open(O_CREAT|O_EXCL) + close; fsync only with \
                   --fsync-every); all connections start each phase together; a connection's KB/s is its bytes \
                   over the common start to its last operation, the total is all bytes over the phase's \
                   completion time",
    })
}

/// The progress line of a finished phase.
fn summary_line(cell: &FileserverCell) -> String {
    let r = &cell.merged;
    let mut line = format!(
        "{}: {} files, {} in {:.2} s, {:.0} KB/s per connection, {:.0} KB/s in all",
        r.phase.name(),
        r.done.files,
        human(r.done.bytes),
        r.wall_ns as f64 / 1e9,
        r.avg_connection_kib_per_sec,
        r.total_kib_per_sec
    );
    if r.connections_failed + r.connections_skipped > 0 {
        let errors: Vec<String> = r.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        line.push_str(&format!(
            "; {} connection(s) failed ({}), {} out since an earlier phase, {} operations lost",
            r.connections_failed,
            if errors.is_empty() { "-".into() } else { errors.join(", ") },
            r.connections_skipped,
            r.lost.ops.total()
        ));
    }
    if let Some(slowest) = cell.slowest() {
        line += &format!(
            "; {} clients, {:.0} KB/s summed (slowest: client {} at {:.0} KB/s)",
            cell.clients.len(),
            cell.kib_per_sec_sum,
            slowest.rank,
            slowest.result.total_kib_per_sec
        );
    }
    if !cell.failures.is_empty() {
        line += &format!(", {} client(s) failed", cell.failures.len());
    }
    line
}

fn planned_json(p: &Planned) -> Value {
    json!({ "files": p.files, "bytes": p.bytes, "ops": p.ops })
}

fn row(plan: &FileserverPlan, cell: &FileserverCell, backend: &str) -> CellRow {
    let r = &cell.merged;
    let ops = r.phase.ops(plan.fsync_every.is_some());
    let mut latency = Map::new();
    for &op in &ops {
        latency.insert(op.name().into(), serde_json::to_value(r.latency(op).summary()).unwrap_or_default());
    }
    let clients: Vec<Value> = r
        .connections
        .iter()
        .map(|c| {
            let mut v = json!({
                "rank": c.rank,
                "files": c.done.files,
                "bytes": c.done.bytes,
                "ns": c.ns(),
                "start_delay_ns": c.start_delay_ns(),
                "kib_per_sec": (c.kib_per_sec() * 10.0).round() / 10.0,
            });
            if let Some(e) = &c.error {
                v["error"] = json!({ "kind": e.kind, "op": e.op, "message": e.message });
            }
            if c.skipped {
                v["skipped"] = json!(true);
            }
            if c.setup_ns > 0 {
                v["setup_ns"] = json!(c.setup_ns);
            }
            v
        })
        .collect();
    // Each client's operations per type: over the clients they add up to the merged histograms' counts.
    let op_counts = |r: &iomatrix_fileserver::PhaseResult| -> Map<String, Value> {
        ops.iter().map(|&op| (op.name().to_string(), json!(r.latency(op).count()))).collect()
    };
    let mut metrics = json!({
        "phase": r.phase.name(),
        "ops": latency,
        "planned": planned_json(&r.planned),
        "done": planned_json(&r.done),
        "lost": planned_json(&r.lost),
        "lost_samples": r.lost.ops.total(),
        "avg_connection_kib_per_sec": r.avg_connection_kib_per_sec,
        "total_kib_per_sec": r.total_kib_per_sec,
        "completion_ns": r.wall_ns,
        "connections_ok": r.connections_ok,
        "connections_failed": r.connections_failed,
        "connections_skipped": r.connections_skipped,
        "errors": r.errors,
        "caches_dropped": r.caches_dropped,
        "repeat": r.index / 2 + 1,
        "kib_per_sec_sum_of_clients": cell.kib_per_sec_sum,
        "clients": cell.clients.iter().map(|c| json!({
            "rank": c.rank,
            "files": c.result.done.files,
            "bytes": c.result.done.bytes,
            "ops": op_counts(&c.result),
            "completion_ns": c.result.wall_ns,
            "total_kib_per_sec": c.result.total_kib_per_sec,
            "connections_failed": c.result.connections_failed,
        })).collect::<Vec<_>>(),
    });
    crate::clients::add_client_metrics(&mut metrics, &cell.failures, &cell.starts);
    // The untimed setup before the first phase: sessions connected, folders made.
    let setups: Vec<u64> = r.connections.iter().map(|c| c.setup_ns).filter(|&ns| ns > 0).collect();
    if !setups.is_empty() {
        metrics["setup"] = json!({
            "connections": setups.len(),
            "mean_ns": setups.iter().sum::<u64>() / setups.len() as u64,
            "max_ns": setups.iter().max(),
        });
    }
    if plan.content.stamped() {
        metrics["verify"] = json!(iomatrix_verify::Tally::sum(r.connections.iter().filter_map(|c| c.verify.as_ref())));
    }
    if let iomatrix_fileserver::Phase::Mix { read_percent } = r.phase {
        metrics["read_percent"] = json!(read_percent);
    }
    CellRow {
        seq: r.index,
        test: r.phase.name().into(),
        file_size: Some(plan.largest_file()),
        record_size: Some(plan.record.bytes()),
        backend: backend.into(),
        direct: false,
        clients: r.connections.len(),
        bytes: r.done.bytes,
        ops: r.done.ops.total(),
        wall_ns: r.wall_ns,
        user_ns: r.user_ns,
        sys_ns: r.sys_ns,
        kib_per_sec: r.total_kib_per_sec,
        cpu_percent: r.cpu_percent(),
        metrics,
        client_figures: json!(clients),
        blobs: ops
            .iter()
            .filter(|&&op| r.latency(op).count() > 0)
            .map(|&op| (format!("latency.{}", op.name()), r.latency(op).to_bytes()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_lists_keep_their_order_and_refuse_zero() {
        let v = size_list("1m, 4k,4k,8k..32k").unwrap();
        assert_eq!(v.iter().map(|s| s.bytes()).collect::<Vec<_>>(), [1 << 20, 4096, 4096, 8192, 16384, 32768]);
        assert!(size_list("4k,0").unwrap_err().to_string().contains("a size of 0"));
        assert!(size_list("4k,-8k").unwrap_err().to_string().contains("negative"));
        assert!(size_list("4q").unwrap_err().to_string().contains("not a size"));
        assert!(size_list(",").unwrap_err().to_string().contains("no sizes"));
        assert_eq!(size_list(DEFAULT_SIZES).unwrap().len(), 10);
        assert!(percent("101").unwrap_err().to_string().contains("over 100"));
        assert!(percent("x").unwrap_err().to_string().contains("not a whole number"));
        assert_eq!(percent("70").unwrap(), 70);
        assert!(count("interleave", "-1").unwrap_err().to_string().contains("--interleave -1"));
    }
}
