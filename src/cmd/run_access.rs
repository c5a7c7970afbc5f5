//! `iomatrix run access`: Iometer/fio-style access specs, swept over lists.

use crate::cli::RunAccessArgs;
use crate::clients::ClientPlan;
use crate::job::{Job, JobSpec, JobTarget, Output};
use crate::ranks::{LiveSample, Ranks, Shared};
use crate::raw_device::RawDevice;
use crate::remote::RemoteTarget;
use crate::render::access::human_ns;
use iomatrix_access::{AccessPlan, AccessResult, CellSetting, Limit, Live, Place};
use iomatrix_coord::{Ending, Setup};
use iomatrix_core::{parse_duration, parse_size_list, BackendKind, ByteSize, UsageError};
use iomatrix_stats::LatencySummary;
use iomatrix_store::CellRow;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const DEFAULT_DURATION: Duration = Duration::from_secs(10);
const DEFAULT_FILE_SIZE: ByteSize = ByteSize(256 << 20);
/// The deepest queue a client keeps on a server: an SMB session has credits
/// for more, but on NFS each request in flight costs a connection of its own.
const MAX_DEPTH_ON_SERVER: u32 = 64;

pub fn run(args: RunAccessArgs, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let repeat = crate::repeat::Repeat::from_args(&args.common.repeat)?;
    let clients = ClientPlan::from_args(&args.common.client, ranks.mpi_size())?;
    repeat.refuse_tolerance_under_mpi(ranks)?;
    let remote = args.common.target.as_deref().and_then(crate::remote::url_of).map(RemoteTarget::parse).transpose()?;
    if remote.is_some() {
        refuse_on_server(&args)?;
    }
    // Claimed before planning: the default working set is the device's size.
    let device = args.device.as_deref().map(|d| RawDevice::claim(d, args.destroy_data_on.as_deref())).transpose()?;
    let mut plan = plan(&args, device.as_ref(), clients.count, remote.is_some())?;
    plan.repeats = repeat.count;
    let cells = plan.cells();
    let labels = crate::cmd::run_iozone::labels(&args.common.labels)?;
    let mut conditions = json!({ "limit": plan.limit, "rate_iops": plan.rate_iops });
    if let (Some(all), Some(data)) =
        (conditions.as_object_mut(), crate::data_content::conditions(&plan.content).as_object())
    {
        all.extend(data.clone());
    }
    if let Some(target) = &remote {
        conditions["cache"] = json!(
            "no client cache: iomatrix's own protocol client sends every request to the server (whose own cache may \
             serve it)"
        );
        conditions["backend"] = json!("iomatrix protocol client");
        conditions["requests"] = json!(plan.queue_depths.iter().map(|&qd| requests_on(target, qd)).collect::<Vec<_>>());
    }
    let mut job = Job::start(
        JobSpec {
            suite: "access",
            target: match (device, &remote) {
                (Some(device), _) => JobTarget::Device(device),
                (None, Some(target)) => JobTarget::Remote(target.clone()),
                (None, None) => JobTarget::Folder(args.common.target.clone().unwrap_or_else(std::env::temp_dir)),
            },
            labels,
            keep: args.common.keep,
            space_check: !args.common.no_space_check,
            // Clients share a device's working set; files are one per client.
            peak_bytes: plan.file_size.bytes() * if plan.device.is_some() { 1 } else { plan.clients as u64 },
            peak_detail: format!("{} client(s) x file {}", plan.clients, plan.file_size),
            backend: plan.backend,
            direct: plan.direct,
            clients: plan.clients,
            plan: serde_json::to_value(&plan)?,
            conditions,
            total_cells: cells.len(),
            keep_cell_lines: true,
            uncached_hint: "use --direct, or files larger than RAM,",
        },
        db,
    )?;
    let workdir = job.workdir.as_ref().map(|w| w.path().to_path_buf());
    // On a server: the run's folder there, each client connecting on its own.
    let remote = remote.zip(job.remote.as_ref().map(|dir| dir.name.clone()));
    let stop = job.stop;
    ranks.share(
        &Shared::Access {
            plan: plan.clone(),
            workdir: workdir.clone(),
            clients: clients.clone(),
            remote: remote.clone(),
        },
        &clients,
    )?;
    let connect = crate::remote::connector(remote.as_ref().map(|(target, _)| target));
    let place = place(&connect, remote.as_ref().map(|(_, folder)| folder));
    let setup = Setup {
        cells: cells.len(),
        workdir: workdir.as_deref(),
        hooks: &clients.hooks,
        on_error: clients.on_error,
        stop,
    };
    let group = ranks.group(plan.clients);
    // Under MPI, this rank's Live holds its own client; the others' samples reach the board.
    let mpi = ranks.mpi_size();
    let live = Live::new(if mpi.is_some() { 1 } else { plan.clients });
    let board = ranks.live_board();
    let cells_done = AtomicBool::new(false);
    // The cells of the pass under way (noisy cells are measured again in later passes).
    let pass_cells = std::sync::Mutex::new(cells.clone());
    let sample = || live_sample(&live);
    let outcome = ranks.relay_live(&sample, || {
        std::thread::scope(|scope| {
            if let Some(line) = job.progress.live_line() {
                let (live, cells_done, pass_cells) = (&live, &cells_done, &pass_cells);
                scope.spawn(move || {
                    // One updating line: the running cell's last second.
                    while !cells_done.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(250));
                        let (cell, ops, bytes, p99) = live.snapshot();
                        if ops == 0 {
                            continue;
                        }
                        let figures = match mpi {
                            Some(n) => board.summary(n, live_sample(live), |s| {
                                format!("{:.0} IOPS, {:.1} MiB/s", s.ops_per_sec, s.bytes_per_sec / 1048576.0)
                            }),
                            None => {
                                let slowest = live
                                    .slowest()
                                    .map(|(rank, ops)| format!(", slowest client {rank}: {ops} IOPS"))
                                    .unwrap_or_default();
                                format!("{ops} IOPS, {:.1} MiB/s{slowest}", bytes as f64 / 1048576.0)
                            }
                        };
                        line.set_message(format!(
                            "{}: {figures}, p99 {} (last second)",
                            pass_cells.lock().map(|c| c.get(cell).map(|c| c.describe())).ok().flatten().unwrap_or_default(),
                            human_ns(p99 as f64)
                        ));
                    }
                });
            }
            let mut sink = Sink { job: &mut job, plan: &plan, seq: 0, samples: BTreeMap::new() };
            let mut outcome = iomatrix_access::execute_at(&plan, &group, &setup, &place, &live, |r| sink.store(r));
            // Seed 001's rule: settings with a sample too far from their median are measured again.
            while let (Ok(Some((_, Ending::Completed))) | Ok(None), Some(tolerance)) = (&outcome, repeat.tolerance_pct) {
                let noisy: Vec<CellSetting> =
                    sink.samples.iter().filter(|(_, s)| repeat.noisy(s)).map(|(setting, _)| *setting).collect();
                if noisy.is_empty() {
                    break;
                }
                let again = AccessPlan { only: Some(noisy), repeats: 1, ..plan.clone() };
                let again_cells = again.cells();
                eprintln!(
                    "iomatrix: {} cell(s) have a sample further than {tolerance}% from the median: measuring them again",
                    again_cells.len()
                );
                if let Err(e) = sink.job.add_cells(again_cells.len()) {
                    return Err(std::io::Error::other(e.to_string()));
                }
                if let Ok(mut c) = pass_cells.lock() {
                    *c = again_cells.clone();
                }
                let setup = Setup { cells: again_cells.len(), ..setup };
                outcome = iomatrix_access::execute_at(&again, &group, &setup, &place, &live, |r| sink.store(r));
            }
            cells_done.store(true, Ordering::Relaxed);
            let done = sink.seq;
            outcome.map(|o| (done, o.map_or(Ending::Completed, |(_, ending)| ending)))
        })
    });
    let described = pass_cells.into_inner().unwrap_or(cells);
    job.finish(
        outcome,
        |i| described.get(i).map(|c| c.describe()).unwrap_or_default(),
        &Output { json: args.common.json, ..Output::default() },
    )
}

/// Where the clients' files are: on the server in `folder`, or local.
pub fn place<'a>(connect: &'a iomatrix_backend::Connect<'a>, folder: Option<&String>) -> Place<'a> {
    match folder {
        Some(folder) => Place::Remote { connect, folder: folder.clone() },
        None => Place::Local,
    }
}

/// How each client's requests reach a server at queue depth `qd`, for the
/// run's conditions. It states what the runner does (iomatrix_access::Place::Remote):
/// SMB keeps the requests in flight on the client's one session; nfs3_client
/// carries one request per connection, so depth N takes N connections.
fn requests_on(target: &RemoteTarget, qd: u32) -> String {
    let how = match (target, qd) {
        (RemoteTarget::Smb(_), 1) => "one request at a time on one SMB session".to_string(),
        (RemoteTarget::Smb(_), _) => format!("up to {qd} requests in flight at once on one SMB session"),
        (RemoteTarget::Nfs(_), 1) => "one request at a time on one NFS connection".to_string(),
        (RemoteTarget::Nfs(_), _) => format!(
            "{qd} NFS connections, one request in flight on each (nfs3_client carries one request per \
             connection), each driven by a thread of its own whose CPU time the cell's CPU% leaves out"
        ),
    };
    format!("queue depth {qd}: {how}; for each client")
}

/// Options that make no sense through a protocol client, refused before anything runs.
fn refuse_on_server(args: &RunAccessArgs) -> Result<(), UsageError> {
    if args.direct {
        return Err(UsageError::new(
            "--direct: iomatrix's own protocol client keeps no cache, so every request already goes to the server; \
             leave --direct out",
        ));
    }
    if let Some(backend) = &args.backend {
        return Err(UsageError::new(format!(
            "--backend {backend}: on a server through iomatrix's own client the requests go through that client \
             (SMB: many in flight on one session; NFS: one connection per request in flight); leave --backend out"
        )));
    }
    Ok(())
}

/// Stores each cell as it comes, numbering cells across passes, and keeps
/// every setting's samples (MiB/s) for the noise rule.
struct Sink<'a> {
    job: &'a mut Job,
    plan: &'a AccessPlan,
    seq: usize,
    samples: BTreeMap<CellSetting, Vec<f64>>,
}

impl Sink<'_> {
    fn store(&mut self, result: &AccessResult) -> Result<(), String> {
        let samples = self.samples.entry(result.cell.setting()).or_default();
        let line = done_line(result, samples.len() + 1, self.plan.repeats > 1 || !samples.is_empty());
        self.job.store_cell(&row(self.plan, result, self.seq), &line)?;
        self.seq += 1;
        samples.push(result.mib_per_sec);
        Ok(())
    }
}

/// The progress line of a finished cell.
fn done_line(result: &AccessResult, sample: usize, show_sample: bool) -> String {
    let mut line = format!(
        "{}: {:.0} IOPS, {:.1} MiB/s, read p99 {}, write p99 {}, CPU {:.0}%",
        result.cell.describe(),
        result.iops,
        result.mib_per_sec,
        p99(&result.reads.summary()),
        p99(&result.writes.summary()),
        result.cpu_percent
    );
    if let Some(slowest) = result.slowest() {
        line += &format!(
            " ({} clients; slowest: client {} at {:.0} IOPS)",
            result.clients.len(),
            slowest.rank,
            slowest.iops()
        );
    }
    if !result.failures.is_empty() {
        line += &format!(", {} client(s) failed", result.failures.len());
    }
    if show_sample {
        line += &format!(" (sample {sample})");
    }
    line
}

/// The last second of this process's clients, as sent to rank 0 under MPI.
pub fn live_sample(live: &Live) -> LiveSample {
    let (cell, ops, bytes, _) = live.snapshot();
    LiveSample { cell, bytes_per_sec: bytes as f64, ops_per_sec: ops as f64 }
}

fn p99(s: &LatencySummary) -> String {
    if s.count == 0 {
        "-".into()
    } else {
        human_ns(s.p99_ns as f64)
    }
}

fn row(plan: &AccessPlan, r: &AccessResult, seq: usize) -> CellRow {
    let clients: Vec<_> = r
        .clients
        .iter()
        .map(|c| {
            json!({
                "rank": c.rank,
                "read_bytes": c.read_bytes,
                "write_bytes": c.write_bytes,
                "ops": c.ops(),
                "iops": c.iops(),
                "mib_per_sec": c.mib_per_sec(),
                "measured": c.measured,
                "read": c.reads.summary(),
                "write": c.writes.summary(),
            })
        })
        .collect();
    CellRow {
        seq,
        test: "access".into(),
        file_size: Some(plan.file_size.bytes()),
        record_size: Some(r.cell.block_size.bytes()),
        backend: plan.backend.name().into(),
        direct: plan.direct,
        clients: r.clients.len(),
        bytes: r.read_bytes + r.write_bytes,
        ops: r.ops(),
        wall_ns: r.wall_ns,
        user_ns: r.user_ns,
        sys_ns: r.sys_ns,
        kib_per_sec: r.mib_per_sec * 1024.0,
        cpu_percent: r.cpu_percent,
        metrics: json!({
            "read_percent": r.cell.read_percent,
            "random_percent": r.cell.random_percent,
            "queue_depth": r.cell.queue_depth,
            "repeat": r.cell.repeat,
            "iops": r.iops,
            "mib_per_sec": r.mib_per_sec,
            "mib_per_sec_sum_of_clients": r.mib_per_sec_sum(),
            "failed_clients": r.failures,
            "start_barrier": r.starts,
            "read_bytes": r.read_bytes,
            "write_bytes": r.write_bytes,
            "read": r.reads.summary(),
            "write": r.writes.summary(),
            "per_second": r.series,
            "requests": issued(r),
            "verify": r.verify,
        }),
        client_figures: json!(clients),
        blobs: vec![("latency.read".into(), r.reads.to_bytes()), ("latency.write".into(), r.writes.to_bytes())],
    }
}

/// How the clients issued their requests, each account once.
fn issued(r: &AccessResult) -> Vec<&str> {
    let mut said: Vec<&str> = r.clients.iter().map(|c| c.issued.as_str()).collect();
    said.sort_unstable();
    said.dedup();
    said
}

fn plan(
    args: &RunAccessArgs,
    device: Option<&RawDevice>,
    clients: usize,
    on_server: bool,
) -> Result<AccessPlan, UsageError> {
    let sizes =
        |flag: &str, text: &str| parse_size_list(text, 1).map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")));
    let one_size =
        |flag: &str, text: &str| text.parse::<ByteSize>().map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")));
    let numbers = |flag: &str, text: &str| -> Result<Vec<u64>, UsageError> {
        text.split(',')
            .filter(|t| !t.trim().is_empty())
            .map(|t| {
                t.trim().parse::<u64>().map_err(|_| {
                    UsageError::new(format!("--{flag} {text}: '{t}' is not a whole number; give a list such as 100,0"))
                })
            })
            .collect()
    };
    let percents = |flag: &str, text: &str| -> Result<Vec<u8>, UsageError> {
        numbers(flag, text)?
            .into_iter()
            .map(|p| {
                u8::try_from(p).ok().filter(|p| *p <= 100).ok_or_else(|| {
                    UsageError::new(format!("--{flag} {p}: {p}% is over 100; percentages go from 0 to 100"))
                })
            })
            .collect()
    };
    let queue_depths = numbers("qd", &args.qd)?
        .into_iter()
        .map(|q| u32::try_from(q).map_err(|_| UsageError::new(format!("--qd {q}: far above any kernel's limit"))))
        .collect::<Result<Vec<u32>, _>>()?;
    let limit = match (&args.duration, &args.bytes) {
        (_, Some(b)) => Limit::Bytes(one_size("bytes", b)?.bytes()),
        (Some(d), None) => Limit::DurationMs(
            parse_duration(d).map_err(|e| UsageError::new(format!("--duration {d}: {e}")))?.as_millis() as u64,
        ),
        (None, None) => Limit::DurationMs(DEFAULT_DURATION.as_millis() as u64),
    };
    let wants_queue = queue_depths.iter().any(|&q| q > 1);
    let requested = match &args.backend {
        Some(b) => b.parse::<BackendKind>().map_err(|e| UsageError::new(format!("--backend: {e}")))?,
        None if wants_queue && !on_server => BackendKind::IoUring,
        None => BackendKind::Psync,
    };
    // On a server the protocol client issues the requests: psync is what such runs record, as iozone's do.
    let (backend, max_depth) =
        if on_server { (requested, MAX_DEPTH_ON_SERVER) } else { choose_backend(requested, wants_queue)? };
    let plan = AccessPlan {
        block_sizes: sizes("bs", &args.bs)?,
        read_percents: percents("read", &args.read)?,
        random_percents: percents("random", &args.random)?,
        queue_depths,
        clients,
        file_size: working_set(args.file_size.as_deref(), device)?,
        limit,
        alignment: args.align.as_deref().map(|a| one_size("align", a)).transpose()?,
        direct: args.direct,
        backend,
        rate_iops: args.rate,
        seed: 0x1_2006,
        repeats: 1,
        only: None,
        device: device.map(|d| d.path().to_path_buf()),
        content: args.data.content(),
    };
    if on_server {
        plan.validate_on_server(max_depth)?;
    } else {
        plan.validate(max_depth)?;
    }
    Ok(plan)
}

/// Each client's file size, or the part of the raw device the clients share.
fn working_set(file_size: Option<&str>, device: Option<&RawDevice>) -> Result<ByteSize, UsageError> {
    let asked = file_size
        .map(|t| t.parse::<ByteSize>().map_err(|e| UsageError::new(format!("--file-size {t}: {e}"))))
        .transpose()?;
    match (asked, device) {
        (Some(size), Some(device)) if size.bytes() > device.size() => Err(UsageError::new(format!(
            "--file-size {size} is larger than {} ({}); give at most its size, or leave --file-size out to use \
             all of it",
            device.path().display(),
            ByteSize(device.size())
        ))),
        (Some(size), _) => Ok(size),
        (None, Some(device)) => Ok(ByteSize(device.size())),
        (None, None) => Ok(DEFAULT_FILE_SIZE),
    }
}

/// io_uring is probed before anything runs: where the kernel refuses it,
/// depth-1 plans fall back to psync (said on stderr), deeper ones stop with the reason.
fn choose_backend(requested: BackendKind, wants_queue: bool) -> Result<(BackendKind, u32), UsageError> {
    if requested != BackendKind::IoUring {
        return Ok((requested, 1));
    }
    match iomatrix_backend::probe_io_uring() {
        Ok(support) => Ok((BackendKind::IoUring, support.max_depth)),
        Err(reason) if !wants_queue => {
            eprintln!("iomatrix: io_uring is unavailable here ({reason}); falling back to psync at queue depth 1");
            Ok((BackendKind::Psync, 1))
        }
        Err(reason) => Err(UsageError::new(format!(
            "io_uring is unavailable here ({reason}), and queue depths above 1 need it; use --qd 1, or enable \
             io_uring (sysctl kernel.io_uring_disabled=0)"
        ))),
    }
}
