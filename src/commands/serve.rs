//! `iomatrix serve`: the results database in a browser (crates/viewer). Every page's text is
//! what a read-only command prints in a terminal: the command is parsed from the words the page
//! shows and run by the same code, its output captured ([`crate::out::captured`]). The database is
//! opened for reading only, by every command of this process ([`Store::read_only_from_now`]).

use crate::cli::{Cli, Command};
use clap::{Args, Parser};
use iomatrix_core::UsageError;
use iomatrix_store::Store;
use iomatrix_viewer::{Answer, Answers, Config, Snapshot};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// `iomatrix serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The port on 127.0.0.1 [default: a free one, printed]
    #[arg(long, value_name = "PORT", conflicts_with = "listen")]
    pub port: Option<u16>,

    /// Listen on ADDR (IP:PORT, or an IP and a free port) so that other hosts may read: every
    /// request must then carry the token the viewer prints once (or --token-file's)
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// With --listen: the token, read from the first line of this file (16 to 256 letters,
    /// digits, '-' or '_'), instead of one made and printed
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub token_file: Option<PathBuf>,
}

pub fn run(args: ServeArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let address = address(&args)?;
    let token = match (&args.listen, &args.token_file) {
        (None, _) => None,
        (Some(_), Some(file)) => Some(token_from(file)?),
        (Some(_), None) => Some(fresh_token()?),
    };
    Store::read_only_from_now();
    if !db.is_file() {
        return Err(UsageError::new(format!(
            "no results database at {}: run a suite first (`iomatrix run iozone`), or give one with --db PATH",
            db.display()
        ))
        .into());
    }
    // Read once before serving: a file that is no database is said now, not on the first page.
    Store::open(db)?.load_run_summary(1)?;
    let stop = crate::harness::signals::run_flag()?;
    let answers = Arc::new(ServeAnswers { db: db.to_path_buf(), seen: Default::default() });
    iomatrix_viewer::serve(Config { address, token, stop }, answers, |listening| {
        let _ = writeln!(std::io::stdout(), "iomatrix serve: {}", listening.url);
        let _ = std::io::stdout().flush();
        eprintln!("iomatrix: serving {} for reading only (it is never written); Ctrl-C stops", db.display());
    })?;
    // Stopped by a signal, as every command says it: 130 for Ctrl-C, 143 for SIGTERM.
    Ok(ExitCode::from(crate::harness::signals::exit_code()))
}

fn address(args: &ServeArgs) -> Result<SocketAddr, UsageError> {
    let Some(listen) = &args.listen else {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), args.port.unwrap_or(0)));
    };
    if let Ok(ip) = listen.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 0));
    }
    listen.parse::<SocketAddr>().map_err(|_| {
        UsageError::new(format!(
            "--listen {listen}: give an IP address with or without a port, such as 0.0.0.0:8080, 192.0.2.7 or \
             [::]:8080"
        ))
    })
}

/// The first line of `file`, read bounded.
fn token_from(file: &Path) -> anyhow::Result<String> {
    const TOKEN_FILE: iomatrix_guard::read::Input = iomatrix_guard::read::Input {
        what: "token file",
        max_bytes: 4096,
        max_line: Some(4096),
        bound: "bound of a token file",
        raise: None,
        stream: None,
    };
    let text = iomatrix_guard::read::read_text(file, &TOKEN_FILE)
        .map_err(|e| UsageError::new(format!("--token-file {}: {e}", file.display())))?;
    let token = text.lines().next().unwrap_or_default().trim().to_string();
    let fine =
        (16..=256).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !fine {
        return Err(UsageError::new(format!(
            "--token-file {}: its first line must be 16 to 256 letters, digits, '-' or '_'",
            file.display()
        ))
        .into());
    }
    Ok(token)
}

/// 32 random bytes from the kernel, in hex.
fn fresh_token() -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| anyhow::anyhow!("cannot make a token (/dev/urandom: {e}); give one with --token-file"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The read-only commands, run as the terminal runs them.
struct ServeAnswers {
    db: PathBuf,
    /// The running runs' last snapshots, for the live pages' refreshes (at most 64).
    seen: std::sync::Mutex<std::collections::HashMap<i64, super::watch::WatchSnapshot>>,
}

impl ServeAnswers {
    fn argv(&self, args: &[String]) -> Vec<String> {
        let mut argv = vec!["iomatrix".to_string(), "--db".to_string(), self.db.display().to_string()];
        argv.extend(args.iter().cloned());
        argv
    }
}

/// A command refused or failed, as an answer.
fn failed(err: &anyhow::Error, stdout: String) -> Answer {
    Answer { stdout, error: Some(format!("{err:#}")), exit: crate::exit::code_for(err) }
}

/// Only commands that read: a page can never start a run, import or touch a file.
fn reads_only(command: &Command) -> bool {
    match command {
        Command::Runs(_) | Command::Show { .. } | Command::Compare(_) | Command::Sweep(_) | Command::History(_) => true,
        // Following would hold the page's thread until the run ends.
        Command::Watch(args) => args.once,
        _ => false,
    }
}

impl Answers for ServeAnswers {
    fn command(&self, args: &[String]) -> Answer {
        let cli = match Cli::try_parse_from(self.argv(args)) {
            Ok(cli) => cli,
            Err(e) => return Answer { stdout: String::new(), error: Some(e.to_string()), exit: 2 },
        };
        if !reads_only(&cli.command) {
            let err = anyhow::Error::from(UsageError::new("the viewer runs only commands that read the database"));
            return failed(&err, String::new());
        }
        let (result, stdout) = crate::out::captured(|| crate::app::dispatch_cli(cli, &crate::harness::Ranks::alone()));
        match result {
            Ok(code) if code == ExitCode::SUCCESS => Answer::printed(stdout),
            Ok(_) => Answer { stdout, error: None, exit: 1 },
            Err(err) => failed(&err, stdout),
        }
    }

    fn report(&self, args: &[String], extension: &str) -> Result<Vec<u8>, Answer> {
        let mut words = vec!["report".to_string()];
        words.extend(args.iter().cloned());
        words.extend(["-o".to_string(), format!("report.{extension}")]);
        let argv = self.argv(&words);
        let cli = Cli::try_parse_from(&argv).map_err(|e| Answer {
            stdout: String::new(),
            error: Some(e.to_string()),
            exit: 2,
        })?;
        let Command::Report(report) = cli.command else {
            return Err(failed(&anyhow::anyhow!("not a report"), String::new()));
        };
        // The report names the command that writes it in a terminal; nothing is written here.
        let made_by = argv.iter().map(|w| shell_words::quote(w).into_owned()).collect::<Vec<_>>().join(" ");
        let made = super::report::kind_of(&report)
            .map_err(anyhow::Error::from)
            .and_then(|kind| super::report::render(&report, &kind, &self.db, made_by));
        made.map(|(bytes, _, _)| bytes).map_err(|err| failed(&err, String::new()))
    }

    fn charted(&self, args: &[String]) -> Option<(String, String)> {
        let cli = Cli::try_parse_from(self.argv(args)).ok()?;
        let Command::History(history) = cli.command else { return None };
        if history.json {
            return None;
        }
        let store = Store::open(&self.db).ok()?;
        let (text, drawn) = super::history::history_output(&store, history.run, history.figure.as_deref()).ok()?;
        // The bytes `history` prints: through the same printer, which escapes control characters.
        let (printed, text) = crate::out::captured(|| crate::out::print(&text));
        printed.ok()?;
        Some((text, iomatrix_report::history_svg(&drawn)))
    }

    fn live(&self, run: i64) -> Result<Snapshot, Answer> {
        let store = Store::open_read_only(&self.db).map_err(|e| failed(&e.into(), String::new()))?;
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        // A run read a moment ago is refreshed as `watch` refreshes it: its row and live state,
        // the whole run only when a cell came; the run watched pays for no more than that.
        let now = match seen.get(&run) {
            Some(before) => before.refresh(&store, &self.db),
            None => super::watch::watch_snapshot(&store, &self.db, run),
        }
        .map_err(|e| failed(&e, String::new()))?;
        if seen.len() >= 64 {
            seen.clear();
        }
        if now.ended {
            seen.remove(&run);
        } else {
            seen.insert(run, now.clone());
        }
        Ok(Snapshot { state: now.status.clone(), line: now.live_line.clone(), cells: now.text(), ended: now.ended })
    }

    fn db_path(&self) -> &Path {
        &self.db
    }
}
