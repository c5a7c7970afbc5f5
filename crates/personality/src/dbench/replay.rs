//! One connection's replay of a load file: its operations in order on a
//! [`ReplayFs`], paced as dbench paces them, each timed and checked against
//! the status the file expects.

use crate::dbench::fs::{Disposition, ReplayFs, Want};
use crate::dbench::parse::{Expect, LoadFile, Op, OpKind, OP_NAMES};
use crate::Live;
use crate::OpFigures;
use iomatrix_stats::{ClientSeries, SeriesRecorder};
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How operations are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// As dbench does: an operation with a timestamp waits until that many
    /// seconds after the pass began; one without goes at once.
    Timestamps,
    /// Every operation at once after the one before (`--as-fast-as-possible`).
    AsFastAsPossible,
}

/// How one connection replays.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The connection's number from 0: its paths are `clients/client<N>/...`.
    pub connection: usize,
    /// Whether operations wait for their timestamps or go at once.
    pub pacing: Pacing,
    /// Loop the file (as dbench does) until this instant; None: once through.
    pub deadline: Option<Instant>,
    /// Stop at the first operation whose status is not the expected one
    /// (otherwise mismatches are counted and the replay goes on).
    pub stop_on_mismatch: bool,
    /// The interval of its figures over time, in ns.
    pub series_interval_ns: u64,
}

/// One operation that did not return what the load file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The operation's line in the load file (from 1).
    pub line: u32,
    /// The operation, by dbench's name.
    pub op: &'static str,
    /// The path it worked on, if any.
    pub path: String,
    /// The status the load file expects.
    pub expected: String,
    /// `ok`, or the error.
    pub got: String,
}

/// What one connection's replay did.
#[derive(Debug, Clone)]
pub struct ReplayFigures {
    /// Per operation kind, in the order first done: count, bytes, errors
    /// that were not expected (by kind), mismatches, late starts, latency.
    pub ops: Vec<OpFigures>,
    /// Passes through the whole file.
    pub passes: u64,
    /// From the start to the end of the last operation.
    pub wall_ns: u64,
    /// The first few mismatches, for the user to see which and why.
    pub examples: Vec<Mismatch>,
    /// Why the replay ended early, if it did (a mismatch with
    /// `stop_on_mismatch`, or the stop flag).
    pub stopped: Option<String>,
    /// Its operations over time from its start, each at its end ([`changes_data`]: a write or
    /// a read).
    pub series: ClientSeries,
}

/// How many mismatches a replay keeps word of.
pub const EXAMPLES: usize = 20;

impl ReplayFigures {
    /// Operations done, of every kind.
    pub fn ops_done(&self) -> u64 {
        self.ops.iter().map(|o| o.count).sum()
    }

    /// Bytes read and written.
    pub fn bytes(&self) -> u64 {
        self.ops.iter().map(|o| o.bytes).sum()
    }

    /// Operations whose outcome was not the expected one.
    pub fn mismatches(&self) -> u64 {
        self.ops.iter().map(|o| o.mismatches).sum()
    }

    /// dbench's throughput figure: bytes read and written per second, in
    /// MB of 10^6 bytes.
    pub fn mb_per_s(&self) -> f64 {
        if self.wall_ns == 0 {
            0.0
        } else {
            self.bytes() as f64 / 1e6 / (self.wall_ns as f64 / 1e9)
        }
    }

    /// The figures of one operation kind, by dbench's name; None if it never ran.
    pub fn op(&self, name: &str) -> Option<&OpFigures> {
        self.ops.iter().find(|o| o.name == name)
    }
}

/// An open handle of the traced client's (its fnum) as this replay holds it.
struct Held {
    handle: u64,
    path: usize,
}

/// The kind name a failure is counted under (`ENOENT`, `EAGAIN`...).
fn kind_name(e: &io::Error) -> String {
    iomatrix_backend::error_kind(e)
}

/// DOS/Windows wildcard matching as FIND_FIRST does, without regard to
/// case: `*` any run, `?` one character, `<` (DOS_STAR) any run up to the
/// last `.`, `>` (DOS_QM) one character or none, `"` (DOS_DOT) a `.` or the end.
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let n: Vec<char> = name.to_lowercase().chars().collect();
    // Dynamic programming over (pattern position, name position), bounded by their lengths.
    let mut reach = vec![vec![false; n.len() + 1]; p.len() + 1];
    reach[0][0] = true;
    let last_dot = n.iter().rposition(|c| *c == '.');
    for i in 0..p.len() {
        for j in 0..=n.len() {
            if !reach[i][j] {
                continue;
            }
            match p[i] {
                '*' => {
                    reach[i + 1][j..].fill(true);
                }
                '<' => {
                    // Up to (not past) the name's last dot; all of it when it has none.
                    let end = last_dot.unwrap_or(n.len()).max(j);
                    reach[i + 1][j..=end].fill(true);
                }
                '>' => {
                    reach[i + 1][j] = true;
                    if j < n.len() && n[j] != '.' {
                        reach[i + 1][j + 1] = true;
                    }
                }
                '"' => {
                    if j == n.len() {
                        reach[i + 1][j] = true;
                    } else if n[j] == '.' {
                        reach[i + 1][j + 1] = true;
                    }
                }
                '?' => {
                    if j < n.len() {
                        reach[i + 1][j + 1] = true;
                    }
                }
                c => {
                    if j < n.len() && n[j] == c {
                        reach[i + 1][j + 1] = true;
                    }
                }
            }
        }
    }
    reach[p.len()][n.len()]
}

/// Replays `load` once through (or looped until the deadline) on `files` as
/// connection `opts.connection`, adding to `live`'s operations and bytes as
/// it goes; `stop` raised ends it before its next operation.
pub fn replay_connection(
    load: &LoadFile,
    files: &mut dyn ReplayFs,
    opts: &ReplayOptions,
    live: &Live,
    stop: &AtomicBool,
) -> ReplayFigures {
    let paths = load.paths_for(opts.connection);
    let mut r = Replayer {
        load,
        files,
        paths,
        held: HashMap::new(),
        figures: OP_NAMES.iter().map(|(n, _)| OpFigures::new(*n)).collect(),
        seen: Vec::new(),
        examples: Vec::new(),
        buf: Vec::new(),
        series: SeriesRecorder::new(opts.series_interval_ns),
        origin: Instant::now(),
    };
    let started = Instant::now();
    r.origin = started;
    let mut passes = 0;
    let mut stopped = None;
    let mut last_end = started;
    'passes: loop {
        let pass_start = Instant::now();
        for op in &load.ops {
            if stop.load(Ordering::Relaxed) {
                stopped = Some("stopped".to_string());
                break 'passes;
            }
            if opts.deadline.is_some_and(|d| Instant::now() >= d) {
                break 'passes;
            }
            let mut late = false;
            if let (Pacing::Timestamps, Some(at)) = (opts.pacing, op.at) {
                let due = pass_start + Duration::from_secs_f64(at);
                let now = Instant::now();
                if due > now {
                    // In slices, so that a stop is heard during a long gap between two lines.
                    let until = opts.deadline.map_or(due, |d| due.min(d));
                    while let Some(left) = until.checked_duration_since(Instant::now()).filter(|l| !l.is_zero()) {
                        if stop.load(Ordering::Relaxed) {
                            stopped = Some("stopped".to_string());
                            break 'passes;
                        }
                        std::thread::sleep(left.min(Duration::from_millis(100)));
                    }
                    if opts.deadline.is_some_and(|d| Instant::now() >= d) {
                        break 'passes;
                    }
                } else {
                    late = now - due > Duration::from_millis(1);
                }
            }
            let agreed = r.step(op, late, live);
            last_end = Instant::now();
            if !agreed && opts.stop_on_mismatch {
                let m = r.examples.last().cloned();
                stopped = m.map(|m| {
                    format!(
                        "line {}: {} {} returned {}, the load file expects {} (stopped at the first mismatch)",
                        m.line, m.op, m.path, m.got, m.expected
                    )
                });
                break 'passes;
            }
        }
        passes += 1;
        // A new pass starts with the traced client's handles closed, as its first one did.
        r.close_all();
        if opts.deadline.is_none() {
            break;
        }
    }
    r.close_all();
    let wall_ns = last_end.saturating_duration_since(started).as_nanos() as u64;
    let mut ops = Vec::new();
    for i in r.seen {
        ops.push(r.figures[i].clone());
    }
    let series = r.series.finish(wall_ns);
    ReplayFigures { ops, passes, wall_ns, examples: r.examples, stopped, series }
}

/// Removes what connection `connection` left (`clients/client<N>`), and
/// `clients` when it is empty: untimed, as dbench's cleanup.
pub fn cleanup_connection(files: &mut dyn ReplayFs, connection: usize) -> io::Result<()> {
    files.deltree(&format!("clients/client{connection}"))?;
    match files.rmdir("clients") {
        Ok(()) => Ok(()),
        // Other connections still have theirs there, or it was never made.
        Err(e) if matches!(e.kind(), io::ErrorKind::DirectoryNotEmpty | io::ErrorKind::NotFound) => Ok(()),
        // SMB answers a folder with entries as the delete's failure, named otherwise; leave it.
        Err(_) => Ok(()),
    }
}

struct Replayer<'a> {
    load: &'a LoadFile,
    files: &'a mut dyn ReplayFs,
    paths: Vec<String>,
    held: HashMap<u32, Held>,
    figures: Vec<OpFigures>,
    /// Indexes into `figures` in the order first done.
    seen: Vec<usize>,
    examples: Vec<Mismatch>,
    buf: Vec<u8>,
    series: SeriesRecorder,
    /// The replay's start, which its series counts from.
    origin: Instant,
}

/// Whether an operation of `kind` changes what is stored: a write in the figures over time (an
/// NTCreateX, which opens or creates, counts as an open: a read, as the other lookups).
fn changes_data(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::WriteX { .. }
            | OpKind::Unlink { .. }
            | OpKind::Mkdir { .. }
            | OpKind::Rmdir { .. }
            | OpKind::Deltree { .. }
            | OpKind::Rename { .. }
            | OpKind::Flush { .. }
            | OpKind::SetFile { .. }
    )
}

impl Replayer<'_> {
    fn close_all(&mut self) {
        for (_, h) in self.held.drain() {
            let _ = self.files.close(h.handle);
        }
    }

    fn handle(&self, fnum: u32) -> io::Result<u64> {
        self.held.get(&fnum).map(|h| h.handle).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("handle {fnum} is not open (its NTCreateX failed)"))
        })
    }

    fn path_of(&self, op: &Op) -> String {
        let p = |id: u32| self.paths[id as usize].clone();
        match op.kind {
            OpKind::NtCreateX { path, .. }
            | OpKind::Unlink { path }
            | OpKind::Mkdir { path }
            | OpKind::Rmdir { path }
            | OpKind::Deltree { path }
            | OpKind::FindFirst { path, .. }
            | OpKind::QueryPath { path } => p(path),
            OpKind::Rename { from, to } => format!("{} -> {}", p(from), p(to)),
            OpKind::Close { fnum }
            | OpKind::ReadX { fnum, .. }
            | OpKind::WriteX { fnum, .. }
            | OpKind::Flush { fnum }
            | OpKind::QueryFile { fnum }
            | OpKind::SetFile { fnum }
            | OpKind::LockX { fnum, .. }
            | OpKind::UnlockX { fnum, .. } => match self.held.get(&fnum) {
                Some(h) => self.paths[h.path].clone(),
                None => format!("handle {fnum}"),
            },
            OpKind::QueryFs | OpKind::Sleep { .. } => String::new(),
        }
    }

    /// Does one operation, times it, and files it; false when its status
    /// was not the expected one.
    fn step(&mut self, op: &Op, late: bool, live: &Live) -> bool {
        let path_for_message = self.path_of(op);
        let started = Instant::now();
        let (result, bytes) = self.run(op);
        let ended = Instant::now();
        let ns = ended.saturating_duration_since(started).as_nanos() as u64;
        let at = ended.saturating_duration_since(self.origin).as_nanos() as u64;
        self.series.record(at, ns, bytes, changes_data(&op.kind));
        let got = result.as_ref().map(|_| ()).map_err(|e| e.kind());
        let agreed = op.expect.agrees(&got);
        let i = op.kind.index();
        if self.figures[i].count == 0 {
            self.seen.push(i);
        }
        let f = &mut self.figures[i];
        f.count += 1;
        f.bytes += bytes;
        f.latency.record(ns);
        if late {
            f.late += 1;
        }
        if let Err(e) = &result {
            // An error the file expects (NT_STATUS_OBJECT_NAME_NOT_FOUND...) is what the load does, not a failure.
            let expected_error = matches!(op.expect, Expect::Fails(_) | Expect::FailsAnyhow | Expect::Anything);
            if !agreed || !expected_error {
                *f.errors_by_kind.entry(kind_name(e)).or_default() += 1;
            }
        }
        if !agreed {
            f.mismatches += 1;
            if self.examples.len() < EXAMPLES {
                self.examples.push(Mismatch {
                    line: op.line,
                    op: op.kind.name(),
                    path: path_for_message,
                    expected: self.load.status_text(op).to_string(),
                    got: match &result {
                        Ok(_) => "ok".into(),
                        Err(e) => format!("{} ({e})", kind_name(e)),
                    },
                });
            }
        }
        live.ops.fetch_add(1, Ordering::Relaxed);
        live.bytes.fetch_add(bytes, Ordering::Relaxed);
        agreed
    }

    /// The operation itself: its outcome and the bytes it moved.
    fn run(&mut self, op: &Op) -> (io::Result<()>, u64) {
        let path = |id: u32| self.paths[id as usize].as_str();
        match op.kind {
            OpKind::NtCreateX { path: p, options, disposition, fnum } => {
                let opened = self.files.open(path(p), Disposition::of(disposition), Want::of(options));
                match opened {
                    Ok(h) if op.expect == Expect::Ok || op.expect == Expect::Anything => {
                        // The traced client reuses a number only after closing it; a stale one is closed first.
                        if let Some(old) = self.held.insert(fnum, Held { handle: h, path: p as usize }) {
                            let _ = self.files.close(old.handle);
                        }
                        (Ok(()), 0)
                    }
                    // Opened where the file expects a failure: a mismatch; the handle is not kept.
                    Ok(h) => {
                        let _ = self.files.close(h);
                        (Ok(()), 0)
                    }
                    Err(e) => (Err(e), 0),
                }
            }
            OpKind::Close { fnum } => match self.held.remove(&fnum) {
                Some(h) => (self.files.close(h.handle), 0),
                None => (self.handle(fnum).map(drop), 0),
            },
            OpKind::ReadX { fnum, offset, size } => {
                let size = size as usize;
                if self.buf.len() < size {
                    self.buf.resize(size, 0);
                }
                let r = self.handle(fnum).and_then(|h| self.files.read(h, &mut self.buf[..size], offset));
                match r {
                    Ok(n) => (Ok(()), n as u64),
                    Err(e) => (Err(e), 0),
                }
            }
            OpKind::WriteX { fnum, offset, size } => {
                let size = size as usize;
                if self.buf.len() < size {
                    self.buf.resize(size, 0);
                }
                // dbench writes zeros (its buffer is calloc'd).
                self.buf[..size].fill(0);
                let r = self.handle(fnum).and_then(|h| self.files.write(h, &self.buf[..size], offset));
                let moved = if r.is_ok() { size as u64 } else { 0 };
                (r, moved)
            }
            OpKind::Flush { fnum } => (self.handle(fnum).and_then(|h| self.files.flush(h)), 0),
            OpKind::Unlink { path: p } => (self.files.unlink(path(p)), 0),
            OpKind::Mkdir { path: p } => {
                // dbench ignores Mkdir's outcome: a folder that is there (another connection's
                // `\clients`, or a later pass's) is what the line wants.
                match self.files.mkdir(path(p)) {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (Ok(()), 0),
                    r => (r, 0),
                }
            }
            OpKind::Rmdir { path: p } => (self.files.rmdir(path(p)), 0),
            OpKind::Deltree { path: p } => (self.files.deltree(path(p)), 0),
            OpKind::Rename { from, to } => (self.files.rename(path(from), path(to)), 0),
            OpKind::FindFirst { path: p, max } => {
                let full = path(p);
                let (dir, pattern) = full.rsplit_once('/').unwrap_or(("", full));
                let (dir, pattern) = (dir.to_string(), pattern.to_string());
                let r = self.files.list(&dir).and_then(|names| {
                    let found = names.iter().filter(|n| wildcard_match(&pattern, n)).take(max.max(1) as usize).count();
                    if found == 0 {
                        Err(io::Error::new(io::ErrorKind::NotFound, format!("{dir}: nothing matches {pattern}")))
                    } else {
                        Ok(())
                    }
                });
                (r, 0)
            }
            OpKind::QueryPath { path: p } => (self.files.stat(path(p)), 0),
            OpKind::QueryFile { fnum } => (self.handle(fnum).and_then(|h| self.files.fstat(h)), 0),
            OpKind::QueryFs => (self.files.statfs(), 0),
            OpKind::SetFile { fnum } => (self.handle(fnum).and_then(|h| self.files.touch(h)), 0),
            OpKind::LockX { fnum, offset, len } => (self.handle(fnum).and_then(|h| self.files.lock(h, offset, len)), 0),
            OpKind::UnlockX { fnum, offset, len } => {
                (self.handle(fnum).and_then(|h| self.files.unlock(h, offset, len)), 0)
            }
            OpKind::Sleep { usec } => {
                std::thread::sleep(Duration::from_micros(usec.min(60_000_000)));
                (Ok(()), 0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_find_first_does() {
        assert!(wildcard_match("FILLER.*", "filler.000"));
        assert!(!wildcard_match("FILLER.*", "mixfile"));
        assert!(wildcard_match("<.JNK", "ABC.JNK"));
        assert!(wildcard_match("<.JNK", "a.b.jnk"));
        assert!(!wildcard_match("<.JNK", "abc.txt"));
        assert!(wildcard_match("a?c", "abc") && !wildcard_match("a?c", "ac"));
        assert!(wildcard_match("a>c", "ac") && wildcard_match("a>c", "abc"));
        assert!(wildcard_match("abc\"", "abc") && wildcard_match("abc\"txt", "abc.txt"));
        assert!(wildcard_match("*", "") && !wildcard_match("?", ""));
    }
}
