//! bonnie's and bonnie++'s own command line, read as bonnie++ 2.00a reads
//! it (getopt: clustered switches, values attached or in the next word),
//! turned into a [`BonniePlan`].
//!
//! `-u USER[:GROUP]` and `-g GROUP` are read here (names or numbers) and
//! carried out by the binary (see [`BonnieInvocation::user`]); `-fN` is
//! bonnie++'s per-char size in MiB. Differences from bonnie++, each refused
//! with a message rather than silently changed: `-s` is required (bonnie++
//! picks twice the RAM); `-p`/`-y` (semaphores between processes), `-Z`
//! (random numbers from a file), and `-n`'s link tests, folder count and
//! file chunk are not supported.

use crate::plan::{BonniePlan, PerChar, FILES_UNIT};
use iomatrix_core::{short_flags, unexpected_operand, ByteSize, FrontEnd, OwnFlags, ShortFlag, UsageError, MIB};
use std::path::PathBuf;

/// What a `bonnie ...` / `bonnie++ ...` command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BonnieInvocation {
    /// The run the flags describe, as `iomatrix run bonnie` would make it.
    pub plan: BonniePlan,
    /// `-d DIR`: the folder under which the working folder is made.
    pub dir: PathBuf,
    /// `-m NAME`: the machine's name in the report (bonnie++ defaults to the host name).
    pub machine: Option<String>,
    /// `-f`: skip the per-char tests (also `plan.skip_per_char`).
    pub fast: bool,
    /// `-q`: print only the report.
    pub quiet: bool,
    /// `-h`: print help and run nothing.
    pub help: bool,
    /// `-c N`: N copies of the tests at once, as N clients each in its own
    /// folder, started together before every test (default 1).
    pub concurrency: usize,
    /// `-u USER[:GROUP]`: the user (a name or a number) to do the I/O as.
    pub user: Option<String>,
    /// `-g GROUP` or the GROUP of `-u USER:GROUP`: the group, a name or a number.
    pub group: Option<String>,
    /// `--per-char bonnie++|bonnie`; None leaves the choice to the caller
    /// (bonnie++'s on a local folder).
    pub per_char: Option<PerChar>,
    /// `-v N` as typed (seed 002's `Bonnie -d [path] -s 1024 -v 3`): neither Tim Bray's Bonnie
    /// nor bonnie++ 2.00a has it, so it is accepted and changes nothing; the caller says so.
    pub v: Option<String>,
    /// iomatrix's own `--label`, `--db`, `--json`, `--verify` (stamped blocks, rewrite and
    /// block read checked) and `--compressible`.
    pub own: OwnFlags,
}

/// The flags this front end understands, for `-h` and error messages.
pub const HELP: &str = "\
iomatrix bonnie: runs bonnie++'s tests with bonnie++'s command line.

  -d DIR          folder to test in (required): a folder on the file system under test, or a
                  server through iomatrix's own client: nfs://host/export[/path],
                  smb://[user@]host/share[/path] (no mount, no client cache; -D refused there,
                  -r states the server's RAM)
  -s SIZE[:CHUNK] test file size (required; bare numbers are MiB, k/m/g/t suffixes too;
                  at least twice the RAM) and chunk for the block tests (bare numbers are
                  bytes; default 8k). -s 0 skips the data tests
  -n N[:MAX[:MIN]] file tests with N*1024 files (default 16), each with a random size
                  between MIN and MAX bytes (k/m/g suffixes; default 0:0, empty files).
                  -n 0 skips the file tests
  -x N            run the whole set N times
  -c N            N copies of the tests at once: N clients, each in its own folder,
                  every test started together (under mpirun each rank is one client)
  -r RAM          the RAM to assume for the twice-the-RAM rule (bare numbers are MiB;
                  -r 0 turns the rule off, as in bonnie++)
  -m NAME         machine name for the report's Machine column and the CSV line, kept with
                  the run as label machine=NAME (default: the host name)
  -v N            accepted and ignored: seed 002 types it (Bonnie -d [path] -s 1024 -v 3), but
                  neither Tim Bray's Bonnie (-d -s -m -html) nor bonnie++ 2.00a has a -v, so
                  there is no meaning to follow; iomatrix says so on standard error
  -f              fast: skip the per-char (putc/getc) tests
  -fN             per-char tests over the first N MiB of the file (bonnie++'s; default 3)
  -b              no write buffering: fsync after each seek-test write, and after each
                  file created or deleted (and its folder). Without -b too, as bonnie++
                  2.00a does, the data file is fsynced before every close, inside the timing
  -D              O_DIRECT for the block write, rewrite, block read and seek tests
  -z SEED         seed for seek offsets, file names, file sizes and random orders
  -u USER[:GROUP] do the I/O as USER (a name or a uid), as bonnie++ -u: as root, iomatrix
                  switches to USER (and its group, or GROUP) before it makes any file;
                  the results database is opened before the switch (see docs/bonnie.md).
                  -u root, or your own user, changes nothing. Unlike bonnie++, iomatrix
                  does not insist on -u when run as root
  -g GROUP        do the I/O as GROUP (a name or a gid)
  -q              quiet: bonnie++'s CSV line alone on standard output (with -x N, its
                  heading and one line per run); the tables go to standard error
  -h              this help
  --allow-cache   run even if the file is smaller than twice the RAM (the page cache
                  may then serve the reads)
  --verify        putc and block write write 4k blocks stamped with the run, file, offset
                  and write; rewrite checks each block and writes it back stamped as the
                  next write (instead of the one-byte change); block read checks every
                  block. getc and the seek test are not checked. Mismatches counted per
                  test, exit 4. The chunk must be 4k or a multiple. Stamping and checking
                  are inside the timed loops (verify_ns in each test's cell)
  --compressible PCT  PCT % of each written 4k block is zeros, the rest unique random data
                  [default: incompressible]
  --label KEY=VALUE  label the run (repeatable), for sweep and compare
  --db PATH       the results database (as iomatrix --db)
  --json          print the stored run as JSON (schema iomatrix.run/1) instead of tables
  --per-char STYLE  bonnie++ (the default here: bonnie++ 2.00a's per-char tests, one
                  write(2)/read(2) system call per byte over the first 3 MiB, fsync
                  before close) or bonnie (the original Bonnie's putc/getc through a
                  stdio-like buffer, over the whole file). On an nfs:// or smb:// target
                  the default is bonnie: without a client cache, one request per byte
                  would measure network round trips

Without -q the tables are followed by bonnie++'s CSV line, as bonnie++ prints them.

The tests, in order: putc (per-char writes), block write,
rewrite (read, dirty one byte, write back), getc, block read, random seeks (3 seeker
threads, 8192 seeks, one in ten written back), then sequential and random
create/stat/delete of the files.
Results go to the results database like every iomatrix run (--db and IOMATRIX_DB choose it).
";

const FRONT_END: FrontEnd = FrontEnd { tool: "bonnie", label_example: "disk=rdm" };

/// Parses bonnie/bonnie++ arguments (without the program name).
pub fn parse(args: &[String]) -> Result<BonnieInvocation, UsageError> {
    let mut p = Parsed::default();
    // Whole words: iomatrix's long flags, and bonnie++'s `-fSIZE` (refused with its reason).
    let is_word = |a: &str| {
        a.starts_with("--") || a.strip_prefix("-f").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    let mut flags = short_flags("bonnie", args, takes_value, is_word)?.into_iter();
    while let Some(flag) = flags.next() {
        match flag {
            ShortFlag::Word(w) if w == "--allow-cache" => p.allow_cache = true,
            ShortFlag::Word(w) if w == "--per-char" => match flags.next() {
                Some(ShortFlag::Operand(value)) => p.per_char = Some(value.parse()?),
                _ => {
                    return Err(UsageError::new("bonnie: --per-char needs bonnie++ or bonnie, e.g. --per-char bonnie"))
                }
            },
            ShortFlag::Word(w) if w.starts_with("--per-char=") => p.per_char = Some(w["--per-char=".len()..].parse()?),
            ShortFlag::Word(w) if p.own.take(FRONT_END, &w, &mut flags)? => {}
            ShortFlag::Word(w) if w.starts_with("-f") => {
                // bonnie++'s -fN: the per-char tests over N MiB (-f0 skips them, as -f does).
                let n: u64 = w[2..].parse().map_err(|_| {
                    UsageError::new(format!("bonnie: {w}: the per-char size after -f is a number of MiB, e.g. -f3"))
                })?;
                p.per_char_mib = Some(n);
            }
            ShortFlag::Word(w) => return Err(unknown(&w)),
            ShortFlag::Operand(a) => return Err(unexpected_operand("bonnie", &a)),
            ShortFlag::Switch(c) => p.set_switch(c)?,
            ShortFlag::Value(c, v) => p.set_value(c, &v)?,
        }
    }
    p.into_invocation()
}

fn takes_value(flag: char) -> bool {
    matches!(flag, 'd' | 's' | 'n' | 'x' | 'r' | 'm' | 'u' | 'g' | 'z' | 'p' | 'y' | 'c' | 'Z' | 'l' | 'v')
}

fn unknown(flag: &str) -> UsageError {
    UsageError::new(format!(
        "bonnie: flag '{flag}' is not supported by iomatrix's Bonnie front end; see iomatrix bonnie -h for the flags it takes"
    ))
}

#[derive(Default)]
struct Parsed {
    dir: Option<PathBuf>,
    size: Option<ByteSize>,
    chunk: Option<ByteSize>,
    files: Option<(u64, ByteSize, ByteSize)>,
    repeats: Option<u32>,
    ram: Option<ByteSize>,
    machine: Option<String>,
    seed: Option<u64>,
    fast: bool,
    sync: bool,
    direct: bool,
    quiet: bool,
    help: bool,
    allow_cache: bool,
    concurrency: Option<usize>,
    user: Option<String>,
    group: Option<String>,
    per_char: Option<PerChar>,
    per_char_mib: Option<u64>,
    v: Option<String>,
    own: OwnFlags,
}

fn size_value(flag: char, value: &str, bare_unit: u64) -> Result<ByteSize, UsageError> {
    ByteSize::parse_with_default_unit(value, bare_unit)
        .map_err(|e| UsageError::new(format!("bonnie: -{flag} {value}: {e}")))
}

impl Parsed {
    /// `-g GROUP`, or the GROUP of `-u USER:GROUP`: once, as bonnie++ insists.
    fn set_group(&mut self, group: &str, flag: &str) -> Result<(), UsageError> {
        if self.group.is_some() {
            return Err(UsageError::new(format!(
                "bonnie: {flag}: the group is given twice (-g and -u USER:GROUP); give it once"
            )));
        }
        if group.is_empty() {
            return Err(UsageError::new(format!("bonnie: {flag}: name the group (or gid), e.g. -g nogroup")));
        }
        self.group = Some(group.to_string());
        Ok(())
    }

    fn set_switch(&mut self, flag: char) -> Result<(), UsageError> {
        match flag {
            'f' => self.fast = true,
            'b' => self.sync = true,
            'D' => self.direct = true,
            'q' => self.quiet = true,
            'h' => self.help = true,
            other => return Err(unknown(&format!("-{other}"))),
        }
        Ok(())
    }

    fn set_value(&mut self, flag: char, value: &str) -> Result<(), UsageError> {
        match flag {
            'd' => {
                if value.is_empty() {
                    return Err(UsageError::new("bonnie: -d needs a folder, e.g. -d /mnt/test"));
                }
                self.dir = Some(PathBuf::from(value));
            }
            's' => {
                let (size, chunk) = match value.split_once(':') {
                    Some((size, chunk)) => (size, Some(chunk)),
                    None => (value, None),
                };
                self.size = Some(size_value('s', size, MIB)?);
                if let Some(chunk) = chunk {
                    // bonnie++: "-s size(MiB)[:chunk-size(b)]".
                    self.chunk = Some(size_value('s', chunk, 1).map_err(|e| {
                        UsageError::new(format!("{e} (the chunk after ':' is in bytes, or with a unit: -s 1024:8k)"))
                    })?);
                }
            }
            'n' => self.files = Some(parse_files(value)?),
            'x' => {
                let n: u32 = value.parse().map_err(|_| {
                    UsageError::new(format!("bonnie: -x {value}: not a number of runs; write e.g. -x 3"))
                })?;
                self.repeats = Some(n);
            }
            'r' => self.ram = Some(size_value('r', value, MIB)?),
            'm' => self.machine = Some(value.to_string()),
            'v' => self.v = Some(value.to_string()),
            'z' => {
                let seed: u64 = value.parse().map_err(|_| {
                    UsageError::new(format!("bonnie: -z {value}: the seed is a whole number, e.g. -z 42"))
                })?;
                self.seed = Some(seed);
            }
            'u' => {
                if self.user.is_some() {
                    return Err(UsageError::new(format!("bonnie: -u {value}: -u is given twice; give it once")));
                }
                let (user, group) = match value.split_once(':') {
                    Some((user, group)) => (user, Some(group)),
                    None => (value, None),
                };
                if user.is_empty() {
                    return Err(UsageError::new(format!(
                        "bonnie: -u {value}: name the user (or uid) to run as, e.g. -u nobody or -u 65534:65534"
                    )));
                }
                self.user = Some(user.to_string());
                if let Some(group) = group {
                    self.set_group(group, &format!("-u {value}"))?;
                }
            }
            'g' => self.set_group(value, &format!("-g {value}"))?,
            'p' | 'y' => {
                return Err(UsageError::new(format!(
                    "bonnie: -{flag} {value}: synchronising several bonnie++ processes with a semaphore is not \
                     needed: use -c N for N clients started together on this host, or mpirun for clients on \
                     many hosts"
                )))
            }
            'c' => {
                let n: usize = value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    UsageError::new(format!("bonnie: -c {value}: not a number of copies; write e.g. -c 4"))
                })?;
                self.concurrency = Some(n);
            }
            'Z' => {
                return Err(UsageError::new(format!(
                    "bonnie: -Z {value}: random numbers from a file are not supported; give a seed with -z SEED"
                )))
            }
            other => return Err(unknown(&format!("-{other}"))),
        }
        Ok(())
    }

    fn into_invocation(self) -> Result<BonnieInvocation, UsageError> {
        let help = self.help;
        let dir = match self.dir {
            Some(dir) => dir,
            None if help => PathBuf::new(),
            None => {
                return Err(UsageError::new(
                    "bonnie: -d DIR is required: name the folder to test in, on the file system under test \
                     (e.g. -d /mnt/test)",
                ))
            }
        };
        let size = match self.size {
            Some(size) => size,
            None if help => ByteSize(0),
            None => {
                return Err(UsageError::new(
                    "bonnie: -s SIZE is required: give the test file's size, at least twice the RAM, in MiB \
                     (-s 1024) or with a unit (-s 47g); bonnie++ would pick twice the RAM itself, iomatrix asks \
                     so that the size is on record (-s 0 runs only the file tests)",
                ))
            }
        };
        let plan_fast = self.fast || self.per_char_mib == Some(0);
        let mut plan = BonniePlan::new(size);
        if let Some(chunk) = self.chunk {
            plan.chunk = chunk;
        }
        if let Some((files, max, min)) = self.files {
            plan.files = files;
            plan.file_max = max;
            plan.file_min = min;
        }
        if let Some(n) = self.repeats {
            plan.repeats = n;
        }
        if let Some(seed) = self.seed {
            plan.seed = seed;
        }
        plan.ram = self.ram;
        plan.allow_cache = self.allow_cache;
        plan.skip_per_char = self.fast || self.per_char_mib == Some(0);
        plan.per_char_size = self.per_char_mib.map(|n| ByteSize(n.saturating_mul(MIB)));
        plan.sync = self.sync;
        // bonnie++ 2.00a closes every data file with fsync, inside the timing, and seeks with 5 threads.
        plan.fsync_close = true;
        plan.seekers = crate::plan::BONNIE_PLUS_SEEKERS;
        plan.direct = self.direct;
        Ok(BonnieInvocation {
            plan,
            dir,
            machine: self.machine,
            fast: plan_fast,
            quiet: self.quiet,
            help,
            concurrency: self.concurrency.unwrap_or(1),
            user: self.user,
            group: self.group,
            per_char: self.per_char,
            v: self.v,
            own: self.own,
        })
    }
}

/// `-n N[:MAX[:MIN[:DIRS[:CHUNK]]]]`: N in units of 1024 files; MAX and MIN
/// in bytes (k, m, g suffixes).
fn parse_files(value: &str) -> Result<(u64, ByteSize, ByteSize), UsageError> {
    let fields: Vec<&str> = value.split(':').collect();
    let count = fields.first().copied().unwrap_or("");
    let n: u64 = count.parse().map_err(|_| {
        UsageError::new(format!(
            "bonnie: -n {value}: '{count}' is not a number of files; -n counts in units of 1024 files, \
             e.g. -n 16 for 16384 files, or -n 0 to skip the file tests"
        ))
    })?;
    let files = n
        .checked_mul(FILES_UNIT)
        .ok_or_else(|| UsageError::new(format!("bonnie: -n {value}: {count} * 1024 files is too many")))?;
    let bound = |field: &str, which: &str| -> Result<ByteSize, UsageError> {
        if field.starts_with('-') {
            return Err(UsageError::new(format!(
                "bonnie: -n {value}: bonnie++'s hard-link (-1) and symlink (-2) tests are not supported; \
                 give the {which} file size in bytes (k, m, g suffixes), or leave it out for empty files"
            )));
        }
        ByteSize::parse_with_default_unit(field, 1)
            .map_err(|e| UsageError::new(format!("bonnie: -n {value}: {which} file size {e}")))
    };
    let max = match fields.get(1) {
        Some(f) => bound(f, "largest")?,
        None => ByteSize(0),
    };
    let min = match fields.get(2) {
        Some(f) => bound(f, "smallest")?,
        None => ByteSize(0),
    };
    if let Some(dirs) = fields.get(3) {
        if *dirs != "1" {
            return Err(UsageError::new(format!(
                "bonnie: -n {value}: spreading the files over {dirs} folders is not supported; iomatrix creates \
                 them all in one folder (leave out the fourth field, or give 1)"
            )));
        }
    }
    if fields.len() > 4 {
        return Err(UsageError::new(format!(
            "bonnie: -n {value}: a file chunk size (the fifth field) is not supported; file data is written and \
             read in 8k pieces"
        )));
    }
    if min > max {
        return Err(UsageError::new(format!(
            "bonnie: -n {value}: the smallest file size {min} is larger than the largest {max}; write -n N:MAX:MIN"
        )));
    }
    Ok((files, max, min))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::{GIB, KIB};

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    fn err(line: &str) -> String {
        parse(&args(line)).unwrap_err().to_string()
    }

    #[test]
    fn seed_002_line_parses() {
        // Seed 002 measured a VMware file system with `bonnie -d PATH -s 1024`.
        let inv = parse(&args("-d /vmfs/volumes/ds1 -s 1024")).unwrap();
        assert_eq!(inv.dir, PathBuf::from("/vmfs/volumes/ds1"));
        let p = &inv.plan;
        assert_eq!(p.size, ByteSize(1024 * MIB));
        assert_eq!(p.chunk, ByteSize(8 * KIB));
        assert_eq!((p.seekers, p.seeks), (5, 8192), "bonnie++ 2.00a's seek test");
        assert_eq!(p.files, 16 * 1024, "bonnie++'s default -n 16");
        assert_eq!(p.repeats, 1);
        assert!(!p.skip_per_char && !p.direct && !p.sync && !p.allow_cache && p.ram.is_none());
        assert!(!inv.help && !inv.quiet && inv.machine.is_none());
        // 1 GiB passes the RAM rule on a machine with 512 MiB of RAM, not with 23.5 GiB.
        p.validate(512 * MIB).unwrap();
        assert!(p.validate(47 * GIB / 2).unwrap_err().to_string().contains("use -s 47g or more"));
        // As the slides type it: -v 3, accepted; -m and iomatrix's own long flags beside them.
        let inv =
            parse(&args("-d /mnt/nss -s 1024 -v 3 -m VMFS-iSCSI --label disk=vmfs --db=/tmp/r.sqlite --json")).unwrap();
        assert_eq!(inv.v.as_deref(), Some("3"));
        assert_eq!(inv.machine.as_deref(), Some("VMFS-iSCSI"));
        assert_eq!(inv.own.labels, ["disk=vmfs"]);
        assert_eq!(inv.own.db, Some(PathBuf::from("/tmp/r.sqlite")));
        assert!(inv.own.json);
        assert!(err("-d x -s 1 --db").contains("--db needs a value"));
    }

    #[test]
    fn size_with_chunk_and_units() {
        let p = parse(&args("-d x -s 100:4k")).unwrap().plan;
        assert_eq!((p.size, p.chunk), (ByteSize(100 * MIB), ByteSize(4 * KIB)));
        let p = parse(&args("-d x -s 2g:4096")).unwrap().plan;
        assert_eq!((p.size, p.chunk), (ByteSize(2 * GIB), ByteSize(4096)));
        let p = parse(&args("-dx -s512m")).unwrap();
        assert_eq!((p.dir, p.plan.size), (PathBuf::from("x"), ByteSize(512 * MIB)));
        assert_eq!(parse(&args("-d x -s 0 -n 1")).unwrap().plan.size, ByteSize(0));
    }

    #[test]
    fn files_with_bounds() {
        let p = parse(&args("-d x -s 1 -n 1:64k:1k")).unwrap().plan;
        assert_eq!((p.files, p.file_max, p.file_min), (1024, ByteSize(64 * KIB), ByteSize(KIB)));
        let p = parse(&args("-d x -s 1 -n 2:4096")).unwrap().plan;
        assert_eq!((p.files, p.file_max, p.file_min), (2048, ByteSize(4096), ByteSize(0)));
        let p = parse(&args("-d x -s 1 -n 0")).unwrap().plan;
        assert_eq!(p.files, 0);
        assert_eq!(parse(&args("-d x -s 1 -n 3:0:0:1")).unwrap().plan.files, 3072);
        assert!(err("-d x -s 1 -n 1:-1").contains("hard-link"));
        assert!(err("-d x -s 1 -n 1:1k:0:4").contains("over 4 folders"));
        assert!(err("-d x -s 1 -n 1:1k:0:1:4k").contains("fifth field"));
        assert!(err("-d x -s 1 -n 1:1k:2k").contains("smallest file size 2k is larger than the largest 1k"));
        assert!(err("-d x -s 1 -n many").contains("'many' is not a number of files"));
    }

    #[test]
    fn switches_repeats_ram_and_names() {
        let inv = parse(&args("-d x -s 1 -x 2 -r 512 -m vmhost -fqbD -z 42 --allow-cache")).unwrap();
        let p = &inv.plan;
        assert_eq!(p.repeats, 2);
        assert_eq!(p.ram, Some(ByteSize(512 * MIB)));
        assert_eq!(inv.machine.as_deref(), Some("vmhost"));
        assert!(inv.fast && p.skip_per_char && inv.quiet && p.sync && p.direct && p.allow_cache);
        assert_eq!(p.seed, 42);
        let inv = parse(&args("-d x -s 1 --verify --compressible 30")).unwrap();
        assert_eq!((inv.own.verify, inv.own.compressible), (true, Some(30)));
        assert!(err("-d x -s 1 --compressible 200").contains("from 0 (incompressible) to 100"));
        assert!(err("-d x -s 1 --compressible").contains("needs a percentage"));
        assert_eq!(parse(&args("-d x -s 1 -r 2g")).unwrap().plan.ram, Some(ByteSize(2 * GIB)));
        assert!(parse(&args("-h")).unwrap().help);
        // -x 0 parses, and the plan says why it cannot run.
        let p = parse(&args("-d x -s 1 -x 0")).unwrap().plan;
        assert!(p.validate(0).unwrap_err().to_string().contains("-x 0"));
        let p = parse(&args("-d x -s 1 -x 4000000000")).unwrap().plan;
        assert!(p.validate(0).unwrap_err().to_string().contains("at most 1000"));
    }

    #[test]
    fn users_groups_per_char_style_and_size() {
        // What everyone's scripts say as root.
        let inv = parse(&args("-d /mnt/t -s 512 -r 256 -u root -q")).unwrap();
        assert_eq!((inv.user.as_deref(), inv.group.as_deref()), (Some("root"), None));
        assert!(inv.quiet && inv.per_char.is_none());
        assert!(inv.plan.fsync_close, "bonnie++ 2.00a fsyncs before every close");
        let inv = parse(&args("-d x -s 1 -u 65534:65534")).unwrap();
        assert_eq!((inv.user.as_deref(), inv.group.as_deref()), (Some("65534"), Some("65534")));
        let inv = parse(&args("-d x -s 1 -g nogroup")).unwrap();
        assert_eq!((inv.user, inv.group.as_deref()), (None, Some("nogroup")));
        let inv = parse(&args("-d x -s 1 --per-char bonnie")).unwrap();
        assert_eq!(inv.per_char, Some(PerChar::Bonnie));
        let inv = parse(&args("-d x -s 1 --per-char=bonnie++")).unwrap();
        assert_eq!(inv.per_char, Some(PerChar::BonniePlus));
        // bonnie++'s -fN: N MiB per-char; -f0 skips them as -f does.
        let inv = parse(&args("-d x -s 64 -f5")).unwrap();
        assert_eq!(inv.plan.per_char_size, Some(ByteSize(5 * MIB)));
        assert!(!inv.fast && !inv.plan.skip_per_char);
        let inv = parse(&args("-d x -s 64 -f0")).unwrap();
        assert!(inv.fast && inv.plan.skip_per_char);
        assert_eq!(inv.plan.tests().len(), 4 + 6);
    }

    #[test]
    fn bad_flags_are_named() {
        assert!(err("-d x -s 1 -Q").contains("'-Q'"));
        assert!(err("-d x -s 1 -qQ").contains("'-Q'"));
        assert!(err("-d x -s 1 --fast").contains("'--fast'"));
        assert!(err("-d x -s 1 extra").contains("'extra'"));
        assert!(err("-s 1").contains("-d DIR is required"));
        assert!(err("-d x").contains("-s SIZE is required"));
        assert!(err("-d x -s").contains("-s needs a value"));
        assert!(err("-d x -s 64q").contains("-s 64q") && err("-d x -s 64q").contains("not a size"));
        assert!(err("-d x -s 1:4q").contains("chunk after ':' is in bytes"));
        assert!(err("-d x -s 1 -u root -u nobody").contains("-u is given twice"));
        assert!(err("-d x -s 1 -u nobody:users -g wheel").contains("group is given twice"));
        assert!(err("-d x -s 1 -u :wheel").contains("name the user"));
        assert!(err("-d x -s 1 -u nobody:").contains("name the group"));
        assert!(err("-d x -s 1 --per-char fast").contains("choose bonnie++"));
        assert!(err("-d x -s 1 --per-char").contains("--per-char needs"));
        assert!(err("-d x -s 1 -p 3").contains("semaphore"));
        assert!(err("-d x -s 1 -c 0").contains("-c 0"));
        assert!(err("-d x -s 1 -c many").contains("-c many"));
        assert_eq!(parse(&args("-d x -s 1 -c 4")).unwrap().concurrency, 4);
        assert_eq!(parse(&args("-d x -s 1")).unwrap().concurrency, 1);
        assert!(err("-d x -s 1 -f3x").contains("-f3x"));
        assert!(err("-d x -s 1 -x two").contains("-x two"));
        assert!(err("-d x -s 1 -z x").contains("-z x"));
    }
}
