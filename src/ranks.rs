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
    },
    Access {
        plan: iomatrix_access::AccessPlan,
        workdir: Option<PathBuf>,
        clients: ClientPlan,
    },
    Bonnie {
        plan: iomatrix_bonnie::BonniePlan,
        workdir: PathBuf,
        clients: ClientPlan,
    },
    Fileserver {
        plan: iomatrix_fileserver::FileserverPlan,
        workdir: PathBuf,
        clients: ClientPlan,
    },
    /// Read only, no working folder: rank r walks `plan.root/client-r`.
    Backup {
        plan: iomatrix_backup::BackupPlan,
        clients: ClientPlan,
    },
}

#[cfg(feature = "mpi")]
/// Each rank's version, compared by rank 0 before anything else. For the
/// test of that refusal, `IOMATRIX_PRETEND_VERSION` replaces it.
fn version() -> String {
    std::env::var("IOMATRIX_PRETEND_VERSION").unwrap_or_else(|_| env!("CARGO_PKG_VERSION").to_string())
}

pub struct Ranks {
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
            Ok(Ranks { mpi, shared: std::cell::Cell::new(false), turned_away })
        }
        #[cfg(not(feature = "mpi"))]
        Ok(Ranks { shared: std::cell::Cell::new(false), turned_away: false })
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
