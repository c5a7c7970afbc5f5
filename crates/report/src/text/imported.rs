//! Runs imported from other tools (`iomatrix import`): where they came from
//! and what their file did not say, in place of the machine and target a
//! native run records.

use iomatrix_store::reader::{Fact, StoredImport};
use iomatrix_store::StoredRun;

/// Where an imported run came from, typed; None for a native run.
pub fn stored(run: &StoredRun) -> Option<StoredImport> {
    run.conditions_facts().imported
}

/// Replaces the native lines an import cannot fill (machine, an unknown
/// target) with where the run came from and what its file did not say.
pub fn adjust_pairs(run: &StoredRun, pairs: &mut Vec<(String, String)>) {
    let Some(imp) = stored(run) else { return };
    pairs.retain(|(key, _)| key != "machine" && key != "target");
    if let Some(target) = run.conditions_facts().target.text() {
        pairs.insert(0, ("target".into(), format!("{target} (file system unknown)")));
    }
    let mut from = imp.tool.clone().unwrap_or_default();
    if let Some(v) = &imp.version {
        from += &format!(" {v}");
    }
    let published = imp.published == Some(true);
    from += if published { " table, " } else { " output, " };
    from += &imp.source.clone().unwrap_or_default();
    if let Some(at) = &imp.measured_at {
        from += &format!(", measured {at}");
    }
    pairs.insert(0, ("imported".into(), from));
    if published {
        pairs.insert(
            1,
            (
                "published".into(),
                "figures typed in from a published table: no environment and no samples behind them (each \
                 figure one value as printed)"
                    .into(),
            ),
        );
    }
    let list = |items: &[Fact]| -> Vec<String> { items.iter().filter_map(Fact::text).map(str::to_string).collect() };
    let unknown = list(&imp.unknown);
    if !unknown.is_empty() {
        pairs.push(("not in the source".into(), unknown.join("; ")));
    }
    for note in list(&imp.notes) {
        pairs.push(("note".into(), note));
    }
    for skipped in list(&imp.skipped) {
        pairs.push(("skipped".into(), skipped));
    }
    // Lines `import --skip-bad-lines` could not read: how many, and the first few.
    let bad: Vec<String> = imp
        .bad_lines
        .iter()
        .flatten()
        .map(|b| format!("line {}: {}", b.line.json(), b.why.text().unwrap_or("?")))
        .collect();
    if !bad.is_empty() {
        const SHOWN: usize = 5;
        let more = if bad.len() > SHOWN {
            format!("; and {} more (show --json lists them)", bad.len() - SHOWN)
        } else {
            String::new()
        };
        pairs.push((
            "skipped lines".into(),
            format!("{} (--skip-bad-lines): {}{more}", bad.len(), bad[..bad.len().min(SHOWN)].join("; ")),
        ));
    }
}

/// Whether the run is a published table (`iomatrix import --format published`).
pub fn is_published(run: &StoredRun) -> bool {
    stored(run).and_then(|imp| imp.published) == Some(true)
}

/// A published run's table as it was typed: one line per figure, in the file's order; None for
/// any other run.
pub fn published_table(run: &StoredRun) -> Option<String> {
    if !is_published(run) {
        return None;
    }
    let mut table = crate::table::Table::new(vec![
        crate::table::Column::right("line", 5),
        crate::table::Column::left("cell", 40),
        crate::table::Column::left("operation", 10),
        crate::table::Column::left("metric", 26),
        crate::table::Column::right("value", 14),
        crate::table::Column::free("unit").gap(" "),
    ]);
    let typed = run.conditions_facts().published_table.unwrap_or_default();
    let mut rows: Vec<_> = typed.iter().collect();
    rows.sort_by_key(|r| r.line.whole().unwrap_or(0));
    let text = |v: &Fact| iomatrix_core::text::printable(v.text().unwrap_or("")).to_string();
    for r in rows {
        table.row([r.line.json(), text(&r.cell), text(&r.operation), text(&r.metric), text(&r.value), text(&r.unit)]);
    }
    Some(format!("\npublished table, as typed ({} figures):\n{}", typed.len(), table.render()))
}

/// Where an import of a published table keeps its lines as typed in its conditions (the
/// importer's `TYPED_KEY`, which its tests hold to this: the report crate sits below the importer,
/// and the store's reader reads them as `StoredConditions::published_table`).
pub const PUBLISHED_TABLE: &str = "published_table";
