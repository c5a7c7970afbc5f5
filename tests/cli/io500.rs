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

#[test]
fn ior_hard_writes_every_clients_transfers_interleaved_in_one_shared_file() {
    let (clients, segments) = (3usize, 25u64);
    let sb = Sandbox::new();
    let mut args = ior_hard_args("write", clients, segments);
    args.push("--keep".to_string());
    let run = access(&sb, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let kept = sb.leftovers();
    assert_eq!(kept.len(), 1, "one working folder: {kept:?}");
    let file = std::fs::read(kept[0].join("access-shared.dat")).expect("the shared file");
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
    let said = run["run"]["conditions"]["shared_file"].as_str().expect("the condition is stored");
    assert!(said.contains("(k x N + r) x block size"), "{said}");
    let shown = sb.run(&["show", &run["run"]["id"].to_string()]);
    assert_success(&shown);
    assert!(text(&shown).0.contains("one file shared by every client"), "{}", text(&shown).0);
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
