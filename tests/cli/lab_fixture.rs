//! The lab (`lab/up`, `lab/down`) as a test fixture: real servers, taken down
//! also when a test fails. A test that harms its lab (kills a server, cuts the
//! link) brings one up for itself ([`Lab::up`]); a test that only uses the
//! servers takes a lab this binary shares ([`Lab::shared`]), started once (one
//! per test running at the same time) and taken down when the binary exits. Where the lab cannot
//! come up (not root, a package missing), the test is a skip (see helpers).

use crate::helpers::skip;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, Once, PoisonError};

/// A lab for one test: its own, taken down (also on failure) by Drop, or a shared one, given back.
pub struct Lab {
    vars: HashMap<String, String>,
    /// `None`: the test's own lab. `Some`: a shared lab, back to its pool when the test ends.
    shared: Option<(Shared, Served)>,
}

/// The labs this binary shares, by what they serve. Each serves SMB and NFS (a test that needs one
/// of them does not mind the other); they differ in the link.
#[derive(Clone, Copy)]
pub enum Shared {
    /// `lab/up smb nfs`: no shaping.
    Unshaped,
    /// `lab/up --link 100mbit smb nfs`: for the tests of the shaped link's rates.
    Link100Mbit,
}

/// The folders a shared lab serves (share, export), each with what was in it right after `lab/up`.
type Served = Vec<(PathBuf, BTreeSet<OsString>)>;

/// The shared labs no test holds now, by kind: (what lab/up printed, the folders it serves).
static FREE_UNSHAPED: Mutex<Vec<(HashMap<String, String>, Served)>> = Mutex::new(Vec::new());
static FREE_LINK_100MBIT: Mutex<Vec<(HashMap<String, String>, Served)>> = Mutex::new(Vec::new());
/// Every shared lab started, held or free: all go down when the binary exits.
static STARTED: Mutex<Vec<HashMap<String, String>>> = Mutex::new(Vec::new());

impl Shared {
    fn free(self) -> MutexGuard<'static, Vec<(HashMap<String, String>, Served)>> {
        let pool = match self {
            Shared::Unshaped => &FREE_UNSHAPED,
            Shared::Link100Mbit => &FREE_LINK_100MBIT,
        };
        // A test that panicked while giving a lab back poisons the lock; the pool is still whole.
        pool.lock().unwrap_or_else(PoisonError::into_inner)
    }
    fn args(self) -> &'static [&'static str] {
        match self {
            Shared::Unshaped => &["smb", "nfs"],
            Shared::Link100Mbit => &["--link", "100mbit", "smb", "nfs"],
        }
    }
}

impl Lab {
    /// A lab of this test's own, `lab/up WHAT`: for a test that kills a server or cuts the link.
    pub fn up(what: &[&str]) -> Option<Lab> {
        start(what).map(|vars| Lab { vars, shared: None }).map_err(skip).ok()
    }

    /// A lab this binary shares, for a test that leaves the servers and the link as they are: a free
    /// one, or a new one when every shared lab is held (so as many are started as tests run at
    /// once, 2 with libtest's default on 2 cores). The test holds it alone, as its own lab, and
    /// finds the share and export folders as lab/up made them: what an earlier test left there is
    /// removed first. All go down when the binary exits (`take_shared_labs_down`).
    pub fn shared(which: Shared) -> Option<Lab> {
        let free = which.free().pop();
        let (vars, served) = match free {
            Some(lab) => lab,
            None => {
                let vars = start(which.args()).map_err(skip).ok()?;
                STARTED.lock().unwrap_or_else(PoisonError::into_inner).push(vars.clone());
                static AT_END: Once = Once::new();
                AT_END.call_once(|| iomatrix_testkit::at_end(take_shared_labs_down));
                let served = served_folders(&vars);
                (vars, served)
            }
        };
        for (folder, as_made) in &served {
            remove_all_but(folder, as_made);
        }
        Some(Lab { vars, shared: Some((which, served)) })
    }

    pub fn var(&self, key: &str) -> &str {
        self.vars.get(key).map(String::as_str).unwrap_or_else(|| panic!("lab/up printed no {key}: {:?}", self.vars))
    }
}

/// `lab/up WHAT`: the variables it printed, or why the lab cannot run here (a skip's reason).
fn start(what: &[&str]) -> Result<HashMap<String, String>, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let up = root.join("lab/up");
    if !up.is_file() || unsafe { libc::geteuid() } != 0 {
        return Err("the lab's tests need root and lab/up (Samba, nfs-ganesha, rpcbind in a namespace)".into());
    }
    let out = Command::new("timeout").arg("120").arg(&up).args(what).output().expect("run lab/up");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let vars: HashMap<String, String> = text
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("export ").split_once('='))
        .map(|(k, v)| (k.to_string(), unquote(v)))
        .collect();
    if !out.status.success() {
        down(&vars);
        return Err(format!("lab/up {what:?} failed: {}{}", text, String::from_utf8_lossy(&out.stderr)));
    }
    Ok(vars)
}

/// `lab/down` for the lab whose variables these are (nothing if it printed no state folder).
fn down(vars: &HashMap<String, String>) {
    if let Some(state) = vars.get("IOMATRIX_LAB_STATE") {
        let down = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lab/down");
        // Its progress goes to stderr; stdout may be libtest's (JSON) report.
        let _ = Command::new("timeout").arg("120").arg(down).args(["--state", state]).stdout(Stdio::null()).status();
    }
}

/// Run when the binary exits (`iomatrix_testkit::at_end`): every shared lab that came up goes down.
fn take_shared_labs_down() {
    let started = std::mem::take(&mut *STARTED.lock().unwrap_or_else(PoisonError::into_inner));
    for vars in &started {
        down(vars);
    }
}

/// The folders a lab serves (share, export) and what was in each right after `lab/up`.
fn served_folders(vars: &HashMap<String, String>) -> Served {
    ["IOMATRIX_LAB_SMB_SHARE_DIR", "IOMATRIX_LAB_NFS_EXPORT_DIR"]
        .iter()
        .filter_map(|k| vars.get(*k))
        .map(|dir| (PathBuf::from(dir), entries(Path::new(dir))))
        .collect()
}

fn entries(dir: &Path) -> BTreeSet<OsString> {
    std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.file_name()).collect()
}

/// Removes what is in `dir` but not in `keep`: what an earlier test on a shared lab left there.
fn remove_all_but(dir: &Path, keep: &BTreeSet<OsString>) {
    for name in entries(dir).difference(keep) {
        let path = dir.join(name);
        let gone = if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        gone.unwrap_or_else(|e| panic!("cannot empty the shared lab's {}: {}: {e}", dir.display(), path.display()));
    }
}

/// A value as `lab/up` prints it (`printf %q`): quotes dropped, `\ ` and `\,` as the characters.
fn unquote(v: &str) -> String {
    let mut out = String::new();
    let mut chars = v.trim_matches(|c| c == '\'' || c == '"').chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

impl Lab {
    /// Every variable lab/up printed, e.g. the OMPI_MCA_* lines that point mpirun at the lab's hosts.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl Drop for Lab {
    /// A lab of the test's own goes down; a shared one goes back to its pool (it stays up).
    fn drop(&mut self) {
        match self.shared.take() {
            None => down(&self.vars),
            Some((which, served)) => which.free().push((std::mem::take(&mut self.vars), served)),
        }
    }
}

/// Working folders iomatrix left anywhere under `dir`.
pub fn left_behind(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("iomatrix-")) {
                found.push(p.clone());
            }
            if e.file_type().is_ok_and(|t| t.is_dir() && !t.is_symlink()) {
                stack.push(p);
            }
        }
    }
    found
}
