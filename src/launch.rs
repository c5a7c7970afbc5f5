//! `iomatrix run ... --hosts FILE|a,b,c`: this process starts `mpirun` with
//! its own binary as the ranks (one client per slot), says the exact command,
//! and exits with mpirun's code, or 3 where mpirun ended abnormally (a rank
//! killed, a host cut off) and the run it started is stored failed: clients
//! failed, whatever launched them. It runs before MPI is initialised: an MPI
//! process that starts mpirun is a nested launch, which Open MPI refuses.
//! The ranks get the same command line, `--hosts` included (so the stored
//! command line reruns the same way); under mpirun they ignore it.

use crate::cli::Cli;
use crate::harness::args::command_text;
use clap::CommandFactory;
use iomatrix_core::UsageError;
use std::path::Path;
use std::process::{Command, ExitCode};

/// Where the ranks go and how many: `--hostfile FILE` or `--host a,b,c`.
#[derive(Debug, PartialEq)]
pub struct HostList {
    pub mpirun_args: Vec<String>,
    pub slots: usize,
}

/// What this process is, decided from its command line before MPI is touched.
pub enum Start {
    /// `run ... --hosts` outside mpirun: mpirun was started (or refused) here.
    Launched(anyhow::Result<ExitCode>),
    /// A run (`run`, or the `iozone`, `bonnie` and `fio` front ends): under a
    /// launcher it joins the MPI job.
    Run,
    /// Any other command (`show`, `report`, `runs`, `compare`, ...), or a
    /// command line clap will refuse: it never initialises MPI. Under a
    /// launcher of many tasks only the first does it (`quiet` for the others).
    Other { quiet: bool },
}

/// Reads the command line once to say what this process is.
pub fn start() -> Start {
    let launch = iomatrix_coord::Launch::from_env();
    let Ok(matches) = Cli::command().try_get_matches_from(std::env::args_os()) else {
        return Start::Other { quiet: launch.is_some_and(|l| !l.is_first()) };
    };
    match matches.subcommand() {
        Some(("run", run)) => {
            if launch.is_none() {
                if let Some((_, suite)) = run.subcommand() {
                    if let Some(hosts) = suite.try_get_one::<String>("hosts").ok().flatten() {
                        let clients = suite.try_get_one::<usize>("clients").ok().flatten().copied().unwrap_or(1);
                        return Start::Launched(launch_mpirun(hosts, clients));
                    }
                }
            }
            Start::Run
        }
        // A suite's legacy front end (`iomatrix iozone`) runs as `run` does.
        Some((front, _)) if crate::suites::front_ends().contains(&front) => Start::Run,
        _ => Start::Other { quiet: launch.is_some_and(|l| !l.is_first()) },
    }
}

fn launch_mpirun(hosts: &str, clients: usize) -> anyhow::Result<ExitCode> {
    // The hostfile is read (bounded) first: a wrong file is named whatever the build.
    let list = parse_hosts(hosts)?;
    if !cfg!(feature = "mpi") {
        return Err(UsageError::new(
            "--hosts starts mpirun with this iomatrix as the ranks, but it was built without MPI; rebuild with \
             `cargo build --release --features mpi` (Debian: apt-get install libopenmpi-dev openmpi-bin clang \
             libclang-dev)",
        )
        .into());
    }
    if clients > 1 {
        return Err(UsageError::new(format!(
            "--clients {clients} with --hosts: each MPI rank is one client, one per slot of a host; leave --clients \
             out and give a host more slots (`HOST slots=N` in the hostfile, or HOST:N in the list)"
        ))
        .into());
    }
    let exe = std::env::current_exe().map_err(|e| anyhow::anyhow!("cannot find this iomatrix's own path: {e}"))?;
    let mut words: Vec<String> = vec!["mpirun".into()];
    words.extend(list.mpirun_args);
    words.extend(["-np".into(), list.slots.to_string()]);
    // Remote ranks get only the environment named with -x: the database, the SMB password, labels,
    // and of the lab's own IOMATRIX_LAB_* lines its state folder (where the lab's server facts and
    // each host's link are read).
    let mut names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| {
            k.starts_with("IOMATRIX_")
                && (!k.starts_with("IOMATRIX_LAB_") || k == "IOMATRIX_LAB_STATE")
                && k != iomatrix_coord::LAUNCH_ID
        })
        .collect();
    names.sort();
    for name in names {
        words.extend(["-x".into(), name]);
    }
    // Rank 0 records this launch in its run's environment: how the run is found afterwards. A
    // launch id given to this process (a study's step) is kept, so whoever started it finds the run.
    let launch =
        std::env::var(iomatrix_coord::LAUNCH_ID).ok().filter(|id| !id.trim().is_empty()).unwrap_or_else(|| {
            format!(
                "{:x}-{:x}",
                std::process::id(),
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
            )
        });
    words.extend(["-x".into(), iomatrix_coord::LAUNCH_ID.into()]);
    words.push(exe.display().to_string());
    words.extend(std::env::args().skip(1));
    eprintln!("iomatrix: starting {} ranks: {}", list.slots, command_text(&words));
    let mut mpirun = Command::new(&words[0]);
    mpirun.args(&words[1..]).env(iomatrix_coord::LAUNCH_ID, &launch);
    let status =
        match crate::harness::launcher_child::run(mpirun) {
            Ok(status) => status,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(UsageError::new(
                "--hosts starts mpirun, which is not on PATH: install Open MPI (Debian: apt-get install openmpi-bin)",
            )
            .into()),
            Err(e) => return Err(anyhow::anyhow!("cannot start mpirun: {e}")),
        };
    let code = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
        // Stopped by a signal to this launcher: its code, as a run on one host gives (mpirun says 1).
        _ if crate::harness::signals::first_number().is_some() => crate::harness::signals::exit_code(),
        (Some(code), _) => code.clamp(0, 255) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => crate::exit::FAILED,
    };
    Ok(ExitCode::from(after_mpirun(code, &launch)))
}

/// The launcher's exit code once mpirun has ended with `code`. Codes iomatrix itself gives (0 to 6)
/// and signals' are passed on: rank 0 chose them. Any other code is mpirun's own word that a
/// process of the job died or a host was lost (137 a rank killed, 255 a daemon cut off): where
/// the run this launch started is stored failed, those were its clients, so exit 3, as a run on
/// one host whose clients failed; where it is not stored as ended (rank 0 itself was killed),
/// mpirun's code stands, with a line saying what is known.
fn after_mpirun(code: u8, launch: &str) -> u8 {
    if code <= crate::exit::NOT_CHECKED || matches!(code, 129 | 130 | 143) {
        return code;
    }
    let Some(run) = launched_run(launch) else {
        eprintln!("iomatrix: mpirun ended with {code}, and no run of this launch is in the results database");
        return code;
    };
    match run.status {
        iomatrix_store::RunStatus::Failed => {
            eprintln!(
                "iomatrix: mpirun ended with {code} (a rank died or a host was cut off); run #{} is stored failed: {}",
                run.id,
                run.error.as_deref().unwrap_or("no reason stored")
            );
            crate::exit::CLIENTS_LOST
        }
        status => {
            eprintln!(
                "iomatrix: mpirun ended with {code}; run #{} is stored {} (rank 0 itself ended before it could \
                 store the run's end: `iomatrix runs` on its host marks it incomplete)",
                run.id,
                status.as_str()
            );
            code
        }
    }
}

/// The run rank 0 stored for `launch`, read from the database the command line names.
fn launched_run(launch: &str) -> Option<iomatrix_store::RunSummary> {
    use clap::Parser;
    let cli = Cli::try_parse().ok()?;
    let db = crate::db_path::resolve(cli.db.as_deref()).ok()?;
    let store = iomatrix_store::Store::open(&db).ok()?;
    store.find_run_by_environment("launch_id", launch).ok().flatten()
}

/// `--hosts`: a hostfile (a line per host: `HOST [slots=N]`, `#` comments)
/// if such a file exists, else host names separated by commas (`HOST[:N]`).
pub fn parse_hosts(hosts: &str) -> Result<HostList, UsageError> {
    let hosts = hosts.trim();
    let usage = |why: String| {
        UsageError::new(format!(
            "--hosts {hosts}: {why}; give a hostfile (a line per host: HOST [slots=N]) or host names separated by \
             commas (HOST[:N],...)"
        ))
    };
    if hosts.is_empty() {
        return Err(usage("no host given".into()));
    }
    let path = Path::new(hosts);
    // Anything by that name but a folder (a host's name may be a folder's too) is the hostfile,
    // read by the one bounded reader: a device, FIFO or huge file is refused, not read.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_dir()) {
        let text = iomatrix_guard::read_text(path, &iomatrix_guard::Input::HOSTFILE)
            .map_err(|e| usage(format!("cannot be read: {e}")))?;
        let mut slots = 0;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let mut words = line.split_whitespace();
            if words.next().is_none() {
                continue;
            }
            let mut here = 1;
            for w in words {
                if let Some(n) = w.strip_prefix("slots=") {
                    here = n.parse().ok().filter(|n| *n > 0).ok_or_else(|| usage(format!("'{line}': bad slots")))?;
                }
            }
            slots += here;
        }
        if slots == 0 {
            return Err(usage("the file names no host".into()));
        }
        return Ok(HostList { mpirun_args: vec!["--hostfile".into(), hosts.into()], slots });
    }
    if hosts.contains('/') {
        return Err(usage("no such file".into()));
    }
    let mut slots = 0;
    for entry in hosts.split(',') {
        let (name, n) = entry.split_once(':').unwrap_or((entry, "1"));
        let n: usize = n.parse().ok().filter(|n| *n > 0).ok_or_else(|| usage(format!("'{entry}': bad slot count")))?;
        if name.trim().is_empty() || name.contains(char::is_whitespace) {
            return Err(usage(format!("'{entry}' is not a host name")));
        }
        slots += n;
    }
    Ok(HostList { mpirun_args: vec!["--host".into(), hosts.into()], slots })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_gives_one_slot_per_host_unless_told() {
        let l = parse_hosts("a,b:2,c").unwrap();
        assert_eq!(l, HostList { mpirun_args: vec!["--host".into(), "a,b:2,c".into()], slots: 4 });
        assert!(parse_hosts("a,,b").unwrap_err().to_string().contains("not a host name"));
        assert!(parse_hosts("a:0").unwrap_err().to_string().contains("bad slot count"));
        assert!(parse_hosts("/no/such/hostfile").unwrap_err().to_string().contains("no such file"));
    }

    #[test]
    fn a_hostfile_counts_its_slots() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts");
        std::fs::write(&file, "# lab\n10.0.0.1 slots=2\n\n10.0.0.2\n").unwrap();
        let l = parse_hosts(file.to_str().unwrap()).unwrap();
        assert_eq!(l.slots, 3);
        assert_eq!(l.mpirun_args[0], "--hostfile");
        std::fs::write(&file, "# nothing\n").unwrap();
        assert!(parse_hosts(file.to_str().unwrap()).unwrap_err().to_string().contains("names no host"));
        // The one bounded reader: what is not a hostfile is refused, not read.
        assert!(parse_hosts("/dev/zero").unwrap_err().to_string().contains("/dev/zero is a device"));
        std::fs::write(&file, b"node1\0\0").unwrap();
        assert!(parse_hosts(file.to_str().unwrap()).unwrap_err().to_string().contains("binary data"));
    }
}
