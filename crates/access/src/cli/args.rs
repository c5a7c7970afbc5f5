//! `iomatrix run access`: Iometer/fio-style access specs with iomatrix's
//! flags, as a validated plan. Lists in any parameter sweep.

use crate::{fio_words, AccessPlan, LatencyTarget, Limit, Pin, Prepare, SharedFile};
use clap::Args;
use iomatrix_core::{parse_duration, parse_size_list, BackendKind, ByteSize, UsageError};
use iomatrix_harness::curve::Curve;
use iomatrix_harness::data::DataArgs;
use iomatrix_harness::raw_device::RawDevice;
use iomatrix_harness::{CommonRunArgs, RunOptions, Target};
use iomatrix_random::{Arrival, Distribution};
use iomatrix_stats::steady::{Criterion, SteadyRule};
use std::path::PathBuf;
use std::time::Duration;

const DEFAULT_DURATION: Duration = Duration::from_secs(10);
const DEFAULT_FILE_SIZE: ByteSize = ByteSize(256 << 20);
/// The deepest queue a client keeps on a server: an SMB session has credits
/// for more, but on NFS each request in flight costs a connection of its own.
const MAX_DEPTH_ON_SERVER: u32 = 64;

/// Iometer/fio-style access specs with outstanding I/O; lists in any parameter sweep
///
/// On a server (--target nfs://host[:port]/export[/path] or smb://[user@]host[:port]/share[/path])
/// the requests go through iomatrix's own protocol client: no mount, no client cache. Each client
/// connects its own session and works in client-N/ of the run's folder there (its file laid out
/// first, untimed). SMB keeps up to --qd requests in flight at once on the client's one session;
/// NFS (one request per connection in its client library) opens --qd connections per client, one
/// request in flight on each. The run's conditions say which. On a server --qd goes up to 64;
/// --direct and --backend are refused (there is no client cache to bypass, and the protocol
/// client issues the requests); --device does not combine with --target; --align sets the
/// offsets' granularity as it does on local files.
///
/// fio's option names work where they mean the same (--iodepth, --blocksize, --rw/--readwrite
/// with --rwmixread, --runtime, --size, --numjobs, --ioengine, --ramp_time, --random_distribution,
/// --rate_iops, --direct=1); its other common options are answered with the flag to use.
// The doc comment is clap's help text: `[user@]host[:port]` there is a URL's shape, not a link.
#[allow(rustdoc::broken_intra_doc_links)]
#[derive(Args, Debug)]
#[command(next_help_heading = "Access specs")]
pub struct RunAccessArgs {
    /// Block sizes, e.g. 2k,4k,8k,32k,64k,128k,256k or 4k..256k
    #[arg(long, visible_alias = "blocksize", default_value = "4k", value_name = "SIZES", allow_hyphen_values = true)]
    pub bs: String,

    /// Mixed block sizes by share, as fio's bssplit: 4k/10:64k/50:32k/40, or READS,WRITES; each
    /// request's size drawn by share (a size without a share takes the rest); offsets aligned to
    /// the smallest unless --align says
    #[arg(long, value_name = "SPLIT", conflicts_with = "bs")]
    pub bssplit: Option<String>,

    /// Percent of requests that read (the rest write), a list: 100,0
    #[arg(long, default_value = "100", value_name = "PCTS", allow_hyphen_values = true)]
    pub read: String,

    /// Percent of requests at random offsets (the rest sequential), a list
    #[arg(long, default_value = "100", value_name = "PCTS", allow_hyphen_values = true)]
    pub random: String,

    /// fio's name for the mix instead of --read and --random: read, write, randread, randwrite,
    /// rw (readwrite) or randrw, the mixed ones reading --rwmixread percent (fio's default 50)
    #[arg(long, visible_alias = "readwrite", value_name = "NAME", conflicts_with_all = ["read", "random"])]
    pub rw: Option<String>,

    /// With --rw rw or randrw: percent of requests that read (fio's rwmixread)
    #[arg(long, value_name = "PCT", requires = "rw", conflicts_with = "rwmixwrite")]
    pub rwmixread: Option<u8>,

    /// With --rw rw or randrw: percent of requests that write (fio's rwmixwrite)
    #[arg(long, value_name = "PCT", requires = "rw")]
    pub rwmixwrite: Option<u8>,

    /// Outstanding requests per client (queue depth), a list: 16,32,64,128,255
    #[arg(long, visible_alias = "iodepth", default_value = "1", value_name = "DEPTHS", allow_hyphen_values = true)]
    pub qd: String,

    /// Where random requests go, as fio's random_distribution: random (uniform), zipf:THETA
    /// (theta above 0, not 1; zipf:1.2 is strongly skewed), pareto:H (0 < H < 1; pareto:0.9 puts
    /// 90% of requests on 10% of the blocks) or normal:SIGMA (fio's bell over the file, widened by
    /// SIGMA percent of it, 0 to below 100). Hot blocks are scattered over the file as fio
    /// scatters them and stay the same in every cell [default: random]
    #[arg(long, visible_alias = "random_distribution", value_name = "DIST", allow_hyphen_values = true)]
    pub distribution: Option<String>,

    /// Each client's file (its working set), laid out before the first cell [default: 256m;
    /// with --device, the whole device]
    #[arg(long, visible_alias = "size", value_name = "SIZE", allow_hyphen_values = true)]
    pub file_size: Option<String>,

    /// interleaved: every client reads and writes one shared file, access-shared.dat, in transfers
    /// interleaved by client (transfer k of client r of N at offset (k x N + r) x --bs), as ior
    /// lays out -s segments with -b equal to -t: IO500's ior-hard (ior -t 47008 -b 47008 -s N).
    /// --file-size is each client's share; sequential only (--random 0); each write's first 16
    /// bytes name its client and offset [default: a file per client]
    #[arg(long, value_name = "LAYOUT", conflicts_with = "device")]
    pub shared_file: Option<String>,

    /// Run on this raw block device instead of files in --target: every client reads and
    /// writes it in place (its data is destroyed). Needs --destroy-data-on naming it again
    #[arg(long, value_name = "DEVICE", conflicts_with_all = ["target", "keep"])]
    pub device: Option<PathBuf>,

    /// Confirms that the data on the --device may be destroyed
    #[arg(long, value_name = "DEVICE", requires = "device")]
    pub destroy_data_on: Option<PathBuf>,

    /// How long each cell issues requests, at most 720h (30 days) [default: 10s unless --bytes]
    #[arg(long, visible_alias = "runtime", value_name = "TIME", conflicts_with = "bytes", allow_hyphen_values = true)]
    pub duration: Option<String>,

    /// An untimed warm-up at the start of every cell, as fio's ramp_time: the cell's own requests,
    /// counted in no figure and no latency; the requests it leaves in flight complete before the
    /// timed part starts. Always a time, also with --bytes; it may be longer than --duration; at
    /// most 720h; stored with the run [default: none]
    #[arg(long, visible_alias = "ramp_time", value_name = "TIME", allow_hyphen_values = true)]
    pub ramp: Option<String>,

    /// Bytes each client moves per cell, instead of a duration
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub bytes: Option<String>,

    /// Offsets are multiples of this [default: the block size]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub align: Option<String>,

    /// Bypass the page cache with O_DIRECT (local files and devices only); fio's --direct=1 also works
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL",
          value_parser = clap::builder::BoolishValueParser::new(), default_value = "false",
          hide_default_value = true, hide_possible_values = true)]
    pub direct: bool,

    /// The page cache's state at each cell's start: dropped (each client's file laid out in 1 MiB
    /// writes, fsynced, and dropped from the cache before every cell, as fio's default
    /// invalidate=1), cached (laid out the same and kept cached), or block (laid out in the cell's
    /// own block size and kept cached). How much was cached is stored with every cell
    /// [default: dropped]
    #[arg(long, value_name = "STATE")]
    pub prepare: Option<String>,

    /// Where each client's thread runs: shallow (kept as spread in cells of up to 8 requests in
    /// flight, where a thread waits for its requests; placed by the kernel in deeper cells, where
    /// a kept thread leaves the device's workers fewer CPUs), spread (client i kept on the i-th
    /// CPU the run may use, round robin, so the same work measures the same run after run) or off
    /// (the kernel places and moves it, as fio does by default) [default: shallow]
    #[arg(long, value_name = "PLACEMENT")]
    pub pin: Option<String>,

    /// io_uring, psync, sync or mmap [default: io_uring when any --qd is above 1, else psync]
    /// (local files and devices only: on nfs:// and smb:// the protocol client issues the requests)
    #[arg(long, visible_alias = "ioengine", value_name = "BACKEND")]
    pub backend: Option<String>,

    /// At most this many requests per second per client. Alone it paces a closed loop as fio's
    /// rate_iops does (a request waits for its time and for a free slot; its latency counts from
    /// its issue); with --arrivals it is the rate offered in open loop
    #[arg(long, visible_alias = "rate_iops", value_name = "IOPS")]
    pub rate: Option<u64>,

    /// Open loop: requests arrive at --rate (or a curve's point), uniform (one every 1/rate s, as
    /// fio's rate_process=linear) or poisson (exponential gaps, as vdbench's default); each is
    /// issued at its arrival or as soon after as a slot of --qd is free, and its latency counts
    /// from its arrival, so a target that falls behind shows its queue (no coordinated omission).
    /// Requests issued more than 1 ms late are counted (late), and arrivals due before the cell's
    /// end but never issued are its backlog; both stored with the cell [default with --curve:
    /// uniform]
    #[arg(long, value_name = "SPACING")]
    pub arrivals: Option<String>,

    /// Measure every setting as a throughput-latency curve (vdbench's iorate=curve): first its
    /// maximum, closed loop at --qd, then open-loop points (--arrivals) at percentages of that
    /// maximum, lightest first: 10,50,70,80,90,100 when given alone, a list (10,50,90), a range
    /// with its step (10-100,10), or absolute rates of all clients together (500/s,1000/s). Each
    /// client offers its share: the percentage of its own rate at the maximum, or the rate split
    /// evenly. Each point is a cell; the last stored point of a curve holds the curve's maximum
    /// within --stop-curve's bound and SPEC SFS 2014's overall response time; show prints each
    /// curve as a table, compare gives those two figures verdicts, report charts each curve
    /// (HTML, XLSX; a table in Markdown). Not with --rate, --bytes or --repeat
    #[arg(long, value_name = "POINTS", num_args = 0..=1, default_missing_value = "")]
    pub curve: Option<String>,

    /// With --curve: end each curve at its first open-loop point past this latency bound
    /// (vdbench's stopcurve): 5ms judges the mean; p50:, p99: or p99.9: judge that percentile
    /// (p99:1ms). Its remaining points are not run. A bound no point meets is stored as such
    /// ("no load point meets p99 <= 1 ms; ..."). Under mpirun every rank hears it with rank 0's
    /// word after each point
    #[arg(long, value_name = "BOUND", requires = "curve")]
    pub stop_curve: Option<String>,

    /// io_uring: before sleeping for a completion, ask the kernel for it without sleeping for up to
    /// TIME (e.g. 50us), as a polling application does. The latency then holds no wake-up from sleep;
    /// the client thread spins meanwhile, and its CPU% counts that. Stored with the run [default: off:
    /// wait at once, as fio does by default]
    #[arg(long, value_name = "TIME")]
    pub poll_completions: Option<String>,

    /// io_uring: hand requests to the kernel as soon as N are prepared (fio's iodepth_batch_submit);
    /// the requests that fill the queue go in with the wait for the next completion, in one system call.
    /// Stored with the run [default: depth/8, from 1 to 8: one at a time below depth 16, 4 at depth 32,
    /// 8 from depth 64]
    #[arg(long, visible_alias = "iodepth_batch_submit", value_name = "N")]
    pub submit_batch: Option<u32>,

    /// The deepest queue whose requests meet this latency: each cell's --qd is the most tried, and
    /// the depth is searched as fio's latency_target searches it (from depth 1, doubling while a
    /// window meets the target, halfway back toward the last depth that met it when one does not),
    /// then the cell is measured at the depth found for its --duration. It judges each request's
    /// total latency, issue to completion (fio's lat). A target not even depth 1 meets is stored as
    /// such (the cell measured at depth 1). Not yet: the highest rate within a target for the
    /// personality and metadata suites
    #[arg(long, visible_alias = "latency_target", value_name = "TIME")]
    pub latency_target: Option<String>,

    /// With --latency-target: the share of each window's requests that must meet it, in percent
    /// (e.g. 99 or 99.9) [default: 100, as fio's]
    #[arg(long, visible_alias = "latency_percentile", value_name = "PCT", requires = "latency_target")]
    pub latency_percentile: Option<String>,

    /// With --latency-target: how long each depth runs before it is judged, at most --duration
    /// [default: 1s, or --duration where shorter]
    #[arg(long, visible_alias = "latency_window", value_name = "TIME", requires = "latency_target")]
    pub latency_window: Option<String>,

    /// With --latency-target: keep adjusting the depth through the whole cell (fio's latency_run)
    /// instead of measuring the cell at the depth found; the depth stored is the one at its end
    #[arg(long, visible_alias = "latency_run", requires = "latency_target")]
    pub latency_run: bool,
    /// End each cell once its per-interval figures are steady, as fio 3.33's steadystate judges
    /// them: iops:LIMIT or bw:LIMIT (every interval's rate within LIMIT of the window's mean),
    /// iops_slope:LIMIT or bw_slope:LIMIT (the least-squares slope below LIMIT); LIMIT a
    /// percentage of the mean (iops:10%) or absolute (iops:50 requests/s, bw:10m bytes/s). Or
    /// snia (snia_bw for MiB/s): SNIA PTS's 5 rounds, range within 20% and the best-fit line's
    /// excursion within 10% of their mean. The clients' figures are judged together; under mpirun
    /// each rank judges and stops its own (fio's jobs without group_reporting). A cell that is
    /// not steady by its limit runs all of it and says "not attained". Needs --steady-window
    /// [default: none]
    #[arg(long, visible_aliases = ["steadystate", "ss"], value_name = "RULE", help_heading = "Steady state")]
    pub steady_state: Option<String>,

    /// The rolling window --steady-state judges (fio's ss_dur): whole --interval intervals, at
    /// least 2 (snia: 5 rounds, a multiple of 5 intervals); with --steady-ramp within --duration
    #[arg(long, visible_aliases = ["ss_dur", "steadystate_duration"], value_name = "TIME", help_heading = "Steady state")]
    pub steady_window: Option<String>,

    /// How long after the timed part's start (after --ramp) --steady-state begins to count
    /// intervals (fio's ss_ramp): intervals that start before it are not judged [default: 0]
    #[arg(long, visible_aliases = ["ss_ramp", "steadystate_ramp_time"], value_name = "TIME", help_heading = "Steady state")]
    pub steady_ramp: Option<String>,

    /// fio's options that `run access` answers rather than takes (hidden from `--help`).
    #[command(flatten)]
    pub fio: super::fio_words::FioAnswers,

    /// `--verify` and `--compressible`: what the written data holds.
    #[command(flatten)]
    pub data: DataArgs,

    /// `--interval`: the figures over time each cell stores.
    #[command(flatten)]
    pub series: iomatrix_harness::series::SeriesArgs,

    /// The target, working folder and output flags every writing suite takes.
    #[command(flatten)]
    pub common: CommonRunArgs,
}

impl RunAccessArgs {
    /// The validated plan and the run's options; `mpi_ranks` is the number of ranks under mpirun.
    /// `db` is the results database, whose storage a raw device may not be.
    pub fn validate(self, mpi_ranks: Option<usize>, db: &std::path::Path) -> anyhow::Result<(AccessPlan, RunOptions)> {
        self.fio.refuse()?;
        let mut run = self.common.options(mpi_ranks)?;
        let on_server = run.target.server().is_some();
        if on_server {
            refuse_on_server(&self)?;
        }
        // Claimed before planning: the default working set is the device's size.
        if let Some(path) = &self.device {
            let device = RawDevice::claim(path, self.destroy_data_on.as_deref(), db)?;
            run.target = Target::Device(device.path().to_path_buf());
            run.device = Some(device);
        }
        let mut plan = plan(&self, run.device.as_ref(), run.clients.count, on_server)?;
        plan.repeats = run.repeat.count;
        refuse_for_curve(&plan, &run)?;
        Ok((plan, run))
    }
}

/// What a curve does not take yet: samples of its points (`--repeat`, `--tolerance`: each point
/// is one cell, judged as it comes).
fn refuse_for_curve(plan: &AccessPlan, run: &RunOptions) -> Result<(), UsageError> {
    if plan.curve.is_none() {
        return Ok(());
    }
    if run.repeat.count > 1 || run.repeat.tolerance_pct.is_some() {
        return Err(UsageError::new(
            "--curve with --repeat or --tolerance: a curve's points are one cell each, judged against its bound as \
             they come (repeated points are not built yet); leave --repeat and --tolerance out",
        ));
    }
    Ok(())
}

/// Options that make no sense through a protocol client, refused before anything runs.
fn refuse_on_server(args: &RunAccessArgs) -> Result<(), UsageError> {
    if args.direct {
        return Err(UsageError::new(
            "--direct: iomatrix's own protocol client keeps no cache, so every request already goes to the server; \
             leave --direct out",
        ));
    }
    if let Some(prepare) = &args.prepare {
        return Err(UsageError::new(format!(
            "--prepare {prepare}: the file lives on the server, whose page cache iomatrix cannot see or drop from \
             here (its own client keeps no cache); leave --prepare out"
        )));
    }
    if args.shared_file.is_some() {
        return Err(UsageError::new(
            "--shared-file: on a server each client works in a folder of its own (not yet one file shared by \
             them); run it on a folder, or leave --shared-file out",
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

fn plan(
    args: &RunAccessArgs,
    device: Option<&RawDevice>,
    clients: usize,
    on_server: bool,
) -> Result<AccessPlan, UsageError> {
    let one_size =
        |flag: &str, text: &str| text.parse::<ByteSize>().map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")));
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
        Some(b) if b.eq_ignore_ascii_case("libaio") => {
            return Err(UsageError::new(
                "--backend libaio (fio's --ioengine libaio): iomatrix's kernel queue is io_uring; use --backend \
                 io_uring (or --ioengine io_uring)",
            ))
        }
        Some(b) => b.parse::<BackendKind>().map_err(|e| UsageError::new(format!("--backend: {e}")))?,
        None if wants_queue && !on_server => BackendKind::IoUring,
        None => BackendKind::Psync,
    };
    // On a server the protocol client issues the requests: psync is what such runs record, as iozone's do.
    let (backend, max_depth) =
        if on_server { (requested, MAX_DEPTH_ON_SERVER) } else { choose_backend(requested, wants_queue)? };
    let (read_percents, random_percents) = read_random_percents(args)?;
    let (block_sizes, alignment, split) = block_sizes(args)?;
    let plan = AccessPlan {
        block_sizes,
        read_percents,
        random_percents,
        queue_depths,
        clients,
        file_size: working_set(args.file_size.as_deref(), device)?,
        limit,
        ramp_ms: args.ramp.as_deref().map(ramp_ms).transpose()?.unwrap_or(0),
        distribution: args
            .distribution
            .as_deref()
            .map(|d| d.parse::<Distribution>().map_err(|e| UsageError::new(format!("--distribution {d}: {e}"))))
            .transpose()?
            .unwrap_or_default(),
        alignment,
        direct: args.direct,
        backend,
        rate_iops: args.rate,
        poll_completions_us: args.poll_completions.as_deref().map(poll_budget_us).transpose()?,
        submit_batch: args.submit_batch,
        seed: 0x1_2006,
        repeats: 1,
        only: None,
        device: device.map(|d| d.path().to_path_buf()),
        content: args.data.content(),
        prepare: prepare(args.prepare.as_deref(), device.is_some(), on_server)?,
        pin: args
            .pin
            .as_deref()
            .map(|p| p.parse::<Pin>().map_err(|e| UsageError::new(format!("--pin {p}: {e}"))))
            .transpose()?
            .unwrap_or_default(),
        shared_file: args
            .shared_file
            .as_deref()
            .map(|t| t.parse::<SharedFile>().map_err(|e| UsageError::new(format!("--shared-file {t}: {e}"))))
            .transpose()?
            .unwrap_or_default(),
        series_interval_ns: args.series.interval_ns()?,
        arrivals: args
            .arrivals
            .as_deref()
            .map(|a| a.parse::<Arrival>().map_err(|e| UsageError::new(format!("--arrivals {a}: {e}"))))
            .transpose()?,
        curve: curve(args)?,
        latency_target: latency_target(args, limit)?,
        steady: steady_rule(args)?,
        block_split: split,
        together: Vec::new(),
    };
    if on_server {
        plan.validate_on_server(max_depth)?;
    } else {
        plan.validate(max_depth)?;
    }
    Ok(plan)
}

/// A plan's block sizes, its offsets' alignment and its split by share.
type Sizes = (Vec<ByteSize>, Option<ByteSize>, Option<crate::bssplit::BlockSplit>);

/// `--bs`, `--align` and `--bssplit SPLIT` (by fio's rule for its shares, refused where they do
/// not add up to 100): under a split the cell's size is its largest (what a request buffer holds)
/// and offsets are aligned to its smallest unless `--align` says.
fn block_sizes(args: &RunAccessArgs) -> Result<Sizes, UsageError> {
    let align = args
        .align
        .as_deref()
        .map(|a| a.parse::<ByteSize>().map_err(|e| UsageError::new(format!("--align {a}: {e}"))))
        .transpose()?;
    let Some(text) = &args.bssplit else {
        let sizes = parse_size_list(&args.bs, 1).map_err(|e| UsageError::new(format!("--bs {}: {e}", args.bs)))?;
        return Ok((sizes, align, None));
    };
    let split = crate::bssplit::BlockSplit::parse(text).map_err(|e| UsageError::new(format!("--bssplit {e}")))?;
    Ok((vec![split.largest()], align.or(Some(split.smallest())), Some(split)))
}

/// `--curve [POINTS]` with `--stop-curve BOUND`.
fn curve(args: &RunAccessArgs) -> Result<Option<Curve>, UsageError> {
    let Some(points) = &args.curve else { return Ok(None) };
    Ok(Some(Curve {
        points: iomatrix_harness::curve::parse_points(points)?,
        stop: args.stop_curve.as_deref().map(iomatrix_harness::curve::parse_bound).transpose()?,
    }))
}

/// The window a latency target judges each depth over when --latency-window is not given: a
/// second, or the cell's duration where shorter.
const DEFAULT_LATENCY_WINDOW_NS: u64 = 1_000_000_000;

/// `--latency-target TIME [--latency-percentile PCT] [--latency-window TIME] [--latency-run]`,
/// every value resolved (the plan checks them against the cell's duration).
fn latency_target(args: &RunAccessArgs, limit: Limit) -> Result<Option<LatencyTarget>, UsageError> {
    let Some(text) = &args.latency_target else { return Ok(None) };
    let time = |flag: &str, text: &str| {
        // fio reads a bare number here as microseconds, iomatrix's durations as seconds: neither is guessed.
        if !text.trim().is_empty() && text.trim().bytes().all(|b| b.is_ascii_digit()) {
            return Err(UsageError::new(format!(
                "--{flag} {text}: give a unit, e.g. {text}us or {text}ms (fio reads a bare number here as \
                 microseconds, iomatrix's durations as seconds)"
            )));
        }
        parse_duration(text)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")))
    };
    let percentile_hundredths = match &args.latency_percentile {
        None => 10_000,
        Some(p) => {
            let value = p.trim().trim_end_matches('%').parse::<f64>().ok().filter(|v| v.is_finite());
            let hundredths = value.map(|v| v * 100.0).filter(|h| (h - h.round()).abs() < 1e-6 && *h >= 0.0);
            hundredths.map(|h| h.round() as u32).ok_or_else(|| {
                UsageError::new(format!(
                    "--latency-percentile {p}: give a percentage with at most two decimals, e.g. 99 or 99.9"
                ))
            })?
        }
    };
    let window_ns = match (&args.latency_window, limit) {
        (Some(w), _) => time("latency-window", w)?,
        (None, Limit::DurationMs(ms)) => DEFAULT_LATENCY_WINDOW_NS.min(ms.saturating_mul(1_000_000)),
        (None, Limit::Bytes(_)) => DEFAULT_LATENCY_WINDOW_NS,
    };
    Ok(Some(LatencyTarget {
        target_ns: time("latency-target", text)?,
        percentile_hundredths,
        window_ns,
        keep_adjusting: args.latency_run,
    }))
}

/// `--FLAG 100,0`: a comma-separated list of whole numbers.
fn numbers(flag: &str, text: &str) -> Result<Vec<u64>, UsageError> {
    text.split(',')
        .filter(|t| !t.trim().is_empty())
        .map(|t| {
            t.trim().parse::<u64>().map_err(|_| {
                UsageError::new(format!("--{flag} {text}: '{t}' is not a whole number; give a list such as 100,0"))
            })
        })
        .collect()
}

/// `--FLAG 100,0`: a list of percentages, each 0 to 100.
fn percents(flag: &str, text: &str) -> Result<Vec<u8>, UsageError> {
    numbers(flag, text)?
        .into_iter()
        .map(|p| {
            u8::try_from(p)
                .ok()
                .filter(|p| *p <= 100)
                .ok_or_else(|| UsageError::new(format!("--{flag} {p}: {p}% is over 100; percentages go from 0 to 100")))
        })
        .collect()
}

/// The read and random percentages to sweep: fio's `--rw` (with its mix), or `--read` and `--random`.
fn read_random_percents(args: &RunAccessArgs) -> Result<(Vec<u8>, Vec<u8>), UsageError> {
    let (read_percents, random_percents) = match &args.rw {
        Some(name) => {
            let rwmixread = match (args.rwmixread, args.rwmixwrite) {
                (Some(read), _) => Some(read),
                (None, Some(write)) => Some(fio_words::rwmixread_of_rwmixwrite(write)?),
                (None, None) => None,
            };
            let (read, random) = fio_words::rw_mix(name, rwmixread).map_err(|e| UsageError::new(format!("--{e}")))?;
            // fio ignores a mix given with a pure name; on one command line it is a mistake worth saying.
            if rwmixread.is_some() && !fio_words::is_mixed(name) {
                return Err(UsageError::new(format!(
                    "--rwmixread/--rwmixwrite set the mix of --rw rw, readwrite or randrw; --rw {name} does not mix: \
                     leave the mix out, or use --rw randrw"
                )));
            }
            (vec![read], vec![random])
        }
        None => (percents("read", &args.read)?, percents("random", &args.random)?),
    };
    Ok((read_percents, random_percents))
}

/// `--prepare STATE`: dropped by default. On a server nothing is dropped (the file is laid out
/// through iomatrix's client and left as the server keeps it); on a raw device nothing is laid
/// out, so there is no block size to lay it out in.
fn prepare(text: Option<&str>, device: bool, on_server: bool) -> Result<Prepare, UsageError> {
    let chosen = match text {
        Some(t) => t.parse::<Prepare>().map_err(|e| UsageError::new(format!("--prepare {t}: {e}")))?,
        None if on_server => Prepare::Cached,
        None => Prepare::Dropped,
    };
    if device && chosen == Prepare::Block {
        return Err(UsageError::new(
            "--prepare block: a --device is not laid out (its data is read and written where it is); give \
             --prepare dropped or cached",
        ));
    }
    Ok(chosen)
}

/// `--steady-state RULE` over `--steady-window` after `--steady-ramp`; each needs the others'
/// company (a window without a rule judges nothing). Their fit to the cell (whole intervals, the
/// duration) is the plan's check.
fn steady_rule(args: &RunAccessArgs) -> Result<Option<SteadyRule>, UsageError> {
    let Some(text) = &args.steady_state else {
        if let Some(flag) = [(&args.steady_window, "--steady-window"), (&args.steady_ramp, "--steady-ramp")]
            .iter()
            .find_map(|(given, flag)| given.as_ref().map(|_| flag))
        {
            return Err(UsageError::new(format!(
                "{flag} without --steady-state judges nothing; give --steady-state RULE"
            )));
        }
        return Ok(None);
    };
    let criterion = Criterion::parse(text).map_err(|e| UsageError::new(format!("--steady-state {text}: {e}")))?;
    let window = args.steady_window.as_deref().ok_or_else(|| {
        UsageError::new(format!(
            "--steady-state {text} needs --steady-window TIME, the rolling window it judges (fio's ss_dur), e.g. \
             --steady-window 60s"
        ))
    })?;
    let window_ns = parse_duration(window)
        .map_err(|e| UsageError::new(format!("--steady-window {window}: {e}")))?
        .as_nanos() as u64;
    let ramp_ns = match args.steady_ramp.as_deref() {
        None => 0,
        Some(t) if t.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" => 0,
        Some(t) => parse_duration(t).map_err(|e| UsageError::new(format!("--steady-ramp {t}: {e}")))?.as_nanos() as u64,
    };
    Ok(Some(SteadyRule { criterion, window_ns, ramp_ns }))
}

/// `--ramp TIME` in milliseconds; `0` (fio's ramp_time=0) is no warm-up.
fn ramp_ms(text: &str) -> Result<u64, UsageError> {
    if text.trim().trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" {
        return Ok(0);
    }
    let d = parse_duration(text).map_err(|e| UsageError::new(format!("--ramp {text}: {e}")))?;
    match u64::try_from(d.as_millis()) {
        Ok(0) => Err(UsageError::new(format!("--ramp {text}: a warm-up is counted in milliseconds; give 1ms or more"))),
        Ok(ms) => Ok(ms),
        Err(_) => Err(UsageError::new(format!("--ramp {text}: too long"))),
    }
}

/// `--poll-completions TIME` in microseconds (durations are whole units, the finest `us`).
fn poll_budget_us(text: &str) -> Result<u64, UsageError> {
    let d = parse_duration(text).map_err(|e| UsageError::new(format!("--poll-completions {text}: {e}")))?;
    Ok(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
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
