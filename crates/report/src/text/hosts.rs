//! What `show` says of the hosts a run's MPI ranks ran on (`environment.client_hosts`, each
//! with its `environment`: CPU, RAM, kernel, folder, interface and link) and of the file server
//! behind its target (`environment.server`: the lab's facts or `--describe server=FILE`).
//! Runs stored before these were recorded read "not recorded".

use iomatrix_core::human;
use iomatrix_core::text::printable;
use iomatrix_store::reader::{Fact, StoredEnvironment, StoredHost};
use std::fmt::Write;

/// The hosts and the server, a line each; empty for a run with neither (threads on one host,
/// no server described).
pub fn hosts_text(environment: &StoredEnvironment) -> String {
    let mut out = String::new();
    if let Some(ranks) = environment.client_hosts.as_ref().filter(|r| !r.is_empty()) {
        let _ = writeln!(out, "hosts: {} rank(s)", ranks.len());
        for r in ranks {
            let _ = writeln!(
                out,
                "  rank {} on {} ({}): {}",
                r.rank.json(),
                printable(r.host.text().unwrap_or("?")),
                printable(r.address.text().unwrap_or("?")),
                host_line(r.environment.as_ref())
            );
        }
    }
    if let Some(server) = &environment.server {
        let facts: Vec<String> = server
            .facts
            .iter()
            .map(|(k, v)| format!("{}={}", printable(k), printable(v.text().unwrap_or("?"))))
            .collect();
        let _ = writeln!(
            out,
            "server: described by {}: {}",
            printable(server.described_by.text().unwrap_or("?")),
            if facts.is_empty() { "no facts".to_string() } else { facts.join("; ") }
        );
    }
    out
}

/// A fact as `show` writes it: text made printable, anything else as its JSON, "unknown".
fn text(fact: &Fact) -> String {
    match fact {
        Fact::Text(s) => printable(s).into_owned(),
        other => other.shown(),
    }
}

/// One host's facts in a line, or "not recorded".
pub fn host_line(env: Option<&StoredHost>) -> String {
    let Some(env) = env else {
        return "not recorded (stored before hosts were described)".into();
    };
    let mut line = format!(
        "{}, {} CPUs, RAM {}, kernel {}",
        text(&env.cpu_model),
        text(&env.cpu_count),
        env.ram_bytes.filter(|b| *b > 0).map_or("unknown".into(), human::bytes),
        text(&env.kernel)
    );
    if let Some(folder) = &env.folder {
        let _ = write!(
            line,
            "; folder {} ({} on {})",
            text(&folder.path),
            text(&folder.fs_type),
            text(&folder.mount_source)
        );
    }
    if let Some(nic) = &env.nic {
        let speed = nic.speed_mbps.map_or("speed unknown".into(), |s| format!("{s} Mbit/s"));
        let mtu = nic.mtu.map_or("MTU unknown".into(), |m| format!("MTU {m}"));
        let _ = write!(
            line,
            "; NIC {} toward {} ({}, {speed}, {mtu}), link {}",
            text(&nic.name),
            text(&nic.toward),
            text(&nic.driver),
            match &nic.receive_rate {
                Some(receive) => format!("{} out, {receive} in", text(&nic.link_rate)),
                None => text(&nic.link_rate),
            }
        );
    } else {
        line += "; NIC not recorded";
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_rank_gets_a_line_and_an_older_run_says_not_recorded() {
        let env = json!({"client_hosts": [
            {"rank": 0, "host": "h1", "address": "10.0.0.1", "environment": {
                "kernel": "6.18", "cpu_model": "Xeon", "cpu_count": 2, "ram_bytes": 1u64 << 30,
                "folder": {"path": "nfs://s/e", "fs_type": "nfs (iomatrix client)", "mount_source": "s"},
                "nic": {"name": "eth0", "toward": "10.0.0.9", "speed_mbps": 10000, "mtu": 1500, "driver": "veth",
                        "link_rate": "10Mbit"}}},
            {"rank": 1, "host": "h2", "address": "10.0.0.2"}],
            "server": {"described_by": "--describe server=s.txt", "facts": {"ram_bytes": "64g"}}});
        let text = hosts_text(&StoredEnvironment::of(&env));
        assert!(text.starts_with("hosts: 2 rank(s)\n"), "{text}");
        assert!(text.contains("rank 0 on h1 (10.0.0.1): Xeon, 2 CPUs, RAM 1"), "{text}");
        assert!(text.contains("NIC eth0 toward 10.0.0.9 (veth, 10000 Mbit/s, MTU 1500), link 10Mbit"), "{text}");
        assert!(text.contains("rank 1 on h2 (10.0.0.2): not recorded"), "{text}");
        assert!(text.contains("server: described by --describe server=s.txt: ram_bytes=64g"), "{text}");
        assert_eq!(
            hosts_text(&StoredEnvironment::of(&json!({"kernel": "6.18"}))),
            "",
            "a run of threads on one host adds nothing"
        );
    }
}
