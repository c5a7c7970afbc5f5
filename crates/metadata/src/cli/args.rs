//! `iomatrix run metadata`: mdtest's phases with iomatrix's flags, as a validated plan.

use crate::layout::Counts;
use crate::plan::{ItemCount, ItemKinds, Layout, MetaCurve, MetadataPlan, Neighbour, OpenRate, Phase, TreeShape};
use clap::Args;
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_harness::CommonRunArgs;
use std::time::Duration;

/// Metadata: mdtest's phases (directories: create, stat, readdir, rename, remove; files:
/// create, stat, read, remove; the tree: create, remove), each timed on its own between
/// barriers, from one client or many; mdtest's two rates, latency percentiles and failures
/// by errno per phase. On an nfs:// or smb:// target each client is a session of iomatrix's
/// own protocol client
#[derive(Args, Debug)]
#[command(next_help_heading = "Metadata")]
pub struct MetadataArgs {
    /// Items per client in all, spread evenly over the folders that hold items (mdtest -n;
    /// rounded down to a multiple of those folders, as mdtest does) [default: 1000]
    #[arg(long, value_name = "N", conflicts_with = "items_per_folder")]
    pub items: Option<u64>,

    /// Items per client in each folder that holds items (mdtest -I)
    #[arg(long, value_name = "N")]
    pub items_per_folder: Option<u64>,

    /// Levels of folders below the tree's root (mdtest -z)
    #[arg(long, default_value_t = 0, value_name = "D")]
    pub depth: u32,

    /// Folders in each folder above the leaves (mdtest -b)
    #[arg(long, default_value_t = 1, value_name = "B")]
    pub branch: u32,

    /// Items in the tree's leaves only (mdtest -L)
    #[arg(long)]
    pub leaves_only: bool,

    /// A tree per client (mdtest -u); default: one tree shared by every client, as mdtest
    #[arg(long)]
    pub per_client_folder: bool,

    /// Files only (mdtest -F)
    #[arg(long, conflicts_with = "dirs_only")]
    pub files_only: bool,

    /// Directories only (mdtest -D)
    #[arg(long)]
    pub dirs_only: bool,

    /// The phases to run, comma-separated, in any order (they run in mdtest's): tree-create,
    /// dir-create, dir-stat, dir-readdir, dir-rename, dir-remove, file-create, find (IO500's:
    /// client 0 walks the tree, matching -name '*01*', the files' size and -newer; by name only),
    /// file-stat, file-read, file-remove, tree-remove [default: every phase of the items made]
    #[arg(long, value_name = "LIST")]
    pub phases: Option<String>,

    /// Bytes written to each file after its create (mdtest -w)
    #[arg(long, default_value = "0", value_name = "SIZE")]
    pub write_bytes: String,

    /// Bytes read from each file in file-read (mdtest -e); at most --write-bytes
    #[arg(long, default_value = "0", value_name = "SIZE")]
    pub read_bytes: String,

    /// fsync each file after its write, before close (mdtest -y)
    #[arg(long)]
    pub fsync: bool,

    /// Sync the file system at the end of each phase, timed with it (mdtest -Y; syncfs of the
    /// target's file system). Local folders only
    #[arg(long)]
    pub sync_after_phase: bool,

    /// Stat, read and remove the items of the client STRIDE ranks on (mdtest -N: stat steps
    /// once, read twice, remove three times)
    #[arg(long, default_value_t = 0, value_name = "STRIDE")]
    pub neighbour: usize,

    /// Stat (and read) in random order, drawn from SEED plus the client's rank (mdtest -R)
    /// [default seed: the time]
    #[arg(long, value_name = "SEED", num_args = 0..=1, require_equals = true, default_missing_value = "time")]
    pub random_stat: Option<String>,

    /// Times every phase is run (mdtest -i); each iteration works in a fresh test-dir.I-0 and is a
    /// sample of each phase (compare judges a phase over them); --repeat N means the same
    /// [default: 1]
    #[arg(long, value_name = "N")]
    pub iterations: Option<u32>,

    /// Stop file creation after DURATION (mdtest -W); every client then goes on to the largest
    /// count any client reached, and the later phases work on that count. Refused with
    /// --branch above 1, as mdtest refuses it
    #[arg(long, value_name = "DURATION")]
    pub stonewall: Option<String>,

    /// Work in the target folder itself, in mdtest's layout (test-dir.I-0/mdtest_tree.0/...,
    /// as mdtest -d leaves it), not in a fresh working folder removed at the end: what the
    /// phases make and do not remove stays for a later run, and phases without their create
    /// (e.g. --phases file-stat) work on the items an earlier run left (IO500's separate mdtest
    /// runs); a missing item is its phase's failure (ENOENT). Removes only mdtest's names
    /// (file.mdtest.*, dir.mdtest.*, mdtest_tree.*, an empty test-dir.*). Local (or mounted)
    /// folders only
    #[arg(long)]
    pub in_place: bool,

    /// Open loop: the item phases (dir-create, -stat, -rename, -remove; file-create, -stat,
    /// -read, -remove) offer N items a second, of all clients together (each client an even
    /// share); each item starts at its arrival (--arrivals), or at once when the item before it
    /// ran past that, and its latency counts from its arrival, so a file system that falls
    /// behind shows its queue (no coordinated omission). A phase then takes items/rate seconds.
    /// Items issued more than 1 ms late are counted (late), and those still unissued 1 ms after
    /// the last arrival are the backlog; both stored with the phase. The tree's phases,
    /// dir-readdir and find stay closed loop. mdtest's two rates are computed as ever
    #[arg(long, value_name = "N", conflicts_with = "curve")]
    pub rate: Option<u64>,

    /// How --rate's or a curve's arrivals are spaced: uniform (one every 1/rate s, as fio's
    /// rate_process=linear) or poisson (exponential gaps, as vdbench's default) [default:
    /// uniform]
    #[arg(long, value_name = "SPACING")]
    pub arrivals: Option<String>,

    /// Measure each item phase as a throughput-latency curve (vdbench's iorate=curve): the
    /// phases run once per point, each time over fresh names in a fresh test-dir.R-0 (a create
    /// makes its items once, so a point is its own run of every phase): first closed loop (the
    /// maximum), then open loop (--arrivals) at percentages of each phase's maximum (POINTS:
    /// 10,50,70 or 10-100,10; empty is vdbench's 10,50,70,80,90,100) or at absolute rates of
    /// all clients together (500/s,1000/s). Each point of a phase is a cell named with its load
    /// (file-stat load=50%); the last stored point holds the curve's maximum within
    /// --stop-curve's bound and SPEC SFS 2014's overall response time; show prints a table per
    /// phase. Item phases only (not the tree's, dir-readdir or find); not with --iterations,
    /// --repeat, --tolerance, --stonewall or --in-place
    #[arg(long, value_name = "POINTS", num_args = 0..=1, default_missing_value = "")]
    pub curve: Option<String>,

    /// With --curve: end the run at the first point where every phase's curve is past this
    /// latency bound (vdbench's stopcurve; a phase past it sooner keeps running at the later
    /// points, whose phases need its items): 5ms judges the mean; p50:, p99: or p99.9: judge
    /// that percentile. A bound no point meets is said and stored (exit 0)
    #[arg(long, value_name = "BOUND", requires = "curve")]
    pub stop_curve: Option<String>,

    /// Per item phase, the highest rate whose items meet TIME (fio's latency_target, over rates
    /// rather than depths): each phase's maximum first (closed loop), then rounds of every phase
    /// over fresh names, open loop (--arrivals), each phase at its own level k/20 of its maximum,
    /// k climbed as fio climbs its depth (1, doubling, then halfway back: 1, 2, 4, 8, 16, 20,
    /// ...). A round's items are the window judged: the level meets the target when
    /// --latency-percentile of them took at most TIME from their arrival. Once every phase's
    /// search has ended, a last round measures each phase at the level it found, stored with
    /// what the search found; a target not even 1/20 of the maximum meets is said (measured
    /// there, exit 0). Item phases only; not with --rate, --curve, --iterations, --stonewall or
    /// --in-place, nor under MPI. No --latency-window: a round's items are its window
    #[arg(long, value_name = "TIME", conflicts_with_all = ["rate", "curve"])]
    pub latency_target: Option<String>,

    /// With --latency-target: the share of a round's items that must meet it, in percent (e.g.
    /// 99 or 99.9) [default: 100, as fio's]
    #[arg(long, value_name = "PCT", requires = "latency_target")]
    pub latency_percentile: Option<String>,

    /// The figures over time each phase stores.
    #[command(flatten)]
    pub series: iomatrix_harness::series::SeriesArgs,

    /// The target, working folder and output flags every writing suite takes.
    #[command(flatten)]
    pub common: CommonRunArgs,
}

fn usage(text: String) -> anyhow::Error {
    UsageError::new(text).into()
}

fn size(flag: &str, text: &str) -> anyhow::Result<u64> {
    let bytes = text.parse::<ByteSize>().map_err(|e| usage(format!("{flag} {text}: {e}")))?.bytes();
    if bytes > 1 << 30 {
        return Err(usage(format!("{flag} {text}: above 1g, the largest a file item's buffer may be; give less")));
    }
    Ok(bytes)
}

impl MetadataArgs {
    /// The validated plan (usage errors exit 2 naming the problem and the fix).
    pub fn plan(&self) -> anyhow::Result<MetadataPlan> {
        let items = match (self.items, self.items_per_folder) {
            (_, Some(0)) => return Err(usage("--items-per-folder 0: give at least 1".into())),
            (_, Some(n)) => ItemCount::PerFolder(n),
            (Some(0), _) => return Err(usage("--items 0: give at least 1 item per client".into())),
            (Some(n), None) => ItemCount::PerClient(n),
            (None, None) => ItemCount::PerClient(1000),
        };
        if self.branch == 0 {
            return Err(usage("--branch 0: a folder has at least 1 folder below it; give --branch 1 or more".into()));
        }
        let tree = TreeShape { depth: self.depth, branch: self.branch, leaves_only: self.leaves_only };
        let counts = Counts::of(&tree, items).map_err(|e| {
            usage(format!(
                "--depth {} --branch {}: {e}; give more --items, fewer folders, or --items-per-folder",
                self.depth, self.branch
            ))
        })?;
        let kinds = match (self.files_only, self.dirs_only) {
            (true, _) => ItemKinds::Files,
            (_, true) => ItemKinds::Dirs,
            _ => ItemKinds::Both,
        };
        let phases = self.phases(kinds)?;
        let write_bytes = size("--write-bytes", &self.write_bytes)?;
        let read_bytes = size("--read-bytes", &self.read_bytes)?;
        // In place without file-create, the files were written by an earlier run.
        let files_made_here = phases.contains(&Phase::FileCreate);
        if read_bytes > write_bytes && (files_made_here || !self.in_place) {
            return Err(usage(format!(
                "--read-bytes {}: more than the {write_bytes} bytes --write-bytes puts in each file; read at most that",
                self.read_bytes
            )));
        }
        let iterations = self.iterations()?;
        let stonewall = self.stonewall()?;
        let random_stat_seed = self.seed()?;
        let (open, curve) = self.load(&phases, counts.per_client)?;
        let latency_target = self.latency_target()?;
        let plan = MetadataPlan {
            items: match items {
                ItemCount::PerClient(_) => ItemCount::PerClient(counts.per_client),
                per_folder @ ItemCount::PerFolder(_) => per_folder,
            },
            kinds,
            tree,
            layout: if self.per_client_folder { Layout::PerClient } else { Layout::Shared },
            phases,
            write_bytes,
            read_bytes,
            fsync: self.fsync,
            sync_after_phase: self.sync_after_phase,
            neighbour: Neighbour { stride: self.neighbour },
            random_stat_seed,
            iterations,
            stonewall,
            in_place: self.in_place,
            series_interval_ns: self.series.interval_ns()?,
            open,
            curve,
            latency_target,
        };
        // The clients as given; under MPI the suite checks again with its ranks.
        plan.check_rates(self.common.run.client.clients)?;
        Ok(plan)
    }

    /// `--rate` and `--arrivals`, or `--curve` and `--stop-curve`, checked against the phases
    /// and the `items` of each client: what cannot be measured is refused before anything runs.
    fn load(&self, phases: &[Phase], items: u64) -> anyhow::Result<(Option<OpenRate>, Option<MetaCurve>)> {
        let arrival = match &self.arrivals {
            None => iomatrix_random::Arrival::Uniform,
            Some(text) => text.parse().map_err(|e: String| usage(format!("--arrivals {text}: {e}")))?,
        };
        if self.arrivals.is_some() && self.rate.is_none() && self.curve.is_none() && self.latency_target.is_none() {
            return Err(usage(
                "--arrivals without --rate or --curve: there is no open loop to space; give --rate N \
                              (items a second, all clients together) or --curve"
                    .into(),
            ));
        }
        let open_loop = self.rate.is_some() || self.curve.is_some() || self.latency_target.is_some();
        if open_loop {
            self.refuse_with_open_loop(phases, items)?;
        }
        if let Some(rate) = self.rate {
            if rate == 0 {
                return Err(usage("--rate 0 offers nothing; give items a second above 0, or leave --rate out".into()));
            }
            return Ok((Some(OpenRate { per_sec: rate, arrival }), None));
        }
        let Some(points) = &self.curve else { return Ok((None, None)) };
        let curve = iomatrix_harness::curve::Curve {
            points: iomatrix_harness::curve::parse_points(points)?,
            stop: self.stop_curve.as_deref().map(iomatrix_harness::curve::parse_bound).transpose()?,
        };
        Ok((None, Some(MetaCurve { curve, arrival })))
    }

    /// `--latency-target` and `--latency-percentile`, resolved.
    fn latency_target(&self) -> anyhow::Result<Option<crate::target::MetaTarget>> {
        let Some(text) = &self.latency_target else { return Ok(None) };
        if !text.trim().is_empty() && text.trim().bytes().all(|b| b.is_ascii_digit()) {
            return Err(usage(format!(
                "--latency-target {text}: give a unit, e.g. {text}us or {text}ms (fio reads a bare number here as \
                 microseconds, iomatrix's durations as seconds)"
            )));
        }
        let d = iomatrix_core::parse_duration(text).map_err(|e| usage(format!("--latency-target {text}: {e}")))?;
        let percentile_hundredths = match &self.latency_percentile {
            None => 10_000,
            Some(p) => {
                let value = p.trim().trim_end_matches('%').parse::<f64>().ok().filter(|v| v.is_finite());
                let hundredths = value.map(|v| v * 100.0).filter(|h| (h - h.round()).abs() < 1e-6);
                match hundredths.map(|h| h.round() as i64) {
                    Some(h @ 1..=10_000) => h as u32,
                    _ => {
                        return Err(usage(format!(
                            "--latency-percentile {p}: give a percentage above 0 and at most 100, with at most two \
                             decimals, e.g. 99 or 99.9"
                        )))
                    }
                }
            }
        };
        let arrival = match &self.arrivals {
            None => iomatrix_random::Arrival::Uniform,
            Some(text) => text.parse().map_err(|e: String| usage(format!("--arrivals {text}: {e}")))?,
        };
        Ok(Some(crate::target::MetaTarget {
            target_ns: u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            percentile_hundredths,
            arrival,
        }))
    }

    /// What open loop (`--rate`, `--curve`, `--latency-target`) does not take: fewer than 10 items a client (too few
    /// arrivals to say anything of a latency), the stonewall (a closed loop's cut), phases that
    /// stay closed loop under a curve, and a curve's samples or a run in place.
    fn refuse_with_open_loop(&self, phases: &[Phase], items: u64) -> anyhow::Result<()> {
        let flag = match (self.rate.is_some(), self.curve.is_some()) {
            (true, _) => "--rate",
            (_, true) => "--curve",
            _ => "--latency-target",
        };
        if (items as f64) < iomatrix_harness::curve::MIN_ARRIVALS_PER_CELL {
            return Err(usage(format!(
                "{flag} with {items} item(s) per client: each item is an arrival, and fewer than {:.0} a client say \
                 nothing of a latency; give --items {:.0} or more",
                iomatrix_harness::curve::MIN_ARRIVALS_PER_CELL,
                iomatrix_harness::curve::MIN_ARRIVALS_PER_CELL
            )));
        }
        if self.stonewall.is_some() {
            return Err(usage(format!(
                "{flag} with --stonewall: open loop paces file creation at its arrivals, which the stonewall would \
                 cut at a time of its own; leave --stonewall out"
            )));
        }
        if self.rate.is_some() {
            return Ok(());
        }
        if let Some(p) = phases.iter().find(|p| !p.paced()) {
            return Err(usage(format!(
                "{flag} with the phase {}: it runs the item phases at loads, and {} stays closed loop (a tree's \
                 handful of folders, a read per folder, or one walker: too few arrivals for a rate); give --phases \
                 with item phases only (e.g. file-create,file-stat,file-remove)",
                p.name(),
                p.name()
            )));
        }
        let repeated = self.iterations.is_some_and(|i| i > 1) || self.common.run.repeat.repeat > 1;
        if repeated || self.common.run.repeat.tolerance.is_some() {
            return Err(usage(format!(
                "{flag} with --iterations, --repeat or --tolerance: its points are one round of the phases each, \
                 judged as they come (repeated points are not built yet); leave them out"
            )));
        }
        if self.in_place {
            return Err(usage(format!(
                "{flag} with --in-place: each point runs the phases over fresh names in a folder of its own; leave \
                 --in-place out"
            )));
        }
        Ok(())
    }

    /// --iterations (mdtest -i) or --repeat (every suite's samples): the same thing here, as
    /// bonnie's --repeats; both given and different is refused.
    fn iterations(&self) -> anyhow::Result<u32> {
        let iterations = match (self.iterations, self.common.run.repeat.repeat) {
            (Some(i), 1) => i,
            (None, n) => n,
            (Some(i), n) if i == n => i,
            (Some(i), n) => {
                return Err(usage(format!("--iterations {i} and --repeat {n}: give one (they mean the same here)")))
            }
        };
        if iterations == 0 {
            return Err(usage("--iterations 0: give at least 1".into()));
        }
        Ok(iterations)
    }

    fn stonewall(&self) -> anyhow::Result<Option<Duration>> {
        let Some(text) = &self.stonewall else { return Ok(None) };
        let wall = iomatrix_core::parse_duration(text)
            .map_err(|e| usage(format!("--stonewall {text}: {e}; give a duration such as 300s or 5m")))?;
        if wall.is_zero() {
            return Err(usage(format!("--stonewall {text}: give a duration above 0, or leave --stonewall out")));
        }
        if self.branch > 1 {
            return Err(usage(format!(
                "--stonewall with --branch {}: mdtest's stonewall works on one folder's items at a time and refuses \
                 a branching factor above 1; give --branch 1 or leave --stonewall out",
                self.branch
            )));
        }
        Ok(Some(wall))
    }

    fn seed(&self) -> anyhow::Result<Option<u64>> {
        match self.random_stat.as_deref() {
            None => Ok(None),
            Some("time") => {
                Ok(Some(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs())))
            }
            Some(text) => text.parse::<u64>().map(Some).map_err(|_| {
                usage(format!("--random-stat={text}: the seed is a whole number (e.g. --random-stat=42)"))
            }),
        }
    }

    /// The phases asked for, in mdtest's order, each checked against the items made.
    fn phases(&self, kinds: ItemKinds) -> anyhow::Result<Vec<Phase>> {
        let allowed = |p: Phase| match kinds {
            ItemKinds::Both => true,
            ItemKinds::Files => !p.name().starts_with("dir-"),
            ItemKinds::Dirs => !p.name().starts_with("file-"),
        };
        let Some(list) = &self.phases else {
            // find is IO500's, asked for by name only; a curve's phases are the item phases.
            let curved = |p: Phase| (self.curve.is_none() && self.latency_target.is_none()) || p.paced();
            return Ok(Phase::ALL.into_iter().filter(|p| allowed(*p) && *p != Phase::Find && curved(*p)).collect());
        };
        let names = || Phase::ALL.map(Phase::name).join(", ");
        let mut chosen = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let phase = Phase::ALL
                .into_iter()
                .find(|p| p.name() == word)
                .ok_or_else(|| usage(format!("--phases: no phase '{word}'; the phases are {}", names())))?;
            if !allowed(phase) {
                let flag = if kinds == ItemKinds::Files { "--files-only" } else { "--dirs-only" };
                return Err(usage(format!("--phases {word} with {flag}: that phase's items are not made; drop one")));
            }
            chosen.push(phase);
        }
        if chosen.is_empty() {
            return Err(usage(format!("--phases '{list}': name at least one of {}", names())));
        }
        chosen.sort();
        chosen.dedup();
        let ordered: Vec<Phase> = Phase::ALL.into_iter().filter(|p| chosen.contains(p)).collect();
        for (made_by, users) in [
            (Phase::DirCreate, &[Phase::DirStat, Phase::DirReaddir, Phase::DirRename, Phase::DirRemove][..]),
            (Phase::FileCreate, &[Phase::Find, Phase::FileStat, Phase::FileRead, Phase::FileRemove][..]),
        ] {
            if let Some(user) = users.iter().find(|u| ordered.contains(u)) {
                if !ordered.contains(&made_by) && !self.in_place {
                    return Err(usage(format!(
                        "--phases: {} needs the items {} makes in the same run (each run starts in a fresh \
                         folder); add {}, or give --in-place to work on the items an earlier --in-place run (or \
                         mdtest) left in the target folder",
                        user.name(),
                        made_by.name(),
                        made_by.name()
                    )));
                }
            }
        }
        Ok(ordered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: MetadataArgs,
    }

    fn plan(words: &str) -> anyhow::Result<MetadataPlan> {
        let argv = std::iter::once("t").chain(words.split_whitespace());
        Cli::try_parse_from(argv).map_err(anyhow::Error::from)?.args.plan()
    }

    fn refusal(words: &str) -> String {
        let e = plan(words).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{words}: not a usage error: {e}");
        e.to_string()
    }

    #[test]
    fn defaults_are_mdtests() {
        let p = plan("").unwrap();
        assert_eq!(p.items, ItemCount::PerClient(1000));
        assert_eq!(p.layout, Layout::Shared);
        assert_eq!(p.phases, Phase::ALL.into_iter().filter(|p| *p != Phase::Find).collect::<Vec<_>>());
        let p = plan("--files-only --items 10 --depth 1 --branch 3 --per-client-folder").unwrap();
        // 10 over 4 folders: 2 each, 8 in all.
        assert_eq!(p.items, ItemCount::PerClient(8));
        assert!(p.phases.iter().all(|p| !p.name().starts_with("dir-")));
        let p = plan("--phases file-stat,file-create --random-stat=7 --stonewall 2s").unwrap();
        assert_eq!(p.phases, vec![Phase::FileCreate, Phase::FileStat]);
        assert_eq!((p.random_stat_seed, p.stonewall), (Some(7), Some(Duration::from_secs(2))));
    }

    #[test]
    fn bad_values_are_refused_with_the_fix() {
        assert!(refusal("--items 0").contains("at least 1"));
        assert!(refusal("--branch 0").contains("--branch 1"));
        assert!(refusal("--items 3 --depth 2 --branch 2").contains("none per folder"));
        assert!(refusal("--stonewall 1s --branch 2 --depth 1").contains("branching factor"));
        assert!(refusal("--stonewall soon").contains("300s"));
        assert!(refusal("--phases file-copy").contains("file-create"));
        assert!(refusal("--phases file-stat").contains("add file-create"));
        assert!(refusal("--dirs-only --phases file-create").contains("--dirs-only"));
        assert!(refusal("--write-bytes 10 --read-bytes 20").contains("at most"));
        assert!(refusal("--iterations 0").contains("at least 1"));
        assert!(refusal("--iterations 2 --repeat 3").contains("give one (they mean the same here)"));
        assert_eq!(plan("--repeat 3").unwrap().iterations, 3, "--repeat is mdtest's -i here");
        assert_eq!(plan("--iterations 3 --repeat 3").unwrap().iterations, 3);
        assert!(refusal("--random-stat=x").contains("whole number"));
    }

    #[test]
    fn open_loop_and_curves_refuse_what_cannot_be_measured() {
        let p = plan("--rate 2000 --arrivals poisson --clients 2").unwrap();
        assert_eq!(p.open, Some(OpenRate { per_sec: 2000, arrival: iomatrix_random::Arrival::Poisson }));
        assert!(refusal("--rate 100 --items 5").contains("--items 10 or more"));
        assert!(refusal("--rate 0").contains("offers nothing"));
        assert!(refusal("--rate 5000000").contains("at most 1000000"));
        assert!(refusal("--rate 100 --stonewall 1s").contains("leave --stonewall out"));
        assert!(refusal("--arrivals poisson").contains("--rate N"));
        assert!(refusal("--rate 10 --arrivals bursty").contains("uniform or poisson"));
        // A curve's phases are the item phases: by default, and refused by name otherwise.
        let p = plan("--curve --files-only").unwrap();
        assert_eq!(p.phases, [Phase::FileCreate, Phase::FileStat, Phase::FileRead, Phase::FileRemove]);
        assert_eq!((p.rounds(), p.load_of(0)), (7, Some(iomatrix_core::CurveLoad::Max)));
        assert_eq!(p.load_of(1), Some(iomatrix_core::CurveLoad::Percent(10)));
        assert!(refusal("--curve --phases tree-create,file-create").contains("tree-create stays closed loop"));
        assert!(refusal("--curve --iterations 2").contains("--iterations"));
        assert!(refusal("--curve --in-place --phases file-create").contains("--in-place"));
        assert!(refusal("--curve 0").contains("outside 1-100%"));
        assert!(refusal("--curve --stop-curve p42:1ms").contains("give mean, p50, p99 or p99.9"));
        // 10/s of all clients for 100 items each of 4 clients: 2.5/s each, 40 s a phase: fine;
        // 2,000,000/s over one client is past what a client schedules.
        assert!(plan("--curve 10/s --items 100 --clients 4").is_ok());
        assert!(refusal("--curve 2000000/s --items 100").contains("at most 1000000"));
    }

    #[test]
    fn in_place_takes_phases_on_what_an_earlier_run_left() {
        assert!(refusal("--phases file-stat").contains("or give --in-place"));
        let p = plan("--in-place --files-only --phases file-stat").unwrap();
        assert!(p.in_place && !p.makes_items());
        assert_eq!(p.phases, [Phase::FileStat]);
        // The files were written by the earlier run: its --write-bytes is not this run's.
        let p = plan("--in-place --phases file-read,file-remove,tree-remove --read-bytes 3901").unwrap();
        assert_eq!((p.read_bytes, p.phases.len()), (3901, 3));
        assert!(refusal("--in-place --phases file-create,file-read --read-bytes 8").contains("at most"));
        let p = plan("--in-place --phases tree-create,file-create").unwrap();
        assert!(p.in_place && p.makes_items());
        assert!(!plan("").unwrap().in_place);
    }
}
