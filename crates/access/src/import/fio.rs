//! fio's JSON output (`--output-format=json`, fio 2.x and 3.x): one `access`
//! cell per job entry (a `group_reporting` group is one entry), reads and
//! writes of a mixed job in the same cell as iomatrix's access specs keep them.
//!
//! Parameters come from the job's options merged over `global options`
//! (what the job file or command line set). Where fio's documented default
//! decides a figure's key (bs 4k, iodepth 1, rw read, rwmixread 50), the
//! default is used and named in the job's `defaults` list, as is O_DIRECT
//! (no `direct` option: fio's default, buffered I/O). The backend (ioengine)
//! is recorded only when set: fio's default engine depends on its version
//! and platform. Latency is
//! fio's completion latency (`clat`: submission to completion), the span
//! iomatrix's access cells time. `queue_depth` is the depth fio ran at:
//! `iodepth`, but 1 for its synchronous engines (psync, sync, ...), which fio
//! caps at 1; the option as given stays in `iodepth`.

use iomatrix_core::figures::or_default;
use iomatrix_core::{ByteSize, IoMix};
use iomatrix_import::{
    cache_words, imported_row, rfc3339_utc, unknown_conditions, ImportError, ImportedCell, ImportedRun, UNKNOWN_BACKEND,
};
use iomatrix_store::CellRow;
use serde::Deserialize;
use serde_json::{json, Map, Value};

pub fn parse(text: &str) -> Result<ImportedRun, ImportError> {
    let doc = document(text)?;
    let root = doc.as_object().ok_or_else(|| ImportError::new("fio JSON: the document is not a JSON object"))?;
    let version = root.get("fio version").and_then(Value::as_str).map(str::to_string);
    let (jobs, jobs_key) = match (root.get("jobs"), root.get("client_stats")) {
        (Some(Value::Array(jobs)), _) => (jobs.as_slice(), "jobs"),
        (_, Some(Value::Array(jobs))) => (jobs.as_slice(), "client_stats"),
        _ => {
            return Err(ImportError::in_field(
                "jobs",
                "fio JSON without a \"jobs\" list: is this fio's --output-format=json output?",
            ))
        }
    };
    let global = options_of(root.get("global options"), "global options")?;
    let mut cells = Vec::new();
    let mut skipped = Vec::new();
    let mut plan_jobs = Vec::new();
    // The options of each job that gave a cell, in the cells' order.
    let mut ran = Vec::new();
    let mut hosts = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let path = format!("{jobs_key}[{i}]");
        let obj = job.as_object().ok_or_else(|| ImportError::in_field(&path, "a job is not a JSON object"))?;
        let name = obj.get("jobname").and_then(Value::as_str).unwrap_or("").to_string();
        // fio's client/server output adds an "All clients" sum after the hosts' own jobs.
        if jobs_key == "client_stats" && name == "All clients" {
            continue;
        }
        let mut opts = global.clone();
        opts.extend(options_of(obj.get("job options"), &format!("{path}.job options"))?);
        plan_jobs.push(json!({ "name": name, "options": opts }));
        if let Some(host) = obj.get("hostname").and_then(Value::as_str) {
            if !hosts.iter().any(|h| h == host) {
                hosts.push(host.to_string());
            }
        }
        let error = obj.get("error").and_then(Value::as_i64).unwrap_or(0);
        if error != 0 {
            skipped
                .push(format!("fio job '{name}' ({path}): fio reported error {error}; its figures are not imported"));
            continue;
        }
        match job_cell(obj, &opts, &path, &name)? {
            Ok(cell) => {
                ran.push(opts.clone());
                cells.push(cell);
            }
            Err(why) => skipped.push(format!("fio job '{name}' ({path}): {why}")),
        }
    }
    if cells.is_empty() {
        let why = if skipped.is_empty() { "the file lists no jobs".to_string() } else { skipped.join("; ") };
        return Err(ImportError::in_field(jobs_key, format!("no fio job to import: {why}")));
    }

    let (conditions, unknown) = conditions_of(&cells, &hosts);
    let environment = environment_of(root, &hosts);
    let measured_at = root
        .get("timestamp")
        .and_then(Value::as_i64)
        .map(rfc3339_utc)
        .or_else(|| root.get("time").and_then(Value::as_str).map(str::to_string));
    Ok(ImportedRun {
        labels: Vec::new(),
        format: super::FIO,
        tool_version: version,
        host: (hosts.len() == 1).then(|| hosts[0].clone()),
        measured_at,
        plan: {
            let mut plan = native_plan(&ran, &cells);
            plan.insert("tool".into(), Value::from("fio"));
            plan.insert("global_options".into(), Value::Object(global));
            plan.insert("jobs".into(), Value::Array(plan_jobs));
            Value::Object(plan)
        },
        environment: Value::Object(environment),
        conditions,
        unknown,
        notes: vec!["latency is fio's clat (submission to completion), as iomatrix's access cells time it".into()],
        cells,
        unmeasured: Vec::new(),
        skipped,
        bad_lines: Vec::new(),
    })
}

/// The run's conditions, each one the jobs share (else unknown), and what is unknown.
fn conditions_of(cells: &[ImportedCell], hosts: &[String]) -> (Map<String, Value>, Vec<String>) {
    let mut conditions = unknown_conditions(super::FIO.suite);
    let common = |key: &str| -> Value {
        let first = cells[0].metrics.get(key).cloned().unwrap_or(Value::Null);
        if cells.iter().all(|c| c.metrics.get(key) == Some(&first)) {
            first
        } else {
            Value::Null
        }
    };
    let backend = common("ioengine");
    let direct = common("direct").as_bool();
    let target = common("filename");
    let mut unknown = Vec::new();
    if backend.is_null() {
        unknown.push(
            if cells.iter().any(|c| c.backend != UNKNOWN_BACKEND) {
                "backend (ioengine differs between jobs: see each cell)"
            } else {
                "backend (no ioengine option: fio's default depends on its version and platform)"
            }
            .to_string(),
        );
    }
    if direct.is_none() {
        unknown.push("direct/cached (it differs between jobs: see each cell)".into());
    }
    unknown.push("RAM, so file size vs RAM".into());
    unknown.push("file system and mount".into());
    if hosts.is_empty() {
        unknown.push("machine (fio's JSON names no host outside client/server mode)".into());
    }
    conditions.insert("backend".into(), backend.clone());
    conditions.insert("direct".into(), direct.map(Value::from).unwrap_or(Value::Null));
    conditions.insert("cache".into(), cache_words(direct));
    conditions.insert("clients".into(), common("clients"));
    conditions.insert(
        "largest_file_bytes".into(),
        cells.iter().filter_map(|c| c.file_size).max().map(Value::from).unwrap_or(Value::Null),
    );
    conditions.insert("target".into(), target);
    (conditions, unknown)
}

/// The host or hosts the jobs ran on and the block devices fio watched.
fn environment_of(root: &Map<String, Value>, hosts: &[String]) -> Map<String, Value> {
    let mut environment = Map::new();
    if hosts.len() == 1 {
        environment.insert("host".into(), Value::from(hosts[0].clone()));
    } else if hosts.len() > 1 {
        environment.insert("hosts".into(), json!(hosts));
    }
    let disks: Vec<Value> = root
        .get("disk_util")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("name").and_then(Value::as_str))
        .map(Value::from)
        .collect();
    if !disks.is_empty() {
        environment.insert("block_devices".into(), Value::Array(disks));
    }
    environment
}

/// The jobs' options under the names a native access run's plan gives them, as the cells already
/// are (`bs`, `iodepth`, `rw`, `rwmixread` become block sizes, queue depths, read and random
/// shares), so that compare holds an imported plan against a native one field by field. A list
/// holds each job's value once, in the jobs' order; a single value (file size, clients, direct,
/// engine, how long) is given only where every job has the same, and left out (unknown) where
/// they differ or fio's options do not say.
fn native_plan(ran: &[Map<String, Value>], cells: &[ImportedCell]) -> Map<String, Value> {
    native_fields(ran, &cells.iter().map(|c| &c.row).collect::<Vec<_>>())
}

/// The native plan fields of a fio run stored before its import gave them (its plan has fio's
/// options only), worked the same way from its stored jobs' options and cells (each cell names
/// its job); None for any other plan, or where a cell's job is not in the plan.
pub fn stored_native_fields(plan: &Value, cells: &[CellRow]) -> Option<Map<String, Value>> {
    let plan = StoredFioPlan::deserialize(plan).ok()?;
    if plan.tool.as_deref() != Some("fio") || plan.block_sizes || plan.queue_depths {
        return None;
    }
    let jobs = plan.jobs?;
    let mut ran = Vec::new();
    for cell in cells {
        let name = FioCellNames::of(cell).fio_job?;
        let job = jobs.iter().find_map(|j| match j {
            StoredFioJob::Job { name: Some(n), options } if *n == name => Some(options),
            _ => None,
        })?;
        ran.push(job.clone()?);
    }
    (!cells.is_empty()).then(|| native_fields(&ran, &cells.iter().collect::<Vec<_>>()))
}

/// A stored fio import's plan, as far as its native fields are worked from it. Native fields
/// already there (`block_sizes`, `queue_depths`, even null) mean there is nothing to work.
#[derive(Deserialize, Default)]
#[serde(default)]
struct StoredFioPlan {
    #[serde(deserialize_with = "or_default")]
    tool: Option<String>,
    #[serde(deserialize_with = "present")]
    block_sizes: bool,
    #[serde(deserialize_with = "present")]
    queue_depths: bool,
    #[serde(deserialize_with = "or_default")]
    jobs: Option<Vec<StoredFioJob>>,
}

/// A job of a stored fio import's plan: its name and fio's options as it ran (None where the
/// stored job has none); anything else in the list is no job.
#[derive(Deserialize)]
#[serde(untagged)]
enum StoredFioJob {
    Job {
        #[serde(default, deserialize_with = "or_default")]
        name: Option<String>,
        #[serde(default, deserialize_with = "or_default")]
        options: Option<Map<String, Value>>,
    },
    Other(serde::de::IgnoredAny),
}

/// What names a fio cell: the job it came from and the engine it ran on, where stored.
#[derive(Deserialize, Default)]
#[serde(default)]
struct FioCellNames {
    #[serde(deserialize_with = "or_default")]
    fio_job: Option<String>,
    #[serde(deserialize_with = "or_default")]
    ioengine: Option<String>,
}

impl FioCellNames {
    fn of(cell: &CellRow) -> FioCellNames {
        FioCellNames::deserialize(&cell.metrics).unwrap_or_default()
    }
}

/// Whether the key is there at all, whatever it holds.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

fn native_fields(ran: &[Map<String, Value>], rows: &[&CellRow]) -> Map<String, Value> {
    let mut plan = Map::new();
    let distinct = |values: Vec<Option<u64>>| -> Option<Value> {
        let mut out: Vec<u64> = Vec::new();
        for v in values {
            let v = v?;
            if !out.contains(&v) {
                out.push(v);
            }
        }
        Some(json!(out))
    };
    let mixes: Vec<Option<IoMix>> = rows.iter().map(|c| c.figures().mix()).collect();
    let lists = [
        ("block_sizes", rows.iter().map(|c| c.record_size).collect::<Vec<_>>()),
        ("read_percents", mixes.iter().map(|m| m.map(|m| m.read_percent)).collect()),
        ("random_percents", mixes.iter().map(|m| m.map(|m| m.random_percent)).collect()),
        ("queue_depths", mixes.iter().map(|m| m.map(|m| m.queue_depth)).collect()),
    ];
    for (name, values) in lists {
        if let Some(list) = distinct(values) {
            plan.insert(name.into(), list);
        }
    }
    let common = |values: Vec<Value>| -> Option<Value> {
        let first = values.first()?.clone();
        values.iter().all(|v| *v == first).then_some(first)
    };
    let singles = [
        ("file_size", rows.iter().map(|c| json!(c.file_size)).collect::<Vec<_>>()),
        ("clients", rows.iter().map(|c| json!(c.clients)).collect()),
        ("direct", rows.iter().map(|c| json!(c.direct)).collect()),
        ("backend", rows.iter().map(|c| json!(FioCellNames::of(c).ioengine)).collect()),
        ("limit", ran.iter().zip(rows).map(|(o, c)| limit(o, c.wall_ns)).collect()),
        // No rate_iops option: fio ran unthrottled, as a native plan's none says.
        ("rate_iops", ran.iter().map(|o| json!(opt(o, &["rate_iops"]).and_then(|r| r.parse::<u64>().ok()))).collect()),
        ("ramp_ms", ran.iter().map(ramp_ms).collect()),
        ("distribution", ran.iter().map(distribution).collect()),
    ];
    for (name, values) in singles {
        // Null is unknown, but for rate_iops, where it is no option given: no throttle.
        if let Some(v) = common(values).filter(|v| !v.is_null() || name == "rate_iops") {
            plan.insert(name.into(), v);
        }
    }
    plan
}

/// fio's ramp_time as a native plan's `ramp_ms` (no option: no warm-up); null where unreadable.
fn ramp_ms(opts: &Map<String, Value>) -> Value {
    match opt(opts, &["ramp_time"]) {
        None => json!(0),
        Some(text) => fio_time_ms(text).map_or(Value::Null, |ms| json!(ms)),
    }
}

/// fio's random_distribution as a native plan's `distribution`, in the access plan's spelling
/// (no option: fio's uniform `random`); null where it is one iomatrix does not model (zoned).
fn distribution(opts: &Map<String, Value>) -> Value {
    let text = opt(opts, &["random_distribution"]).unwrap_or("random");
    text.parse::<iomatrix_random::Distribution>().map_or(Value::Null, |d| json!(d.to_string()))
}

/// What ended a job, as a native plan's `limit`: `{"duration_ms"}` where it ran its `runtime`
/// (`time_based`, or a size not done by then), `{"bytes"}` where it did `io_size` (else `size`)
/// before any runtime. fio's JSON leaves `time_based` out of the options, so the job's own
/// runtime (`wall_ns`, fio's `job_runtime`) tells which; null (unknown) where neither can be read.
fn limit(opts: &Map<String, Value>, wall_ns: u64) -> Value {
    let bytes = || opt(opts, &["io_size", "io_limit", "size"]).and_then(|s| s.parse::<ByteSize>().ok());
    let runtime_ms = opt(opts, &["runtime", "timeout"]).map(fio_time_ms);
    match runtime_ms {
        Some(None) => Value::Null,
        // fio stops issuing at the runtime; a job that ran less finished its bytes first.
        // (Within 1%: fio rounds its runtime to the millisecond.)
        Some(Some(ms)) if wall_ns / 1_000_000 + ms / 100 >= ms => json!({ "duration_ms": ms }),
        _ => bytes().map_or(Value::Null, |b| json!({ "bytes": b.bytes() })),
    }
}

/// fio's time option in milliseconds: seconds without a unit, else us, ms, s, m, h or d.
fn fio_time_ms(text: &str) -> Option<u64> {
    crate::fio_words::time(text).ok().and_then(|d| u64::try_from(d.as_millis()).ok())
}

/// The first JSON object in `text`: fio may print notes before it.
fn document(text: &str) -> Result<Value, ImportError> {
    let mut offset = 0;
    let mut skipped_lines = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            break;
        }
        offset += line.len();
        skipped_lines += 1;
    }
    if offset >= text.len() {
        return Err(ImportError::new("no JSON object found: fio --output-format=json writes one"));
    }
    let mut stream = serde_json::Deserializer::from_str(&text[offset..]).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => {
            let text = e.to_string();
            let message = text.rsplit_once(" at line ").map(|(m, _)| m.to_string()).unwrap_or(text);
            let what = if e.is_eof() { "the JSON ends early (truncated?)" } else { "not valid JSON" };
            Err(ImportError::at_line(e.line() + skipped_lines, format!("{what}: {message} (column {})", e.column())))
        }
        None => Err(ImportError::new("no JSON object found: fio --output-format=json writes one")),
    }
}

/// An options object as strings (fio writes every option value as a string).
fn options_of(v: Option<&Value>, path: &str) -> Result<Map<String, Value>, ImportError> {
    match v {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(ImportError::in_field(path, "expected an object of options")),
    }
}

fn opt<'a>(opts: &'a Map<String, Value>, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| opts.get(*n).and_then(Value::as_str)).map(str::trim)
}

/// The first of `names` the options give, trimmed.
pub(super) fn option<'a>(opts: &'a Map<String, Value>, names: &[&str]) -> Option<&'a str> {
    opt(opts, names)
}

/// The first of the time options `names` the options give, in milliseconds (None where none is
/// given or it is unreadable).
pub(super) fn option_time_ms(opts: &Map<String, Value>, names: &[&str]) -> Option<u64> {
    opt(opts, names).and_then(fio_time_ms)
}

/// fio's synchronous I/O engines: one request at a time whatever `iodepth` says.
const SYNC_ENGINES: [&str; 6] = ["sync", "psync", "vsync", "pvsync", "pvsync2", "mmap"];

/// The job's cell, or why it has none (Ok(Err)): a trim workload.
fn job_cell(
    job: &Map<String, Value>,
    opts: &Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<Result<ImportedCell, String>, ImportError> {
    let o = match job_options(opts, path)? {
        Ok(o) => o,
        Err(none) => return Ok(Err(none)),
    };
    let f = job_figures(job, path)?;
    let (read, write, wall_ns) = (&f.read, &f.write, f.wall_ns);
    let kib_per_sec = read.kib_per_sec + write.kib_per_sec;
    let mut metrics = json!({
        "iodepth": o.iodepth,
        "iops": read.iops + write.iops,
        "mib_per_sec": kib_per_sec / 1024.0,
        "read_bytes": read.bytes,
        "write_bytes": write.bytes,
        "read": read.latency,
        "write": write.latency,
        "read_iops": read.iops,
        "write_iops": write.iops,
        "read_kib_per_sec": read.kib_per_sec,
        "write_kib_per_sec": write.kib_per_sec,
        "fio_job": name,
        "rw": o.rw_text,
        "clients": o.clients,
        "defaults": o.defaults,
    });
    // The same mix an access cell of iomatrix's stores, so both compare cell by cell.
    if let (Some(m), Value::Object(named)) = (metrics.as_object_mut(), json!(o.mix)) {
        m.extend(named);
        // Keys the run's conditions are drawn from: present only when the options say.
        if let Some(e) = &o.ioengine {
            m.insert("ioengine".into(), Value::from(e.clone()));
        }
        m.insert("direct".into(), Value::from(o.direct));
        if let Some(t) = &o.target {
            m.insert("filename".into(), Value::from(t.clone()));
        }
        if o.record_size.is_none() {
            m.insert("bs".into(), Value::from(opt(opts, &["bs", "blocksize", "bsrange", "bssplit"]).unwrap_or("")));
        }
        if f.usr.is_none() || f.sys.is_none() {
            m.insert("not_in_source".into(), json!(["cpu"]));
        }
        // As a native cell stores them: the search's outcome by client (fio's job is one), the verdict.
        if let Some(found) = super::fio_rules::latency_target(job, opts, path, wall_ns)? {
            m.insert("latency_target".into(), json!([found]));
        }
        if let Some(verdict) = super::fio_rules::steady_state(job, opts, path, wall_ns)? {
            m.insert("steady".into(), json!(verdict));
        }
    }
    Ok(Ok(ImportedCell {
        line: None,
        source: format!("{path} (job '{}')", iomatrix_core::text::printable(name)),
        row: CellRow {
            test: "access".into(),
            file_size: o.file_size,
            record_size: o.record_size,
            backend: o.ioengine.unwrap_or_else(|| UNKNOWN_BACKEND.into()),
            direct: o.direct,
            clients: o.clients,
            bytes: read.bytes + write.bytes,
            ops: read.ops + write.ops,
            wall_ns,
            user_ns: f.usr.map(|u| (u / 100.0 * wall_ns as f64) as u64).unwrap_or(0),
            sys_ns: f.sys.map(|s| (s / 100.0 * wall_ns as f64) as u64).unwrap_or(0),
            kib_per_sec,
            cpu_percent: match (f.usr, f.sys) {
                (Some(u), Some(s)) => Some(u + s),
                _ => None,
            },
            metrics,
            ..imported_row()
        },
    }))
}

/// What a job's options say it ran, with the defaults fio took for what they leave out.
struct JobOptions<'a> {
    rw_text: &'a str,
    mix: IoMix,
    /// The option as given; `mix.queue_depth` is what fio ran at.
    iodepth: u64,
    record_size: Option<u64>,
    file_size: Option<u64>,
    direct: bool,
    ioengine: Option<String>,
    clients: usize,
    target: Option<String>,
    /// Options fio defaulted ("bs=4k"), for the reader to know what was not given.
    defaults: Vec<&'static str>,
}

fn bad_option(path: &str, option: &str, why: String) -> ImportError {
    ImportError::in_field(format!("{path}.job options.{option}"), why)
}

/// A job's options read, or why the job has no cell (Ok(Err)): a trim workload.
fn job_options<'a>(opts: &'a Map<String, Value>, path: &str) -> Result<Result<JobOptions<'a>, String>, ImportError> {
    let mut defaults = Vec::new();
    let bad = |option: &str, why: String| bad_option(path, option, why);
    let rw_text = opt(opts, &["rw", "readwrite"]).unwrap_or_else(|| {
        defaults.push("rw=read");
        "read"
    });
    let (read_percent, random_percent) = match rw_mix(opts, rw_text, path, &mut defaults)? {
        Ok(mix) => mix,
        Err(none) => return Ok(Err(none)),
    };
    let record_size = if opt(opts, &["bsrange", "blocksize_range", "bssplit"]).is_some() {
        None
    } else {
        match opt(opts, &["bs", "blocksize"]) {
            None => {
                defaults.push("bs=4k");
                Some(4096)
            }
            Some(text) => block_size(text).map_err(|why| bad("bs", why))?,
        }
    };
    let file_size = opt(opts, &["size", "filesize"]).and_then(|s| s.parse::<ByteSize>().ok()).map(ByteSize::bytes);
    let iodepth = match opt(opts, &["iodepth"]) {
        None => {
            defaults.push("iodepth=1");
            1
        }
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|d| *d > 0)
            .ok_or_else(|| bad("iodepth", format!("'{text}' is not a depth")))?,
    };
    let direct = opt(opts, &["direct"]).map(|v| v == "1" || v.eq_ignore_ascii_case("true"));
    let direct = match (direct, opt(opts, &["buffered"])) {
        (Some(d), _) => d,
        (None, Some(b)) => b == "0" || b.eq_ignore_ascii_case("false"),
        (None, None) => {
            defaults.push("direct=0");
            false
        }
    };
    let ioengine = opt(opts, &["ioengine"]).map(str::to_string);
    // fio caps the depth of its synchronous engines at 1 ("queue depth will be capped at 1").
    let synchronous = ioengine.as_deref().is_some_and(|e| SYNC_ENGINES.contains(&e));
    let queue_depth = if synchronous { 1 } else { iodepth };
    let numjobs = opt(opts, &["numjobs"]).and_then(|n| n.parse::<usize>().ok()).unwrap_or(1).max(1);
    let grouped = opts.contains_key("group_reporting");
    Ok(Ok(JobOptions {
        rw_text,
        mix: IoMix { read_percent, random_percent, queue_depth, load: None },
        iodepth,
        record_size,
        file_size,
        direct,
        ioengine,
        clients: if grouped { numjobs } else { 1 },
        target: opt(opts, &["filename", "directory"]).map(str::to_string),
        defaults,
    }))
}

/// The read and random shares of `rw` (and `rwmixread`, `percentage_random`), or why it has
/// no access-spec equivalent (Ok(Err)): a trim workload.
fn rw_mix(
    opts: &Map<String, Value>,
    rw_text: &str,
    path: &str,
    defaults: &mut Vec<&'static str>,
) -> Result<Result<(u64, u64), String>, ImportError> {
    let rw = rw_text.split(':').next().unwrap_or("").trim();
    let percent = |option: &str, text: &str| -> Result<u64, ImportError> {
        let first = text.split(',').next().unwrap_or("").trim();
        first
            .parse::<u64>()
            .ok()
            .filter(|v| *v <= 100)
            .ok_or_else(|| bad_option(path, option, format!("'{text}' is not a percentage from 0 to 100")))
    };
    let mix = match (opt(opts, &["rwmixread"]), opt(opts, &["rwmixwrite"])) {
        (Some(r), _) => percent("rwmixread", r)?,
        (None, Some(w)) => 100 - percent("rwmixwrite", w)?,
        (None, None) => 50,
    };
    let (read_percent, mut random_percent, mixed) = match rw {
        "read" => (100, 0, false),
        "write" => (0, 0, false),
        "randread" => (100, 100, false),
        "randwrite" => (0, 100, false),
        "rw" | "readwrite" => (mix, 0, true),
        "randrw" => (mix, 100, true),
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return Ok(Err(format!("rw={rw}: trims have no iomatrix access-spec equivalent")))
        }
        other => return Err(bad_option(path, "rw", format!("unknown fio rw mode '{other}'"))),
    };
    if mixed && opt(opts, &["rwmixread", "rwmixwrite"]).is_none() {
        defaults.push("rwmixread=50");
    }
    if random_percent == 100 {
        if let Some(p) = opt(opts, &["percentage_random"]) {
            random_percent = percent("percentage_random", p)?;
        }
    }
    Ok(Ok((read_percent, random_percent)))
}

/// What a job measured: each side's figures, its wall time, its CPU shares (None where fio
/// gave none).
struct JobFigures {
    read: Side,
    write: Side,
    wall_ns: u64,
    usr: Option<f64>,
    sys: Option<f64>,
}

fn job_figures(job: &Map<String, Value>, path: &str) -> Result<JobFigures, ImportError> {
    let read = side(job, path, "read")?;
    let write = side(job, path, "write")?;
    let runtime_ms = match job.get("job_runtime") {
        Some(v) => v
            .as_f64()
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .ok_or_else(|| ImportError::in_field(format!("{path}.job_runtime"), "not a time in milliseconds"))?,
        None => read.runtime_ms.max(write.runtime_ms),
    };
    Ok(JobFigures {
        wall_ns: (runtime_ms * 1e6) as u64,
        usr: job.get("usr_cpu").and_then(Value::as_f64),
        sys: job.get("sys_cpu").and_then(Value::as_f64),
        read,
        write,
    })
}

/// fio's `bs`: one size, or `read,write[,trim]` sizes. Two different sizes
/// give no single record size (None).
fn block_size(text: &str) -> Result<Option<u64>, String> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim).take(2) {
        if part.is_empty() {
            continue;
        }
        let size = part.parse::<ByteSize>().map_err(|e| e.to_string())?;
        sizes.push(size.bytes());
    }
    sizes.dedup();
    match sizes.as_slice() {
        [one] if *one > 0 => Ok(Some(*one)),
        [] | [0] => Err(format!("'{text}' is not a block size")),
        _ => Ok(None),
    }
}

/// One direction's figures.
struct Side {
    bytes: u64,
    ops: u64,
    kib_per_sec: f64,
    iops: f64,
    runtime_ms: f64,
    latency: Value,
}

fn side(job: &Map<String, Value>, path: &str, which: &str) -> Result<Side, ImportError> {
    let here = format!("{path}.{which}");
    let s = job
        .get(which)
        .and_then(Value::as_object)
        .ok_or_else(|| ImportError::in_field(&here, "missing: every fio job reports a read and a write section"))?;
    let number = |key: &str| -> Result<f64, ImportError> {
        s.get(key)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| ImportError::in_field(format!("{here}.{key}"), "missing or not a number"))
    };
    let bytes = match s.get("io_bytes") {
        Some(_) => number("io_bytes")? as u64,
        None => (number("io_kbytes")? * 1024.0) as u64,
    };
    let kib_per_sec = match s.get("bw_bytes") {
        Some(_) => number("bw_bytes")? / 1024.0,
        None => number("bw")?,
    };
    let iops = number("iops")?;
    let runtime_ms = number("runtime")?;
    let ops = match s.get("total_ios") {
        Some(_) => number("total_ios")? as u64,
        None => 0,
    };
    // fio 3 reports nanoseconds (clat_ns); fio 2 microseconds (clat).
    let (clat, scale, clat_key) = match (s.get("clat_ns"), s.get("clat")) {
        (Some(c), _) => (c, 1.0, "clat_ns"),
        (None, Some(c)) => (c, 1000.0, "clat"),
        (None, None) => {
            return Err(ImportError::in_field(format!("{here}.clat_ns"), "missing: fio reports completion latency"))
        }
    };
    let lat_path = format!("{here}.{clat_key}");
    let c = clat.as_object().ok_or_else(|| ImportError::in_field(&lat_path, "not an object"))?;
    let field = |key: &str| -> Result<f64, ImportError> {
        c.get(key)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| ImportError::in_field(format!("{lat_path}.{key}"), "missing or not a number"))
    };
    let count = match c.get("N") {
        Some(_) => field("N")? as u64,
        None => ops,
    };
    let percentiles = c.get("percentile").and_then(Value::as_object);
    let pct = |p: f64| -> Value {
        percentiles
            .and_then(|m| {
                m.iter()
                    .find(|(k, _)| k.parse::<f64>().is_ok_and(|v| (v - p).abs() < 1e-6))
                    .and_then(|(_, v)| v.as_f64())
            })
            .filter(|_| count > 0)
            .map(|v| Value::from((v * scale).round() as u64))
            .unwrap_or(if count == 0 { Value::from(0) } else { Value::Null })
    };
    let latency = json!({
        "count": count,
        "min_ns": (field("min")? * scale).round() as u64,
        "mean_ns": field("mean")? * scale,
        "p50_ns": pct(50.0),
        "p90_ns": pct(90.0),
        "p99_ns": pct(99.0),
        "p99_9_ns": pct(99.9),
        "p99_99_ns": pct(99.99),
        "max_ns": (field("max")? * scale).round() as u64,
    });
    Ok(Side { bytes, ops, kib_per_sec, iops, runtime_ms, latency })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side_json(bytes: u64, bw_bytes: u64, iops: f64, n: u64) -> Value {
        json!({
            "io_bytes": bytes, "io_kbytes": bytes / 1024, "bw_bytes": bw_bytes, "bw": bw_bytes / 1024,
            "iops": iops, "runtime": if n > 0 { 1000 } else { 0 }, "total_ios": n,
            "clat_ns": { "min": if n > 0 { 1000 } else { 0 }, "max": if n > 0 { 90000 } else { 0 },
                         "mean": if n > 0 { 2500.5 } else { 0.0 }, "N": n,
                         "percentile": if n > 0 { json!({"50.000000": 2048, "90.000000": 3072, "99.000000": 8192,
                                                         "99.900000": 16384, "99.990000": 65536}) } else { json!(null) } },
        })
    }

    fn doc(options: Value, read: Value, write: Value) -> String {
        json!({
            "fio version": "fio-3.33", "timestamp": 1795387682, "time": "Sun Nov 22 22:48:02 2026",
            "global options": { "directory": "/mnt/x" },
            "jobs": [{ "jobname": "j", "error": 0, "job options": options, "read": read, "write": write,
                       "trim": side_json(0, 0, 0.0, 0), "job_runtime": 1000, "usr_cpu": 6.0, "sys_cpu": 34.5 }],
            "disk_util": [{ "name": "vda" }]
        })
        .to_string()
    }

    #[test]
    fn a_mixed_random_job_is_one_access_cell() {
        let text = doc(
            json!({"name": "j", "rw": "randrw", "rwmixread": "70", "bs": "8k", "size": "8m", "iodepth": "8",
                   "ioengine": "libaio", "direct": "1"}),
            side_json(70 * 8192, 7 * 8192 * 10, 70.0, 70),
            side_json(30 * 8192, 3 * 8192 * 10, 30.0, 30),
        );
        let run = parse(&text).unwrap();
        assert_eq!(run.tool_version.as_deref(), Some("fio-3.33"));
        assert_eq!(run.measured_at.as_deref(), Some("2026-11-22T22:48:02Z"));
        assert_eq!(run.cells.len(), 1);
        let c = &run.cells[0];
        assert_eq!((c.test.as_str(), c.file_size, c.record_size), ("access", Some(8 << 20), Some(8192)));
        assert_eq!(c.backend, "libaio");
        assert!(c.direct);
        assert_eq!(c.metrics["read_percent"], 70);
        assert_eq!(c.metrics["random_percent"], 100);
        assert_eq!(c.metrics["queue_depth"], 8);
        assert_eq!(c.metrics["iops"], 100.0);
        assert_eq!(c.kib_per_sec, 800.0);
        assert_eq!(c.metrics["mib_per_sec"], 800.0 / 1024.0);
        assert_eq!(c.metrics["read"]["p99_9_ns"], 16384);
        assert_eq!(c.metrics["read"]["count"], 70);
        assert_eq!(c.metrics["write"]["mean_ns"], 2500.5);
        assert_eq!(c.bytes, 100 * 8192);
        assert_eq!(c.wall_ns, 1_000_000_000);
        assert_eq!(c.cpu_percent, Some(40.5));
        assert_eq!(run.conditions["backend"], "libaio");
        assert_eq!(run.conditions["direct"], true);
        assert_eq!(run.conditions["cache"], "bypassed (O_DIRECT)");
        assert_eq!(run.conditions["target"], "/mnt/x");
        assert!(run.conditions["ram_bytes"].is_null());
        assert_eq!(run.environment["block_devices"], json!(["vda"]));
        assert!(run.unknown.iter().any(|u| u.starts_with("RAM")));
    }

    #[test]
    fn the_plan_holds_a_native_access_plans_fields_beside_fios_options() {
        let text = doc(
            json!({"name": "j", "rw": "randrw", "rwmixread": "70", "bs": "8k", "size": "8m", "iodepth": "8",
                   "ioengine": "libaio", "direct": "1", "runtime": "1"}),
            side_json(70 * 8192, 7 * 8192 * 10, 70.0, 70),
            side_json(30 * 8192, 3 * 8192 * 10, 30.0, 30),
        );
        let plan = parse(&text).unwrap().plan;
        assert_eq!(plan["block_sizes"], json!([8192]));
        assert_eq!(plan["queue_depths"], json!([8]));
        assert_eq!(plan["read_percents"], json!([70]));
        assert_eq!(plan["random_percents"], json!([100]));
        assert_eq!(plan["file_size"], 8 << 20);
        assert_eq!(plan["clients"], 1);
        assert_eq!(plan["direct"], true);
        assert_eq!(plan["backend"], "libaio");
        // The job ran its whole second: the runtime ended it.
        assert_eq!(plan["limit"], json!({"duration_ms": 1000}));
        assert_eq!(plan["rate_iops"], Value::Null);
        assert_eq!(plan["jobs"][0]["options"]["bs"], "8k", "fio's own options stay");

        // Two jobs, one after the other: lists hold each value once; what they disagree on is left out.
        let mut two: Value = serde_json::from_str(&text).unwrap();
        let mut second = two["jobs"][0].clone();
        second["job options"] = json!({"name": "k", "rw": "read", "bs": "64k", "size": "1g", "iodepth": "8",
                                       "ioengine": "libaio", "direct": "1", "runtime": "1m"});
        two["jobs"].as_array_mut().unwrap().push(second);
        let plan = parse(&two.to_string()).unwrap().plan;
        assert_eq!(plan["block_sizes"], json!([8192, 65536]));
        assert_eq!(plan["read_percents"], json!([70, 100]));
        assert_eq!(plan["random_percents"], json!([100, 0]));
        assert_eq!(plan["queue_depths"], json!([8]));
        assert!(plan.get("file_size").is_none(), "8m and 1g: no one file size");
        // The second job had a minute but ran one second: it did its bytes first.
        assert!(plan.get("limit").is_none(), "a runtime and a size: not one limit");
        assert_eq!(plan["backend"], "libaio");
        // A bs range has no one block size: the list is left out, not guessed.
        let ranged = doc(json!({"bsrange": "4k-64k"}), side_json(4096, 4096, 1.0, 1), side_json(0, 0, 0.0, 0));
        let plan = parse(&ranged).unwrap().plan;
        assert!(plan.get("block_sizes").is_none(), "{plan}");
        assert_eq!(plan["limit"], Value::Null, "no size, no runtime: unknown");
    }

    #[test]
    fn a_fio_run_stored_before_the_native_fields_gets_the_same_fields_back() {
        let text = doc(
            json!({"name": "j", "rw": "randrw", "rwmixread": "70", "bs": "8k", "size": "8m", "iodepth": "8",
                   "ioengine": "libaio", "runtime": "1"}),
            side_json(70 * 8192, 7 * 8192 * 10, 70.0, 70),
            side_json(30 * 8192, 3 * 8192 * 10, 30.0, 30),
        );
        let run = parse(&text).unwrap();
        let fio_only: Map<String, Value> = run
            .plan
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| ["tool", "global_options", "jobs"].contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let rows: Vec<CellRow> = run.cells.iter().map(|c| c.row.clone()).collect();
        let fields = stored_native_fields(&Value::Object(fio_only.clone()), &rows).unwrap();
        let mut upgraded = fio_only;
        upgraded.extend(fields);
        assert_eq!(Value::Object(upgraded), run.plan);
        // A plan that has them, or is not fio's, is left alone.
        assert_eq!(stored_native_fields(&run.plan, &rows), None);
        assert_eq!(stored_native_fields(&json!({"block_sizes": [4096]}), &rows), None);
    }

    #[test]
    fn fio_times_read_in_its_units() {
        assert_eq!(fio_time_ms("30"), Some(30_000));
        assert_eq!(fio_time_ms("500ms"), Some(500));
        assert_eq!(fio_time_ms("2m"), Some(120_000));
        assert_eq!(fio_time_ms("1h"), Some(3_600_000));
        assert_eq!(fio_time_ms("soon"), None);
    }

    #[test]
    fn defaults_are_fios_own_and_named() {
        let text = doc(json!({"name": "j"}), side_json(4096, 4096, 1.0, 1), side_json(0, 0, 0.0, 0));
        let run = parse(&text).unwrap();
        let c = &run.cells[0];
        assert_eq!(c.record_size, Some(4096));
        let capped =
            doc(json!({"ioengine": "psync", "iodepth": "4"}), side_json(4096, 4096, 1.0, 1), side_json(0, 0, 0.0, 0));
        let capped = parse(&capped).unwrap();
        assert_eq!(capped.cells[0].metrics["queue_depth"], 1);
        assert_eq!(capped.cells[0].metrics["iodepth"], 4);
        assert_eq!(c.metrics["read_percent"], 100);
        assert_eq!(c.metrics["random_percent"], 0);
        assert_eq!(c.metrics["queue_depth"], 1);
        assert_eq!(c.metrics["defaults"], json!(["rw=read", "bs=4k", "iodepth=1", "direct=0"]));
        assert_eq!(c.metrics["write"]["count"], 0);
        assert_eq!(c.metrics["write"]["p50_ns"], 0);
        assert!(!c.direct);
        assert_eq!(run.conditions["direct"], false);
        assert_eq!(run.conditions["cache"], "page cache in use");
        assert!(run.conditions["backend"].is_null());
        assert!(run.unknown.iter().any(|u| u.starts_with("backend")));
        assert!(!run.unknown.iter().any(|u| u.starts_with("direct")));
        assert_eq!(c.file_size, None);
    }

    #[test]
    fn notes_before_the_json_and_errors_with_lines() {
        let text = format!(
            "note: both iodepth >= 1 and synchronous I/O engine are selected\n{}",
            doc(json!({"rw": "write"}), side_json(0, 0, 0.0, 0), side_json(4096, 4096, 1.0, 1))
        );
        assert_eq!(parse(&text).unwrap().cells[0].metrics["read_percent"], 0);
        let truncated = "{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [\n";
        let e = parse(truncated).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("ends early"), "{e}");
        let e = parse("{ \"fio version\": \"x\" }").unwrap_err();
        assert!(e.to_string().starts_with("jobs:"), "{e}");
        let bad = doc(json!({"rw": "sideways"}), side_json(0, 0, 0.0, 0), side_json(0, 0, 0.0, 0));
        assert_eq!(parse(&bad).unwrap_err().to_string(), "jobs[0].job options.rw: unknown fio rw mode 'sideways'");
        let mut v: Value =
            serde_json::from_str(&doc(json!({}), side_json(0, 0, 0.0, 0), side_json(0, 0, 0.0, 0))).unwrap();
        v["jobs"][0]["read"].as_object_mut().unwrap().remove("iops");
        assert_eq!(parse(&v.to_string()).unwrap_err().to_string(), "jobs[0].read.iops: missing or not a number");
    }

    #[test]
    fn trims_and_failed_jobs_are_skipped_and_said() {
        let mut v: Value =
            serde_json::from_str(&doc(json!({"rw": "read"}), side_json(4096, 4096, 1.0, 1), side_json(0, 0, 0.0, 0)))
                .unwrap();
        let mut trim = v["jobs"][0].clone();
        trim["jobname"] = json!("t");
        trim["job options"] = json!({"rw": "randtrim"});
        let mut failed = v["jobs"][0].clone();
        failed["jobname"] = json!("f");
        failed["error"] = json!(5);
        v["jobs"].as_array_mut().unwrap().extend([trim, failed]);
        let run = parse(&v.to_string()).unwrap();
        assert_eq!(run.cells.len(), 1);
        assert_eq!(run.skipped.len(), 2);
        assert!(run.skipped[0].contains("trims"), "{:?}", run.skipped);
        assert!(run.skipped[1].contains("error 5"), "{:?}", run.skipped);
    }

    #[test]
    fn fio2_microseconds_and_split_block_sizes() {
        let mut v: Value = serde_json::from_str(&doc(
            json!({"rw": "rw", "bs": "4k,8k", "rwmixwrite": "25"}),
            side_json(4096, 4096, 1.0, 1),
            side_json(0, 0, 0.0, 0),
        ))
        .unwrap();
        let read = v["jobs"][0]["read"].as_object_mut().unwrap();
        let clat = read.remove("clat_ns").unwrap();
        read.insert("clat".into(), clat);
        let run = parse(&v.to_string()).unwrap();
        let c = &run.cells[0];
        assert_eq!(c.metrics["read"]["min_ns"], 1_000_000);
        assert_eq!(c.metrics["read"]["p50_ns"], 2_048_000);
        assert_eq!(c.record_size, None);
        assert_eq!(c.metrics["bs"], "4k,8k");
        assert_eq!(c.metrics["read_percent"], 75);
        assert_eq!(c.metrics["random_percent"], 0);
        assert_eq!(block_size("16k"), Ok(Some(16384)));
        assert_eq!(block_size("4k,4k"), Ok(Some(4096)));
        assert!(block_size("x").is_err());
    }
}
