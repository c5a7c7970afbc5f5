//! The Bonnie suite through the harness: one cell per test of each repeat
//! of the set, from one client or many (threads, or MPI ranks), each in its
//! own folder: on this machine, or on a server (`nfs://`, `smb://`) through
//! iomatrix's own protocol client, each client with its own session.

use crate::{planned_tests, BonnieCell, BonnieCellFigures, BonniePlan, BonnieTest};
use iomatrix_analysis::{SuiteShape, SweptFields};
use iomatrix_backend::Place;
use iomatrix_coord::{Ending, Group, Setup};
use iomatrix_core::human::bytes as human;
use iomatrix_core::BackendKind;
use iomatrix_harness::clients::{add_client_metrics, failed_note, figures_with_rank, summed_note};
use iomatrix_harness::limits::default_stack;
use iomatrix_harness::{Cost, Demand, NoLive, NotStored, Prepared, RunSpec, Suite, Target};
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_store::{CellRow, RunStatus, StoredRun};
use serde_json::{json, Value};

/// What rank 0 keeps of a Bonnie run besides its plan.
#[derive(Default)]
pub struct Bonnie {
    /// On a server: the putc and getc buffers, one negotiated request each.
    per_char_buffers: Option<(usize, usize)>,
    /// Run from bonnie++'s command line (`iomatrix bonnie`).
    front: Option<FrontEnd>,
}

/// What bonnie++'s command line adds to a run: its CSV line, `-q`, `-m`, `-u`.
#[derive(Debug, Default)]
pub struct FrontEnd {
    /// `-q`: standard output holds the CSV line alone; the tables go to standard error.
    pub quiet: bool,
    /// `-m NAME`: the CSV line's name (else the host name, as bonnie++).
    pub machine: Option<String>,
    /// `-u`/`-g`: made before the run's first file.
    pub switch: Option<super::user::Switch>,
}

impl Bonnie {
    /// The suite as `iomatrix bonnie` runs it: with bonnie++'s output, `-u`/`-g` switch and `-m` name.
    pub fn with_front_end(front: FrontEnd) -> Bonnie {
        Bonnie { per_char_buffers: None, front: Some(front) }
    }
}

impl Suite for Bonnie {
    const NAME: &'static str = "bonnie";
    // Each Bonnie test is one operation timed whole: bonnie++ keeps no percentiles.
    const SHAPE: SuiteShape = SuiteShape {
        matrix: false,
        whole_cell_latency: Some(Self::NAME),
        beside: crate::figures::BESIDE,
        swept_fields: &[
            SweptFields { by: "record", plan_fields: &["chunk"] },
            SweptFields { by: "file", plan_fields: &["size"] },
        ],
        leads_with_operations: false,
    };
    const CLIENT_COLUMNS: &'static ClientColumns = &crate::render::CLIENT_COLUMNS;
    type Args = super::args::RunBonnieArgs;
    type Plan = BonniePlan;
    type Cell = BonnieCell;
    type Live = NoLive;
    /// Samples are compared per test.
    type Key = &'static str;

    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, _db: &std::path::Path) -> anyhow::Result<Prepared<Self>> {
        let (plan, run) = args.validate(mpi_ranks)?;
        Ok(Prepared { suite: Bonnie::default(), plan, run })
    }

    /// Each client is one thread (the std's default stack); during the
    /// seek test it starts a seeker thread per `--seekers`, and during the
    /// per-char tests one helper thread, each of the std's default stack.
    /// It holds two chunks at once (the data and its pattern), and the file
    /// tests keep the name of every file (a `String` of at most 35 bytes:
    /// 64 bytes counted with its heap block). The per-char buffer is the
    /// file's st_blksize: small, not counted.
    fn demand(&self, plan: &BonniePlan, _target: &Target, clients_here: usize) -> Demand {
        const NAME_BYTES: u64 = 64;
        let threads = 1 + plan.seekers as u64 + 1;
        let chunks = plan.chunk.bytes().saturating_mul(2);
        let names = plan.files.saturating_mul(NAME_BYTES);
        let client = Cost::threads(threads, default_stack()).plus(Cost::memory(chunks.saturating_add(names)));
        let n = clients_here as u64;
        Demand::of_clients(
            clients_here,
            client,
            format!(
                "{clients_here} client(s), each {threads} thread(s) (itself, {} seeker(s), a per-char helper) with                  two chunks of {} and the names of {} files",
                plan.seekers,
                human(plan.chunk.bytes()),
                plan.files
            ),
        )
        .knob("--seekers", plan.seekers as u64, Cost::threads(n, default_stack()))
        .knob("--file-count", plan.files, Cost::memory(NAME_BYTES * n))
    }

    fn spec(&self, plan: &BonniePlan, target: &Target, clients: usize) -> RunSpec {
        let mut conditions = json!({
            "cache": if plan.direct {
                "bypassed (O_DIRECT) for block write, rewrite, block read and seeks; per-char and file tests buffered"
            } else {
                "page cache in use"
            },
            "fsync_timed": plan.sync || plan.fsync_close,
            "close_timed": true,
            "prepare": prepare(plan, target.server().is_some()),
        });
        if plan.tests().iter().any(|t| t.is_per_char()) {
            conditions["per_char"] = json!(plan.per_char.describe(plan.per_char_bytes()));
        }
        if let Some(switch) = self.front.as_ref().and_then(|f| f.switch.as_ref()) {
            conditions["io_user"] =
                json!(format!("uid {}, gid {} (-u/-g: switched before the first file)", switch.uid, switch.gid));
        }
        if plan.content.stamped() {
            iomatrix_harness::data::add_conditions(&mut conditions, &plan.content);
            conditions["verify_scope"] = json!(verify_scope(plan));
        }
        if target.server().is_some() {
            conditions["cache"] = json!(format!(
                "no client cache: iomatrix's own protocol client sends every request to the server, whose own cache \
                 may serve it; {}",
                remote_ram_rule(plan)
            ));
            conditions["per_char_buffer"] = json!(
                "putc and getc buffer one request: the negotiated write and read sizes (NFS wtpref/rtpref, SMB \
                 MaxWriteSize/MaxReadSize), at most 1 MiB; per_char_buffer_bytes in those cells"
            );
            if plan.sync {
                conditions["sync"] = json!(
                    "-b: NFS COMMIT / SMB FLUSH of the data file before each close, after each seek write-back and \
                     of each created file; folder operations are synchronous on the server (no folder fsync)"
                );
            }
        }
        RunSpec {
            peak_bytes: plan.peak_bytes() * clients as u64,
            peak_detail: format!("{clients} client(s) x a {} test file plus the file tests' files", plan.size),
            backend: BackendKind::Sync,
            direct: plan.direct,
            conditions,
            keep_cell_lines: true,
            quiet: self.front.as_ref().is_some_and(|f| f.quiet),
            uncached_hint: "use --direct, or a file of at least twice the RAM,",
            uncached_flags: if self.front.is_some() {
                |twice_ram| format!("-D (O_DIRECT), or -s {twice_ram}")
            } else {
                |twice_ram| format!("--direct, or --size {twice_ram}")
            },
            cache_dropped: false,
        }
    }

    fn cells(plan: &BonniePlan) -> Vec<String> {
        planned_tests(plan).iter().map(|(r, t)| format!("{} (repeat {r})", t.heading())).collect()
    }

    /// The block tests move the file once; the per-character, seek and file tests go by the
    /// time such tests have taken.
    fn work(plan: &BonniePlan) -> Vec<iomatrix_harness::progress::CellWork> {
        use iomatrix_harness::progress::CellWork;
        planned_tests(plan)
            .iter()
            .map(|(_, test)| match test {
                BonnieTest::BlockWrite | BonnieTest::Rewrite | BonnieTest::BlockRead => CellWork::Bytes(plan.size.0),
                _ => CellWork::Unknown,
            })
            .collect()
    }

    fn live(_plan: &BonniePlan, _slots: usize) -> NoLive {
        NoLive
    }

    fn execute(
        plan: &BonniePlan,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        _live: &NoLive,
        on_cell: &mut dyn FnMut(&BonnieCell) -> Result<(), iomatrix_store::StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        iomatrix_harness::clients::needs_folder("the Bonnie suite", place, setup)?;
        crate::execute_at(plan, group, setup, place, |cell| {
            on_cell(cell).map_err(|e| NotStored {
                cell: format!("storing the {} result of repeat {}", cell.test, cell.repeat),
                refused: Box::new(e),
            })
        })
    }

    fn began(&mut self, server: Option<&Value>) {
        self.per_char_buffers = server.map(crate::per_char_buffers);
    }

    /// The merged figures in `metrics` (bonnie++'s layout reads them) with
    /// the many-client figures beside them, each client's own in
    /// `client_figures`. `kib_per_sec` is the sum of the clients' rates.
    fn row(&self, plan: &BonniePlan, cell: &BonnieCell) -> CellRow {
        let r = &cell.total;
        let mut metrics = json!(BonnieCellFigures {
            result: r.clone(),
            per_sec_sum_of_clients: r.per_sec,
            per_sec_overall: cell.per_sec_overall,
            verify: cell.verify.clone(),
            per_char_buffer_bytes: self.per_char_buffers.and_then(|(putc, getc)| match cell.test {
                BonnieTest::PutcWrite => Some(putc),
                BonnieTest::GetcRead => Some(getc),
                _ => None,
            }),
            cached_at_start: cell.cached_at_start,
            series: cell.series.clone(),
        });
        add_client_metrics(&mut metrics, &cell.failures, &cell.starts);
        let client_figures: Vec<Value> = cell
            .clients
            .iter()
            .map(|c| {
                let mut own = figures_with_rank(c.rank, &c.result);
                if let Some(held) = c.cached_at_start {
                    own["cached_at_start"] = json!(held);
                }
                own
            })
            .collect();
        CellRow {
            seq: 0,
            test: r.test.name().to_string(),
            file_size: Some(plan.size.bytes()),
            record_size: Some(plan.chunk.bytes()),
            backend: BackendKind::Sync.name().into(),
            direct: plan.direct && !r.test.is_per_char() && !r.test.is_file_test(),
            clients: cell.clients.len(),
            bytes: r.bytes,
            ops: r.ops,
            wall_ns: r.wall_ns,
            user_ns: r.user_ns,
            sys_ns: r.sys_ns,
            kib_per_sec: if r.unit == "KB/s" { r.per_sec } else { 0.0 },
            cpu_percent: Some(r.cpu_percent),
            metrics,
            client_figures: json!(client_figures),
            state: Default::default(),
            blobs: Vec::new(),
        }
    }

    fn done_line(&self, cell: &BonnieCell) -> String {
        let r = &cell.total;
        // The harness adds "(sample N)" where the set runs more than once.
        let mut line = format!("{}: {:.0} {}, CPU {:.0}%", r.test.heading(), r.per_sec, r.unit, r.cpu_percent);
        if let Some(slowest) = cell.slowest() {
            let (overall, rate) = (format!("{:.0}", cell.per_sec_overall), format!("{:.0}", slowest.result.per_sec));
            line += &summed_note(cell.clients.len(), &overall, slowest.rank, &rate);
        }
        line += &failed_note(cell.failures.len());
        if let Some(found) = cell.verify.as_ref().filter(|t| t.mismatches() > 0) {
            line += &format!(", {} DATA MISMATCH(ES)", found.mismatches());
        }
        line
    }

    fn key(&self, cell: &BonnieCell) -> &'static str {
        cell.test.name()
    }

    /// Bonnie's tests share one file (a read needs the write before it): the
    /// whole set runs again.
    fn again(plan: &BonniePlan, _noisy: &[&'static str]) -> BonniePlan {
        BonniePlan { repeats: 1, ..plan.clone() }
    }

    fn stored_facts(record: &iomatrix_store::Records<'_>) -> iomatrix_store::reader::SuiteFacts {
        crate::stored::facts(record)
    }

    fn tables(run: &StoredRun) -> String {
        crate::render::report(run)
    }

    /// bonnie++'s `-u`/`-g`: the switch, before the working folder is made.
    fn before_files(&self) -> anyhow::Result<()> {
        match self.front.as_ref().and_then(|f| f.switch.as_ref()) {
            Some(switch) => switch.apply(),
            None => Ok(()),
        }
    }

    /// Under bonnie++'s command line: bonnie++'s CSV line(s) after the
    /// tables (alone on standard output with `-q`), as bonnie++ prints them
    /// at the end of a run; a run that did not complete prints none, as
    /// bonnie++ prints none when it fails.
    fn after_tables(&self, run: &StoredRun) -> anyhow::Result<()> {
        let Some(front) = &self.front else { return Ok(()) };
        if run.summary.status != RunStatus::Complete {
            return Ok(());
        }
        iomatrix_harness::out::print(&crate::render::csv(run, front.machine.as_deref()))
    }
}

/// How the data file came to be as each test found it, in plain words (the run condition
/// `prepare`): bonnie++'s way, which the suite follows, and what each cell's `cached_at_start` says.
fn prepare(plan: &BonniePlan, on_server: bool) -> String {
    let writers = if plan.tests().iter().any(|t| t.is_per_char()) {
        "putc and block write each create"
    } else {
        "block write creates"
    };
    let mut said = format!(
        "written by the tests themselves, as bonnie++ does: {writers} the data file (empty at their start); rewrite, \
         getc, block read and seeks find it as the earlier tests and the kernel left it; nothing drops it from the \
         page cache (bonnie++ counts on a file of twice the RAM instead)"
    );
    if plan.sync || plan.fsync_close {
        said += "; each test fsyncs before its close, inside the timing: durable, still cached";
    }
    if plan.direct {
        said += "; O_DIRECT (-D/--direct) for block write, rewrite, block read and seeks: they bypass the cache, and \
                 an O_DIRECT write evicts what it overwrites; putc and getc stay buffered";
    }
    said += "; removed after the seek test. The file tests make, stat and delete their own small files. ";
    said += if on_server {
        "Cached at each test's start: not recorded (a server's cache: not visible from the client)"
    } else {
        "Cached at each data test's start: mincore of every client's data file after the test's untimed open, just \
         before the start barrier, summed (cached_at_start)"
    };
    said
}

/// Which of Bonnie's tests write and check stamped blocks, and what differs from bonnie++ then.
fn verify_scope(plan: &BonniePlan) -> String {
    let checks = if plan.content.verify {
        "rewrite checks each block it reads (generation 1) and block read checks every block (generation 2, so a \
         block still at 1 is a lost rewrite, counted stale)"
    } else {
        "nothing is checked (no --verify)"
    };
    format!(
        "putc and block write write stamped blocks of generation 1; rewrite writes each chunk back stamped as \
         generation 2 instead of bonnie++'s one-byte change; {checks}; getc and the seek test are not checked (the \
         seekers write back what they read with one byte changed, as bonnie++)"
    )
}

/// bonnie++'s twice-the-RAM rule on a server, as stated with the run.
fn remote_ram_rule(plan: &BonniePlan) -> String {
    match plan.ram {
        Some(ram) if ram.bytes() > 0 && !plan.allow_cache => format!(
            "the twice-the-RAM rule held the file size against the server's RAM as stated with -r/--ram ({ram})"
        ),
        _ => "the twice-the-RAM rule is not applied: this machine's RAM does not matter and the server's is unknown \
              to the client (state it with -r/--ram to apply the rule)"
            .to_string(),
    }
}
