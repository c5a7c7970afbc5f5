//! `iomatrix clean TARGET`: removes crashed runs' marked working folders and
//! nothing else; the markers themselves, written by real runs.
use crate::helpers::*;
use serde_json::Value;
use std::path::Path;

/// The marker a real run wrote, kept with --keep.
fn kept_run_marker(sb: &Sandbox) -> (String, Value) {
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write", "--keep"]);
    let folder = sb.leftovers().pop().expect("the kept working folder");
    let marker = std::fs::read_to_string(folder.join(".iomatrix-workdir")).unwrap();
    (folder.file_name().unwrap().to_string_lossy().into_owned(), serde_json::from_str(&marker).unwrap())
}

/// A folder `name` under `target` marked as made by `marker`, with some content.
fn plant(target: &Path, name: &str, marker: &Value) {
    let folder = target.join(name);
    std::fs::create_dir_all(folder.join("client-0")).unwrap();
    std::fs::write(folder.join("client-0/iozone.tmp"), vec![7u8; 4096]).unwrap();
    std::fs::write(folder.join(".iomatrix-workdir"), marker.to_string()).unwrap();
}

/// `marker` as a crashed run would have left it: no --keep, and a pid above
/// Linux's largest (4194303), so no process has it.
fn dead_run(marker: &Value) -> Value {
    let mut dead = marker.clone();
    dead["pid"] = 4_194_304.into();
    dead["keep"] = false.into();
    dead
}

fn this_process_start_ticks() -> i64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    stat[stat.rfind(')').unwrap() + 1..].split_whitespace().nth(19).unwrap().parse().unwrap()
}

#[test]
fn the_marker_names_the_process_and_the_run() {
    let sb = Sandbox::new();
    let (name, marker) = kept_run_marker(&sb);
    assert_eq!(marker["schema"], "iomatrix.workdir/1");
    assert_eq!(marker["run_id"], 1);
    assert_eq!(marker["keep"], true);
    assert!(name.starts_with(&format!("iomatrix-{}-", marker["pid"])), "{name} {marker}");
    assert!(marker["pid_start"].as_i64().unwrap() > 0, "{marker}");
    assert_eq!(marker["host"].as_str().unwrap(), std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim());
    assert!(marker["created_at"].as_str().unwrap().ends_with('Z'), "{marker}");
}

#[test]
fn clean_removes_only_dead_runs_marked_folders() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let (kept, marker) = kept_run_marker(&sb);
    // A crashed run: its process is gone.
    let dead = dead_run(&marker);
    plant(&target, "iomatrix-1-1", &dead);
    // A run still going: this test process, same pid and start time.
    let mut alive = dead.clone();
    alive["pid"] = std::process::id().into();
    alive["pid_start"] = this_process_start_ticks().into();
    plant(&target, "iomatrix-2-2", &alive);
    // The same pid, but a process that started at another time: pid reused, the maker is gone.
    let mut reused = alive.clone();
    reused["pid_start"] = (this_process_start_ticks() - 1).into();
    plant(&target, "iomatrix-3-3", &reused);
    // Made on another host of a shared file system.
    let mut elsewhere = dead.clone();
    elsewhere["host"] = "another-host".into();
    plant(&target, "iomatrix-4-4", &elsewhere);
    // Named like a working folder, but no marker, a foreign marker, a symlink to a marked folder, a file.
    std::fs::create_dir(target.join("iomatrix-unmarked")).unwrap();
    std::fs::create_dir(target.join("iomatrix-foreign")).unwrap();
    std::fs::write(target.join("iomatrix-foreign/.iomatrix-workdir"), "{\"schema\":\"other\"}").unwrap();
    let outside = sb.dir.path().join("outside");
    plant(&outside, "iomatrix-9-9", &dead);
    std::os::unix::fs::symlink(outside.join("iomatrix-9-9"), target.join("iomatrix-link")).unwrap();
    std::fs::write(target.join("iomatrix-file"), "x").unwrap();
    // Not named like a working folder at all, though marked.
    plant(&target, "data", &dead);

    let out = sb.run(&["clean", t, "--dry-run"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("would remove iomatrix-1-1: pid 4194304"), "{stdout}");
    assert!(stdout.contains("would remove iomatrix-3-3"), "{stdout}");
    assert!(stdout.contains("2 leftover working folder(s) would be removed, 7 left"), "{stdout}");
    assert_eq!(sb.leftovers().len(), 9, "--dry-run removes nothing");

    let out = sb.run(&["clean", t]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    for line in [
        "removed iomatrix-1-1: pid 4194304",
        "removed iomatrix-3-3",
        "kept iomatrix-2-2: in use by a running iomatrix",
        "kept iomatrix-4-4: made on another host",
        "run `iomatrix clean` on another-host",
        &format!("kept {kept}: its run asked to keep it (--keep; pid"),
        "left iomatrix-unmarked: no .iomatrix-workdir marker",
        "left iomatrix-foreign: its .iomatrix-workdir is not an iomatrix marker",
        "left iomatrix-link: not a folder (a symlink or a file); not followed",
        "left iomatrix-file: not a folder",
        "2 leftover working folder(s) removed, 7 left",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    let mut left: Vec<String> =
        sb.leftovers().iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    left.sort();
    let mut expected = vec![
        "iomatrix-2-2".to_string(),
        "iomatrix-4-4".into(),
        "iomatrix-file".into(),
        "iomatrix-foreign".into(),
        "iomatrix-link".into(),
        "iomatrix-unmarked".into(),
        kept.clone(),
    ];
    expected.sort();
    assert_eq!(left, expected);
    assert!(target.join("data/client-0/iozone.tmp").exists(), "a folder not named iomatrix-* is never touched");
    assert!(outside.join("iomatrix-9-9/client-0/iozone.tmp").exists(), "the symlink was followed");

    // --kept: the kept folder goes too, nothing else.
    let out = sb.run(&["clean", t, "--kept"]);
    assert_success(&out);
    assert!(!target.join(&kept).exists());
    assert_eq!(sb.leftovers().len(), 6);
}

#[test]
fn a_run_names_leftovers_and_clean_stays_on_one_file_system() {
    let sb = Sandbox::new();
    let target = sb.target();
    let (_, marker) = kept_run_marker(&sb);
    let dead = dead_run(&marker);
    plant(&target, "iomatrix-1-1", &dead);
    plant(&target, "iomatrix-2-2", &dead);
    let out = sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains(&format!(
            "iomatrix: 2 leftover working folders from crashed runs: iomatrix clean {}",
            target.display()
        )),
        "{stderr}"
    );
    // Another file system mounted inside a leftover: left, and clean says it could not finish (exit 1).
    let Some(inner) = Mount::virtual_fs("tmpfs", "size=1m") else { return };
    std::fs::write(inner.point.join("precious"), "keep me").unwrap();
    let mountpoint = target.join("iomatrix-2-2/client-0/mnt");
    std::fs::create_dir(&mountpoint).unwrap();
    let bind = std::process::Command::new("mount").arg("--bind").arg(&inner.point).arg(&mountpoint).status().unwrap();
    assert!(bind.success());
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&mountpoint);
    // A file mounted over a file (the remover unlinks files the listing names without a stat, as
    // rm does): unlink refuses it (EBUSY), it is named and the file behind it kept.
    let file_point = target.join("iomatrix-2-2/client-0/over");
    std::fs::write(&file_point, "cover").unwrap();
    let bind = std::process::Command::new("mount")
        .arg("--bind")
        .arg(inner.point.join("precious"))
        .arg(&file_point)
        .status()
        .unwrap();
    assert!(bind.success());
    let _unmount_file = Unmount(&file_point);
    let out = sb.run(&["clean", target.to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("a mount point (another file system, or a bind mount"), "{stderr}");
    assert!(stderr.contains("not entered, left as it is"), "{stderr}");
    assert!(stderr.contains("something is mounted over it"), "{stderr}");
    assert!(stdout.contains("removed iomatrix-1-1"), "{stdout}");
    assert!(stdout.contains("1 could not be removed"), "{stdout}");
    assert_eq!(std::fs::read_to_string(mountpoint.join("precious")).unwrap(), "keep me");
    assert_eq!(std::fs::read_to_string(&file_point).unwrap(), "keep me", "the file mounted over is still there");
}

#[test]
fn clean_refuses_a_target_it_cannot_read() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["clean", "/no/such/folder"]), "give the folder the runs had as --target");
    let file = sb.dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    assert_usage_error(&sb.run(&["clean", file.to_str().unwrap()]), "not a folder");
    assert_usage_error(&sb.run(&["clean", "nfs://"]), "--target");
    // An empty target: nothing to do, said so.
    let out = sb.run(&["clean", sb.target().to_str().unwrap()]);
    assert_success(&out);
    assert!(text(&out).0.contains("0 leftover working folder(s) removed, 0 left"));
}

#[test]
fn clean_works_on_a_server_through_the_built_in_nfs_client() {
    let Some(lab) = crate::lab_fixture::Lab::shared(crate::lab_fixture::Shared::Unshaped) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let export = std::path::PathBuf::from(lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR"));
    let sb = Sandbox::new();
    let (_, marker) = kept_run_marker(&sb);
    plant(&export, "iomatrix-1-1", &dead_run(&marker));
    std::fs::create_dir(export.join("iomatrix-unmarked")).unwrap();
    // A run on the server names the leftover; its own folder there carries a marker and is removed at the end.
    let out = sb.run(&["run", "iozone", "--target", &nfs, "--files", "64k", "--records", "4k", "--tests", "write"]);
    assert_success(&out);
    let (_, stderr) = text(&out);
    assert!(stderr.contains("1 leftover working folders from crashed runs: iomatrix clean nfs://"), "{stderr}");
    let out = sb.run(&["clean", &nfs]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("removed iomatrix-1-1: pid 4194304"), "{stdout}");
    assert!(stdout.contains("left iomatrix-unmarked: no .iomatrix-workdir marker"), "{stdout}");
    assert!(!export.join("iomatrix-1-1").exists());
    assert!(export.join("iomatrix-unmarked").exists());
}
