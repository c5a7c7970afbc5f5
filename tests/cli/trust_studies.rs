//! Issue 48's findings on studies (3, the study items of 9, the study side of
//! "never replay --destroy-data-on") and its label rule of 8, each as the user
//! met it:
//!
//! - A study owns its runs by id (its `study_runs` table), joined by a run that
//!   proves the study's nonce: a run with the study labels, made by hand (an
//!   older iomatrix) or brought by `db merge`, is never taken as a step's run,
//!   and never removed, through kills and resumes.
//! - The study labels (study, study-id, config, step) and bidirectional
//!   controls are refused in a user's labels, with exit 2.
//! - A study name too long for its log folder is refused before any record.
//! - A SIGKILLed study is listed as interrupted, not running.
//! - A study stopped in its setup ends the setup's `setsid` children too.
//! - A resumed study never replays a step's `--destroy-data-on`.

use crate::helpers::*;
use crate::study::study_json;
use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const TINY: &str = "files = \"64k\", records = \"4k\", tests = \"write\"";

fn write(sb: &Sandbox, name: &str, text: &str) -> PathBuf {
    let path = sb.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn stored_runs(db: &Path) -> i64 {
    let conn = Connection::open(db).unwrap();
    conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap()
}

/// The study labels (and anything else) written straight into run `id`'s rows, as an older
/// iomatrix let a user store them, with the run's status.
fn forge(db: &Path, id: i64, step: &str, status: &str) {
    let conn = Connection::open(db).unwrap();
    for (k, v) in [("study", "own"), ("study-id", "1"), ("config", "a"), ("step", step)] {
        conn.execute(
            "INSERT OR REPLACE INTO labels (run_id, key, value) VALUES (?1, ?2, ?3)",
            rusqlite::params![id, k, v],
        )
        .unwrap();
    }
    conn.execute("UPDATE runs SET status = ?2 WHERE id = ?1", rusqlite::params![id, status]).unwrap();
}

/// (id, uid) of every stored run.
fn run_ids(db: &Path) -> Vec<(i64, String)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT id, uid FROM runs ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
}

/// (run id, seq) of every run study `id` owns.
fn owned(db: &Path, id: i64) -> Vec<(i64, i64)> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn.prepare("SELECT run_id, seq FROM study_runs WHERE study_id = ?1 ORDER BY run_id").unwrap();
    stmt.query_map([id], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().collect::<Result<_, _>>().unwrap()
}

#[test]
fn study_labels_and_bidirectional_controls_are_refused_in_a_users_labels() {
    let sb = Sandbox::new();
    let target = sb.target();
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["run", "iozone", "--target", target.to_str().unwrap(), "--files", "64k", "--records", "4k"];
        all.extend_from_slice(extra);
        sb.cmd().envs(env.iter().copied()).args(&all).output().unwrap()
    };
    for key in ["study", "study-id", "config", "step"] {
        let label = format!("{key}=x");
        assert_usage_error(&run(&["--label", &label], &[]), &format!("'{key}' is a label a study puts on the runs"));
        assert_usage_error(&run(&[], &[("IOMATRIX_LABELS", &label)]), &format!("IOMATRIX_LABELS: --label {key}="));
    }
    // The channel a study's step proves itself with, typed by hand: refused, naming it.
    let out = run(&["--label", "study-id=1"], &[("IOMATRIX_STUDY_CLAIM", "1:0:00ff")]);
    assert_usage_error(&out, "IOMATRIX_STUDY_CLAIM: there is no study #1 in this database");
    for bidi in ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}'] {
        let label = format!("name=invoice{bidi}fdp.exe");
        let out = run(&["--label", &label], &[]);
        assert_usage_error(&out, &format!("U+{:04X} (a bidirectional control) at character 13", bidi as u32));
        assert!(!text(&out).1.contains(bidi), "the control is echoed: {}", text(&out).1);
    }
    let out = sb.run(&["import", "--format", "iozone", "/dev/null", "--label", "step=x"]);
    assert_usage_error(&out, "'step' is a label a study puts on the runs");
    assert!(!sb.db().exists() || stored_runs(&sb.db()) == 0, "a refused run was stored");
    // Any other name is the user's.
    assert_success(&run(&["--label", "my-study=x"], &[]));
}

/// A study "own" of two configurations (folders a and b) and three steps: IOzone, access for
/// `seconds` (where a kill lands), IOzone again; b compared with a on the first.
fn own_study(sb: &Sandbox, seconds: u32) -> PathBuf {
    for c in ["a", "b"] {
        std::fs::create_dir_all(sb.dir.path().join(c)).unwrap();
    }
    write(
        sb,
        "own.toml",
        &format!(
            "version = 1\nname = \"own\"\n[[config]]\nname = \"a\"\ntarget = \"{0}/a\"\n\
             [[config]]\nname = \"b\"\ntarget = \"{0}/b\"\n\
             [[step]]\nname = \"w\"\nsuite = \"iozone\"\nargs = {{ {TINY} }}\n\
             [[step]]\nname = \"slow\"\nsuite = \"access\"\nargs = {{ file-size = \"1m\", bs = \"4k\", duration = \"{seconds}s\" }}\n\
             [[step]]\nname = \"w2\"\nsuite = \"iozone\"\nargs = {{ files = \"64k\", records = \"8k\", tests = \"write\" }}\n\
             [[compare]]\na = \"a\"\nb = \"b\"\nstep = \"w\"\n",
            sb.dir.path().display()
        ),
    )
}

#[test]
fn hand_made_and_merged_runs_with_study_labels_survive_kills_and_resumes_and_never_become_a_steps_run() {
    let began = Instant::now();
    let sb = Sandbox::new();
    let db = sb.db();
    // The user's own run, given the study labels as an older iomatrix stored them: interrupted,
    // of the first step (resume used to delete it).
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    forge(&db, 1, "w", "incomplete");
    // Another machine's database: an IOzone run labelled as the access step, complete (resume used
    // to take it as that step's run), and an interrupted one of the last step.
    let other = Sandbox::new();
    for _ in 0..2 {
        other.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    }
    forge(&other.db(), 1, "slow", "complete");
    forge(&other.db(), 2, "w2", "incomplete");
    assert_success(&sb.run(&["db", "merge", other.db().to_str().unwrap()]));
    let users = run_ids(&db);
    assert_eq!(users.len(), 3, "{users:?}");
    let file = own_study(&sb, 4);
    // Kill the study (SIGKILL) in the middle of its access step, once that step's run is stored.
    let mut child =
        Running(sb.cmd().args(["study", "run", file.to_str().unwrap()]).stderr(Stdio::null()).spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(child.0.try_wait().unwrap().is_none(), "the study ended before its access step began");
        assert!(Instant::now() < deadline, "the access step did not begin within 90 s");
        if db.exists()
            && Connection::open(&db).ok().is_some_and(|c| {
                c.query_row("SELECT COUNT(*) FROM study_runs WHERE seq = 2", [], |r| r.get::<_, i64>(0)).unwrap_or(0)
                    > 0
            })
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) of the study this test started, not yet waited for.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGKILL) };
    wait_for_exit(&mut child);
    // Listed as `runs` lists a killed run: not running.
    let listed: Value = serde_json::from_slice(&sb.run(&["study", "list", "--json"]).stdout).unwrap();
    assert_eq!(listed["studies"][0]["status"], "interrupted", "{listed}");
    // The access step's run (the study's own, by id) is cut: it stops on its parent's death.
    let cut: Vec<i64> = owned(&db, 1).iter().filter(|(_, seq)| *seq == 2).map(|(run, _)| *run).collect();
    assert_eq!(cut.len(), 1, "{cut:?}");
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_success(&out);
    let study = study_json(&sb, "own");
    // The conclusion compares the steps' own runs: the labels would select the user's run #1 too
    // on side a, so that side is named by its id.
    let first_of_a = study["steps"][0]["run_id"].as_i64().unwrap();
    let (stdout, _) = text(&out);
    let line = format!("== b against a, step 'w' (iomatrix compare {first_of_a} study-id=1,config=b,step=w)");
    assert!(stdout.contains(&line), "{line} not in:\n{stdout}");
    assert_eq!(study["study"]["status"], "complete", "{study}");
    let id = study["study"]["id"].as_i64().unwrap();
    let own = owned(&db, id);
    let steps = study["steps"].as_array().unwrap();
    assert_eq!(own.len(), steps.len(), "the study owns one run a step, its cut run removed: {own:?}");
    assert!(!own.iter().any(|(run, _)| cut.contains(run)), "the cut run #{cut:?} was kept: {own:?}");
    assert!(!run_ids(&db).iter().any(|(run, _)| cut.contains(run)), "the cut run #{cut:?} is still stored");
    for s in steps {
        assert_eq!(s["status"], "done", "{s}");
        let run = s["run_id"].as_i64().unwrap();
        assert!(own.contains(&(run, s["seq"].as_i64().unwrap())), "step {s} took run #{run}, not its own: {own:?}");
        assert!(!users.iter().any(|(u, _)| *u == run), "step {s} took the user's run #{run}");
        let shown = sb.show_json(run)["run"].clone();
        assert_eq!(shown["suite"], s["suite"], "{s}");
        assert_eq!(shown["status"], "complete", "{s}");
    }
    // No user run was removed or changed identity; every run is a user's or the study's.
    let now = run_ids(&db);
    for u in &users {
        assert!(now.contains(u), "the user's run {u:?} is gone: {now:?}");
    }
    assert_eq!(now.len(), users.len() + steps.len(), "{now:?}");
    // Merged again (the same database): nothing joins the study.
    assert_success(&sb.run(&["db", "merge", other.db().to_str().unwrap()]));
    assert_eq!(owned(&db, id), own);
    eprintln!("took {:?}", began.elapsed());
}

#[test]
fn a_study_name_of_5000_characters_is_refused_before_any_record() {
    let sb = Sandbox::new();
    let name = "n".repeat(5000);
    let file = write(
        &sb,
        "long.toml",
        &format!(
            "version = 1\nname = \"{name}\"\n[[config]]\nname = \"a\"\ntarget = \"{}\"\n[[step]]\nsuite = \"iozone\"\n\
             args = {{ {TINY} }}\n",
            sb.target().display()
        ),
    );
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_usage_error(&out, "name is 5000 characters long; a study's name holds at most 128");
    let listed = sb.run(&["study", "list"]);
    assert!(text(&listed).0.contains("no studies stored"), "{}", text(&listed).0);
}

#[test]
fn a_study_stopped_in_its_setup_ends_the_setups_setsid_children() {
    let sb = Sandbox::new();
    let pid_file = sb.dir.path().join("daemon.pid");
    // A child in a session (and process group) of its own, which the setup's group signal misses.
    let pid = pid_file.display().to_string();
    let setup = format!("setsid sh -c 'echo $$ > {pid}.tmp; mv {pid}.tmp {pid}; exec sleep 300' & sleep 300");
    let file = write(
        &sb,
        "s.toml",
        &format!(
            "version = 1\nname = \"s\"\n[[config]]\nname = \"a\"\ntarget = \"{}\"\nsetup = \"{setup}\"\n\
             [[step]]\nsuite = \"iozone\"\nargs = {{ {TINY} }}\n",
            sb.target().display()
        ),
    );
    let mut child =
        Running(sb.cmd().args(["study", "run", file.to_str().unwrap()]).stderr(Stdio::piped()).spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    let daemon = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
            break Sleeper(pid);
        }
        assert!(child.0.try_wait().unwrap().is_none(), "the study ended before its setup began");
        assert!(Instant::now() < deadline, "the setup did not start within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Wait until it is the sleep (exec'd), in its own session.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !daemon.is_sleep() {
        assert!(Instant::now() < deadline, "the setsid child never became a sleep");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) of the study this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(143));
    let deadline = Instant::now() + Duration::from_secs(10);
    while daemon.alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(!daemon.alive(), "the setup's setsid child {} outlived the study:\n{stderr}", daemon.0);
    assert!(stderr.contains("stopped, with every process it started"), "{stderr}");
}

#[test]
fn a_resumed_study_never_replays_destroy_data_on() {
    let sb = Sandbox::new();
    let go = sb.dir.path().join("go");
    let device = "/dev/iomatrix-test-absent";
    let file = write(
        &sb,
        "dev.toml",
        &format!(
            "version = 1\nname = \"dev\"\n[[config]]\nname = \"raw\"\nsetup = \"test -e {} || sleep 300\"\n\
             [[step]]\nsuite = \"access\"\nargs = {{ device = \"{device}\", destroy-data-on = \"{device}\", \
             bytes = \"1m\", bs = \"4k\" }}\n",
            go.display()
        ),
    );
    // The first run is stopped in its setup: its step is still to run.
    let mut child = Running(
        sb.cmd()
            .args(["study", "run", file.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !sb.dir.path().join("studies/dev-1/setup-raw.log").exists() {
        assert!(Instant::now() < deadline, "the setup did not start within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) of the study this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGTERM) };
    assert_eq!(wait_for_exit(&mut child).code(), Some(143));
    std::fs::write(&go, "").unwrap();
    let before = study_json(&sb, "dev");
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_usage_error(&out, &format!("destroy data on {device}: a resumed study never replays --destroy-data-on"));
    assert_usage_error(&out, &format!("--destroy-data-on {device}`"));
    // Refused before the record was touched, and nothing ran.
    assert_eq!(study_json(&sb, "dev"), before);
    assert_eq!(stored_runs(&sb.db()), 0);
    // Named again: the resume goes on to the step (whose own checks then judge the device).
    let out = sb.run(&["study", "run", file.to_str().unwrap(), "--destroy-data-on", device]);
    let (_, stderr) = text(&out);
    assert!(!stderr.contains("never replays"), "{stderr}");
    assert!(stderr.contains("resuming record #1"), "{stderr}");
    assert!(sb.dir.path().join("studies/dev-1/001-raw-access.log").exists(), "{stderr}");
}

/// A pid whose process (a `sleep`) is killed on drop if it still runs.
struct Sleeper(i32);

impl Sleeper {
    fn alive(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0)).unwrap_or_default();
        !stat.is_empty() && !stat.contains(") Z ")
    }

    fn is_sleep(&self) -> bool {
        std::fs::read(format!("/proc/{}/cmdline", self.0)).unwrap_or_default().starts_with(b"sleep")
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        if self.alive() && self.is_sleep() {
            // SAFETY: kill(2) of the test's own sleep, checked by its command line just above.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
            }
        }
    }
}
