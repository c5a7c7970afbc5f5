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
    RawJson::of(value).parse()
}

/// A JSON column's value as SQLite gave it, not parsed yet ([`RawJson::parse`]): read on the
/// connection's thread and parsed on another ([`crate::load`]).
pub(crate) struct RawJson(Result<Option<Vec<u8>>, Problem>);

impl RawJson {
    pub(crate) fn of(value: ValueRef<'_>) -> RawJson {
        RawJson(match value {
            ValueRef::Null => Ok(None),
            ValueRef::Text(text) => Ok(Some(text.to_vec())),
            ValueRef::Blob(b) => Err(Problem::Binary(b.len())),
            ValueRef::Integer(_) | ValueRef::Real(_) => Err(Problem::Number),
        })
    }

    /// The value as [`json`] reads it.
    pub(crate) fn parse(self) -> Result<serde_json::Value, Problem> {
        match self.0? {
            None => Ok(serde_json::Value::Null),
            Some(text) => serde_json::from_slice(&text).map_err(Problem::Unparsed),
        }
    }

    /// The value as [`RawJson::parse`] reads it, an object's member `left_out` skipped (checked
    /// as JSON, never built): a cell's figures over time, which an hour's cell keeps 3,600
    /// intervals of, read by no summary of many runs.
    pub(crate) fn parse_without(self, left_out: &'static str) -> Result<serde_json::Value, Problem> {
        match self.0? {
            None => Ok(serde_json::Value::Null),
            Some(text) => {
                let mut read = serde_json::Deserializer::from_slice(&text);
                let value = serde::de::DeserializeSeed::deserialize(Without(left_out), &mut read)
                    .and_then(|value| read.end().map(|()| value));
                value.map_err(Problem::Unparsed)
            }
        }
    }
}

/// A JSON value whose top object, if it is one, is read without its member `.0`.
struct Without(&'static str);

impl<'de> serde::de::DeserializeSeed<'de> for Without {
    type Value = serde_json::Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Without {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<serde_json::Value, A::Error> {
        let mut kept = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == self.0 {
                map.next_value::<serde::de::IgnoredAny>()?;
            } else {
                kept.insert(key, map.next_value()?);
            }
        }
        Ok(serde_json::Value::Object(kept))
    }

    // Anything but an object is read whole, as [`RawJson::parse`] reads it.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<serde_json::Value, A::Error> {
        serde::Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<serde_json::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
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
    let data = unchecked_blob(name, value, length)?;
    check_blob(name, data)?;
    Ok(data)
}

/// A stored blob's bytes, a histogram not decoded yet ([`check_blob`]): what is wrong with it
/// before then is that it is no binary data, or too long a histogram to have been loaded.
pub(crate) fn unchecked_blob<'a>(name: &str, value: ValueRef<'a>, length: i64) -> Result<&'a [u8], Problem> {
    let cap = iomatrix_stats::Latency::largest_stored();
    match value {
        ValueRef::Null if name.starts_with("latency.") && length > cap as i64 => Err(Problem::Undecodable(
            iomatrix_stats::HistogramError::Oversized(format!("it is {length} bytes, {cap} at most")),
        )),
        ValueRef::Blob(data) => Ok(data),
        _ => Err(Problem::NotBinary),
    }
}

/// Whether a blob's bytes read as what its name says: a latency histogram decodes.
pub(crate) fn check_blob(name: &str, data: &[u8]) -> Result<(), Problem> {
    if name.starts_with("latency.") {
        iomatrix_stats::Latency::check_bytes(data).map_err(Problem::Undecodable)
    } else {
        Ok(())
    }
}
