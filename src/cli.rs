//! The command line, as clap derive types. Raw arguments only: each
//! subcommand turns them into a validated plan before anything runs.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "iomatrix",
    version,
    about = "Benchmark file systems and file servers; keep every run; compare them.",
    long_about = "Benchmark file systems and file servers; keep every run; compare them.\n\n\
        Finished so far: the IOzone suite (`run iozone`, and `iozone` with IOzone's own flags), access \
        specs with io_uring (`run access`), Bonnie (`run bonnie`, `bonnie`), the file-server load (`run \
        fileserver`), the backup walk (`run backup`), `extents` and `scan`, on local paths, mounted shares \
        and raw devices, with many clients for every suite (`--clients N` threads, or MPI \
        ranks under mpirun in a build with `--features mpi`) \
        the results database (`runs`, `show`, `import` of fio, IOzone and bonnie++ results), `compare` \
        and `sweep` (ratio matrices, % change, caching limits), `report` (HTML, XLSX, CSV, Markdown, JSON) and `--repeat`/`--tolerance` for iozone. Not yet built: \
        built-in NFS/SMB clients and `--verify`.",
    after_help = "Exit codes: 0 done, 1 the run failed, 2 bad input, 3 every cell ran but some clients failed \
        some (--on-client-error continue), 4 every cell ran but --verify found blocks that were not what was \
        written, 130 interrupted."
)]
pub struct Cli {
    /// Results database [default: $XDG_DATA_HOME/iomatrix/results.sqlite, or ~/.local/share/...]
    #[arg(long, global = true, env = "IOMATRIX_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

// Built once per process: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum Command {
    /// Run a suite against a target and store the results
    Run {
        #[command(subcommand)]
        suite: Suite,
    },
    /// Run the IOzone suite with IOzone's own command line (`iomatrix iozone -h` lists the flags)
    #[command(disable_help_flag = true)]
    Iozone {
        /// IOzone's flags, e.g. -Rab out.xlsx -s 512m -r 64k -e -c -i 0 -i 2
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "IOZONE FLAGS")]
        args: Vec<String>,
    },
    /// Run the Bonnie suite with bonnie++'s own command line (`iomatrix bonnie -h` lists the flags)
    #[command(disable_help_flag = true)]
    Bonnie {
        /// bonnie++'s flags, e.g. -d /mnt/x -s 1024
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "BONNIE FLAGS")]
        args: Vec<String>,
    },
    /// List the stored runs
    Runs {
        /// Machine-readable output (schema: docs/json.md, "iomatrix.runs/1")
        #[arg(long)]
        json: bool,
    },
    /// Count the extents of every file in a tree through FIEMAP, as filefrag counts them
    /// (no data read, nothing stored)
    Extents(ExtentsArgs),
    /// Inventory a tree by file size: files and bytes per power-of-two class, shares at chosen
    /// sizes, percentiles, largest files (read only, nothing stored); --save-profile keeps the
    /// classes for `run fileserver --profile`
    Scan(ScanArgs),
    /// Compare B against A: ratio matrices with record-size and file-size views, % change
    /// tables, latency side by side, cells only one side has, differing conditions stated
    Compare(CompareArgs),
    /// Values per level of a swept setting (a label, or record/file size, queue depth) and the %
    /// change between levels; read/write ratios
    Sweep(SweepArgs),
    /// Read results of other tools into the database as runs: fio's JSON output, IOzone's -R
    /// report, bonnie++'s CSV line (compare them with native runs afterwards)
    Import(ImportArgs),
    /// Write a report of stored runs: .html (one self-contained file with SVG charts), .xlsx (a
    /// sheet per test with native charts), .csv, .md or .json, chosen by the extension of -o
    Report(ReportArgs),
    /// Remove the working folders crashed runs left in TARGET: only folders directly under it
    /// that carry iomatrix's marker and whose process is gone; symlinks are not followed and no
    /// other file system is entered
    Clean(CleanArgs),
    /// Print one stored run again
    Show {
        /// The run's id (see `iomatrix runs`)
        run: i64,
        /// Machine-readable output (schema: docs/json.md, "iomatrix.run/1")
        #[arg(long)]
        json: bool,
    },
}

#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum Suite {
    /// IOzone's matrix: file size x record size x tests
    Iozone(RunIozoneArgs),
    /// Iometer/fio-style access specs with outstanding I/O; lists in any parameter sweep
    ///
    /// On a server (--target nfs://host[:port]/export[/path] or smb://[user@]host[:port]/share[/path])
    /// the requests go through iomatrix's own protocol client: no mount, no client cache. Each client
    /// connects its own session and works in client-N/ of the run's folder there (its file laid out
    /// first, untimed). SMB keeps up to --qd requests in flight at once on the client's one session;
    /// NFS (one request per connection in its client library) opens --qd connections per client, one
    /// request in flight on each. The run's conditions say which. On a server --qd goes up to 64;
    /// --direct and --backend are refused (there is no client cache to bypass, and the protocol
    /// client issues the requests); --device does not combine with --target; --align sets the
    /// offsets' granularity as it does on local files.
    Access(RunAccessArgs),
    /// Bonnie's tests: per-char and block I/O, rewrite, random seeks, file create/stat/delete
    ///
    /// --target may be a server: nfs://host[:port]/export[/path] or
    /// smb://[user@]host[:port]/share[/path] run every test through iomatrix's own NFSv3/SMB2/3
    /// client (no mount, no client cache): each client and each seeker has its own session;
    /// putc/getc buffer one negotiated request (at most 1 MiB); --sync is NFS COMMIT / SMB FLUSH;
    /// the file tests use the protocol's exclusive create, stat and folder listing. There the
    /// twice-the-RAM rule applies only to a RAM stated with --ram (the server's); --direct is
    /// refused (no client cache to bypass). The same goes for `iomatrix bonnie -d URL`.
    Bonnie(RunBonnieArgs),
    /// Backup walk: every file of a tree read start to end in walk order, as a backup agent does
    /// (read only: nothing is written to the tree)
    Backup(RunBackupArgs),
    /// File-server load (seed 003): many connections at once, each writing then reading its own
    /// files, every operation (create, open, write, read, fsync, close) timed on its own. On an
    /// nfs:// or smb:// target each connection is a session of iomatrix's own protocol client
    /// (its own TCP connection, no client cache); --drop-caches is refused there
    Fileserver(RunFileserverArgs),
}

#[derive(Args, Debug)]
pub struct RunFileserverArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,

    /// Connections (threads), each in its own folder with its own files, started together; on
    /// an nfs:// or smb:// target each also has its own session (TCP connection) to the server,
    /// connected before the write phase (untimed)
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub connections: usize,

    /// Files each connection writes and then reads
    #[arg(long, default_value_t = 100, value_name = "M")]
    pub files_per_connection: u64,

    /// File sizes, cycled through: file i of a connection gets the (i mod count)-th size
    /// [default: 4k,8k,16k,32k,64k,128k,256k,512k,1m,2m]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true, conflicts_with = "profile")]
    pub sizes: Option<String>,

    /// Draw file sizes from a size profile (`iomatrix scan PATH --save-profile FILE`) instead of --sizes
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,

    /// Files are written and read in requests of this size
    #[arg(long, default_value = "4k", value_name = "SIZE", allow_hyphen_values = true)]
    pub record: String,

    /// After the write phase, read every file back (the default)
    #[arg(long, conflicts_with = "mix")]
    pub write_then_read: bool,

    /// After the write phase, visit each file once in random order and read it whole
    /// (READ_PCT% of the visits) or rewrite it
    #[arg(long, value_name = "READ_PCT", allow_hyphen_values = true)]
    pub mix: Option<String>,

    /// fsync after every N records of a file and after its last record (timed as "fsync")
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub fsync_every: Option<String>,

    /// Each connection writes N files at once, one record to each in turn (many files growing
    /// at once in small appends: the case delayed allocation exists for)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub interleave: Option<String>,

    /// Root only: sync and drop the page cache between the write and the read phase, so reads
    /// come from the storage. Refused on nfs:// and smb:// targets: the protocol client keeps no
    /// cache, and the server's cannot be dropped from here
    #[arg(long)]
    pub drop_caches: bool,

    /// Seed of the file-size draws (--profile) and the mixed phase's order
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub seed: u64,

    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Args, Debug)]
pub struct RunBackupArgs {
    /// The tree to walk and read (read only: no working folder, nothing written there). With
    /// --clients N > 1 (or N MPI ranks), client r walks DIR/client-r instead, the layout a kept
    /// many-client run leaves; each must exist. Hooks run in the current folder. DIR may be
    /// nfs://host[:port]/export/path or smb://[user@]host[:port]/share/path: read through
    /// iomatrix's own protocol client, one session per client, no client cache (not cold:
    /// the server's cache is out of reach), no FIEMAP, hard links read once per name, symlinks
    /// as the server shows them; --warm is refused there
    #[arg(long, value_name = "DIR")]
    pub target: PathBuf,

    /// Bytes per read call
    #[arg(long, default_value = "1m", value_name = "SIZE", allow_hyphen_values = true)]
    pub read_size: String,

    /// Read through the page cache as it is. Default: cold (syncfs first, then each file's
    /// cached pages dropped with POSIX_FADV_DONTNEED before it is read). Local trees only
    #[arg(long)]
    pub warm: bool,

    /// Label the run, e.g. --label server=netware (repeatable)
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Print the stored run as JSON (schema "iomatrix.run/1") instead of tables
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub client: ClientArgs,

    #[command(flatten)]
    pub repeat: RepeatArgs,
}

/// Noise: each cell measured several times, noisy cells measured again.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Noise")]
pub struct RepeatArgs {
    /// Measure each cell N times (all samples stored; reports show the median and spread).
    /// Every suite (`run bonnie` takes it as --repeats; the file-server load repeats its phases
    /// on fresh files)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,

    /// Measure a cell again while a sample lies further than PCT from its median (seed 001:
    /// "results too far out of the bounds (+/- 20%) were re-run"), e.g. 20%. The iozone and
    /// access suites, not under mpirun yet
    #[arg(long, value_name = "PCT")]
    pub tolerance: Option<String>,

    /// With --tolerance: at most this many samples of a cell [default: 2 x --repeat, at least 3]
    #[arg(long, value_name = "N")]
    pub max_repeats: Option<u32>,
}

#[derive(Args, Debug)]
#[command(after_help = "Exit codes: 0 done (also when folders were kept or left: each is listed with the reason), \
    1 a leftover could not be removed (the others were), 2 the target cannot be read.")]
pub struct CleanArgs {
    /// The folder (or nfs:// or smb:// target) given to the runs as --target
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,

    /// List what would be removed and what is kept, remove nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Also remove the folders of finished runs that were made with --keep
    #[arg(long)]
    pub kept: bool,
}

#[derive(Args, Debug)]
pub struct ExtentsArgs {
    /// The tree whose regular files are mapped (symlinks not followed, one file system)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Also list every file with its count, in walk order
    #[arg(long)]
    pub per_file: bool,

    /// Write each file's dirty data out before mapping it (FIEMAP_FLAG_SYNC, filefrag -s)
    #[arg(long)]
    pub sync: bool,

    /// Machine-readable output (schema: docs/json.md, "iomatrix.extents/1")
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct RunIozoneArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,

    /// File sizes: a list and/or power-of-two ranges, e.g. 64k,1m,512m or 64k..512m
    /// [default: 64k..16m, or 64k..512m with --auto]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true)]
    pub files: Option<String>,

    /// Record sizes, as --files [default: 4k..16m; a pair runs only where record <= file]
    #[arg(long, value_name = "SIZES", allow_hyphen_values = true)]
    pub records: Option<String>,

    /// IOzone's auto mode: files 64k..512m, records 4k..16m, records below 64k skipped for files above 32m
    #[arg(long)]
    pub auto: bool,

    /// With --auto: keep records below 64k for files above 32m (IOzone's -z)
    #[arg(long, short = 'z')]
    pub all_records: bool,

    /// Tests, comma-separated: write, rewrite, read, reread, random-read, random-write,
    /// backward-read, record-rewrite, stride-read, fwrite, frewrite, fread, freread, mixed
    /// [default: all but mixed, as IOzone]
    #[arg(long, value_name = "TESTS")]
    pub tests: Option<String>,

    /// Include fsync in the write timing (IOzone's -e)
    #[arg(long)]
    pub fsync: bool,

    /// Include close in the timing (IOzone's -c)
    #[arg(long)]
    pub close: bool,

    /// Bypass the page cache with O_DIRECT (IOzone's -I); fwrite/fread tests stay buffered
    #[arg(long)]
    pub direct: bool,

    /// How I/O is issued: psync (pread/pwrite), sync (read/write + lseek), mmap, stdio
    #[arg(long, default_value = "psync", value_name = "BACKEND")]
    pub backend: String,

    /// Also write the tables as an .xlsx workbook
    #[arg(long, value_name = "FILE")]
    pub xlsx: Option<PathBuf>,

    #[command(flatten)]
    pub data: DataArgs,
}

/// What written data holds (`--verify`, `--compressible`).
#[derive(Args, Debug, Default)]
pub struct DataArgs {
    /// Write 4k blocks stamped with this run, the file, the offset, the write and a
    /// CRC-32, and check every block read back: mismatches are counted per cell as wrong
    /// data, wrong offset, stale (an earlier run or write) or torn, and the run exits 4.
    /// Stamping and checking happen between the requests, inside the timed pass (each
    /// cell stores its cost as verify_ns). Records must be 4k or a multiple. `run iozone`,
    /// `run access` (files only; the file is laid out as generation 1; a read that
    /// overlapped a write in flight is counted unchecked), `run fileserver` (a file's
    /// last partial 4k block is not stamped), `run bonnie` (block write stamps, rewrite
    /// checks and restamps as the next write instead of bonnie++'s one-byte change, block
    /// read checks; putc writes stamped blocks but getc and the seek test are not checked;
    /// the chunk must be 4k or a multiple), `iomatrix iozone --verify` and `iomatrix bonnie --verify`
    #[arg(long)]
    pub verify: bool,

    /// PCT % of each written 4k block is zeros, the rest random and unique per block, so
    /// compressing storage saves about PCT % [default: 0, incompressible]. Records must
    /// be 4k or a multiple. `run iozone`, `run access`, `run fileserver`, `run bonnie`
    /// (putc, block write and rewrite; the seek test writes back what it read, one byte
    /// changed), `iomatrix iozone` and `iomatrix bonnie` (--compressible PCT)
    #[arg(long, value_name = "PCT")]
    pub compressible: Option<u8>,
}

#[derive(Args, Debug)]
pub struct RunAccessArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,

    /// Block sizes, e.g. 2k,4k,8k,32k,64k,128k,256k or 4k..256k
    #[arg(long, default_value = "4k", value_name = "SIZES", allow_hyphen_values = true)]
    pub bs: String,

    /// Percent of requests that read (the rest write), a list: 100,0
    #[arg(long, default_value = "100", value_name = "PCTS", allow_hyphen_values = true)]
    pub read: String,

    /// Percent of requests at random offsets (the rest sequential), a list
    #[arg(long, default_value = "100", value_name = "PCTS", allow_hyphen_values = true)]
    pub random: String,

    /// Outstanding requests per client (queue depth), a list: 16,32,64,128,255
    #[arg(long, default_value = "1", value_name = "DEPTHS", allow_hyphen_values = true)]
    pub qd: String,

    /// Each client's file (its working set), laid out before the first cell [default: 256m;
    /// with --device, the whole device]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub file_size: Option<String>,

    /// Run on this raw block device instead of files in --target: every client reads and
    /// writes it in place (its data is destroyed). Needs --destroy-data-on naming it again
    #[arg(long, value_name = "DEVICE", conflicts_with_all = ["target", "keep"])]
    pub device: Option<PathBuf>,

    /// Confirms that the data on the --device may be destroyed
    #[arg(long, value_name = "DEVICE", requires = "device")]
    pub destroy_data_on: Option<PathBuf>,

    /// How long each cell issues requests [default: 10s unless --bytes]
    #[arg(long, value_name = "TIME", conflicts_with = "bytes", allow_hyphen_values = true)]
    pub duration: Option<String>,

    /// Bytes each client moves per cell, instead of a duration
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub bytes: Option<String>,

    /// Offsets are multiples of this [default: the block size]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub align: Option<String>,

    /// Bypass the page cache with O_DIRECT (local files and devices only)
    #[arg(long)]
    pub direct: bool,

    /// io_uring, psync, sync or mmap [default: io_uring when any --qd is above 1, else psync]
    /// (local files and devices only: on nfs:// and smb:// the protocol client issues the requests)
    #[arg(long, value_name = "BACKEND")]
    pub backend: Option<String>,

    /// At most this many requests per second per client
    #[arg(long, value_name = "IOPS")]
    pub rate: Option<u64>,

    #[command(flatten)]
    pub data: DataArgs,
}

#[derive(Args, Debug)]
pub struct RunBonnieArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,

    /// Test file size; at least twice the RAM unless --ram or --allow-cache
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: String,

    /// Chunk of the block tests [default: 8k]
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub chunk: Option<String>,

    /// File tests with N x 1024 files (0 skips them)
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub files: u64,

    /// File tests with exactly N files instead of --files' N x 1024 (small tests on slow servers)
    #[arg(long, value_name = "N", conflicts_with = "files")]
    pub file_count: Option<u64>,

    /// Run the whole set N times
    #[arg(long, value_name = "N")]
    pub repeats: Option<u32>,

    /// The RAM to assume for the twice-the-RAM rule, e.g. 512m
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub ram: Option<String>,

    /// Run even if the file is smaller than twice the RAM (the page cache may then serve the reads)
    #[arg(long)]
    pub allow_cache: bool,

    /// Skip the per-char (putc/getc) tests
    #[arg(long)]
    pub fast: bool,

    /// O_DIRECT for the block write, rewrite, block read and seek tests
    #[arg(long)]
    pub direct: bool,

    /// fsync before each close and after each seek write-back and file create/delete (bonnie++'s -b)
    #[arg(long)]
    pub sync: bool,

    /// Seeks in the seek test, over all seeker threads [default: 8192, as bonnie++]
    #[arg(long, value_name = "N")]
    pub seeks: Option<u64>,

    /// Seeker threads in the seek test, each with its own descriptor (on a server, its own
    /// session) [default: 3, as bonnie++]
    #[arg(long, value_name = "N")]
    pub seekers: Option<usize>,

    #[command(flatten)]
    pub data: DataArgs,
}

/// Flags every `run` subcommand takes.
#[derive(Args, Debug)]
pub struct CommonRunArgs {
    /// Folder to test in; iomatrix works in a fresh subfolder and removes it at the end
    /// [default: the system's temporary folder]
    #[arg(long, value_name = "DIR")]
    pub target: Option<PathBuf>,

    /// Label the run, e.g. --label server=netware (repeatable)
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// Keep the working folder at the end (IOzone's -w). Access specs keep their files;
    /// the IOzone and Bonnie suites remove each data file when done with it, as IOzone and
    /// bonnie++ do, so their folder keeps what the last cell left. `iomatrix clean TARGET --kept`
    /// removes kept folders later
    #[arg(long)]
    pub keep: bool,

    /// Skip the free-space check (for file systems whose statfs misreports free space)
    #[arg(long)]
    pub no_space_check: bool,

    /// Print the stored run as JSON (schema "iomatrix.run/1") instead of tables
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub client: ClientArgs,

    #[command(flatten)]
    pub repeat: RepeatArgs,
}

/// `iomatrix compare A B`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline: a run id (12 or #12), repeats of one setup (3,4,5: medians), or labels
    /// (server=netware)
    #[arg(value_name = "A")]
    pub a: String,

    /// Compared against A, in the same forms; ratios are B/A
    #[arg(value_name = "B")]
    pub b: String,

    /// Also summarise this region of file sizes, e.g. ..2m, 64k..2m, 1m.. (bounds included)
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub files: Option<String>,

    /// Also summarise this region of record sizes, e.g. ..32k
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub records: Option<String>,

    /// Flag cells faster than this as served by a cache: 100Mbit, 1Gbit, 110MB/s, or a run id
    /// (#N) whose figures (uncached) are each cell's limit
    #[arg(long, value_name = "RATE|RUN")]
    pub limit: Option<String>,

    /// Machine-readable output (schema "iomatrix.compare/1", docs/json.md)
    #[arg(long)]
    pub json: bool,
}

/// `iomatrix report RUNS... -o FILE`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The runs, a group per argument: run ids (12, #12), repeats of one setup (3,4,5: medians)
    /// or labels (server=netware); every later group of the first group's suite is compared with
    /// the first
    #[arg(value_name = "RUNS", required = true)]
    pub runs: Vec<String>,

    /// The report file; its extension chooses the format: .html, .xlsx, .csv, .md, .json
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Flag cells faster than this as served by a cache: 100Mbit, 1Gbit, 110MB/s, or a run id
    /// whose figures are each cell's limit
    #[arg(long, value_name = "RATE|RUN")]
    pub limit: Option<String>,

    /// In the comparisons, also summarise this region of file sizes, e.g. ..2m
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub files: Option<String>,

    /// In the comparisons, also summarise this region of record sizes, e.g. ..32k
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub records: Option<String>,
}

/// `iomatrix sweep RUNS... --by PARAM|LABEL`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The runs (ids, id lists of repeats, or label selectors); with --by LABEL each run's value of
    /// that label is its level
    #[arg(value_name = "RUNS", required = true)]
    pub runs: Vec<String>,

    /// What is swept: record, file, qd (queue depth of access specs), or a label key (e.g. cache)
    #[arg(long, value_name = "PARAM|LABEL")]
    pub by: String,

    /// Machine-readable output (schema "iomatrix.sweep/1", docs/json.md)
    #[arg(long)]
    pub json: bool,
}

/// The client flags every suite takes: how many clients, their hooks, what
/// a failed one does to the run.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Clients")]
pub struct ClientArgs {
    /// Clients on this host (threads), each in its own folder `client-N` of the working folder,
    /// all starting every cell together. Under mpirun each rank is one client: leave this at 1
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub clients: usize,

    /// Shell command each client runs before its first cell (e.g. to log in to the server),
    /// in its folder, with IOMATRIX_RANK, IOMATRIX_CLIENTS and IOMATRIX_CLIENT_DIR set;
    /// a failure fails that client
    #[arg(long, value_name = "CMD")]
    pub before: Option<String>,

    /// Shell command each client runs after its last cell (same environment as --before)
    #[arg(long, value_name = "CMD")]
    pub after: Option<String>,

    /// Shell command each client runs between two cells, untimed, before the next cell
    /// prepares (same environment as --before, plus IOMATRIX_CELL: the next cell's number
    /// from 0); a failure fails that client's next cell
    #[arg(long, value_name = "CMD")]
    pub between_cells: Option<String>,

    /// When a client fails a cell: abort (stop every client, end the run) or continue
    /// (record the failure and its lost samples, keep the others' figures, go on)
    #[arg(long, default_value = "abort", value_name = "WHAT")]
    pub on_client_error: String,

    /// Under mpirun: the longest any rank waits for another (a hung or dead rank ends the run
    /// with a message after this, keeping the finished cells)
    #[arg(long, default_value = "10m", value_name = "TIME", allow_hyphen_values = true)]
    pub client_timeout: String,
}

impl Default for ClientArgs {
    fn default() -> ClientArgs {
        ClientArgs {
            clients: 1,
            before: None,
            after: None,
            between_cells: None,
            on_client_error: "abort".into(),
            client_timeout: "10m".into(),
        }
    }
}

/// `iomatrix scan PATH`.
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// The tree to scan (read only). Symlinks are counted, never followed (a symlinked PATH is
    /// followed itself); a hard-linked file counts once; a file as PATH is scanned alone
    #[arg(value_name = "PATH")]
    pub path: PathBuf,

    /// Report the share of files and of bytes at or below these sizes
    #[arg(long, default_value = "64k,1m,32m", value_name = "SIZES", allow_hyphen_values = true)]
    pub at: String,

    /// List this many of the largest files
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,

    /// Descend into folders on other file systems (default: stay on PATH's, like `du -x`)
    #[arg(long)]
    pub cross_mounts: bool,

    /// Save the size classes as a file-size profile (schema "iomatrix.profile/1") for
    /// `run fileserver --profile FILE`
    #[arg(long, value_name = "FILE")]
    pub save_profile: Option<PathBuf>,

    /// Machine-readable output (schema: docs/json.md, "iomatrix.scan/1")
    #[arg(long)]
    pub json: bool,
}

/// `iomatrix import FILE...`.
#[derive(Args, Debug)]
#[command(after_help = "Each file becomes a run of the matching suite, status complete, labelled \
    imported=fio|iozone|bonnie++: fio jobs -> access cells (block size, size, queue depth, read %, \
    random %, IOPS, MiB/s, clat percentiles), IOzone -R matrices -> iozone cells (KB/s), bonnie++ tests \
    -> bonnie cells (K/sec, /sec, %CPU, latency). Conditions the file does not give (backend, O_DIRECT \
    or cached, RAM, file system) are stored as unknown, never guessed; bonnie++'s +++++ (too fast to \
    time) is listed as unmeasured, not stored as a figure. Every file is read before anything is \
    stored: a malformed file stores nothing (exit 2); each run is stored in one transaction.")]
pub struct ImportArgs {
    /// Files to import (`-` reads standard input); a bonnie++ file with several setups gives one
    /// run per setup, its -x repeats staying together
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// fio, iozone or bonnie [default: recognised from each file's content]
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,

    /// Label the runs, e.g. --label server=netware (repeatable); imported=TOOL is added
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// bonnie++'s chunk size, which bonnie++ 2.00's CSV leaves empty (its default is 8k): the
    /// bonnie cells then carry it as their record size, as native bonnie runs do
    #[arg(long, value_name = "SIZE")]
    pub bonnie_chunk: Option<String>,

    /// Machine-readable summary (schema "iomatrix.import/1", docs/json.md)
    #[arg(long)]
    pub json: bool,
}
