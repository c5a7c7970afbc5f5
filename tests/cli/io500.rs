//! IO500's phases in iomatrix: ior-hard's one file shared by every client, written and read in
//! 47,008-byte transfers interleaved by client (`run access --shared-file interleaved`).
use crate::helpers::*;
use serde_json::Value;

/// ior-hard's transfer (ior -t 47008 -b 47008).
const TRANSFER: u64 = 47008;

/// `run access` on the sandbox's target with `args`; must succeed; the stored run.
fn access(sb: &Sandbox, args: &[&str]) -> Value {
    let target = sb.target();
    let mut all = vec!["run", "access", "--target", target.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    assert_success(&out);
    sb.last_run()
}

/// ior-hard at `segments` transfers per client (ior's -s) for `clients` clients: `rw` is write or read.
fn ior_hard_args(rw: &str, clients: usize, segments: u64) -> Vec<String> {
    let share = (segments * TRANSFER).to_string();
    [
        "--shared-file",
        "interleaved",
        "--rw",
        rw,
        "--bs",
        &TRANSFER.to_string(),
        "--file-size",
        &share,
        "--bytes",
        &share,
        "--clients",
        &clients.to_string(),
    ]
    .map(str::to_string)
    .to_vec()
}

/// The shared file in `workdir` holds every client's `segments` transfers, each tagged by the
/// client that owns its place (transfer t is client t mod clients's) with its own offset.
fn each_transfer_is_its_owners(workdir: &std::path::Path, clients: usize, segments: u64) {
    let file = std::fs::read(workdir.join("access-shared.dat")).expect("the shared file");
    assert_eq!(file.len() as u64, clients as u64 * segments * TRANSFER);
    for (t, transfer) in file.chunks(TRANSFER as usize).enumerate() {
        let word = |at: usize| u64::from_le_bytes(transfer[at..at + 8].try_into().unwrap());
        let owner = t as u64 % clients as u64;
        assert_eq!(
            (word(0), word(8)),
            (owner + 1, t as u64 * TRANSFER),
            "transfer {t} (segment {}) is client {owner}'s, at its own offset",
            t / clients
        );
    }
}

#[test]
fn ior_hard_writes_every_clients_transfers_interleaved_in_one_shared_file() {
    let (clients, segments) = (3usize, 25u64);
    let sb = Sandbox::new();
    let mut args = ior_hard_args("write", clients, segments);
    args.push("--keep".to_string());
    let run = access(&sb, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let kept = sb.leftovers();
    assert_eq!(kept.len(), 1, "one working folder: {kept:?}");
    each_transfer_is_its_owners(&kept[0], clients, segments);
    for rank in 0..clients {
        assert!(!kept[0].join(format!("client-{rank}/access.dat")).exists(), "no file of a client's own");
    }
    let cell = &cells(&run)[0];
    let bytes = clients as u64 * segments * TRANSFER;
    assert_eq!(cell["bytes"].as_u64(), Some(bytes), "{cell}");
    assert_eq!(cell["metrics"]["write_bytes"].as_u64(), Some(bytes));
    let mib = cell["metrics"]["mib_per_sec"].as_f64().unwrap();
    let iops = cell["metrics"]["iops"].as_f64().unwrap();
    println!("ior-hard write: {mib:.1} MiB/s, {iops:.0} transfers/s");
    assert!(mib > 0.0 && (iops * TRANSFER as f64 - mib * 1048576.0).abs() <= mib * 1048576.0 * 1e-9, "{cell}");
    assert_eq!(run["run"]["plan"]["shared_file"], "interleaved");
    let prepared = run["run"]["conditions"]["prepare"].as_str().unwrap();
    assert!(
        prepared.starts_with("dropped: the shared file laid out by each client in its own transfers"),
        "{prepared}"
    );
    let said = run["run"]["conditions"]["shared_file"].as_str().expect("the condition is stored");
    assert!(said.contains("(k x N + r) x block size"), "{said}");
    let shown = sb.run(&["show", &run["run"]["id"].to_string()]);
    assert_success(&shown);
    assert!(text(&shown).0.contains("one file shared by every client"), "{}", text(&shown).0);
}

#[test]
fn ior_hard_under_mpi_interleaves_the_ranks_in_one_shared_file() {
    let Some(bin) = crate::mpi::mpi_binary() else { return };
    let (ranks, segments) = (3usize, 20u64);
    let sb = Sandbox::new();
    let target = sb.target();
    let mut args = vec![bin.to_str().unwrap(), "run", "access", "--target", target.to_str().unwrap(), "--keep"];
    let hard = ior_hard_args("write", 1, segments);
    // The ranks are the clients: --clients is left out.
    let without_clients: Vec<&str> = hard[..hard.len() - 2].iter().map(String::as_str).collect();
    args.extend(without_clients);
    let (out, _) = crate::mpi::mpirun(&sb, ranks, &args, std::time::Duration::from_secs(120));
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["conditions"]["clients"], ranks);
    let kept = sb.leftovers();
    assert_eq!(kept.len(), 1, "{kept:?}");
    each_transfer_is_its_owners(&kept[0], ranks, segments);
    assert_eq!(cells(&run)[0]["bytes"].as_u64(), Some(ranks as u64 * segments * TRANSFER));
}

#[test]
fn ior_hard_reads_back_what_each_client_owns() {
    let sb = Sandbox::new();
    let args = ior_hard_args("read", 2, 30);
    let run = access(&sb, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let cell = &cells(&run)[0];
    assert_eq!(cell["metrics"]["read_bytes"].as_u64(), Some(2 * 30 * TRANSFER), "{cell}");
    assert_eq!(cell["metrics"]["write_bytes"].as_u64(), Some(0));
    assert!(sb.leftovers().is_empty(), "the shared file goes with the working folder");
}

#[test]
fn a_shared_file_refuses_what_it_cannot_be() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let refused = |args: &[&str], needle: &str| {
        let mut all = vec!["run", "access", "--target", t, "--bytes", "1m", "--file-size", "1m"];
        all.extend_from_slice(args);
        assert_usage_error(&sb.run(&all), needle);
    };
    refused(&["--shared-file", "striped"], "give interleaved");
    refused(&["--shared-file", "interleaved", "--random", "100"], "give --random 0");
    refused(&["--shared-file", "interleaved", "--rw", "write", "--align", "512"], "leave --align out");
    refused(&["--shared-file", "interleaved", "--rw", "write", "--verify"], "--verify");
    // Refused before any connection: nothing listens at port 9 of this host.
    let on_server =
        ["run", "access", "--target", "nfs://127.0.0.1:9/export", "--shared-file", "interleaved", "--rw", "write"];
    assert_usage_error(&sb.run(&on_server), "--shared-file: on a server");
    assert_eq!(stored_cells(&sb), 0, "nothing ran");
}

/// examples/io500.toml.
fn example() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples").join("io500.toml")
}

/// The rate a step's stored run gives its IO500 phase, computed here from `show --json`: an
/// access run's bytes a second in GiB/s, a metadata run's phase at IO500's rule in kIOPS.
fn phase_score_from_the_store(sb: &Sandbox, step: &str, run: i64) -> f64 {
    let shown = sb.show_json(run);
    let cells = cells(&shown);
    if step.starts_with("ior-") {
        assert_eq!(cells.len(), 1, "{step}: one cell");
        return cells[0]["kib_per_sec"].as_f64().unwrap() * 1024.0 / (1u64 << 30) as f64;
    }
    let phase = match step.rsplit('-').next().unwrap() {
        "write" => "file-create",
        "stat" => "file-stat",
        "read" => "file-read",
        "find" => "find",
        _ => "file-remove",
    };
    let cell = cells.iter().find(|c| c["test"] == phase).unwrap_or_else(|| panic!("{step}: no {phase} cell"));
    cell["metrics"]["phase"]["rate_all_over_slowest"].as_f64().unwrap() / 1000.0
}

fn geometric_mean(scores: &[f64]) -> f64 {
    (scores.iter().map(|s| s.ln()).sum::<f64>() / scores.len() as f64).exp()
}

#[test]
fn the_io500_example_runs_small_and_stores_every_phase_and_the_score() {
    let sb = Sandbox::new();
    let target = sb.target();
    let started = std::time::Instant::now();
    let out = sb
        .cmd()
        .env("IO500_TARGET", &target)
        .args(["study", "run", example().to_str().unwrap(), "--scale", "small"])
        .output()
        .unwrap();
    assert_success(&out);
    let (stdout, _) = text(&out);
    println!("{stdout}\n(in {:.1} s)", started.elapsed().as_secs_f64());
    assert!(stdout.contains("== IO500 score of configuration 'io500'"), "{stdout}");
    assert!(stdout.contains("IO500 score: iomatrix's run of IO500's phases, not an official IO500 result"));
    assert_eq!(stdout.lines().filter(|l| l.starts_with("[RESULT]")).count(), 12, "every phase run: {stdout}");
    assert!(!stdout.contains("left out of the means"), "{stdout}");
    assert!(sb.leftovers().is_empty(), "every step's working folder removed: {:?}", sb.leftovers());

    let shown = sb.run(&["study", "show", "io500", "--json"]);
    assert_success(&shown);
    let doc: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 12, "{doc}");
    let score = &doc["io500"][0]["score"];
    assert_eq!(score["label"], "iomatrix's run of IO500's phases, not an official IO500 result");
    let (mut bw, mut md) = (Vec::new(), Vec::new());
    for (step, phase) in steps.iter().zip(score["phases"].as_array().unwrap()) {
        let name = step["step"].as_str().unwrap();
        assert_eq!(step["status"], "done", "{step}");
        assert_eq!(phase["phase"], name, "IO500's order is the example's");
        let stored = phase_score_from_the_store(&sb, name, step["run_id"].as_i64().unwrap());
        let scored = phase["score"].as_f64().unwrap();
        assert!(stored > 0.0 && (scored - stored).abs() <= stored * 1e-9, "{name}: {scored} against {stored}");
        if name.starts_with("ior-") {
            bw.push(stored);
        } else {
            md.push(stored);
        }
    }
    let (want_bw, want_md) = (geometric_mean(&bw), geometric_mean(&md));
    let close = |key: &str, want: f64| {
        let got = score[key].as_f64().unwrap();
        assert!((got - want).abs() <= want * 1e-9, "{key}: {got} against {want}");
    };
    close("bandwidth", want_bw);
    close("metadata", want_md);
    close("total", (want_bw * want_md).sqrt());
    assert_eq!(score["missing"], serde_json::json!([]));
    // find walked mdtest-hard's tree: 300 files of each client, 101 and 201 of each named *01*.
    let find = steps.iter().find(|s| s["step"] == "find").unwrap();
    let run = sb.show_json(find["run_id"].as_i64().unwrap());
    let cell = cells(&run).into_iter().find(|c| c["test"] == "find").expect("a find cell");
    assert_eq!(cell["metrics"]["phase"]["found"], 4, "{cell}");
    the_score_is_stored_and_shown_as_stored(&sb, &doc);
}

/// The score of a finished study as its table holds it: (config, kind, JSON).
fn stored_scores(sb: &Sandbox) -> Vec<(String, String, Value)> {
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let mut stmt = conn.prepare("SELECT config, kind, score_json FROM study_scores ORDER BY study_id, seq").unwrap();
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))).unwrap();
    rows.map(|r| r.unwrap()).map(|(c, k, json)| (c, k, serde_json::from_str(&json).unwrap())).collect()
}

/// The finished study stored its score (read back from the table), and `study show` shows that
/// one, said to be stored, also once a step's run is gone; without it, one computed now, said so.
fn the_score_is_stored_and_shown_as_stored(sb: &Sandbox, doc: &Value) {
    let stored = stored_scores(sb);
    assert_eq!(stored.len(), 1, "one configuration, one score: {stored:?}");
    let (config, kind, json) = &stored[0];
    assert_eq!((config.as_str(), kind.as_str()), ("io500", "io500"));
    let shown = &doc["io500"][0];
    assert_eq!(shown["stored"], true, "{shown}");
    assert!(shown["stored_at"].as_str().is_some_and(|at| !at.is_empty()), "{shown}");
    assert_eq!(json["score"], shown["score"], "show --json carries the stored score");
    assert_eq!(json["score"]["label"], "iomatrix's run of IO500's phases, not an official IO500 result");
    assert_eq!(json["score"]["phases"].as_array().map(Vec::len), Some(12), "{json}");
    for key in ["total", "bandwidth", "metadata"] {
        assert!(json["score"][key].as_f64().is_some_and(|x| x > 0.0), "{key}: {json}");
    }
    assert_eq!(json["unscored"], serde_json::json!([]));
    // A step's run removed since: the stored score is what is shown, not one computed again.
    let find = doc["steps"].as_array().unwrap().iter().find(|s| s["step"] == "find").unwrap();
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    assert_eq!(conn.execute("DELETE FROM runs WHERE id = ?1", [find["run_id"].as_i64().unwrap()]).unwrap(), 1);
    drop(conn);
    let out = sb.run(&["study", "show", "io500"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("stored with the study when it finished ("), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("[RESULT]")).count(), 12, "{stdout}");
    let total = format!("TOTAL {:.6}", json["score"]["total"].as_f64().unwrap());
    assert!(stdout.contains(&total), "the stored total, {total}: {stdout}");
    assert!(stdout.contains("IO500 score: iomatrix's run of IO500's phases, not an official IO500 result"));
    // As a database from before scores were stored holds it: computed now, and said so.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    conn.execute("DELETE FROM study_scores", []).unwrap();
    drop(conn);
    let out = sb.run(&["study", "show", "io500"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("computed now from the steps' stored runs, not stored"), "{stdout}");
    assert!(stdout.contains("left out of the means (not run, or scored 0): find"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("[RESULT]")).count(), 11, "{stdout}");
    assert!(stdout.contains("not an official IO500 result"), "{stdout}");
    let doc: Value = serde_json::from_slice(&sb.run(&["study", "show", "io500", "--json"]).stdout).unwrap();
    assert_eq!(doc["io500"][0]["stored"], false, "{doc}");
    assert!(doc["io500"][0].get("stored_at").is_none(), "{doc}");
}

#[test]
fn a_compare_of_the_io500_study_on_tmpfs_and_ext4_shows_every_phase_with_verdicts() {
    let Some(tmpfs) = Mount::virtual_fs("tmpfs", "size=256m") else { return };
    let Some(ext4) = Mount::ext4(384) else { return };
    let sb = Sandbox::new();
    // The example with two configurations, a file system each, compared; 4 runs a side give the
    // rank test its level.
    let written = std::fs::read_to_string(example()).unwrap();
    let one = "[[config]]\nname = \"io500\"\ntarget = \"${IO500_TARGET:-/var/tmp}\"\nargs = { clients = 2 }\n";
    assert!(written.contains(one), "the example's configuration moved: update this test");
    let two = format!(
        "repeat = 4\n\n[[config]]\nname = \"tmpfs\"\ntarget = \"{}\"\nargs = {{ clients = 2 }}\n\n[[config]]\nname = \
         \"ext4\"\ntarget = \"{}\"\nargs = {{ clients = 2 }}\n\n[[compare]]\na = \"tmpfs\"\nb = \"ext4\"\n",
        tmpfs.point.display(),
        ext4.point.display()
    );
    let study = sb.dir.path().join("io500-two.toml");
    std::fs::write(&study, written.replace(one, &two)).unwrap();
    let started = std::time::Instant::now();
    let out = sb.run(&["study", "run", study.to_str().unwrap(), "--scale", "small"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    println!("{stdout}\n(in {:.1} s)", started.elapsed().as_secs_f64());
    let sections: Vec<&str> = stdout.split("\n== ").skip(1).collect();
    let steps = [
        "ior-easy-write",
        "mdtest-easy-write",
        "ior-hard-write",
        "mdtest-hard-write",
        "find",
        "ior-easy-read",
        "mdtest-easy-stat",
        "ior-hard-read",
        "mdtest-hard-stat",
        "mdtest-easy-delete",
        "mdtest-hard-read",
        "mdtest-hard-delete",
    ];
    let verdicts = ["faster", "slower", "within noise", "no verdict", "less CPU", "more CPU"];
    for step in steps {
        let title = format!("ext4 against tmpfs, step '{step}' (iomatrix compare");
        let section = sections.iter().find(|s| s.starts_with(&title)).unwrap_or_else(|| panic!("no compare of {step}"));
        assert!(section.contains("target.path:"), "{step}: the two file systems are said: {section}");
        let figures: Vec<&str> = section
            .lines()
            .skip_while(|l| !l.starts_with("metric"))
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .collect();
        assert!(!figures.is_empty(), "{step}: no figures: {section}");
        for line in &figures {
            assert!(verdicts.iter().any(|v| line.contains(v)), "{step}: a figure without a verdict: {line}");
        }
        if step.starts_with("ior-") {
            // Access repeats its cells: the rank test judges every figure.
            assert!(figures.iter().all(|l| l.contains("(p=")), "{step}: judged by the rank test: {section}");
        }
        let phase_row = match step.rsplit('-').next().unwrap() {
            "write" if step.starts_with("mdtest") => Some("file-create (ops/s)"),
            "stat" => Some("file-stat (ops/s)"),
            "read" if step.starts_with("mdtest") => Some("file-read (ops/s)"),
            "delete" => Some("file-remove (ops/s)"),
            "find" => Some("find (ops/s)"),
            _ => None,
        };
        if let Some(row) = phase_row {
            // repeat = 4 is four iterations of each metadata step: four samples, judged by the rank test.
            let line = figures.iter().find(|l| l.starts_with(row));
            assert!(line.is_some_and(|l| l.contains("(p=")), "{step}: its phase's row, judged: {section}");
        }
    }
    for config in ["tmpfs", "ext4"] {
        assert!(stdout.contains(&format!("== IO500 score of configuration '{config}'")), "{stdout}");
    }
    assert_eq!(stdout.matches("[SCORE ] Bandwidth").count(), 2, "{stdout}");
}

/// find's count on the tree the metadata suite made, against find(1) on the same tree (kept).
#[test]
fn the_find_phase_counts_what_find_counts_on_the_same_tree() {
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        "run",
        "metadata",
        "--target",
        target.to_str().unwrap(),
        "--files-only",
        "--write-bytes",
        "3901",
        "--items",
        "1200",
        "--clients",
        "2",
        "--phases",
        "file-create,find",
        "--keep",
    ];
    let out = sb.run(&args);
    assert_success(&out);
    let run = sb.last_run();
    let cell = cells(&run).into_iter().find(|c| c["test"] == "find").expect("a find cell");
    let phase = &cell["metrics"]["phase"];
    let kept = sb.leftovers();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let count = |args: &[&str]| {
        let out = std::process::Command::new("find").arg(&kept[0]).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().count() as u64
    };
    // Below the iteration's folder, as the phase walks it.
    let matched = count(&["-path", "*test-dir.0-0/*", "-type", "f", "-size", "3901c", "-name", "*01*"]);
    let examined = count(&["-path", "*test-dir.0-0/*"]);
    println!("find phase: {phase}; find(1): {matched} of {examined}");
    assert_eq!(phase["found"].as_u64(), Some(matched));
    assert_eq!(phase["items"].as_u64(), Some(examined), "every entry examined is an item");
    // 1,200 files of each client: 101, 201, ..., 1101 and 1010..1019 named *01*.
    assert_eq!(matched, 2 * (11 + 10));
    assert!(phase["rate_all_over_slowest"].as_f64().unwrap() > 0.0);
    let refused = sb.run(&["run", "metadata", "--target", target.to_str().unwrap(), "--phases", "find"]);
    assert_usage_error(&refused, "add file-create");
}

/// A study with IO500's score that does not finish stores none (`study show` computes it and says
/// so); resumed to the end, it stores it.
#[test]
fn an_unfinished_study_stores_no_score_and_one_resumed_to_the_end_does() {
    let sb = Sandbox::new();
    let target = sb.target();
    let marker = sb.dir.path().join("ready");
    let study = sb.dir.path().join("find-only.toml");
    let file = format!(
        "version = 1\nname = \"find-only\"\nscore = \"io500\"\n\n[[config]]\nname = \"here\"\ntarget = \"{}\"\nsetup = \
         \"test -e {}\"\n\n[[step]]\nname = \"find\"\nsuite = \"metadata\"\nargs = {{ files-only = true, write-bytes = \
         \"3901\", items = 200, phases = \"file-create,find\" }}\n",
        target.display(),
        marker.display()
    );
    std::fs::write(&study, file).unwrap();
    let run = || sb.run(&["study", "run", study.to_str().unwrap()]);
    let show = |json: bool| {
        let out = sb.run(&if json {
            vec!["study", "show", "find-only", "--json"]
        } else {
            vec!["study", "show", "find-only"]
        });
        assert_success(&out);
        text(&out).0
    };
    // The configuration's setup fails: the step does not run, the study is incomplete (exit 3).
    let first = run();
    assert_eq!(first.status.code(), Some(3), "{:?}", text(&first));
    assert!(stored_scores(&sb).is_empty(), "an unfinished study stores no score");
    let shown = show(false);
    assert!(shown.contains("computed now from the steps' stored runs, not stored"), "{shown}");
    assert!(shown.contains("not an official IO500 result"), "{shown}");
    let doc: Value = serde_json::from_str(&show(true)).unwrap();
    assert_eq!(doc["io500"][0]["stored"], false, "{doc}");
    // Resumed with its setup satisfied: the step runs, the study is complete, its score stored.
    std::fs::write(&marker, "").unwrap();
    let second = run();
    assert_success(&second);
    let stored = stored_scores(&sb);
    assert_eq!(stored.len(), 1, "{stored:?}");
    let (config, kind, json) = &stored[0];
    assert_eq!((config.as_str(), kind.as_str()), ("here", "io500"));
    let phases = json["score"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "{json}");
    assert_eq!(phases[0]["phase"], "find");
    assert!(json["score"]["metadata"].as_f64().is_some_and(|x| x > 0.0), "{json}");
    assert_eq!(json["score"]["missing"].as_array().map(Vec::len), Some(11), "the other phases are named: {json}");
    let shown = show(false);
    assert!(shown.contains("stored with the study when it finished ("), "{shown}");
    let doc: Value = serde_json::from_str(&show(true)).unwrap();
    assert_eq!((&doc["io500"][0]["stored"], &doc["io500"][0]["score"]), (&Value::Bool(true), &json["score"]));
}
