//! The IOzone suite through the harness: one cell per test of each file /
//! record pair; noisy pairs measured again.

use crate::{CellResult, CellSink, CellSpec, IozonePlan, IozoneTest};
use anyhow::Context;
use iomatrix_analysis::{SuiteShape, SweptFields};
use iomatrix_backend::Place;
use iomatrix_coord::{Ending, Group, Setup};
use iomatrix_core::human::bytes as human;
use iomatrix_core::{BackendKind, ByteSize};
use iomatrix_harness::clients::{failed_note, slowest_note};
use iomatrix_harness::data;
use iomatrix_harness::limits::default_stack;
use iomatrix_harness::{Cost, Demand, NoLive, Prepared, RunSpec, Suite, Target};
use iomatrix_report::kind::ReportKind;
use iomatrix_report::text::clients::ClientColumns;
use iomatrix_store::{CellRow, StoredRun};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The workbook `--xlsx FILE` (or IOzone's `-b FILE`) asks for, and where it goes once the
/// guarded writer judged FILE ([`Iozone::check_outputs`]).
pub struct Workbook {
    path: PathBuf,
    flag: &'static str,
    force: bool,
    /// An Excel 2.1 (BIFF2) .xls worksheet, as IOzone's `-b` writes, rather than .xlsx.
    xls: bool,
    checked: Option<iomatrix_guard::Checked>,
}

impl Workbook {
    /// `--xlsx FILE`: an .xlsx workbook whatever FILE's name.
    pub fn xlsx(path: PathBuf, flag: &'static str, force: bool) -> Workbook {
        Workbook { path, flag, force, xls: false, checked: None }
    }

    /// IOzone's `-b FILE`: an .xlsx workbook when FILE ends in .xlsx, else the .xls
    /// worksheet IOzone writes whatever the name.
    pub fn iozone(path: PathBuf, flag: &'static str, force: bool) -> Workbook {
        let xlsx = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("xlsx"));
        Workbook { path, flag, force, xls: !xlsx, checked: None }
    }
}

/// What rank 0 keeps of an IOzone run besides its plan: the front ends' extra output.
pub struct Iozone {
    /// IOzone's classic table (a line per file and record size) after the tables, as IOzone
    /// prints by default: the front end's.
    pub classic_table: bool,
    /// IOzone's `-R` report after the tables.
    pub excel_report: bool,
    /// The tables as an .xlsx workbook too (`--xlsx`, IOzone's `-b`).
    pub xlsx: Option<Workbook>,
    /// The record sizes (KiB) the report's and the workbook's header lists
    /// besides those that ran: IOzone's list for the front end's flags.
    pub report_records_kib: Vec<u64>,
    /// IOzone's `-t` mode: the report and workbook are IOzone's throughput
    /// report, one line per test, not the matrices.
    pub throughput: bool,
    /// Run from IOzone's command line (`iomatrix iozone`): the summary's flags are IOzone's.
    pub front_end: bool,
}

impl Iozone {
    /// Judges the workbook's path (`--xlsx`, IOzone's `-b`) by the guarded writer
    /// (`iomatrix-guard`) against the results database `db` before anything runs: a refusal
    /// ends the run before its first cell, not after its last.
    pub fn check_outputs(&mut self, db: &Path) -> anyhow::Result<()> {
        if let Some(book) = &mut self.xlsx {
            let output = iomatrix_guard::Output {
                path: &book.path,
                flag: book.flag,
                kind: if book.xls { &iomatrix_report::XlsKind } else { &ReportKind::Xlsx },
                force: book.force,
                database: Some(db),
            };
            book.checked = Some(output.check()?);
        }
        Ok(())
    }
}

impl Suite for Iozone {
    const NAME: &'static str = "iozone";
    const SHAPE: SuiteShape = SuiteShape {
        matrix: true,
        whole_cell_latency: None,
        beside: crate::figures::BESIDE,
        swept_fields: &[
            SweptFields { by: "record", plan_fields: &["record_sizes"] },
            SweptFields { by: "file", plan_fields: &["file_sizes"] },
        ],
        leads_with_operations: false,
    };
    const CLIENT_COLUMNS: &'static ClientColumns = &crate::render::CLIENT_COLUMNS;
    type Args = super::args::RunIozoneArgs;
    type Plan = IozonePlan;
    type Cell = CellResult;
    type Live = NoLive;
    /// Samples are compared per test of a file/record pair.
    type Key = (ByteSize, ByteSize, IozoneTest);

    fn prepare(args: Self::Args, mpi_ranks: Option<usize>, db: &Path) -> anyhow::Result<Prepared<Self>> {
        let (plan, run) = args.validate(mpi_ranks)?;
        let report_records_kib = plan.record_sizes_kib();
        let xlsx = args.xlsx.clone().map(|path| Workbook::xlsx(path, "--xlsx", args.force));
        let mut suite = Iozone {
            classic_table: false,
            excel_report: false,
            xlsx,
            report_records_kib,
            throughput: false,
            front_end: false,
        };
        suite.check_outputs(db)?;
        Ok(Prepared { suite, plan, run })
    }

    fn spec(&self, plan: &IozonePlan, target: &Target, _clients: usize) -> RunSpec {
        let largest = plan.largest_file();
        let mut conditions = json!({
            "cache": if plan.direct { "bypassed (O_DIRECT; fwrite/fread tests buffered)" } else { "page cache in use" },
            "fsync_timed": plan.fsync,
            "close_timed": plan.close,
            "prepare": prepare(plan, target.server().is_some()),
        });
        data::add_conditions(&mut conditions, &plan.content);
        if target.server().is_some() {
            // The harness says what a protocol client's run shares.
            let c = conditions.as_object_mut().expect("an object");
            c.remove("cache");
        }
        RunSpec {
            peak_bytes: plan.peak_bytes(),
            peak_detail: format!("{} client(s) x largest file {largest}", plan.clients),
            backend: plan.backend,
            direct: plan.direct,
            conditions,
            keep_cell_lines: false,
            quiet: false,
            uncached_hint: "use --direct, or files larger than RAM,",
            uncached_flags: if self.front_end {
                |twice_ram| format!("-I (O_DIRECT), or -s {twice_ram}")
            } else {
                |twice_ram| format!("--direct, or --files {twice_ram}")
            },
            cache_dropped: false,
        }
    }

    /// Each client is one thread (the std's default stack) holding one
    /// aligned buffer of the largest record (crates/iozone's runner); with
    /// `--backend mmap` it maps its whole file: address space, not memory.
    /// A cell's figures and the stdio backend's 4 KiB buffer do not grow
    /// with the sizes: not counted.
    fn demand(&self, plan: &IozonePlan, _target: &Target, clients_here: usize) -> Demand {
        let record = plan.largest_record();
        let mapped = match plan.backend {
            BackendKind::Mmap => plan.largest_file().bytes(),
            _ => 0,
        };
        // And a series recorder's fixed part (its intervals grow with the cell's time).
        let series = iomatrix_stats::SeriesRecorder::footprint(0);
        let client = Cost::threads(1, default_stack()).plus(Cost::memory(record + series)).plus(Cost::mapped(mapped));
        Demand::of_clients(
            clients_here,
            client,
            format!("{clients_here} client thread(s), each with a buffer of the largest record, {}", human(record)),
        )
        .knob_bytes("--records", record, Cost::memory(clients_here as u64))
    }

    fn cells(plan: &IozonePlan) -> Vec<String> {
        plan.cells().iter().map(CellSpec::describe).collect()
    }

    /// Each cell moves its file once.
    fn work(plan: &IozonePlan) -> Vec<iomatrix_harness::progress::CellWork> {
        plan.cells().iter().map(|c| iomatrix_harness::progress::CellWork::Bytes(c.file_size.0)).collect()
    }

    fn live(_plan: &IozonePlan, _slots: usize) -> NoLive {
        NoLive
    }

    fn execute(
        plan: &IozonePlan,
        group: &Group<'_>,
        setup: &Setup<'_>,
        place: &Place<'_>,
        _live: &NoLive,
        on_cell: &mut dyn FnMut(&CellResult) -> Result<(), iomatrix_store::StoreError>,
    ) -> std::io::Result<Option<(usize, Ending)>> {
        iomatrix_harness::clients::needs_folder("the IOzone suite", place, setup)?;
        crate::execute_at(plan, group, setup, place, &mut Handed(on_cell))
    }

    fn row(&self, _plan: &IozonePlan, cell: &CellResult) -> CellRow {
        cell.row()
    }

    fn done_line(&self, cell: &CellResult) -> String {
        let mut line =
            format!("{}: {:.0} KB/s, CPU {:.0}%", cell.spec.describe(), cell.kib_per_sec(), cell.cpu_percent());
        if let Some(slowest) = cell.slowest() {
            line += &slowest_note(cell.clients.len(), slowest.rank, &format!("{:.0} KB/s", slowest.kib_per_sec()));
        }
        line += &failed_note(cell.figures.failed_clients.len());
        if let Some(found) = cell.figures.verify.as_ref().filter(|t| t.mismatches() > 0) {
            line += &format!(", {} DATA MISMATCH(ES)", found.mismatches());
        }
        line
    }

    fn key(&self, cell: &CellResult) -> Self::Key {
        cell.spec.key()
    }

    fn again(plan: &IozonePlan, noisy: &[Self::Key]) -> IozonePlan {
        plan.again(noisy)
    }

    fn stored_facts(record: &iomatrix_store::Records<'_>) -> iomatrix_store::reader::SuiteFacts {
        let condition_lines = iomatrix_harness::timed::fsync_close_line(record).into_iter().collect();
        let compared = iomatrix_harness::timed::fsync_close_compared(record);
        iomatrix_store::reader::SuiteFacts { condition_lines, compared, ..Default::default() }
    }

    fn tables(run: &StoredRun) -> String {
        crate::render::tables(run)
    }

    fn after_tables(&self, run: &StoredRun) -> anyhow::Result<()> {
        let matrices = crate::render::throughput_matrices(run);
        if self.classic_table {
            iomatrix_harness::out::print("\n")?;
            iomatrix_harness::out::print(&crate::render::classic_table(run))?;
        }
        if self.excel_report {
            if self.throughput {
                iomatrix_harness::out::print(&iomatrix_report::throughput_report(&crate::render::throughput_reports(
                    run,
                )))?;
            } else {
                iomatrix_harness::out::print("\nExcel output is below:\n")?;
                iomatrix_harness::out::print(&iomatrix_report::excel_report(&matrices, &self.report_records_kib))?;
            }
        }
        if let Some(book) = &self.xlsx {
            let checked =
                book.checked.as_ref().context("the workbook's path was not checked before the run (a bug)")?;
            let conditions = iomatrix_report::text::run::condition_pairs(run);
            let not_complete = iomatrix_report::text::run::not_complete_lines(run);
            let records = &self.report_records_kib;
            let bytes = match (book.xls, self.throughput) {
                (false, true) => {
                    let reports = crate::render::throughput_reports(run);
                    iomatrix_report::throughput_workbook(&reports, &conditions, &not_complete)
                        .map_err(anyhow::Error::from)
                }
                (false, false) => iomatrix_report::xlsx_workbook(&matrices, records, &conditions, &not_complete)
                    .map_err(anyhow::Error::from),
                (true, true) => {
                    let reports = crate::render::throughput_reports(run);
                    iomatrix_report::xls_throughput_workbook(&reports, &conditions, &not_complete)
                        .map_err(anyhow::Error::from)
                }
                (true, false) => iomatrix_report::xls_workbook(&matrices, records, &conditions, &not_complete)
                    .map_err(anyhow::Error::from),
            }
            .context("cannot build the workbook")?;
            checked.write(&bytes)?;
            eprintln!("iomatrix: wrote {}", checked.path().display());
        }
        Ok(())
    }
}

/// How each cell's file came to be as its test found it, in plain words (the run condition
/// `prepare`): IOzone's way, which the suite follows, and what each cell's `cached_at_start` says.
fn prepare(plan: &IozonePlan, on_server: bool) -> String {
    let mut said = String::from(
        "written by the tests themselves, as IOzone does: each file/record pair's write test creates the file (empty \
         at its start); the pair's later tests find it as the earlier ones and the kernel left it (a pair without \
         write or fwrite: laid out untimed in its record size, fsynced); nothing drops it from the page cache",
    );
    if plan.fsync {
        said += " (-e/--fsync makes the writes durable inside the timing; their pages stay cached)";
    }
    if plan.direct {
        said += "; O_DIRECT (-I/--direct): the tests' own reads and writes bypass the cache, fwrite and fread \
                 excepted, and an O_DIRECT write evicts what it overwrites";
    }
    said += "; removed after the pair's last test. ";
    said += if on_server {
        "Cached at each cell's start: not recorded (a server's cache: not visible from the client)"
    } else {
        "Cached at each cell's start: mincore of every client's file just before the start barrier, summed \
         (cached_at_start)"
    };
    said
}

/// The crate's sink, handing each cell on.
struct Handed<'a>(&'a mut dyn FnMut(&CellResult) -> Result<(), iomatrix_store::StoreError>);

impl CellSink for Handed<'_> {
    type Error = iomatrix_store::StoreError;
    fn cell_done(&mut self, cell: &CellResult) -> Result<(), iomatrix_store::StoreError> {
        (self.0)(cell)
    }
}
