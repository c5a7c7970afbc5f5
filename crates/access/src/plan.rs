use iomatrix_core::{BackendKind, ByteSize, UsageError};
use iomatrix_random::Distribution;

/// How long each cell runs, per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Issue requests for this long, then let the ones in flight finish.
    DurationMs(u64),
    /// Issue this many bytes of requests per client.
    Bytes(u64),
}

/// A validated access-spec run. Every list is swept: one cell per combination.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AccessPlan {
    /// Bytes per request.
    pub block_sizes: Vec<ByteSize>,
    /// Percent of requests that read (the rest write), 0..=100.
    pub read_percents: Vec<u8>,
    /// Percent of requests at a random offset (the rest continue sequentially), 0..=100.
    pub random_percents: Vec<u8>,
    /// Outstanding requests per client.
    pub queue_depths: Vec<u32>,
    /// Clients on this host, each a thread with its own file.
    pub clients: usize,
    /// Each client's file (its working set), laid out before the first cell;
    /// with [`device`](Self::device), the first `file_size` bytes of the device.
    pub file_size: ByteSize,
    /// A raw block device that every client reads and writes in place of its
    /// own file (Iometer's workers on one disk). Nothing is laid out: reads
    /// read what the device holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<std::path::PathBuf>,
    /// How long each cell runs: a time, or bytes per client.
    pub limit: Limit,
    /// An untimed warm-up at the start of each cell, in milliseconds (`--ramp`, fio's ramp_time):
    /// requests issued as in the cell, counted in no figure. Always a time, also with
    /// [`Limit::Bytes`]. Runs stored before the option have 0.
    // Written even when 0, so compare sets a warm-up against none rather than against "unknown".
    #[serde(default)]
    pub ramp_ms: u64,
    /// Where random requests go (`--distribution`, fio's random_distribution); uniform by default
    /// and in runs stored before the option.
    #[serde(default)]
    pub distribution: Distribution,
    /// Offsets are multiples of this (default: the block size).
    pub alignment: Option<ByteSize>,
    /// O_DIRECT: bypass the page cache.
    pub direct: bool,
    /// How each client issues its requests.
    pub backend: BackendKind,
    /// Requests per second per client, at most.
    pub rate_iops: Option<u64>,
    /// io_uring: ask for completions without sleeping for up to this many
    /// microseconds before waiting (`--poll-completions`); None: wait at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_completions_us: Option<u64>,
    /// io_uring: hand requests to the kernel once this many are prepared
    /// (`--submit-batch`); None: `iomatrix_backend::default_submit_batch` of
    /// each cell's depth. Runs stored before the option have None and were
    /// submitted as whole batches (their cells' `issued` line says no group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit_batch: Option<u32>,
    /// Seeds random offsets and read/write choices; stored so a run can be repeated.
    pub seed: u64,
    /// Each cell runs this many times in a row (`--repeat`).
    #[serde(default = "one")]
    pub repeats: u32,
    /// Only these settings (re-measuring noisy cells); None: every cell.
    #[serde(default)]
    pub only: Option<Vec<CellSetting>>,
    /// Stamped blocks (`--verify`, `--compressible`) instead of one reused buffer.
    #[serde(default)]
    pub content: iomatrix_verify::ContentSpec,
    /// Each client's file at a cell's start (`--prepare`). Runs stored before the option laid
    /// their files out and kept them cached.
    #[serde(default = "Prepare::before_the_option")]
    pub prepare: Prepare,
    /// Where each client's thread runs (`--pin`). Runs stored before the option left it to the
    /// kernel.
    #[serde(default = "Pin::before_the_option")]
    pub pin: Pin,
    /// A file per client, or one file every client shares (`--shared-file interleaved`, IO500's
    /// ior-hard). Written only when shared: runs stored before the option had a file per client.
    #[serde(default, skip_serializing_if = "SharedFile::is_per_client")]
    pub shared_file: SharedFile,
    /// The length of the intervals of each cell's figures over time (`--interval`), in ns.
    /// Written only when not the default 1 s, so a default run's plan reads as before it.
    #[serde(
        default = "iomatrix_harness::series::default_interval_ns",
        skip_serializing_if = "iomatrix_harness::series::is_default_interval"
    )]
    pub series_interval_ns: u64,
    /// Open loop (`--arrivals`): requests start at intended times at the offered rate
    /// (`rate_iops`, or a curve's point), each request's latency counted from its intended start;
    /// None: closed loop, where `rate_iops` paces issues as fio's rate_iops does. Written only
    /// when given: runs stored before it were closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<iomatrix_random::Arrival>,
    /// `--curve`: every setting measured as a throughput-latency curve (its maximum, then
    /// open-loop points). Written only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<iomatrix_harness::curve::Curve>,
    /// The deepest queue whose requests meet a latency (`--latency-target`, fio's
    /// latency_target): each cell's queue depth is the most the search tries, and the cell is
    /// measured at the depth found. None: each cell runs at its depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::LatencyTarget>,
    /// `--steady-state`: a cell ends once its per-interval figures meet this rule (fio 3.33's
    /// steadystate, or SNIA PTS's), or runs its whole limit and says it did not. None: cells run
    /// their limit; written only when given, so other plans read as before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<iomatrix_stats::steady::SteadyRule>,
    /// `--bssplit` (fio's bssplit): each request's size drawn by share; `block_sizes` is then the
    /// largest of them alone (what each request buffer holds). None: every request of a cell is
    /// its block size; written only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_split: Option<crate::bssplit::BlockSplit>,
    /// Jobs run at once (a fio job file's jobs without stonewall between them; Iometer's workers
    /// with different specs): each job its own clients with its own plan of one cell, all started
    /// at one barrier, each job stored as a cell of its own. Empty: every client runs this plan.
    /// The plan's own fields are then its first job's; `clients` is every job's clients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub together: Vec<TogetherJob>,
}

/// One job of a plan's jobs run at once ([`AccessPlan::together`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TogetherJob {
    /// Its name (fio's job name).
    pub name: String,
    /// Its plan: one cell, its own clients (`clients`).
    pub plan: AccessPlan,
}

/// Whether each client works on a file of its own or every client on one shared file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SharedFile {
    /// Each client its own file, `client-N/access.dat` (ior's -F, IO500's ior-easy).
    #[default]
    PerClient,
    /// One file, `access-shared.dat`, shared by every client and written and read in transfers
    /// interleaved by client: transfer k of client r of N at offset (k x N + r) x block size, as
    /// ior lays out its -s segments when -b equals -t (IO500's ior-hard). `file_size` is each
    /// client's share of it.
    Interleaved,
}

impl SharedFile {
    /// The names `--shared-file` takes, for messages.
    pub const NAMES: &'static str = "interleaved";

    /// The shared file's name in the run's working folder.
    pub const FILE_NAME: &'static str = "access-shared.dat";

    /// Whether each client has a file of its own (what older runs had).
    pub fn is_per_client(&self) -> bool {
        *self == SharedFile::PerClient
    }

    /// The run condition's sentence.
    pub fn describe(self) -> &'static str {
        match self {
            SharedFile::PerClient => "a file per client",
            SharedFile::Interleaved => {
                "one file shared by every client (access-shared.dat), written and read in transfers interleaved by \
                 client: transfer k of client r of N at offset (k x N + r) x block size, as ior lays out -s segments \
                 with -b equal to -t (IO500's ior-hard); --file-size is each client's share, and each write's first \
                 16 bytes hold its client (rank + 1) and offset, little-endian"
            }
        }
    }
}

impl std::str::FromStr for SharedFile {
    type Err = String;
    fn from_str(s: &str) -> Result<SharedFile, String> {
        match s.trim() {
            "interleaved" => Ok(SharedFile::Interleaved),
            other => Err(format!(
                "'{other}' is not a way to share one file; give {} (or leave --shared-file out for a file per client)",
                SharedFile::NAMES
            )),
        }
    }
}

/// Where one client's transfers lie in the shared file: transfer k at (k x clients + rank) x
/// block size, for k from 0 to `transfers` - 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interleave {
    /// Clients sharing the file.
    pub clients: u64,
    /// This client's rank, 0-based.
    pub rank: u64,
    /// Bytes per transfer (the cell's block size).
    pub block: u64,
    /// Transfers of each client: its share of the file in whole blocks.
    pub transfers: u64,
}

impl Interleave {
    /// Client `rank` of `clients`, sharing a file of `share` bytes each in transfers of `block`.
    pub fn new(clients: usize, rank: usize, block: u64, share: u64) -> Interleave {
        Interleave { clients: clients as u64, rank: rank as u64, block, transfers: share / block.max(1) }
    }

    /// The offset of this client's transfer `k`.
    pub fn offset(&self, k: u64) -> u64 {
        (k * self.clients + self.rank) * self.block
    }

    /// The shared file's length: every client's transfers.
    pub fn file_length(&self) -> u64 {
        self.transfers * self.clients * self.block
    }
}

/// Where each client's thread runs. A thread that waits for every request is woken by the
/// device's completion, and the kernel's choice of CPU at each wake-up settles, run by run, into
/// patterns that measure up to a fifth apart (docs/measuring.md); kept on one CPU, the same work
/// measures the same. A thread with a deep queue rarely waits, and kept on one CPU it leaves the
/// kernel's own workers (the device's, the completions' softirq) only the other CPUs: on a
/// 2-CPU machine they queued behind each other on one CPU while the client's idled, and the
/// same cell at depth 128 measured 2.6% (reads) and 5.1% (writes) more unpinned, 6 of 7 rounds
/// won each (docs/measuring.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pin {
    /// As `Spread` in cells of up to [`Pin::SHALLOW_DEPTH`] requests in flight, as `Off` in
    /// deeper ones.
    #[default]
    Shallow,
    /// Client i kept on the (i mod N)-th of the N CPUs its process may use in every cell (fio's
    /// cpus_allowed_policy=split over all of them).
    Spread,
    /// The kernel places each client's thread and moves it at will (fio's default).
    Off,
}

impl Pin {
    /// The names `--pin` takes, for messages.
    pub const NAMES: &'static str = "shallow, spread or off";

    /// The deepest queue that `Shallow` keeps a client's thread on one CPU for.
    pub const SHALLOW_DEPTH: u32 = 8;

    fn before_the_option() -> Pin {
        Pin::Off
    }

    /// The name `--pin` takes and runs store.
    pub fn name(self) -> &'static str {
        match self {
            Pin::Shallow => "shallow",
            Pin::Spread => "spread",
            Pin::Off => "off",
        }
    }

    /// Whether each client's thread is kept on its CPU in a cell of `depth` requests in flight.
    pub fn keeps(self, depth: u32) -> bool {
        match self {
            Pin::Shallow => depth <= Pin::SHALLOW_DEPTH,
            Pin::Spread => true,
            Pin::Off => false,
        }
    }

    /// The run condition's sentence.
    pub fn describe(self) -> String {
        const KEPT: &str = "each client's thread kept on one CPU, the i-th client on its host on the (i mod N)-th of \
                            the N CPUs its process may use (each client's CPU is stored with its figures)";
        match self {
            Pin::Shallow => format!(
                "shallow: in cells of up to {} requests in flight {KEPT}; in deeper cells the kernel placed each \
                 client's thread and moved it at will",
                Pin::SHALLOW_DEPTH
            ),
            Pin::Spread => format!("spread: {KEPT}"),
            Pin::Off => "off: the kernel placed each client's thread and moved it at will".to_string(),
        }
    }
}

impl std::str::FromStr for Pin {
    type Err = String;
    fn from_str(s: &str) -> Result<Pin, String> {
        match s.trim() {
            "shallow" => Ok(Pin::Shallow),
            "spread" => Ok(Pin::Spread),
            "off" | "none" => Ok(Pin::Off),
            other => Err(format!("'{other}' is not a placement of the clients' threads; give {}", Pin::NAMES)),
        }
    }
}

/// How each client's file is prepared, and so what the page cache holds of it, when a cell
/// begins. It changes a buffered write's cost several times over: a file written in 1 MiB
/// pieces and kept cached sits in large folios, and every small write into a large folio
/// walks its buffers (docs/measuring.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prepare {
    /// Laid out in 1 MiB writes and fsynced; before every cell its dirty pages are written
    /// and it is dropped from the page cache (fdatasync, posix_fadvise DONTNEED), as fio does
    /// at every job's open (invalidate=1, its default).
    #[default]
    Dropped,
    /// Laid out in 1 MiB writes, fsynced and kept cached: a cell starts with what the lay-out
    /// and the cells before it left.
    Cached,
    /// Laid out in the cell's own block size, fsynced and kept cached; laid out again for a
    /// cell whose block size differs from the last lay-out's.
    Block,
}

impl Prepare {
    /// The names `--prepare` takes, for messages.
    pub const NAMES: &'static str = "dropped, cached or block";

    fn before_the_option() -> Prepare {
        Prepare::Cached
    }

    /// The name `--prepare` takes and runs store.
    pub fn name(self) -> &'static str {
        match self {
            Prepare::Dropped => "dropped",
            Prepare::Cached => "cached",
            Prepare::Block => "block",
        }
    }

    /// The run condition's sentence.
    pub fn describe(self) -> &'static str {
        match self {
            Prepare::Dropped => {
                "dropped: each client's file laid out in 1 MiB writes and fsynced; before every cell its dirty pages \
                 written and the file dropped from the page cache (fdatasync, posix_fadvise DONTNEED), as fio's \
                 invalidate=1 does at every job's open"
            }
            Prepare::Cached => {
                "cached: each client's file laid out in 1 MiB writes, fsynced and kept in the page cache; a cell \
                 starts with what the lay-out and the cells before it left"
            }
            Prepare::Block => {
                "block: each client's file laid out in the cell's own block size, fsynced and kept in the page \
                 cache; laid out again for a cell whose block size differs"
            }
        }
    }

    /// The size of the writes that lay the file out for a cell of `block_size` bytes.
    pub fn lay_out_piece(self, block_size: u64) -> u64 {
        match self {
            Prepare::Block => block_size,
            Prepare::Dropped | Prepare::Cached => LAY_OUT_PIECE,
        }
    }
}

impl std::str::FromStr for Prepare {
    type Err = String;
    fn from_str(s: &str) -> Result<Prepare, String> {
        match s.trim() {
            "dropped" => Ok(Prepare::Dropped),
            "cached" => Ok(Prepare::Cached),
            "block" => Ok(Prepare::Block),
            other => Err(format!("'{other}' is not a way to prepare the file; give {}", Prepare::NAMES)),
        }
    }
}

/// The writes that lay a file out, but with `--prepare block`.
pub const LAY_OUT_PIECE: u64 = 1 << 20;

/// The longest `--poll-completions` budget: beyond it the thread would spin
/// through most waits of any real device, which is a busy loop, not polling.
pub const MAX_POLL_US: u64 = 10_000;

fn one() -> u32 {
    1
}

/// What a cell sets: block size, read %, random %, queue depth.
pub type CellSetting = (ByteSize, u8, u8, u32);

/// One cell: a block size, read %, random % and queue depth, one sample of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AccessCell {
    /// Its place in the run's order of cells, from 0.
    pub index: usize,
    /// Bytes per request.
    pub block_size: ByteSize,
    /// Requests that read, in % (the rest write).
    pub read_percent: u8,
    /// Requests at a random offset, in % (the rest sequential).
    pub random_percent: u8,
    /// Requests each client keeps in flight.
    pub queue_depth: u32,
    /// Which sample of its setting, from 1.
    #[serde(default)]
    pub repeat: u32,
    /// The load it was offered as a point of a curve (`--curve`); None for a cell of no curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<iomatrix_core::CurveLoad>,
}

impl AccessCell {
    /// What the cell sets, without its sample number: repeats of it share this.
    pub fn setting(&self) -> CellSetting {
        (self.block_size, self.read_percent, self.random_percent, self.queue_depth)
    }

    /// `4k qd=32 read=100% random=100%`
    pub fn describe(&self) -> String {
        crate::AccessCellFigures::name(self.block_size.bytes(), &self.mix())
    }

    /// Its read %, random % and queue depth as the mix cells store.
    pub fn mix(&self) -> iomatrix_core::IoMix {
        iomatrix_core::IoMix {
            read_percent: self.read_percent.into(),
            random_percent: self.random_percent.into(),
            queue_depth: self.queue_depth.into(),
            load: self.load,
        }
    }
}

/// What a client holds for its requests in flight ([`AccessPlan::request_needs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestNeeds {
    /// The deepest queue of any cell (what `--qd` asks at most).
    pub deepest: u64,
    /// The request buffers of the cell that needs most, in bytes.
    pub buffers: u64,
    /// What one request more in flight adds to them, in bytes.
    pub buffers_per_request: u64,
    /// Threads driving requests beside the client's own (0 where it drives them all).
    pub helper_threads: u64,
}

/// The file-server protocol a remote run's requests travel on, as far as how the requests in
/// flight reach the server differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// iomatrix's own NFSv3 client.
    Nfs,
    /// iomatrix's own SMB2/3 client.
    Smb,
}

impl AccessPlan {
    /// The plan cell `index` runs under: its job's under [`AccessPlan::together`], else this one.
    pub fn plan_of_cell(&self, index: usize) -> &AccessPlan {
        self.together.get(index).map_or(self, |job| &job.plan)
    }

    /// Under [`AccessPlan::together`]: the job whose clients include `rank`, and the rank's place
    /// among them.
    pub fn job_of_rank(&self, rank: usize) -> Option<(usize, usize)> {
        let mut first = 0;
        for (j, job) in self.together.iter().enumerate() {
            if rank < first + job.plan.clients {
                return Some((j, rank - first));
            }
            first += job.plan.clients;
        }
        None
    }

    /// Cells in sweep order: block size outermost, then read %, random %,
    /// queue depth; each repeated `repeats` times in a row.
    pub fn cells(&self) -> Vec<AccessCell> {
        if !self.together.is_empty() {
            // A cell per job, each its job's one cell.
            let cells = self.together.iter().filter_map(|j| j.plan.cells().first().copied());
            return cells.enumerate().map(|(index, c)| AccessCell { index, ..c }).collect();
        }
        let mut cells = Vec::new();
        for &block_size in &self.block_sizes {
            for &read_percent in &self.read_percents {
                for &random_percent in &self.random_percents {
                    for &queue_depth in &self.queue_depths {
                        let setting = (block_size, read_percent, random_percent, queue_depth);
                        if self.only.as_ref().is_some_and(|only| !only.contains(&setting)) {
                            continue;
                        }
                        for repeat in 1..=self.repeats.max(1) {
                            for load in self.loads() {
                                cells.push(AccessCell {
                                    index: cells.len(),
                                    block_size,
                                    read_percent,
                                    random_percent,
                                    queue_depth,
                                    repeat,
                                    load,
                                });
                            }
                        }
                    }
                }
            }
        }
        cells
    }

    /// The loads each setting runs at: its curve's maximum and points (`--curve`), or once.
    fn loads(&self) -> Vec<Option<iomatrix_core::CurveLoad>> {
        match &self.curve {
            Some(curve) => {
                std::iter::once(iomatrix_core::CurveLoad::Max).chain(curve.points.iter().copied()).map(Some).collect()
            }
            None => vec![None],
        }
    }

    /// What each client holds for its requests in flight, at the plan's deepest cell:
    /// `queued` where requests are queued (io_uring, a server), `thread_per_request` where each
    /// request beyond the first needs a thread of its own (an NFS server: one request per
    /// connection).
    pub fn request_needs(&self, queued: bool, thread_per_request: bool) -> RequestNeeds {
        let deepest = self.deepest_queue();
        let buffers = self.request_buffers(queued);
        RequestNeeds {
            deepest,
            buffers,
            buffers_per_request: buffers / deepest.max(1),
            helper_threads: if thread_per_request && deepest > 1 { deepest } else { 0 },
        }
    }

    /// The deepest queue of any cell (1 for an empty plan).
    fn deepest_queue(&self) -> u64 {
        self.cells().iter().map(|c| u64::from(c.queue_depth)).max().unwrap_or(1)
    }

    /// The request buffers of the cell that needs most, in bytes: queue depth x block size
    /// where the requests are `queued` (io_uring, a server), one block otherwise.
    fn request_buffers(&self, queued: bool) -> u64 {
        self.cells()
            .iter()
            .map(|c| c.block_size.bytes().saturating_mul(if queued { u64::from(c.queue_depth) } else { 1 }))
            .max()
            .unwrap_or(0)
    }

    /// How each client's requests reach a server at each queue depth, for the run's
    /// conditions. It states what the runner does (`execute_at` at a remote place): SMB keeps
    /// the requests in flight on the client's one session; nfs3_client carries one request per
    /// connection, so depth N takes N connections.
    pub fn requests_on(&self, protocol: Protocol) -> Vec<String> {
        self.queue_depths
            .iter()
            .map(|&qd| {
                let how = match (protocol, qd) {
                    (Protocol::Smb, 1) => "one request at a time on one SMB session".to_string(),
                    (Protocol::Smb, _) => format!("up to {qd} requests in flight at once on one SMB session"),
                    (Protocol::Nfs, 1) => "one request at a time on one NFS connection".to_string(),
                    (Protocol::Nfs, _) => format!(
                        "{qd} NFS connections, one request in flight on each (nfs3_client carries one request per \
                         connection), each driven by a thread of its own whose CPU time the cell's CPU% leaves out"
                    ),
                };
                format!("queue depth {qd}: {how}; for each client")
            })
            .collect()
    }

    /// The alignment of offsets (bytes) for cells of `block_size`: `--alignment`, or the block size.
    pub fn alignment_of(&self, block_size: ByteSize) -> u64 {
        self.alignment.map_or(block_size.bytes(), |a| a.bytes())
    }

    /// Checks the plan before anything runs. `max_depth` is the largest
    /// queue the chosen backend accepts on this kernel.
    pub fn validate(&self, max_depth: u32) -> Result<(), UsageError> {
        self.check()?;
        for &qd in &self.queue_depths {
            if qd > 1 && !self.backend.is_queued() {
                return Err(UsageError::new(format!(
                    "--qd {qd} needs a queued backend: {} issues one request at a time; use --backend io_uring \
                     (or --qd 1)",
                    self.backend
                )));
            }
            if qd > max_depth {
                return Err(UsageError::new(format!(
                    "--qd {qd} is above what {} accepts on this kernel ({max_depth}); choose --qd {max_depth} or less",
                    self.backend
                )));
            }
        }
        Ok(())
    }

    /// Checks a plan for a server reached through iomatrix's own protocol
    /// client, where the client issues the requests (no local backend) and
    /// at most `max_depth` of them are in flight per client.
    pub fn validate_on_server(&self, max_depth: u32) -> Result<(), UsageError> {
        self.check()?;
        if self.poll_completions_us.is_some() {
            return Err(UsageError::new(
                "--poll-completions: on a server iomatrix's own protocol client receives the replies; only local \
                 io_uring polls its completions. Leave --poll-completions out",
            ));
        }
        if self.submit_batch.is_some() {
            return Err(UsageError::new(
                "--submit-batch: on a server iomatrix's own protocol client sends each request as it is issued; \
                 only local io_uring submits in groups. Leave --submit-batch out",
            ));
        }
        if let Some(qd) = self.queue_depths.iter().find(|&&qd| qd > max_depth) {
            return Err(UsageError::new(format!(
                "--qd {qd}: on a server through iomatrix's own client a client keeps at most {max_depth} requests \
                 in flight; choose --qd {max_depth} or less"
            )));
        }
        Ok(())
    }

    /// Refuses `flag`, an io_uring-only option, for another backend, which `does` instead.
    fn io_uring_only(&self, flag: &str, does: &str) -> Result<(), UsageError> {
        if self.backend == BackendKind::IoUring {
            return Ok(());
        }
        Err(UsageError::new(format!("{flag} needs --backend io_uring: {} {does}", self.backend)))
    }

    /// What every plan must satisfy, local or on a server.
    fn check(&self) -> Result<(), UsageError> {
        let empty = [
            (self.block_sizes.is_empty(), "--bs"),
            (self.read_percents.is_empty(), "--read"),
            (self.random_percents.is_empty(), "--random"),
            (self.queue_depths.is_empty(), "--qd"),
        ];
        if let Some((_, flag)) = empty.iter().find(|(e, _)| *e) {
            return Err(UsageError::new(format!("{flag} is empty: give at least one value")));
        }
        if self.clients == 0 {
            return Err(UsageError::new("--clients 0: at least one client is needed"));
        }
        for &p in self.read_percents.iter().chain(&self.random_percents) {
            if p > 100 {
                return Err(UsageError::new(format!("{p}% is over 100: --read and --random are percentages 0..100")));
            }
        }
        for &qd in &self.queue_depths {
            if qd == 0 {
                return Err(UsageError::new("--qd 0: a client needs at least one request in flight"));
            }
        }
        if matches!(self.backend, BackendKind::Stdio) {
            return Err(UsageError::new(
                "the stdio backend buffers in user space and cannot serve access specs; use psync, sync, mmap or io_uring",
            ));
        }
        self.check_block_sizes()?;
        self.check_block_split()?;
        if self.direct && !self.backend.supports_direct() {
            return Err(UsageError::new(format!(
                "--direct cannot be used with the {} backend; use psync, sync or io_uring",
                self.backend
            )));
        }
        if self.limit == Limit::Bytes(0) || self.limit == Limit::DurationMs(0) {
            return Err(UsageError::new("the cell limit is zero: give a positive --duration or --bytes"));
        }
        self.check_content()?;
        self.check_io_uring_flags()?;
        self.check_shared_file()?;
        self.check_steady()?;
        if !self.distribution.is_uniform() && self.random_percents.iter().all(|&p| p == 0) {
            return Err(UsageError::new(format!(
                "--distribution {}: only random requests follow a distribution, and --random 0 makes every \
                 request sequential; give --random above 0 (e.g. --random 100), or leave --distribution out",
                self.distribution
            )));
        }
        if u128::from(self.ramp_ms) > iomatrix_core::MAX_DURATION.as_millis() {
            return Err(UsageError::new(format!(
                "--ramp {}ms: a warm-up lasts at most {}, as --duration does; give a shorter one",
                self.ramp_ms,
                iomatrix_core::MAX_DURATION_TEXT
            )));
        }
        if self.rate_iops == Some(0) {
            return Err(UsageError::new("--rate 0: give a positive number of requests per second, or no --rate"));
        }
        self.check_open_loop()?;
        self.check_latency_target()
    }

    /// `--arrivals` and `--curve`: an offered rate to arrive at, a time per cell to fit it in, and
    /// rates within what a client schedules.
    fn check_open_loop(&self) -> Result<(), UsageError> {
        if self.arrivals.is_none() && self.curve.is_none() {
            return Ok(());
        }
        let Limit::DurationMs(ms) = self.limit else {
            return Err(UsageError::new(
                "--arrivals and --curve offer requests at a rate for a time: give --duration, not --bytes",
            ));
        };
        if let (Some(_), Some(rate)) = (&self.curve, self.rate_iops) {
            return Err(UsageError::new(format!(
                "--curve with --rate {rate}: the curve sets each point's rate (its maximum first, then its points); \
                 leave --rate out"
            )));
        }
        if self.curve.is_none() && self.rate_iops.is_none() {
            return Err(UsageError::new(
                "--arrivals needs a rate to arrive at: give --rate N (requests a second per client), or --curve",
            ));
        }
        if let Some(rate) = self.rate_iops {
            iomatrix_harness::curve::check_rate(&format!("--rate {rate}"), rate as f64, ms)?;
        }
        let absolute = self.curve.iter().flat_map(|c| &c.points).filter_map(|p| match p {
            iomatrix_core::CurveLoad::Rate(r) => Some(*r),
            _ => None,
        });
        for rate in absolute {
            iomatrix_harness::curve::check_rate(
                &format!("--curve point {rate}/s over {} client(s)", self.clients),
                rate as f64 / self.clients.max(1) as f64,
                ms,
            )?;
        }
        Ok(())
    }

    /// `--latency-target`: a window within the cell's duration and above the clock's resolution, a
    /// percentile above 0 and at most 100.
    fn check_latency_target(&self) -> Result<(), UsageError> {
        let Some(t) = &self.latency_target else { return Ok(()) };
        if self.arrivals.is_some() || self.curve.is_some() {
            return Err(UsageError::new(
                "--latency-target searches the deepest queue of a closed loop; --arrivals and --curve offer a rate \
                 in open loop: give one of them",
            ));
        }
        let human = |ns: u64| iomatrix_core::human::nanos(ns as f64);
        if t.target_ns == 0 {
            return Err(UsageError::new("--latency-target 0: give a latency a request can meet, e.g. 1ms"));
        }
        if !(1..=10_000).contains(&t.percentile_hundredths) {
            return Err(UsageError::new(format!(
                "--latency-percentile {}: give a percentage above 0 and at most 100 (fio's default is 100)",
                t.percentile()
            )));
        }
        // The latency clock counts nanoseconds (its resolution); a window shorter than one judges nothing.
        if t.window_ns < crate::target::CLOCK_RESOLUTION_NS {
            return Err(UsageError::new(format!(
                "--latency-window {}: below the latency clock's resolution ({}); give a window that holds requests, \
                 e.g. 1s",
                human(t.window_ns),
                human(crate::target::CLOCK_RESOLUTION_NS)
            )));
        }
        if let Limit::DurationMs(ms) = self.limit {
            if t.window_ns > ms.saturating_mul(1_000_000) {
                return Err(UsageError::new(format!(
                    "--latency-window {} is longer than each cell's --duration ({}): the search judges each depth \
                     over one window and then measures the cell; give a window of at most the duration",
                    human(t.window_ns),
                    human(ms.saturating_mul(1_000_000))
                )));
            }
        }
        Ok(())
    }

    /// Each block size: not empty, within the file, aligned as `--direct` needs.
    fn check_block_sizes(&self) -> Result<(), UsageError> {
        for &bs in &self.block_sizes {
            if bs.bytes() == 0 {
                return Err(UsageError::new("--bs 0: a block must hold at least one byte"));
            }
            if bs > self.file_size {
                return Err(UsageError::new(format!(
                    "block size {bs} is larger than the file ({}); choose a larger --file-size",
                    self.file_size
                )));
            }
            let align = self.alignment_of(bs);
            if align == 0 {
                return Err(UsageError::new("--align 0: offsets must be multiples of at least one byte"));
            }
            if self.direct && (bs.bytes() % 512 != 0 || align % 512 != 0) {
                return Err(UsageError::new(format!(
                    "block size {bs} (alignment {}) is not a multiple of 512, which --direct (O_DIRECT) needs",
                    ByteSize(align)
                )));
            }
        }
        Ok(())
    }

    /// `--bssplit`: one cell's block size (the largest), each size within the file and O_DIRECT's
    /// alignment, and none of the options that lay requests out by one size.
    fn check_block_split(&self) -> Result<(), UsageError> {
        let Some(split) = &self.block_split else { return Ok(()) };
        let refused = |what: &str| {
            Err(UsageError::new(format!(
                "--bssplit with {what}: not built (they lay out or check requests of one size); leave one out"
            )))
        };
        if self.block_sizes != [split.largest()] {
            return refused("--bs");
        }
        if self.content.stamped() {
            return refused("--verify or --compressible");
        }
        if !self.shared_file.is_per_client() {
            return refused("--shared-file");
        }
        if let Some(bad) = split.sizes().into_iter().find(|s| self.direct && s.bytes() % 512 != 0) {
            return Err(UsageError::new(format!(
                "--bssplit: block size {bad} is not a multiple of 512, which --direct (O_DIRECT) needs"
            )));
        }
        Ok(())
    }

    /// `--compressible` and `--verify`: a percentage, and 4k blocks on a folder.
    fn check_content(&self) -> Result<(), UsageError> {
        if self.content.compressible > 100 {
            return Err(UsageError::new(format!(
                "--compressible {}: give a percentage from 0 (incompressible) to 100",
                self.content.compressible
            )));
        }
        if self.content.stamped() {
            if self.device.is_some() {
                return Err(UsageError::new(
                    "--verify and --compressible on a raw device: not supported yet (nothing is laid out on a device, \
                     so there is nothing to check against); run them on a folder",
                ));
            }
            let unit = iomatrix_verify::UNIT as u64;
            let sizes = self.block_sizes.iter().flat_map(|&bs| [bs.bytes(), self.alignment_of(bs)]);
            if let Some(bad) = sizes.chain([self.file_size.bytes()]).find(|b| b % unit != 0) {
                return Err(UsageError::new(format!(
                    "{} is not a multiple of the 4k verify block: --verify and --compressible need --bs, --align and \
                     --file-size in multiples of 4k",
                    ByteSize(bad)
                )));
            }
        }
        Ok(())
    }

    /// `--steady-state`: its window whole intervals of `--interval`, at least 2, and with its ramp
    /// within the cell's duration (a cell of bytes runs as long as it takes: not checked).
    fn check_steady(&self) -> Result<(), UsageError> {
        let Some(rule) = self.steady else { return Ok(()) };
        let duration_ns = match self.limit {
            Limit::DurationMs(ms) => Some(ms.saturating_mul(1_000_000)),
            Limit::Bytes(_) => None,
        };
        rule.check(self.series_interval_ns, duration_ns, "--steady-window", "--steady-ramp").map_err(UsageError::new)
    }

    /// `--shared-file interleaved`: sequential transfers on files, as ior-hard's.
    fn check_shared_file(&self) -> Result<(), UsageError> {
        if self.shared_file.is_per_client() {
            return Ok(());
        }
        let refused = if self.device.is_some() {
            Some("--device: every client already shares the device; leave --shared-file out")
        } else if self.random_percents.iter().any(|&p| p > 0) {
            Some("each client's transfers follow each other, as ior-hard's; give --random 0 (or --rw read / write)")
        } else if self.alignment.is_some() {
            Some("--align: the interleave places every transfer (at (k x clients + rank) x block size); leave --align out")
        } else if self.content.stamped() {
            Some(
                "--verify and --compressible: each write's first 16 bytes name its client and offset instead; leave \
                 them out",
            )
        } else {
            None
        };
        match refused {
            Some(why) => Err(UsageError::new(format!("--shared-file interleaved with {why}"))),
            None => Ok(()),
        }
    }

    /// `--submit-batch` and `--poll-completions`: io_uring's, in their ranges.
    fn check_io_uring_flags(&self) -> Result<(), UsageError> {
        if let Some(n) = self.submit_batch {
            self.io_uring_only("--submit-batch", "issues each request in its own system call")?;
            if n == 0 {
                return Err(UsageError::new(
                    "--submit-batch 0: give 1 or more (1 hands each request to the kernel as soon as it is prepared)",
                ));
            }
        }
        if let Some(us) = self.poll_completions_us {
            self.io_uring_only(
                "--poll-completions",
                "completes each request inside its own system call, so there is nothing to poll",
            )?;
            if !(1..=MAX_POLL_US).contains(&us) {
                return Err(UsageError::new(format!(
                    "--poll-completions {us}us: give 1us to {}ms (a budget per wait; the client thread spins that long \
                 at most before it sleeps)",
                    MAX_POLL_US / 1000
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::KIB;

    fn plan() -> AccessPlan {
        AccessPlan {
            block_sizes: vec![ByteSize(4 * KIB), ByteSize(64 * KIB)],
            read_percents: vec![100, 0],
            random_percents: vec![100],
            queue_depths: vec![1, 32],
            clients: 1,
            file_size: ByteSize(1 << 20),
            limit: Limit::DurationMs(100),
            ramp_ms: 0,
            distribution: Distribution::Uniform,
            alignment: None,
            direct: false,
            backend: BackendKind::IoUring,
            rate_iops: None,
            poll_completions_us: None,
            submit_batch: None,
            seed: 1,
            repeats: 1,
            only: None,
            device: None,
            content: Default::default(),
            prepare: Prepare::Dropped,
            pin: Pin::Shallow,
            shared_file: SharedFile::PerClient,
            series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
            arrivals: None,
            curve: None,
            latency_target: None,
            steady: None,
            block_split: None,
            together: Vec::new(),
        }
    }

    #[test]
    fn a_curve_is_its_maximum_then_its_points_for_each_setting() {
        let curve =
            iomatrix_harness::curve::Curve { points: iomatrix_harness::curve::parse_points("").unwrap(), stop: None };
        let p =
            AccessPlan { curve: Some(curve), read_percents: vec![100], block_sizes: vec![ByteSize(4 * KIB)], ..plan() };
        let cells = p.cells();
        assert_eq!(cells.len(), 2 * 7, "two depths, each a maximum and vdbench's six points");
        assert_eq!(cells[0].describe(), "4k qd=1 read=100% random=100% load=max");
        assert_eq!(cells[1].describe(), "4k qd=1 read=100% random=100% load=10%");
        assert_eq!(cells[7].describe(), "4k qd=32 read=100% random=100% load=max");
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(serde_json::from_value::<AccessPlan>(json).unwrap(), p);
        assert!(serde_json::to_value(plan()).unwrap().get("curve").is_none(), "a plan of no curve stores as before");
    }

    #[test]
    fn open_loop_needs_a_rate_a_time_and_room_for_its_arrivals() {
        let err = |p: AccessPlan| p.validate(32768).unwrap_err().to_string();
        let open = AccessPlan { arrivals: Some(iomatrix_random::Arrival::Poisson), rate_iops: Some(1000), ..plan() };
        assert!(open.validate(32768).is_ok());
        assert!(err(AccessPlan { rate_iops: None, ..open.clone() }).contains("needs a rate"));
        assert!(err(AccessPlan { limit: Limit::Bytes(1 << 20), ..open.clone() }).contains("not --bytes"));
        assert!(err(AccessPlan { rate_iops: Some(50), ..open.clone() }).contains("fewer than the 10"));
        assert!(err(AccessPlan { rate_iops: Some(2_000_000), ..open.clone() }).contains("less than 1 us apart"));
        let curve = iomatrix_harness::curve::Curve {
            points: iomatrix_harness::curve::parse_points("100/s,1000/s").unwrap(),
            stop: None,
        };
        let curved = AccessPlan { curve: Some(curve), clients: 2, ..plan() };
        // 100/s over two clients for 100 ms: 5 arrivals each.
        assert!(err(curved.clone()).contains("--curve point 100/s over 2 client(s)"));
        assert!(err(AccessPlan { rate_iops: Some(10), limit: Limit::DurationMs(10_000), ..curved })
            .contains("leave --rate out"));
    }

    #[test]
    fn request_needs_come_from_the_deepest_and_widest_cell() {
        // 64 KiB x qd 32 is the most any cell keeps in flight; a server over NFS drives each
        // request of it on a thread of its own.
        let needs = plan().request_needs(true, true);
        assert_eq!(
            needs,
            RequestNeeds { deepest: 32, buffers: 32 * 64 * KIB, buffers_per_request: 64 * KIB, helper_threads: 32 }
        );
        let one_at_a_time = plan().request_needs(false, false);
        assert_eq!((one_at_a_time.buffers, one_at_a_time.helper_threads), (64 * KIB, 0));
        let mut shallow = plan();
        shallow.queue_depths = vec![1];
        assert_eq!(shallow.request_needs(true, true).helper_threads, 0);
    }

    #[test]
    fn requests_on_a_server_are_said_per_queue_depth() {
        let said = plan().requests_on(Protocol::Nfs);
        assert_eq!(said.len(), 2);
        assert_eq!(said[0], "queue depth 1: one request at a time on one NFS connection; for each client");
        assert!(
            said[1].starts_with("queue depth 32: 32 NFS connections, one request in flight on each"),
            "{}",
            said[1]
        );
        assert_eq!(
            plan().requests_on(Protocol::Smb)[1],
            "queue depth 32: up to 32 requests in flight at once on one SMB session; for each client"
        );
    }

    #[test]
    fn lists_sweep_every_combination() {
        let cells = plan().cells();
        assert_eq!(cells.len(), 2 * 2 * 2);
        assert_eq!(cells[1].queue_depth, 32);
        assert_eq!(cells[2].read_percent, 0);
        assert_eq!(cells[4].block_size, ByteSize(64 * KIB));
        assert_eq!(cells[7].index, 7);
        assert_eq!(cells[0].describe(), "4k qd=1 read=100% random=100%");
    }

    #[test]
    fn repeats_follow_each_other_and_only_keeps_the_settings_asked_for() {
        let mut p = plan();
        p.repeats = 3;
        let cells = p.cells();
        assert_eq!(cells.len(), 8 * 3);
        assert_eq!(cells[..3].iter().map(|c| c.repeat).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(cells[..3].iter().all(|c| c.setting() == cells[0].setting()));
        assert_eq!(cells[23].index, 23);
        p.repeats = 1;
        p.only = Some(vec![(ByteSize(64 * KIB), 0, 100, 32)]);
        let cells = p.cells();
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].describe(), "64k qd=32 read=0% random=100%");
    }

    #[test]
    fn bad_plans_name_the_problem() {
        let err = |f: &dyn Fn(&mut AccessPlan)| {
            let mut p = plan();
            f(&mut p);
            p.validate(32768).unwrap_err().to_string()
        };
        assert!(err(&|p| p.queue_depths = vec![0]).contains("--qd 0"));
        assert!(err(&|p| p.queue_depths = vec![40000]).contains("above what io_uring accepts"));
        assert!(err(&|p| p.read_percents = vec![101]).contains("101% is over 100"));
        assert!(err(&|p| {
            p.direct = true;
            p.block_sizes = vec![ByteSize(1000)];
        })
        .contains("multiple of 512"));
        assert!(err(&|p| p.limit = Limit::Bytes(0)).contains("zero"));
        assert!(err(&|p| p.backend = BackendKind::Psync).contains("needs a queued backend"));
        assert!(err(&|p| p.block_sizes = vec![ByteSize(2 << 20)]).contains("larger than the file"));
        assert!(err(&|p| {
            p.distribution = Distribution::Zipf(1.2);
            p.random_percents = vec![0];
        })
        .contains("only random requests follow a distribution"));
        assert!(err(&|p| p.ramp_ms = 721 * 3600 * 1000).contains("at most 30 days"));
        assert!(plan().validate(32768).is_ok());
    }

    #[test]
    fn a_warm_up_and_a_distribution_travel_in_the_plan_and_older_plans_read_without_them() {
        let skewed = AccessPlan { ramp_ms: 2500, distribution: Distribution::Pareto(0.9), ..plan() };
        let json = serde_json::to_value(&skewed).unwrap();
        assert_eq!(json["ramp_ms"], 2500);
        assert_eq!(json["distribution"], "pareto:0.9");
        assert_eq!(
            serde_json::from_value::<AccessPlan>(json).unwrap(),
            skewed,
            "what MPI ranks and the store read back"
        );
        // A plan stored before the options: no field, read as no warm-up and uniform offsets.
        let mut old = serde_json::to_value(plan()).unwrap();
        assert_eq!((&old["ramp_ms"], &old["distribution"]), (&0.into(), &"random".into()), "written when default too");
        old.as_object_mut().unwrap().remove("ramp_ms");
        old.as_object_mut().unwrap().remove("distribution");
        let read: AccessPlan = serde_json::from_value(old).unwrap();
        assert_eq!((read.ramp_ms, read.distribution), (0, Distribution::Uniform));
        let mut bad = serde_json::to_value(&skewed).unwrap();
        bad["distribution"] = "zipf:1".into();
        assert!(serde_json::from_value::<AccessPlan>(bad).is_err(), "a stored distribution is checked as typed");
    }

    #[test]
    fn pin_travels_in_the_plan_and_older_plans_read_as_placed_by_the_kernel() {
        let json = serde_json::to_value(plan()).unwrap();
        assert_eq!(json["pin"], "shallow", "written when default too");
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("pin");
        assert_eq!(serde_json::from_value::<AccessPlan>(old).unwrap().pin, Pin::Off);
        assert_eq!("off".parse::<Pin>(), Ok(Pin::Off));
        assert_eq!("spread".parse::<Pin>(), Ok(Pin::Spread));
        assert_eq!("shallow".parse::<Pin>(), Ok(Pin::Shallow));
        assert_eq!(Pin::default(), Pin::Shallow);
        assert!("everywhere".parse::<Pin>().unwrap_err().contains("shallow, spread or off"));
    }

    #[test]
    fn shallow_keeps_a_thread_up_to_depth_8_spread_always_off_never() {
        let kept = |pin: Pin| [1, 2, 8, 9, 32, 128].map(|depth| pin.keeps(depth));
        assert_eq!(kept(Pin::Shallow), [true, true, true, false, false, false]);
        assert_eq!(kept(Pin::Spread), [true; 6]);
        assert_eq!(kept(Pin::Off), [false; 6]);
        assert!(Pin::Shallow.describe().contains("up to 8 requests in flight"), "{}", Pin::Shallow.describe());
    }

    #[test]
    fn prepare_travels_in_the_plan_and_older_plans_read_as_cached() {
        let kept = AccessPlan { prepare: Prepare::Block, ..plan() };
        let json = serde_json::to_value(&kept).unwrap();
        assert_eq!(json["prepare"], "block");
        assert_eq!(serde_json::from_value::<AccessPlan>(json).unwrap(), kept);
        // Before the option every file was laid out in 1 MiB writes and kept cached.
        let mut old = serde_json::to_value(plan()).unwrap();
        assert_eq!(old["prepare"], "dropped", "written when default too");
        old.as_object_mut().unwrap().remove("prepare");
        assert_eq!(serde_json::from_value::<AccessPlan>(old).unwrap().prepare, Prepare::Cached);
        assert_eq!("block".parse::<Prepare>(), Ok(Prepare::Block));
        assert!("warm".parse::<Prepare>().unwrap_err().contains("give dropped, cached or block"));
        assert_eq!(Prepare::Block.lay_out_piece(16384), 16384);
        assert_eq!(Prepare::Dropped.lay_out_piece(16384), LAY_OUT_PIECE);
    }

    #[test]
    fn an_interleaved_client_owns_every_clients_th_transfer() {
        // ior -s 3 -b 47008 -t 47008 with 4 tasks: client 1's transfers at 1, 5 and 9 blocks.
        let lane = Interleave::new(4, 1, 47008, 3 * 47008 + 100);
        assert_eq!(lane.transfers, 3, "a part of a transfer is no transfer");
        assert_eq!([0, 1, 2].map(|k| lane.offset(k)), [47008, 5 * 47008, 9 * 47008]);
        assert_eq!(lane.file_length(), 12 * 47008);
        let every: std::collections::BTreeSet<u64> =
            (0..4).flat_map(|r| (0..3).map(move |k| Interleave::new(4, r, 47008, 3 * 47008).offset(k))).collect();
        assert_eq!(every, (0..12).map(|t| t * 47008).collect(), "the clients tile the file, no gap, no overlap");
    }

    #[test]
    fn a_shared_file_is_sequential_on_files_and_stored_only_when_shared() {
        let shared = AccessPlan { shared_file: SharedFile::Interleaved, random_percents: vec![0], ..plan() };
        assert!(shared.validate(32768).is_ok());
        let err = |p: AccessPlan| p.validate(32768).unwrap_err().to_string();
        assert!(err(AccessPlan { random_percents: vec![0, 100], ..shared.clone() }).contains("give --random 0"));
        assert!(err(AccessPlan { device: Some("/dev/x".into()), ..shared.clone() }).contains("--device"));
        assert!(err(AccessPlan { alignment: Some(ByteSize(512)), ..shared.clone() }).contains("leave --align out"));
        let json = serde_json::to_value(&shared).unwrap();
        assert_eq!(json["shared_file"], "interleaved");
        assert_eq!(serde_json::from_value::<AccessPlan>(json).unwrap(), shared);
        let own = serde_json::to_value(plan()).unwrap();
        assert!(own.get("shared_file").is_none(), "a file per client stores as before the option");
        assert_eq!(serde_json::from_value::<AccessPlan>(own).unwrap().shared_file, SharedFile::PerClient);
        assert!("striped".parse::<SharedFile>().unwrap_err().contains("give interleaved"));
    }

    #[test]
    fn polling_is_io_uring_only_and_local_only() {
        let polled = AccessPlan { poll_completions_us: Some(50), ..plan() };
        assert!(polled.validate(128).is_ok());
        let e = AccessPlan { backend: BackendKind::Psync, queue_depths: vec![1], ..polled.clone() }.validate(128);
        assert!(e.unwrap_err().to_string().contains("needs --backend io_uring"));
        let e = AccessPlan { poll_completions_us: Some(MAX_POLL_US + 1), ..polled.clone() }.validate(128);
        assert!(e.unwrap_err().to_string().contains("give 1us to 10ms"));
        let e = polled.validate_on_server(64).unwrap_err().to_string();
        assert!(e.contains("only local io_uring polls"), "{e}");
    }

    #[test]
    fn submission_groups_are_io_uring_only_local_only_and_not_empty() {
        let grouped = AccessPlan { submit_batch: Some(4), ..plan() };
        assert!(grouped.validate(128).is_ok());
        let e = AccessPlan { backend: BackendKind::Psync, queue_depths: vec![1], ..grouped.clone() }.validate(128);
        assert!(e.unwrap_err().to_string().contains("needs --backend io_uring"));
        let e = AccessPlan { submit_batch: Some(0), ..grouped.clone() }.validate(128);
        assert!(e.unwrap_err().to_string().contains("give 1 or more"));
        let e = grouped.validate_on_server(64).unwrap_err().to_string();
        assert!(e.contains("only local io_uring submits in groups"), "{e}");
    }
}
