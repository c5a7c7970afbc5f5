//! The report as CSV: one row per stored cell of every run, in the cells' order.

use crate::document::{comparison_of, is_baseline, verdict_of, Report};
use iomatrix_analysis::{CellKey, Figure};
use std::fmt::Write;

/// A text field (a name, a label, a state: never a number), quoted where it holds a separator,
/// a quote or a line break, and made inert where a spreadsheet would take it for a formula:
/// OWASP's CSV-injection rule, a field that starts with `=`, `+`, `-`, `@`, a tab or a carriage
/// return gets a single quote in front, inside a quoted field, so `@SUM(1+1)` from a label
/// shows as text rather than running.
fn csv_field(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("\"'{}\"", s.replace('"', "\"\""))
    } else if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The first columns of the header line, which every CSV report begins with: how a later
/// write tells a previous iomatrix report (columns added after them keep it one).
pub const HEADER_START: &str = "run,group,suite,test,";

/// One row per stored cell of every run: every sample, not medians. `state` says whether the
/// cell is whole ("complete", "partial: 3 of 4 connections", "failed: 0 of 2 clients"), and
/// `in_medians` whether its sample entered the report's medians (a partial one only with
/// `--include-partial`, a failed one never); a cell without a figure (failed) has none. `verdict`
/// is the verdict of the cell's figure in its group's comparison with the baseline, as `compare`
/// prints it ("slower (p=0.008)", "within noise (p=0.400)", "no verdict (1 vs 2 samples)"), the
/// same on every sample of the cell; "baseline" for the baseline's cells, empty where the group
/// was not compared.
pub fn render(report: &Report) -> String {
    let mut out =
        format!("{HEADER_START}file_size,record_size,variant,figure,unit,cached,state,in_medians,labels,verdict\n");
    for (k, g) in report.groups.iter().enumerate() {
        let compared = comparison_of(report, &g.name);
        let baseline = is_baseline(report, k);
        for r in &g.runs {
            let labels: Vec<String> = r.summary.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            // By the cells' parameters (qd=1, 4, 16, 32), whatever order the run measured them
            // in; the tests of one size and mix (IOzone's write, read) and repeats as stored.
            let mut cells: Vec<(CellKey, &iomatrix_store::CellRow)> =
                r.cell_results.iter().map(|cell| (CellKey::of(cell), cell)).collect();
            cells.sort_by(|(a, _), (b, _)| a.cmp_parameters(b));
            for (key, cell) in cells {
                let figure = Figure::of(cell);
                if figure.is_none() && cell.state.is_complete() {
                    continue;
                }
                let (value, unit) = figure.map_or((String::new(), ""), |f| (f.value.to_string(), f.unit));
                let cached = g.flags.as_ref().map_or(String::new(), |fl| fl.is_flagged(&key).to_string());
                let admit = iomatrix_analysis::Admit { partial: g.summary.partial, disturbed: g.summary.disturbed };
                let in_medians = figure.is_some() && admit.admits(&cell.state);
                let verdict = match compared.and_then(|c| verdict_of(c, &key)) {
                    _ if baseline => "baseline".to_string(),
                    Some(j) => j.describe(),
                    None => String::new(),
                };
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    r.summary.id,
                    csv_field(&g.name),
                    csv_field(&r.summary.suite),
                    csv_field(&cell.test),
                    cell.file_size.map(|v| v.to_string()).unwrap_or_default(),
                    cell.record_size.map(|v| v.to_string()).unwrap_or_default(),
                    csv_field(&key.variant),
                    value,
                    csv_field(unit),
                    cached,
                    csv_field(&cell.state.describe()),
                    in_medians,
                    csv_field(&labels.join(" ")),
                    csv_field(&verdict)
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::document::sample;

    /// Splits one CSV line, quotes honoured.
    fn fields(line: &str) -> Vec<String> {
        let (mut out, mut cur, mut quoted, mut chars) = (Vec::new(), String::new(), false, line.chars().peekable());
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    cur.push('"');
                    chars.next();
                }
                ('"', _) => quoted = !quoted,
                (',', false) => out.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            }
        }
        out.push(cur);
        out
    }

    #[test]
    fn text_that_a_spreadsheet_would_run_is_made_inert() {
        for (text, written) in [
            ("@SUM(1+1)*cmd|x!A0=1", "\"'@SUM(1+1)*cmd|x!A0=1\""),
            ("+cmd|x!A0=1", "\"'+cmd|x!A0=1\""),
            ("=1+2", "\"'=1+2\""),
            ("-2+3", "\"'-2+3\""),
            ("\tx", "\"'\tx\""),
            ("\rx", "\"'\rx\""),
            ("=HYPERLINK(\"a\")", "\"'=HYPERLINK(\"\"a\"\")\""),
            ("server=a", "server=a"),
            ("a\rb", "\"a\rb\""),
        ] {
            assert_eq!(super::csv_field(text), written, "{text:?}");
        }
        let mut report = sample::report();
        let run = &mut report.groups[0].runs[0];
        run.summary.labels = [("@SUM(1+1)*cmd|x!A0".to_string(), "1".to_string())].into_iter().collect();
        report.groups[0].name = "+cmd|x!A0=1".into();
        let text = super::render(&report);
        let line = text.lines().find(|l| l.contains("'+cmd")).expect("the group's rows");
        let f = fields(line);
        assert_eq!((f[1].as_str(), f[12].as_str()), ("'+cmd|x!A0=1", "'@SUM(1+1)*cmd|x!A0=1"), "{line}");
        assert!(f[7].parse::<f64>().is_ok(), "numbers stay numbers: {line}");
    }

    #[test]
    fn a_row_per_stored_cell_with_every_column() {
        let text = super::render(&sample::report());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "run,group,suite,test,file_size,record_size,variant,figure,unit,cached,state,in_medians,labels,verdict"
        );
        assert_eq!(lines.len(), 1 + 8 + 2 * 8 + 10, "every sample, not medians");
        assert!(lines.iter().all(|l| fields(l).len() == 14), "{text}");
        assert!(
            lines.contains(&"1,1,iozone,write,65536,4096,,10000,KB/s,false,complete,true,server=a,baseline"),
            "{text}"
        );
        // Group 2,3 against the baseline 1: one sample against two, too few for a verdict.
        assert!(
            lines.contains(
                &"3,\"2,3\",iozone,write,65536,4096,,40000,KB/s,true,complete,true,server=a,no verdict (1 vs 2 samples)"
            ),
            "{text}"
        );
        assert!(lines.contains(
            &"4,access & <co>,access,access,1048576,4096,qd=1 read=100% random=100%,1000,KB/s,,complete,true,,"
        ));
    }
}
