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
