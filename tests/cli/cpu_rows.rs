//! Issue 34: %CPU beside every figure a suite measures it for. Seed 002 prints the CPU load
//! beside each Bonnie MB/s and concludes "VMI kernel: lower CPU load"; compare, sweep and report
//! must carry it, not only `show`.
use crate::helpers::*;
use crate::stored::*;
use serde_json::Value;

/// A small real Bonnie run (seed 002's tests: per-char and block write, rewrite, per-char and
/// block read, seeks), labelled as one of seed 002's variants.
fn bonnie_run(sb: &Sandbox, variant: &str) -> i64 {
    let target = sb.target();
    let label = format!("variant={variant}");
    assert_success(&sb.run(&[
        "run",
        "bonnie",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "2m",
        "--ram",
        "1m",
        "--files",
        "1",
        "--fast",
        "--label",
        &label,
    ]));
    sb.last_run()["run"]["id"].as_i64().unwrap()
}

/// Each stored cell's %CPU by its test.
fn cpu_by_test(run: &Value) -> Vec<(String, f64)> {
    cells(run).iter().map(|c| (c["test"].as_str().unwrap().to_string(), c["cpu_percent"].as_f64().unwrap())).collect()
}

#[test]
fn compare_puts_each_bonnie_figures_cpu_beside_it_with_its_change_and_sweep_and_report_carry_it() {
    let sb = Sandbox::new();
    let (a, b) = (bonnie_run(&sb, "nss"), bonnie_run(&sb, "nss-vmi"));
    let (cpu_a, cpu_b) = (cpu_by_test(&sb.show_json(a)), cpu_by_test(&sb.show_json(b)));
    let out = sb.run(&["compare", "variant=nss", "variant=nss-vmi"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    let lines: Vec<&str> = stdout.lines().collect();
    let mut beside = 0;
    for (i, line) in lines.iter().enumerate() {
        let unit = ["(KB/s)", "(files/s)", "(seeks/s)"].into_iter().find(|u| line.contains(&format!(" {u} ")));
        let Some(unit) = unit else { continue };
        let cell = line.split(&format!(" {unit}")).next().unwrap();
        // The row after each figure is the same cell's %CPU, with A, B and its % change.
        let next = lines[i + 1];
        assert!(next.starts_with(&format!("{cell} %CPU (%)")), "after {line}:\n{stdout}");
        let words: Vec<&str> = next.split_whitespace().collect();
        let change = words.iter().find(|w| w.ends_with('%') && (w.starts_with('+') || w.starts_with('-')));
        assert!(change.is_some(), "a % change on {next}");
        beside += 1;
    }
    assert_eq!(beside, 10, "a %CPU row after each of Bonnie's 10 figures:\n{stdout}");
    // The JSON rows hold the stored figures: A's and B's %CPU of each test, and their change.
    let doc = json_of(&sb.run(&["compare", "variant=nss", "variant=nss-vmi", "--json"]));
    let rows: Vec<&Value> = doc["comparison"]["scalars"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["unit"] == "%" && r["metric"].as_str().unwrap().ends_with(" %CPU"))
        .collect();
    assert_eq!(rows.len(), cpu_a.len(), "a %CPU row per measured figure: {rows:?}");
    for r in rows {
        let test = r["metric"].as_str().unwrap().split(' ').next().unwrap();
        let stored = |cpu: &[(String, f64)]| cpu.iter().find(|(t, _)| t == test).unwrap().1;
        let (va, vb) = (r["a"].as_f64().unwrap(), r["b"].as_f64().unwrap());
        assert!(close(va, stored(&cpu_a)) && close(vb, stored(&cpu_b)), "{r}");
        assert!(close(r["change_pct"].as_f64().unwrap(), (vb - va) / va * 100.0), "{r}");
    }
    // sweep: the %CPU of each row at each level, in a table of its own.
    let (stdout, _) = text(&sb.run(&["sweep", "variant=nss", "variant=nss-vmi", "--by", "variant"]));
    let at = stdout.find("%CPU per level").unwrap_or_else(|| panic!("{stdout}"));
    assert!(stdout[at..].lines().any(|l| l.starts_with("write 2m/8k ")), "{stdout}");
    // report: the compared %CPU rows in the group's table.
    let out = sb.run(&["report", "variant=nss", "variant=nss-vmi", "-o", "r.md"]);
    assert_success(&out);
    let md = std::fs::read_to_string(sb.dir.path().join("r.md")).unwrap();
    assert!(md.contains("write 2m/8k %CPU"), "{md}");
}
