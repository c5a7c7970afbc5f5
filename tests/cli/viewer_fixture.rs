//! What the viewer's tests share (viewer_browser.rs, viewer_safety.rs): a results database made
//! once by real runs of every suite, `iomatrix serve` started over a database and stopped by its
//! PID, and the CLI command a page names in its `code#cli` run to compare with the page.

use crate::helpers::{assert_success, skip, Mount, Sandbox, BUSY_VAR};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The runs of the shared database, each `(what, arguments)` with MNT for a tmpfs, TREE for a
/// small tree in it and FIO for fio's JSON: every suite, tiny; iozone four times with one plan
/// (labels sys=a twice, sys=b, sys=c) so three runs can be compared and one plan has a history.
const FIXTURE_RUNS: [(&str, &str); 11] = [
    ("iozone a", "run iozone --target MNT --files 64k --records 4k,64k --tests write,read --label sys=a"),
    ("iozone a again", "run iozone --target MNT --files 64k --records 4k,64k --tests write,read --label sys=a"),
    ("iozone b", "run iozone --target MNT --files 64k --records 4k,64k --tests write,read --label sys=b"),
    ("iozone c", "run iozone --target MNT --files 64k --records 4k,64k --tests write,read --label sys=c"),
    (
        "access",
        "run access --target MNT --bs 4k,64k --read 100 --random 100 --qd 1 --file-size 1m --duration 100ms --label sys=a",
    ),
    ("bonnie", "run bonnie --target MNT --size 2m --ram 1m --files 1 --fast --label sys=a"),
    (
        "fileserver",
        "run fileserver --target MNT --connections 2 --files-per-connection 5 --sizes 4k,16k --label sys=a",
    ),
    ("backup", "run backup --target TREE --warm --label sys=a"),
    (
        "personality",
        "run personality varmail --target MNT --scale small --connections 2 --duration 200ms --label sys=a",
    ),
    ("metadata", "run metadata --target MNT --files-only --items 20 --label sys=a"),
    ("fio import", "import FIO --label sys=fio"),
];

/// After [`FIXTURE_RUNS`]: one tiny IOzone run per system of a 16-system compare, each labelled
/// with a long name (the compare page's charts must keep 16 such labels apart).
pub const SYSTEMS: usize = 16;
const SYSTEM_RUN: &str =
    "run iozone --target MNT --files 64k --records 4k --tests write,read --label sys=storage-system-";

/// The shared database: made once per test binary, never written after (tests that run more
/// copy it first: [`Fixture::copy_into`]).
pub struct Fixture {
    /// The folder holding results.sqlite; removed when the test binary ends.
    pub dir: PathBuf,
}

static FIXTURE: OnceLock<Result<Fixture, String>> = OnceLock::new();
static FIXTURE_DIR: OnceLock<PathBuf> = OnceLock::new();

impl Fixture {
    /// The shared database, made by the first test that asks (the others wait for it); `None`
    /// (a skip, with the reason) when it could not be made here.
    pub fn get() -> Option<&'static Fixture> {
        match FIXTURE.get_or_init(Fixture::make) {
            Ok(fixture) => Some(fixture),
            Err(reason) => {
                skip(reason);
                None
            }
        }
    }

    pub fn db(&self) -> PathBuf {
        self.dir.join("results.sqlite")
    }

    /// A copy of the database at `dir/results.sqlite`, for a test that writes (a live run) or
    /// damages it.
    pub fn copy_into(&self, dir: &Path) -> PathBuf {
        let copy = dir.join("results.sqlite");
        std::fs::copy(self.db(), &copy).unwrap();
        copy
    }

    fn make() -> Result<Fixture, String> {
        let sb = Sandbox::new();
        // A tmpfs for the runs' files where this test may mount one, else the sandbox's folder.
        let mount = Mount::try_virtual_fs("tmpfs", "size=64m").ok();
        let mnt = mount.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
        let tree = mnt.join("tree");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/one"), vec![7u8; 300_000]).unwrap();
        std::fs::write(tree.join("a/b/two"), vec![9u8; 70_000]).unwrap();
        let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/import/tests/data/fio-3.33-randrw-libaio.json");
        let begun = Instant::now();
        let systems: Vec<(String, String)> =
            (1..=SYSTEMS).map(|n| (format!("system {n}"), format!("{SYSTEM_RUN}{n:02}"))).collect();
        let every = FIXTURE_RUNS.iter().map(|(w, l)| ((*w).to_string(), (*l).to_string())).chain(systems);
        for (what, line) in every {
            let filled = line
                .replace("MNT", mnt.to_str().unwrap())
                .replace("TREE", tree.to_str().unwrap())
                .replace("FIO", fio.to_str().unwrap());
            let out = sb.run(&filled.split(' ').collect::<Vec<_>>());
            if !out.status.success() {
                return Err(format!(
                    "the viewer's fixture run '{what}' failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        eprintln!(
            "the viewer's fixture database: {} runs in {:.1} s",
            FIXTURE_RUNS.len() + SYSTEMS,
            begun.elapsed().as_secs_f64()
        );
        drop(mount);
        // The sandbox's folder outlives this function: it is removed when the test binary ends.
        let dir = sb.dir.keep();
        FIXTURE_DIR.set(dir.clone()).unwrap();
        iomatrix_testkit::at_end(|| {
            if let Some(dir) = FIXTURE_DIR.get() {
                let _ = std::fs::remove_dir_all(dir);
            }
        });
        Ok(Fixture { dir })
    }
}

/// `iomatrix serve` as a child, stopped on drop (SIGTERM by its PID, then SIGKILL past 10 s),
/// also when the test fails.
pub struct Serve {
    child: Option<Child>,
    /// The address it printed on its first line, with `?token=...` when it listens elsewhere.
    pub url: String,
}

impl Serve {
    /// `iomatrix serve --db DB ARGS`; `None` (a skip) where this build has no `serve` command.
    pub fn start(db: &Path, args: &[&str]) -> Option<Serve> {
        if !serve_is_built() {
            skip("this build has no `iomatrix serve` (issue 53: the viewer, crates/viewer)");
            return None;
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_iomatrix"));
        cmd.args(["serve", "--db"]).arg(db).args(args).env(BUSY_VAR, "off").env_remove("IOMATRIX_DB");
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start iomatrix serve");
        let stdout = child.stdout.take().unwrap();
        let mut serve = Serve { child: Some(child), url: String::new() };
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut first = String::new();
            let _ = BufReader::new(stdout).read_line(&mut first);
            let _ = tx.send(first);
        });
        let first = rx.recv_timeout(Duration::from_secs(30)).expect("iomatrix serve printed no first line within 30 s");
        let url = first
            .trim_end()
            .strip_prefix("iomatrix serve: ")
            .unwrap_or_else(|| panic!("serve's first line is not 'iomatrix serve: http://127.0.0.1:PORT/': {first:?}"));
        assert!(url.starts_with("http://") && url.contains('/'), "serve's address: {url:?}");
        serve.url = url.to_string();
        Some(serve)
    }

    /// The server's address without its path and token: `http://HOST:PORT`.
    pub fn base(&self) -> String {
        let rest = self.url.strip_prefix("http://").unwrap();
        format!("http://{}", rest.split('/').next().unwrap())
    }

    /// `host:port`, for a plain TCP connection.
    pub fn host_port(&self) -> String {
        self.base().strip_prefix("http://").unwrap().to_string()
    }

    /// The token printed on the first line (`?token=...`), if any.
    pub fn token(&self) -> Option<String> {
        self.url.split_once("token=").map(|(_, t)| t.split('&').next().unwrap().to_string())
    }

    /// `path` on this server (with the token, when it has one).
    pub fn page(&self, path: &str) -> String {
        match self.token() {
            Some(token) => format!("{}{path}{}token={token}", self.base(), if path.contains('?') { '&' } else { '?' }),
            None => format!("{}{path}", self.base()),
        }
    }

    /// Still running (not crashed)?
    pub fn alive(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| c.try_wait().unwrap().is_none())
    }

    /// SIGTERM, then its exit status (SIGKILL past 10 s, which fails the caller's check).
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("a running server");
        let pid = child.id() as i32;
        // SAFETY: kill(2) on the child this test started; no memory involved.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                return child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Serve {
    /// SIGTERM ends it by itself within 10 s: exit 0, or 143 (128 + SIGTERM, as a shell reports
    /// a process that SIGTERM ended), not the SIGKILL of [`Serve::stop`]'s deadline.
    pub fn assert_stops_on_sigterm(&mut self) {
        let status = self.stop();
        assert!(matches!(status.code(), Some(0 | 143)), "serve did not end cleanly on SIGTERM: {status:?}");
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.stop();
        }
    }
}

/// Does this build have `iomatrix serve`? (clap refuses an unknown subcommand with exit 2.)
fn serve_is_built() -> bool {
    static BUILT: OnceLock<bool> = OnceLock::new();
    *BUILT.get_or_init(|| {
        Command::new(env!("CARGO_BIN_EXE_iomatrix"))
            .args(["serve", "--help"])
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// A command line as a shell splits it: words by spaces; '...' and "..." quote; \ escapes.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => word.get_or_insert_with(String::new).extend(chars.next()),
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "an unclosed quote in the command line {line:?}");
    words.extend(word);
    words
}

/// Runs the command line a page shows in `code#cli` (`iomatrix --db DB ...`) with this build's
/// binary, as a user would paste it: its stdout. It must succeed.
pub fn run_cli_line(line: &str) -> String {
    let words = shell_words(line.trim());
    assert_eq!(words.first().map(String::as_str), Some("iomatrix"), "code#cli is not an iomatrix command: {line:?}");
    assert!(words.iter().any(|w| w == "--db" || w.starts_with("--db=")), "code#cli names no --db: {line:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_iomatrix"))
        .args(&words[1..])
        .env(BUSY_VAR, "off")
        .env_remove("IOMATRIX_DB")
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .expect("run the page's command line");
    assert_success(&out);
    String::from_utf8(out.stdout).expect("the CLI prints UTF-8")
}

/// `page` (a `pre`'s text) is `cli` (the command's stdout) but for blank lines at either end
/// (HTML drops a `pre`'s first newline); else the first line that differs, both texts in full.
pub fn assert_same_text(what: &str, page: &str, cli: &str) {
    let (page, cli) = (page.trim_matches('\n'), cli.trim_matches('\n'));
    if page == cli {
        return;
    }
    let line = page
        .lines()
        .zip(cli.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(page.lines().count().min(cli.lines().count()));
    panic!(
        "{what}: the page's text differs from the CLI's at line {}:\n page: {:?}\n  cli: {:?}\n--- page:\n{page}\n--- cli:\n{cli}",
        line + 1,
        page.lines().nth(line),
        cli.lines().nth(line)
    );
}
