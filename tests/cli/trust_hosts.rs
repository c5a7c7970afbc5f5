//! A run under `--hosts` that leaves its working folder on a server that does not answer (issue 48,
//! finding 9): the launcher's standard error names the folder and where it is, as a run on one host
//! names one it could not remove. MPI ranks on the lab's hosts (`lab/up --hosts 2`, as in
//! `multihost`); missing, a skip.

use crate::helpers::*;
use crate::lab_fixture::left_behind;
use crate::multihost::{lab_command, lab_with_hosts};
use crate::trust_mpi::{after_cells, nothing_left_running, server_tree, signal_all};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The launcher and everything in its process group (mpirun, its ssh), killed when dropped.
struct Launched(Child);

impl Drop for Launched {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this test made (lab_command's process_group(0)).
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// The server's processes, stopped by the test, let go when dropped (also when the test fails).
struct Stopped(Arc<Mutex<Vec<i32>>>);

impl Drop for Stopped {
    fn drop(&mut self) {
        signal_all(&self.0.lock().unwrap_or_else(|e| e.into_inner()), libc::SIGCONT);
    }
}

/// nfs-ganesha stopped (SIGSTOP: it holds its connections and answers nothing) mid-run under
/// `--hosts`, then Ctrl-C on the launcher: mpirun ends rank 0 a second after its SIGTERM, while the
/// folder's removal would wait 30 s for the server. The folder stays on the export, and the
/// launcher's output names it with the server and the `iomatrix clean` that removes it.
#[test]
fn a_hosts_run_ended_while_its_nfs_server_is_stopped_names_the_working_folder_it_left() {
    let Some((lab, bin)) = lab_with_hosts(2, "none", &["nfs"]) else { return };
    let sb = Sandbox::new();
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let export = PathBuf::from(lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR"));
    let stopped = Stopped(Arc::new(Mutex::new(Vec::new())));
    let stopper = {
        let (ganesha, stopped) = (lab.var("IOMATRIX_LAB_GANESHA_PID").to_string(), stopped.0.clone());
        after_cells(sb.db(), 1, move || {
            let tree = server_tree(&ganesha);
            *stopped.lock().unwrap() = tree.clone();
            signal_all(&tree, libc::SIGSTOP)
        })
    };
    let err_path = sb.dir.path().join("launcher.stderr");
    let mut cmd = lab_command(&lab, &sb, bin.to_str().unwrap());
    cmd.args(["run", "access", "--target", &nfs, "--bs", "64k,128k,256k", "--duration", "2s"])
        .args(["--file-size", "4m", "--hosts", lab.var("IOMATRIX_LAB_HOSTFILE")])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap());
    let mut launcher = Launched(cmd.spawn().expect("start the launcher"));
    let was_stopped = stopper.join().unwrap();
    let stderr = || std::fs::read_to_string(&err_path).unwrap_or_default();
    assert!(was_stopped, "the first cell was never stored: {}", stderr());
    // The ranks' calls are waiting on the stopped server when the user gives up on the run.
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: kill(2) on the launcher this test started, not yet waited for.
    assert_eq!(unsafe { libc::kill(launcher.0.id() as i32, libc::SIGINT) }, 0);
    let begun = Instant::now();
    let status = loop {
        if let Some(status) = launcher.0.try_wait().unwrap() {
            break status;
        }
        assert!(begun.elapsed() < Duration::from_secs(60), "the launcher did not end: {}", stderr());
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = stderr();
    eprintln!("ended {:.1?} after Ctrl-C, {status}", begun.elapsed());
    assert_eq!(status.code(), Some(130), "stopped by Ctrl-C: {stderr}");
    assert_eq!(sb.last_run()["run"]["status"], "interrupted", "{stderr}");
    let left = left_behind(&export);
    assert_eq!(left.len(), 1, "the run's working folder stays on the export: {left:?}\n{stderr}");
    let name = left[0].file_name().unwrap().to_string_lossy().into_owned();
    let said = stderr
        .lines()
        .find(|l| l.contains("could not remove the working folder"))
        .unwrap_or_else(|| panic!("the folder left on the server is not mentioned:\n{stderr}"));
    assert!(said.contains(&format!("/export/{name}:")) && said.starts_with("iomatrix: warning: "), "{said}");
    assert!(said.contains("`iomatrix clean nfs://") && said.contains("/export` removes it"), "{said}");
    drop(stopped);
    nothing_left_running(&lab, Duration::from_secs(20));
}
