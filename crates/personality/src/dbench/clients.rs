//! A replay through the harness (`iomatrix run personality
//! --dbench-loadfile FILE`): every client replays with the plan's
//! connections, each a thread with its own folder `clients/client<N>` in the
//! client's folder (on a server, its own session), all let go together at
//! the common start. One cell per repeat, named `replay`, in the shape a
//! personality's phase has ([`CellFigures`]), so that `show` and `compare`
//! read it alike.

use crate::dbench::fs::{LocalFs, RemoteReplayFs, ReplayFs};
use crate::dbench::parse::LoadFile;
use crate::dbench::replay::{cleanup_connection, replay_connection, Pacing, ReplayFigures, ReplayOptions};
use crate::{merge_ops, CellFigures, ClientCell, ConnectionOps, Live, LoadFileReplay, RunPlan};
use iomatrix_backend::Place;
use iomatrix_coord::{lead, ClientFailure, ClientWork, Ending, Gathered, Group, Setup, Start};
use iomatrix_harness::clients::{start_together, Threads};
use iomatrix_stats::CpuReading;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A connection's thread: the protocol clients poll their futures on it.
pub const STACK_SIZE: usize = 2 * 1024 * 1024;

/// The load file a plan names, read and checked against what rank 0 read.
pub fn load_for(replay: &LoadFileReplay) -> Result<LoadFile, LoadError> {
    let load = LoadFile::read(Path::new(&replay.path))?;
    if load.ops.len() as u64 != replay.ops {
        return Err(LoadError::Differs { path: replay.path.clone(), here: load.ops.len(), there: replay.ops });
    }
    Ok(load)
}

/// Why a process cannot replay the load file its plan names.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The load file cannot be read or parsed here.
    #[error(transparent)]
    Unreadable(#[from] crate::dbench::ParseError),
    /// Another file at the path than rank 0 read.
    #[error(
        "{path}: {here} operations here, {there} where the run began: the same file must be at the same path on \
         every host"
    )]
    Differs {
        /// The load file's path.
        path: String,
        /// Its operations here.
        here: usize,
        /// Its operations where the run began (rank 0).
        there: u64,
    },
}

/// Runs the replay `plan.replay` names on every client of `group`; at the
/// leader `on_cell` gets each cell merged over the clients with each
/// client's own. `load` is the file, read by this process.
pub fn execute_clients<E: std::fmt::Display>(
    plan: &RunPlan,
    load: &LoadFile,
    group: &Group<'_>,
    setup: &Setup<'_>,
    place: &Place<'_>,
    lives: &[Live],
    mut on_cell: impl FnMut(&CellFigures, &[ClientCell], &Gathered<ClientCell>) -> Result<(), E>,
) -> io::Result<Option<(usize, Ending)>> {
    let replay = plan.replay.as_ref().ok_or_else(|| io::Error::other("no load file in the plan (a bug)"))?;
    let stop = setup.stop;
    lead(
        group,
        setup,
        |rank, dir| Client {
            rank,
            connections: plan.personality.connections,
            replay,
            load,
            dir: dir.to_path_buf(),
            place: place.of_client(rank),
            stop,
            abort: setup.on_error == iomatrix_coord::OnClientError::Abort,
            live: iomatrix_harness::clients::own(lives, rank),
            series_interval_ns: plan.series_interval_ns,
        },
        |_, gathered| {
            // Where every client failed the replay it is handed on empty, to be stored failed.
            let merged = CellFigures::merged(gathered.figures.iter().map(|c| &c.figures))
                .unwrap_or_else(|| CellFigures::none("replay"));
            on_cell(&merged, &gathered.figures, &gathered)
        },
    )
}

struct Client<'a> {
    rank: usize,
    connections: usize,
    replay: &'a LoadFileReplay,
    load: &'a LoadFile,
    dir: PathBuf,
    place: Place<'a>,
    stop: &'a AtomicBool,
    /// `--on-client-error abort`: a connection that could not replay fails the client.
    abort: bool,
    live: Option<&'a Live>,
    series_interval_ns: u64,
}

/// One connection's outcome in a cell.
struct Done {
    connection: usize,
    figures: Result<ReplayFigures, String>,
    cpu: iomatrix_stats::CpuTimes,
}

impl ClientWork for Client<'_> {
    type Figures = ClientCell;

    fn cell(&mut self, index: usize, start: &mut Start<'_>) -> Result<ClientCell, ClientFailure> {
        let quiet = Live::new();
        let live = self.live.unwrap_or(&quiet);
        live.ops.store(0, Ordering::Relaxed);
        live.bytes.store(0, Ordering::Relaxed);
        live.phase.store(index, Ordering::Relaxed);
        // Every connection ready (its folder or session), then the common start, then all let go.
        let pacing = if self.replay.as_fast_as_possible { Pacing::AsFastAsPossible } else { Pacing::Timestamps };
        let (load, place, dir, stop) = (self.load, &self.place, &self.dir, self.stop);
        let series_interval_ns = self.series_interval_ns;
        let duration = self.replay.duration_ns.map(Duration::from_nanos);
        let threads = Threads { name: |c: &usize| format!("replay-{c}"), stack_size: STACK_SIZE };
        let outcomes = start_together(
            0..self.connections,
            &threads,
            start,
            |_| live.started.store(true, Ordering::Relaxed),
            |c, party| {
                let run = |files: &mut dyn ReplayFs| {
                    let Some(at) = party.ready() else {
                        return Err("the start was called off".to_string());
                    };
                    let cpu = CpuReading::now();
                    let opts = ReplayOptions {
                        connection: c,
                        pacing,
                        deadline: duration.map(|d| at + d),
                        stop_on_mismatch: false,
                        series_interval_ns,
                    };
                    let mut f = replay_connection(load, files, &opts, live, stop);
                    let cpu = CpuReading::now().since(cpu);
                    // From the common start, not the connection's own.
                    f.wall_ns = at.elapsed().as_nanos() as u64;
                    cleanup_connection(files, c).map_err(|e| format!("removing clients/client{c}: {e}"))?;
                    Ok((f, cpu))
                };
                match replay_at(place, dir, run) {
                    Ok((f, cpu)) => Done { connection: c, figures: Ok(f), cpu },
                    Err(e) => Done { connection: c, figures: Err(e), cpu: Default::default() },
                }
            },
        )?;
        let mut done = Vec::with_capacity(outcomes.len());
        for (c, outcome) in outcomes.into_iter().enumerate() {
            done.push(
                outcome
                    .map_err(|e| ClientFailure::error(self.rank, format!("starting connection {c}'s thread: {e}")))?,
            );
        }
        // Under abort a connection that could not replay fails its client, and so the run.
        if let Some((c, e)) =
            done.iter().find_map(|d| d.figures.as_ref().err().map(|e| (d.connection, e))).filter(|_| self.abort)
        {
            return Err(ClientFailure::error(self.rank, format!("connection {c}: {e}")));
        }
        if self.stop.load(Ordering::SeqCst) {
            return Err(ClientFailure::stopped(self.rank));
        }
        let figures = merged(self.rank, done, live);
        Ok(ClientCell { rank: self.rank, figures, skipped: false })
    }
}

/// Runs `run` on the connection's files at `place` (`dir` where local); when they cannot be
/// reached, the connection fails (its thread's end counts it ready, so the others do not wait).
fn replay_at<T>(
    place: &Place<'_>,
    dir: &Path,
    run: impl FnOnce(&mut dyn ReplayFs) -> Result<T, String>,
) -> Result<T, String> {
    match place {
        Place::Local => run(&mut LocalFs::new(dir).map_err(|e| e.to_string())?),
        Place::Remote { connect, folder } => {
            let mut fs = connect().map_err(|e| format!("connecting: {e}"))?;
            match fs.mkdir(folder) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(format!("making {folder}: {e}")),
                _ => run(&mut RemoteReplayFs::new(fs.as_mut(), folder)),
            }
        }
    }
}

/// Client `rank`'s figures of a cell: its connections' merged, each connection's own row.
fn merged(rank: usize, done: Vec<Done>, live: &Live) -> CellFigures {
    let mut figures = CellFigures { phase: "replay".into(), ..CellFigures::default() };
    let replayed: Vec<&iomatrix_stats::ClientSeries> =
        done.iter().filter_map(|d| d.figures.as_ref().ok()).map(|f| &f.series).collect();
    figures.series = iomatrix_stats::ClientSeries::merge(&replayed);
    for d in done {
        figures.user_ns += d.cpu.user_ns;
        figures.sys_ns += d.cpu.sys_ns;
        match d.figures {
            Ok(f) => {
                merge_ops(&mut figures.ops, &f.ops);
                for m in &f.examples {
                    if figures.examples.len() < crate::figures::EXAMPLES {
                        figures.examples.push(format!(
                            "client {} connection {}: line {}: {} {}: expected {}, got {}",
                            rank, d.connection, m.line, m.op, m.path, m.expected, m.got
                        ));
                    }
                }
                figures.wall_ns = figures.wall_ns.max(f.wall_ns);
                let errors = f.ops.iter().map(|o| o.errors()).sum();
                figures.connections.push(ConnectionOps {
                    rank: d.connection,
                    ops: f.ops_done(),
                    bytes: f.bytes(),
                    errors,
                    ns: f.wall_ns,
                    failed: None,
                });
            }
            Err(e) => {
                *figures.connections_failed.entry("replay".into()).or_default() += 1;
                live.failed.fetch_add(1, Ordering::Relaxed);
                figures.connections.push(ConnectionOps {
                    rank: d.connection,
                    failed: Some(e),
                    ..ConnectionOps::default()
                });
            }
        }
    }
    figures
}
