//! An MPI rank other than 0: runs rank 0's shared job as its one client.
//! It writes no database and prints no tables; rank 0 reports for all.

use crate::ranks::{Ranks, Shared};
use iomatrix_coord::Setup;
use iomatrix_iozone::{CellResult, CellSink};
use std::process::ExitCode;

pub fn run(job: Shared, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let stop = crate::signals::install()?;
    match job {
        Shared::Off => {}
        Shared::Iozone { plan, workdir, clients, remote } => {
            let setup = Setup {
                cells: plan.cells().len(),
                workdir: if remote.is_some() { None } else { Some(&workdir) },
                hooks: &clients.hooks,
                on_error: clients.on_error,
                stop,
            };
            let connect = crate::remote::connector(remote.as_ref().map(|(target, _)| target));
            let place = match &remote {
                Some((_, folder)) => iomatrix_iozone::Place::Remote { connect: &connect, folder: folder.clone() },
                None => iomatrix_iozone::Place::Local,
            };
            iomatrix_iozone::execute_at(&plan, &ranks.group(1), &setup, &place, &mut Nowhere)?;
        }
        Shared::Access { plan, workdir, clients, remote } => {
            let setup = Setup {
                cells: plan.cells().len(),
                workdir: workdir.as_deref(),
                hooks: &clients.hooks,
                on_error: clients.on_error,
                stop,
            };
            // Clients publish under their rank: room for every rank, only this one's used.
            let live = iomatrix_access::Live::new(ranks.mpi_size().unwrap_or(1));
            let sample = || crate::cmd::run_access::live_sample(&live);
            let connect = crate::remote::connector(remote.as_ref().map(|(target, _)| target));
            let place = crate::cmd::run_access::place(&connect, remote.as_ref().map(|(_, folder)| folder));
            ranks.relay_live(&sample, || {
                iomatrix_access::execute_at(&plan, &ranks.group(1), &setup, &place, &live, |_| Ok(()))
            })?;
        }
        Shared::Bonnie { plan, workdir, clients, remote } => {
            let setup = Setup {
                cells: iomatrix_bonnie::planned_tests(&plan).len(),
                workdir: if remote.is_some() { None } else { Some(&workdir) },
                hooks: &clients.hooks,
                on_error: clients.on_error,
                stop,
            };
            let connect = crate::remote::connector(remote.as_ref().map(|(target, _)| target));
            let place = match &remote {
                Some((_, folder)) => iomatrix_bonnie::Place::Remote { connect: &connect, folder: folder.clone() },
                None => iomatrix_bonnie::Place::Local,
            };
            iomatrix_bonnie::execute_at(&plan, &ranks.group(1), &setup, &place, |_| Ok(()))?;
        }
        Shared::Fileserver { plan, workdir, clients, remote } => {
            let setup = Setup {
                cells: plan.phases().len(),
                workdir: if remote.is_some() { None } else { Some(&workdir) },
                hooks: &clients.hooks,
                on_error: clients.on_error,
                stop,
            };
            iomatrix_fileserver::raise_fd_limit(
                (plan.connections as u64).saturating_mul(plan.fds_per_connection()).saturating_add(64),
            )?;
            let lives = [iomatrix_fileserver::Live::new()];
            let sampler = crate::cmd::run_fileserver::Sampler::default();
            let sample = || sampler.sample(&lives[0]);
            let connect = crate::remote::connector(remote.as_ref().map(|(target, _)| target));
            let place = match &remote {
                Some((_, folder)) => iomatrix_fileserver::Place::Remote { connect: &connect, folder: folder.clone() },
                None => iomatrix_fileserver::Place::Local,
            };
            ranks.relay_live(&sample, || {
                iomatrix_fileserver::execute_clients(&plan, &ranks.group(1), &setup, &place, &lives, |_| Ok(()))
            })?;
        }
        Shared::Backup { plan, clients, walks, remote } => {
            let setup = Setup { cells: walks, workdir: None, hooks: &clients.hooks, on_error: clients.on_error, stop };
            let live = iomatrix_backup::LiveClients::new(ranks.mpi_size().unwrap_or(1));
            let sample = || crate::cmd::run_backup::live_sample(&live);
            let connect = crate::remote::connector(remote.as_ref());
            let place = match &remote {
                Some(_) => iomatrix_backup::Place::Remote { connect: &connect, folder: String::new() },
                None => iomatrix_backup::Place::Local,
            };
            ranks.relay_live(&sample, || {
                iomatrix_backup::execute_clients(&plan, &ranks.group(1), &setup, &place, &live, |_| Ok(()))
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Rank 0 alone receives cells.
struct Nowhere;

impl CellSink for Nowhere {
    fn cell_done(&mut self, _cell: &CellResult) -> Result<(), String> {
        Ok(())
    }
}
