//! The personality file (TOML, `version = 1`): parsed with every unknown
//! key refused, then checked into a [`Personality`]. Every error names its
//! line and, for a misspelt name, the nearest valid one.

use iomatrix_core::ByteSize;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// The schema version this iomatrix reads.
pub const VERSION: i64 = 1;
/// Connections per client, at most.
pub const MAX_CONNECTIONS: usize = 4096;
/// A connection's I/O buffer (`memsize`), at most.
pub const MAX_MEMSIZE: u64 = 1 << 30;
/// Folder levels of a fileset, at most: each is at least 3 bytes of a path
/// (`/d0`), and a path must stay under PATH_MAX (4096).
pub const MAX_DEPTH: u32 = 512;
/// The lowest open-loop rate: one operation per 30 days (the longest
/// duration iomatrix takes), so that every gap between two arrivals is a
/// time the clock can hold.
pub const MIN_RATE: f64 = 1.0 / (30.0 * 24.0 * 3600.0);

/// Why `rate` (operations per second) cannot be an open loop's, if it cannot.
pub fn rate_problem(rate: f64) -> Option<String> {
    if !(rate.is_finite() && rate > 0.0) {
        Some("give operations per second above 0".into())
    } else if rate < MIN_RATE {
        Some(format!(
            "below one operation per {} ({MIN_RATE:.2e} per second), the lowest rate iomatrix takes",
            iomatrix_core::MAX_DURATION_TEXT
        ))
    } else {
        None
    }
}

// ---------------------------------------------------------------- raw file

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    version: Spanned<i64>,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    connections: Option<Spanned<usize>>,
    #[serde(default)]
    record: Option<Spanned<String>>,
    #[serde(default)]
    memsize: Option<Spanned<String>>,
    #[serde(default)]
    fileset: Vec<RawFileset>,
    #[serde(default)]
    phase: Vec<RawPhase>,
    #[serde(default)]
    scale: BTreeMap<String, Spanned<RawScale>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFileset {
    name: Spanned<String>,
    files: Spanned<u64>,
    #[serde(default)]
    width: Option<Spanned<u64>>,
    #[serde(default)]
    depth: Option<u32>,
    size: Spanned<RawSize>,
    #[serde(default)]
    prealloc: Option<Spanned<f64>>,
    #[serde(default)]
    shared: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSize {
    dist: Spanned<String>,
    #[serde(default)]
    size: Option<String>,
    #[serde(default)]
    min: Option<String>,
    #[serde(default)]
    max: Option<String>,
    #[serde(default)]
    mean: Option<String>,
    #[serde(default)]
    median: Option<String>,
    #[serde(default)]
    sigma: Option<f64>,
    #[serde(default)]
    shape: Option<f64>,
    #[serde(default)]
    sizes: Option<Vec<String>>,
    #[serde(default)]
    profile: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPhase {
    name: Spanned<String>,
    #[serde(default)]
    duration: Option<Spanned<String>>,
    #[serde(default)]
    iterations: Option<Spanned<u64>>,
    #[serde(default)]
    order: Option<Spanned<String>>,
    #[serde(default)]
    flow: Vec<RawFlow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    name: Spanned<String>,
    #[serde(default)]
    weight: Option<Spanned<u32>>,
    #[serde(default)]
    fileset: Option<Spanned<String>>,
    #[serde(default)]
    pick: Option<Spanned<String>>,
    #[serde(default)]
    think: Option<Spanned<String>>,
    #[serde(default)]
    rate: Option<Spanned<f64>>,
    #[serde(default)]
    keep_open: Option<Spanned<bool>>,
    ops: Vec<Spanned<RawOp>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    op: Spanned<String>,
    #[serde(default)]
    size: Option<Spanned<String>>,
    #[serde(default)]
    close: Option<bool>,
    #[serde(default)]
    random: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScale {
    #[serde(default)]
    connections: Option<usize>,
    #[serde(default)]
    files: Option<u64>,
    #[serde(default)]
    duration: Option<String>,
}

// ---------------------------------------------------------------- checked

/// A checked personality: what every connection runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Personality {
    /// Its name: a built-in's, or the file's `name`.
    pub name: String,
    /// What it models, in the author's words.
    pub description: String,
    /// Seeds sizes, picks and arrivals; stored so a run can be repeated.
    pub seed: u64,
    /// Connections per client.
    pub connections: usize,
    /// Bytes per read or write request: a whole-file read or write is this many requests.
    pub record: u64,
    /// Each connection's I/O buffer, when larger than a record: every request reads into or
    /// writes from a random place in it (filebench's thread `memsize`: its tf_mem at a random
    /// offset per I/O, so the copies meet memory the CPU's caches do not hold). None: one record
    /// to read into and one to write from, at their starts.
    #[serde(default)]
    pub memsize: Option<u64>,
    /// The kinds of files its flows work on.
    pub filesets: Vec<Fileset>,
    /// Its stages, in order; each is one cell.
    pub phases: Vec<Phase>,
    /// Named sets of overrides (`--scale NAME`).
    #[serde(default)]
    pub scales: BTreeMap<String, Scale>,
}

/// Overrides of a `[scale.NAME]` table or of the command line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    /// Connections per client.
    pub connections: Option<usize>,
    /// Files of every fileset of more than one file (per connection).
    pub files: Option<u64>,
    /// Every timed phase's duration.
    pub duration_ns: Option<u64>,
}

/// Files of one kind: each connection's own, in a folder tree of its own,
/// or (`shared`) one set per client that all its connections work on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fileset {
    /// Its name, which flows use.
    pub name: String,
    /// Per connection; per client when `shared`.
    pub files: u64,
    /// Files per folder (and folders per folder above them).
    pub width: u64,
    /// Folder levels above the files' folders (0: the files' folders sit in the fileset's folder).
    pub depth: u32,
    /// Where each file's size comes from.
    pub size: SizeDist,
    /// Share of the files made (untimed) before the first phase: 0..1.
    pub prealloc: f64,
    /// One set per client, used by all its connections (each iteration
    /// claims its file so no two connections act on one file at once).
    #[serde(default)]
    pub shared: bool,
}

/// Where a file's size comes from: drawn from a seed per connection, file
/// and generation, so a run repeats exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "dist")]
pub enum SizeDist {
    /// Every file the same size.
    Fixed {
        /// The size (bytes).
        size: u64,
    },
    /// Sizes drawn uniformly from `min..=max`.
    Uniform {
        /// The smallest size (bytes).
        min: u64,
        /// The largest size (bytes).
        max: u64,
    },
    /// exp(N(ln median, sigma)), at most `max`.
    Lognormal {
        /// The median size (bytes).
        median: u64,
        /// The spread: the standard deviation of the sizes' logarithm.
        sigma: f64,
        /// The largest size (bytes); larger draws are cut to it.
        max: u64,
    },
    /// Gamma(shape, mean/shape), at most `max`.
    Gamma {
        /// The mean size (bytes).
        mean: u64,
        /// The gamma distribution's shape.
        shape: f64,
        /// The largest size (bytes); larger draws are cut to it.
        max: u64,
    },
    /// File i gets `sizes[i % len]` (seed 003's list).
    Cycle {
        /// The sizes (bytes), in turn.
        sizes: Vec<u64>,
    },
    /// Drawn from a size profile (`iomatrix scan PATH --save-profile FILE`).
    Scan {
        /// The profile file.
        profile: PathBuf,
    },
}

/// A stage of the run, one cell: its flows run until it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Its name, as tables show it.
    pub name: String,
    /// When it ends.
    pub end: PhaseEnd,
    /// What its iterations run.
    pub flows: Vec<Flow>,
    /// How each iteration chooses its flow.
    #[serde(default)]
    pub order: FlowOrder,
}

/// How an iteration chooses its flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowOrder {
    /// At random, in proportion to the weights.
    #[default]
    Random,
    /// The flows in the file's order, each `weight` iterations running, then from the first
    /// again: filebench's thread, which runs its list of flowops in order, over and over.
    InTurn,
}

/// When a phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseEnd {
    /// For this long from the common start.
    Duration {
        /// How long (ns).
        ns: u64,
    },
    /// After this many flow iterations per connection.
    Iterations {
        /// How many iterations.
        count: u64,
    },
    /// As many iterations per connection as the first flow's fileset has files.
    EachFile,
}

/// A loop of operations on one file at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    /// Its name, for messages.
    pub name: String,
    /// Each iteration picks a flow at random in proportion to the weights (or, in turn, runs
    /// this flow `weight` times running).
    pub weight: u32,
    /// Index into [`Personality::filesets`].
    pub fileset: usize,
    /// How each iteration chooses its file.
    pub pick: Pick,
    /// Closed loop: the pause after each iteration (untimed).
    pub think_ns: u64,
    /// Open loop: operations per second per connection, Poisson arrivals.
    pub rate: Option<f64>,
    /// The flow's file stays open from its first iteration to the phase's end: the first
    /// iteration opens it (its `open` timed and counted), the later ones run the steps after
    /// the `open` on it (filebench's flowop on a descriptor opened once and never closed:
    /// webserver's log).
    #[serde(default)]
    pub keep_open: bool,
    /// The operations of one iteration, in order.
    pub ops: Vec<Step>,
}

/// How an iteration chooses its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// The next file in order (after the last one this flow took).
    Next,
    /// A file at random.
    Random,
    /// filebench's rotation: the fileset's next file after the last one any flow took (of every
    /// connection, for a shared fileset), one rotation for files that exist and one for files
    /// that do not; a file another connection holds is passed over for the next.
    Rotation,
}

/// One operation of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The operation.
    pub op: OpKind,
    /// How much it reads or writes.
    pub amount: Amount,
    /// `create` only: close it at once, timed as one (seed 003's create).
    #[serde(default)]
    pub close: bool,
}

/// How much a step reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Amount {
    /// Nothing: an operation that moves no data.
    None,
    /// The whole file (a write: its drawn size), in records.
    Whole,
    /// This many bytes.
    Bytes(u64),
    /// A size drawn uniformly from 1..=N bytes on every execution (filebench's appendfilerand).
    UpTo(u64),
}

/// The operations a flow can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// Creates the file exclusively and opens it for writing.
    Create,
    /// Opens an existing file.
    Open,
    /// Reads from the open file.
    Read,
    /// Writes to the open file.
    Write,
    /// Writes at the open file's end.
    Append,
    /// Makes the open file's data durable.
    Fsync,
    /// Closes the open file.
    Close,
    /// Reads the file's size from its metadata.
    Stat,
    /// Renames the file to its next generation's name.
    Rename,
    /// Removes the file.
    Delete,
    /// Lists the file's folder.
    List,
    /// Takes an exclusive byte-range lock on the open file, without waiting.
    Lock,
    /// Releases that lock.
    Unlock,
}

impl OpKind {
    /// Every operation a flow can name.
    pub const ALL: [OpKind; 13] = [
        OpKind::Create,
        OpKind::Open,
        OpKind::Read,
        OpKind::Write,
        OpKind::Append,
        OpKind::Fsync,
        OpKind::Close,
        OpKind::Stat,
        OpKind::Rename,
        OpKind::Delete,
        OpKind::List,
        OpKind::Lock,
        OpKind::Unlock,
    ];

    /// The name personality files and tables use.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Create => "create",
            OpKind::Open => "open",
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Append => "append",
            OpKind::Fsync => "fsync",
            OpKind::Close => "close",
            OpKind::Stat => "stat",
            OpKind::Rename => "rename",
            OpKind::Delete => "delete",
            OpKind::List => "list",
            OpKind::Lock => "lock",
            OpKind::Unlock => "unlock",
        }
    }

    fn parse(name: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Needs the file open.
    fn on_open_file(self) -> bool {
        matches!(
            self,
            OpKind::Read
                | OpKind::Write
                | OpKind::Append
                | OpKind::Fsync
                | OpKind::Close
                | OpKind::Lock
                | OpKind::Unlock
        )
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

// ---------------------------------------------------------------- errors

use iomatrix_core::did_you_mean as hint;
pub use iomatrix_core::{nearest, FileError};

fn at(text: &str, span: std::ops::Range<usize>, message: impl Into<String>) -> FileError {
    FileError::at(text, span, message)
}

fn toml_error(text: &str, e: &toml::de::Error) -> FileError {
    FileError::parsed(text, e.span(), e.message())
}

fn size(text: &str, span: std::ops::Range<usize>, what: &str, value: &str) -> Result<u64, FileError> {
    let s = value
        .parse::<ByteSize>()
        .map_err(|e| at(text, span.clone(), format!("{what} = \"{value}\": {e}; write a size such as 4k or 2m")))?;
    if s.bytes() == 0 {
        return Err(at(text, span, format!("{what} = \"{value}\": a size of 0; give at least one byte")));
    }
    Ok(s.bytes())
}

/// `0` or a duration such as `10ms`.
fn pause(text: &str, s: &Spanned<String>, what: &str) -> Result<u64, FileError> {
    if s.get_ref().trim() == "0" {
        return Ok(0);
    }
    iomatrix_core::parse_duration(s.get_ref())
        .map(|d| d.as_nanos() as u64)
        .map_err(|e| at(text, s.span(), format!("{what}: {e}")))
}

// ---------------------------------------------------------------- parse

/// Parses and checks a personality file's text. `base`: the folder its
/// relative paths (a `scan` profile) are taken from.
pub fn parse(text: &str, base: &Path) -> Result<Personality, FileError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
    if *raw.version.get_ref() != VERSION {
        return Err(at(
            text,
            raw.version.span(),
            format!(
                "version = {}: this iomatrix reads personality files of version {VERSION}; write version = {VERSION}",
                raw.version.get_ref()
            ),
        ));
    }
    let record = match &raw.record {
        Some(r) => size(text, r.span(), "record", r.get_ref())?,
        None => 64 * 1024,
    };
    let memsize = memsize(text, &raw, record)?;
    let connections = match &raw.connections {
        Some(c) if *c.get_ref() == 0 || *c.get_ref() > MAX_CONNECTIONS => {
            return Err(at(text, c.span(), format!("connections = {}: give 1..{MAX_CONNECTIONS}", c.get_ref())))
        }
        Some(c) => *c.get_ref(),
        None => 16,
    };
    if raw.fileset.is_empty() {
        return Err(FileError {
            line: None,
            message: "no [[fileset]]: a personality needs at least one, e.g. [[fileset]] name = \"files\" files = 100 \
                      size = { dist = \"fixed\", size = \"16k\" }"
                .into(),
        });
    }
    let mut filesets = Vec::new();
    for f in &raw.fileset {
        filesets.push(fileset(text, f, base, &filesets)?);
    }
    if raw.phase.is_empty() {
        return Err(FileError {
            line: None,
            message: "no [[phase]]: a personality needs at least one, with one [[phase.flow]] or more".into(),
        });
    }
    let mut phases = Vec::new();
    for p in &raw.phase {
        phases.push(phase(text, p, &filesets)?);
    }
    let scales = scales(text, &raw)?;
    let personality = Personality {
        name: raw.name,
        description: raw.description,
        seed: raw.seed.unwrap_or(1),
        connections,
        record,
        memsize,
        filesets,
        phases,
        scales,
    };
    if let Some(message) = personality.flow_without_files() {
        return Err(FileError { line: None, message });
    }
    Ok(personality)
}

/// The file's memsize, if it gives one: at least a `record`, at most [`MAX_MEMSIZE`].
fn memsize(text: &str, raw: &RawFile, record: u64) -> Result<Option<u64>, FileError> {
    Ok(match &raw.memsize {
        Some(m) => {
            let bytes = size(text, m.span(), "memsize", m.get_ref())?;
            if bytes < record {
                return Err(at(
                    text,
                    m.span(),
                    format!(
                        "memsize = {:?} is smaller than a record ({record} bytes): give at least the record",
                        m.get_ref()
                    ),
                ));
            }
            if bytes > MAX_MEMSIZE {
                return Err(at(text, m.span(), format!("memsize = {:?}: give at most 1g per connection", m.get_ref())));
            }
            Some(bytes)
        }
        None => None,
    })
}

/// One `[[fileset]]`, checked (its name not one of the `filesets` before it).
fn fileset(text: &str, f: &RawFileset, base: &Path, filesets: &[Fileset]) -> Result<Fileset, FileError> {
    if filesets.iter().any(|g: &Fileset| g.name == *f.name.get_ref()) {
        return Err(at(text, f.name.span(), format!("fileset `{}` is named twice", f.name.get_ref())));
    }
    if *f.files.get_ref() == 0 {
        return Err(at(text, f.files.span(), "files = 0: a fileset needs at least one file"));
    }
    let width = match &f.width {
        Some(w) if *w.get_ref() == 0 => {
            return Err(at(text, w.span(), "width = 0: give the files per folder, 1 or more"))
        }
        Some(w) => *w.get_ref(),
        None => *f.files.get_ref(),
    };
    if let Some(depth) = f.depth.filter(|d| *d > MAX_DEPTH) {
        return Err(at(
            text,
            f.name.span(),
            format!(
                "fileset `{}`: depth = {depth}: at most {MAX_DEPTH} folder levels (a file's path must stay under \
                 PATH_MAX, 4096 bytes)",
                f.name.get_ref()
            ),
        ));
    }
    let prealloc = match &f.prealloc {
        Some(p) if !(0.0..=1.0).contains(p.get_ref()) => {
            return Err(at(
                text,
                p.span(),
                format!("prealloc = {}: give a share of the files, 0.0 to 1.0", p.get_ref()),
            ))
        }
        Some(p) => *p.get_ref(),
        None => 1.0,
    };
    Ok(Fileset {
        name: f.name.get_ref().clone(),
        files: *f.files.get_ref(),
        width,
        depth: f.depth.unwrap_or(0),
        size: size_dist(text, &f.size, base)?,
        prealloc,
        shared: f.shared.unwrap_or(false),
    })
}

/// The file's `[scale.NAME]` tables, checked.
fn scales(text: &str, raw: &RawFile) -> Result<BTreeMap<String, Scale>, FileError> {
    let mut scales = BTreeMap::new();
    for (name, s) in &raw.scale {
        let r = s.get_ref();
        let duration_ns = match &r.duration {
            Some(d) => Some(
                iomatrix_core::parse_duration(d)
                    .map_err(|e| at(text, s.span(), format!("scale.{name}.duration: {e}")))?
                    .as_nanos() as u64,
            ),
            None => None,
        };
        if r.connections == Some(0) || r.files == Some(0) {
            return Err(at(text, s.span(), format!("scale.{name}: connections and files must be 1 or more")));
        }
        scales.insert(name.clone(), Scale { connections: r.connections, files: r.files, duration_ns });
    }
    Ok(scales)
}

const DISTS: [&str; 6] = ["fixed", "uniform", "lognormal", "gamma", "cycle", "scan"];

fn size_dist(text: &str, s: &Spanned<RawSize>, base: &Path) -> Result<SizeDist, FileError> {
    let span = s.span();
    let r = s.get_ref();
    let need = |v: &Option<String>, key: &str, dist: &str| -> Result<u64, FileError> {
        match v {
            Some(v) => size(text, span.clone(), key, v),
            None => Err(at(text, span.clone(), format!("size: dist = \"{dist}\" needs `{key}` (a size such as 16k)"))),
        }
    };
    let max_of = |v: &Option<String>| -> Result<u64, FileError> {
        v.as_ref().map_or(Ok(u64::MAX >> 8), |m| size(text, span.clone(), "max", m))
    };
    let positive = |v: Option<f64>, key: &str, dist: &str| -> Result<f64, FileError> {
        match v {
            Some(x) if x > 0.0 && x.is_finite() => Ok(x),
            Some(x) => Err(at(text, span.clone(), format!("size: {key} = {x}: give a number above 0"))),
            None => Err(at(text, span.clone(), format!("size: dist = \"{dist}\" needs `{key}` (a number above 0)"))),
        }
    };
    let dist = r.dist.get_ref().as_str();
    check_size_keys(text, span.clone(), r, dist)?;
    Ok(match dist {
        "fixed" => SizeDist::Fixed { size: need(&r.size, "size", dist)? },
        "uniform" => {
            let (min, max) = (need(&r.min, "min", dist)?, need(&r.max, "max", dist)?);
            if min > max {
                return Err(at(text, span, "size: min is above max"));
            }
            SizeDist::Uniform { min, max }
        }
        "lognormal" => SizeDist::Lognormal {
            median: need(&r.median, "median", dist)?,
            sigma: positive(r.sigma, "sigma", dist)?,
            max: max_of(&r.max)?,
        },
        "gamma" => SizeDist::Gamma {
            mean: need(&r.mean, "mean", dist)?,
            shape: positive(r.shape, "shape", dist)?,
            max: max_of(&r.max)?,
        },
        "cycle" => {
            let list = r.sizes.as_ref().filter(|l| !l.is_empty()).ok_or_else(|| {
                at(text, span.clone(), "size: dist = \"cycle\" needs `sizes`, e.g. sizes = [\"4k\", \"8k\"]")
            })?;
            SizeDist::Cycle {
                sizes: list.iter().map(|v| size(text, span.clone(), "sizes", v)).collect::<Result<_, _>>()?,
            }
        }
        "scan" => scan_dist(text, span, r, base)?,
        other => return Err(at(text, r.dist.span(), format!("size: unknown dist `{other}`{}", hint(other, DISTS)))),
    })
}

/// The keys of `size` that `dist` takes, and no other.
fn check_size_keys(text: &str, span: std::ops::Range<usize>, r: &RawSize, dist: &str) -> Result<(), FileError> {
    let keys: [(&str, bool); 9] = [
        ("size", r.size.is_some()),
        ("min", r.min.is_some()),
        ("max", r.max.is_some()),
        ("mean", r.mean.is_some()),
        ("median", r.median.is_some()),
        ("sigma", r.sigma.is_some()),
        ("shape", r.shape.is_some()),
        ("sizes", r.sizes.is_some()),
        ("profile", r.profile.is_some()),
    ];
    let allowed: &[&str] = match dist {
        "fixed" => &["size"],
        "uniform" => &["min", "max"],
        "lognormal" => &["median", "sigma", "max"],
        "gamma" => &["mean", "shape", "max"],
        "cycle" => &["sizes"],
        "scan" => &["profile"],
        _ => &[],
    };
    if !allowed.is_empty() {
        if let Some((key, _)) = keys.iter().find(|(k, given)| *given && !allowed.contains(k)) {
            return Err(at(
                text,
                span,
                format!(
                    "size: dist = \"{dist}\" takes {}, not `{key}`",
                    allowed.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// `dist = "scan"`: sizes drawn from the profile `iomatrix scan` saved, which must hold files.
fn scan_dist(text: &str, span: std::ops::Range<usize>, r: &RawSize, base: &Path) -> Result<SizeDist, FileError> {
    let p = r.profile.as_ref().ok_or_else(|| {
        at(
            text,
            span.clone(),
            "size: dist = \"scan\" needs `profile` (a file of `iomatrix scan PATH --save-profile FILE`)",
        )
    })?;
    let path = base.join(p);
    let profile = iomatrix_tree::Profile::load(&path)
        .map_err(|e| at(text, span.clone(), format!("size: profile {}: {}", path.display(), e.0)))?;
    if profile.total_files() == 0 {
        return Err(at(text, span, format!("size: profile {} holds no files to draw sizes from", path.display())));
    }
    Ok(SizeDist::Scan { profile: path })
}

fn phase(text: &str, p: &RawPhase, filesets: &[Fileset]) -> Result<Phase, FileError> {
    let name = p.name.get_ref().clone();
    let end = match (&p.duration, &p.iterations) {
        (Some(_), Some(i)) => {
            return Err(at(text, i.span(), format!("phase `{name}`: give duration or iterations, not both")))
        }
        (Some(d), None) => PhaseEnd::Duration {
            ns: iomatrix_core::parse_duration(d.get_ref())
                .map_err(|e| at(text, d.span(), format!("phase `{name}`: duration: {e}")))?
                .as_nanos() as u64,
        },
        (None, Some(i)) if *i.get_ref() == 0 => {
            return Err(at(text, i.span(), format!("phase `{name}`: iterations = 0; give 1 or more")))
        }
        (None, Some(i)) => PhaseEnd::Iterations { count: *i.get_ref() },
        (None, None) => PhaseEnd::EachFile,
    };
    if p.flow.is_empty() {
        return Err(at(text, p.name.span(), format!("phase `{name}` has no [[phase.flow]]")));
    }
    let mut flows = Vec::new();
    for f in &p.flow {
        flows.push(flow(text, f, filesets)?);
    }
    if flows.iter().all(|f| f.weight == 0) {
        let names: Vec<String> = flows.iter().map(|f| format!("`{}`", f.name)).collect();
        let span = p.flow.iter().find_map(|f| f.weight.as_ref().map(|w| w.span())).unwrap_or_else(|| p.name.span());
        return Err(at(
            text,
            span,
            format!(
                "phase `{name}`: every flow has weight = 0 ({}), so no iteration could pick one; give at least one \
                 flow a weight of 1 or more",
                names.join(", ")
            ),
        ));
    }
    let open = flows.iter().filter(|f| f.rate.is_some()).count();
    if open != 0 && open != flows.len() {
        return Err(at(
            text,
            p.name.span(),
            format!("phase `{name}`: some flows have a rate (open loop) and some not (closed loop); give every flow a rate or none"),
        ));
    }
    let order = match p.order.as_ref().map(|o| (o.get_ref().as_str(), o.span())) {
        None | Some(("random", _)) => FlowOrder::Random,
        Some(("in-turn", _)) => FlowOrder::InTurn,
        Some((other, span)) => {
            return Err(at(
                text,
                span,
                format!("phase `{name}`: unknown order `{other}`{}", hint(other, ["random", "in-turn"])),
            ))
        }
    };
    Ok(Phase { name, end, flows, order })
}

fn flow(text: &str, f: &RawFlow, filesets: &[Fileset]) -> Result<Flow, FileError> {
    let name = f.name.get_ref().clone();
    let fileset = flow_fileset(text, f, filesets, &name)?;
    let pick = match f.pick.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
        None | Some(("random", _)) => Pick::Random,
        Some(("next", _)) => Pick::Next,
        Some(("rotation", _)) => Pick::Rotation,
        Some((other, span)) => {
            return Err(at(
                text,
                span,
                format!("flow `{name}`: unknown pick `{other}`{}", hint(other, ["next", "random", "rotation"])),
            ))
        }
    };
    let think_ns = f.think.as_ref().map(|t| pause(text, t, &format!("flow `{name}`: think"))).transpose()?.unwrap_or(0);
    let rate = flow_rate(text, f, &name)?;
    if f.ops.is_empty() {
        return Err(at(text, f.name.span(), format!("flow `{name}` has no ops")));
    }
    let mut ops = Vec::new();
    // Whether the flow's file is open, and locked, after each op.
    let (mut open, mut locked) = (false, false);
    for o in &f.ops {
        ops.push(flow_step(text, &name, o, (&mut open, &mut locked))?);
    }
    let keep_open = check_keep_open(text, f, &name, &ops, (open, locked))?;
    // A weight of 0 is a flow no iteration picks; that every flow of a phase has one is refused there.
    Ok(Flow {
        name,
        weight: f.weight.as_ref().map_or(1, |w| *w.get_ref()),
        fileset,
        pick,
        think_ns,
        rate,
        keep_open,
        ops,
    })
}

/// The fileset flow `name` works in: the one it names, else the only one.
fn flow_fileset(text: &str, f: &RawFlow, filesets: &[Fileset], name: &str) -> Result<usize, FileError> {
    Ok(match &f.fileset {
        Some(s) => filesets.iter().position(|g| g.name == *s.get_ref()).ok_or_else(|| {
            at(
                text,
                s.span(),
                format!(
                    "flow `{name}`: no fileset `{}`{}",
                    s.get_ref(),
                    hint(s.get_ref(), filesets.iter().map(|g| g.name.as_str()))
                ),
            )
        })?,
        None if filesets.len() == 1 => 0,
        None => {
            return Err(at(
                text,
                f.name.span(),
                format!("flow `{name}`: several filesets, so name one: fileset = \"...\""),
            ))
        }
    })
}

/// Flow `name`'s open-loop rate, if it has one (and no think time).
fn flow_rate(text: &str, f: &RawFlow, name: &str) -> Result<Option<f64>, FileError> {
    Ok(match &f.rate {
        Some(r) if rate_problem(*r.get_ref()).is_some() => {
            return Err(at(
                text,
                r.span(),
                format!("flow `{name}`: rate = {}: {}", r.get_ref(), rate_problem(*r.get_ref()).unwrap_or_default()),
            ))
        }
        Some(r) if f.think.is_some() => {
            return Err(at(
                text,
                r.span(),
                format!("flow `{name}`: think time is for closed loop, rate for open loop; give one"),
            ))
        }
        r => r.as_ref().map(|r| *r.get_ref()),
    })
}

/// One op of flow `name`, checked against whether the flow's file is open and locked before it,
/// which it updates to after it.
fn flow_step(
    text: &str,
    name: &str,
    o: &Spanned<RawOp>,
    (open, locked): (&mut bool, &mut bool),
) -> Result<Step, FileError> {
    let span = o.span();
    let r = o.get_ref();
    let word = r.op.get_ref().as_str();
    let op = OpKind::parse(word).ok_or_else(|| {
        at(
            text,
            r.op.span(),
            format!("flow `{name}`: unknown op `{word}`{}", hint(word, OpKind::ALL.map(OpKind::name))),
        )
    })?;
    let bad = |m: String| Err(at(text, span.clone(), format!("flow `{name}`: {op}: {m}")));
    let amount = match (op, &r.size) {
        (OpKind::Read | OpKind::Write, None) => Amount::Whole,
        (OpKind::Read | OpKind::Write, Some(s)) if s.get_ref() == "whole" => Amount::Whole,
        (OpKind::Read | OpKind::Write | OpKind::Append | OpKind::Lock | OpKind::Unlock, Some(s)) => {
            Amount::Bytes(size(text, s.span(), "size", s.get_ref())?)
        }
        (OpKind::Append, None) => return bad("needs size = \"N\" (the bytes appended)".into()),
        (OpKind::Lock | OpKind::Unlock, None) => Amount::Bytes(0),
        (_, Some(_)) => return bad("takes no size".into()),
        (_, None) => Amount::None,
    };
    if r.close.is_some() && op != OpKind::Create {
        return bad("close = true is for create only".into());
    }
    let amount = match (r.random, amount) {
        (None | Some(false), amount) => amount,
        (Some(true), Amount::Bytes(n)) if op == OpKind::Append => Amount::UpTo(n),
        (Some(true), _) => {
            return bad(
                "random = true is for append only (a size from 1 byte to size, filebench's appendfilerand)".into()
            )
        }
    };
    let close = r.close.unwrap_or(false);
    match op {
        OpKind::Create | OpKind::Open if *open => return bad("the flow's file is open already; close it first".into()),
        OpKind::Rename | OpKind::Delete if *open => {
            return bad("the file is open; close it first (a server may refuse to rename or delete an open file)".into())
        }
        k if k.on_open_file() && !*open => {
            return bad("the flow's file is not open here; begin with create or open".into())
        }
        OpKind::Close if *locked => return bad("the file is locked; unlock it before close".into()),
        OpKind::Lock if *locked => return bad("locked already; unlock first".into()),
        OpKind::Unlock if !*locked => return bad("nothing is locked; lock first".into()),
        _ => {}
    }
    match op {
        OpKind::Create => *open = !close,
        OpKind::Open => *open = true,
        OpKind::Close => *open = false,
        OpKind::Lock => *locked = true,
        OpKind::Unlock => *locked = false,
        _ => {}
    }
    Ok(Step { op, amount, close })
}

/// Whether flow `name` keeps its file open between iterations (`keep_open`), checked against its
/// ops and whether its file is `open` and `locked` after the last.
fn check_keep_open(
    text: &str,
    f: &RawFlow,
    name: &str,
    ops: &[Step],
    (open, locked): (bool, bool),
) -> Result<bool, FileError> {
    let keep_open = f.keep_open.as_ref().is_some_and(|k| *k.get_ref());
    if keep_open {
        let span = f.keep_open.as_ref().map_or_else(|| f.name.span(), |k| k.span());
        let problem = if ops[0].op != OpKind::Open {
            Some("it must begin with open (the open its first iteration makes)")
        } else if ops.iter().any(|s| matches!(s.op, OpKind::Close | OpKind::Create | OpKind::Rename | OpKind::Delete)) {
            Some("its file stays open: it cannot close, create, rename or delete it")
        } else if locked {
            Some("it ends with its file locked; unlock it")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(at(text, span, format!("flow `{name}`: keep_open = true: {problem}")));
        }
    } else if open {
        return Err(at(text, f.name.span(), format!("flow `{name}` ends with its file open; end it with close")));
    }
    Ok(keep_open)
}

impl Personality {
    /// The bytes of I/O buffer each connection holds: its memsize, or a record to read into and
    /// one to write from.
    pub fn buffer_bytes(&self) -> u64 {
        self.memsize.unwrap_or_else(|| self.record.saturating_mul(2))
    }

    /// The operations any flow names.
    pub fn ops_used(&self) -> Vec<OpKind> {
        let mut v: Vec<OpKind> =
            self.phases.iter().flat_map(|p| p.flows.iter().flat_map(|f| f.ops.iter().map(|s| s.op))).collect();
        v.sort();
        v.dedup();
        v
    }

    /// Applies overrides: connections, files of every fileset, duration of every timed phase.
    pub fn apply(&mut self, s: &Scale) {
        if let Some(c) = s.connections {
            self.connections = c;
        }
        if let Some(files) = s.files {
            // A fileset of one file (a log) stays one file.
            for f in self.filesets.iter_mut().filter(|f| f.files > 1) {
                let old = f.files;
                f.files = files;
                if f.width == old {
                    f.width = files;
                }
            }
        }
        if let Some(ns) = s.duration_ns {
            for p in &mut self.phases {
                if let PhaseEnd::Duration { ns: d } = &mut p.end {
                    *d = ns;
                }
            }
        }
    }

    /// Iterations per connection of a phase that ends by count; None for a timed one.
    /// Once per file of a shared fileset: the files shared out over the
    /// connections, connection 0 taking the rounding (see [`Personality::iterations_of`]).
    pub fn iterations(&self, phase: &Phase) -> Option<u64> {
        self.iterations_of(phase, 0)
    }

    /// Iterations of connection `rank` (within its client) of a phase that
    /// ends by count: once per file of the first flow's fileset is, on a
    /// shared fileset, `files` over all the client's connections, the
    /// first `files % connections` taking one more.
    pub fn iterations_of(&self, phase: &Phase, rank: usize) -> Option<u64> {
        match phase.end {
            PhaseEnd::Duration { .. } => None,
            PhaseEnd::Iterations { count } => Some(count),
            PhaseEnd::EachFile => {
                let set = &self.filesets[phase.flows[0].fileset];
                if set.shared {
                    let n = self.connections.max(1) as u64;
                    Some(set.files / n + u64::from((rank as u64) < set.files % n))
                } else {
                    Some(set.files)
                }
            }
        }
    }

    /// A flow that could never find a file to work on: its fileset has no
    /// file made before the first phase (its `prealloc` share of its files
    /// rounds to none) and no flow of any phase creates one, yet the flow
    /// opens, stats, renames or deletes one. Each of its iterations would
    /// find nothing and count as idle: a run of no operations.
    pub fn flow_without_files(&self) -> Option<String> {
        for (si, set) in self.filesets.iter().enumerate() {
            if (set.prealloc * set.files as f64).round() >= 1.0 {
                continue;
            }
            let flows = || self.phases.iter().flat_map(|p| p.flows.iter()).filter(|f| f.fileset == si);
            if flows().any(|f| f.ops.iter().any(|s| s.op == OpKind::Create)) {
                continue;
            }
            let needs = |op: OpKind| matches!(op, OpKind::Open | OpKind::Stat | OpKind::Rename | OpKind::Delete);
            if let Some(f) = flows().find(|f| f.ops.iter().any(|s| needs(s.op))) {
                let op = f.ops.iter().find(|s| needs(s.op)).map_or("open", |s| s.op.name());
                return Some(format!(
                    "flow `{}` {op}s files of fileset `{}`, but none is ever made: prealloc = {} of {} file(s) makes \
                     none before the first phase, and no flow creates one; give prealloc a share that makes at least \
                     one file, or add a flow with create",
                    f.name, set.name, set.prealloc, set.files
                ));
            }
        }
        None
    }

    /// Any flow in open loop.
    pub fn open_loop(&self) -> bool {
        self.phases.iter().any(|p| p.flows.iter().any(|f| f.rate.is_some()))
    }

    /// The largest file any fileset may hold at its first size draw (for the free-space check).
    pub fn largest_file(&self) -> u64 {
        self.filesets.iter().map(|f| f.size.largest()).max().unwrap_or(0)
    }
}

impl SizeDist {
    /// The largest size it gives (a profile's: unknown here, so 0).
    pub fn largest(&self) -> u64 {
        match self {
            SizeDist::Fixed { size } => *size,
            SizeDist::Uniform { max, .. } => *max,
            SizeDist::Lognormal { median, sigma, max } => (*max).min((*median as f64 * (4.0 * sigma).exp()) as u64),
            SizeDist::Gamma { mean, shape, max } => (*max).min(mean.saturating_mul((4.0 + 8.0 / shape.sqrt()) as u64)),
            SizeDist::Cycle { sizes } => sizes.iter().copied().max().unwrap_or(0),
            SizeDist::Scan { .. } => 0,
        }
    }
}

/// Reads a duration override (`--duration`).
pub fn duration_ns(d: Duration) -> u64 {
    d.as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "version = 1\nname = \"t\"\n[[fileset]]\nname = \"f\"\nfiles = 4\nsize = { dist = \"fixed\", size = \"4k\" }\n[[phase]]\nname = \"run\"\n[[phase.flow]]\nname = \"r\"\nops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n";

    fn err(text: &str) -> FileError {
        parse(text, Path::new(".")).unwrap_err()
    }

    #[test]
    fn a_minimal_file_reads_with_its_defaults() {
        let p = parse(MINIMAL, Path::new(".")).unwrap();
        assert_eq!((p.connections, p.record, p.seed), (16, 65536, 1));
        assert_eq!(p.phases[0].end, PhaseEnd::EachFile);
        assert_eq!(p.iterations(&p.phases[0]), Some(4));
        assert_eq!(p.phases[0].flows[0].ops[1].amount, Amount::Whole);
        assert!(!p.open_loop());
    }

    #[test]
    fn errors_name_the_line_and_the_nearest_valid_name() {
        let e = err(&MINIMAL.replace("files = 4", "files = 4\nwidht = 2"));
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("unknown key `widht`; did you mean `width`?"), "{e}");
        let e = err(&MINIMAL.replace("op = \"read\"", "op = \"raed\""));
        assert_eq!(e.line, Some(11), "{e}");
        assert!(e.message.contains("unknown op `raed`; did you mean `read`?"), "{e}");
        let e = err(&MINIMAL.replace("dist = \"fixed\"", "dist = \"gama\""));
        assert!(e.message.contains("did you mean `gamma`?") && e.line == Some(6), "{e}");
        let e = err(&MINIMAL.replace("name = \"r\"", "name = \"r\"\nfileset = \"g\""));
        assert!(e.message.contains("no fileset `g`") && e.line == Some(11), "{e}");
        let e = err(&MINIMAL.replace("size = \"4k\" }", "size = \"4k\", mean = \"8k\" }"));
        assert!(e.message.contains("dist = \"fixed\" takes `size`, not `mean`") && e.line == Some(6), "{e}");
        let e = err(&MINIMAL.replace("version = 1", "version = 2"));
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn flows_are_checked_as_sequences() {
        let e = err(&MINIMAL.replace(", { op = \"close\" }", ""));
        assert!(e.message.contains("ends with its file open"), "{e}");
        let e = err(&MINIMAL.replace("{ op = \"open\" }, ", ""));
        assert!(e.message.contains("read: the flow's file is not open"), "{e}");
        let e = err(&MINIMAL.replace("{ op = \"close\" }", "{ op = \"close\" }, { op = \"delete\", size = \"4k\" }"));
        assert!(e.message.contains("delete: takes no size"), "{e}");
        let two = MINIMAL.to_string() + "[[phase.flow]]\nname = \"s\"\nrate = 10.0\nops = [{ op = \"stat\" }]\n";
        let e = err(&two);
        assert!(e.message.contains("some flows have a rate"), "{e}");
        let e = err(&MINIMAL.replace("name = \"r\"", "name = \"r\"\nrate = 5.0\nthink = \"1ms\""));
        assert!(e.message.contains("give one"), "{e}");
    }

    #[test]
    fn degenerate_values_are_refused() {
        let e = err(&MINIMAL.replace("name = \"r\"", "name = \"r\"\nweight = 0"));
        assert_eq!(e.line, Some(11), "{e}");
        assert!(e.message.contains("phase `run`: every flow has weight = 0 (`r`)"), "{e}");
        let two = MINIMAL.replace("name = \"r\"", "name = \"r\"\nweight = 0")
            + "[[phase.flow]]\nname = \"s\"\nweight = 0\nops = [{ op = \"stat\" }]\n";
        assert!(err(&two).message.contains("(`r`, `s`)"));
        let some = MINIMAL.replace("name = \"r\"", "name = \"r\"\nweight = 0")
            + "[[phase.flow]]\nname = \"s\"\nops = [{ op = \"stat\" }]\n";
        let p = parse(&some, Path::new(".")).expect("a flow of weight 0 beside another is never picked");
        assert_eq!(p.phases[0].flows.iter().map(|f| f.weight).collect::<Vec<_>>(), [0, 1]);
        let e = err(&MINIMAL.replace("name = \"r\"", "name = \"r\"\nrate = 1e-9"));
        assert!(e.message.contains("the lowest rate"), "{e}");
        let e = err(&MINIMAL.replace("files = 4", "files = 4\ndepth = 100000"));
        assert!(e.message.contains("at most 512 folder levels"), "{e}");
        let e = err(&MINIMAL.replace("files = 4", "files = 4\nprealloc = 0.1"));
        assert!(e.message.contains("flow `r` opens files of fileset `f`, but none is ever made"), "{e}");
        let created = MINIMAL.replace("files = 4", "files = 4\nprealloc = 0.0").replace(
            "ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]",
            "ops = [{ op = \"create\", close = true }, { op = \"open\" }, { op = \"close\" }]",
        );
        parse(&created, Path::new(".")).expect("a flow that creates its files first");
        let huge = MINIMAL.replace(
            "size = { dist = \"fixed\", size = \"4k\" }",
            "size = { dist = \"gamma\", mean = \"1t\", shape = 1e-300 }",
        );
        let p = parse(&huge, Path::new(".")).unwrap();
        assert_eq!(p.largest_file(), u64::MAX >> 8, "the largest size saturates, no overflow");
    }

    #[test]
    fn a_shared_fileset_is_run_once_per_file_over_all_connections() {
        let p = parse(MINIMAL, Path::new(".")).unwrap();
        assert!(!p.filesets[0].shared, "per connection by default");
        let text = MINIMAL
            .replace("files = 4", "files = 35\nshared = true")
            .replace("name = \"t\"", "name = \"t\"\nconnections = 8");
        let p = parse(&text, Path::new(".")).unwrap();
        assert!(p.filesets[0].shared);
        let each: Vec<u64> = (0..8).map(|r| p.iterations_of(&p.phases[0], r).unwrap()).collect();
        assert_eq!(each, [5, 5, 5, 4, 4, 4, 4, 4]);
        assert_eq!(each.iter().sum::<u64>(), 35);
        let e = err(&MINIMAL.replace("files = 4", "files = 4\nshared = 1"));
        assert!(e.line == Some(6) && e.message.contains("boolean"), "{e}");
    }

    #[test]
    fn scales_override_connections_files_and_durations() {
        let text = MINIMAL.replace("name = \"run\"", "name = \"run\"\nduration = \"60s\"")
            + "[scale.small]\nconnections = 2\nfiles = 3\nduration = \"1s\"\n";
        let mut p = parse(&text, Path::new(".")).unwrap();
        let s = p.scales["small"].clone();
        p.apply(&s);
        assert_eq!((p.connections, p.filesets[0].files, p.filesets[0].width), (2, 3, 3));
        assert_eq!(p.phases[0].end, PhaseEnd::Duration { ns: 1_000_000_000 });
    }
}
