//! This process's place in a run: alone, with threads as clients, or one
//! rank of an MPI job (the `mpi` feature). Rank 0 parses the command line,
//! validates the plan and shares it as a [`Shared`] job with the others,
//! and alone opens the database; the other ranks ("followers") never parse
//! arguments: they run the shared plan as their client and exit.

use crate::clients::ClientPlan;
use iomatrix_coord::Group;
use iomatrix_core::UsageError;
use std::path::PathBuf;

/// What rank 0 tells the other ranks before any client starts.
#[derive(serde::Serialize, serde::Deserialize)]
pub enum Shared {
    /// No run: the reason was already printed at rank 0.
    Off,
    Iozone {
        plan: iomatrix_iozone::IozonePlan,
        workdir: PathBuf,
        clients: ClientPlan,
        /// On a server: the target and the run's folder there (`workdir` is then unused).
        remote: Option<(crate::remote::RemoteTarget, String)>,
    },
    Access {
        plan: iomatrix_access::AccessPlan,
        workdir: Option<PathBuf>,
        clients: ClientPlan,
        /// On a server: the target and the run's folder there (`workdir` is then None).
        #[serde(default)]
        remote: Option<(crate::remote::RemoteTarget, String)>,
    },
    Bonnie {
        plan: iomatrix_bonnie::BonniePlan,
        workdir: PathBuf,
        clients: ClientPlan,
        /// On a server: the target and the run's folder there (`workdir` is then unused).
        remote: Option<(crate::remote::RemoteTarget, String)>,
    },
    Fileserver {
        plan: iomatrix_fileserver::FileserverPlan,
        workdir: PathBuf,
        clients: ClientPlan,
        /// On a server: the target and the run's folder there (`workdir` is then unused).
        remote: Option<(crate::remote::RemoteTarget, String)>,
    },
    /// Read only, no working folder: rank r walks `plan.root/client-r`.
    Backup {
        plan: iomatrix_backup::BackupPlan,
        clients: ClientPlan,
        /// Walks of the tree (`--repeat`), one cell each.
        walks: usize,
        /// On a server: the target, each rank connecting its own session.
        remote: Option<crate::remote::RemoteTarget>,
    },
}

#[cfg(feature = "mpi")]
/// Each rank's version, compared by rank 0 before anything else. For the
/// test of that refusal, `IOMATRIX_PRETEND_VERSION` replaces it.
fn version() -> String {
    std::env::var("IOMATRIX_PRETEND_VERSION").unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_string())
}

/// A client's figures of the last moment: what each MPI rank sends rank 0
/// mid-cell for its live line.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LiveSample {
    pub cell: usize,
    pub bytes_per_sec: f64,
    pub ops_per_sec: f64,
}

/// At rank 0: the last sample heard from each other rank.
#[derive(Clone, Default)]
pub struct LiveBoard(
    std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<usize, (std::time::Instant, LiveSample)>>>,
);

impl LiveBoard {
    /// Samples younger than three seconds, by rank.
    fn fresh(&self) -> Vec<(usize, LiveSample)> {
        let board = self.0.lock().unwrap_or_else(|e| e.into_inner());
        board.iter().filter(|(_, (at, _))| at.elapsed().as_secs() < 3).map(|(r, (_, s))| (*r, *s)).collect()
    }

    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    fn heard(&self, rank: usize, sample: LiveSample) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(rank, (std::time::Instant::now(), sample));
    }

    /// Rank 0's live words under MPI: every rank's rates summed (rank 0's
    /// own `mine`, the others' latest samples of the same cell) and the
    /// slowest rank. `unit` names `bytes_per_sec` as shown ("MiB/s").
    pub fn summary(&self, ranks: usize, mine: LiveSample, show: impl Fn(&LiveSample) -> String) -> String {
        let mut all: Vec<(usize, LiveSample)> = vec![(0, mine)];
        all.extend(self.fresh().into_iter().filter(|(_, s)| s.cell == mine.cell));
        let sum = LiveSample {
            cell: mine.cell,
            bytes_per_sec: all.iter().map(|(_, s)| s.bytes_per_sec).sum(),
            ops_per_sec: all.iter().map(|(_, s)| s.ops_per_sec).sum(),
        };
        let mut text = format!("{} summed over {} of {ranks} ranks", show(&sum), all.len());
        if let Some((rank, slowest)) = all.iter().min_by(|a, b| a.1.bytes_per_sec.total_cmp(&b.1.bytes_per_sec)) {
            if all.len() > 1 {
                text += &format!(", slowest rank {rank}: {}", show(slowest));
            }
        }
        text
    }
}

pub struct Ranks {
    /// What the other ranks said mid-cell (rank 0).
    board: LiveBoard,
    #[cfg(feature = "mpi")]
    mpi: Option<iomatrix_coord::mpi::MpiGroup>,
    shared: std::cell::Cell<bool>,
    /// A follower that was turned away (versions differ): rank 0 says why.
    turned_away: bool,
}

impl Ranks {
    /// Joins the MPI job if this process is part of one.
    pub fn init() -> anyhow::Result<Ranks> {
        #[cfg(not(feature = "mpi"))]
        if iomatrix_coord::launched_by_mpirun() {
            return Err(UsageError::new(
                "this iomatrix was built without MPI but runs under mpirun: every rank would run alone; rebuild \
                 with `cargo build --release --features mpi` (Debian: apt-get install libopenmpi-dev openmpi-bin \
                 clang libclang-dev)",
            )
            .into());
        }
        #[cfg(feature = "mpi")]
        {
            let stop = crate::signals::install()?;
            let mpi =
                iomatrix_coord::mpi::MpiGroup::init(crate::clients::DEFAULT_TIMEOUT, stop).map_err(UsageError::new)?;
            let turned_away = match &mpi {
                Some(group) => !check_versions(group)?,
                None => false,
            };
            Ok(Ranks { board: LiveBoard::default(), mpi, shared: std::cell::Cell::new(false), turned_away })
        }
        #[cfg(not(feature = "mpi"))]
        Ok(Ranks { board: LiveBoard::default(), shared: std::cell::Cell::new(false), turned_away: false })
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

    /// Rank 0: hands the job to the other ranks (once; later calls do nothing).
    pub fn share(&self, job: &Shared, clients: &ClientPlan) -> anyhow::Result<()> {
        if self.shared.replace(true) {
            return Ok(());
        }
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            g.set_timeout(clients.timeout);
            g.share(Some(serde_json::to_vec(job)?)).map_err(anyhow::Error::msg)?;
        }
        let _ = (job, clients);
        Ok(())
    }

    /// Rank 0, at the end: tells ranks still waiting for a job that there is none.
    pub fn release(&self) {
        if !self.shared.get() {
            let _ = self.share(&Shared::Off, &ClientPlan::single());
        }
    }

    /// A follower: waits for rank 0's job and runs its client.
    pub fn follow(&self) -> anyhow::Result<std::process::ExitCode> {
        if self.turned_away {
            // Leaves through MPI_Finalize: a rank that just exits makes mpirun end rank 0 before it explains.
            return Ok(std::process::ExitCode::SUCCESS);
        }
        #[cfg(feature = "mpi")]
        if let Some(g) = &self.mpi {
            let bytes = g.share(None).map_err(anyhow::Error::msg)?;
            let job: Shared = serde_json::from_slice(&bytes)?;
            return crate::follow::run(job, self);
        }
        anyhow::bail!("only MPI ranks other than 0 follow")
    }

    /// Rank 0, after the run: a run that ended on a hung or lost rank ends the
    /// whole job, so no rank waits on.
    pub fn end(&self, broken: bool) {
        #[cfg(feature = "mpi")]
        if let (Some(g), true) = (&self.mpi, broken) {
            g.abort(crate::app::EXIT_FAILED.into());
        }
        let _ = broken;
    }
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
