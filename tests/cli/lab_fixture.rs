//! The lab (`lab/up`, `lab/down`) as a test fixture: real servers brought
//! up for one test and taken down, also when it fails. Where the lab cannot
//! come up (not root, a package missing), the test is a skip (see helpers).

use crate::helpers::skip;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A lab brought up for one test and taken down (also on failure) by Drop.
pub struct Lab {
    vars: HashMap<String, String>,
}

impl Lab {
    pub fn up(what: &[&str]) -> Option<Lab> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let up = root.join("lab/up");
        if !up.is_file() || unsafe { libc::geteuid() } != 0 {
            skip("the lab's tests need root and lab/up (Samba, nfs-ganesha, rpcbind in a namespace)");
            return None;
        }
        let out = Command::new("timeout").arg("120").arg(&up).args(what).output().expect("run lab/up");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let vars: HashMap<String, String> = text
            .lines()
            .filter_map(|l| l.trim().trim_start_matches("export ").split_once('='))
            .map(|(k, v)| (k.to_string(), unquote(v)))
            .collect();
        let lab = Lab { vars };
        if !out.status.success() {
            skip(format!("lab/up {what:?} failed: {}{}", text, String::from_utf8_lossy(&out.stderr)));
            return None;
        }
        Some(lab)
    }

    pub fn var(&self, key: &str) -> &str {
        self.vars.get(key).map(String::as_str).unwrap_or_else(|| panic!("lab/up printed no {key}: {:?}", self.vars))
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
    fn drop(&mut self) {
        if let Some(state) = self.vars.get("IOMATRIX_LAB_STATE") {
            let down = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("lab/down");
            let _ = Command::new("timeout").arg("120").arg(down).args(["--state", state]).status();
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
