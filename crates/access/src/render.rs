//! Access-spec runs: one line per cell with IOPS, MiB/s, latency
//! percentiles for reads and writes, and CPU.

use crate::figures::{IOPS, MIB_PER_SEC};
use crate::AccessCellFigures;
use iomatrix_core::figures::CPU_PERCENT;
use iomatrix_core::{human, BackendKind, Figures, Metric};
use iomatrix_report::document::{marked, MARKS_LEGEND};
use iomatrix_report::table::{Column, Table};
use iomatrix_stats::steady::{Criterion, Figure, Measure, SteadyVerdict, SNIA_EXCURSION, SNIA_RANGE};
use iomatrix_store::{CellRow, StoredRun};

/// A stored access run as its table: one row per cell with its mix, rates, latency
/// percentiles and marks, and the page cache's share where the run looked.
pub fn table(run: &StoredRun) -> String {
    // Runs that looked at the page cache say what it held; older runs and servers' keep their table.
    let looked = run.cell_results.iter().any(|c| figures(c).cached_at_start.is_some());
    // io_uring cells say what each request cost the clients' threads: how io_uring tools are
    // judged beside each other (fio's usr_cpu and sys_cpu, t/io_uring's IOPS per core).
    let per_request = run.cell_results.iter().any(|c| c.backend == BackendKind::IoUring.name());
    // A curve's points share their setting: their load tells them apart.
    let curved = run.cell_results.iter().any(|c| figures(c).mix.load.is_some());
    let mut columns =
        vec![Column::right("bs", 6), Column::right("read", 5), Column::right("rand", 5), Column::right("qd", 4)];
    if curved {
        columns.push(Column::right("load", 6));
    }
    columns.extend([
        Column::right("IOPS", 10),
        Column::right("MiB/s", 9),
        Column::right("rd mean", 9).gap(" | "),
        Column::right("rd p50", 9),
        Column::right("rd p99", 9),
        Column::right("rd p99.9", 9),
        Column::right("rd max", 9),
        Column::right("wr p50", 9).gap(" | "),
        Column::right("wr p99", 9),
        Column::right("CPU%", 5).gap(" | "),
    ]);
    if per_request {
        columns.push(Column::right("usr/IO", 9));
        columns.push(Column::right("sys/IO", 9));
    }
    if looked {
        columns.push(Column::right("cached", 6).gap(" | "));
    }
    let mut table = Table::new(columns);
    for c in &run.cell_results {
        let f = figures(c);
        let lat = |ns: u64| latency(ns as f64);
        // A partial cell's figures are of the clients that finished (marked); a failed one has none.
        let figure =
            |metric: Metric| marked(c.state.kind, || human::fixed(f.value(metric.id).unwrap_or(0.0), metric.precision));
        let mut row = vec![
            iomatrix_core::ByteSize(f.block_size.unwrap_or(0)).to_string(),
            format!("{}%", f.mix.read_percent),
            format!("{}%", f.mix.random_percent),
            f.mix.queue_depth.to_string(),
        ];
        if curved {
            row.push(f.mix.load.map_or("-".into(), |l| l.to_string()));
        }
        row.extend([
            figure(IOPS),
            figure(MIB_PER_SEC),
            latency(f.read.mean_ns),
            lat(f.read.p50_ns),
            lat(f.read.p99_ns),
            lat(f.read.p99_9_ns),
            lat(f.read.max_ns),
            lat(f.write.p50_ns),
            lat(f.write.p99_ns),
            c.cpu_percent.map_or("-".into(), |p| human::fixed(p, 0)),
        ]);
        if per_request {
            row.push(marked(c.state.kind, || cpu_per_request(c, c.user_ns)));
            row.push(marked(c.state.kind, || cpu_per_request(c, c.sys_ns)));
        }
        if looked {
            row.push(f.cached_at_start.map_or("-".into(), |held| human::fixed(held.percent(), 0) + "%"));
        }
        table.row(row);
    }
    let mut out = format!("\n{}", table.render());
    if per_request {
        out.push_str(PER_REQUEST_LEGEND);
    }
    if looked {
        out.push_str(CACHED_LEGEND);
    }
    if run.cell_results.iter().any(|c| !c.state.is_complete()) {
        out.push_str(MARKS_LEGEND);
        out.push('\n');
    }
    out.push_str(&curves(run));
    out.push_str(&latency_targets(run));
    out.push_str(&steady_lines(run));
    out.push_str(&split_lines(run));
    out + &iomatrix_report::text::clients::table(run, &CLIENT_COLUMNS)
}

/// Each throughput-latency curve of the run (`--curve`) as a table of its points, with its
/// figures under it: the maximum within the bound and SPEC SFS 2014's overall response time.
fn curves(run: &StoredRun) -> String {
    let points: Vec<(&CellRow, AccessCellFigures)> =
        run.cell_results.iter().map(|c| (c, figures(c))).filter(|(_, f)| f.curve.is_some()).collect();
    let mut out = String::new();
    // A curve starts at its maximum.
    for curve in points.chunk_by(|_, (_, next)| next.mix.load != Some(iomatrix_core::CurveLoad::Max)) {
        out.push_str(&curve_table(curve));
    }
    out
}

/// One curve's points (its maximum first) and its figures, from its last stored point.
fn curve_table(points: &[(&CellRow, AccessCellFigures)]) -> String {
    let Some((_, first)) = points.first() else { return String::new() };
    let Some(last) = points.last().and_then(|(_, f)| f.curve.clone()) else { return String::new() };
    let shown: Vec<iomatrix_harness::curve::ShownPoint> = points
        .iter()
        .map(|(c, f)| iomatrix_harness::curve::ShownPoint {
            load: f.mix.load,
            offered_per_sec: f.open_loop.map(|o| o.offered_per_sec),
            achieved: marked(c.state.kind, || human::fixed(f.iops, 0)),
            cpu_percent: c.cpu_percent,
            late: f.open_loop.map(|o| o.late),
            backlog: f.open_loop.map(|o| o.backlog),
            figures: f.curve.clone().unwrap_or_default(),
        })
        .collect();
    let name =
        AccessCellFigures::name(first.block_size.unwrap_or(0), &iomatrix_core::IoMix { load: None, ..first.mix });
    let heading = format!(
        "curve {name}: maximum {} IOPS (closed loop, latency from issue; the points after it are open loop, latency \
         from each request's intended start)",
        human::fixed(last.max_iops, 0)
    );
    iomatrix_harness::curve::text(&heading, "IOPS", &shown)
}

/// Under the table, a line per cell run under `--latency-target`: what was asked and what each
/// client's search found (once where every client found the same). The table's qd is the most
/// the search tried.
fn latency_targets(run: &StoredRun) -> String {
    let mut out = String::new();
    for c in &run.cell_results {
        let f = figures(c);
        let Some(first) = f.latency_target.first() else { continue };
        let said: Vec<String> = f.latency_target.iter().map(crate::TargetOutcome::describe).collect();
        let found = if said.iter().all(|d| *d == said[0]) {
            said[0].clone()
        } else {
            said.iter().enumerate().map(|(rank, d)| format!("client {rank}: {d}")).collect::<Vec<_>>().join("; ")
        };
        out.push_str(&format!("latency target, {}: {}: {found}\n", f.cell_name(), first.target.describe()));
    }
    out
}

/// One line per cell that judged a steady state (`--steady-state`): its verdict, the rule, and
/// the window it judged last.
fn steady_lines(run: &StoredRun) -> String {
    let mut out = String::new();
    for c in &run.cell_results {
        let f = figures(c);
        if let Some(v) = &f.steady {
            out += &format!("steady state, {}: {}\n", f.cell_name(), steady_text(v));
        }
        for (rank, v) in f.steady_by_rank.iter().enumerate() {
            out += &format!("steady state, {}, rank {rank}: {}\n", f.cell_name(), steady_text(v));
        }
    }
    out
}

/// One line per cell of mixed block sizes (`--bssplit`): each size's share asked and the share
/// of the requests it took, reads and writes apart where the cell did both.
fn split_lines(run: &StoredRun) -> String {
    let mut out = String::new();
    for c in &run.cell_results {
        let f = figures(c);
        let Some(done) = &f.block_split else { continue };
        let mut parts = Vec::new();
        for (write, word, asked) in [(false, "reads", &done.split.reads), (true, "writes", &done.split.writes)] {
            let made = done.counts.shares(write);
            if done.counts.sizes.iter().all(|e| if write { e.2 == 0 } else { e.1 == 0 }) {
                continue;
            }
            let sizes: Vec<String> = asked
                .iter()
                .map(|s| {
                    let took = made.iter().find(|(size, _)| *size == s.size.bytes()).map_or(0.0, |(_, p)| *p);
                    format!("{} {}% (took {}%)", s.size, s.percent, human::fixed(took, 1))
                })
                .collect();
            parts.push(format!("{word} {}", sizes.join(", ")));
        }
        let said = if parts.is_empty() { "no request completed".to_string() } else { parts.join("; ") };
        out += &format!("block sizes, {} (bssplit {}): {said}\n", f.cell_name(), done.split.describe());
    }
    out
}

/// A verdict in words: "attained after 4 s (iops:5% over 3 s): mean 1983 IOPS, max deviation
/// 1.68% (limit 5%); window 2000, 2000, 1950 IOPS".
pub fn steady_text(v: &SteadyVerdict) -> String {
    let rule = &v.rule;
    let verdict = match (v.attained_at_ns, v.windows_judged) {
        (Some(at), _) => format!("attained after {}", seconds(at)),
        (None, 0) => "not attained: the cell ended before a whole window was measured".to_string(),
        (None, _) => "not attained".to_string(),
    };
    let ramp = if rule.ramp_ns > 0 { format!(" after a ramp of {}", seconds(rule.ramp_ns)) } else { String::new() };
    let figure = rule.criterion.figure();
    let judged = match rule.criterion {
        Criterion::Fio { measure, limit, percent, .. } => {
            let shown = |x: f64| if percent { human::fixed(x, 2) + "%" } else { rate(figure, x) };
            let name = if measure == Measure::Slope { "slope per sample" } else { "max deviation" };
            let limit = if percent { format!("{limit}%") } else { rate(figure, limit) };
            format!("{name} {} (limit {limit})", v.signed_criterion().map_or("-".to_string(), shown))
        }
        Criterion::Snia { .. } => format!(
            "range {}% of the mean (limit {}%), best-fit excursion {}% (limit {}%)",
            human::fixed(v.percent_of_mean(v.range), 1),
            human::fixed(SNIA_RANGE * 100.0, 0),
            human::fixed(v.percent_of_mean(v.excursion()), 1),
            human::fixed(SNIA_EXCURSION * 100.0, 0)
        ),
    };
    let window: Vec<String> = v
        .window
        .iter()
        .map(|s| match figure {
            Figure::Iops => s.iops.to_string(),
            Figure::Bw => human::fixed(s.bw as f64 / 1048576.0, 1),
        })
        .collect();
    format!(
        "{verdict} ({} over {}{ramp}, samples of {}): mean {}, {judged}; window {} {}",
        rule.criterion,
        seconds(rule.window_ns),
        seconds(v.sample_ns),
        rate(figure, v.mean),
        if window.is_empty() { "-".to_string() } else { window.join(", ") },
        unit(figure)
    )
}

/// A rate of `figure`: `1983 IOPS`, `7.8 MiB/s`.
fn rate(figure: Figure, x: f64) -> String {
    match figure {
        Figure::Iops => human::fixed(x, 0) + " IOPS",
        Figure::Bw => human::fixed(x / 1048576.0, 1) + " MiB/s",
    }
}

fn unit(figure: Figure) -> &'static str {
    match figure {
        Figure::Iops => "IOPS",
        Figure::Bw => "MiB/s",
    }
}

/// `4 s`, `2.5 s`, `500 ms`.
pub(crate) fn seconds(ns: u64) -> String {
    match ns {
        ns if ns % 1_000_000_000 == 0 => format!("{} s", ns / 1_000_000_000),
        ns if ns >= 1_000_000_000 => human::fixed(ns as f64 / 1e9, 1) + " s",
        ns => format!("{} ms", ns / 1_000_000),
    }
}

/// Under a table with the page cache's column: what it is, where the run's `prepare` condition says how.
const CACHED_LEGEND: &str =
    "cached: share of the clients' files in the page cache when the cell began (mincore); how they were prepared: \
     the prepared line above\n";

/// Under a table with CPU per request: where the figures come from.
const PER_REQUEST_LEGEND: &str = "usr/IO, sys/IO: CPU time per request, user and system: the clients' threads' own \
                                  (getrusage) over the cell's requests\n";

/// The clients' CPU time `ns` (user or system) over the cell's requests; `-` where the source has no
/// CPU figure or the cell completed no request.
fn cpu_per_request(c: &CellRow, ns: u64) -> String {
    if c.ops == 0 || c.value(CPU_PERCENT.id).is_none() {
        return "-".into();
    }
    human_ns(ns as f64 / c.ops as f64)
}

/// `830 ns`, `12.4 us`, `3.10 ms`, `1.25 s` (the one formatter, in core).
pub use human::nanos as human_ns;

/// An access cell's stored figures; a row that does not hold them shows zeros.
fn figures(c: &CellRow) -> AccessCellFigures {
    AccessCellFigures::read(&c.metrics, c.record_size)
        .unwrap_or_else(|| AccessCellFigures { block_size: c.record_size, ..Default::default() })
}

/// `830 ns`, `12.4 us`, `3.10 ms`, `1.25 s`; `-` where there were no requests.
pub fn latency(ns: f64) -> String {
    if ns <= 0.0 {
        "-".into()
    } else {
        human_ns(ns)
    }
}

/// How the shared clients table shows an access cell: its name and each client's MiB/s.
pub const CLIENT_COLUMNS: iomatrix_report::text::clients::ClientColumns =
    iomatrix_report::text::clients::ClientColumns {
        unit: "MiB/s",
        describe: |c| figures(c).cell_name(),
        aggregates: |c| {
            let f = figures(c);
            (f.mib_per_sec_sum_of_clients, f.mib_per_sec, None)
        },
        client_rate: |f| f["mib_per_sec"].as_f64(),
        kib_per_unit: 1024.0,
    };
