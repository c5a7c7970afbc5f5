//! The one gate every figure passes on its way into the database: [`Store::add_cell`](crate::Store::add_cell) (a run's
//! cells) and [`Store::store_finished_run`](crate::Store::store_finished_run) (imports) call [`check_cell`] for each cell, and
//! [`Store::begin_run`](crate::Store::begin_run) and `store_finished_run` call [`check_run`] for the run's own text, so no
//! writer of cells can go around it. A figure is refused unless it is a number (finite), not
//! negative, and inside the physical bound of its kind stated here, in one place
//! (docs/database.md lists them):
//!
//! | kind | bound | why |
//! | --- | --- | --- |
//! | throughput (KiB/s, MiB/s, MiB/min) | 1 EiB/s | far above the memory bandwidth of any machine or cluster built |
//! | rate (IOPS, operations, files or seeks per second) | 10^12 /s | a million per second on each of a million hosts |
//! | latency, and a cell's wall time | 1 year | no request or cell lasts a year: a larger figure is a broken clock or file |
//! | size, count, other time (sums) | 2^63 - 1 | Linux's largest file (MAX_LFS_FILESIZE) and SQLite's largest integer |
//! | %CPU | 100 x the CPUs | CPU seconds over wall seconds cannot pass every core busy; the CPUs are the run's (`environment.cpu_count`) when its clients are threads of one process, else 8192 per host (Linux's largest CONFIG_NR_CPUS: an MPI run, an import) |
//! | a share in % (read %, random %) | 100 | |
//! | text: machine name, test, backend | 255 characters | a DNS name is at most 253 |
//! | text: a label's key / value | 255 / 4096 characters, no control character | |
//! | any other text in a stored document | 65536 characters | no tool prints a longer field |
//!
//! %CPU is allowed 0.1% over its bound: the thread CPU clock runs on the scheduler's clock, which
//! NTP does not slew, and wall time on CLOCK_MONOTONIC, which it slews by up to 0.05%.
//!
//! A refusal ([`Refused`]) names the cell, the figure, its value and the bound.

use crate::{CellRow, NewRun};
use serde_json::Value;

/// 1 EiB/s in KiB/s.
pub const MAX_KIB_PER_SEC: f64 = (1u64 << 50) as f64;
/// Operations (requests, files, seeks) per second.
pub const MAX_PER_SEC: f64 = 1e12;
/// A latency or a cell's wall time: one year (365.25 days) in nanoseconds.
pub const MAX_TIME_NS: u64 = 31_557_600 * 1_000_000_000;
/// Sizes, counts and summed times: what SQLite's INTEGER holds (and Linux's largest file).
pub const MAX_INTEGER: u64 = i64::MAX as u64;
/// The CPUs assumed for a host whose count the run does not record: Linux's largest CONFIG_NR_CPUS.
pub const MAX_CPUS: usize = 8192;
/// How far %CPU may pass 100 x CPUs: the two clocks' rates differ by up to NTP's slew (0.05%).
pub const CPU_CLOCK_SLACK: f64 = 0.001;
/// A machine name, a test's or a backend's name.
pub const MAX_NAME_CHARS: usize = 255;
/// The longest label key stored, in characters.
pub const MAX_LABEL_KEY_CHARS: usize = 255;
/// The longest label value stored, in characters.
pub const MAX_LABEL_VALUE_CHARS: usize = 4096;
/// Any other text in a stored document (plan, environment, conditions, metrics).
pub const MAX_TEXT_CHARS: usize = 65536;
/// A run's command line (Linux's MAX_ARG_STRLEN is 128 KiB per argument; 2 MiB all told).
pub const MAX_COMMAND_LINE_CHARS: usize = 2 << 20;

/// What a run's environment says the figures' machine can do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// CPUs of the one host the clients ran on, when the run records it.
    pub cpus: Option<usize>,
    /// Hosts the clients ran on (1 unless an MPI run names more).
    pub hosts: usize,
}

impl Limits {
    /// No environment (an import, a published figure): the bounds that need none.
    pub const UNKNOWN: Limits = Limits { cpus: None, hosts: 1 };

    /// From a run's environment: `cpu_count` for clients that are threads of one process. An
    /// MPI run (`client_hosts`) gets [`MAX_CPUS`] for each of its hosts: the CPUs of hosts other
    /// than rank 0's are not recorded, and each rank's clock counts from its own release from the
    /// barrier (ranks share no clock), so its cells' %CPU is not held to one host's cores.
    pub fn of_environment(env: &Value) -> Limits {
        let env = crate::reader::StoredEnvironment::of(env);
        let cpus = env.cpu_count.whole().filter(|n| *n > 0).map(|n| n as usize);
        let Some(ranks) = &env.client_hosts else { return Limits { cpus, hosts: 1 } };
        let mut hosts: Vec<&str> = ranks.iter().filter_map(|h| h.host.text()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        Limits { cpus: None, hosts: hosts.len().max(1) }
    }

    /// The largest %CPU these figures can hold, and its reason in words.
    pub fn max_cpu_percent(&self) -> (f64, String) {
        match self.cpus {
            Some(n) => (100.0 * n as f64, format!("100 x the run's {n} CPUs")),
            None if self.hosts > 1 => (
                100.0 * (MAX_CPUS * self.hosts) as f64,
                format!(
                    "100 x {MAX_CPUS} CPUs on each of {} hosts (an MPI run: their CPUs are not recorded)",
                    self.hosts
                ),
            ),
            None => (
                100.0 * MAX_CPUS as f64,
                format!("100 x {MAX_CPUS} CPUs (the run records no CPU count: Linux's largest)"),
            ),
        }
    }
}

/// A figure the gate refused: where, what, how much, and the bound it broke.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{place}: {figure} = {value} is refused: {bound} (iomatrix stores no figure outside its physical bounds; \
     docs/database.md)"
)]
pub struct Refused {
    /// The cell (`cell 3 (write, file 65536, record 1024)`), or the run's part (`label 'fs'`).
    pub place: String,
    /// The figure: a column (`kib_per_sec`) or a path into a document (`metrics.read.mean_ns`).
    pub figure: String,
    /// The value refused, as text.
    pub value: String,
    /// The bound broken, in words (`at most 1125899906842624 KiB/s (1 EiB/s: ...)`).
    pub bound: String,
}

/// What kind of figure a number is, by its name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    KibPerSec,
    MibPerSec,
    MibPerMin,
    PerSec,
    Latency,
    Cpu,
    Share,
    Integer,
}

impl Kind {
    /// By the last part of a figure's path: its key.
    fn of(key: &str) -> Kind {
        match key {
            "cpu_percent" => Kind::Cpu,
            k if k.ends_with("_percent") => Kind::Share,
            k if k.contains("kib_per_sec") => Kind::KibPerSec,
            k if k.contains("mib_per_sec") => Kind::MibPerSec,
            k if k.contains("mib_per_min") => Kind::MibPerMin,
            "iops" | "per_sec" => Kind::PerSec,
            k if k.ends_with("_iops") || k.ends_with("_per_sec") => Kind::PerSec,
            "min_ns" | "mean_ns" | "max_ns" | "max_latency_ns" | "wall_ns" => Kind::Latency,
            k if k.starts_with('p') && k.ends_with("_ns") && k.as_bytes().get(1).is_some_and(u8::is_ascii_digit) => {
                Kind::Latency
            }
            _ => Kind::Integer,
        }
    }

    /// The bound and its reason.
    fn bound(self, limits: &Limits) -> (f64, String) {
        match self {
            Kind::KibPerSec => (MAX_KIB_PER_SEC, format!("at most {MAX_KIB_PER_SEC} KiB/s (1 EiB/s)")),
            Kind::MibPerSec => {
                (MAX_KIB_PER_SEC / 1024.0, format!("at most {} MiB/s (1 EiB/s)", MAX_KIB_PER_SEC / 1024.0))
            }
            Kind::MibPerMin => (
                MAX_KIB_PER_SEC * 60.0 / 1024.0,
                format!("at most {} MiB/min (1 EiB/s)", MAX_KIB_PER_SEC * 60.0 / 1024.0),
            ),
            Kind::PerSec => (MAX_PER_SEC, format!("at most {MAX_PER_SEC:e} per second")),
            Kind::Latency => (MAX_TIME_NS as f64, format!("at most {MAX_TIME_NS} ns (a year)")),
            Kind::Cpu => {
                let (max, why) = limits.max_cpu_percent();
                (max * (1.0 + CPU_CLOCK_SLACK), format!("at most {max}% ({why})"))
            }
            Kind::Share => (100.0, "at most 100%".into()),
            Kind::Integer => (MAX_INTEGER as f64, format!("at most {MAX_INTEGER} (SQLite's largest integer)")),
        }
    }
}

/// One number against the bound of its kind.
fn number(place: &str, figure: &str, kind: Kind, value: f64, limits: &Limits) -> Result<(), Refused> {
    let refuse =
        |bound: String| Refused { place: place.to_string(), figure: figure.to_string(), value: shown(value), bound };
    if !value.is_finite() {
        return Err(refuse("a figure is a finite number".into()));
    }
    if value < 0.0 {
        return Err(refuse("a figure is not negative".into()));
    }
    let (max, why) = kind.bound(limits);
    if value > max {
        return Err(refuse(why));
    }
    Ok(())
}

fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// A text field: length in characters, and (where `no_control`) no control character.
fn text(place: &str, figure: &str, value: &str, max: usize, no_control: bool) -> Result<(), Refused> {
    let chars = value.chars().count();
    if chars > max {
        let head: String = value.chars().take(40).collect();
        return Err(Refused {
            place: place.to_string(),
            figure: figure.to_string(),
            value: format!("'{}...' ({chars} characters)", iomatrix_core::text::printable(&head)),
            bound: format!("at most {max} characters"),
        });
    }
    if let Some((at, c)) = iomatrix_core::text::first_control(value).filter(|_| no_control) {
        return Err(Refused {
            place: place.to_string(),
            figure: figure.to_string(),
            value: format!("'{}'", iomatrix_core::text::printable(value)),
            bound: format!(
                "no control character (it holds {} at character {at})",
                iomatrix_core::text::describe_control(c)
            ),
        });
    }
    Ok(())
}

/// Every number in `doc` against the bound its key gives, every text against [`MAX_TEXT_CHARS`].
fn document(place: &str, path: &mut String, key: &str, doc: &Value, limits: &Limits) -> Result<(), Refused> {
    leaves(path, key, doc, &mut |path, key, leaf| match leaf {
        Value::Number(n) => match n.as_f64() {
            Some(v) => number(place, path, Kind::of(key), v, limits),
            None => Err(Refused {
                place: place.into(),
                figure: path.to_string(),
                value: n.to_string(),
                bound: "a figure is a number".into(),
            }),
        },
        Value::String(s) => text(place, path, s, MAX_TEXT_CHARS, false),
        _ => Ok(()),
    })
}

/// The texts only of a stored document (a run's plan, environment, conditions).
fn texts(place: &str, path: &mut String, doc: &Value) -> Result<(), Refused> {
    leaves(path, "", doc, &mut |path, _, leaf| match leaf {
        Value::String(s) => text(place, path, s, MAX_TEXT_CHARS, false),
        _ => Ok(()),
    })
}

/// Calls `check` with every value of `doc` that is neither array nor object, its path
/// (`metrics.read[2].p50_ns`, grown from `path`) and the key it is under (an array's items are
/// under their array's key); the first refusal ends the walk.
fn leaves(
    path: &mut String,
    key: &str,
    doc: &Value,
    check: &mut dyn FnMut(&str, &str, &Value) -> Result<(), Refused>,
) -> Result<(), Refused> {
    let len = path.len();
    let walked = match doc {
        Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            path.truncate(len);
            path.push_str(&format!("[{i}]"));
            leaves(path, key, item, check)
        }),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            path.truncate(len);
            path.push('.');
            path.push_str(k);
            leaves(path, k, v, check)
        }),
        leaf => check(path, key, leaf),
    };
    path.truncate(len);
    walked
}

/// How a refusal names a cell: `cell 3 (write, file 67108864 bytes, record 1048576 bytes)`.
pub fn cell_name(c: &CellRow) -> String {
    let mut parts = vec![iomatrix_core::text::printable(&c.test.chars().take(40).collect::<String>()).into_owned()];
    if let Some(f) = c.file_size {
        parts.push(format!("file {f} bytes"));
    }
    if let Some(r) = c.record_size {
        parts.push(format!("record {r} bytes"));
    }
    format!("cell {} ({})", c.seq, parts.join(", "))
}

/// One cell: every column and every number of its metrics and client figures.
pub fn check_cell(c: &CellRow, limits: &Limits) -> Result<(), Refused> {
    let place = cell_name(c);
    let place = place.as_str();
    text(place, "test", &c.test, MAX_NAME_CHARS, true)?;
    text(place, "backend", &c.backend, MAX_NAME_CHARS, true)?;
    let integer = |figure: &str, v: u64| number(place, figure, Kind::Integer, v as f64, limits);
    for (figure, v) in [("file_size", c.file_size), ("record_size", c.record_size)] {
        if let Some(v) = v {
            integer(figure, v)?;
        }
    }
    integer("clients", c.clients as u64)?;
    integer("bytes", c.bytes)?;
    integer("ops", c.ops)?;
    integer("user_ns", c.user_ns)?;
    integer("sys_ns", c.sys_ns)?;
    number(place, "wall_ns", Kind::Latency, c.wall_ns as f64, limits)?;
    number(place, "kib_per_sec", Kind::KibPerSec, c.kib_per_sec, limits)?;
    if let Some(cpu) = c.cpu_percent {
        number(place, "cpu_percent", Kind::Cpu, cpu, limits)?;
    }
    document(place, &mut "metrics".to_string(), "metrics", &c.metrics, limits)?;
    document(place, &mut "clients".to_string(), "clients", &c.client_figures, limits)?;
    for (name, _) in &c.blobs {
        text(place, "a histogram's name", name, MAX_NAME_CHARS, true)?;
    }
    Ok(())
}

/// A run's own text: suite, command line, labels (keys and values: no control character), the
/// machine (`host`, where the figures were measured) and every text of its documents.
pub fn check_run(run: &NewRun, host: &str) -> Result<(), Refused> {
    text("the run", "suite", &run.suite, MAX_NAME_CHARS, true)?;
    text("the run", "command line", &run.command_line, MAX_COMMAND_LINE_CHARS, false)?;
    text("the run", "machine name", host, MAX_NAME_CHARS, true)?;
    for (key, value) in &run.labels {
        let place = format!("label '{}'", iomatrix_core::text::printable(&key.chars().take(40).collect::<String>()));
        if key.is_empty() {
            return Err(Refused { place, figure: "key".into(), value: "''".into(), bound: "a label has a key".into() });
        }
        text(&place, "key", key, MAX_LABEL_KEY_CHARS, true)?;
        text(&place, "value", value, MAX_LABEL_VALUE_CHARS, true)?;
    }
    for (name, doc) in [("plan", &run.plan), ("environment", &run.environment), ("conditions", &run.conditions)] {
        texts("the run", &mut name.to_string(), doc)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cell() -> CellRow {
        CellRow {
            seq: 3,
            test: "write".into(),
            file_size: Some(64 << 20),
            record_size: Some(1 << 20),
            backend: "psync".into(),
            direct: false,
            clients: 2,
            bytes: 128 << 20,
            ops: 128,
            wall_ns: 100_000_000,
            user_ns: 1_000_000,
            sys_ns: 150_000_000,
            kib_per_sec: 1_310_720.0,
            cpu_percent: Some(151.0),
            metrics: json!({"read": {"mean_ns": 2500.5, "p99_9_ns": 16384}, "iops": 1280.0, "read_percent": 100,
                            "mib_per_sec": 1280.0, "start_barrier": [{"arrived_unix_ns": 1795731527108675608u64}]}),
            client_figures: json!([{"rank": 0, "measured": {"cpu": {"user_ns": 5}}}]),
            state: Default::default(),
            blobs: Vec::new(),
        }
    }

    const TWO: Limits = Limits { cpus: Some(2), hosts: 1 };

    #[test]
    fn a_sound_cell_passes() {
        assert_eq!(check_cell(&cell(), &TWO), Ok(()));
        assert_eq!(check_cell(&CellRow { cpu_percent: None, ..cell() }, &Limits::UNKNOWN), Ok(()));
    }

    #[test]
    fn each_bound_refuses_and_names_cell_figure_value_and_bound() {
        let e = check_cell(&CellRow { kib_per_sec: 1e23, ..cell() }, &TWO).unwrap_err();
        assert_eq!(e.place, "cell 3 (write, file 67108864 bytes, record 1048576 bytes)");
        assert_eq!((e.figure.as_str(), e.value.as_str()), ("kib_per_sec", "1e23"));
        assert!(e.bound.contains("1 EiB/s"), "{e}");
        let e = check_cell(&CellRow { kib_per_sec: -956380.0, ..cell() }, &TWO).unwrap_err();
        assert_eq!((e.value.as_str(), e.bound.as_str()), ("-956380", "a figure is not negative"));
        let e = check_cell(&CellRow { kib_per_sec: f64::NAN, ..cell() }, &TWO).unwrap_err();
        assert_eq!(e.bound, "a figure is a finite number");
        let e = check_cell(&CellRow { cpu_percent: Some(336.0), ..cell() }, &TWO).unwrap_err();
        assert_eq!(e.figure, "cpu_percent");
        assert!(e.to_string().contains("at most 200% (100 x the run's 2 CPUs)"), "{e}");
        // The clocks' slack: 200.1% on 2 CPUs passes, 200.3% does not.
        assert_eq!(check_cell(&CellRow { cpu_percent: Some(200.1), ..cell() }, &TWO), Ok(()));
        assert!(check_cell(&CellRow { cpu_percent: Some(200.3), ..cell() }, &TWO).is_err());
        // Without an environment: only the bound that needs none.
        assert_eq!(check_cell(&CellRow { cpu_percent: Some(336.0), ..cell() }, &Limits::UNKNOWN), Ok(()));
        assert!(check_cell(&CellRow { cpu_percent: Some(1e7), ..cell() }, &Limits::UNKNOWN).is_err());
        let e = check_cell(&CellRow { file_size: Some(u64::MAX), ..cell() }, &TWO).unwrap_err();
        assert_eq!(e.figure, "file_size");
        let e = check_cell(&CellRow { wall_ns: MAX_TIME_NS + 1_000_000_000, ..cell() }, &TWO).unwrap_err();
        assert!(e.bound.contains("a year"), "{e}");
    }

    #[test]
    fn numbers_inside_documents_are_bounded_by_their_key() {
        let with = |metrics: Value| CellRow { metrics, ..cell() };
        let e = check_cell(&with(json!({"iops": 1.7e308})), &TWO).unwrap_err();
        assert_eq!((e.figure.as_str(), e.value.as_str()), ("metrics.iops", "1.7e308"));
        let e = check_cell(&with(json!({"write": {"iops": -2334.72}})), &TWO).unwrap_err();
        assert_eq!(e.figure, "metrics.write.iops");
        let e = check_cell(&with(json!({"read": {"p99_9_ns": 1e300}})), &TWO).unwrap_err();
        assert!(e.figure == "metrics.read.p99_9_ns" && e.bound.contains("a year"), "{e}");
        let e = check_cell(&with(json!({"random_percent": 101})), &TWO).unwrap_err();
        assert_eq!(e.bound, "at most 100%");
        let e = check_cell(&with(json!({"cpu_percent": 9999.9})), &TWO).unwrap_err();
        assert_eq!(e.figure, "metrics.cpu_percent");
        let e = check_cell(&with(json!({"per_second": [{"ops": 1}, {"ops": -1}]})), &TWO).unwrap_err();
        assert_eq!(e.figure, "metrics.per_second[1].ops");
        let e = check_cell(&with(json!({"host": "x".repeat(MAX_TEXT_CHARS + 1)})), &TWO).unwrap_err();
        assert!(e.value.contains("65537 characters"), "{e}");
        let e = check_cell(&CellRow { client_figures: json!([{"iops": 1e13}]), ..cell() }, &TWO).unwrap_err();
        assert_eq!(e.figure, "clients[0].iops");
    }

    #[test]
    fn kinds_by_key() {
        assert_eq!(Kind::of("kib_per_sec_overall"), Kind::KibPerSec);
        assert_eq!(Kind::of("mib_per_sec_sum_of_clients"), Kind::MibPerSec);
        assert_eq!(Kind::of("ops_per_sec"), Kind::PerSec);
        assert_eq!(Kind::of("read_iops"), Kind::PerSec);
        assert_eq!(Kind::of("p99_99_ns"), Kind::Latency);
        assert_eq!(Kind::of("p50_ns"), Kind::Latency);
        assert_eq!(Kind::of("arrived_unix_ns"), Kind::Integer);
        assert_eq!(Kind::of("user_ns"), Kind::Integer);
        assert_eq!(Kind::of("read_percent"), Kind::Share);
        assert_eq!(Kind::of("pid_ns"), Kind::Integer);
    }

    #[test]
    fn the_environment_gives_the_cpus_of_a_run_of_threads_only() {
        assert_eq!(Limits::of_environment(&json!({"cpu_count": 2})), TWO);
        assert_eq!(Limits::of_environment(&json!({})), Limits::UNKNOWN);
        // MPI ranks, even on one host: each counts from its own release, so not one host's cores.
        let one_host = json!({"cpu_count": 2, "client_hosts": [{"rank": 0, "host": "a"}, {"rank": 1, "host": "a"}]});
        assert_eq!(Limits::of_environment(&one_host), Limits::UNKNOWN);
        let three = json!({"cpu_count": 2, "client_hosts": [{"host": "a"}, {"host": "b"}, {"host": "c"}]});
        assert_eq!(Limits::of_environment(&three), Limits { cpus: None, hosts: 3 });
        assert_eq!(Limits::of_environment(&three).max_cpu_percent().0, 100.0 * 3.0 * MAX_CPUS as f64);
    }

    #[test]
    fn a_runs_text_is_bounded_and_labels_hold_no_control_character() {
        let run = NewRun {
            suite: "iozone".into(),
            command_line: "iomatrix run iozone".into(),
            labels: vec![("fs".into(), "ext4".into())],
            plan: json!({}),
            environment: json!({}),
            conditions: json!({}),
            total_cells: 1,
        };
        assert_eq!(check_run(&run, "vm"), Ok(()));
        let e = check_run(&run, &"m".repeat(200_000)).unwrap_err();
        assert!(e.figure == "machine name" && e.value.contains("200000 characters"), "{e}");
        let fake = NewRun { labels: vec![("x".into(), "1\n    7  2026  iozone".into())], ..run.clone() };
        let e = check_run(&fake, "vm").unwrap_err();
        assert!(e.bound.contains("a newline"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
        let ansi = NewRun { labels: vec![("\u{1b}[31mred".into(), "1".into())], ..run.clone() };
        assert!(check_run(&ansi, "vm").unwrap_err().bound.contains("ESC"));
        let deep = NewRun { environment: json!({"host": "h".repeat(MAX_TEXT_CHARS + 1)}), ..run };
        assert_eq!(check_run(&deep, "vm").unwrap_err().figure, "environment.host");
    }
}
