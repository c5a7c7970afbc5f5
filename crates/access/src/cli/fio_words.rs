//! fio's options that `run access` does not take under fio's name, each
//! answered with what iomatrix does instead, so a fio user never meets a bare
//! "unexpected argument". The options that mean the same are aliases of the
//! access flags themselves (args.rs); fio's rw names map in
//! `crate::fio_words`.

use clap::Args;
use iomatrix_core::UsageError;

/// fio's options, accepted by the parser only to be answered (hidden from `--help`).
#[derive(Args, Debug, Default)]
pub struct FioAnswers {
    #[arg(long = "time_based", alias = "time-based", hide = true, num_args = 0..=1, value_name = "X")]
    time_based: Option<Option<String>>,
    #[arg(long = "name", hide = true, num_args = 0..=1, value_name = "X")]
    name: Option<Option<String>>,
    #[arg(long = "filename", hide = true, num_args = 0..=1, value_name = "X")]
    filename: Option<Option<String>>,
    #[arg(long = "directory", hide = true, num_args = 0..=1, value_name = "X")]
    directory: Option<Option<String>>,
    #[arg(long = "group_reporting", alias = "group-reporting", hide = true, num_args = 0..=1, value_name = "X")]
    group_reporting: Option<Option<String>>,
    #[arg(long = "output-format", alias = "output_format", hide = true, num_args = 0..=1, value_name = "X")]
    output_format: Option<Option<String>>,
    #[arg(long = "bsrange", hide = true, num_args = 0..=1, value_name = "X")]
    bsrange: Option<Option<String>>,
    #[arg(long = "norandommap", hide = true, num_args = 0..=1, value_name = "X")]
    norandommap: Option<Option<String>>,
    #[arg(long = "randrepeat", hide = true, num_args = 0..=1, value_name = "X")]
    randrepeat: Option<Option<String>>,
    #[arg(long = "loops", hide = true, num_args = 0..=1, value_name = "X")]
    loops: Option<Option<String>>,
    #[arg(long = "io_size", alias = "io-size", hide = true, num_args = 0..=1, value_name = "X")]
    io_size: Option<Option<String>>,
    #[arg(long = "buffered", hide = true, num_args = 0..=1, value_name = "X")]
    buffered: Option<Option<String>>,
    #[arg(long = "thread", hide = true, num_args = 0..=1, value_name = "X")]
    thread: Option<Option<String>>,
    #[arg(long = "fsync", hide = true, num_args = 0..=1, value_name = "X")]
    fsync: Option<Option<String>>,
    #[arg(long = "end_fsync", alias = "end-fsync", hide = true, num_args = 0..=1, value_name = "X")]
    end_fsync: Option<Option<String>>,
    #[arg(long = "invalidate", hide = true, num_args = 0..=1, value_name = "X")]
    invalidate: Option<Option<String>>,
    #[arg(long = "thinktime", hide = true, num_args = 0..=1, value_name = "X")]
    thinktime: Option<Option<String>>,
    #[arg(long = "startdelay", hide = true, num_args = 0..=1, value_name = "X")]
    startdelay: Option<Option<String>>,
    #[arg(long = "zero_buffers", alias = "zero-buffers", hide = true, num_args = 0..=1, value_name = "X")]
    zero_buffers: Option<Option<String>>,
    #[arg(long = "refill_buffers", alias = "refill-buffers", hide = true, num_args = 0..=1, value_name = "X")]
    refill_buffers: Option<Option<String>>,
    #[arg(long = "buffer_compress_percentage", alias = "buffer-compress-percentage", hide = true, num_args = 0..=1, value_name = "X")]
    buffer_compress_percentage: Option<Option<String>>,
    #[arg(long = "offset", hide = true, num_args = 0..=1, value_name = "X")]
    offset: Option<Option<String>>,
    #[arg(long = "number_ios", alias = "number-ios", hide = true, num_args = 0..=1, value_name = "X")]
    number_ios: Option<Option<String>>,
}

impl FioAnswers {
    /// The first of fio's options given, answered with the iomatrix flag to use; exit 2.
    pub fn refuse(&self) -> Result<(), UsageError> {
        let given = [
            (&self.time_based, "time_based", "every cell already runs for --duration (fio's runtime, 10s by default) unless --bytes sets a byte count; leave --time_based out"),
            (&self.name, "name", "a run is named by its labels: use --label name=VALUE"),
            (&self.filename, "filename", "use --target DIR for a folder (each client works in a file of its own there), or --device DEV --destroy-data-on DEV for a raw block device"),
            (&self.directory, "directory", "use --target DIR"),
            (&self.group_reporting, "group_reporting", "every cell is reported over all its clients together, with a per-client table beside it; leave --group_reporting out"),
            (&self.output_format, "output-format", "use --json for the stored run as JSON; `iomatrix fio` prints fio's own output formats"),
            (&self.bsrange, "bsrange", "one block size per cell: give a list, --bs 4k,16k,64k (or a range 4k..64k), and each size is its own cell"),
            (&self.norandommap, "norandommap", "random offsets are drawn without a random map already (blocks may repeat, as fio's norandommap); leave it out"),
            (&self.randrepeat, "randrepeat", "offsets are drawn from a fixed seed already, the same in every run; leave it out"),
            (&self.loops, "loops", "use --repeat N to measure each cell N times"),
            (&self.io_size, "io_size", "use --bytes SIZE: the bytes each client moves per cell"),
            (&self.buffered, "buffered", "requests go through the page cache unless --direct is given; leave --buffered out (--buffered=0 is --direct)"),
            (&self.thread, "thread", "clients are threads already (--clients N, or MPI ranks under mpirun); leave --thread out"),
            (&self.fsync, "fsync", "run access issues no fsync between requests; fsync timing is measured by run iozone --fsync and run fileserver --fsync-every N"),
            (&self.end_fsync, "end_fsync", "run access issues no fsync; run iozone --fsync times one at the end of each write"),
            (&self.invalidate, "invalidate", "use --prepare dropped (fio's invalidate=1, the default: the file is dropped from the page cache before every cell) or --prepare cached (invalidate=0)"),
            (&self.thinktime, "thinktime", "pace requests with --rate IOPS (per client)"),
            (&self.startdelay, "startdelay", "every client starts each cell together; to wait first, use --before 'sleep N'"),
            (&self.zero_buffers, "zero_buffers", "use --compressible 100 (every written block zeros)"),
            (&self.refill_buffers, "refill_buffers", "use --compressible 0: every written block unique random data (without it one random buffer is reused)"),
            (&self.buffer_compress_percentage, "buffer_compress_percentage", "use --compressible PCT"),
            (&self.offset, "offset", "each client's requests cover its whole file (--file-size) or the first --file-size of a --device; --align sets the offsets' granularity"),
            (&self.number_ios, "number_ios", "use --bytes SIZE (requests x block size per client)"),
        ];
        match given.iter().find(|(value, _, _)| value.is_some()) {
            Some((_, flag, answer)) => Err(UsageError::new(format!("--{flag} is fio's option: in iomatrix {answer}"))),
            None => Ok(()),
        }
    }
}
