//! `iomatrix compare`'s text: B against A as the seed authors' spreadsheets showed it, and what
//! `--fail-if-slower` found.

use crate::table::{Column, Table};
use iomatrix_analysis::{
    human_pct, CacheFlags, CellKey, Comparison, Difference, Flagged, Gate, Judgement, MatrixComparison, NotKnown,
    Partial, Region, SweepHint,
};
use iomatrix_core::{human, ByteSize};
use std::fmt::Write;

/// The comparison: what differs between the sides, each matrix of B/A ratios with its verdicts,
/// the scalar and per-operation tables, the noise test's counts, the cells only one side has, and
/// with `--limit` which cells a cache served. What one side does not know is counted in one line,
/// or with `all` listed.
pub fn comparison(c: &Comparison, flags: Option<&(CacheFlags, CacheFlags)>, all: bool) -> String {
    let mut out = String::new();
    let runs = |ids: &[i64]| ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(",");
    let _ = writeln!(
        out,
        "compare ({} suite): A = {} (runs {}), B = {} (runs {}); figures are medians over each side's runs",
        c.suite,
        c.a,
        runs(&c.a_runs),
        c.b,
        runs(&c.b_runs)
    );
    out.push_str(&super::headline::published(c));
    out.push_str(&what_differs(c, AB, all));
    out.push_str(&left_out(c, AB));
    out.push_str(&partial_taken_in(c));
    out.push_str(&matrices(c, AB));
    out.push_str(&scalars(c));
    out.push_str(&operations(c, AB));
    out.push_str(&super::headline::tables(c));
    out.push_str(&super::curve::curves(&c.curves, AB));
    out.push_str(&flagged(c, AB));
    out.push_str(&noise(c, AB));
    out.push_str(&only_in(c, AB));
    if let Some(h) = &c.sweep_hint {
        out.push_str(&sweep_hint(h, c.only_in_a.len() + c.only_in_b.len(), AB));
    }
    if let Some(flags) = flags {
        out.push_str(&caching(flags));
    }
    out
}

/// A pair's plan, environment and condition differences, and what one side does not know: the
/// two-sided compare's head, and each pair's under the N-sided one.
pub(super) fn what_differs(c: &Comparison, letters: Letters, all: bool) -> String {
    let mut out = String::new();
    differences(&mut out, "plan parameters", &c.plan_differences, (c.plan_compared, c.unknown_plan.len()), letters);
    differences(
        &mut out,
        "environment facts",
        &c.environment_differences,
        (c.environment_compared, c.unknown_environment.len()),
        letters,
    );
    if !c.unknown.is_empty() {
        if all {
            let _ = writeln!(out, "not known on one side (not compared): {}", c.unknown.join(", "));
        } else {
            out.push_str(&not_known_counted(&c.unknown_plan, &c.unknown_environment, letters));
        }
    }
    // "The same" only when it is: the plans alike too, not only the conditions named here.
    match (c.condition_differences.is_empty(), c.plan_differences.is_empty()) {
        (true, true) => out.push_str(
            "conditions: the same on both sides (plan, backend, direct/cached, clients, files vs RAM, file system, \
             partition alignment, closed or open loop, fsync/close timed, io_uring submissions, data)\n",
        ),
        (true, false) => out.push_str(
            "NOTE: the sides were measured under different plans (the parameters above): the changes below are \
             not the same work measured twice\n",
        ),
        (false, _) => {
            out.push_str("NOTE: the sides were measured under different conditions:\n");
            for d in &c.condition_differences {
                // The analysis calls a pair's sides A and B.
                let d = d.replacen(" A (", &format!(" {} (", letters.0), 1).replacen(
                    ", B (",
                    &format!(", {} (", letters.1),
                    1,
                );
                let _ = writeln!(out, "  {d}");
            }
        }
    }
    out
}

/// The letters of a pair's sides in the text: two sides are A and B; with N sides, the baseline's
/// and the other side's letters ("A", "C").
pub(super) type Letters<'a> = (&'a str, &'a str);

/// The two sides of a two-sided compare.
const AB: Letters<'static> = ("A", "B");

/// Each matrix of the pair's ratios with its verdicts counted.
pub(super) fn matrices(c: &Comparison, letters: Letters) -> String {
    let mut out = String::new();
    for (m, verdicts) in c.matrices.iter().zip(&c.matrix_verdicts) {
        out.push_str(&matrix(m, c.region, letters, &flagged_marks(c, m)));
        out.push_str(&verdict_line(verdicts.iter().flatten().flatten(), letters));
    }
    out
}

/// The cells only one side of the pair has.
pub(super) fn only_in(c: &Comparison, (a, b): Letters) -> String {
    let mut out = String::new();
    for (side, cells) in [(a, &c.only_in_a), (b, &c.only_in_b)] {
        if !cells.is_empty() {
            let _ = writeln!(out, "\nonly in {side} ({} cells, not compared): {}", cells.len(), cells.join(", "));
        }
    }
    out
}

/// What one side does not know, counted: plan fields and environment facts, by the side that
/// does not know them, each with the names they fall under ("jobs", "target"). The analysis
/// names the sides "A" and "B"; the text calls them by `letters`.
pub(super) fn not_known_counted(plan: &[NotKnown], environment: &[NotKnown], letters: Letters) -> String {
    let mut parts = Vec::new();
    for (kind, noun, list) in [("plan", "field", plan), ("environment", "fact", environment)] {
        let mut first = true;
        for side in ["A", "B"] {
            let names: Vec<&str> = list.iter().filter(|u| u.unknown_in == side).map(|u| u.name.as_str()).collect();
            if names.is_empty() {
                continue;
            }
            // Named by their first part ("jobs", "target"), or by two where one part names them all
            // ("personality.filesets", "personality.phases").
            let heads_at = |depth: usize| {
                let mut heads: Vec<&str> = Vec::new();
                for name in &names {
                    let end = name.match_indices(['.', '[', ' ']).nth(depth - 1).map_or(name.len(), |(i, _)| i);
                    if !heads.contains(&&name[..end]) {
                        heads.push(&name[..end]);
                    }
                }
                heads
            };
            let mut heads = heads_at(1);
            if heads.len() == 1 && names.len() > 1 {
                heads = heads_at(2);
            }
            let shown = match heads.len() {
                n if n > 4 => format!("{} and {} more", heads[..4].join(", "), n - 4),
                _ => heads.join(", "),
            };
            let plural = if names.len() == 1 { "" } else { "s" };
            let what = if first { format!("{kind} {noun}{plural} ") } else { String::new() };
            first = false;
            let side = if side == "A" { letters.0 } else { letters.1 };
            parts.push(format!("{} {what}unknown in {side} ({shown})", names.len()));
        }
    }
    format!("not known on one side (not compared): {}; --all lists them\n", parts.join(", "))
}

/// The sides' cells differ in one swept parameter only: which, its levels, and the sweep that
/// puts them side by side.
pub(super) fn sweep_hint(h: &SweepHint, one_sided: usize, (la, lb): Letters) -> String {
    let also = if h.also_differ.is_empty() {
        String::new()
    } else {
        format!("; the plans also differ in {}, which the levels carry too", h.also_differ.join(", "))
    };
    let (what, a, b) = (h.what, h.a_levels.join(", "), h.b_levels.join(", "));
    format!(
        "\nthe sides' cells differ in {what} only ({la}: {a}; {lb}: {b}): compare pairs cells of equal {what}, so \
         {one_sided} cells have no twin here{also}. A sweep puts the levels side by side:\n  {}\n",
        h.command
    )
}

/// `--fail-if-slower`'s findings, after the comparison: the figures slower than A's, or that
/// nothing was, or that not everything asked about could be checked (each named).
pub fn gate(threshold: f64, metric: Option<&str>, gate: &Gate) -> String {
    gate_against(threshold, metric, gate, "A")
}

/// [`gate`] against the baseline called `baseline` (its letter).
pub fn gate_against(threshold: f64, metric: Option<&str>, gate: &Gate, baseline: &str) -> String {
    let what = metric.map(|_| format!(" ({})", gate.family)).unwrap_or_default();
    let pct = human_pct(threshold * 100.0);
    let mut out = match gate.outcome() {
        "slower" => {
            let mut out = format!(
                "\n--fail-if-slower {pct}%{what}: {} figure(s) slower than {baseline} by more than {pct}% beyond noise:\n",
                gate.slower.len()
            );
            for r in &gate.slower {
                let _ = writeln!(
                    out,
                    "  {}: {} -> {} {} ({}, p={})",
                    r.cell,
                    human::significant(r.a),
                    human::significant(r.b),
                    r.unit,
                    human::signed_percent(r.change_pct),
                    human::significant(r.p_value)
                );
            }
            out
        }
        "not checked" => format!(
            "\n--fail-if-slower {pct}%{what}: NOT CHECKED: {} figure(s) checked, none slower; {} could not be \
             checked:\n",
            gate.checked,
            gate.not_checked.len()
        ),
        _ => format!(
            "\n--fail-if-slower {pct}%{what}: nothing slower than {baseline} by more than {pct}% beyond noise ({} figure(s) \
             checked)\n",
            gate.checked
        ),
    };
    for name in &gate.not_checked {
        let _ = writeln!(out, "  not checked: {name}");
    }
    out.push_str(&gate_method(gate));
    out
}

/// How the gate tested: its family, test and correction, and the change its samples could detect.
fn gate_method(gate: &Gate) -> String {
    if gate.figures == 0 {
        return String::new();
    }
    let mut out =
        format!("  tested: {} figure(s), {}; {}; {}\n", gate.figures, gate.family, gate.test, gate.correction);
    let _ = match gate.detectable_change_pct {
        Some(d) => writeln!(out, "  detectable change: {}% ({})", human_pct(d), gate.detectable_method),
        None => writeln!(out, "  detectable change: unknown (a side has fewer than two samples: no spread to go by)"),
    };
    out
}

/// The one line a gate that checked nothing, or not all it was asked, gives on stderr (without
/// the program's name): how many figures could not be held to the threshold, the first three,
/// and what would let them be.
pub fn not_checked(threshold: f64, gate: &Gate) -> String {
    let names = match gate.not_checked.len() {
        n if n > 3 => format!("{} and {} more", gate.not_checked[..3].join("; "), n - 3),
        _ => gate.not_checked.join("; "),
    };
    let fix = match gate.repeats_needed {
        Some(n) if n <= 1000 => format!("; give both sides --repeat {n} (or {n} runs each)"),
        Some(_) => "; no practical number of repeats reaches it: raise the threshold".to_string(),
        None => String::new(),
    };
    format!(
        "--fail-if-slower {}%: not checked: {} of the {} figure(s) asked about could not be held to it ({names}){fix}",
        human_pct(threshold * 100.0),
        gate.not_checked.len(),
        gate.checked + gate.not_checked.len(),
    )
}

/// Plan parameters or environment facts: the same, or each that differs. "The same" says how
/// many were compared where one side does not know some (`(compared, unknown)`).
pub(super) fn differences(
    out: &mut String,
    what: &str,
    list: &[Difference],
    (compared, unknown): (usize, usize),
    (a, b): Letters,
) {
    if list.is_empty() {
        match (compared, unknown) {
            (_, 0) => {
                let _ = writeln!(out, "{what}: the same on both sides");
            }
            (0, _) => {
                let _ = writeln!(out, "{what}: none known to both sides, so none compared");
            }
            (n, _) => {
                let _ = writeln!(out, "{what}: the same where both sides know them ({n} compared)");
            }
        }
    } else {
        let _ = writeln!(out, "{what} that differ ({a} vs {b}):");
        for d in list {
            let _ = writeln!(out, "  {}: {} vs {}", d.name, d.a, d.b);
        }
    }
}

/// The cells each side stored but left out of its medians (not whole), and with
/// `--include-partial` what the marks mean.
pub(super) fn left_out(c: &Comparison, (a, b): Letters) -> String {
    let mut out = String::new();
    if !c.left_out_a.is_empty() || !c.left_out_b.is_empty() {
        out.push_str(&not_complete_heading(c.partial));
        for (side, cells) in [(a, &c.left_out_a), (b, &c.left_out_b)] {
            for l in cells {
                let _ = writeln!(out, "  {side}: {}", l.describe());
            }
        }
    }
    out
}

/// The line above the cells left out of the medians.
pub(super) fn not_complete_heading(partial: Partial) -> String {
    let what = match partial {
        Partial::LeftOut => {
            "partial and failed cells are left out of the medians and verdicts \
                             (--include-partial takes partial ones in, marked)"
        }
        Partial::Included => "failed cells are left out of the medians and verdicts",
    };
    format!(
        "NOT COMPLETE: clients or connections failed in some cells, or they were disturbed (did not run for their \
         time; --include-disturbed takes them in, marked); {what}:\n"
    )
}

/// With `--include-partial`, what the marks mean, where a figure took partial samples in.
pub(super) fn partial_taken_in(c: &Comparison) -> String {
    let mut out = String::new();
    let marked = c.scalars.iter().any(|s| s.partial)
        || c.operations.iter().flat_map(|t| &t.rows).any(|r| r.partial)
        || c.matrices.iter().flat_map(|m| m.partial.iter().flatten()).any(|p| *p);
    if marked {
        out.push_str(
            "PARTIAL CELLS TAKEN IN (--include-partial): figures marked * include samples of cells where some \
             clients or connections failed, or of disturbed cells (--include-disturbed)\n",
        );
    }
    out
}

/// The mark of a figure that took in samples of partial cells.
pub(super) fn partial_mark(partial: bool) -> &'static str {
    if partial {
        " *"
    } else {
        ""
    }
}

/// One matrix's verdicts, counted; where none is possible, what would give one.
fn verdict_line<'a>(verdicts: impl Iterator<Item = &'a Judgement>, (_, b): Letters) -> String {
    let all: Vec<&Judgement> = verdicts.collect();
    let count = |v: &str| all.iter().filter(|j| j.verdict == v).count();
    let mut out = format!(
        "verdicts: {b} faster in {}, slower in {}, within noise in {}",
        count("faster"),
        count("slower"),
        count("within noise")
    );
    if let Some(j) = all.iter().find(|j| j.verdict == "no verdict") {
        let _ =
            write!(out, ", no verdict in {} ({})", count("no verdict"), j.describe().trim_start_matches("no verdict "));
    }
    out.push('\n');
    out
}

fn size(bytes: u64) -> String {
    ByteSize(bytes).to_string()
}

/// A mean of ratios as the matrix prints it, `-` where there is none.
fn mean_at(means: &[(u64, f64)], at: u64) -> String {
    means.iter().find(|(size, _)| *size == at).map_or_else(|| "-".into(), |(_, m)| human::fixed(*m, 2))
}

/// One matrix of B/A ratios (file sizes down, record sizes across) with the mean of each row and
/// column, its overall change and, with `--files`/`--records`, the region's.
fn matrix(m: &MatrixComparison, region: Region, (a, b): Letters, marks: &[Vec<&str>]) -> String {
    let mut out = format!("\n{}: {b}/{a} of {} (rows: file size, columns: record size)\n", m.test, m.unit);
    let columns = |last: Column| {
        std::iter::once(Column::right("", 8))
            .chain(m.record_sizes.iter().map(|r| Column::right(size(*r), 7)))
            .chain([last])
            .collect::<Vec<_>>()
    };
    let mut table = Table::new(columns(Column::right("mean", 7).gap(" | ")));
    for (i, f) in m.file_sizes.iter().enumerate() {
        let ratios = m.ratios[i].iter().zip(&m.partial[i]).enumerate().map(|(j, (ratio, partial))| {
            let flag = marks.get(i).and_then(|row| row.get(j)).copied().unwrap_or("");
            match ratio {
                Some(r) if *partial => format!("{}*{flag}", human::fixed(*r, 2)),
                Some(r) => format!("{}{flag}", human::fixed(*r, 2)),
                None => "-".into(),
            }
        });
        table.row(std::iter::once(size(*f)).chain(ratios).chain([mean_at(&m.by_file, *f)]));
    }
    out.push_str(&table.render());
    // The means of the columns close the table; their last entry says how to read the means.
    let mut means = Table::new(columns(Column::free("").gap("   "))).without_header();
    means.row(
        std::iter::once("mean".to_string())
            .chain(m.record_sizes.iter().map(|r| mean_at(&m.by_record, *r)))
            .chain(["(record-size view: mean per column; file-size view: mean per row)".to_string()]),
    );
    out.push_str(&means.render());
    let t = &m.overall;
    let _ = writeln!(
        out,
        "overall: mean change {} over {} cells; {b}/{a} below 1 in {}, above 1 in {}, equal in {} (medians alone: \
         the verdicts follow)",
        human::signed_percent(t.mean_change_pct),
        t.cells,
        t.a_wins,
        t.b_wins,
        t.ties
    );
    if !m.excluded.is_empty() {
        let _ = writeln!(
            out,
            "left out of every mean here (--exclude; their ratios stand above): {}",
            m.excluded.join(", ")
        );
    }
    if let Some(t) = &m.region {
        let bound = |(lo, hi): (Option<u64>, Option<u64>)| match (lo, hi) {
            (None, None) => "all".to_string(),
            (lo, hi) => format!("{}..{}", lo.map(size).unwrap_or_default(), hi.map(size).unwrap_or_default()),
        };
        let _ = writeln!(
            out,
            "region files {} records {}: mean change {} over {} cells; {b}/{a} below 1 in {}, above 1 in {} (medians \
             alone)",
            bound(region.files),
            bound(region.records),
            human::signed_percent(t.mean_change_pct),
            t.cells,
            t.a_wins,
            t.b_wins
        );
    }
    out
}

/// The figures outside any matrix (a rate, a latency): A, B, the change and its verdict.
fn scalars(c: &Comparison) -> String {
    if c.scalars.is_empty() {
        return String::new();
    }
    let mut table = Table::new(vec![
        Column::left("metric", 48),
        Column::right("A", 14),
        Column::right("B", 14),
        Column::right("change", 9),
        Column::free("verdict").gap("  "),
    ]);
    for s in &c.scalars {
        table.row([
            format!("{} ({}){}", s.metric, s.unit, partial_mark(s.partial)),
            format!("{}{}", human::significant(s.a), mark_of(&c.flagged_a, &s.metric)),
            format!("{}{}", human::significant(s.b), mark_of(&c.flagged_b, &s.metric)),
            human::signed_percent(s.change_pct),
            verdict_words(&s.metric, &s.verdict.describe()),
        ]);
    }
    format!("\n{}", table.render())
}

/// A row's verdict as it reads: a %CPU row whose rank test found B lower is B spending less CPU on
/// the same work, not B being faster (the noise summary still counts it with the better figures).
pub(crate) fn verdict_words(metric: &str, verdict: &str) -> String {
    if !metric.ends_with(iomatrix_core::figures::CPU_PERCENT.unit) {
        return verdict.to_string();
    }
    if let Some(rest) = verdict.strip_prefix("faster") {
        format!("less CPU{rest}")
    } else if let Some(rest) = verdict.strip_prefix("slower") {
        format!("more CPU{rest}")
    } else {
        verdict.to_string()
    }
}

/// Each phase's per-operation table: A, B, the change and its verdict.
pub(super) fn operations(c: &Comparison, (a, b): Letters) -> String {
    let mut out = String::new();
    for t in &c.operations {
        let _ = writeln!(out, "\n{}: per operation, {a} and {b} (medians over the samples) and % change", t.phase);
        let mut table = Table::new(vec![
            Column::left("operation", 28),
            Column::right(a, 12),
            Column::right(b, 12),
            Column::right("change", 9),
            Column::free("verdict").gap("  "),
        ]);
        for r in &t.rows {
            table.row([
                format!("{} {} ({}){}", r.operation, r.figure, r.unit, partial_mark(r.partial)),
                human::significant(r.a),
                human::significant(r.b),
                human::signed_percent(r.change_pct),
                r.verdict.describe(),
            ]);
        }
        out.push_str(&table.render());
    }
    out
}

/// The rank test's verdicts counted over every compared figure, and the repeats that would give
/// a verdict where the samples were too few.
pub(super) fn noise(c: &Comparison, (_, b): Letters) -> String {
    let mut out = String::new();
    let n = &c.noise;
    let total = n.faster + n.slower + n.within_noise + n.no_verdict;
    if total == 0 {
        return out;
    }
    let counted = if n.bound == 0 {
        format!("{total} compared figures")
    } else {
        format!(
            "{total} effects ({} compared figures; those bound together by construction counted once)",
            total + n.bound
        )
    };
    let _ = writeln!(
        out,
        "\nNoise (Mann-Whitney rank test of the samples, two-sided, {}% level): {b} faster in {}, slower in {}, \
         within noise in {}, no verdict in {} of {counted}",
        iomatrix_analysis::ALPHA * 100.0,
        n.faster,
        n.slower,
        n.within_noise,
        n.no_verdict
    );
    for e in &c.effects {
        let _ = writeln!(out, "  one effect: {}: {}", e.describe(), e.verdict.describe());
    }
    let needed = c
        .matrix_verdicts
        .iter()
        .flatten()
        .flatten()
        .flatten()
        .chain(c.scalars.iter().map(|s| &s.verdict))
        .chain(c.operations.iter().flat_map(|t| t.rows.iter().map(|r| &r.verdict)))
        .filter_map(|j| j.repeats_needed)
        .max();
    if let Some(k) = needed {
        let _ = writeln!(
            out,
            "  no verdict: too few samples for the test to reach its level; --repeat {k} (or {k} runs a side) on both \
             sides gives one"
        );
    }
    out
}

/// The marks of a cell's flagged samples on one side: " !" (an outlier), " ?" (descheduled),
/// both, or nothing.
fn mark_of(flagged: &[Flagged], cell: &str) -> String {
    let mut marks: Vec<&str> = flagged.iter().filter(|f| f.cell == cell).map(Flagged::mark).collect();
    marks.dedup();
    if marks.is_empty() {
        String::new()
    } else {
        format!(" {}", marks.concat())
    }
}

/// Each matrix cell's marks of flagged samples on either side, as the ratios are laid out.
fn flagged_marks<'a>(c: &'a Comparison, m: &MatrixComparison) -> Vec<Vec<&'a str>> {
    m.file_sizes
        .iter()
        .map(|f| {
            m.record_sizes
                .iter()
                .map(|r| {
                    let key = CellKey {
                        test: m.test.clone(),
                        file_size: Some(*f),
                        record_size: Some(*r),
                        variant: String::new(),
                    };
                    let name = key.describe();
                    let side = c.flagged_a.iter().chain(&c.flagged_b).find(|f| f.cell == name);
                    side.map_or("", Flagged::mark)
                })
                .collect()
        })
        .collect()
}

/// The samples flagged on each side, each named with why: they stay in the medians and
/// verdicts, marked beside their figures.
pub(super) fn flagged(c: &Comparison, (a, b): Letters) -> String {
    if c.flagged_a.is_empty() && c.flagged_b.is_empty() {
        return String::new();
    }
    let mut out = String::from(FLAGGED_HEADING);
    for (side, list) in [(a, &c.flagged_a), (b, &c.flagged_b)] {
        for f in list {
            let _ = writeln!(out, "  {side}: {} {}: {}", f.mark(), f.cell, f.describe());
        }
    }
    out
}

/// What the marks of flagged samples mean, above the list of them.
pub const FLAGGED_HEADING: &str =
    "\nFLAGGED samples (still in the medians and verdicts; a figure with one is marked): \
                                   ! an outlier, far from its repeats (modified Z-score beyond 3.5); ? a descheduled \
                                   cell, its CPU % far below its repeats' (its threads were off their CPU):\n";

/// `--limit`: the cells each side had faster than the limit, served by a cache.
fn caching((fa, fb): &(CacheFlags, CacheFlags)) -> String {
    caching_of(&[("A", fa), ("B", fb)])
}

/// `--limit`'s findings for each side, by its letter.
pub(super) fn caching_of(sides: &[(&str, &CacheFlags)]) -> String {
    let Some((_, first)) = sides.first() else { return String::new() };
    let mut out = format!("\nCaching: cells faster than the limit ({}) were served by a cache\n", first.limit);
    for (side, f) in sides {
        if f.flagged.is_empty() {
            let _ = writeln!(out, "  {side}: no cell above the limit");
        }
        for b in &f.boundaries {
            let _ = writeln!(out, "  {side}: {b}");
        }
        if f.unchecked > 0 {
            let _ = writeln!(out, "  {side}: {} cells had no limit to hold them to", f.unchecked);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_analysis::Tally;

    /// What one side does not know, counted by kind and side and named by what it falls under;
    /// one part naming them all is named by two.
    #[test]
    fn unknowns_are_counted_in_one_line_by_kind_and_side() {
        let not_known = |name: &str, side: &'static str| NotKnown { name: name.into(), unknown_in: side };
        let plan = [
            not_known("block_sizes", "A"),
            not_known("jobs (entries)", "B"),
            not_known("jobs[0].options.bs", "B"),
            not_known("tool", "B"),
        ];
        let environment = [not_known("target.fs_type", "A"), not_known("target.mount_options", "A")];
        assert_eq!(
            not_known_counted(&plan, &environment, AB),
            "not known on one side (not compared): 1 plan field unknown in A (block_sizes), 3 unknown in B (jobs, \
             tool), 2 environment facts unknown in A (target.fs_type, target.mount_options); --all lists them\n"
        );
        let many: Vec<NotKnown> = ["a", "b", "c", "d", "e", "f"].iter().map(|n| not_known(n, "A")).collect();
        assert!(not_known_counted(&many, &[], AB).contains("6 plan fields unknown in A (a, b, c, d and 2 more)"));
    }

    /// The matrix as compare wrote it by hand before the one table layout: a partial ratio
    /// marked `*` in the same seven places, a missing one `-`, a long one widening its row only.
    #[test]
    fn a_matrix_lines_up_as_the_hand_written_layout_did_with_marks_and_gaps() {
        let m = MatrixComparison {
            test: "read".into(),
            unit: "KB/s",
            file_sizes: vec![65536, 1 << 20],
            record_sizes: vec![4096, 65536],
            ratios: vec![vec![Some(1.5), Some(0.25)], vec![None, Some(123456.789)]],
            by_record: vec![(4096, 1.5), (65536, 61728.52)],
            by_file: vec![(65536, 0.875)],
            overall: Tally { cells: 3, mean_change_pct: 12.5, a_wins: 1, b_wins: 2, ties: 0 },
            region: None,
            partial: vec![vec![false, true], vec![false, false]],
            excluded: Vec::new(),
        };
        let expected = format!(
            "\nread: B/A of KB/s (rows: file size, columns: record size)\n\
             {:>8} {:>7} {:>7} | {:>7}\n\
             {:>8} {:>7.2} {:>6.2}* | {:>7}\n\
             {:>8}       - {:>7.2} | {:>7}\n\
             {:>8} {:>7} {:>7}   (record-size view: mean per column; file-size view: mean per row)\n\
             overall: mean change +12.5% over 3 cells; B/A below 1 in 1, above 1 in 2, equal in 0 (medians alone: the verdicts follow)\n",
            "", "4k", "64k", "mean", "64k", 1.5, 0.25, "0.88", "1m", 123456.789, "-", "mean", "1.50", "61728.52"
        );
        assert_eq!(matrix(&m, Region::default(), AB, &[]), expected);
    }
}
