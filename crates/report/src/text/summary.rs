//! The lines every run ends with: what ran and what failed, its best and worst figure with their
//! cells, whether the figures measure the storage or the page cache (and the flags that measure
//! the storage where they do not), where the run is stored and the commands that go on from it.
//! Written from the stored run, so it says what the database holds.

use iomatrix_analysis::{CacheVerdict, CellKey, Figure};
use iomatrix_core::figures::CachedAtStart;
use iomatrix_core::human;
use iomatrix_store::reader::is_machine_busy;
use iomatrix_store::{CellStateKind, StoredRun};
use std::fmt::Write;

/// What the summary needs besides the stored run.
pub struct SummaryContext<'a> {
    /// Whether the figures measure the storage or the page cache (the harness decides once).
    pub cache: CacheVerdict,
    /// The suite's flags that take a run past the page cache, as the user pastes them.
    pub uncached_flags: &'a str,
    /// The results database, as the user would name it.
    pub db: &'a str,
    /// ` --db PATH` where the commands need it to find the database, else empty.
    pub db_flag: &'a str,
    /// An earlier run of the same suite and plan to compare with, if the database holds one.
    pub previous: Option<i64>,
}

/// The summary, a heading and one line per item, ending in the commands that go on from here.
pub fn summary(run: &StoredRun, context: &SummaryContext<'_>) -> String {
    let s = &run.summary;
    let mut out = format!("\nsummary of run #{} ({}, {}):\n", s.id, s.suite, s.status.as_str());
    let cells = &run.cell_results;
    let count = |kind| cells.iter().filter(|c| c.state.kind == kind).count();
    let (partial, failed) = (count(CellStateKind::Partial), count(CellStateKind::Failed));
    let mut line = format!("  cells:  {} run of {} planned, {failed} failed", cells.len(), s.total_cells);
    if partial > 0 {
        let _ = write!(line, ", {partial} partial");
    }
    let disturbed: Vec<_> = cells.iter().filter(|c| c.state.kind == CellStateKind::Disturbed).collect();
    if !disturbed.is_empty() {
        let _ = write!(line, ", {} disturbed", disturbed.len());
    }
    if cells.len() < s.total_cells {
        let _ = write!(line, ", {} not run", s.total_cells - cells.len());
    }
    let _ = writeln!(out, "{line}");
    // A busy machine disturbs cells by the hundred: one line for them all beyond a few.
    let busy = disturbed.iter().filter(|c| c.state.cause.as_deref().is_some_and(is_machine_busy)).count();
    let disturbed = if busy > BUSY_CELLS_LISTED {
        let _ = writeln!(out, "{}", busy_machine_line(run, busy));
        disturbed.into_iter().filter(|c| !c.state.cause.as_deref().is_some_and(is_machine_busy)).collect()
    } else {
        disturbed
    };
    for cell in disturbed {
        let _ = writeln!(
            out,
            "  disturbed: cell {} ({}): {} (not a figure: left out of medians unless --include-disturbed)",
            cell.seq,
            cell.test,
            iomatrix_core::text::printable(&cell.state.describe())
        );
    }
    if let Some(error) = &s.error {
        let _ = writeln!(out, "  failed: {}", iomatrix_core::text::printable(error));
    }
    out.push_str(&best_and_worst(run));
    // A drop is judged by what its cells counted as still cached after it.
    let cache = context.cache.after_drop(cells.iter().filter_map(|c| c.figures().cached_at_start));
    let _ = writeln!(out, "  cache:  {}", cache_sentence(cache, context.uncached_flags));
    let _ = writeln!(out, "  stored: run #{} in {}", s.id, context.db);
    let flag = context.db_flag;
    let _ = writeln!(out, "  next:   iomatrix show {}{flag}", s.id);
    match context.previous {
        Some(before) => {
            let _ = writeln!(out, "          iomatrix compare {before} {}{flag}", s.id);
        }
        None => {
            let _ = writeln!(
                out,
                "          iomatrix compare RUN {}{flag}    (RUN: another run, from iomatrix runs)",
                s.id
            );
        }
    }
    let _ = writeln!(out, "          iomatrix report {} -o report.html{flag}", s.id);
    out
}

/// Cells disturbed by a busy machine listed one by one in the summary, at most.
const BUSY_CELLS_LISTED: usize = 3;

/// "  disturbed: 812 cells by a busy machine (other processes up to 190% of a CPU; ...)".
fn busy_machine_line(run: &StoredRun, busy: usize) -> String {
    let machine = run.machine_summary().map(|m| format!(" ({})", m.figures())).unwrap_or_default();
    format!(
        "  disturbed: {busy} cells by a busy machine{machine}: not figures, left out of medians unless \
         --include-disturbed (each cell's cause: iomatrix show {})",
        run.summary.id
    )
}

/// A cell's figure, what else says its speed (", 812 IOPS" or nothing), its name, and why it
/// is flagged (empty where it is not).
type Ranked = (f64, String, String, String);

/// The best and the worst figure of the run's whole cells, with their cells: one pair per unit
/// (KB/s and ops/s are not set against each other). Nothing where no whole cell has a figure.
fn best_and_worst(run: &StoredRun) -> String {
    let mix = run.suite_facts().size_mix;
    let group = iomatrix_analysis::Group::of("", std::slice::from_ref(run), iomatrix_analysis::SuiteShape::PLAIN);
    let why_flagged = |seq: usize| {
        let reasons: Vec<String> = group.flagged.iter().filter(|f| f.seq == seq).map(|f| f.reason()).collect();
        reasons.join("; ")
    };
    // Each whole cell's figure, and its name with what else says its speed (an access cell's IOPS).
    let mut by_unit: Vec<(&'static str, Vec<Ranked>)> = Vec::new();
    for cell in run.cell_results.iter().filter(|c| c.state.is_complete()) {
        let Some(figure) = Figure::of(cell) else { continue };
        let name = format!("{} (cell {})", CellKey::of(cell).named_by_mix(mix.as_deref()).describe(), cell.seq);
        // A cell of requests in a mix (an access spec) is read in requests per second too.
        let also = if cell.figures().mix().is_some() && cell.ops > 0 && cell.wall_ns > 0 {
            format!(", {}", per_second(cell.ops as f64 * 1e9 / cell.wall_ns as f64, "IOPS"))
        } else {
            String::new()
        };
        let ranked = (figure.value, also, name, why_flagged(cell.seq));
        match by_unit.iter_mut().find(|(unit, _)| *unit == figure.unit) {
            Some((_, figures)) => figures.push(ranked),
            None => by_unit.push((figure.unit, vec![ranked])),
        }
    }
    if by_unit.is_empty() {
        return "  best:   no whole cell has a figure\n".into();
    }
    let mut out = String::new();
    for (unit, figures) in by_unit {
        let by_value = |a: &&Ranked, b: &&Ranked| a.0.total_cmp(&b.0);
        let (Some(best), Some(worst)) = (figures.iter().max_by(by_value), figures.iter().min_by(by_value)) else {
            continue;
        };
        let _ = writeln!(out, "  best:   {}{} in {}{}", figure(best.0, unit), best.1, best.2, flagged_note(best));
        if figures.len() > 1 {
            let _ =
                writeln!(out, "  worst:  {}{} in {}{}", figure(worst.0, unit), worst.1, worst.2, flagged_note(worst));
        }
        // A flagged best or worst is not the run's figure: the best and worst of the others follow.
        let clean: Vec<&Ranked> = figures.iter().filter(|r| r.3.is_empty()).collect();
        let clean_best = clean.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0));
        let clean_worst = clean.iter().copied().min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(r) = clean_best.filter(|_| !best.3.is_empty()) {
            let _ = writeln!(out, "          best not flagged: {}{} in {}", figure(r.0, unit), r.1, r.2);
        }
        if let Some(r) = clean_worst.filter(|_| figures.len() > 1 && !worst.3.is_empty()) {
            let _ = writeln!(out, "          worst not flagged: {}{} in {}", figure(r.0, unit), r.1, r.2);
        }
    }
    out
}

/// After a best or worst cell that is flagged: why, so it is never named as a plain result.
fn flagged_note(ranked: &Ranked) -> String {
    if ranked.3.is_empty() {
        String::new()
    } else {
        format!(" (FLAGGED: {}; show lists it)", ranked.3)
    }
}

/// A figure in its unit, with KB/s also in bytes per second as a person reads it.
fn figure(value: f64, unit: &str) -> String {
    if unit == "KB/s" {
        format!("{} ({}/s)", per_second(value, unit), human::bytes_prose((value * 1024.0) as u64))
    } else {
        per_second(value, unit)
    }
}

/// A rate: whole from 1000 up (a live line's KB/s), the one rule of `human::significant` below.
fn per_second(value: f64, unit: &str) -> String {
    let digits = if value >= 1000.0 { human::fixed(value, 0) } else { human::significant(value) };
    format!("{digits} {unit}")
}

/// The cache verdict in one sentence, with the flags that measure the storage where the figures
/// do not.
pub fn cache_sentence(verdict: CacheVerdict, uncached_flags: &str) -> String {
    match verdict {
        CacheVerdict::Bypassed => "O_DIRECT bypassed the page cache: these figures measure the storage.".into(),
        CacheVerdict::Dropped => {
            "the page cache was dropped before the reads: the read figures measure the storage.".into()
        }
        CacheVerdict::DroppedButCached { cached_bytes, file_bytes } => format!(
            "the page cache was dropped before the reads, but {} stayed cached (pages another process maps or \
             has locked cannot be dropped by POSIX_FADV_DONTNEED): that part of the read figures is the page \
             cache, not the storage; end what maps the files (fuser -v FILE names it), then run again",
            CachedAtStart { cached_bytes, file_bytes }.describe()
        ),
        CacheVerdict::FilesExceedTwiceRam { ram_bytes } => format!(
            "the files are at least twice this machine's RAM ({}): these figures measure the storage.",
            human::bytes_prose(ram_bytes)
        ),
        CacheVerdict::Partly { ram_bytes } => format!(
            "the files exceed this machine's RAM ({}) but not twice over: part of these figures is the page \
             cache; to measure the storage, run again with {uncached_flags}",
            human::bytes_prose(ram_bytes)
        ),
        CacheVerdict::Cached { ram_bytes } => format!(
            "every file fits in this machine's RAM ({}): these figures measure the page cache, not the storage; \
             to measure the storage, run again with {uncached_flags}",
            human::bytes_prose(ram_bytes)
        ),
        CacheVerdict::Server => "through iomatrix's own protocol client, which keeps no cache: these figures \
                                 measure the server, whose own cache may serve what it is asked."
            .into(),
        CacheVerdict::ServerCached { ram_bytes } => format!(
            "every file fits in the server's RAM ({}): the server's page cache may serve these figures rather than \
             its storage; to measure its storage, run again with {uncached_flags}",
            human::bytes_prose(ram_bytes)
        ),
        CacheVerdict::ServerPartly { ram_bytes } => format!(
            "the files exceed the server's RAM ({}) but not twice over: part of these figures may be the \
             server's page cache; to measure its storage, run again with {uncached_flags}",
            human::bytes_prose(ram_bytes)
        ),
        CacheVerdict::ServerExceedsTwiceRam { ram_bytes } => format!(
            "the files are at least twice the server's RAM ({}): these figures measure the server's storage.",
            human::bytes_prose(ram_bytes)
        ),
        CacheVerdict::InMemory { fs_type } => format!(
            "the target is {fs_type}, a file system in RAM: these figures measure memory, not storage, whatever \
             the flags; to measure storage, run again with --target on a disk's file system"
        ),
        CacheVerdict::Unknown => {
            format!("this machine's RAM is not known, so neither is the page cache's part; {uncached_flags} measures the storage")
        }
    }
}

/// What a CPU % iomatrix took means, said under every table that shows one. `cpus`: the
/// CPUs of the machine the run ran on.
pub fn cpu_meaning(cpus: Option<u64>) -> String {
    let most = match cpus {
        Some(n) if n > 1 => format!(", at most {}% with the {n} CPUs of the machine it ran on", n * 100),
        _ => String::new(),
    };
    format!(
        "CPU %: CPU time (user + system) of the client threads that issued the cell's I/O, over the cell's wall \
         time (kernel threads working for them, such as io_uring's, not counted); 100% = one core busy for the \
         whole cell{most}.\n"
    )
}

/// What the CPU % of an imported run means: the tool's own figure, not one iomatrix took.
pub fn imported_cpu_meaning(tool: &str) -> String {
    format!("CPU %: as {tool} measured and reported it (its own definition; not measured by iomatrix).\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_run_says_so_and_gives_the_flags_to_paste() {
        let s = cache_sentence(CacheVerdict::Cached { ram_bytes: 8 << 30 }, "--direct, or --file-size 16g");
        assert!(s.contains("page cache, not the storage"), "{s}");
        assert!(s.ends_with("run again with --direct, or --file-size 16g"), "{s}");
        let s = cache_sentence(CacheVerdict::Bypassed, "--direct");
        assert!(s.contains("measure the storage") && !s.contains("--direct"), "{s}");
    }

    #[test]
    fn a_drop_that_left_a_part_cached_does_not_claim_the_storage() {
        let s = cache_sentence(CacheVerdict::DroppedButCached { cached_bytes: 256 << 20, file_bytes: 256 << 20 }, "");
        assert!(s.contains("100% of 256 MiB stayed cached") && s.contains("FADV_DONTNEED"), "{s}");
        assert!(!s.contains("measure the storage"), "{s}");
    }

    #[test]
    fn kib_per_second_is_also_shown_as_bytes_per_second() {
        assert_eq!(figure(14339327.0, "KB/s"), "14339327 KB/s (13.7 GiB/s)");
        assert_eq!(figure(812.4, "IOPS"), "812.40 IOPS", "two decimals, the one rule");
    }

    #[test]
    fn cpu_meaning_names_the_ceiling_on_this_machine() {
        assert!(cpu_meaning(Some(4)).contains("at most 400% with the 4 CPUs of the machine it ran on"));
        assert!(!cpu_meaning(None).contains("at most"));
    }
}
