//! `iomatrix bonnie <bonnie++'s flags>`: bonnie++'s command line, run by
//! iomatrix through the same harness as `run bonnie`. Under mpirun each rank
//! is one client, each in its own folder.
//!
//! As bonnie++ 2.00a: the per-char tests are bonnie++'s (one system call per
//! byte) unless `--per-char bonnie`; `-u`/`-g` switch user before the first
//! file ([`super::user`]); the tables are followed by bonnie++'s CSV line on
//! standard output, and `-q` leaves standard output to that line alone
//! (the tables go to standard error).

use super::suite::{Bonnie, FrontEnd};
use crate::{front, PerChar};
use iomatrix_harness::args::{rerun_in_folder_flag, unless_help, OwnRun};
use iomatrix_harness::clients::{ClientArgs, ClientPlan};
use iomatrix_harness::repeat::Repeat;
use iomatrix_harness::{Prepared, Ranks, Target};
use std::path::Path;
use std::process::ExitCode;

/// `iomatrix bonnie`: bonnie++'s own command line.
pub const FRONT_END: iomatrix_harness::FrontEnd = iomatrix_harness::FrontEnd {
    name: "bonnie",
    about: "Run the Bonnie suite with bonnie++'s own command line (`iomatrix bonnie -h` lists the flags)",
    flags: "BONNIE FLAGS",
    flags_help: "bonnie++'s flags, e.g. -d /mnt/x -s 1024",
    run,
    rerun: rerun_in_folder_flag,
};

#[allow(missing_docs)] // documented by the copies change
pub fn run(args: &[String], global_db: Option<&Path>, ranks: &Ranks) -> anyhow::Result<ExitCode> {
    let Some(mut inv) = unless_help(front::parse(args)?, |inv| inv.help, front::HELP)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut own = OwnRun::of(&inv.own, global_db)?;
    if let Some(machine) = &inv.machine {
        own.labels.retain(|(k, _)| k != "machine");
        own.labels.push(("machine".to_string(), machine.clone()));
    }
    if let (Some(v), false) = (&inv.v, inv.quiet) {
        eprintln!(
            "iomatrix: bonnie: -v {v} ignored: neither Tim Bray's Bonnie nor bonnie++ 2.00a has a -v, so there is \
             nothing to follow (the run is as without it)"
        );
    }
    inv.plan.content = own.content;
    let target = Target::parse_folder(&inv.dir.to_string_lossy())?;
    target.check_front_end_folder(
        &format!("bonnie: -d {}", inv.dir.display()),
        "give -d an existing folder to test in (bonnie++ makes its files there)",
    )?;
    let on_server = target.server().is_some();
    // bonnie++'s per-char tests, except on a server, where iomatrix's own client has no cache for
    // one-byte requests to land in: each would be a round trip (asked for by name, it is done).
    let style = inv.per_char.unwrap_or(if on_server { PerChar::Bonnie } else { PerChar::BonniePlus });
    inv.plan.set_per_char(style);
    if on_server && inv.per_char.is_none() && !inv.plan.skip_per_char && !inv.quiet {
        eprintln!(
            "iomatrix: per-char tests: Bonnie's (one request per negotiated buffer) on a server target; bonnie++'s \
             one request per byte would time network round trips (--per-char bonnie++ asks for it anyway)"
        );
    }
    super::args::check(&inv.plan, &target)?;
    let switch = super::user::resolve(
        inv.user.as_deref(),
        inv.group.as_deref(),
        &inv.dir,
        on_server,
        ranks.mpi_size().is_some(),
        inv.quiet,
    )?;
    let flags = ClientArgs { clients: inv.concurrency, ..ClientArgs::default() };
    // bonnie++'s -x: every test's samples.
    let repeat = Repeat { count: inv.plan.repeats, tolerance_pct: None, max: inv.plan.repeats };
    let run = own.options(target, false, ClientPlan::from_args(&flags, ranks.mpi_size())?, repeat);
    let suite = Bonnie::with_front_end(FrontEnd { quiet: inv.quiet, machine: inv.machine, switch });
    iomatrix_harness::run(Prepared { suite, plan: inv.plan, run }, &own.db, ranks)
}
