//! A stored run read back: its rows fetched from SQLite ([`Store::fetch_run`]), then parsed and
//! checked ([`FetchedRun::parse`]). Parsing one run on a second thread while the next was
//! fetched was tried for compare (1,400 runs a side) and gained nothing on this 2-CPU machine
//! (wall 1.01x, CPU 1.20x, 7 pairs): it is not done.

use crate::figures::{self, RawJson, Unreadable};
use crate::{CellRow, CellStateKind, Result, RunSummary, Store, StoreError, StoredRun};
use rusqlite::OptionalExtension;

/// How much of a run's cells a load reads ([`Store::load_run_summarised`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    Whole,
    Summarised,
}

impl Reading {
    /// The statement reading a run's cells: summarised, without its clients' figures.
    fn cells_select(self) -> &'static str {
        match self {
            Reading::Whole => {
                "SELECT seq, test, file_size, record_size, backend, direct, clients, bytes, ops, wall_ns, user_ns,
                        sys_ns, kib_per_sec, cpu_percent, metrics_json, clients_json, state, parts_ok, parts_of, parts
                 FROM cells WHERE run_id = ?1 ORDER BY seq"
            }
            Reading::Summarised => {
                "SELECT seq, test, file_size, record_size, backend, direct, clients, bytes, ops, wall_ns, user_ns,
                        sys_ns, kib_per_sec, cpu_percent, metrics_json, 'null', state, parts_ok, parts_of, parts
                 FROM cells WHERE run_id = ?1 ORDER BY seq"
            }
        }
    }

    /// A cell's figures as this reading reads them: summarised, without its figures over time.
    fn metrics(self, stored: RawJson) -> std::result::Result<serde_json::Value, figures::Problem> {
        match self {
            Reading::Whole => stored.parse(),
            Reading::Summarised => stored.parse_without(crate::cell_figures::SERIES_KEY),
        }
    }
}

/// A run's rows as SQLite gave them: nothing parsed, no histogram decoded.
pub(crate) struct FetchedRun {
    reading: Reading,
    summary: RunSummary,
    /// The plan, environment and conditions.
    records: [RawJson; 3],
    /// Each cell with its metrics and clients, in order.
    cells: Vec<(CellRow, RawJson, RawJson)>,
    /// (cell seq, name, the bytes or why they do not read).
    blobs: Vec<(usize, String, std::result::Result<Vec<u8>, figures::Problem>)>,
    lost: RawJson,
    uid: Option<String>,
    origin: RawJson,
}

impl Store {
    /// A run read as `reading` says, with each figure that cannot be read named.
    pub(crate) fn read_run(&self, id: i64, reading: Reading) -> Result<Option<(StoredRun, Vec<Unreadable>)>> {
        Ok(self.fetch_run(id, reading)?.map(|run| run.parse(id)))
    }

    /// A run read strictly: one figure that cannot be read makes it an error naming it.
    pub(crate) fn strictly(&self, id: i64, read: (StoredRun, Vec<Unreadable>)) -> Result<StoredRun> {
        let (run, unreadable) = read;
        match unreadable.first() {
            None => Ok(run),
            Some(first) => Err(StoreError::Unreadable {
                path: self.path.clone(),
                run: id,
                first: first.to_string(),
                more: unreadable.len() - 1,
            }),
        }
    }

    /// Run `id`'s rows, or None where there is no such run.
    fn fetch_run(&self, id: i64, reading: Reading) -> Result<Option<FetchedRun>> {
        // Cached statements: a compare of 1,400 runs a side read each run's through a fresh parse.
        let found = self
            .conn
            .prepare_cached(&format!("{} WHERE r.id = ?1", crate::SUMMARY_SELECT))
            .map_err(self.err("cannot read the run"))?
            .query_row([id], |row| {
                let records =
                    [RawJson::of(row.get_ref(12)?), RawJson::of(row.get_ref(13)?), RawJson::of(row.get_ref(14)?)];
                Ok((crate::summary_from_row(row)?, records))
            })
            .optional()
            .map_err(self.err("cannot read the run"))?;
        let Some((mut summary, records)) = found else { return Ok(None) };
        summary.labels = self.labels(id)?;
        let (lost, uid, origin) = self
            .conn
            .prepare_cached("SELECT lost_json, uid, origin_json FROM runs WHERE id = ?1")
            .map_err(self.err("cannot read the run's losses"))?
            .query_row([id], |r| {
                Ok((RawJson::of(r.get_ref(0)?), r.get::<_, Option<String>>(1)?, RawJson::of(r.get_ref(2)?)))
            })
            .map_err(self.err("cannot read the run's losses"))?;
        let (cells, blobs) = (self.cell_rows(id, reading)?, self.blob_rows(id)?);
        Ok(Some(FetchedRun { reading, summary, records, cells, blobs, lost, uid, origin }))
    }

    /// Run `id`'s cells in order, each with its metrics and clients JSON as stored (unread).
    fn cell_rows(&self, id: i64, reading: Reading) -> Result<Vec<(CellRow, RawJson, RawJson)>> {
        let mut stmt = self.conn.prepare_cached(reading.cells_select()).map_err(self.err("cannot read cells"))?;
        let rows = stmt
            .query_map([id], |r| {
                let cell = CellRow {
                    seq: r.get::<_, i64>(0)? as usize,
                    test: r.get(1)?,
                    file_size: r.get::<_, Option<i64>>(2)?.map(|v| v as u64),
                    record_size: r.get::<_, Option<i64>>(3)?.map(|v| v as u64),
                    backend: r.get(4)?,
                    direct: r.get(5)?,
                    clients: r.get::<_, i64>(6)? as usize,
                    bytes: r.get::<_, i64>(7)? as u64,
                    ops: r.get::<_, i64>(8)? as u64,
                    wall_ns: r.get::<_, i64>(9)? as u64,
                    user_ns: r.get::<_, i64>(10)? as u64,
                    sys_ns: r.get::<_, i64>(11)? as u64,
                    kib_per_sec: r.get(12)?,
                    cpu_percent: Some(r.get(13)?),
                    metrics: serde_json::Value::Null,
                    client_figures: serde_json::Value::Null,
                    state: crate::state_from_row(r, 6)?,
                    blobs: Vec::new(),
                };
                Ok((cell, RawJson::of(r.get_ref(14)?), RawJson::of(r.get_ref(15)?)))
            })
            .map_err(self.err("cannot read cells"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read a cell"))?;
        Ok(rows)
    }

    /// Run `id`'s histograms and other blobs, not decoded yet: (cell seq, name, the bytes or why
    /// they do not read).
    #[allow(clippy::type_complexity)]
    fn blob_rows(&self, id: i64) -> Result<Vec<(usize, String, std::result::Result<Vec<u8>, figures::Problem>)>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT seq, name, {} FROM cell_blobs WHERE run_id = ?1 ORDER BY seq, name",
                figures::blob_columns("")
            ))
            .map_err(self.err("cannot read histograms"))?;
        let blobs = stmt
            .query_map([id], |r| {
                let name = r.get::<_, String>(1)?;
                let data = figures::unchecked_blob(&name, r.get_ref(2)?, r.get(3)?).map(<[u8]>::to_vec);
                Ok((r.get::<_, i64>(0)? as usize, name, data))
            })
            .map_err(self.err("cannot read histograms"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read a histogram"))?;
        Ok(blobs)
    }
}

impl FetchedRun {
    /// The run as far as it reads, and each figure that does not (a JSON column that does not
    /// parse, a histogram that does not decode: [`figures::check_blob`], 0.06 to 0.12 ms each in
    /// a release build), named: its value in the run is null (a histogram: left out).
    fn parse(self, id: i64) -> (StoredRun, Vec<Unreadable>) {
        let FetchedRun {
            reading,
            summary,
            records: [plan, environment, conditions],
            cells: rows,
            blobs,
            lost,
            uid,
            origin,
        } = self;
        let mut unreadable = Vec::new();
        let mut keep =
            |value: std::result::Result<serde_json::Value, figures::Problem>,
             cell: Option<(usize, &str)>,
             column: &str| { figures::or_null(value, &mut unreadable, Unreadable::at(id, cell, column)) };
        let (plan, environment, conditions) = (
            keep(plan.parse(), None, "plan_json"),
            keep(environment.parse(), None, "environment_json"),
            keep(conditions.parse(), None, "conditions_json"),
        );
        let mut cells = Vec::with_capacity(rows.len());
        for (mut cell, metrics, clients) in rows {
            cell.metrics = keep(reading.metrics(metrics), Some((cell.seq, &cell.test)), "metrics_json");
            cell.client_figures = keep(clients.parse(), Some((cell.seq, &cell.test)), "clients_json");
            settle_cell(&mut cell);
            cells.push(cell);
        }
        for (seq, name, data) in blobs {
            let Some(cell) = cells.iter_mut().find(|c| c.seq == seq) else { continue };
            match data.and_then(|data| figures::check_blob(&name, &data).map(|()| data)) {
                Ok(data) => cell.blobs.push((name, data)),
                Err(problem) => {
                    keep(Err(problem), Some((seq, &cell.test)), &format!("cell_blobs {name}"));
                }
            }
        }
        let lost = Some(keep(lost.parse(), None, "lost_json")).filter(|v| !v.is_null());
        let origin = Some(keep(origin.parse(), None, "origin_json")).filter(|v| !v.is_null());
        (StoredRun { summary, plan, environment, conditions, cell_results: cells, lost, uid, origin }, unreadable)
    }
}

/// What a cell's state and CPU figure take from its figures: a disturbed cell's cause; no CPU
/// figure where the source gave none or the cell failed (nothing was measured).
fn settle_cell(cell: &mut CellRow) {
    // Read once: a run's cells are read typed again by whoever loaded it.
    let typed = cell.figures();
    if cell.state.kind == CellStateKind::Disturbed {
        cell.state.cause = typed.disturbed.as_ref().and_then(|d| d.cause.clone());
    }
    if typed.cpu_not_in_source() || cell.state.kind == CellStateKind::Failed {
        cell.cpu_percent = None;
    }
}
