//! `iomatrix study` and `iomatrix rerun`, as a user runs them: study files
//! on real folders, interleaving, resuming after SIGKILLs at random moments,
//! changed files, failing setups, vanishing targets, and a stored run run again.

use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A study of two configurations (folders a and b of the sandbox) and `steps` small IOzone
/// steps, with a comparison and a report.
fn two_folder_study(sb: &Sandbox, steps: usize) -> PathBuf {
    for c in ["a", "b"] {
        std::fs::create_dir_all(sb.dir.path().join(c)).unwrap();
    }
    let mut text = format!(
        "version = 1\nname = \"two\"\n\n[[config]]\nname = \"a\"\ntarget = \"{0}/a\"\nlabels = {{ disk = \"first\" }}\n\n\
         [[config]]\nname = \"b\"\ntarget = \"{0}/b\"\n",
        sb.dir.path().display()
    );
    for i in 0..steps {
        text += &format!(
            "\n[[step]]\nname = \"m{i}\"\nsuite = \"iozone\"\nargs = {{ files = \"256k\", records = [\"64k\", \"128k\"], \
             tests = \"write,read\" }}\n"
        );
    }
    text += "\n[[compare]]\na = \"a\"\nb = \"b\"\nstep = \"m0\"\n\n[report]\nfile = \"two.html\"\n";
    let path = sb.dir.path().join("two.toml");
    std::fs::write(&path, text).unwrap();
    path
}

pub(crate) fn study_json(sb: &Sandbox, which: &str) -> Value {
    let out = sb.run(&["study", "show", which, "--json"]);
    assert_success(&out);
    serde_json::from_slice(&out.stdout).expect("study show --json is JSON")
}

/// Every stored run: (id, status, labels as "k=v" strings).
fn runs(sb: &Sandbox) -> Vec<(i64, String, Vec<String>)> {
    sb.runs_json()["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let labels = label_list(&r["labels"]);
            (r["id"].as_i64().unwrap(), r["status"].as_str().unwrap().to_string(), labels)
        })
        .collect()
}

/// Stored labels (`[["k", "v"], ...]`) as "k=v".
fn label_list(labels: &Value) -> Vec<String> {
    labels
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}={}", p[0].as_str().unwrap(), p[1].as_str().unwrap()))
        .collect()
}

#[test]
fn a_study_runs_its_configurations_interleaved_links_its_runs_and_concludes() {
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 2);
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    assert!(stdout.contains("== b against a, step 'm0'"), "{stdout}");
    assert!(stdout.contains("read: B/A of KB/s"), "{stdout}");
    assert!(sb.dir.path().join("two.html").exists(), "{stderr}");
    assert!(stderr.contains("[4/4] b · m1: run #"), "{stderr}");

    let study = study_json(&sb, "two");
    assert_eq!(study["schema"], "iomatrix.study/1");
    assert_eq!(study["study"]["status"], "complete");
    let steps = study["steps"].as_array().unwrap();
    let order: Vec<(&str, &str)> =
        steps.iter().map(|s| (s["config"].as_str().unwrap(), s["step"].as_str().unwrap())).collect();
    assert_eq!(order, [("a", "m0"), ("b", "m0"), ("a", "m1"), ("b", "m1")], "interleaved per step");
    let stored = runs(&sb);
    assert_eq!(stored.len(), 4);
    for s in steps {
        assert_eq!(s["status"], "done", "{s}");
        let id = s["run_id"].as_i64().unwrap();
        let (_, status, labels) = stored.iter().find(|(r, _, _)| *r == id).unwrap();
        assert_eq!(status, "complete");
        for want in [
            "study=two".to_string(),
            format!("config={}", s["config"].as_str().unwrap()),
            format!("step={}", s["step"].as_str().unwrap()),
        ] {
            assert!(labels.contains(&want), "{labels:?} lacks {want}");
        }
        assert_eq!(labels.contains(&"disk=first".to_string()), s["config"] == "a", "{labels:?}");
    }

    // Again: nothing to run, nothing stored twice, the conclusions again.
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    assert!(stderr.contains("all 4 steps are done"), "{stderr}");
    assert!(stdout.contains("== b against a, step 'm0'"), "{stdout}");
    assert_eq!(runs(&sb).len(), 4);

    let out = sb.run(&["study", "list", "--json"]);
    assert_success(&out);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["schema"], "iomatrix.studies/1");
    assert_eq!(list["studies"][0]["steps_done"], 4);
}

#[test]
fn a_step_and_the_command_line_with_the_same_flags_store_the_same_plan() {
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 1);
    assert_success(&sb.run(&["study", "run", file.to_str().unwrap()]));
    let target = sb.dir.path().join("a");
    let out = sb.run(&[
        "run",
        "iozone",
        "--target",
        target.to_str().unwrap(),
        "--files",
        "256k",
        "--records",
        "64k,128k",
        "--tests",
        "write,read",
    ]);
    assert_success(&out);
    let by_hand = sb.last_run();
    let study = study_json(&sb, "two");
    let from_study = sb.show_json(study["steps"][0]["run_id"].as_i64().unwrap());
    assert_eq!(from_study["run"]["plan"], by_hand["run"]["plan"]);
}

/// The study's runs are exactly one complete run per step, each the one its step names.
fn assert_each_step_stored_once(sb: &Sandbox, study: &Value) {
    let steps = study["steps"].as_array().unwrap();
    let id = study["study"]["id"].as_i64().unwrap();
    let mine: Vec<(i64, String, Vec<String>)> =
        runs(sb).into_iter().filter(|(_, _, l)| l.contains(&format!("study-id={id}"))).collect();
    assert_eq!(mine.len(), steps.len(), "one run per step: {mine:?}");
    for s in steps {
        assert_eq!(s["status"], "done", "{s}");
        let run = s["run_id"].as_i64().unwrap();
        let (_, status, labels) = mine.iter().find(|(r, _, _)| *r == run).expect("the step's run is stored");
        assert_eq!(status, "complete");
        assert!(labels.contains(&format!("config={}", s["config"].as_str().unwrap())), "{labels:?}");
        assert!(labels.contains(&format!("step={}", s["step"].as_str().unwrap())), "{labels:?}");
    }
}

#[test]
fn twenty_sigkills_at_random_moments_then_run_again_finish_the_study_with_every_run_stored_once() {
    const KILLS: usize = 20;
    let began = Instant::now();
    let seed = std::env::var("IOMATRIX_STUDY_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_0017_cafe);
    eprintln!("kill moments from seed {seed} (IOMATRIX_STUDY_KILL_SEED replays it)");
    let mut moments = Moments::new(seed);
    // Six steps of two seconds each (access specs): a kill lands in a study's start, inside a
    // step (its run is cut and must run again), or between steps. A life is up to 2.5 s, so a
    // life finishes a step only when it outlasts the study's start and the whole step: the study
    // advances by a step now and then and finishes only after the kills, however fast the machine
    // (with one-second steps a quiet machine finished the study within the twenty lives).
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 3);
    let timed = std::fs::read_to_string(&file).unwrap().replace(
        "suite = \"iozone\"\nargs = { files = \"256k\", records = [\"64k\", \"128k\"], tests = \"write,read\" }",
        "suite = \"access\"\nargs = { file-size = \"1m\", bs = \"4k\", duration = \"2s\" }",
    );
    assert!(timed.contains("suite = \"access\""), "{timed}");
    let timed = timed.replace("[[compare]]\na = \"a\"\nb = \"b\"\nstep = \"m0\"\n", "");
    std::fs::write(&file, timed).unwrap();
    let life = Duration::from_millis(2500);
    let (mut finished_early, mut cut) = (0, 0);
    for kill in 0..KILLS {
        assert!(began.elapsed() < Duration::from_secs(240), "{kill} kills took {:?}", began.elapsed());
        let delay = life.mul_f64(moments.next_fraction());
        let mut child = Running(
            sb.cmd()
                .args(["study", "run", file.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        std::thread::sleep(delay);
        // SAFETY: kill(2) on our own child's pid, which it keeps until we wait for it.
        unsafe { libc::kill(child.0.id() as i32, libc::SIGKILL) };
        let status = wait_for_exit(&mut child);
        if status.success() {
            finished_early += 1;
        }
        if std::os::unix::process::ExitStatusExt::signal(&status) == Some(libc::SIGKILL) {
            cut += 1;
        }
    }
    let done_by_kills =
        study_json(&sb, "two")["steps"].as_array().unwrap().iter().filter(|s| s["status"] == "done").count();
    eprintln!(
        "{KILLS} kills in {:?}: {cut} cut a running study, {finished_early} came after it had finished; {done_by_kills} \
         of 6 steps were done between the kills",
        began.elapsed()
    );
    // How far the study gets between kills depends on the machine's speed (a quiet CI machine
    // finished it before the last kills); what must hold is that most kills cut a running study,
    // and that whatever they cut, the study ends with every step's run stored once.
    assert!(cut >= KILLS / 2, "only {cut} of {KILLS} kills cut a running study");
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_success(&out);
    let study = study_json(&sb, "two");
    assert_eq!(study["study"]["status"], "complete");
    assert_each_step_stored_once(&sb, &study);
    // The study's steps stopped by its kills removed their working folders.
    let deadline = Instant::now() + Duration::from_secs(20);
    let left = || [leftovers(&sb.dir.path().join("a")), leftovers(&sb.dir.path().join("b"))].concat();
    while !left().is_empty() {
        assert!(Instant::now() < deadline, "working folders left: {:?}", left());
        std::thread::sleep(Duration::from_millis(200));
    }
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
}

fn write(sb: &Sandbox, name: &str, text: &str) -> PathBuf {
    let path = sb.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn mistakes_in_a_study_file_name_their_line_and_the_fix() {
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 1);
    let good = std::fs::read_to_string(&file).unwrap();
    let cases = [
        (
            good.replace("name = \"two\"", "name = \"two\"\nordr = \"sequential\""),
            "line 3: unknown key `ordr`; did you mean `order`?",
        ),
        (
            good.replace("files = \"256k\"", "file = \"256k\""),
            "'file' is not a flag of `iomatrix run iozone`; did you mean 'files'?",
        ),
        (good.replace("name = \"b\"", "name = \"a\""), "two configurations are named 'a'"),
        (good.replace("files = \"256k\"", "files = \"lots\""), "--files"),
        (good.replace("suite = \"iozone\"", "suite = \"iozon\""), "did you mean 'iozone'?"),
    ];
    for (text, needle) in cases {
        let path = write(&sb, "bad.toml", &text);
        let out = sb.run(&["study", "run", path.to_str().unwrap()]);
        assert_usage_error(&out, needle);
    }
    assert!(runs(&sb).is_empty(), "nothing runs from a file with a mistake");
}

#[test]
fn a_failing_setup_skips_its_configuration_and_the_study_goes_on_to_exit_3() {
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 2);
    let edited = std::fs::read_to_string(&file)
        .unwrap()
        .replace("name = \"b\"\n", "name = \"b\"\nsetup = \"echo no such server >&2; exit 7\"\n");
    let path = write(&sb, "setup.toml", &edited);
    let out = sb.run(&["study", "run", path.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "setup of configuration 'b' failed: `echo no such server >&2; exit 7` exited with exit status: 7"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("no such server"), "{stderr}");
    assert!(stdout.contains("not compared (a side has no finished run)"), "{stdout}");
    let study = study_json(&sb, "two");
    let status: Vec<(&str, &str)> = study["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["config"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(status, [("a", "done"), ("b", "skipped"), ("a", "done"), ("b", "skipped")]);
    assert_eq!(study["study"]["status"], "incomplete");
    assert_eq!(runs(&sb).len(), 2);
}

#[test]
fn a_target_that_disappears_between_steps_fails_its_step_and_the_rest_runs() {
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 2);
    // a's teardown after its first step removes its folder.
    let edited = std::fs::read_to_string(&file).unwrap().replace(
        "labels = { disk = \"first\" }\n",
        &format!("labels = {{ disk = \"first\" }}\nteardown = \"rm -rf {}/a\"\n", sb.dir.path().display()),
    );
    let path = write(&sb, "gone.toml", &edited);
    let out = sb.run(&["study", "run", path.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("target {}/a does not exist", sb.dir.path().display())), "{stderr}");
    let study = study_json(&sb, "two");
    let status: Vec<&str> = study["steps"].as_array().unwrap().iter().map(|s| s["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["done", "done", "failed", "done"]);
}

#[test]
fn a_changed_file_says_what_changed_and_waits_for_restart() {
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 1);
    assert_success(&sb.run(&["study", "run", file.to_str().unwrap()]));
    let first = study_json(&sb, "two")["study"]["id"].as_i64().unwrap();
    let original = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, original.replace("files = \"256k\"", "files = \"128k\"")).unwrap();
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_usage_error(&out, "step 'm0' of configuration 'a' changed");
    let (_, stderr) = text(&out);
    assert!(stderr.contains("add --restart"), "{stderr}");
    assert_eq!(runs(&sb).len(), 2, "nothing ran");
    let out = sb.run(&["study", "run", file.to_str().unwrap(), "--restart"]);
    assert_success(&out);
    let second = study_json(&sb, "two");
    assert_ne!(second["study"]["id"].as_i64().unwrap(), first);
    assert_eq!(study_json(&sb, &first.to_string())["study"]["status"], "superseded");
    assert_each_step_stored_once(&sb, &second);
    // A change to the conclusions only needs no restart.
    let changed = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, changed.replace("file = \"two.html\"", "file = \"two.md\"")).unwrap();
    let out = sb.run(&["study", "run", file.to_str().unwrap()]);
    assert_success(&out);
    assert!(sb.dir.path().join("two.md").exists());
}

#[test]
fn a_study_file_changed_under_a_running_study_stops_it_before_the_next_step() {
    let sb = Sandbox::new();
    let file = two_folder_study(&sb, 2);
    let path = sb.dir.path().join("two.toml");
    // b's setup edits the study file while the study runs.
    let edited = std::fs::read_to_string(&file)
        .unwrap()
        .replace("name = \"b\"\n", &format!("name = \"b\"\nsetup = \"echo '# edited' >> {}\"\n", path.display()));
    std::fs::write(&path, edited).unwrap();
    let out = sb.run(&["study", "run", path.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("changed while the study ran: stopping before the next step"), "{stderr}");
    assert_eq!(runs(&sb).len(), 1, "only a's first step ran");
    // The edit was a comment: nothing a step runs with changed, so the study resumes.
    let out = sb.run(&["study", "run", path.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "b's setup edits the file again: {stderr}");
    assert!(stderr.contains("resuming record"), "{stderr}");
}

#[test]
fn rerun_runs_a_stored_runs_flags_again_on_another_target() {
    let sb = Sandbox::new();
    sb.iozone_ok(&["--files", "256k", "--records", "64k", "--tests", "write,read", "--label", "disk=old"]);
    let before = sb.last_run();
    let id = before["run"]["id"].as_i64().unwrap();
    let other = sb.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let out = sb.run(&["rerun", &format!("#{id}"), "--target", other.to_str().unwrap()]);
    assert_success(&out);
    let after = sb.last_run();
    assert_ne!(after["run"]["id"], before["run"]["id"]);
    assert_eq!(after["run"]["plan"], before["run"]["plan"]);
    let labels = label_list(&after["run"]["labels"]);
    assert!(labels.contains(&format!("rerun-of={id}")) && labels.contains(&"disk=old".to_string()), "{labels:?}");
    assert_eq!(after["run"]["conditions"]["target"].as_str().map(Path::new), Some(other.as_path()));

    // The IOzone front end: its file moves to the other folder.
    let f = sb.target().join("iozone.tmp");
    let out = sb.run(&["iozone", "-s", "64k", "-r", "4k", "-i", "0", "-f", f.to_str().unwrap()]);
    assert_success(&out);
    let front = sb.last_run();
    let out = sb.run(&["rerun", &front["run"]["id"].to_string(), "--target", other.to_str().unwrap()]);
    assert_success(&out);
    let again = sb.last_run();
    assert_eq!(again["run"]["plan"], front["run"]["plan"]);
    assert_eq!(again["run"]["conditions"]["target"].as_str().map(Path::new), Some(other.as_path()));

    assert_usage_error(&sb.run(&["rerun", "999"]), "no run #999");
}
