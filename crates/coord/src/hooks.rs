//! `--before` and `--after`: a shell command per client around its cells
//! (seed 001 logged each workstation into the server first), run with the
//! client's rank, the number of clients and its folder in the environment.
//! `--between-cells` runs between two cells (e.g. to damage a file behind
//! iomatrix's back, or to drop caches), with the next cell's number.

use std::path::Path;
use std::process::{Command, Stdio};

/// The shell commands each client runs around its cells (none by default).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hooks {
    /// `--before`: run once by each client before its first cell.
    pub before: Option<String>,
    /// `--after`: run once by each client after its last cell.
    pub after: Option<String>,
    /// `--between-cells`: run by each client between two cells, with the next cell's number.
    #[serde(default)]
    pub between_cells: Option<String>,
}

impl Hooks {
    /// Runs `--before` for client `rank`; the error names the hook and says why it failed.
    pub fn before(&self, rank: usize, size: usize, dir: &Path) -> Result<(), HookError> {
        self.before.as_deref().map_or(Ok(()), |cmd| run("--before", cmd, rank, size, dir, None))
    }

    /// Runs `--between-cells` for client `rank` before cell `next` (not before the first).
    pub fn between_cells(&self, rank: usize, size: usize, dir: &Path, next: usize) -> Result<(), HookError> {
        self.between_cells.as_deref().map_or(Ok(()), |cmd| run("--between-cells", cmd, rank, size, dir, Some(next)))
    }

    /// Runs `--after` for client `rank`; the error names the hook and says why it failed.
    pub fn after(&self, rank: usize, size: usize, dir: &Path) -> Result<(), HookError> {
        self.after.as_deref().map_or(Ok(()), |cmd| run("--after", cmd, rank, size, dir, None))
    }
}

/// Why a client's hook (`--before`, `--between-cells`, `--after`) failed; the client fails its
/// cells with this as the cause.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The shell could not be started for the hook's command.
    #[error("{flag} '{cmd}' could not start: {cause}")]
    NotStarted {
        /// The hook's flag: `--before`, `--between-cells` or `--after`.
        flag: &'static str,
        /// The command as the user gave it.
        cmd: String,
        /// The system's error from starting `sh`.
        cause: std::io::Error,
    },
    /// The command ran and exited with a failure.
    #[error("{flag} '{cmd}' failed ({status}): {last}")]
    Failed {
        /// The hook's flag: `--before`, `--between-cells` or `--after`.
        flag: &'static str,
        /// The command as the user gave it.
        cmd: String,
        /// How it exited.
        status: std::process::ExitStatus,
        /// The last line of its standard error ("no message" when it wrote none).
        last: String,
    },
}

/// `sh -c CMD` in the client's folder with IOMATRIX_RANK, IOMATRIX_CLIENTS
/// and IOMATRIX_CLIENT_DIR set; its output goes to ours, a failure names the
/// exit status and the last line of its standard error.
fn run(
    flag: &'static str,
    cmd: &str,
    rank: usize,
    size: usize,
    dir: &Path,
    cell: Option<usize>,
) -> Result<(), HookError> {
    let mut command = Command::new("sh");
    if let Some(cell) = cell {
        command.env("IOMATRIX_CELL", cell.to_string());
    }
    let output = command
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env("IOMATRIX_RANK", rank.to_string())
        .env("IOMATRIX_CLIENTS", size.to_string())
        .env("IOMATRIX_CLIENT_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .output()
        .map_err(|cause| HookError::NotStarted { flag, cmd: cmd.to_string(), cause })?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprint!("{stderr}");
    if output.status.success() {
        return Ok(());
    }
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message");
    Err(HookError::Failed { flag, cmd: cmd.to_string(), status: output.status, last: last.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_sees_its_client_and_a_failure_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let hooks = Hooks {
            before: Some("echo \"$IOMATRIX_RANK/$IOMATRIX_CLIENTS $IOMATRIX_CLIENT_DIR\" > seen".into()),
            after: Some("echo refused >&2; exit 3".into()),
            between_cells: Some("echo $IOMATRIX_CELL > between".into()),
        };
        hooks.between_cells(2, 4, dir.path(), 5).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("between")).unwrap().trim(), "5");
        hooks.before(2, 4, dir.path()).unwrap();
        let seen = std::fs::read_to_string(dir.path().join("seen")).unwrap();
        assert_eq!(seen.trim(), format!("2/4 {}", dir.path().display()));
        let err = hooks.after(2, 4, dir.path()).unwrap_err().to_string();
        assert!(err.contains("--after") && err.contains("exit status: 3") && err.ends_with("refused"), "{err}");
    }
}
