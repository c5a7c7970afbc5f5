//! IOzone's own command line, read as IOzone reads it, turned into an
//! [`IozonePlan`]. Written by hand because IOzone's syntax (clustered flags
//! that take values, `-+n`, sizes in KiB by default) is not clap's.

use crate::plan::{self, IozonePlan};
use crate::IozoneTest;
use iomatrix_core::{
    short_flags, unexpected_operand, BackendKind, ByteSize, FrontEnd, OwnFlags, ShortFlag, UsageError, KIB,
};
use std::path::PathBuf;

/// What an `iozone ...` command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct IozoneInvocation {
    /// The run the flags describe, as `iomatrix run iozone` would make it.
    pub plan: IozonePlan,
    /// The folder under which the working folder is made (`-f`'s folder, or ".").
    pub target: PathBuf,
    /// `-R`: print IOzone's Excel-style report after the run.
    pub excel_report: bool,
    /// The record sizes IOzone's `-R` report (and `-b` workbook) lists in
    /// its header for these flags: the `-r` sizes when `-r` is given (once or
    /// more), else the powers of two from `-y` to `-q` in auto mode, else
    /// IOzone's list, 4k to 16m (IOzone rebuilds its header from its minimum
    /// and maximum record size, 4k and 16m unless `-y`/`-q`/`-r` say
    /// otherwise, though without `-a` only 4k runs).
    pub report_record_sizes: Vec<ByteSize>,
    /// `-t`: IOzone's throughput mode, whose `-R` report is one line per
    /// test (see `iomatrix_report::throughput_report`), not the matrices.
    pub throughput: bool,
    /// `-b FILE`: write the report as a spreadsheet.
    pub spreadsheet: Option<PathBuf>,
    /// `-w`: keep the working folder and its files.
    pub keep_files: bool,
    /// `-h`: print help and run nothing.
    pub help: bool,
    /// `-+t` or `+t` as typed (IOzone's network test): accepted, not run; the
    /// caller says what is done instead.
    pub network_test: Option<String>,
    /// iomatrix's own `--label`, `--db`, `--json`, `--verify` (stamped blocks, every read
    /// checked) and `--compressible`.
    pub own: OwnFlags,
    /// `--force` (iomatrix's): `-b` may replace a file that is not an iomatrix workbook.
    pub force: bool,
}

/// The flags this front end understands, for `-h` and error messages.
pub const HELP: &str = "\
iomatrix iozone: runs IOzone's tests with IOzone's command line.

  -a            auto mode: files 64k..512m, records 4k..16m (records < 64k skipped above 32m)
  -A            auto mode with every record size for large files (same as -a -z)
  -z            with -a: keep small records for files above 32m
  -s SIZE       file size (repeatable; bare numbers are KiB; k, m, g suffixes)
  -r SIZE       record size (repeatable; as -s)
  -n SIZE       auto mode: smallest file size      -g SIZE  auto mode: largest file size
  -y SIZE       auto mode: smallest record size    -q SIZE  auto mode: largest record size
  -i N          test to run (repeatable): 0 write/rewrite, 1 read/reread, 2 random read/write,
                3 backward read, 4 record rewrite, 5 stride read, 6 fwrite/frewrite,
                7 fread/freread, 8 mixed workload. Default: 0..7
  -+n           no retests (skip rewrite, reread, frewrite, freread)
  -e            include fsync (fflush+fsync) in the write timing
  -c            include close in the timing
  -I            O_DIRECT (fwrite/fread tests stay buffered; they are library I/O)
  -B            use mmap for the file I/O
  -t N          N clients (threads), each with its own folder and file
  -f PATH       temporary file: its folder is the target, its name the file name (in a
                working folder there); a device, FIFO or folder at PATH is refused
  -w            keep the working folder and its files at the end
  -R            print IOzone's Excel-style report
  -b FILE       write the report as a workbook: FILE.xlsx an .xlsx workbook, any other
                name the Excel 2.1 .xls worksheet IOzone writes (Excel, LibreOffice open it)
  -h            this help

iomatrix's own long options (not IOzone's):
  --verify            write 4k blocks stamped with the run, file, offset and write, check every
                      block read back; mismatches counted per cell, exit 4. Records must be 4k or
                      a multiple. Stamping and checking are inside the timed pass (verify_ns)
  --compressible PCT  PCT % of each written 4k block is zeros, the rest unique random data
                      [default: incompressible]
  --label KEY=VALUE   label the run (repeatable), for sweep and compare: sweep k=1 k=2 --by k
  --db PATH           the results database (as iomatrix --db)
  --json              print the stored run as JSON (schema iomatrix.run/1) instead of tables
  --force             let -b replace an existing file that is not an iomatrix workbook (a previous
                      iomatrix workbook is replaced without it; the results database never)

IOzone's -+t (its network performance test, which works with -+m's cluster of clients) and
the same without its dash, +t (as seed 001 typed it; IOzone's getopt passes a bare +t over as
an operand and it has no effect there), are accepted and change nothing: iomatrix runs the tests
against the target as given and says so. Many clients at once are -t N here, or MPI ranks.

Results go to the results database like every iomatrix run (--db and IOMATRIX_DB choose it).
Without -a, IOzone's defaults apply: one 512k file, 4k records.
";

const FRONT_END: FrontEnd = FrontEnd { tool: "iozone", label_example: "cache=1" };

/// Parses IOzone's arguments (without the program name).
pub fn parse(args: &[String]) -> Result<IozoneInvocation, UsageError> {
    let mut p = Parsed::default();
    let mut flags =
        short_flags("iozone", args, takes_value, |a| a.starts_with("-+") || a.starts_with("--"))?.into_iter();
    while let Some(flag) = flags.next() {
        match flag {
            ShortFlag::Word(w) if w == "-+n" => p.no_retests = true,
            ShortFlag::Word(w) if w == "-+t" => p.network_test = Some(w),
            ShortFlag::Operand(w) if w == "+t" => p.network_test = Some(w),
            ShortFlag::Word(w) if w == "--force" => p.force = true,
            ShortFlag::Word(w) if p.own.take(FRONT_END, &w, &mut flags)? => {}
            ShortFlag::Word(w) => return Err(unknown(&w)),
            ShortFlag::Operand(a) => return Err(unexpected_operand("iozone", &a)),
            ShortFlag::Switch(c) => p.set_switch(c)?,
            ShortFlag::Value(c, v) => p.set_value(c, &v)?,
        }
    }
    p.into_invocation()
}

fn takes_value(flag: char) -> bool {
    matches!(flag, 's' | 'r' | 'n' | 'g' | 'y' | 'q' | 'i' | 't' | 'f' | 'b')
}

fn unknown(flag: &str) -> UsageError {
    UsageError::new(format!(
        "iozone: flag '{flag}' is not supported by iomatrix's IOzone front end; see iomatrix iozone -h for the flags it takes"
    ))
}

#[derive(Default)]
struct Parsed {
    auto: bool,
    all_records: bool,
    files: Vec<ByteSize>,
    records: Vec<ByteSize>,
    min_file: Option<ByteSize>,
    max_file: Option<ByteSize>,
    min_record: Option<ByteSize>,
    max_record: Option<ByteSize>,
    tests: Vec<IozoneTest>,
    no_retests: bool,
    fsync: bool,
    close: bool,
    direct: bool,
    mmap: bool,
    clients: Option<usize>,
    file: Option<PathBuf>,
    keep: bool,
    excel: bool,
    spreadsheet: Option<PathBuf>,
    help: bool,
    network_test: Option<String>,
    own: OwnFlags,
    force: bool,
}

fn iozone_size(flag: char, value: &str) -> Result<ByteSize, UsageError> {
    ByteSize::parse_with_default_unit(value, KIB).map_err(|e| UsageError::new(format!("iozone: -{flag} {value}: {e}")))
}

impl Parsed {
    fn set_switch(&mut self, flag: char) -> Result<(), UsageError> {
        match flag {
            'a' => self.auto = true,
            'A' => {
                self.auto = true;
                self.all_records = true;
            }
            'z' => self.all_records = true,
            'e' => self.fsync = true,
            'c' => self.close = true,
            'I' => self.direct = true,
            'B' => self.mmap = true,
            'w' => self.keep = true,
            'R' => self.excel = true,
            'h' => self.help = true,
            other => return Err(unknown(&format!("-{other}"))),
        }
        Ok(())
    }

    fn set_value(&mut self, flag: char, value: &str) -> Result<(), UsageError> {
        match flag {
            's' => self.files.push(iozone_size(flag, value)?),
            'r' => self.records.push(iozone_size(flag, value)?),
            'n' => self.min_file = Some(iozone_size(flag, value)?),
            'g' => self.max_file = Some(iozone_size(flag, value)?),
            'y' => self.min_record = Some(iozone_size(flag, value)?),
            'q' => self.max_record = Some(iozone_size(flag, value)?),
            'i' => {
                let n: u32 = value
                    .parse()
                    .map_err(|_| UsageError::new(format!("iozone: -i {value}: not a test number (0..8)")))?;
                let tests = IozoneTest::by_iozone_number(n).ok_or_else(|| {
                    UsageError::new(format!(
                        "iozone: -i {n}: test {n} is not supported by iomatrix (supported: 0..8, see iomatrix iozone -h)"
                    ))
                })?;
                self.tests.extend_from_slice(tests);
            }
            't' => {
                let n: usize = value
                    .parse()
                    .map_err(|_| UsageError::new(format!("iozone: -t {value}: not a number of clients")))?;
                if n == 0 {
                    return Err(UsageError::new("iozone: -t 0: at least one client is needed"));
                }
                self.clients = Some(n);
            }
            'f' => self.file = Some(PathBuf::from(value)),
            'b' => self.spreadsheet = Some(PathBuf::from(value)),
            _ => unreachable!("takes_value() lists exactly these flags"),
        }
        Ok(())
    }

    fn into_invocation(self) -> Result<IozoneInvocation, UsageError> {
        let files = dedup_sorted(self.files.clone());
        let records = dedup_sorted(self.records.clone());
        let mut plan = if self.auto {
            let min_file = self.min_file.unwrap_or(plan::AUTO_MIN_FILE);
            let max_file = self.max_file.unwrap_or(plan::AUTO_MAX_FILE);
            let min_record = self.min_record.unwrap_or(plan::AUTO_MIN_RECORD);
            let max_record = self.max_record.unwrap_or(plan::AUTO_MAX_RECORD);
            if min_file > max_file {
                return Err(UsageError::new(format!(
                    "iozone: -n {min_file} is larger than -g {max_file}: the smallest file size must not exceed the largest"
                )));
            }
            if min_record > max_record {
                return Err(UsageError::new(format!(
                    "iozone: -y {min_record} is larger than -q {max_record}: the smallest record size must not exceed the largest"
                )));
            }
            let mut plan = IozonePlan::auto(min_file, max_file, min_record, max_record);
            if !files.is_empty() {
                plan.file_sizes = files;
            }
            if !records.is_empty() {
                plan.record_sizes = records;
            }
            if plan.file_sizes.is_empty() {
                return Err(UsageError::new(format!(
                    "iozone: no power-of-two file size lies between -n {min_file} and -g {max_file}"
                )));
            }
            if plan.record_sizes.is_empty() {
                return Err(UsageError::new(format!(
                    "iozone: no power-of-two record size lies between -y {min_record} and -q {max_record}"
                )));
            }
            plan.skip_small_records_for_large_files = !self.all_records;
            plan
        } else {
            // IOzone without -a: one 512 KiB file in 4 KiB records unless told.
            let files = if files.is_empty() { vec![ByteSize(512 * KIB)] } else { files };
            let records = if records.is_empty() { vec![ByteSize(4 * KIB)] } else { records };
            IozonePlan::new(files, records)
        };
        if !self.tests.is_empty() {
            plan.tests.clone_from(&self.tests);
        }
        if self.no_retests {
            plan.tests.retain(|t| !t.is_retest());
        }
        plan.tests.sort();
        plan.tests.dedup();
        plan.fsync = self.fsync;
        plan.close = self.close;
        plan.direct = self.direct;
        if self.mmap {
            plan.backend = BackendKind::Mmap;
        }
        plan.clients = self.clients.unwrap_or(1);
        let report_record_sizes = if self.auto || !self.records.is_empty() {
            plan.record_sizes.clone()
        } else {
            plan::powers_of_two(plan::AUTO_MIN_RECORD, plan::AUTO_MAX_RECORD)
        };
        let target = match &self.file {
            Some(path) => {
                let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                    UsageError::new(format!(
                        "iozone: -f {}: give a file path such as /mnt/x/iozone.tmp",
                        path.display()
                    ))
                })?;
                plan.file_name = name.to_string();
                match path.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                    _ => PathBuf::from("."),
                }
            }
            None => PathBuf::from("."),
        };
        Ok(IozoneInvocation {
            plan,
            target,
            excel_report: self.excel,
            report_record_sizes,
            throughput: self.clients.is_some(),
            spreadsheet: self.spreadsheet,
            keep_files: self.keep,
            help: self.help,
            network_test: self.network_test,
            own: self.own,
            force: self.force,
        })
    }
}

fn dedup_sorted(mut v: Vec<ByteSize>) -> Vec<ByteSize> {
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_record_bound_near_the_top_of_u64_ends_parsing() {
        // fuzz/ found `-aq 9999999999999999` (9.3 EiB in k units) looping forever in the auto matrix.
        let args: Vec<String> = ["-aq", "9999999999999999"].iter().map(|s| s.to_string()).collect();
        let plan = parse(&args).expect("parses").plan;
        assert_eq!(plan.record_sizes.last().copied(), Some(ByteSize(1 << 63)));
        let _ = plan.validate();
    }
    use super::*;
    use iomatrix_core::MIB;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn seed_001_line_parses() {
        // Seed 001: iozone.exe -Rab %computername%-out.wks -s 512m -r 64k -e -c -i 0 -i 2 +t
        let inv = parse(&args("-Rab out.xlsx -s 512m -r 64k -e -c -i 0 -i 2 +t")).unwrap();
        assert_eq!(inv.network_test.as_deref(), Some("+t"));
        assert_eq!(parse(&args("-s 1m -+t")).unwrap().network_test.as_deref(), Some("-+t"));
        assert_eq!(parse(&args("-s 1m")).unwrap().network_test, None);
        assert!(inv.excel_report);
        assert_eq!(inv.spreadsheet, Some(PathBuf::from("out.xlsx")));
        assert_eq!(inv.plan.file_sizes, [ByteSize(512 * MIB)]);
        assert_eq!(inv.plan.record_sizes, [ByteSize(64 * KIB)]);
        assert!(inv.plan.fsync && inv.plan.close && !inv.plan.direct);
        use IozoneTest::*;
        assert_eq!(inv.plan.tests, [Write, Rewrite, RandomRead, RandomWrite]);
        assert_eq!(inv.plan.pairs().len(), 1);
        inv.plan.validate().unwrap();
    }

    #[test]
    fn auto_with_bounds_parses() {
        let inv = parse(&args("-a -n 64k -g 64m")).unwrap();
        let p = &inv.plan;
        assert_eq!(p.file_sizes.first(), Some(&ByteSize(64 * KIB)));
        assert_eq!(p.file_sizes.last(), Some(&ByteSize(64 * MIB)));
        assert_eq!(p.record_sizes.len(), 13); // 4k..16m
        assert!(p.skip_small_records_for_large_files);
        assert_eq!(p.tests, IozoneTest::default_set());
        assert_eq!(inv.target, PathBuf::from("."));
        // The fixture's line.
        let inv = parse(&args("-a -n 64k -g 1m -i 0 -i 1 -i 2 -e -c -R -f iozone.tmp")).unwrap();
        assert_eq!(inv.plan.pairs().len(), 35);
        assert_eq!(inv.plan.file_name, "iozone.tmp");
        assert_eq!(inv.plan.tests.len(), 6);
    }

    #[test]
    fn attached_values_clusters_and_the_rest() {
        let inv = parse(&args("-az -s512m -r4 -r 8k -i0 -+n -t 3 -f /mnt/x/f.tmp -w -I -B")).unwrap();
        assert!(!inv.plan.skip_small_records_for_large_files);
        assert_eq!(inv.plan.record_sizes, [ByteSize(4 * KIB), ByteSize(8 * KIB)]);
        assert_eq!(inv.plan.tests, [IozoneTest::Write]);
        assert_eq!(inv.plan.clients, 3);
        assert_eq!(inv.target, PathBuf::from("/mnt/x"));
        assert_eq!(inv.plan.file_name, "f.tmp");
        assert!(inv.keep_files && inv.plan.direct);
        assert_eq!(inv.plan.backend, BackendKind::Mmap);
        let inv = parse(&args("-A -y 16k -q 1m -n 1m -g 4m")).unwrap();
        assert_eq!(inv.plan.record_sizes.first(), Some(&ByteSize(16 * KIB)));
        assert!(!inv.plan.skip_small_records_for_large_files);
        assert!(parse(&args("-h")).unwrap().help);
    }

    #[test]
    fn without_a_iozone_defaults_apply() {
        let inv = parse(&args("-i 0")).unwrap();
        assert_eq!(inv.plan.file_sizes, [ByteSize(512 * KIB)]);
        assert_eq!(inv.plan.record_sizes, [ByteSize(4 * KIB)]);
    }

    #[test]
    fn the_report_header_is_iozones_record_size_list() {
        let kib = |line: &str| -> Vec<u64> {
            parse(&args(line)).unwrap().report_record_sizes.iter().map(|r| r.kib()).collect()
        };
        let all = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
        // The fixtures' lines.
        assert_eq!(kib("-R -s 64m -r 4k -r 1m -e -c -i 0 -i 1 -i 2"), [4, 1024]);
        assert_eq!(kib("-a -n 64k -g 1m -i 0 -i 1 -i 2 -e -c -R"), all);
        // One -r, repeated -s, auto mode's bounds, -r in auto mode.
        assert_eq!(kib("-s 16m -r 64k"), [64]);
        assert_eq!(kib("-s 64k -s 1m -r 1m -r 4k -r 1m"), [4, 1024]);
        assert_eq!(kib("-a -y 16k -q 256k"), [16, 32, 64, 128, 256]);
        assert_eq!(kib("-az -r 8k"), [8]);
        // Without -a or -r IOzone's whole list, though only 4k runs.
        assert_eq!(kib("-s 1m -i 0"), all);
        assert_eq!(kib("-s 64k -s 1m"), all);
        assert!(!parse(&args("-s 1m")).unwrap().throughput);
        assert!(parse(&args("-s 1m -t 1")).unwrap().throughput);
    }

    #[test]
    fn bad_flags_are_named() {
        let e = |l: &str| parse(&args(l)).unwrap_err().to_string();
        assert!(e("-a -Q").contains("'-Q'"));
        assert!(e("-aQ").contains("'-Q'"));
        assert!(e("-+m x").contains("'-+m'"));
        assert!(e("-s 64q").contains("-s 64q") && e("-s 64q").contains("not a size"));
        assert!(e("-s -1k").contains("negative"));
        assert!(e("-i 9").contains("test 9"));
        assert!(e("-i x").contains("-i x"));
        assert!(e("-s").contains("-s needs a value"));
        assert!(e("-t 0").contains("-t 0"));
        assert!(e("-a -n 64m -g 1m").contains("-n 64m is larger than -g 1m"));
        assert!(e("foo").contains("'foo'"));
        assert!(e("--verfy").contains("'--verfy'"));
        assert!(e("--compressible 101").contains("from 0 (incompressible) to 100"));
        assert!(e("--compressible").contains("needs a percentage"));
    }

    #[test]
    fn iomatrix_long_options_sit_beside_iozone_flags() {
        let inv = parse(&args("-s 1m -r 64k --verify -i 0 --compressible 50 -i 1")).unwrap();
        assert!(inv.own.verify);
        assert_eq!(inv.own.compressible, Some(50));
        assert_eq!(inv.plan.record_sizes, [ByteSize(64 * KIB)]);
        let inv = parse(&args("--compressible=0")).unwrap();
        assert_eq!((inv.own.verify, inv.own.compressible), (false, Some(0)));
        let inv = parse(&args("-s 1m --label cache=1 --label=site=lab --db /tmp/r.sqlite --json -i 0")).unwrap();
        assert_eq!(inv.own.labels, ["cache=1", "site=lab"]);
        assert_eq!(inv.own.db, Some(PathBuf::from("/tmp/r.sqlite")));
        assert!(inv.own.json);
        assert_eq!(inv.plan.tests, [IozoneTest::Write, IozoneTest::Rewrite]);
        let e = parse(&args("-s 1m --label")).unwrap_err().to_string();
        assert!(e.contains("--label needs a value"), "{e}");
    }
}
