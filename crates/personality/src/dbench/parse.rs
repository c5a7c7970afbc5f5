//! The load-file format dbench 4 reads (`client.txt`, NetBench's names):
//! one operation a line, its arguments, and the status the traced server
//! answered, optionally led by the second at which it was issued:
//!
//! ```text
//! NTCreateX "\clients\client1\~dmtmp" 0x1 0x2 9937 NT_STATUS_OK
//! 0.012 ReadX 9938 0 65536 65536 NT_STATUS_OK
//! ```
//!
//! As dbench: tokens are split at blanks, `"` groups a token with blanks in
//! it, `\` in a path is `/`, a first token that starts with a digit is the
//! timestamp, `#` starts a comment line, a line of fewer than two tokens is
//! skipped, `REPEAT n` repeats the next line n times, names of operations
//! match without regard to case, numbers are decimal or `0x` hex. dbench's
//! later additions that draw random values (`*`, `+` arguments, `LOOP`,
//! `RANDOMSTRING`, `WRITEPATTERN`) are refused by name.

use std::collections::HashMap;
use std::io;

/// Bounds on what is read: a load file is input, not trusted.
pub const MAX_BYTES: u64 = iomatrix_guard::Input::DBENCH_LOAD_FILE.max_bytes;
/// The longest line read (bytes); a longer one is refused.
pub const MAX_LINE: usize = 64 * 1024;
/// The most operations a load file may hold after REPEAT is unrolled.
pub const MAX_OPS: usize = 20_000_000;

/// An index into the load file's table of paths (see [`LoadFile::paths_for`]).
pub type PathId = u32;

/// One operation of a load file and its arguments (dbench's meaning; fnum
/// is the traced client's handle number, which later lines refer to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// `options` bit 0x1 is FILE_DIRECTORY_FILE, 0x40 FILE_NON_DIRECTORY_FILE;
    /// `disposition` 0 supersede, 1 open, 2 create, 3 open-if, 4 overwrite, 5 overwrite-if.
    NtCreateX {
        /// The path to open or create, in the load file's table.
        path: PathId,
        /// NTCreateX's create options (see [`Want::of`](crate::dbench::Want::of)).
        options: u32,
        /// NTCreateX's disposition (see [`Disposition::of`](crate::dbench::Disposition::of)).
        disposition: u32,
        /// The handle number the traced client got, which later lines use.
        fnum: u32,
    },
    /// Closes a handle.
    Close {
        /// The traced client's handle number.
        fnum: u32,
    },
    /// Reads `size` bytes at `offset`.
    ReadX {
        /// The traced client's handle number.
        fnum: u32,
        /// Where in the file (bytes).
        offset: u64,
        /// How many bytes.
        size: u32,
    },
    /// Writes `size` bytes at `offset`.
    WriteX {
        /// The traced client's handle number.
        fnum: u32,
        /// Where in the file (bytes).
        offset: u64,
        /// How many bytes.
        size: u32,
    },
    /// Makes a handle's data durable.
    Flush {
        /// The traced client's handle number.
        fnum: u32,
    },
    /// Removes a file.
    Unlink {
        /// The path, in the load file's table.
        path: PathId,
    },
    /// Makes a folder.
    Mkdir {
        /// The path, in the load file's table.
        path: PathId,
    },
    /// Removes an empty folder.
    Rmdir {
        /// The path, in the load file's table.
        path: PathId,
    },
    /// Removes a folder and everything below it.
    Deltree {
        /// The path, in the load file's table.
        path: PathId,
    },
    /// Renames `from` to `to`.
    Rename {
        /// The old path, in the load file's table.
        from: PathId,
        /// The new path, in the load file's table.
        to: PathId,
    },
    /// A folder listing matched against a pattern (`FILLER.*`, `<.JNK`).
    FindFirst {
        /// The folder and pattern, in the load file's table.
        path: PathId,
        /// The most names the traced client asked for.
        max: u32,
    },
    /// What is at a path (QUERY_PATH_INFORMATION).
    QueryPath {
        /// The path, in the load file's table.
        path: PathId,
    },
    /// What an open handle is (QUERY_FILE_INFORMATION).
    QueryFile {
        /// The traced client's handle number.
        fnum: u32,
    },
    /// The file system's size and free space (QUERY_FS_INFORMATION).
    QueryFs,
    /// Sets a handle's times (SET_FILE_INFORMATION).
    SetFile {
        /// The traced client's handle number.
        fnum: u32,
    },
    /// Takes an exclusive byte-range lock.
    LockX {
        /// The traced client's handle number.
        fnum: u32,
        /// Where the range starts (bytes).
        offset: u64,
        /// How long it is (bytes).
        len: u64,
    },
    /// Releases a byte-range lock.
    UnlockX {
        /// The traced client's handle number.
        fnum: u32,
        /// Where the range starts (bytes).
        offset: u64,
        /// How long it is (bytes).
        len: u64,
    },
    /// Waits (the traced client's think time).
    Sleep {
        /// How long, in microseconds.
        usec: u64,
    },
}

/// The operations, by dbench's names, and how many arguments each takes
/// (before the status).
pub const OP_NAMES: [(&str, usize); 18] = [
    ("NTCreateX", 4),
    ("Close", 1),
    ("ReadX", 4),
    ("WriteX", 4),
    ("Flush", 1),
    ("Unlink", 2),
    ("Mkdir", 1),
    ("Rmdir", 1),
    ("Deltree", 1),
    ("Rename", 2),
    ("FIND_FIRST", 4),
    ("QUERY_PATH_INFORMATION", 2),
    ("QUERY_FILE_INFORMATION", 2),
    ("QUERY_FS_INFORMATION", 1),
    ("SET_FILE_INFORMATION", 2),
    ("LockX", 3),
    ("UnlockX", 3),
    ("Sleep", 1),
];

impl OpKind {
    /// dbench's name of the operation (also the name its figures go under).
    pub fn name(&self) -> &'static str {
        OP_NAMES[self.index()].0
    }

    /// Its place in [`OP_NAMES`].
    pub fn index(&self) -> usize {
        match self {
            OpKind::NtCreateX { .. } => 0,
            OpKind::Close { .. } => 1,
            OpKind::ReadX { .. } => 2,
            OpKind::WriteX { .. } => 3,
            OpKind::Flush { .. } => 4,
            OpKind::Unlink { .. } => 5,
            OpKind::Mkdir { .. } => 6,
            OpKind::Rmdir { .. } => 7,
            OpKind::Deltree { .. } => 8,
            OpKind::Rename { .. } => 9,
            OpKind::FindFirst { .. } => 10,
            OpKind::QueryPath { .. } => 11,
            OpKind::QueryFile { .. } => 12,
            OpKind::QueryFs => 13,
            OpKind::SetFile { .. } => 14,
            OpKind::LockX { .. } => 15,
            OpKind::UnlockX { .. } => 16,
            OpKind::Sleep { .. } => 17,
        }
    }
}

/// What the load file says the operation returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// NT_STATUS_OK, SUCCESS, 0x0.
    Ok,
    /// A failure of this kind (NT_STATUS_OBJECT_NAME_NOT_FOUND: NotFound...).
    Fails(io::ErrorKind),
    /// A failure of a kind this replay does not tell apart (an NT status
    /// it does not know, ERROR, a non-zero 0x value): any error agrees.
    FailsAnyhow,
    /// `*`: whatever happens.
    Anything,
}

impl Expect {
    /// The status word of a load file as what the operation must do.
    pub fn of(status: &str) -> Expect {
        use io::ErrorKind as K;
        match status {
            "NT_STATUS_OK" | "SUCCESS" => Expect::Ok,
            "*" => Expect::Anything,
            "NT_STATUS_OBJECT_NAME_NOT_FOUND" | "NT_STATUS_NO_SUCH_FILE" | "NT_STATUS_OBJECT_PATH_NOT_FOUND" => {
                Expect::Fails(K::NotFound)
            }
            "NT_STATUS_OBJECT_NAME_COLLISION" => Expect::Fails(K::AlreadyExists),
            "NT_STATUS_ACCESS_DENIED" => Expect::Fails(K::PermissionDenied),
            "NT_STATUS_DIRECTORY_NOT_EMPTY" => Expect::Fails(K::DirectoryNotEmpty),
            "NT_STATUS_FILE_IS_A_DIRECTORY" => Expect::Fails(K::IsADirectory),
            "NT_STATUS_NOT_A_DIRECTORY" => Expect::Fails(K::NotADirectory),
            "NT_STATUS_SHARING_VIOLATION" => Expect::Fails(K::ResourceBusy),
            "NT_STATUS_LOCK_NOT_GRANTED" | "NT_STATUS_FILE_LOCK_CONFLICT" => Expect::Fails(K::WouldBlock),
            "NT_STATUS_DISK_FULL" => Expect::Fails(K::StorageFull),
            s if s.starts_with("0x") => match u64::from_str_radix(&s[2..], 16) {
                Ok(0) => Expect::Ok,
                _ => Expect::FailsAnyhow,
            },
            _ => Expect::FailsAnyhow,
        }
    }

    /// Whether `got` is what was expected.
    pub fn agrees(&self, got: &Result<(), io::ErrorKind>) -> bool {
        match (self, got) {
            (Expect::Anything, _) | (Expect::Ok, Ok(())) | (Expect::FailsAnyhow, Err(_)) => true,
            (Expect::Fails(want), Err(kind)) => want == kind,
            _ => false,
        }
    }
}

/// One line's operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Op {
    /// Its line in the load file (from 1), for messages.
    pub line: u32,
    /// Seconds from the start at which the traced client issued it, where the file says.
    pub at: Option<f64>,
    /// What it does, with its arguments.
    pub kind: OpKind,
    /// The status as the file writes it: an index into [`LoadFile::status_text`].
    pub status: u16,
    /// What the load file says it returned, read from `status`.
    pub expect: Expect,
}

/// A parsed load file: its operations in order (REPEAT unrolled) and the
/// paths they name, each once.
#[derive(Debug, Clone)]
pub struct LoadFile {
    /// The operations in order, REPEAT unrolled.
    pub ops: Vec<Op>,
    /// Paths with `/` between parts, without the leading one (`clients/client1/~dmtmp`).
    paths: Vec<String>,
    statuses: Vec<String>,
    /// Operations that carry a timestamp.
    pub timed_ops: usize,
}

/// A line the parser refused: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", said(.file, *.line, .message))]
pub struct ParseError {
    /// The load file, as named.
    pub file: String,
    /// From 1; 0 for the file as a whole.
    pub line: usize,
    /// What is wrong, and the fix where there is one.
    pub message: String,
}

/// A [`ParseError`] in words: the file, the line, the message.
fn said(file: &str, line: usize, message: &str) -> String {
    if line == 0 && message.contains(file) {
        // The reader's messages name the file themselves.
        message.to_string()
    } else if line == 0 {
        format!("{file}: {message}")
    } else {
        format!("{file} line {line}: {message}")
    }
}

/// Splits a line at blanks, `"` grouping (and dropped), as dbench's next_token.
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' | '\t' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            c => {
                current.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(current);
    }
    out
}

/// dbench's operation names, nearest first to `word`.
fn nearest_op(word: &str) -> &'static str {
    let lower = word.to_ascii_lowercase();
    OP_NAMES
        .iter()
        .map(|(n, _)| (strsim::levenshtein(&lower, &n.to_ascii_lowercase()), *n))
        .min()
        .map(|(_, n)| n)
        .unwrap_or("NTCreateX")
}

struct Builder {
    paths: Vec<String>,
    path_ids: HashMap<String, PathId>,
    statuses: Vec<String>,
    source: String,
}

impl Builder {
    fn error(&self, line: usize, message: impl Into<String>) -> ParseError {
        ParseError { file: self.source.clone(), line, message: message.into() }
    }

    fn path(&mut self, line: usize, token: &str) -> Result<PathId, ParseError> {
        let slashed = token.replace('\\', "/");
        let Some(below) = slashed.strip_prefix('/') else {
            return Err(
                self.error(line, format!("'{token}' is not a path: paths start with \\ (\"\\clients\\client1\\...\")"))
            );
        };
        let parts: Vec<&str> = below.split('/').filter(|p| !p.is_empty()).collect();
        if parts.contains(&"..") {
            return Err(self.error(line, format!("'{token}': '..' would leave the replay's folder")));
        }
        let clean = parts.join("/");
        if let Some(id) = self.path_ids.get(&clean) {
            return Ok(*id);
        }
        let id = self.paths.len() as PathId;
        self.paths.push(clean.clone());
        self.path_ids.insert(clean, id);
        Ok(id)
    }

    fn status(&mut self, text: &str) -> u16 {
        match self.statuses.iter().position(|s| s == text) {
            Some(i) => i as u16,
            None => {
                self.statuses.push(text.to_string());
                (self.statuses.len() - 1) as u16
            }
        }
    }
}

/// A number as dbench reads it (strtoll base 0, without octal): decimal or `0x` hex.
fn number(b: &Builder, line: usize, token: &str, what: &str) -> Result<u64, ParseError> {
    if token.starts_with('*') || token.starts_with('+') {
        return Err(b.error(
            line,
            format!("{what} '{token}': random and relative arguments (dbench's '*' and '+') are not supported; write the number"),
        ));
    }
    let parsed = match token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => token.parse::<u64>(),
    };
    parsed.map_err(|_| b.error(line, format!("{what} '{token}' is not a number (decimal, or hex as 0x...)")))
}

/// A first word that is meant as a timestamp but does not start with a
/// digit (`-1`, `.5`, `nan`, `inf`): refused as a timestamp, not taken for
/// an operation's name.
fn looks_like_a_time(token: &str) -> bool {
    let bare = token.trim_start_matches(['-', '+', '.']);
    (bare.len() < token.len() && bare.starts_with(|c: char| c.is_ascii_digit()))
        || ["nan", "inf", "infinity", "-inf", "+inf", "-nan"].contains(&token.to_ascii_lowercase().as_str())
}

/// The seconds a line's timestamp says: finite, from 0 up to
/// `iomatrix_core::MAX_DURATION` (30 days), as every duration of iomatrix.
fn timestamp(b: &Builder, line: usize, token: &str) -> Result<f64, ParseError> {
    let most = iomatrix_core::MAX_DURATION.as_secs_f64();
    match token.parse::<f64>() {
        Ok(t) if (0.0..=most).contains(&t) => Ok(t),
        Ok(t) if t.is_finite() && t > most => Err(b.error(
            line,
            format!(
                "timestamp '{token}' is beyond {}: a load file's timestamps are seconds from its start, at most {most}",
                iomatrix_core::MAX_DURATION_TEXT
            ),
        )),
        _ => Err(b.error(
            line,
            format!("'{token}' is not a timestamp: seconds from the file's start, 0 to {most} (e.g. 0.012)"),
        )),
    }
}

fn num32(b: &Builder, line: usize, token: &str, what: &str) -> Result<u32, ParseError> {
    let n = number(b, line, token, what)?;
    u32::try_from(n).map_err(|_| b.error(line, format!("{what} '{token}' is larger than 4294967295")))
}

impl LoadFile {
    /// Reads and parses a load file through iomatrix's one bounded reader: at most
    /// [`MAX_BYTES`], lines of at most [`MAX_LINE`], text (a compressed file is named as such),
    /// a regular file (a device or FIFO is refused unopened).
    pub fn read(path: &std::path::Path) -> Result<LoadFile, ParseError> {
        let source = path.display().to_string();
        let text = iomatrix_guard::read_text(path, &iomatrix_guard::Input::DBENCH_LOAD_FILE)
            .map_err(|e| ParseError { file: source.clone(), line: 0, message: e.message })?;
        LoadFile::parse(&text, &source)
    }

    /// Parses a load file's text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<LoadFile, ParseError> {
        let mut b =
            Builder { paths: Vec::new(), path_ids: HashMap::new(), statuses: Vec::new(), source: source.into() };
        let mut ops = Vec::new();
        let mut timed_ops = 0;
        let mut repeat: Option<(usize, u32)> = None;
        // The last timestamp and its line: timestamps never go back.
        let mut last_time: Option<(usize, f64)> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.len() > MAX_LINE {
                return Err(b.error(line, format!("{} bytes long: longer than a line can be ({MAX_LINE})", raw.len())));
            }
            let toks = tokens(raw.trim_end_matches('\r'));
            if toks.len() < 2 || toks[0].starts_with('#') {
                continue;
            }
            let first = toks[0].as_str();
            if first.starts_with("SMB") {
                return Err(b.error(line, "this is a dbench 1 load file (SMB... lines): use a dbench 3 or 4 one"));
            }
            if first == "REPEAT" {
                let n = num32(&b, line, &toks[1], "REPEAT's count")?;
                repeat = Some((line, n));
                continue;
            }
            if ["LOOP", "ENDLOOP", "RANDOMSTRING", "WRITEPATTERN"].contains(&first) {
                return Err(b.error(line, format!("{first} is not supported: write the operations out")));
            }
            let (at, rest) = if first.starts_with(|c: char| c.is_ascii_digit()) || looks_like_a_time(first) {
                let t = timestamp(&b, line, first)?;
                if let Some((earlier_line, earlier)) = last_time.filter(|(_, earlier)| t < *earlier) {
                    return Err(b.error(
                        line,
                        format!(
                            "timestamp {first} is earlier than line {earlier_line}'s {earlier}: a replay paced by the \
                             timestamps would issue it late and count it late; put the lines in time order"
                        ),
                    ));
                }
                last_time = Some((line, t));
                (Some(t), &toks[1..])
            } else {
                (None, &toks[..])
            };
            if rest.len() < 2 {
                return Err(b.error(line, "a timestamp and nothing more: write OPERATION ARGUMENTS... STATUS after it"));
            }
            let name = rest[0].as_str();
            let status = rest[rest.len() - 1].as_str();
            if !["NT_STATUS_", "0x", "SUCCESS", "ERROR", "*"].iter().any(|p| status.starts_with(p)) {
                return Err(b.error(
                    line,
                    format!(
                        "'{status}' is not a status: a line ends with the status the operation returned \
                         (NT_STATUS_..., 0x..., SUCCESS, ERROR or *)"
                    ),
                ));
            }
            let Some(&(canonical, want)) = OP_NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
                return Err(b.error(line, format!("unknown operation '{name}': did you mean {}?", nearest_op(name))));
            };
            let args = &rest[1..rest.len() - 1];
            if args.len() < want {
                return Err(b.error(
                    line,
                    format!("{canonical} takes {want} argument(s) before the status, this line has {}", args.len()),
                ));
            }
            let kind = Self::op(&mut b, line, canonical, args)?;
            let status_id = b.status(status);
            let op = Op { line: line as u32, at, kind, status: status_id, expect: Expect::of(status) };
            let times = match repeat.take() {
                Some((_, n)) => n as usize,
                None => 1,
            };
            if ops.len() + times > MAX_OPS {
                return Err(b.error(line, format!("more than {MAX_OPS} operations: cut the load file into parts")));
            }
            if at.is_some() {
                timed_ops += times;
            }
            iomatrix_core::alloc::try_grow(&mut ops, times, "the load file's operations")
                .map_err(|e| b.error(line, e.to_string()))?;
            ops.extend(std::iter::repeat_n(op, times));
        }
        if let Some((line, _)) = repeat {
            return Err(b.error(line, "REPEAT on the last line: it repeats the line after it"));
        }
        if ops.is_empty() {
            return Err(b.error(
                0,
                "holds no operations (lines like: NTCreateX \"\\clients\\client1\\f\" 0x0 0x2 1 NT_STATUS_OK)",
            ));
        }
        Ok(LoadFile { ops, paths: b.paths, statuses: b.statuses, timed_ops })
    }

    fn op(b: &mut Builder, line: usize, name: &str, a: &[String]) -> Result<OpKind, ParseError> {
        let fnum = |b: &Builder| num32(b, line, &a[0], "the handle");
        Ok(match name {
            "NTCreateX" => OpKind::NtCreateX {
                path: b.path(line, &a[0])?,
                options: num32(b, line, &a[1], "the create options")?,
                disposition: match num32(b, line, &a[2], "the disposition")? {
                    d @ 0..=5 => d,
                    d => return Err(b.error(line, format!("disposition {d} is not one of NTCreateX's (0..5)"))),
                },
                fnum: num32(b, line, &a[3], "the handle")?,
            },
            "Close" => OpKind::Close { fnum: fnum(b)? },
            "ReadX" | "WriteX" => {
                let (fnum, offset, size) =
                    (fnum(b)?, number(b, line, &a[1], "the offset")?, num32(b, line, &a[2], "the size")?);
                if size > 16 << 20 {
                    return Err(b.error(line, format!("{size} bytes at once: more than dbench's 16 MiB buffer")));
                }
                if name == "ReadX" {
                    OpKind::ReadX { fnum, offset, size }
                } else {
                    OpKind::WriteX { fnum, offset, size }
                }
            }
            "Flush" => OpKind::Flush { fnum: fnum(b)? },
            "Unlink" => OpKind::Unlink { path: b.path(line, &a[0])? },
            "Mkdir" => OpKind::Mkdir { path: b.path(line, &a[0])? },
            "Rmdir" => OpKind::Rmdir { path: b.path(line, &a[0])? },
            "Deltree" => OpKind::Deltree { path: b.path(line, &a[0])? },
            "Rename" => OpKind::Rename { from: b.path(line, &a[0])?, to: b.path(line, &a[1])? },
            "FIND_FIRST" => {
                OpKind::FindFirst { path: b.path(line, &a[0])?, max: num32(b, line, &a[2], "the most entries")? }
            }
            "QUERY_PATH_INFORMATION" => OpKind::QueryPath { path: b.path(line, &a[0])? },
            "QUERY_FILE_INFORMATION" => OpKind::QueryFile { fnum: fnum(b)? },
            "QUERY_FS_INFORMATION" => OpKind::QueryFs,
            "SET_FILE_INFORMATION" => OpKind::SetFile { fnum: fnum(b)? },
            "LockX" | "UnlockX" => {
                let (fnum, offset, len) =
                    (fnum(b)?, number(b, line, &a[1], "the offset")?, number(b, line, &a[2], "the length")?);
                if name == "LockX" {
                    OpKind::LockX { fnum, offset, len }
                } else {
                    OpKind::UnlockX { fnum, offset, len }
                }
            }
            "Sleep" => OpKind::Sleep { usec: number(b, line, &a[0], "the microseconds")? },
            other => unreachable!("{other} is in OP_NAMES"),
        })
    }

    /// The memory a replay of this file holds, in bytes: once per process
    /// (the parsed operations, the paths and statuses), and per connection
    /// (its own copy of the paths, named for its client number, in
    /// `String`s; the buffer of the largest ReadX or WriteX; a latency
    /// histogram per operation kind, [`OP_NAMES`]).
    pub fn footprint(&self) -> (u64, u64) {
        let string = std::mem::size_of::<String>() as u64;
        let path_bytes: u64 = self.paths.iter().map(|p| p.len() as u64 + string + 8).sum();
        let status_bytes: u64 = self.statuses.iter().map(|s| s.len() as u64 + string).sum();
        let once = (self.ops.len() * std::mem::size_of::<Op>()) as u64 + 2 * path_bytes + status_bytes;
        let largest = self
            .ops
            .iter()
            .filter_map(|o| match o.kind {
                OpKind::ReadX { size, .. } | OpKind::WriteX { size, .. } => Some(u64::from(size)),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let histograms = OP_NAMES.len() as u64 * iomatrix_stats::Latency::footprint();
        (once, path_bytes + largest + histograms)
    }

    /// The paths for connection `client` (from 0), as dbench makes them:
    /// every `client1` in a path becomes `client<N>` (so the traced
    /// client's `\clients\client1` is connection 0's `clients/client0`).
    pub fn paths_for(&self, client: usize) -> Vec<String> {
        let name = format!("client{client}");
        self.paths.iter().map(|p| p.replace("client1", &name)).collect()
    }

    /// The status word line `op` carries (`NT_STATUS_OK`...).
    pub fn status_text(&self, op: &Op) -> &str {
        &self.statuses[op.status as usize]
    }

    /// The most bytes one connection's files can hold at once: for every
    /// path, the furthest end of a WriteX through a handle opened on it,
    /// summed (an upper bound: deletions are not subtracted). For the
    /// free-space check before a run.
    pub fn peak_bytes(&self) -> u64 {
        let mut opened: HashMap<u32, PathId> = HashMap::new();
        let mut end: HashMap<PathId, u64> = HashMap::new();
        for op in &self.ops {
            match op.kind {
                OpKind::NtCreateX { path, fnum, .. } => {
                    opened.insert(fnum, path);
                }
                OpKind::WriteX { fnum, offset, size } => {
                    if let Some(path) = opened.get(&fnum) {
                        let e = end.entry(*path).or_default();
                        *e = (*e).max(offset.saturating_add(u64::from(size)));
                    }
                }
                _ => {}
            }
        }
        end.values().sum()
    }

    /// The seconds the file spans by its timestamps (0 without any).
    pub fn span_s(&self) -> f64 {
        self.ops.iter().filter_map(|o| o.at).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> ParseError {
        LoadFile::parse(text, "t.txt").expect_err("refused")
    }

    #[test]
    fn both_formats_parse_to_the_same_operations() {
        let plain = "Deltree \"\\clients\\client1\" NT_STATUS_OK\n\
                     # a comment\n\
                     \n\
                     NTCreateX \"\\clients\\client1\\~dmtmp\" 0x1 0x2 9937 NT_STATUS_OK\n\
                     WriteX 9937 65534 1 1 NT_STATUS_OK\n\
                     ReadX 9937 0x10 4096 4096 NT_STATUS_OK\n\
                     QUERY_PATH_INFORMATION \"\\clients\\client1\\x y\" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND\n\
                     Rename \"\\clients\\client1\\a\" \"\\clients\\client1\\b\" NT_STATUS_OK\n\
                     close 9937 NT_STATUS_OK\n";
        let timed: String = plain
            .lines()
            .enumerate()
            .map(|(i, l)| if l.is_empty() || l.starts_with('#') { format!("{l}\n") } else { format!("{i}.5 {l}\n") })
            .collect();
        let a = LoadFile::parse(plain, "plain").unwrap();
        let b = LoadFile::parse(&timed, "timed").unwrap();
        assert_eq!(a.ops.len(), 7);
        assert_eq!(a.timed_ops, 0);
        assert_eq!(b.timed_ops, 7);
        for (x, y) in a.ops.iter().zip(&b.ops) {
            assert_eq!((x.line, x.kind, x.expect), (y.line, y.kind, y.expect));
            assert_eq!(x.at, None);
        }
        assert_eq!(b.ops[0].at, Some(0.5));
        assert_eq!(b.span_s(), 8.5);
        // 4 bytes written up to 65535 into ~dmtmp's handle.
        assert_eq!(a.peak_bytes(), 65535);
        assert_eq!(a.ops[3].kind, OpKind::ReadX { fnum: 9937, offset: 16, size: 4096 });
        assert_eq!(a.ops[6].kind.name(), "Close", "names match without regard to case");
        assert_eq!(a.ops[4].expect, Expect::Fails(io::ErrorKind::NotFound));
        assert_eq!(a.status_text(&a.ops[4]), "NT_STATUS_OBJECT_NAME_NOT_FOUND");
        let OpKind::QueryPath { path } = a.ops[4].kind else { panic!() };
        assert_eq!(a.paths_for(0)[path as usize], "clients/client0/x y", "quoted blanks kept, client1 made client0");
        assert_eq!(a.paths_for(7)[path as usize], "clients/client7/x y");
    }

    #[test]
    fn absurd_timestamps_are_refused_with_their_line() {
        let e = err("Close 1 NT_STATUS_OK\n1e308 Close 1 NT_STATUS_OK\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("beyond 30 days"), "{e}");
        for bad in ["nan", "NaN", "inf", "-1", "-0.5", ".5x", "1e999"] {
            let e = err(&format!("{bad} Close 1 NT_STATUS_OK\n"));
            assert!(e.line == 1 && e.message.contains("not a timestamp"), "{bad}: {e}");
        }
        let e = err("0.5 Close 1 NT_STATUS_OK\n# a comment\n0.25 Close 1 NT_STATUS_OK\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("earlier than line 1's 0.5"), "{e}");
        let most = iomatrix_core::MAX_DURATION.as_secs();
        let f = LoadFile::parse(
            &format!("0 Close 1 NT_STATUS_OK\n0 Close 1 NT_STATUS_OK\n{most} Close 1 NT_STATUS_OK\n"),
            "t",
        )
        .expect("equal timestamps and the longest one are fine");
        assert_eq!(f.ops[2].at, Some(most as f64));
    }

    #[test]
    fn repeat_unrolls_the_next_line() {
        let f = LoadFile::parse("REPEAT 3\nQUERY_FS_INFORMATION 1 NT_STATUS_OK\nFlush 1 0x0\n", "t").unwrap();
        assert_eq!(f.ops.len(), 4);
        assert!(f.ops[..3].iter().all(|o| o.kind == OpKind::QueryFs && o.line == 2));
        assert_eq!(f.ops[3].expect, Expect::Ok, "0x0 is success");
        assert!(err("Flush 1 NT_STATUS_OK\nREPEAT 2\n").to_string().contains("line 2: REPEAT on the last line"));
    }

    #[test]
    fn bad_lines_are_named_with_their_number_and_the_fix() {
        let e = err("Close 1 NT_STATUS_OK\nNTCreatX \"\\a\" 0x0 0x2 1 NT_STATUS_OK\n");
        assert_eq!(e.line, 2);
        assert!(
            e.to_string().starts_with("t.txt line 2: unknown operation 'NTCreatX': did you mean NTCreateX?"),
            "{e}"
        );
        assert!(err("QUERY_FS_INFORMATIN 1 NT_STATUS_OK").message.contains("QUERY_FS_INFORMATION"));
        assert!(err("Close 1 OK").message.contains("is not a status"));
        assert!(err("ReadX 1 0 NT_STATUS_OK").message.contains("ReadX takes 4 argument(s)"));
        assert!(err("ReadX one 0 1 1 NT_STATUS_OK").message.contains("the handle 'one' is not a number"));
        assert!(err("ReadX 1 *%1024 1 1 NT_STATUS_OK").message.contains("'*' and '+'"));
        assert!(err("Unlink clients 0x10 NT_STATUS_OK").message.contains("is not a path"));
        assert!(err("Unlink \"\\..\\etc\\passwd\" 0x10 NT_STATUS_OK").message.contains("'..'"));
        assert!(err("NTCreateX \"\\a\" 0x0 0x9 1 NT_STATUS_OK").message.contains("disposition 9"));
        assert!(err("0.1x Close 1 NT_STATUS_OK").message.contains("not a timestamp"));
        assert!(err("LOOP 3\nClose 1 NT_STATUS_OK\n").message.contains("LOOP is not supported"));
        assert!(err("SMBopenX foo bar").message.contains("dbench 1 load file"));
        assert!(err("# nothing\n\n").message.contains("holds no operations"));
        let long = format!("Close {} NT_STATUS_OK", "1".repeat(MAX_LINE));
        assert!(err(&long).message.contains("longer than a line can be"));
    }

    #[test]
    fn statuses_mean_what_windows_returns() {
        use io::ErrorKind as K;
        assert!(Expect::of("NT_STATUS_OK").agrees(&Ok(())));
        assert!(!Expect::of("NT_STATUS_OK").agrees(&Err(K::NotFound)));
        assert!(Expect::of("NT_STATUS_NO_SUCH_FILE").agrees(&Err(K::NotFound)));
        assert!(!Expect::of("NT_STATUS_NO_SUCH_FILE").agrees(&Ok(())));
        assert!(!Expect::of("NT_STATUS_OBJECT_PATH_NOT_FOUND").agrees(&Err(K::PermissionDenied)));
        assert!(Expect::of("NT_STATUS_SOMETHING_NEW").agrees(&Err(K::Other)));
        assert!(Expect::of("0xc0000034").agrees(&Err(K::NotFound)));
        assert!(Expect::of("*").agrees(&Ok(())) && Expect::of("*").agrees(&Err(K::Other)));
    }

    #[test]
    fn a_compressed_or_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let gz = dir.path().join("client.txt.gz");
        std::fs::write(&gz, [0x1f, 0x8b, 8, 0]).unwrap();
        assert!(LoadFile::read(&gz).unwrap_err().to_string().contains("gunzip"));
        let e = LoadFile::read(&dir.path().join("none")).unwrap_err();
        assert!(e.to_string().contains("none: cannot read it (the dbench load file)"), "{e}");
        let e = LoadFile::read(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("/dev/zero is a device"), "{e}");
    }
}
