//! Bad input gets one clear line and exit code 2, never a panic.
use crate::helpers::*;

fn iozone(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let target = sb.target();
    let mut all = vec!["run", "iozone", "--target", target.to_str().unwrap()];
    all.extend_from_slice(args);
    sb.run(&all)
}

#[test]
fn each_bad_input_names_the_problem() {
    let sb = Sandbox::new();
    assert_usage_error(&sb.run(&["run", "iozone", "--target", "/no/such/dir", "--files", "64k"]), "/no/such/dir");
    let file = sb.dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    assert_usage_error(&sb.run(&["run", "iozone", "--target", file.to_str().unwrap()]), "is not a folder");
    assert_usage_error(&iozone(&sb, &["--files", "64k", "--records", "1m"]), "larger than file size 64k");
    assert_usage_error(&iozone(&sb, &["--tests", "write,reed"]), "unknown test 'reed'");
    assert_usage_error(&iozone(&sb, &["--files", "64q"]), "'64q' is not a size");
    assert_usage_error(&iozone(&sb, &["--files", "-1k"]), "negative");
    assert_usage_error(&iozone(&sb, &["--records", "16m..4k"]), "not a range");
    assert_usage_error(&iozone(&sb, &["--clients", "0"]), "--clients 0");
    assert_usage_error(&iozone(&sb, &["--backend", "aio"]), "unknown backend 'aio'");
    assert_usage_error(&iozone(&sb, &["--backend", "mmap", "--direct"]), "mmap");
    assert_usage_error(&iozone(&sb, &["--label", "novalue"]), "KEY=VALUE");
    assert_usage_error(&iozone(&sb, &["--files", "100k", "--records", "64k"]), "not a whole number");
    assert_usage_error(&iozone(&sb, &["--files", "1t"]), "free, but this plan needs");
    assert_usage_error(&sb.run(&["run", "iozone", "--no-such-flag"]), "--no-such-flag");
    // Nothing was written to the target by any of these.
    assert_eq!(std::fs::read_dir(sb.target()).unwrap().count(), 0);
}
