//! Stored figures read back strictly: a JSON column that does not parse, or a histogram that
//! does not decode, is an [`Unreadable`] figure, named (run, cell, column), never read as null.

use rusqlite::types::ValueRef;
use serde::Serialize;

/// A stored figure that cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("run #{run_id}{}, {column}: {problem}", in_run(.cell, .test))]
pub struct Unreadable {
    /// The run the figure belongs to.
    pub run_id: i64,
    /// The cell (its `seq`), for a cell's figure; None for the run's own columns.
    pub cell: Option<usize>,
    /// The cell's test, with `cell`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// The column (`metrics_json`, `clients_json`, `plan_json`, ...) or the histogram
    /// (`cell_blobs latency.read`).
    pub column: String,
    /// What is wrong with it.
    pub problem: String,
}

impl Unreadable {
    /// Where a figure is, its problem still to be said.
    pub(crate) fn at(run_id: i64, cell: Option<(usize, &str)>, column: &str) -> Unreadable {
        Unreadable {
            run_id,
            cell: cell.map(|(seq, _)| seq),
            test: cell.map(|(_, test)| test.to_string()),
            column: column.to_string(),
            problem: String::new(),
        }
    }
}

/// Where in a run a figure is: ` cell 3 (write)`, ` cell 3`, or nothing for the run's own.
fn in_run(cell: &Option<usize>, test: &Option<String>) -> String {
    match (cell, test) {
        (Some(seq), Some(test)) => format!(" cell {seq} ({test})"),
        (Some(seq), None) => format!(" cell {seq}"),
        _ => String::new(),
    }
}

/// What is wrong with a stored figure: a JSON column's value that is not JSON, a histogram that
/// does not decode.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Problem {
    #[error("does not parse as JSON ({0})")]
    Unparsed(serde_json::Error),
    #[error("holds {0} bytes of binary data, not JSON text")]
    Binary(usize),
    #[error("holds a bare number, not JSON text")]
    Number,
    #[error("is not binary data")]
    NotBinary,
    #[error("does not decode ({0})")]
    Undecodable(iomatrix_stats::HistogramError),
}

/// A JSON column's value: SQL NULL is JSON null (the nullable columns); text that does not parse,
/// or a value that is not text at all, is the problem.
pub(crate) fn json(value: ValueRef<'_>) -> Result<serde_json::Value, Problem> {
    match value {
        ValueRef::Null => Ok(serde_json::Value::Null),
        ValueRef::Text(text) => serde_json::from_slice(text).map_err(Problem::Unparsed),
        ValueRef::Blob(b) => Err(Problem::Binary(b.len())),
        ValueRef::Integer(_) | ValueRef::Real(_) => Err(Problem::Number),
    }
}

/// `value`, or JSON null with its problem added to `unreadable` (at `place`).
pub(crate) fn or_null(
    value: Result<serde_json::Value, Problem>,
    unreadable: &mut Vec<Unreadable>,
    place: Unreadable,
) -> serde_json::Value {
    value.unwrap_or_else(|problem| {
        unreadable.push(Unreadable { problem: problem.to_string(), ..place });
        serde_json::Value::Null
    })
}

/// The columns a `cell_blobs` row's data is read by, for [`blob`]: `data`, except a latency
/// histogram longer than any iomatrix writes, which is never loaded (NULL), and `length(data)`
/// (SQLite takes it from the record's header, without reading the blob).
/// `table`: how the query names `cell_blobs` (`b.`), or "".
pub(crate) fn blob_columns(table: &str) -> String {
    format!(
        "CASE WHEN {table}name LIKE 'latency.%' AND length({table}data) > {} THEN NULL ELSE {table}data END, \
         length({table}data)",
        iomatrix_stats::Latency::largest_stored()
    )
}

/// A stored blob read through [`blob_columns`] (`value`, `length`), or what is wrong with it:
/// not binary data, or a histogram (`latency.*`: HDR V2, deflated) that is too long or does not
/// decode ([`iomatrix_stats::Latency::check_bytes`]: its header checked before anything is
/// allocated). Blobs of other names are not this iomatrix's to judge.
pub(crate) fn blob<'a>(name: &str, value: ValueRef<'a>, length: i64) -> Result<&'a [u8], Problem> {
    let latency = name.starts_with("latency.");
    let cap = iomatrix_stats::Latency::largest_stored();
    match value {
        ValueRef::Null if latency && length > cap as i64 => Err(Problem::Undecodable(
            iomatrix_stats::HistogramError::Oversized(format!("it is {length} bytes, {cap} at most")),
        )),
        ValueRef::Blob(data) if latency => match iomatrix_stats::Latency::check_bytes(data) {
            Ok(()) => Ok(data),
            Err(e) => Err(Problem::Undecodable(e)),
        },
        ValueRef::Blob(data) => Ok(data),
        _ => Err(Problem::NotBinary),
    }
}
