//! The suite table: every suite iomatrix runs, one line each. Each suite
//! lives in its own folder (its flags, its plan, its [`Suite`] impl, its
//! tables, its legacy front end where it has one) over its own crate; the
//! harness runs them all alike. A line of the table, `folder::Type`,
//! declares the folder's module and gives `iomatrix run NAME` (the type's
//! name as a subcommand), how a stored run of it is shown, and how an MPI
//! rank follows rank 0's run of it.

use crate::harness::{self, Ranks, Suite};
use crate::render::clients::ClientColumns;
use iomatrix_store::StoredRun;
use std::path::Path;
use std::process::ExitCode;

macro_rules! suite_table {
    ($($folder:ident :: $variant:ident),* $(,)?) => {
        $(pub mod $folder;)*

        /// `iomatrix run SUITE`: one subcommand per suite.
        #[derive(clap::Subcommand)]
        // Parsed once per process: the size difference between variants costs nothing.
        #[allow(clippy::large_enum_variant)]
        pub enum RunCommand {
            $($variant(<$folder::$variant as Suite>::Args),)*
        }

        impl RunCommand {
            /// Validates the flags into a plan and runs it through the harness.
            pub fn run(self, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
                match self {
                    $(RunCommand::$variant(args) => {
                        let mut prepared = <$folder::$variant as Suite>::prepare(args, ranks.mpi_size())?;
                        prepared.suite.check_outputs(db)?;
                        harness::run(prepared, db, ranks)
                    })*
                }
            }
        }

        /// A stored run's own tables, by its suite's name (none for a suite this build does not know).
        pub fn tables(run: &StoredRun) -> String {
            let suite = run.summary.suite.as_str();
            $(if suite == <$folder::$variant as Suite>::NAME {
                return <$folder::$variant as Suite>::tables(run);
            })*
            String::new()
        }

        /// An MPI rank other than 0: follows rank 0's run as one of its clients.
        pub fn follow(ranks: &Ranks) -> anyhow::Result<ExitCode> {
            let Some(harness::ranks::Shared::Job(job)) = ranks.receive()? else {
                // No run (rank 0 said why), or this rank was turned away.
                return Ok(ExitCode::SUCCESS);
            };
            $(if job.suite == <$folder::$variant as Suite>::NAME {
                return harness::follow::<$folder::$variant>(*job, ranks);
            })*
            anyhow::bail!("rank 0 runs the suite '{}', which this iomatrix does not have", job.suite)
        }
    };
}

suite_table! {
    iozone::Iozone,
    access::Access,
    bonnie::Bonnie,
    backup::Backup,
    fileserver::Fileserver,
    personality::Personality,
}

/// A stored run's clients as [`crate::render::clients`] reads them: the run
/// (the file-server's per-connection figures moved to where the other suites
/// keep theirs) and its suite's columns; None for a suite this build does not know.
pub fn client_view(run: &StoredRun) -> Option<(std::borrow::Cow<'_, StoredRun>, &'static ClientColumns)> {
    use std::borrow::Cow;
    let suite = run.summary.suite.as_str();
    Some(match suite {
        _ if suite == <iozone::Iozone as Suite>::NAME => (Cow::Borrowed(run), &iozone::render::CLIENT_COLUMNS),
        _ if suite == <access::Access as Suite>::NAME => (Cow::Borrowed(run), &access::render::CLIENT_COLUMNS),
        _ if suite == <bonnie::Bonnie as Suite>::NAME => (Cow::Borrowed(run), &bonnie::render::CLIENT_COLUMNS),
        _ if suite == <backup::Backup as Suite>::NAME => (Cow::Borrowed(run), &backup::render::CLIENT_COLUMNS),
        _ if suite == <fileserver::Fileserver as Suite>::NAME || suite == <personality::Personality as Suite>::NAME => {
            (Cow::Owned(fileserver::render::by_client(run)), &fileserver::render::CLIENT_COLUMNS)
        }
        _ => return None,
    })
}

/// A run's clients by host, for the report; None unless they ran on two hosts or more.
pub fn host_figures(run: &StoredRun) -> Option<iomatrix_report::document::HostFigures> {
    let (view, columns) = client_view(run)?;
    crate::render::clients::host_figures(&view, columns)
}
