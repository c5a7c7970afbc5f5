//! `iomatrix history RUN`: one figure over time for the runs of one setup on one target, a line
//! per group of consecutive runs with the same labels, and its JSON document.

use crate::table::{Column, Table};
use iomatrix_analysis::{History, HistoryPoint};
use iomatrix_core::human;
use iomatrix_core::text::printable;
use serde_json::{json, Value};

/// Version of the history document; see docs/json.md.
pub const HISTORY_SCHEMA: &str = "iomatrix.history/1";

/// The history as its JSON document (`history --json`).
pub fn history_json(history: &History) -> Value {
    let mut doc = json!({ "schema": HISTORY_SCHEMA });
    if let (Some(doc), Ok(Value::Object(fields))) = (doc.as_object_mut(), serde_json::to_value(history)) {
        doc.extend(fields);
    }
    doc
}

/// The history as `history` prints it: what it is of, the table of groups, the notes, the cells
/// left out, and the other figures `--figure` can pick.
pub fn history_text(history: &History) -> String {
    let mut out = format!(
        "history of run #{}: {} on {}, {} run(s) of the same setup in {} group(s) of consecutive runs with the same \
         labels\n",
        history.run,
        history.suite,
        history.target.as_deref().map_or_else(|| "a target not recorded".to_string(), |t| printable(t).into_owned()),
        history.run_count(),
        history.points.len()
    );
    out += &format!(
        "figure: {} ({}, {} is better); band: the lowest to the highest sample; verdict: compare's rank test \
         against the group before\n\n",
        history.figure,
        history.unit,
        if history.higher_is_better { "higher" } else { "lower" }
    );
    out += &groups_table(history);
    out += &notes(history);
    out += &left_out(history);
    let others: Vec<&str> =
        history.figures.iter().map(String::as_str).filter(|f| *f != history.figure.as_str()).collect();
    if !others.is_empty() {
        out += &format!("\nother figures (--figure NAME): {}\n", others.join("; "));
    }
    out
}

fn groups_table(history: &History) -> String {
    let mut table = Table::new(vec![
        Column::fit_right("group"),
        Column::left("started (UTC)", 20).gap("  "),
        Column::fit_left("runs").gap("  "),
        Column::fit_left("labels").gap("  "),
        Column::fit_right("median").gap("  "),
        Column::fit_right("band").gap("  "),
        Column::fit_right("spread").gap("  "),
        Column::free("vs previous group").gap("  "),
    ]);
    for (i, p) in history.points.iter().enumerate() {
        let first = p.runs.first().map_or(String::new(), |r| r.started_at.clone());
        let runs = run_words(p);
        let labels: Vec<String> = p.labels.iter().map(|(k, v)| format!("{}={}", printable(k), printable(v))).collect();
        let (median, band, spread) = match p.stats {
            Some(s) => (
                human::significant(s.median),
                format!("{}..{}", human::significant(s.low), human::significant(s.high)),
                format!("{}%", human::fixed(s.spread_pct, 1)),
            ),
            None => ("-".to_string(), "-".to_string(), "-".to_string()),
        };
        table.row([
            (i + 1).to_string(),
            first,
            runs,
            if labels.is_empty() { "-".to_string() } else { labels.join(" ") },
            median,
            band,
            spread,
            verdict_words(i, p),
        ]);
    }
    table.render()
}

/// A group's runs: `#12 #13`, a run of three or more consecutive ids as `#12..#40`, a partial
/// run as `#41 (partial)` (a group of many repeats stays one short line).
fn run_words(p: &HistoryPoint) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut i = 0;
    while i < p.runs.len() {
        let r = &p.runs[i];
        if r.status != "complete" {
            words.push(format!("#{} ({})", r.id, r.status));
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < p.runs.len() && p.runs[j + 1].status == "complete" && p.runs[j + 1].id == p.runs[j].id + 1 {
            j += 1;
        }
        match j - i {
            0 => words.push(format!("#{}", r.id)),
            1 => words.push(format!("#{} #{}", r.id, p.runs[j].id)),
            _ => words.push(format!("#{}..#{}", r.id, p.runs[j].id)),
        }
        i = j + 1;
    }
    words.join(" ")
}

/// The verdict against the group before, with the median's change; why there is none.
fn verdict_words(index: usize, p: &HistoryPoint) -> String {
    if index == 0 {
        return "-".to_string();
    }
    match (&p.verdict, p.change_pct, &p.no_samples) {
        (Some(v), Some(change), _) => format!("{} {}", human::signed_percent(change), v.describe()),
        (Some(v), None, _) => v.describe(),
        (None, _, Some(why)) => format!("no samples: {why}"),
        (None, _, None) => "no verdict: the group before has no samples".to_string(),
    }
}

fn notes(history: &History) -> String {
    let mut out = String::new();
    for r in history.points.iter().flat_map(|p| &p.runs) {
        if let Some(note) = &r.note {
            out += &format!("  #{} ({}): {}\n", r.id, r.started_at, printable(note));
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("\nnotes:\n{out}")
}

fn left_out(history: &History) -> String {
    let mut out = String::new();
    for (i, p) in history.points.iter().enumerate() {
        for l in &p.left_out {
            out += &format!("  group {}: {}\n", i + 1, printable(l));
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("\nleft out of the samples, as compare leaves them out (partial, failed or disturbed cells):\n{out}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_analysis::HistoryRun;

    #[test]
    fn many_consecutive_runs_are_one_range_and_a_partial_run_is_named() {
        let run = |id: i64, status: &str| HistoryRun {
            id,
            started_at: String::new(),
            started_at_ms: 0,
            status: status.into(),
            note: None,
        };
        let mut runs: Vec<HistoryRun> = (10..=40).map(|id| run(id, "complete")).collect();
        runs.push(run(41, "partial"));
        runs.extend([run(42, "complete"), run(43, "complete"), run(50, "complete")]);
        let p = HistoryPoint {
            runs,
            labels: Vec::new(),
            samples: Vec::new(),
            stats: None,
            no_samples: None,
            left_out: Vec::new(),
            verdict: None,
            change_pct: None,
        };
        assert_eq!(run_words(&p), "#10..#40 #41 (partial) #42 #43 #50");
    }
}
