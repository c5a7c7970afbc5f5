//! `compare --derive`'s text: each derived figure worked from A's and B's rows, apart from the
//! measured ones, under its formula and factor, and marked as not measured.

use crate::table::{Column, Table};
use iomatrix_analysis::Derived;
use iomatrix_core::human;

/// The derived figures of a comparison: per formula, a row per measured row it was worked
/// from, A, B and the change.
pub fn compared(derived: &[Derived]) -> String {
    let mut out = String::new();
    for d in derived {
        out.push_str(&super::derived::heading(d));
        let width = d.rows.iter().map(|r| r.cell.chars().count()).max().unwrap_or(7).max(7);
        let mut table = Table::new(vec![
            Column::left("derived", width),
            Column::right("A", 14),
            Column::right("B", 14),
            Column::right("change", 9),
        ]);
        for r in &d.rows {
            let (a, b) = (r.values.first().copied().flatten(), r.values.get(1).copied().flatten());
            let change = match (a, b) {
                (Some(a), Some(b)) if a != 0.0 => human::signed_percent((b - a) / a * 100.0),
                _ => "-".into(),
            };
            let shown = |v: Option<f64>| v.map_or_else(|| "-".into(), human::significant);
            table.row([r.cell.clone(), shown(a), shown(b), change]);
        }
        out.push_str(&table.render());
    }
    out
}

/// A derivation's heading, the same in compare and sweep: it is no measurement.
pub(super) fn heading(d: &Derived) -> String {
    format!("\nDerived, not measured (nothing stored): {} (the factor is {})\n", d.formula, human::fixed(d.factor, 4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_analysis::DerivedRow;

    /// Seed 003's backup window: 200 GB over 272.45 and 1572.13 MB/min, in hours.
    #[test]
    fn a_derived_row_has_a_b_and_the_change_under_its_formula() {
        let d = Derived {
            name: "window_hours".into(),
            formula: "window_hours = 3413.33 / backup".into(),
            factor: 3413.33,
            derived: true,
            rows: vec![DerivedRow {
                cell: "window_hours (from backup (MB/min))".into(),
                values: vec![Some(3413.33 / 272.45), Some(3413.33 / 1572.13)],
            }],
        };
        let text = compared(&[d]);
        assert!(text.contains("Derived, not measured (nothing stored): window_hours = 3413.33 / backup"), "{text}");
        assert!(text.contains("12.53") && text.contains("2.17") && text.contains("-82.7%"), "{text}");
    }
}
