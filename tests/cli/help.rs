//! The top-level help names no capability as missing that a subcommand has.
use crate::helpers::*;

#[test]
fn top_level_help_names_nothing_missing_that_a_subcommand_has() {
    let sb = Sandbox::new();
    let top = text(&sb.run(&["--help"])).0;
    // What a subcommand's own help offers, and the words the top level must use for it.
    let offered: [(&[&str], &str, &str); 5] = [
        (&["run", "iozone", "--help"], "nfs://", "nfs://"),
        (&["run", "iozone", "--help"], "smb://", "smb://"),
        (&["run", "iozone", "--help"], "--verify", "--verify"),
        (&["bonnie", "-h"], "--verify", "--verify"),
        (&["run", "access", "--help"], "--clients", "--clients"),
    ];
    for (args, in_sub, in_top) in offered {
        let sub = text(&sb.run(args)).0;
        assert!(sub.contains(in_sub), "`iomatrix {}` no longer offers {in_sub}: {sub}", args.join(" "));
        assert!(top.contains(in_top), "the top-level help does not name {in_top}, which {} has", args.join(" "));
    }
    let lower = top.to_lowercase();
    for missing in ["not yet", "not built", "unsupported", "not supported", "missing", "todo", "planned"] {
        assert!(!lower.contains(missing), "the top-level help says '{missing}': {top}");
    }
}

/// The subcommands `iomatrix run --help` lists (its "Commands:" section), help left out.
fn run_suites(sb: &Sandbox) -> Vec<String> {
    let help = text(&sb.run(&["run", "--help"])).0;
    let commands = help.split("Commands:").nth(1).expect("run --help lists its commands");
    commands
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A name starts at the third column; deeper lines continue the text before them.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// A help text's flags by the heading they sit under, in order: ("Access specs", ["--bs", ...]).
fn sections(help: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in help.lines() {
        if let Some(heading) = line.strip_suffix(':').filter(|h| !h.starts_with(' ') && !h.is_empty()) {
            out.push((heading.to_string(), Vec::new()));
        } else if let (Some(flag), Some(last)) = (line.trim_start().strip_prefix("--"), out.last_mut()) {
            if line.starts_with("  ") && !line.starts_with("          ") {
                let name = flag.split([' ', '=', '<', '[']).next().unwrap_or_default();
                last.1.push(format!("--{name}"));
            }
        } else if let (Some(flag), Some(last)) = (line.trim_start().strip_prefix('-'), out.last_mut()) {
            // "-h, --help"
            if line.starts_with("  -") && flag.contains("--") {
                let name = flag.split("--").nth(1).unwrap_or_default().split(' ').next().unwrap_or_default();
                last.1.push(format!("--{name}"));
            }
        }
    }
    out
}

#[test]
fn every_suites_own_flags_come_first_under_its_name() {
    let sb = Sandbox::new();
    let shared_headings = ["Options", "Target", "Output", "Clients", "Noise", "Data", "Arguments", "Usage"];
    // Flags each suite owns, by suite; every one must sit under the first heading, the suite's.
    let own: [(&str, &[&str]); 6] = [
        ("access", &["--bs", "--qd", "--read", "--random", "--file-size", "--direct", "--ramp", "--distribution"]),
        ("iozone", &["--files", "--records", "--tests", "--direct"]),
        ("bonnie", &["--size", "--chunk", "--direct"]),
        ("fileserver", &["--connections", "--sizes", "--record"]),
        ("backup", &["--read-size"]),
        ("personality", &["--scale", "--connections"]),
    ];
    let suites = run_suites(&sb);
    assert!(suites.len() >= own.len(), "run --help lists {suites:?}");
    for suite in &suites {
        let help = text(&sb.run(&["run", suite, "--help"])).0;
        let sections = sections(&help);
        let first = sections
            .iter()
            .find(|(h, flags)| flags.iter().any(|f| f != "--help") && h != "Arguments")
            .unwrap_or_else(|| panic!("run {suite} --help has no flags: {help}"));
        assert!(
            !shared_headings.contains(&first.0.as_str()),
            "run {suite} --help: the first flags sit under '{}', not under the suite's name:\n{help}",
            first.0
        );
        let noise = sections.iter().filter(|(h, _)| h == "Noise").flat_map(|(_, f)| f.clone()).collect::<Vec<_>>();
        for flag in &noise {
            assert!(
                ["--repeat", "--tolerance", "--max-repeats"].contains(&flag.as_str()),
                "run {suite} --help: {flag} sits under Noise:\n{help}"
            );
        }
        let clients = sections.iter().filter(|(h, _)| h == "Clients").flat_map(|(_, f)| f.clone()).collect::<Vec<_>>();
        assert!(clients.contains(&"--clients".to_string()), "run {suite} --help: --clients under Clients:\n{help}");
        if let Some((_, flags)) = own.iter().find(|(name, _)| name == suite) {
            for flag in *flags {
                assert!(
                    first.1.contains(&flag.to_string()),
                    "run {suite} --help: {flag} is not under '{}':\n{help}",
                    first.0
                );
            }
        }
    }
}

#[test]
fn the_top_level_help_names_every_suite() {
    let sb = Sandbox::new();
    let top = text(&sb.run(&["--help"])).0;
    let suites = run_suites(&sb);
    assert!(suites.iter().any(|s| s == "personality"), "{suites:?}");
    for suite in suites {
        assert!(top.contains(&format!("`run {suite}`")), "iomatrix --help does not name `run {suite}`:\n{top}");
    }
}
