//! Which stored runs to list, and one page of them: [`RunFilter`], [`Page`], [`RunPage`] and
//! [`Store::list_runs_page`] (`iomatrix runs --suite ... --page N`, the viewer's runs page).
//!
//! Everything is done in SQL (WHERE, ORDER BY, LIMIT/OFFSET): a page of a 10,000-run database
//! reads its own rows only, and the labels of the page's runs in one query.

use super::{summary_from_row, RunStatus, RunSummary, Store, StoreError, SUMMARY_LIST_SELECT};
use iomatrix_core::UsageError;
use rusqlite::types::Value;

/// The most runs one page may hold (`--per-page`).
pub const MAX_PER_PAGE: u64 = 1000;

/// A state a run is listed by (`--state`): one of the stored [`RunStatus`]es, or `disturbed`:
/// a run with at least one cell stored disturbed (the machine did not let it run for its time),
/// whatever its status (the status of such a run is most often `complete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// The run's stored status is this one.
    Status(RunStatus),
    /// At least one of the run's cells is stored disturbed.
    Disturbed,
}

/// Every state `--state` takes, in the order a user meets them.
pub const RUN_STATES: &[&str] = &["complete", "partial", "failed", "disturbed", "incomplete", "interrupted", "running"];

impl RunState {
    /// The state named `text` (`complete`, `disturbed`, ...); a usage error listing them for any other word.
    pub fn parse(text: &str) -> Result<RunState, UsageError> {
        let status = match text {
            "disturbed" => return Ok(RunState::Disturbed),
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "incomplete" => RunStatus::Incomplete,
            "interrupted" => RunStatus::Interrupted,
            "failed" => RunStatus::Failed,
            "partial" => RunStatus::Partial,
            _ => {
                return Err(UsageError::new(format!(
                    "--state {text:?}: no such state; give one of {}",
                    RUN_STATES.join(", ")
                )))
            }
        };
        Ok(RunState::Status(status))
    }
}

/// Which runs to list; every part given must match (an empty filter matches every run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFilter {
    /// The suite's name, exactly (`iozone`).
    pub suite: Option<String>,
    /// `KEY=VALUE` labels: the run must carry every one.
    pub labels: Vec<(String, String)>,
    /// A part of the stored target (its path or URL as the environment recorded it).
    pub target: Option<String>,
    /// The host that ran it, exactly.
    pub host: Option<String>,
    /// The target's file system type as the environment recorded it, exactly (`ext4`, `tmpfs`).
    pub fs_type: Option<String>,
    /// Its state.
    pub state: Option<RunState>,
    /// Started at or after this instant (ms since the Unix epoch, UTC).
    pub since_ms: Option<i64>,
    /// Started at or before this instant (ms since the Unix epoch, UTC).
    pub until_ms: Option<i64>,
    /// Text found, ASCII letters in any case, in the command line, a label (`KEY=VALUE`), the
    /// suite, the host or the error.
    pub search: Option<String>,
}

impl RunFilter {
    /// Whether nothing is asked: every run matches.
    pub fn is_empty(&self) -> bool {
        *self == RunFilter::default()
    }

    /// The WHERE clause (without the word) and its parameters, on `runs r`.
    fn sql(&self) -> (String, Vec<Value>) {
        let mut terms: Vec<String> = Vec::new();
        let mut params: Vec<Value> = Vec::new();
        let param = |v: Value, params: &mut Vec<Value>| {
            params.push(v);
            format!("?{}", params.len())
        };
        if let Some(suite) = &self.suite {
            terms.push(format!("r.suite = {}", param(Value::Text(suite.clone()), &mut params)));
        }
        for (key, value) in &self.labels {
            let (k, v) = (param(Value::Text(key.clone()), &mut params), param(Value::Text(value.clone()), &mut params));
            // A set of ids, so that SQLite may start from the label's index (labels_by_key).
            terms.push(format!("r.id IN (SELECT l.run_id FROM labels l WHERE l.key = {k} AND l.value = {v})"));
        }
        if let Some(target) = &self.target {
            let p = param(Value::Text(target.clone()), &mut params);
            terms.push(format!("instr({}, {p}) > 0", environment_text("$.target.path")));
        }
        if let Some(host) = &self.host {
            terms.push(format!("r.host = {}", param(Value::Text(host.clone()), &mut params)));
        }
        if let Some(fs) = &self.fs_type {
            let p = param(Value::Text(fs.clone()), &mut params);
            terms.push(format!("{} = {p}", environment_text("$.target.fs_type")));
        }
        match self.state {
            Some(RunState::Status(s)) => {
                terms.push(format!("r.status = {}", param(Value::Text(s.as_str().into()), &mut params)));
            }
            Some(RunState::Disturbed) => {
                terms.push("EXISTS (SELECT 1 FROM cells c WHERE c.run_id = r.id AND c.state = 'disturbed')".into());
            }
            None => {}
        }
        if let Some(ms) = self.since_ms {
            terms.push(format!("r.started_at_ms >= {}", param(Value::Integer(ms), &mut params)));
        }
        if let Some(ms) = self.until_ms {
            terms.push(format!("r.started_at_ms <= {}", param(Value::Integer(ms), &mut params)));
        }
        if let Some(text) = &self.search {
            // SQLite's lower() folds ASCII letters only: the text is folded the same way.
            let p = param(Value::Text(text.to_ascii_lowercase()), &mut params);
            terms.push(format!(
                "(instr(lower(r.command_line), {p}) > 0 OR instr(lower(r.suite), {p}) > 0 \
                 OR instr(lower(r.host), {p}) > 0 OR instr(lower(COALESCE(r.error, '')), {p}) > 0 \
                 OR EXISTS (SELECT 1 FROM labels l WHERE l.run_id = r.id \
                            AND instr(lower(l.key || '=' || l.value), {p}) > 0))"
            ));
        }
        let clause = if terms.is_empty() { "1".to_string() } else { terms.join(" AND ") };
        (clause, params)
    }
}

/// A text fact of the run's environment record; NULL where the record does not read (an old or
/// imported run), so such a run matches no filter on it instead of failing the query.
fn environment_text(path: &str) -> String {
    format!("CASE WHEN json_valid(r.environment_json) THEN json_extract(r.environment_json, '{path}') END")
}

/// `KEY=VALUE` as a label to filter by; a usage error for text without `=` or with an empty key.
pub fn parse_label(text: &str) -> Result<(String, String), UsageError> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(UsageError::new(format!(
            "--label {text:?}: a label is KEY=VALUE (e.g. --label server=a); give the key, '=' and the value"
        ))),
    }
}

/// `--since`: a date (`2026-12-01`, its first instant, UTC) or an RFC 3339 instant
/// (`2026-12-01T08:30:00Z`, `2026-12-01T09:30:00+01:00`), as ms since the Unix epoch.
pub fn parse_since(text: &str) -> Result<i64, UsageError> {
    parse_instant(text, false).ok_or_else(|| bad_date("--since", text))
}

/// `--until`: a date (`2026-12-01`: to the end of that day, UTC) or an RFC 3339 instant, as ms
/// since the Unix epoch.
pub fn parse_until(text: &str) -> Result<i64, UsageError> {
    parse_instant(text, true).ok_or_else(|| bad_date("--until", text))
}

fn bad_date(flag: &str, text: &str) -> UsageError {
    UsageError::new(format!(
        "{flag} {text:?}: not a date; give a UTC date (2026-12-01) or an RFC 3339 instant (2026-12-01T08:30:00Z)"
    ))
}

/// ms since the epoch of a date (its first instant, or its last with `end_of_day`) or an RFC 3339 instant.
fn parse_instant(text: &str, end_of_day: bool) -> Option<i64> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let day_ms = days_from_civil(year, month, day) * 86_400_000;
    if b.len() == 10 {
        return Some(if end_of_day { day_ms + 86_400_000 - 1 } else { day_ms });
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 20 || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut ms = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let millis: String = frac[..digits].chars().chain("000".chars()).take(3).collect();
        ms = millis.parse::<i64>().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && rest.as_bytes()[3] == b':' => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (h, m) = (num_of(&rest[1..3])?, num_of(&rest[4..6])?);
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 60 + m)
        }
        _ => return None,
    };
    Some(day_ms + ((hour * 60 + minute - offset_min) * 60 + second) * 1000 + ms)
}

fn num_of(text: &str) -> Option<i64> {
    text.bytes().all(|c| c.is_ascii_digit()).then(|| text.parse().ok())?
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's days-from-civil; the inverse of
/// [`iomatrix_core::format_utc`]'s).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One page to list: its number (from 1) and how many runs a page holds (1 to [`MAX_PER_PAGE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    number: u64,
    per_page: u64,
}

impl Page {
    /// Page `number` of pages of `per_page` runs; a usage error for page 0 or a page size
    /// outside 1 to [`MAX_PER_PAGE`].
    pub fn new(number: u64, per_page: u64) -> Result<Page, UsageError> {
        if number == 0 {
            return Err(UsageError::new("--page 0: pages count from 1; give --page 1 for the newest runs"));
        }
        if per_page == 0 || per_page > MAX_PER_PAGE {
            return Err(UsageError::new(format!(
                "--per-page {per_page}: a page holds 1 to {MAX_PER_PAGE} runs; give a size in that range \
                 (and --page N for the others)"
            )));
        }
        Ok(Page { number, per_page })
    }

    /// The page's number, from 1.
    pub fn number(self) -> u64 {
        self.number
    }

    /// How many runs a page holds.
    pub fn per_page(self) -> u64 {
        self.per_page
    }
}

/// One page of the runs a filter matched, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPage {
    /// How many runs the filter matched, on every page.
    pub total: u64,
    /// The page asked for.
    pub page: Page,
    /// The page's runs, newest first (by start, then by id), each with its labels.
    pub runs: Vec<RunSummary>,
}

impl RunPage {
    /// How many pages the matched runs fill (1 when none matched: an empty first page).
    pub fn pages(&self) -> u64 {
        self.total.div_ceil(self.page.per_page).max(1)
    }

    /// The place of the page's first run among the matched ones, from 1 (0 on an empty page).
    pub fn first(&self) -> u64 {
        if self.runs.is_empty() {
            0
        } else {
            (self.page.number - 1) * self.page.per_page + 1
        }
    }

    /// The place of the page's last run among the matched ones (0 on an empty page).
    pub fn last(&self) -> u64 {
        if self.runs.is_empty() {
            0
        } else {
            self.first() + self.runs.len() as u64 - 1
        }
    }
}

impl Store {
    /// The runs `filter` matches, newest first (by start time, then id), page `page` of them, with
    /// how many matched in all.
    pub fn list_runs_page(&self, filter: &RunFilter, page: Page) -> Result<RunPage, StoreError> {
        let (clause, params) = filter.sql();
        let total: i64 = self
            .conn
            .query_row(
                &format!("SELECT COUNT(*) FROM runs r WHERE {clause}"),
                rusqlite::params_from_iter(params.iter()),
                |r| r.get(0),
            )
            .map_err(self.err("cannot count runs"))?;
        // The page's ids first, then their rows: the cell counts and records are read for the
        // page's runs only, not for every run the sort passes over.
        let offset = (page.number - 1).saturating_mul(page.per_page);
        let order = "ORDER BY r.started_at_ms DESC, r.id DESC";
        let sql = format!(
            "{SUMMARY_LIST_SELECT} WHERE r.id IN (SELECT r.id FROM runs r WHERE {clause} {order} LIMIT {} OFFSET {offset}) \
             {order}",
            page.per_page
        );
        let mut stmt = self.conn.prepare(&sql).map_err(self.err("cannot list runs"))?;
        let mut runs = stmt
            .query_map(rusqlite::params_from_iter(params.iter()), summary_from_row)
            .map_err(self.err("cannot list runs"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read a run"))?;
        self.fill_labels(&mut runs)?;
        Ok(RunPage { total: total.max(0) as u64, page, runs })
    }

    /// The complete and partial runs that carry every one of `labels`, by id: the runs a label
    /// side (`server=a`) of compare, sweep and report pools.
    pub fn finished_runs_labelled(&self, labels: &[(String, String)]) -> Result<Vec<i64>, StoreError> {
        let (clause, params) = RunFilter { labels: labels.to_vec(), ..RunFilter::default() }.sql();
        let finished = [RunStatus::Complete, RunStatus::Partial].map(|s| format!("'{}'", s.as_str())).join(", ");
        let sql = format!("SELECT r.id FROM runs r WHERE {clause} AND r.status IN ({finished}) ORDER BY r.id");
        let mut stmt = self.conn.prepare(&sql).map_err(self.err("cannot find labelled runs"))?;
        let ids = stmt
            .query_map(rusqlite::params_from_iter(params.iter()), |r| r.get(0))
            .map_err(self.err("cannot find labelled runs"))?
            .collect::<rusqlite::Result<Vec<i64>>>()
            .map_err(self.err("cannot find labelled runs"))?;
        Ok(ids)
    }

    /// Gives each of `runs` its labels, read in one query.
    pub(crate) fn fill_labels(&self, runs: &mut [RunSummary]) -> Result<(), StoreError> {
        if runs.is_empty() {
            return Ok(());
        }
        let ids = serde_json::Value::from(runs.iter().map(|r| r.id).collect::<Vec<_>>()).to_string();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT run_id, key, value FROM labels WHERE run_id IN (SELECT value FROM json_each(?1)) \
                 ORDER BY run_id, key",
            )
            .map_err(self.err("cannot read labels"))?;
        let rows = stmt
            .query_map([ids], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?)))
            .map_err(self.err("cannot read labels"))?;
        let mut by_id: std::collections::HashMap<i64, Vec<(String, String)>> = std::collections::HashMap::new();
        for row in rows {
            let (id, key, value) = row.map_err(self.err("cannot read labels"))?;
            by_id.entry(id).or_default().push((key, value));
        }
        for run in runs {
            run.labels = by_id.remove(&run.id).unwrap_or_default();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_instants_read_as_utc() {
        assert_eq!(parse_since("1970-01-01"), Ok(0));
        assert_eq!(parse_until("1970-01-01"), Ok(86_400_000 - 1));
        // 2026-11-22T04:11:03Z is format_utc's own example.
        assert_eq!(parse_since("2026-11-22T04:11:03Z"), Ok(1_795_320_663_000));
        assert_eq!(parse_since("2026-11-22T05:11:03+01:00"), Ok(1_795_320_663_000));
        assert_eq!(parse_since("2026-11-22T04:11:03.25Z"), Ok(1_795_320_663_250));
        assert_eq!(parse_since("2000-02-29"), Ok(951_782_400_000));
        for bad in ["2026-02-30", "2026-13-01", "yesterday", "2026-12-01T25:00:00Z", "2026-12-01T08:00:00", "26-12-01"]
        {
            let err = parse_since(bad).unwrap_err().to_string();
            assert!(err.contains("--since") && err.contains("2026-12-01T08:30:00Z"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_label_needs_a_key_and_an_equals_sign() {
        assert_eq!(parse_label("server=a"), Ok(("server".into(), "a".into())));
        assert_eq!(parse_label("note="), Ok(("note".into(), String::new())));
        assert!(parse_label("server").unwrap_err().to_string().contains("KEY=VALUE"));
        assert!(parse_label("=a").is_err());
    }

    #[test]
    fn every_state_the_store_knows_is_a_state_to_filter_by() {
        for name in RUN_STATES {
            let state = RunState::parse(name).unwrap();
            if let RunState::Status(s) = state {
                assert_eq!(s.as_str(), *name);
            }
        }
        assert!(RunState::parse("done").unwrap_err().to_string().contains("complete, partial"));
    }

    #[test]
    fn page_zero_and_oversized_pages_are_refused() {
        assert!(Page::new(0, 10).unwrap_err().to_string().contains("--page 1"));
        assert!(Page::new(1, 0).is_err());
        assert!(Page::new(1, 1001).unwrap_err().to_string().contains("1 to 1000"));
        assert_eq!(Page::new(3, 1000).map(Page::per_page), Ok(1000));
    }
}
