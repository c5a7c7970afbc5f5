//! `iomatrix run personality`: a built-in personality or a personality
//! file, with the overrides of the command line, as a validated plan.

use crate::schema::{nearest, OpKind, Scale};
use crate::target::RateTarget;
use crate::{builtin, RunPlan};
use clap::Args;
use iomatrix_core::{CurveLoad, UsageError};
use iomatrix_harness::curve::Curve;
use iomatrix_harness::{CommonRunArgs, RunOptions};
use std::path::Path;

/// A workload personality (docs/personalities.md): filesets and flows of operations (create, open,
/// read, write, append, fsync, close, stat, rename, delete, list, lock, unlock) run by many
/// connections at once, closed loop (think time) or open loop (--rate: Poisson arrivals, latency
/// from the intended start). Per operation: counts (requests, and beside them flow steps as
/// filebench counts its ops: a whole-file read is one), rates, HDR latency percentiles; per
/// connection: fairness (min/max share, Jain's index). Built-ins: `iomatrix personalities list`.
/// On an nfs:// or smb:// target each connection is a session of iomatrix's own protocol client.
/// With --dbench-loadfile FILE a dbench/NetBench load file (dbench's client.txt) is replayed
/// instead: each connection in its own clients/clientN folder, paced by the file's timestamps (or
/// --as-fast-as-possible), looped for --duration as dbench's -t (once through without it), every
/// line's status checked (docs/dbench.md). A fileset is each connection's own, or with `shared =
/// true` one per client that all its connections work on, each iteration claiming its file
/// (varmail, webserver and fileserver share theirs, as filebench does).
#[derive(Args, Debug)]
#[command(next_help_heading = "Personality")]
pub struct RunPersonalityArgs {
    /// A built-in's name (fileserver, varmail, webserver, homefolders, netware-2008) or a
    /// personality file (TOML, docs/personalities.md)
    #[arg(value_name = "NAME|FILE", required_unless_present_any = ["dbench_loadfile", "named"])]
    pub personality: Option<String>,

    /// The personality as a flag (the same as NAME|FILE; a study's step names it so:
    /// args = { personality = "varmail" })
    #[arg(long = "personality", id = "named", value_name = "NAME|FILE", conflicts_with = "personality")]
    pub named: Option<String>,

    /// Apply the personality's [scale.NAME] overrides (the built-ins have `small`: seconds)
    #[arg(long, value_name = "NAME")]
    pub scale: Option<String>,

    /// Connections per client (overrides the personality's `connections`)
    #[arg(long, value_name = "N")]
    pub connections: Option<usize>,

    /// Files of every fileset of more than one file: per connection, or per client for a shared one
    #[arg(long, value_name = "N")]
    pub files: Option<u64>,

    /// Length of every timed phase, at most 720h (30 days) (phases that run once over their files
    /// keep doing so)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,

    /// Open loop: every flow at this many operations per second per connection (Poisson
    /// arrivals; latency from the intended start, so a server that falls behind shows it)
    #[arg(long, value_name = "OPS", conflicts_with = "closed_loop")]
    pub rate: Option<f64>,

    /// Closed loop for every flow: drop the personality's rates
    #[arg(long)]
    pub closed_loop: bool,

    /// Measure every phase as a throughput-latency curve (vdbench's iorate=curve): first its
    /// maximum, closed loop (the flows' rates dropped, their think time kept), then open-loop
    /// points at percentages of the operations a second it achieved, lightest first:
    /// 10,50,70,80,90,100 when given alone, a list (10,50,90), a range with its step (10-100,10),
    /// or absolute rates of all clients together (500/s,1000/s). The rate counts every timed
    /// operation (each request: a whole-file read of 8 records is 8), as --rate; each client
    /// offers its share (the percentage of its own maximum, or the rate split evenly), spread over
    /// its connections, each with Poisson arrivals and no think time. Each point is a cell named
    /// with its load (`run load=50%`, so compare pairs points); the last stored point of a curve
    /// holds its maximum within --stop-curve's bound and SPEC SFS 2014's overall response time;
    /// show prints each curve as a table. Give the points joined (--curve=10,50) or after the
    /// personality's name. Every phase must be timed (not once over its files). Not with --rate,
    /// --closed-loop, --repeat or a load file; not under mpirun yet. compare gives the curve's
    /// figures verdicts and report charts it
    #[arg(long, value_name = "POINTS", num_args = 0..=1, default_missing_value = "")]
    pub curve: Option<String>,

    /// With --curve: end each phase's curve at its first open-loop point past this latency bound
    /// (vdbench's stopcurve): 5ms judges the mean of every operation's latency; p50:, p99: or
    /// p99.9: judge that percentile (p99:1ms). Its remaining points are not run. A bound no point
    /// meets is stored as such ("no load point meets p99 <= 1 ms; ..."). Not under MPI yet
    #[arg(long, value_name = "BOUND", requires = "curve")]
    pub stop_curve: Option<String>,

    /// The highest rate whose operations meet a latency target (fio's latency_target, over rates
    /// instead of depths): per phase, first its maximum (closed loop, one window), then open-loop
    /// windows at levels of 5% of it (1 to 20), searched as fio searches its depth: from 5%,
    /// doubling while a window meets the target, then halfway between the highest level that met
    /// and the lowest that failed, until settled. Each window is judged over every client's
    /// operations: the share whose latency (from its intended start) is within TIME must reach
    /// --latency-percentile. Then the phase runs at the rate found for its duration; only that
    /// cell is stored, with the rate and every window (level, offered, achieved, operations, over
    /// the target, the percentile's latency, met). Where 5% fails: "no rate meets ...", measured at
    /// 5%, exit 0. Every phase must be timed. Not with --curve, --rate, --closed-loop, --repeat, a
    /// load file, or under MPI
    #[arg(long, value_name = "TIME")]
    pub latency_target: Option<String>,

    /// With --latency-target: the percentage of a window's operations that must meet it (fio's
    /// latency_percentile) [default: 100]
    #[arg(long, value_name = "PCT", requires = "latency_target")]
    pub latency_percentile: Option<String>,

    /// With --latency-target: how long each level runs before it is judged, and the maximum
    /// before them (fio's latency_window) [default: 1s]
    #[arg(long, value_name = "TIME", requires = "latency_target")]
    pub latency_window: Option<String>,

    /// Seed of the file sizes, flow choices and arrivals (overrides the personality's)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Replay a dbench load file (e.g. /usr/share/dbench/client.txt) instead of a personality:
    /// --connections (default 1) connections per client, --duration loops it (default: once)
    #[arg(long, value_name = "FILE")]
    pub dbench_loadfile: Option<std::path::PathBuf>,

    /// With --dbench-loadfile: ignore the load file's timestamps, every operation right after
    /// the one before
    #[arg(long)]
    pub as_fast_as_possible: bool,

    /// `--verify` and `--compressible`: what the written data holds.
    #[command(flatten)]
    pub data: iomatrix_harness::data::DataArgs,

    /// The figures over time each phase stores.
    #[command(flatten)]
    pub series: iomatrix_harness::series::SeriesArgs,

    /// The target, working folder and output flags every writing suite takes.
    #[command(flatten)]
    pub common: CommonRunArgs,
}

fn parse_duration(text: &str) -> Result<std::time::Duration, iomatrix_core::DurationError> {
    iomatrix_core::parse_duration(text)
}

/// Operations a protocol client of this build cannot do, by protocol: a
/// personality that needs one is refused before any I/O. NFSv3 has no
/// locks (they are the separate NLM protocol's); SMB has them all.
pub fn lacking(protocol: &str) -> &'static [OpKind] {
    match protocol {
        "nfs" => &[OpKind::Lock, OpKind::Unlock],
        _ => &[],
    }
}

impl RunPersonalityArgs {
    /// The validated plan and the run's options, and with a load file what
    /// its replay holds in memory ([`crate::dbench::LoadFile::footprint`]).
    pub fn validate(&self, mpi_ranks: Option<usize>) -> anyhow::Result<Validated> {
        if let Some(file) = &self.dbench_loadfile {
            if self.data.content().stamped() {
                return Err(UsageError::new(
                    "--verify/--compressible are for personalities: a dbench replay writes what its load file says; \
                     leave them out with --dbench-loadfile",
                )
                .into());
            }
            return self.validate_replay(file, mpi_ranks);
        }
        if self.as_fast_as_possible {
            return Err(UsageError::new(
                "--as-fast-as-possible goes with --dbench-loadfile FILE (a personality's pace is its flows' think \
                 time or --rate)",
            )
            .into());
        }
        let run = self.common.options(mpi_ranks)?;
        let given = self.personality.as_deref().or(self.named.as_deref()).unwrap_or_default();
        let mut personality = load(given)?;
        if let Some(name) = &self.scale {
            let s = personality.scales.get(name).cloned().ok_or_else(|| {
                let names: Vec<&str> = personality.scales.keys().map(String::as_str).collect();
                let hint =
                    nearest(name, names.iter().copied()).map(|n| format!("; did you mean '{n}'?")).unwrap_or_default();
                UsageError::new(format!(
                    "--scale {name}: {} has no [scale.{name}]{hint} (it has: {})",
                    personality.name,
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ))
            })?;
            personality.apply(&s);
        }
        if self.connections == Some(0) || self.files == Some(0) {
            return Err(UsageError::new("--connections and --files must be 1 or more").into());
        }
        personality.apply(&Scale {
            connections: self.connections,
            files: self.files,
            duration_ns: self.duration.map(|d| d.as_nanos() as u64),
        });
        if let Some(problem) = self.rate.and_then(crate::schema::rate_problem) {
            return Err(UsageError::new(format!("--rate {}: {problem}", self.rate.unwrap_or_default())).into());
        }
        if let Some(problem) = personality.flow_without_files() {
            return Err(UsageError::new(format!("{} (with the overrides given): {problem}", personality.name)).into());
        }
        for phase in &mut personality.phases {
            for flow in &mut phase.flows {
                if self.closed_loop {
                    flow.rate = None;
                }
                if let Some(rate) = self.rate {
                    flow.rate = Some(rate);
                    flow.think_ns = 0;
                }
            }
        }
        if let Some(seed) = self.seed {
            personality.seed = seed;
        }
        if personality.connections > crate::schema::MAX_CONNECTIONS {
            return Err(UsageError::new(format!(
                "--connections {}: at most {} per client",
                personality.connections,
                crate::schema::MAX_CONNECTIONS
            ))
            .into());
        }
        check_server_ops(&personality, &run)?;
        check_buffers(&personality)?;
        let curve = self.curve(&personality, &run, mpi_ranks)?;
        let latency_target = self.latency_target(&run, mpi_ranks)?;
        if curve.is_some() || latency_target.is_some() {
            timed_phases(&personality, if curve.is_some() { "--curve" } else { "--latency-target" })?;
        }
        let content = self.data.content();
        if content.stamped() {
            iomatrix_verify::check_record(personality.record).map_err(|e| {
                UsageError::new(format!(
                    "--verify/--compressible: {} has {e}; give the personality a record of 4k or a multiple",
                    personality.name
                ))
            })?;
        }
        let plan = RunPlan {
            repeats: run.repeat.count,
            content,
            series_interval_ns: self.series.interval_ns()?,
            curve,
            latency_target,
            ..RunPlan::new(personality, given.to_string())
        };
        Ok((plan, run, None))
    }

    /// `--dbench-loadfile FILE`: the load file read and checked now (a bad
    /// line is a usage error, with its number), the plan one `replay` phase.
    fn validate_replay(&self, file: &Path, mpi_ranks: Option<usize>) -> anyhow::Result<Validated> {
        if let Some(p) = &self.personality {
            return Err(UsageError::new(format!(
                "{p} and --dbench-loadfile: give a personality or a load file to replay, not both"
            ))
            .into());
        }
        let meaningless = [
            ("--scale", self.scale.is_some()),
            ("--files", self.files.is_some()),
            ("--rate", self.rate.is_some()),
            ("--closed-loop", self.closed_loop),
            ("--seed", self.seed.is_some()),
            ("--curve", self.curve.is_some()),
            ("--latency-target", self.latency_target.is_some()),
        ];
        if let Some((flag, _)) = meaningless.iter().find(|(_, given)| *given) {
            return Err(UsageError::new(format!(
                "{flag} shapes a personality's flows; a load-file replay does what its lines say (drop {flag}, or \
                 run a personality)"
            ))
            .into());
        }
        let run = self.common.options(mpi_ranks)?;
        let load = crate::dbench::LoadFile::read(file).map_err(|e| UsageError::new(e.to_string()))?;
        let connections = self.connections.unwrap_or(1);
        if connections == 0 || connections > crate::schema::MAX_CONNECTIONS {
            return Err(UsageError::new(format!(
                "--connections {connections}: give 1 to {} per client",
                crate::schema::MAX_CONNECTIONS
            ))
            .into());
        }
        let record = load
            .ops
            .iter()
            .filter_map(|o| match o.kind {
                crate::dbench::OpKind::ReadX { size, .. } | crate::dbench::OpKind::WriteX { size, .. } => {
                    Some(u64::from(size))
                }
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
        let duration_ns = self.duration.map(|d| d.as_nanos() as u64);
        let personality = crate::Personality {
            name: format!("dbench {name}"),
            description: format!("the dbench load file {} replayed", file.display()),
            seed: 0,
            connections,
            record,
            memsize: None,
            filesets: Vec::new(),
            phases: vec![crate::Phase {
                name: "replay".into(),
                end: match duration_ns {
                    Some(ns) => crate::PhaseEnd::Duration { ns },
                    None => crate::PhaseEnd::Iterations { count: 1 },
                },
                flows: Vec::new(),
                order: Default::default(),
            }],
            scales: Default::default(),
        };
        let replay = crate::LoadFileReplay {
            path: std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()).display().to_string(),
            ops: load.ops.len() as u64,
            timed_ops: load.timed_ops as u64,
            as_fast_as_possible: self.as_fast_as_possible,
            duration_ns,
            peak_bytes_per_connection: load.peak_bytes(),
            lock_ops: load
                .ops
                .iter()
                .filter(|o| {
                    matches!(o.kind, crate::dbench::OpKind::LockX { .. } | crate::dbench::OpKind::UnlockX { .. })
                })
                .count() as u64,
        };
        if replay.lock_ops > 0 && run.target.server().is_some_and(|s| s.protocol() == "nfs") {
            eprintln!(
                "iomatrix: warning: {}: its {} LockX/UnlockX lines will fail and count as mismatches: NFSv3 has no \
                 byte-range locks (they are the separate NLM protocol's); the other lines are replayed as written",
                file.display(),
                replay.lock_ops
            );
        }
        let plan = RunPlan {
            repeats: run.repeat.count,
            replay: Some(replay),
            series_interval_ns: self.series.interval_ns()?,
            ..RunPlan::new(personality, file.display().to_string())
        };
        Ok((plan, run, Some(load.footprint())))
    }
}

impl RunPersonalityArgs {
    /// `--curve [POINTS]` with `--stop-curve BOUND`, checked against the rest of the run as the
    /// access suite checks its curves.
    fn curve(
        &self,
        personality: &crate::Personality,
        run: &RunOptions,
        mpi_ranks: Option<usize>,
    ) -> Result<Option<Curve>, UsageError> {
        let Some(points) = &self.curve else { return Ok(None) };
        let curve = Curve {
            points: iomatrix_harness::curve::parse_points(points)?,
            stop: self.stop_curve.as_deref().map(iomatrix_harness::curve::parse_bound).transpose()?,
        };
        if let Some(flag) =
            self.rate.map(|r| format!("--rate {r}")).or(self.closed_loop.then(|| "--closed-loop".into()))
        {
            return Err(UsageError::new(format!(
                "--curve with {flag}: the curve sets each point's loop and rate (its maximum closed loop first, then \
                 its points open loop); leave {flag} out"
            )));
        }
        if run.repeat.count > 1 || run.repeat.tolerance_pct.is_some() {
            return Err(UsageError::new(
                "--curve with --repeat or --tolerance: a curve's points are one cell each, judged against its bound \
                 as they come (repeated points are not built yet); leave --repeat and --tolerance out",
            ));
        }
        if curve.stop.is_some() && mpi_ranks.is_some() {
            return Err(UsageError::new(
                "--stop-curve under MPI: the ranks would have to hear the leader end a curve between its cells, \
                 which is not built yet; run the curve without --stop-curve (every point runs, each stored)",
            ));
        }
        let streams = (run.clients.count * personality.connections).max(1);
        for point in &curve.points {
            let CurveLoad::Rate(all) = point else { continue };
            for phase in &personality.phases {
                if let crate::PhaseEnd::Duration { ns } = phase.end {
                    iomatrix_harness::curve::check_rate(
                        &format!("--curve point {all}/s over {streams} connection(s) in the {} phase", phase.name),
                        *all as f64 / streams as f64,
                        ns / 1_000_000,
                    )?;
                }
            }
        }
        Ok(Some(curve))
    }

    /// `--latency-target TIME` with `--latency-percentile` and `--latency-window`, checked.
    fn latency_target(&self, run: &RunOptions, mpi_ranks: Option<usize>) -> Result<Option<RateTarget>, UsageError> {
        let Some(text) = &self.latency_target else { return Ok(None) };
        let given = [
            ("--curve", self.curve.is_some()),
            ("--rate", self.rate.is_some()),
            ("--closed-loop", self.closed_loop),
            ("--repeat or --tolerance", run.repeat.count > 1 || run.repeat.tolerance_pct.is_some()),
            ("MPI", mpi_ranks.is_some()),
        ];
        if let Some((what, _)) = given.iter().find(|(_, given)| *given) {
            return Err(UsageError::new(format!(
                "--latency-target with {what}: the search sets each window's loop and rate, at the leader between \
                 windows (one process's clients); leave {what} out"
            )));
        }
        // A zero time is refused by the duration's own parser ("a duration must be positive").
        let target_ns = time("latency-target", text)?;
        let percentile_hundredths = match &self.latency_percentile {
            None => 10_000,
            Some(p) => {
                let value = p.trim().trim_end_matches('%').parse::<f64>().ok().filter(|v| v.is_finite());
                let hundredths = value.map(|v| v * 100.0).filter(|h| (h - h.round()).abs() < 1e-6);
                match hundredths.map(|h| h.round()) {
                    Some(h) if h > 0.0 && h <= 10_000.0 => h as u32,
                    _ => {
                        return Err(UsageError::new(format!(
                            "--latency-percentile {p}: give a percentage above 0 and at most 100, with at most two \
                             decimals, e.g. 99 or 99.9"
                        )))
                    }
                }
            }
        };
        let window_ns = match &self.latency_window {
            None => 1_000_000_000,
            Some(w) => time("latency-window", w)?,
        };
        if !(MIN_WINDOW_NS..=MAX_WINDOW_NS).contains(&window_ns) {
            return Err(UsageError::new(format!(
                "--latency-window {}: give 10ms to 1h (a shorter window holds too few operations to judge a \
                 percentile: an open-loop connection's wake-up alone takes tens of us)",
                self.latency_window.as_deref().unwrap_or_default()
            )));
        }
        Ok(Some(RateTarget { target_ns, percentile_hundredths, window_ns }))
    }
}

/// A curve or a latency target runs each phase again and again (its maximum, then its points or
/// windows): a phase that runs once over its files (a create) would find them done the second time.
fn timed_phases(personality: &crate::Personality, flag: &str) -> Result<(), UsageError> {
    match personality.phases.iter().find(|p| !matches!(p.end, crate::PhaseEnd::Duration { .. })) {
        None => Ok(()),
        Some(phase) => Err(UsageError::new(format!(
            "{flag}: the {} phase of {} runs once over its files (or a count of iterations), not for a time; {flag} \
             runs each phase again at every load, and such a phase would find its work done (its later loads \
             idle). Give a personality whose phases are timed (duration = \"...\", as fileserver, varmail, \
             webserver and homefolders)",
            phase.name, personality.name
        ))),
    }
}

/// The shortest and longest `--latency-window`.
const MIN_WINDOW_NS: u64 = 10_000_000;
const MAX_WINDOW_NS: u64 = 3_600_000_000_000;

/// `--FLAG TEXT` as a time in ns: a bare number is refused (fio reads it as microseconds,
/// iomatrix's durations as seconds: neither is guessed).
fn time(flag: &str, text: &str) -> Result<u64, UsageError> {
    if !text.trim().is_empty() && text.trim().bytes().all(|b| b.is_ascii_digit()) {
        return Err(UsageError::new(format!(
            "--{flag} {text}: give a unit, e.g. {text}us or {text}ms (fio reads a bare number here as microseconds, \
             iomatrix's durations as seconds)"
        )));
    }
    iomatrix_core::parse_duration(text)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .map_err(|e| UsageError::new(format!("--{flag} {text}: {e}")))
}

/// The plan, the run's options, and with a load file what its replay
/// holds in memory: once per process, and per connection.
pub type Validated = (RunPlan, RunOptions, Option<(u64, u64)>);

/// A server target's client must do every operation the personality's flows use.
fn check_server_ops(personality: &crate::Personality, run: &RunOptions) -> anyhow::Result<()> {
    if let Some(server) = run.target.server() {
        let protocol = server.protocol();
        let missing: Vec<&str> =
            personality.ops_used().into_iter().filter(|op| lacking(protocol).contains(op)).map(OpKind::name).collect();
        if !missing.is_empty() {
            return Err(UsageError::new(format!(
                "{}: its flows use {}, which iomatrix's {protocol} client cannot do{}; choose a personality \
                 without {}, or a local folder (a mounted share) as --target",
                personality.name,
                missing.join(", "),
                if protocol == "nfs" && missing.iter().any(|m| m.contains("lock")) {
                    " (NFSv3 has no locks: they are the separate NLM protocol's)"
                } else {
                    ""
                },
                missing.join(" or ")
            ))
            .into());
        }
    }
    Ok(())
}

/// The connections' buffers must fit in half this machine's RAM.
fn check_buffers(personality: &crate::Personality) -> anyhow::Result<()> {
    // Each connection holds two records (one to read into, one to write from), or its memsize.
    let ram = iomatrix_environment::machine_ram_bytes();
    let per_connection = personality.buffer_bytes();
    let buffers = per_connection.saturating_mul(personality.connections as u64);
    if ram > 0 && buffers > ram / 2 {
        return Err(UsageError::new(format!(
            "{} connections x {} of buffers (2 records, or memsize) need {}, over half this machine's RAM ({}); \
             choose fewer --connections or a personality with a smaller record or memsize",
            personality.connections,
            iomatrix_core::ByteSize(per_connection),
            iomatrix_core::human::bytes(buffers),
            iomatrix_core::human::bytes(ram)
        ))
        .into());
    }
    Ok(())
}

/// A built-in by name, or a personality file.
pub fn load(given: &str) -> Result<crate::Personality, UsageError> {
    if let Some(found) = builtin::get(given) {
        return found.map_err(|e| UsageError::new(format!("built-in {given}: {e} (a bug)")));
    }
    let path = Path::new(given);
    if std::fs::symlink_metadata(path).is_err() {
        let hint = nearest(given, builtin::names()).map(|n| format!("; did you mean '{n}'?")).unwrap_or_default();
        return Err(UsageError::new(format!(
            "{given}: neither a built-in personality ({}) nor a file{hint}",
            builtin::names().collect::<Vec<_>>().join(", ")
        )));
    }
    let text = iomatrix_guard::read_text(path, &iomatrix_guard::Input::PERSONALITY)?;
    let base = path.parent().unwrap_or(Path::new("."));
    crate::parse(&text, base).map_err(|e| UsageError::new(format!("{given}: {e}")))
}
