//! This process's place in a run: alone, with threads as clients, or one
//! rank of an MPI job (the `mpi` feature). Rank 0 parses the command line,
//! validates the plan and shares it with the others as [`Shared`]
//! messages (the job, then each pass of cells, then the end), and alone
//! opens the database; the other ranks ("followers") never parse
//! arguments: they run each shared pass as their client and exit.

use super::clients::ClientPlan;
use super::live::{LiveBoard, LiveSample};
use super::target::Server;
use iomatrix_coord::{Group, Launch};
use iomatrix_core::UsageError;
use std::path::PathBuf;
#[cfg(feature = "mpi")]
use std::sync::atomic::Ordering;

/// What rank 0 tells the other ranks, in order: one `Job` (or `Off`), then
/// a `Pass` per pass of cells (the plan; noisy cells measured again are a
/// later pass), then `Done`.
#[derive(serde::Serialize, serde::Deserialize)]
pub enum Shared {
    /// No run: the reason was already printed at rank 0.
    Off,
    /// A run, each rank one client.
    Job(Box<SharedJob>),
    /// Run this plan (the suite's plan, as JSON).
    Pass(serde_json::Value),
    /// The run is over.
    Done,
}

/// A run of `suite`, as every rank needs it.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct SharedJob {
    pub suite: String,
    /// The run's working folder (each rank's `client-N` is in it); None for
    /// a raw device, a tree to walk, or a server.
    pub workdir: Option<PathBuf>,
    /// On a server: the server and the folder there the clients work in
    /// (the run's working folder, or "" for a tree that is only read).
    pub server: Option<(Server, String)>,
    pub clients: ClientPlan,
}

/// How far rank 0 has come in telling the others.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Told {
    Nothing,
    Job,
    Done,
}

#[cfg(feature = "mpi")]
/// Each rank's version, compared by rank 0 before anything else. For the
/// test of that refusal, `IOMATRIX_PRETEND_VERSION` replaces it.
fn version() -> String {
    std::env::var("IOMATRIX_PRETEND_VERSION").unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_string())
}

/// Where one rank runs: the host's name and the address it is reached at,
/// stored with the run (`environment.client_hosts`) so figures can be read
/// per host, and what that host is ([`Ranks::describe_hosts`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankHost {
    pub rank: usize,
    pub host: String,
    pub address: String,
    /// The host's CPU, RAM, kernel, folder and interface; absent in runs stored before they
    /// were recorded, and for a rank whose word did not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<iomatrix_environment::HostEnvironment>,
}

#[cfg(feature = "mpi")]
impl RankHost {
    /// This process's host: its name, and its first IPv4 address that is not
    /// loopback, on an interface or subnet MPI's TCP transport is told to use
    /// (`OMPI_MCA_btl_tcp_if_include`: names or a.b.c.d/n) if that is set.
    pub fn here(rank: usize) -> RankHost {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let wanted: Vec<String> = std::env::var("OMPI_MCA_btl_tcp_if_include")
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        let all = iomatrix_environment::ipv4_addresses();
        let address = all
            .iter()
            .find(|(name, addr)| wanted.iter().any(|w| w == name || in_subnet(*addr, w)))
            .or_else(|| all.first())
            .map(|(_, a)| a.to_string())
            .unwrap_or_default();
        RankHost { rank, host, address, environment: None }
    }
}

/// Whether `addr` lies in `cidr` (a.b.c.d/n); false for anything else.
#[cfg(feature = "mpi")]
fn in_subnet(addr: std::net::Ipv4Addr, cidr: &str) -> bool {
    let Some((net, bits)) = cidr.split_once('/') else { return false };
    let (Ok(net), Ok(bits)) = (net.parse::<std::net::Ipv4Addr>(), bits.parse::<u32>()) else { return false };
    let mask = if bits == 0 { 0 } else { u32::MAX.checked_shl(32 - bits.min(32)).unwrap_or(0) };
    u32::from(addr) & mask == u32::from(net) & mask
}

pub struct Ranks {
    /// What the other ranks said mid-cell (rank 0).
    board: LiveBoard,
    /// Every rank's host, by rank (rank 0, under MPI).
    hosts: Option<Vec<RankHost>>,
    #[cfg(feature = "mpi")]
    mpi: Option<iomatrix_coord::mpi::MpiGroup>,
    /// Rank 0 under MPI: the run whose end it must store if mpirun ends the job first.
    #[cfg(feature = "mpi")]
    last_word: std::sync::Arc<LastWord>,
    told: std::cell::Cell<Told>,
    /// A follower that was turned away (versions differ): rank 0 says why.
    turned_away: bool,
}

/// How to rebuild iomatrix with MPI, as every refusal says it.
const MPI_BUILD: &str = "`cargo build --release --features mpi` (Debian: apt-get install libopenmpi-dev openmpi-bin \
                         clang libclang-dev)";

/// The refusal of a launch whose tasks would each run alone: a build
/// without MPI under any launcher of many tasks, or an MPI build whose MPI
/// world is this one process though the launcher started more.
fn lone_task_refusal(launch: &Launch, mpi_build: bool) -> UsageError {
    let tasks = launch.tasks.map_or_else(|| "several".to_string(), |n| n.to_string());
    let why = if !mpi_build {
        format!(
            "this iomatrix was built without MPI but runs under {} ({tasks} tasks): every rank would run alone",
            launch.by
        )
    } else if launch.by == "srun" && !launch.wires_mpi {
        format!(
            "srun started {tasks} tasks without a PMI plugin (no PMI_* or PMIX_* variable): MPI in each task sees \
             only itself, and every task would run alone"
        )
    } else {
        format!(
            "{} started {tasks} tasks, but MPI sees this one alone: this iomatrix was built against another MPI \
             than the launcher's (Open MPI vs MPICH), or the launcher gave MPI no way to find the others",
            launch.by
        )
    };
    UsageError::new(format!(
        "{why}; under Slurm start it with `srun --mpi=pmix` (`srun --mpi=list` names what this Slurm has), \
         elsewhere with the mpirun of the MPI it was built with, and an iomatrix built with MPI: {MPI_BUILD}"
    ))
}

impl Ranks {
    /// This process alone, without MPI: every command that is not a run
    /// (show, report, runs, compare...) never initialises MPI.
    pub fn alone() -> Ranks {
        Ranks {
            board: LiveBoard::default(),
            hosts: None,
            #[cfg(feature = "mpi")]
            mpi: None,
            #[cfg(feature = "mpi")]
            last_word: Default::default(),
            told: std::cell::Cell::new(Told::Done),
            turned_away: false,
        }
    }

    /// Joins the MPI job if this process is part of one (a run). A launch
    /// whose tasks would each run alone is refused: a build without MPI
    /// under a launcher of many tasks, srun without a PMI plugin, or an MPI
    /// world of one process where the launcher started more.
    pub fn init() -> anyhow::Result<Ranks> {
        let launch = Launch::from_env();
        #[cfg(not(feature = "mpi"))]
        if let Some(launch) = launch.filter(|l| l.tasks != Some(1)) {
            return Err(lone_task_refusal(&launch, false).into());
        }
        #[cfg(feature = "mpi")]
        {
            // Before MPI_Init: Open MPI started by srun without PMI prints its own advice and aborts.
            if let Some(launch) = launch.as_ref().filter(|l| l.many() && !l.wires_mpi) {
                return Err(lone_task_refusal(launch, true).into());
            }
            let signalled = super::signals::install()?;
            let mpi = iomatrix_coord::mpi::MpiGroup::init(super::clients::DEFAULT_TIMEOUT, signalled)
                .map_err(|e| UsageError::new(e.to_string()))?;
            if let (None, Some(launch)) = (&mpi, launch.as_ref().filter(|l| l.many())) {
                return Err(lone_task_refusal(launch, true).into());
            }
            let turned_away = match &mpi {
                Some(group) => !check_versions(group)?,
                None => false,
            };
            let hosts = match &mpi {
                Some(group) if !turned_away => gather_hosts(group)?,
                _ => None,
            };
            let last_word = std::sync::Arc::new(LastWord::default());
            if let Some(farewell) = mpi.as_ref().and_then(|g| g.farewell()) {
                let said = farewell.clone();
                super::signals::on_first_signal(move |_| said.on_signal());
            }
            if let Some(group) = mpi.as_ref().filter(|g| g.is_leader()) {
                let (last_word, farewell) = (last_word.clone(), group.farewell());
                let names: Vec<String> =
                    hosts.iter().flatten().map(|h| format!("{} ({})", h.host, h.address)).collect();
                super::signals::on_first_signal(move |_| last_word.on_signal(farewell, &names));
            }
            Ok(Ranks {
                board: LiveBoard::default(),
                hosts,
                mpi,
                last_word,
                told: std::cell::Cell::new(Told::Nothing),
                turned_away,
            })
        }
        #[cfg(not(feature = "mpi"))]
        Ok(Ranks {
            board: LiveBoard::default(),
            hosts: None,
            told: std::cell::Cell::new(Told::Nothing),
            turned_away: false,
        })
    }

    /// True when a launcher (mpirun, srun, a PMI launcher) started this
    /// process as one of several tasks, MPI initialised or not.
    pub fn launched_many(&self) -> bool {
        self.mpi_size().is_some() || Launch::from_env().is_some_and(|l| l.many())
    }

    /// Rank 0 under MPI: from now on, a signal that ends the job before the
    /// run's own thread has stored its end gets it stored by rank 0 all the
    /// same (mpirun kills every rank one second after its SIGTERM).
    /// `folder`: the run's working folder and the target `iomatrix clean` takes, named by the same
    /// signal if the run's own thread has not removed it by then ([`Ranks::folder_dealt_with`]).
    pub fn watch_run(&self, db: &std::path::Path, run_id: i64, folder: Option<(String, String)>) {
        #[cfg(feature = "mpi")]
        if self.mpi.is_some() {
            *lock(&self.last_word.run) = Some((db.to_path_buf(), run_id));
            lock(&self.last_word.folder).clone_from(&folder);
        }
        let _ = (db, run_id, folder);
    }

    /// Rank 0: the run's own thread has removed the working folder, or said itself why it could not.
    pub fn folder_dealt_with(&self) {
        #[cfg(feature = "mpi")]
        lock(&self.last_word.folder).take();
    }

    /// Rank 0: the run's own thread stores its end now; held while it does,
    /// so the signal's last word never overwrites it.
    pub fn run_ending(&self) -> Option<std::sync::MutexGuard<'_, bool>> {
        #[cfg(feature = "mpi")]
        if self.mpi.is_some() {
            let mut ending = lock(&self.last_word.ending);
            *ending = true;
            return Some(ending);
        }
        None
    }

    /// Every rank's host, by rank: at rank 0 of an MPI job, else None (all clients are here).
    pub fn hosts(&self) -> Option<&[RankHost]> {
        self.hosts.as_deref()
    }

    /// Every rank describes its host once the job is known (`folder`: the run's working folder
    /// here; `server`: the run's server): rank 0 gets each rank's host with its environment, by
    /// rank; the others, and a run without MPI, None. Rank 0 and every follower call it once,
    /// right after the job is shared.
    pub fn describe_hosts(
        &self,
        folder: Option<&std::path::Path>,
        server: Option<&Server>,
    ) -> anyhow::Result<Option<Vec<RankHost>>> {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            let remote = server.map(|s| iomatrix_environment::FolderFacts {
                path: s.url(),
                fs_type: format!("{} (iomatrix client)", s.protocol()),
                mount_source: s.host().to_string(),
            });
            // Toward the server where there is one; else the interface MPI's traffic takes.
            let toward = server.and_then(Server::address).or_else(|| RankHost::here(g.rank()).address.parse().ok());
            let mut here = iomatrix_environment::capture_host(folder, remote, toward);
            if let (Some(nic), Some(rate)) = (here.nic.as_mut(), super::server_facts::lab_receive_rate()) {
                nic.receive_rate = Some(rate);
            }
            let Some(all) = g.gather(serde_json::to_vec(&here)?).map_err(anyhow::Error::msg)? else {
                return Ok(None);
            };
            let mut hosts = self.hosts.clone().unwrap_or_default();
            for (host, bytes) in hosts.iter_mut().zip(&all) {
                host.environment = serde_json::from_slice(bytes).ok();
            }
            return Ok(Some(hosts));
        }
        let _ = (folder, server);
        Ok(None)
    }

    /// The number of MPI ranks, when running under mpirun.
    pub fn mpi_size(&self) -> Option<usize> {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            return Some(g.size());
        }
        None
    }

    /// True at every MPI rank but 0.
    pub fn is_follower(&self) -> bool {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            return !g.is_leader();
        }
        false
    }

    /// The other ranks' live samples, for rank 0's live line.
    pub fn live_board(&self) -> LiveBoard {
        self.board.clone()
    }

    /// Runs `body` (a run's clients) while this rank's `sample()` goes to
    /// rank 0 every half second, and rank 0 keeps what it hears on its
    /// board. Only under MPI with thread support; else just `body`.
    pub fn relay_live<T>(&self, sample: &(dyn Fn() -> LiveSample + Sync), body: impl FnOnce() -> T) -> T {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            let board = self.board.clone();
            let encode = || serde_json::to_vec(&sample()).unwrap_or_default();
            let heard = move |rank: usize, bytes: Vec<u8>| {
                if let Ok(s) = serde_json::from_slice::<LiveSample>(&bytes) {
                    board.heard(rank, s);
                }
            };
            return g.relay_live(std::time::Duration::from_millis(500), &encode, &heard, body);
        }
        let _ = sample;
        body()
    }

    /// The clients of a run: MPI ranks, or `local` threads.
    pub fn group(&self, local: usize) -> Group<'_> {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            return Group::Mpi(g);
        }
        Group::Local(local)
    }

    /// Rank 0: hands the job to the other ranks, and sets the bound on
    /// every wait for them.
    pub fn share_job(&self, job: &Shared, clients: &ClientPlan) -> anyhow::Result<()> {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            g.set_timeout(clients.timeout);
        }
        let _ = clients;
        self.send(job)?;
        self.told.set(Told::Job);
        Ok(())
    }

    /// A follower: bounds its waits for the others by rank 0's `--client-timeout`, which came with the job.
    pub fn bound_waits(&self, clients: &ClientPlan) {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            g.set_timeout(clients.timeout);
        }
        let _ = clients;
    }

    /// Rank 0: a pass of cells for every rank to run (`Shared::Pass`), or the end (`Shared::Done`).
    /// The end is not sent after a signal (every rank is stopping) nor to a
    /// group that lost a rank (it is ended by [`Ranks::end`]).
    pub fn share_pass(&self, pass: &Shared) -> anyhow::Result<()> {
        #[cfg(feature = "mpi")]
        if matches!(pass, Shared::Done)
            && self.mpi.as_ref().is_some_and(|g| g.is_broken() || super::signals::STOP.load(Ordering::SeqCst))
        {
            self.told.set(Told::Done);
            return Ok(());
        }
        self.send(pass)?;
        if matches!(pass, Shared::Done) {
            self.told.set(Told::Done);
        }
        Ok(())
    }

    fn send(&self, message: &Shared) -> anyhow::Result<()> {
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            g.share(Some(serde_json::to_vec(message)?)).map_err(anyhow::Error::msg)?;
        }
        let _ = message;
        Ok(())
    }

    /// Rank 0, at the end: tells ranks still waiting that there is no job,
    /// or no more passes.
    pub fn release(&self) {
        let _ = match self.told.get() {
            Told::Nothing => self.send(&Shared::Off),
            Told::Job => self.send(&Shared::Done),
            Told::Done => Ok(()),
        };
        self.told.set(Told::Done);
    }

    /// A follower: rank 0's next message. None when this rank was turned
    /// away (the versions differ: rank 0 says why).
    pub fn receive(&self) -> anyhow::Result<Option<Shared>> {
        if self.turned_away {
            return Ok(None);
        }
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            let bytes = g.share(None).map_err(anyhow::Error::msg)?;
            return Ok(Some(serde_json::from_slice(&bytes)?));
        }
        anyhow::bail!("only MPI ranks other than 0 follow")
    }

    /// After a failed run: a run that ended on a hung or lost rank ends the
    /// whole job, so no rank waits on for a partner that is gone. Not after
    /// a signal (the launcher is ending the job already), nor after a
    /// failure every rank heard of (they end in order).
    /// `code`: the run's exit code, which mpirun passes on.
    pub fn end(&self, code: u8) {
        #[cfg(feature = "mpi")]
        if let Some(g) = self.mpi.as_ref().filter(|g| g.is_broken()) {
            g.abort(code.into());
        }
        #[cfg(not(feature = "mpi"))]
        let _ = code;
    }

    /// A follower that stopped for a signal (the launcher ending the job):
    /// its exit code, with a line saying so; None when no signal came.
    pub fn stopped_by_signal(&self) -> Option<std::process::ExitCode> {
        let signal = super::signals::first()?;
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            eprintln!("iomatrix: rank {}: stopped by {signal}", g.rank());
        }
        let _ = signal;
        Some(std::process::ExitCode::from(super::signals::exit_code()))
    }
}

/// Rank 0 under MPI: the run it must store if a signal ends the job before
/// the run's own thread stores its end (its client busy in a long request
/// when mpirun's SIGTERM comes: SIGKILL follows one second later).
#[cfg(feature = "mpi")]
#[derive(Default)]
struct LastWord {
    /// The database and the run's id, once the run began.
    run: std::sync::Mutex<Option<(PathBuf, i64)>>,
    /// Raised (and held) by the run's own thread while it stores the end.
    ending: std::sync::Mutex<bool>,
    /// The run's working folder and the target `iomatrix clean` takes, until the run's own thread
    /// has dealt with it.
    folder: std::sync::Mutex<Option<(String, String)>>,
}

#[cfg(feature = "mpi")]
impl LastWord {
    /// How long the run's own thread is given to store the end itself: well
    /// before mpirun's SIGKILL, one second after its SIGTERM.
    const GRACE: std::time::Duration = std::time::Duration::from_millis(700);

    /// How long after the signal the run's own thread is given to remove the working folder
    /// before it is named as left: still before mpirun's SIGKILL.
    const FOLDER_GRACE: std::time::Duration = std::time::Duration::from_millis(850);

    /// On the first signal (a thread of its own): if the run's own thread
    /// has not begun to store the end within [`Self::GRACE`], stores it:
    /// failed, naming the ranks that said nothing after the signal, or
    /// interrupted when every rank spoke; then names the working folder if
    /// it is still there. No MPI call: one may hang when a rank is gone.
    fn on_signal(&self, farewell: Option<iomatrix_coord::mpi::Farewell>, hosts: &[String]) {
        let begun = std::time::Instant::now();
        self.store_end(begun, farewell, hosts);
        self.name_folder_left(begun);
    }

    /// The working folder the run's own thread has not removed by [`Self::FOLDER_GRACE`] after
    /// the signal, named as a run on one host names one it could not remove: mpirun's SIGKILL
    /// follows (a removal waiting on a server that does not answer never ends in time), and then
    /// nothing could say it.
    fn name_folder_left(&self, begun: std::time::Instant) {
        while begun.elapsed() < Self::FOLDER_GRACE && lock(&self.folder).is_some() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        if let Some((folder, target)) = lock(&self.folder).take() {
            eprintln!(
                "iomatrix: warning: could not remove the working folder {folder}: mpirun ends rank 0 a second after \
                 its signal, before the removal finished (a server or file system that does not answer holds it); \
                 once the target answers again, `iomatrix clean {target}` removes it"
            );
        }
    }

    /// The run's end, stored here when the run's own thread has not begun to store it within
    /// [`Self::GRACE`] of the signal at `begun`.
    fn store_end(&self, begun: std::time::Instant, farewell: Option<iomatrix_coord::mpi::Farewell>, hosts: &[String]) {
        // First a provisional end, stored at once: on a loaded machine mpirun's SIGKILL may come
        // before the ranks' word does, and a run must never be left `running`. What follows
        // replaces it with the cause, or the run's own thread with its own account.
        if let Some((db, run_id)) = lock(&self.run).clone().filter(|_| !*lock(&self.ending)) {
            let name = super::signals::first().unwrap_or("a signal");
            let provisional = format!(
                "ended by {name} from the launcher before rank 0 learned why (mpirun signals every rank when \
                 one dies, a host is lost, or it is told to stop); see mpirun's own message"
            );
            if let Err(e) =
                iomatrix_store::Store::open(&db).and_then(|store| store.fail_if_running(run_id, &provisional))
            {
                eprintln!("iomatrix: rank 0: could not store run #{run_id}'s end: {e}");
            }
        }
        let silent = farewell.and_then(|f| f.silent(Self::GRACE));
        while begun.elapsed() < Self::GRACE && !*lock(&self.ending) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let ending = lock(&self.ending);
        let Some((db, run_id)) = lock(&self.run).clone().filter(|_| !*ending) else { return };
        let name = super::signals::first().unwrap_or("a signal");
        let on = |r: usize| hosts.get(r).map(|h| format!(" on {h}")).unwrap_or_default();
        let (status, message) = match silent {
            Some(silent) if !silent.is_empty() => (
                iomatrix_store::RunStatus::Failed,
                format!(
                    "{}: gone: said nothing to rank 0 when the job was ended by {name} (mpirun signals every \
                     rank when one dies or a host is lost): dead, or its host cut off; rank 0 stored this while its \
                     own client was still busy",
                    silent.iter().map(|r| format!("rank {r}{}", on(*r))).collect::<Vec<_>>().join(", ")
                ),
            ),
            Some(_) => {
                (iomatrix_store::RunStatus::Interrupted, format!("interrupted by {name}: every rank said so to rank 0"))
            }
            None => (
                iomatrix_store::RunStatus::Interrupted,
                format!(
                    "interrupted by {name} (from a user, or from mpirun when a rank died or a host was lost: the \
                     other ranks' word did not reach rank 0 in time, or this MPI lacks MPI_THREAD_MULTIPLE)"
                ),
            ),
        };
        let stored =
            iomatrix_store::Store::open(&db).and_then(|store| store.finish_run(run_id, status, Some(&message)));
        match stored {
            Ok(()) => eprintln!("iomatrix: rank 0: stored run #{run_id} as {}: {message}", status.as_str()),
            Err(e) => eprintln!("iomatrix: rank 0: could not store how run #{run_id} ended: {e}"),
        }
        // The run's own thread, if it gets there first after all, stores its own account after this one.
        drop(ending);
    }
}

#[cfg(feature = "mpi")]
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Rank 0: every rank's host, by rank (the others: None).
#[cfg(feature = "mpi")]
fn gather_hosts(group: &iomatrix_coord::mpi::MpiGroup) -> anyhow::Result<Option<Vec<RankHost>>> {
    let here = serde_json::to_vec(&RankHost::here(group.rank()))?;
    let Some(all) = group.gather(here).map_err(anyhow::Error::msg)? else { return Ok(None) };
    let hosts: Vec<RankHost> = all
        .iter()
        .enumerate()
        .map(|(rank, bytes)| {
            serde_json::from_slice::<RankHost>(bytes).unwrap_or(RankHost {
                rank,
                host: "unknown".into(),
                address: String::new(),
                environment: None,
            })
        })
        .collect();
    group.set_hosts(hosts.iter().map(|h| format!("{} ({})", h.host, h.address)).collect());
    Ok(Some(hosts))
}

/// Ok(true) when every rank runs rank 0's version; rank 0 refuses otherwise
/// (a usage error), and the others get Ok(false).
#[cfg(feature = "mpi")]
fn check_versions(group: &iomatrix_coord::mpi::MpiGroup) -> anyhow::Result<bool> {
    let all = group.gather(version().into_bytes()).map_err(anyhow::Error::msg)?;
    let verdict = all.map(|all| {
        let versions: Vec<String> = all.iter().map(|v| String::from_utf8_lossy(v).into_owned()).collect();
        let odd: Vec<String> = versions
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != versions[0])
            .map(|(rank, v)| format!("rank {rank} runs {v}"))
            .collect();
        if odd.is_empty() {
            String::new()
        } else {
            format!(
                "ranks run different versions of iomatrix: rank 0 runs {}, {}; install the same version on every \
                 host",
                versions[0],
                odd.join(", ")
            )
        }
    });
    let verdict = group.share(verdict.map(String::into_bytes)).map_err(anyhow::Error::msg)?;
    if verdict.is_empty() {
        return Ok(true);
    }
    if group.is_leader() {
        return Err(UsageError::new(String::from_utf8_lossy(&verdict).into_owned()).into());
    }
    Ok(false)
}
