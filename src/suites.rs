//! The suite table: every suite iomatrix runs, one line each. Each suite
//! lives in its own crate, `crates/NAME` (its flags, its plan, its [`Suite`]
//! impl, its tables, its legacy front end where it has one, all in its `cli`
//! module); the harness (crates/harness) runs them all alike. A line of the
//! table, `Type: iomatrix_NAME`, names the suite's crate and the type its
//! `cli` module holds, and gives `iomatrix run NAME` (the type's
//! name as a subcommand; `+ front` adds its legacy front end, the module's
//! `front::FRONT_END`: `iomatrix NAME` with the tool's own flags), how a
//! stored run of it is shown, its clients
//! table and per-host figures, its importers of other tools' results (the
//! crate's `import` module), the shape analysis and the reports take its
//! cells in, and how an MPI rank follows rank 0's run of it. The rest of
//! the binary knows a suite only through these functions: it never names one.

use crate::harness::{self, FrontEnd, Ranks, Suite};
use iomatrix_analysis::SuiteShape;
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_store::StoredRun;
use std::borrow::Cow;
use std::path::Path;
use std::process::ExitCode;

macro_rules! suite_table {
    ($($variant:ident : $krate:ident $(+ $front:ident)?),* $(,)?) => {

        /// `iomatrix run SUITE`: one subcommand per suite.
        #[derive(clap::Subcommand)]
        // Parsed once per process: the size difference between variants costs nothing.
        #[allow(clippy::large_enum_variant)]
        pub enum RunCommand {
            $($variant(<$krate::cli::$variant as Suite>::Args),)*
        }

        impl RunCommand {
            /// Validates the flags into a plan and runs it through the harness.
            pub fn run(self, db: &Path, ranks: &Ranks) -> anyhow::Result<ExitCode> {
                match self {
                    $(RunCommand::$variant(args) => {
                        let prepared = <$krate::cli::$variant as Suite>::prepare(args, ranks.mpi_size(), db)?;
                        harness::run(prepared, db, ranks)
                    })*
                }
            }
        }

        /// A stored run's own tables, by its suite's name (none for a suite this build does not know).
        pub fn tables(run: &StoredRun) -> String {
            let suite = run.summary.suite.as_str();
            $(if suite == <$krate::cli::$variant as Suite>::NAME {
                return <$krate::cli::$variant as Suite>::tables(run);
            })*
            String::new()
        }

        /// Each suite's reader of its own stored records ([`Suite::stored_facts`]), for
        /// [`iomatrix_store::reader::register_suites`].
        pub fn readers() -> Vec<iomatrix_store::reader::SuiteReader> {
            vec![$(iomatrix_store::reader::SuiteReader {
                suite: <$krate::cli::$variant as Suite>::NAME,
                read: <$krate::cli::$variant as Suite>::stored_facts,
            },)*]
        }

        /// An MPI rank other than 0: follows rank 0's run as one of its clients.
        pub fn follow(ranks: &Ranks) -> anyhow::Result<ExitCode> {
            let Some(harness::ranks::Shared::Job(job)) = ranks.receive()? else {
                // No run (rank 0 said why), or this rank was turned away.
                return Ok(ExitCode::SUCCESS);
            };
            $(if job.suite == <$krate::cli::$variant as Suite>::NAME {
                return harness::follow::<$krate::cli::$variant>(*job, ranks);
            })*
            anyhow::bail!("rank 0 runs the suite '{}', which this iomatrix does not have", job.suite)
        }

        /// The suites' legacy front ends (`iomatrix iozone`, with IOzone's flags), in table order.
        fn fronts() -> Vec<FrontEnd> {
            vec![$($($krate::cli::$front::FRONT_END,)?)*]
        }

        /// Every importer of other tools' results: each suite's (its crate's `import::IMPORTERS`),
        /// and the published table, which may give figures of each suite (`import::PUBLISHED`).
        pub fn importers() -> iomatrix_import::Importers {
            iomatrix_import::Importers::new(
                [$($krate::import::IMPORTERS,)*].concat(),
                vec![$($krate::import::PUBLISHED,)*],
            )
        }

        /// How analysis and the reports take the cells of the suite named `suite`: matrices or
        /// scalar rows, how latencies are summarised ([`SuiteShape::PLAIN`] for a suite this
        /// build does not know).
        pub fn shape(suite: &str) -> SuiteShape {
            $(if suite == <$krate::cli::$variant as Suite>::NAME {
                return <$krate::cli::$variant as Suite>::SHAPE;
            })*
            SuiteShape::PLAIN
        }

        /// A stored run's clients as [`iomatrix_report::text::clients`] reads them: the run as its
        /// suite hands it ([`Suite::clients_of`]) and its suite's columns; None for a suite
        /// this build does not know.
        pub fn client_view(run: &StoredRun) -> Option<(Cow<'_, StoredRun>, &'static ClientColumns)> {
            let suite = run.summary.suite.as_str();
            $(if suite == <$krate::cli::$variant as Suite>::NAME {
                return Some((
                    <$krate::cli::$variant as Suite>::clients_of(run),
                    <$krate::cli::$variant as Suite>::CLIENT_COLUMNS,
                ));
            })*
            None
        }
    };
}

// `Type: crate`: the suite's crate, whose `cli` module holds `Type`, its `Suite` impl.
// `+ front`: that module's `front` is the suite's legacy front end (its `FRONT_END`).
suite_table! {
    Iozone: iomatrix_iozone + front,
    Access: iomatrix_access + front,
    Bonnie: iomatrix_bonnie + front,
    Backup: iomatrix_backup,
    Fileserver: iomatrix_fileserver,
    Personality: iomatrix_personality,
    Metadata: iomatrix_metadata + front,
}

/// The subcommands of the suites' legacy front ends (`iozone`, `bonnie`).
pub fn front_ends() -> Vec<&'static str> {
    fronts().into_iter().map(|f| f.name).collect()
}

/// `rerun` of a run made by the front end `front` (the first word of `args`): its flags moved to
/// `target`, and the folder to run in ([`FrontEnd::rerun`]). None: `front` is no suite's front end.
pub fn rerun_front(
    front: &str,
    args: &mut Vec<String>,
    target: Option<&str>,
    stored_target: Option<std::path::PathBuf>,
) -> Option<Option<std::path::PathBuf>> {
    let front = fronts().into_iter().find(|f| f.name == front)?;
    Some((front.rerun)(args, target, stored_target))
}

/// `iomatrix NAME <the tool's own flags>`: a suite's legacy front end, as a subcommand of
/// iomatrix's command line (flattened into it: `iomatrix iozone`, not `iomatrix front iozone`).
pub struct FrontCommand {
    front: FrontEnd,
    args: Vec<String>,
}

impl FrontCommand {
    /// Runs the tool's flags through the harness; `global_db` is the `--db` given before them.
    pub fn run(self, global_db: Option<&Path>, ranks: &Ranks) -> anyhow::Result<ExitCode> {
        (self.front.run)(&self.args, global_db, ranks)
    }

    fn command(front: &FrontEnd) -> clap::Command {
        clap::Command::new(front.name).about(front.about).disable_help_flag(true).arg(
            clap::Arg::new("args")
                .help(front.flags_help)
                .value_name(front.flags)
                .trailing_var_arg(true)
                .allow_hyphen_values(true)
                .action(clap::ArgAction::Append)
                .value_parser(clap::value_parser!(String)),
        )
    }
}

impl clap::FromArgMatches for FrontCommand {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let unknown = || clap::Error::raw(clap::error::ErrorKind::InvalidSubcommand, "no such front end\n");
        let (name, sub) = matches.subcommand().ok_or_else(unknown)?;
        let front = fronts().into_iter().find(|f| f.name == name).ok_or_else(unknown)?;
        let args = sub.get_many::<String>("args").map(|a| a.cloned().collect()).unwrap_or_default();
        Ok(FrontCommand { front, args })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = FrontCommand::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for FrontCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        fronts().iter().fold(cmd, |cmd, front| cmd.subcommand(FrontCommand::command(front)))
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        FrontCommand::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        fronts().iter().any(|f| f.name == name)
    }
}

/// The shape of runs of one suite (the first's: the callers checked that the others match).
pub fn shape_of(runs: &[StoredRun]) -> SuiteShape {
    runs.first().map_or(SuiteShape::PLAIN, |r| shape(&r.summary.suite))
}

/// A run's clients by host, for the report; None unless they ran on two hosts or more.
pub fn host_figures(run: &StoredRun) -> Option<iomatrix_report::document::HostFigures> {
    let (view, columns) = client_view(run)?;
    iomatrix_report::text::clients::host_figures(&view, columns)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_front_end_is_a_subcommand_that_runs() {
        let cli = crate::cli::Cli::command();
        assert!(!super::front_ends().is_empty());
        for front in super::front_ends() {
            assert!(cli.find_subcommand(front).is_some(), "`iomatrix {front}`");
            let mut args = vec![front.to_string()];
            assert!(super::rerun_front(front, &mut args, None, None).is_some(), "{front}");
        }
        assert!(super::rerun_front("show", &mut vec!["show".into()], None, None).is_none());
    }

    #[test]
    fn shapes_come_from_the_suites_and_an_unknown_suite_is_plain() {
        assert!(super::shape(<iomatrix_iozone::cli::Iozone as crate::harness::Suite>::NAME).matrix);
        assert_eq!(super::shape("no such suite"), iomatrix_analysis::SuiteShape::PLAIN);
    }
}
