//! The runs of one setup over time: what `iomatrix history RUN` draws one figure of.

use crate::reader::NOT_THE_SETUP;
use crate::{summary_from_row, Result, RunSummary, Store, SUMMARY_SELECT};
use rusqlite::params;

/// A run of the same setup as another, with when it started (ms since the epoch, for a time axis).
#[derive(Debug, Clone)]
pub struct SetupRun {
    /// The run's row, with its labels.
    pub summary: RunSummary,
    /// When it started, ms since the Unix epoch (UTC).
    pub started_at_ms: i64,
}

/// A plan without the keys that do not make a setup ([`NOT_THE_SETUP`]), as SQL over `column`:
/// the stored JSON text with those keys removed, NULL where the column is not JSON.
fn setup_sql(column: &str) -> String {
    let paths: Vec<String> = NOT_THE_SETUP.iter().map(|k| format!("'$.{k}'")).collect();
    format!("CASE WHEN json_valid({column}) THEN json_remove({column}, {}) END", paths.join(", "))
}

/// The target as given, as SQL over a conditions column; NULL where not JSON or not said.
fn target_sql(column: &str) -> String {
    format!("CASE WHEN json_valid({column}) THEN json_extract({column}, '$.target') END")
}

impl Store {
    /// The complete and partial runs of the same suite, the same setup (the stored plan without
    /// [`NOT_THE_SETUP`]: labels are not the plan) and the same target (as given) as run `id`,
    /// oldest first; empty when there is no run `id`. One query: the suite narrows the rows,
    /// the plan's and target's JSON is compared in SQLite (10,000 runs in tens of ms).
    pub fn runs_of_same_setup(&self, id: i64) -> Result<Vec<SetupRun>> {
        let sql = format!(
            "WITH me AS (SELECT suite, {} AS setup, {} AS target FROM runs WHERE id = ?1)
             {SUMMARY_SELECT} JOIN me ON r.suite = me.suite
             WHERE r.status IN ('complete', 'partial') AND {} = me.setup AND {} IS me.target
             ORDER BY r.started_at_ms, r.id",
            setup_sql("plan_json"),
            target_sql("conditions_json"),
            setup_sql("r.plan_json"),
            target_sql("r.conditions_json"),
        );
        let mut stmt = self.conn.prepare(&sql).map_err(self.err("cannot find the runs of one setup"))?;
        let rows = stmt
            .query_map(params![id], |row| Ok((summary_from_row(row)?, row.get::<_, i64>(3)?)))
            .map_err(self.err("cannot find the runs of one setup"))?;
        let mut out = Vec::new();
        for row in rows {
            let (mut summary, started_at_ms) = row.map_err(self.err("cannot read a run"))?;
            summary.labels = self.labels(summary.id)?;
            out.push(SetupRun { summary, started_at_ms });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::{NewRun, RunStatus, Store};
    use serde_json::json;

    fn new_run(plan: serde_json::Value, target: &str, labels: &[(&str, &str)]) -> NewRun {
        NewRun {
            suite: "access".into(),
            command_line: "iomatrix run access".into(),
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            plan,
            environment: json!({}),
            conditions: json!({ "target": target }),
            total_cells: 1,
        }
    }

    #[test]
    fn the_same_setup_is_the_plan_without_repeats_on_the_same_target_and_labels_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let plan = |bs: u64, repeats: u64| json!({ "block_sizes": [bs], "repeats": repeats, "only": null, "seed": 7 });
        let finished = |run: NewRun| store.store_finished_run(&run, "h", &[]).unwrap();
        let first = finished(new_run(plan(4096, 1), "/mnt/a", &[("build", "1")]));
        let repeated = finished(new_run(plan(4096, 3), "/mnt/a", &[("build", "2"), ("note", "new kernel")]));
        let other_block = finished(new_run(plan(8192, 1), "/mnt/a", &[("build", "1")]));
        let other_target = finished(new_run(plan(4096, 1), "/mnt/b", &[("build", "1")]));
        let failed = store.begin_run(&new_run(plan(4096, 1), "/mnt/a", &[])).unwrap();
        store.finish_run(failed, RunStatus::Failed, Some("a client failed")).unwrap();
        let partial = store.begin_run(&new_run(plan(4096, 1), "/mnt/a", &[])).unwrap();
        store.finish_run(partial, RunStatus::Partial, None).unwrap();
        let ids = |id: i64| store.runs_of_same_setup(id).unwrap().iter().map(|r| r.summary.id).collect::<Vec<_>>();
        assert_eq!(ids(repeated), vec![first, repeated, partial]);
        assert_eq!(ids(other_block), vec![other_block]);
        assert_eq!(ids(other_target), vec![other_target]);
        assert!(ids(999).is_empty());
        let runs = store.runs_of_same_setup(first).unwrap();
        assert_eq!(runs[1].summary.labels, vec![("build".into(), "2".into()), ("note".into(), "new kernel".into())]);
        assert!(runs.windows(2).all(|w| w[0].started_at_ms <= w[1].started_at_ms));
    }

    #[test]
    fn ten_thousand_runs_are_searched_in_one_query() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let plan = json!({ "block_sizes": [4096], "repeats": 1, "queue_depths": [1, 2, 4, 8, 16, 32], "seed": 7 });
        let me = store.store_finished_run(&new_run(plan, "/mnt/a", &[]), "h", &[]).unwrap();
        // 9,999 more: every tenth of the same setup, the others another block size or target.
        store
            .conn
            .execute_batch(&format!(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 9999)
                 INSERT INTO runs (id, suite, status, started_at_ms, command_line, iomatrix_version, plan_json,
                     environment_json, conditions_json, total_cells, host, pid, uid)
                 SELECT {me} + i, 'access', 'complete', 1000 + i, 'c', 'v',
                     CASE WHEN i % 10 = 0 THEN r.plan_json ELSE replace(r.plan_json, '4096', '8192') END,
                     '{{}}', CASE WHEN i % 5 = 0 THEN r.conditions_json ELSE '{{\"target\":\"/mnt/b\"}}' END,
                     1, 'h', 1, 'u' || i
                 FROM n, runs r WHERE r.id = {me};"
            ))
            .unwrap();
        let started = std::time::Instant::now();
        let runs = store.runs_of_same_setup(me).unwrap();
        let took = started.elapsed();
        eprintln!("10,000 runs: {} of the same setup found in {took:?}", runs.len());
        assert_eq!(runs.len(), 1 + 999);
        // Debug build, loaded 2-core CI machine: this query and the 1,000 runs' labels measured 45 ms here.
        assert!(took.as_secs_f64() < 2.0, "took {took:?}");
    }
}
