//! mdtest's command line, read as mdtest 4.x reads it (its option table in `mdtest.c`, parsed by
//! `option.c`): `-n 1000`, `-n1000` and `-n=1000` alike; flags grouped (`-uL`); a number with
//! `k`, `m`, `g`, `t` or `p` after it is that many KiB, MiB, ... (`-w 4k`); long options with two
//! dashes (`--dataPacketType=t`). Every option mdtest has that iomatrix does not take is refused
//! by name, with why, before anything runs; so is anything mdtest itself would refuse.

use iomatrix_core::UsageError;
use std::path::PathBuf;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Flag,
    Value,
}

/// One option of mdtest 4.x's table: taken, or refused with why.
struct Opt {
    short: Option<char>,
    long: Option<&'static str>,
    takes: Takes,
    /// Why iomatrix refuses it; None: taken.
    refused: Option<&'static str>,
}

const fn taken(short: char, takes: Takes) -> Opt {
    Opt { short: Some(short), long: None, takes, refused: None }
}

const fn taken_long(long: &'static str, takes: Takes) -> Opt {
    Opt { short: None, long: Some(long), takes, refused: None }
}

const fn refused(short: char, takes: Takes, why: &'static str) -> Opt {
    Opt { short: Some(short), long: None, takes, refused: Some(why) }
}

const fn refused_long(long: &'static str, takes: Takes, why: &'static str) -> Opt {
    Opt { short: None, long: Some(long), takes, refused: Some(why) }
}

use Takes::{Flag, Value};

/// mdtest 4.x's options (master's table; 4.0.0's is the same but for the GPU and per-op ones).
const OPTIONS: &[Opt] = &[
    taken('a', Value),
    taken('b', Value),
    taken('d', Value),
    refused('B', Value, "iomatrix times every phase between barriers, as mdtest does by default"),
    taken('C', Flag),
    taken('T', Flag),
    taken('E', Flag),
    taken('r', Flag),
    taken('U', Flag),
    taken('D', Flag),
    taken('e', Value),
    refused('f', Value, "mdtest's range of task counts is not taken: run iomatrix mdtest once per count of ranks"),
    taken('F', Flag),
    refused('g', Flag, "Lustre's directory layout is not set by iomatrix"),
    taken('G', Value),
    taken('i', Value),
    taken('I', Value),
    refused('k', Flag, "files are made by open(O_CREAT), never mknod"),
    refused('l', Value, "mdtest's range of task counts is not taken: run iomatrix mdtest once per count of ranks"),
    taken('L', Flag),
    taken('n', Value),
    taken('N', Value),
    refused('p', Value, "there is no pre-iteration delay; sleep between runs instead"),
    taken('P', Flag),
    refused_long("print-all-procs", Flag, "each client's own figures are stored: see 'iomatrix show'"),
    taken('R', Flag),
    taken_long("random-seed", Value),
    refused('s', Value, "mdtest's range of task counts is not taken: run iomatrix mdtest once per count of ranks"),
    refused('S', Flag, "shared-file access (every task on one file) is not a phase of the metadata suite"),
    refused('c', Flag, "collective creates (task 0 creates for all) are not taken"),
    taken('t', Flag),
    taken('u', Flag),
    refused('v', Flag, "verbosity is not taken: the run's progress is on stderr"),
    refused('V', Value, "verbosity is not taken: the run's progress is on stderr"),
    taken('w', Value),
    taken('W', Value),
    taken('x', Value),
    refused('X', Flag, "reads are not verified by the metadata suite"),
    refused_long("verify-read", Flag, "reads are not verified by the metadata suite"),
    refused_long("verify-write", Flag, "writes are not verified by the metadata suite"),
    taken('y', Flag),
    taken('Y', Flag),
    taken('z', Value),
    refused('Z', Flag, "the time table comes with the rate table: give -P"),
    taken_long("dataPacketType", Value),
    refused_long("run-cmd-before-phase", Value, "no command is run between phases"),
    refused_long("run-cmd-after-phase", Value, "no command is run between phases"),
    refused_long("allocateBufferOnGPU", Value, "no buffer is put on a GPU"),
    refused_long("GPUid", Value, "no buffer is put on a GPU"),
    refused_long("gpuDirect", Flag, "no buffer is put on a GPU"),
    refused_long("warningAsErrors", Flag, "iomatrix has no warnings to turn into errors: a failure is a cell state"),
    taken_long("saveRankPerformanceDetails", Value),
    refused_long("savePerOpDataCSV", Value, "each operation's latency is stored as percentiles, not as a CSV per rank"),
    refused_long("showRankStatistics", Flag, "each client's own rates are stored: see 'iomatrix show'"),
    refused_long("posix.odirect", Flag, "O_DIRECT is not taken: metadata phases write at most -w bytes a file"),
];

/// `iomatrix mdtest -h`: the options taken, as mdtest 4.x reads them, and those refused.
pub const HELP: &str = "\
iomatrix mdtest: the metadata suite with mdtest 4.x's command line, printed in mdtest's layout
(SUMMARY rate table; -P adds the time table). Stored like any run: see 'iomatrix show'.

Taken (as mdtest reads them: -n 1000, -n1000, -n=1000; flags grouped, -uL; k/m/g/t/p = 1024s):
  -n N   items per task             -I N   items per folder of the tree
  -z D   tree depth                 -b B   branching factor (1)
  -L     items in the leaves only   -u     a folder per task (else one shared)
  -F     files only                 -D     directories only
  -C -T -E -r -U   only create, stat, read, remove, rename (none: every phase). Apart, as
                   IO500 runs them, they work in -d itself in mdtest's layout: -C leaves its
                   items, -T -E -U work on what an earlier run left, -r removes mdtest's
                   names only (a missing item is its phase's failure, ENOENT)
  -w N   bytes written to each file -e N   bytes read from each file
  -y     fsync each file            -Y     sync after each phase (timed)
  -N S   stat/read/remove the items of the task S ranks on
  -R     stat in random order       --random-seed N  its seed
  -W S   stonewall: stop file creation after S seconds (-b 1 only)
  -x F   with -C -W, write the count the stonewall reached to F; without -C, read it
         back: the phases work on that many files per task
  -i N   iterations                 -P     the time table too
  -d DIR the folder (default ./out; nfs:// or smb:// for iomatrix's own clients)
  -a POSIX  -t  -G N  --dataPacketType T   taken; they change nothing iomatrix times
  --saveRankPerformanceDetails F   each task's rate and time, as mdtest's CSV
  iomatrix's own: --label KEY=VALUE, --db PATH, --json
Refused, by name, before anything runs: -a other than POSIX, -B, -c, -f, -l, -s, -g, -k, -p,
-S, -v, -V, -X, -Z, --verify-read, --verify-write, --run-cmd-before-phase, --run-cmd-after-phase,
--savePerOpDataCSV, --showRankStatistics, --print-all-procs, --warningAsErrors, --posix.odirect
and the GPU options. Tasks: --clients is not an mdtest option; run under mpirun for more tasks.
";

/// mdtest's `--dataPacketType`: what a written file holds. iomatrix takes it and writes its own
/// pattern either way (the metadata phases time the create, not the bytes).
pub const PACKET_TYPES: [&str; 8] = ["offset", "incompressible", "timestamp", "random", "o", "i", "t", "r"];

/// mdtest's command line, read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MdtestArgs {
    /// -n: items per task.
    pub items: Option<u64>,
    /// -I: items per folder.
    pub items_per_dir: Option<u64>,
    /// -i: iterations (1).
    pub iterations: Option<u32>,
    /// -u: a folder per task.
    pub unique_dir: bool,
    /// -d: where (mdtest's default `./out`).
    pub dir: Option<PathBuf>,
    /// -z: tree depth.
    pub depth: u32,
    /// -b: branching factor (1).
    pub branch: Option<u32>,
    /// -L: items in the leaves only.
    pub leaf_only: bool,
    /// -F: files only.
    pub files_only: bool,
    /// -D: directories only.
    pub dirs_only: bool,
    /// -C, -T, -E, -r, -U: the phases chosen (none: all).
    pub create: bool,
    /// -T.
    pub stat: bool,
    /// -E.
    pub read: bool,
    /// -r.
    pub remove: bool,
    /// -U.
    pub rename: bool,
    /// -w: bytes written to each file.
    pub write_bytes: u64,
    /// -e: bytes read from each file.
    pub read_bytes: u64,
    /// -y: fsync each file.
    pub sync_file: bool,
    /// -Y: sync after each phase.
    pub call_sync: bool,
    /// -N: neighbour stride.
    pub stride: usize,
    /// -R: stat in random order.
    pub random: bool,
    /// --random-seed.
    pub random_seed: Option<u64>,
    /// -W: stonewall, in seconds.
    pub stonewall_secs: Option<u64>,
    /// -x: the stonewall status file.
    pub stonewall_file: Option<PathBuf>,
    /// -t: time the unique folders' overhead.
    pub time_unique_dir: bool,
    /// -P: the time table too.
    pub print_time: bool,
    /// -G: the data's offset in the buffer.
    pub buffer_offset: Option<i64>,
    /// --dataPacketType.
    pub packet_type: Option<String>,
    /// --saveRankPerformanceDetails: each rank's rates to this CSV.
    pub rank_details_csv: Option<PathBuf>,
    /// iomatrix's own flags among mdtest's: `--label KEY=VALUE`, `--db PATH`, `--json`.
    pub own: iomatrix_core::OwnFlags,
}

fn usage(msg: impl Into<String>) -> UsageError {
    UsageError::new(msg.into())
}

/// Reads mdtest's options (without the program's name).
pub fn parse(args: &[String]) -> Result<MdtestArgs, UsageError> {
    let mut out = MdtestArgs::default();
    let mut i = 0;
    while i < args.len() {
        let token = &args[i];
        let (word, attached) = match token.split_once('=') {
            Some((w, v)) => (w, Some(v)),
            None => (token.as_str(), None),
        };
        let next = args.get(i + 1).map(String::as_str);
        let used_next = if let Some(long) = word.strip_prefix("--") {
            one_long(&mut out, long, attached, next)?
        } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            shorts_group(&mut out, token, shorts, attached, next)?
        } else {
            return Err(usage(format!(
                "'{token}' is not an mdtest option: mdtest takes only options (-n 1000, -d DIR, ...), no other words"
            )));
        };
        i += 1 + usize::from(used_next);
    }
    Ok(out)
}

fn find(pred: impl Fn(&Opt) -> bool) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| pred(o))
}

/// `--NAME[=V] [V]`; whether it took the next word.
fn one_long(out: &mut MdtestArgs, long: &str, attached: Option<&str>, next: Option<&str>) -> Result<bool, UsageError> {
    if let Some(used_next) = own_flag(out, long, attached, next)? {
        return Ok(used_next);
    }
    let opt = find(|o| o.long == Some(long)).ok_or_else(|| {
        usage(format!("--{long} is not an option of mdtest 4.x that iomatrix knows (see 'iomatrix help mdtest')"))
    })?;
    let name = format!("--{long}");
    check_taken(opt, &name)?;
    let (value, used_next) = value_of(opt, &name, attached, next)?;
    set(out, opt, &name, value.as_deref())?;
    Ok(used_next)
}

/// iomatrix's own `--label`, `--db` and `--json` (mdtest has none of them); Some(whether it
/// took the next word) where `long` is one.
fn own_flag(
    out: &mut MdtestArgs,
    long: &str,
    attached: Option<&str>,
    next: Option<&str>,
) -> Result<Option<bool>, UsageError> {
    let value = |example: &str| match (attached, next) {
        (Some(v), _) if !v.is_empty() => Ok((v.to_string(), false)),
        (None, Some(v)) => Ok((v.to_string(), true)),
        _ => Err(usage(format!("--{long} needs a value, e.g. --{long} {example}"))),
    };
    match long {
        "json" if attached.is_none() => {
            out.own.json = true;
            Ok(Some(false))
        }
        "label" => {
            let (v, used) = value("fs=ext4")?;
            out.own.labels.push(v);
            Ok(Some(used))
        }
        "db" => {
            let (v, used) = value("/var/tmp/results.sqlite")?;
            out.own.db = Some(PathBuf::from(v));
            Ok(Some(used))
        }
        "verify" | "compressible" => {
            Err(usage(format!("--{long} is not taken by iomatrix mdtest: the metadata phases verify no data")))
        }
        _ => Ok(None),
    }
}

/// `-abc`, `-n1000`, `-n=1000`, `-n 1000`; whether it took the next word.
fn shorts_group(
    out: &mut MdtestArgs,
    token: &str,
    shorts: &str,
    attached: Option<&str>,
    next: Option<&str>,
) -> Result<bool, UsageError> {
    let chars: Vec<char> = shorts.chars().collect();
    for (k, c) in chars.iter().enumerate() {
        let name = format!("-{c}");
        let opt = find(|o| o.short == Some(*c)).ok_or_else(|| {
            usage(format!("{name} (in '{token}') is not an option of mdtest 4.x (see 'iomatrix help mdtest')"))
        })?;
        check_taken(opt, &name)?;
        if opt.takes == Value {
            let rest: String = chars[k + 1..].iter().collect();
            if k == 0 && !rest.is_empty() && attached.is_none() {
                set(out, opt, &name, Some(&rest))?;
                return Ok(false);
            }
            if !rest.is_empty() {
                return Err(usage(format!("{name} in '{token}' takes a value: put it last in its group, or apart")));
            }
            let (value, used_next) = value_of(opt, &name, attached, next)?;
            set(out, opt, &name, value.as_deref())?;
            return Ok(used_next);
        }
        let value = if k + 1 == chars.len() { attached } else { None };
        set(out, opt, &name, value)?;
    }
    Ok(false)
}

fn check_taken(opt: &Opt, name: &str) -> Result<(), UsageError> {
    match opt.refused {
        Some(why) => Err(usage(format!("mdtest's {name} is not taken by iomatrix mdtest: {why}"))),
        None => Ok(()),
    }
}

/// An option's value: attached (`=V`), else the next word.
fn value_of(
    opt: &Opt,
    name: &str,
    attached: Option<&str>,
    next: Option<&str>,
) -> Result<(Option<String>, bool), UsageError> {
    match (opt.takes, attached, next) {
        (Flag, a, _) => Ok((a.map(str::to_string), false)),
        (Value, Some(v), _) if !v.is_empty() => Ok((Some(v.to_string()), false)),
        (Value, None, Some(v)) => Ok((Some(v.to_string()), true)),
        _ => Err(usage(format!("{name} takes a value ({name} VALUE), as mdtest's does"))),
    }
}

/// A count as mdtest reads one: digits, and a `k`/`m`/`g`/`t`/`p` multiplier of 1024s.
pub fn count(name: &str, text: &str) -> Result<u64, UsageError> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_lowercase() {
                'k' => 10,
                'm' => 20,
                'g' => 30,
                't' => 40,
                'p' => 50,
                _ => return Err(bad_count(name, text)),
            };
            (&t[..at], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().map_err(|_| bad_count(name, text))?;
    n.checked_mul(1u64 << shift).ok_or_else(|| bad_count(name, text))
}

fn bad_count(name: &str, text: &str) -> UsageError {
    usage(format!("{name} '{text}': give a whole number, optionally with k, m, g, t or p after it (1024s)"))
}

fn small<T: TryFrom<u64>>(name: &str, text: &str) -> Result<T, UsageError> {
    T::try_from(count(name, text)?).map_err(|_| usage(format!("{name} '{text}' is too large")))
}

fn flag_on(name: &str, value: Option<&str>) -> Result<bool, UsageError> {
    match value {
        None => Ok(true),
        Some(v) => {
            v.parse::<i64>().map(|n| n > 0).map_err(|_| usage(format!("{name}={v}: give {name}, {name}=1 or {name}=0")))
        }
    }
}

/// Sets what `opt` means in `out`.
fn set(out: &mut MdtestArgs, opt: &Opt, name: &str, value: Option<&str>) -> Result<(), UsageError> {
    let v = value.unwrap_or("");
    match (opt.short, opt.long) {
        (Some(c), _) if opt.takes == Flag => set_flag(out, c, flag_on(name, value)?),
        (Some(c), _) => set_short_value(out, c, name, v)?,
        (None, Some("random-seed")) => out.random_seed = Some(count(name, v)?),
        (None, Some("dataPacketType")) => {
            if !PACKET_TYPES.contains(&v) {
                return Err(usage(format!("{name} '{v}': mdtest takes {}", PACKET_TYPES.join(", "))));
            }
            out.packet_type = Some(v.to_string());
        }
        (None, Some("saveRankPerformanceDetails")) => out.rank_details_csv = Some(PathBuf::from(v)),
        _ => return Err(usage(format!("{name} is not taken by iomatrix mdtest"))),
    }
    Ok(())
}

fn set_flag(out: &mut MdtestArgs, c: char, on: bool) {
    let field = match c {
        'C' => &mut out.create,
        'T' => &mut out.stat,
        'E' => &mut out.read,
        'r' => &mut out.remove,
        'U' => &mut out.rename,
        'D' => &mut out.dirs_only,
        'F' => &mut out.files_only,
        'L' => &mut out.leaf_only,
        'P' => &mut out.print_time,
        'R' => &mut out.random,
        't' => &mut out.time_unique_dir,
        'u' => &mut out.unique_dir,
        'y' => &mut out.sync_file,
        _ => &mut out.call_sync, // 'Y', the last flag of the table taken
    };
    *field = on;
}

fn set_short_value(out: &mut MdtestArgs, c: char, name: &str, v: &str) -> Result<(), UsageError> {
    match c {
        'a' if v == "POSIX" => {}
        'a' => {
            return Err(usage(format!(
                "-a {v}: iomatrix mdtest takes only -a POSIX (local system calls); for a server give an nfs:// or \
                 smb:// folder to -d"
            )))
        }
        'b' => out.branch = Some(small(name, v)?),
        'd' if v.contains('@') => {
            return Err(usage(format!("-d '{v}': several folders (dir1@dir2) are not taken: give one folder")))
        }
        'd' => out.dir = Some(PathBuf::from(v)),
        'e' => out.read_bytes = count(name, v)?,
        'G' => out.buffer_offset = Some(v.trim().parse().map_err(|_| usage(format!("-G '{v}': give a whole number")))?),
        'i' => out.iterations = Some(small(name, v)?),
        'I' => out.items_per_dir = Some(count(name, v)?),
        'n' => out.items = Some(count(name, v)?),
        'N' => out.stride = small(name, v)?,
        'w' => out.write_bytes = count(name, v)?,
        'W' => out.stonewall_secs = Some(count(name, v)?),
        'x' => out.stonewall_file = Some(PathBuf::from(v)),
        _ => out.depth = small(name, v)?, // 'z', the last value option of the table taken
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn mdtests_forms_of_an_option_are_read_alike() {
        for line in ["-n 1000 -u -L", "-n1000 -uL", "-n=1000 -u -L=1", "-uLn 1000", "-n 1k -u -L"] {
            let a = parse(&args(line)).unwrap();
            let want = if line.contains("1k") { 1024 } else { 1000 };
            assert_eq!((a.items, a.unique_dir, a.leaf_only), (Some(want), true, true), "{line}");
        }
        let a = parse(&args("-w 3901 -e 3901 -t -F -P -G 270669 -N 1 -W 300 -a POSIX --dataPacketType=t")).unwrap();
        assert_eq!((a.write_bytes, a.read_bytes, a.stride, a.stonewall_secs), (3901, 3901, 1, Some(300)));
        assert_eq!((a.buffer_offset, a.packet_type.as_deref()), (Some(270669), Some("t")));
        let a = parse(&args("-R --random-seed 7 --saveRankPerformanceDetails out.csv -x sw -L=0")).unwrap();
        assert_eq!((a.random, a.random_seed, a.leaf_only), (true, Some(7), false));
        assert_eq!(a.rank_details_csv, Some(PathBuf::from("out.csv")));
        let a = parse(&args("-n 5 --label fs=xfs --db=/tmp/r.sqlite --json")).unwrap();
        assert_eq!(
            (a.own.labels, a.own.db, a.own.json),
            (vec!["fs=xfs".to_string()], Some(PathBuf::from("/tmp/r.sqlite")), true)
        );
    }

    #[test]
    fn options_iomatrix_does_not_take_are_refused_by_name() {
        for (line, named) in [
            ("-n 10 -a MPIIO", "-a MPIIO: iomatrix mdtest takes only -a POSIX"),
            ("-n 10 -B", "mdtest's -B is not taken"),
            ("-n 10 -S", "mdtest's -S is not taken"),
            ("-Zn 10", "mdtest's -Z is not taken"),
            ("-n 10 --showRankStatistics", "mdtest's --showRankStatistics is not taken"),
            ("-n 10 -q", "-q (in '-q') is not an option of mdtest 4.x"),
            ("-n 10 --nope", "--nope is not an option of mdtest 4.x"),
            ("-n 10 stray", "'stray' is not an mdtest option"),
            ("-n", "-n takes a value"),
            ("-n ten", "-n 'ten': give a whole number"),
            ("-d a@b", "several folders"),
            ("--dataPacketType=x", "mdtest takes offset, incompressible"),
            ("-nu 5", "-n 'u': give a whole number"),
            ("-un5", "-n in '-un5' takes a value"),
            ("-n 5 --verify", "--verify is not taken"),
            ("-n 5 --label", "--label needs a value"),
        ] {
            let e = parse(&args(line)).unwrap_err().to_string();
            assert!(e.contains(named), "{line}: {e}");
        }
    }
}
