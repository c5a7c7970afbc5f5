//! What analysis and the reports need to know of a suite beyond its cells, said by the suite
//! itself: shared code never names a suite.

use iomatrix_core::figures::Metric;

/// How a suite's cells are laid out and summarised. Each suite declares its own (the binary's
/// suite table hands it down with the runs); a suite this build does not know is [`SuiteShape::PLAIN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SuiteShape {
    /// Its cells with a file size, a record size and no variant form matrices, one per test
    /// (IOzone's: file sizes down, record sizes across); the cells of a suite without one are
    /// scalar rows, whatever sizes they carry.
    pub matrix: bool,
    /// Its cells are each one operation timed whole and keep no percentiles (Bonnie's tests): a
    /// cell's latency summary is its mean (wall time over operations) and its slowest operation,
    /// under this phase name. None: a cell's summaries are the percentile objects in its metrics.
    pub whole_cell_latency: Option<&'static str>,
    /// The figures the suite measures beside each cell's rate (its `%CPU`: [`CPU_PERCENT`]),
    /// declared in its crate's `figures.rs`: compare gives each its own row after the cell's
    /// figure, with % change and its own direction, and sweep a table of them per level.
    ///
    /// [`CPU_PERCENT`]: iomatrix_core::figures::CPU_PERCENT
    pub beside: &'static [Metric],
    /// The plan fields that hold each swept parameter's list (`sweep --by qd`: access's
    /// `queue_depths`): two runs swept by it differ in them, which compare's sweep hint does not
    /// count as another difference.
    pub swept_fields: &'static [SweptFields],
    /// Its users read a cell's operations per second first (filebench's personalities): compare
    /// gives each cell's ops/s row before its KB/s.
    pub leads_with_operations: bool,
}

/// The plan fields of a suite that hold the levels of one parameter `sweep --by` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweptFields {
    /// sweep's `--by` name ("qd", "record", "file", "read", "random").
    pub by: &'static str,
    /// The plan's fields (top-level names) that hold its list.
    pub plan_fields: &'static [&'static str],
}

impl SuiteShape {
    /// Scalar rows and percentile summaries, nothing measured beside the rates.
    pub const PLAIN: SuiteShape = SuiteShape {
        matrix: false,
        whole_cell_latency: None,
        beside: &[],
        swept_fields: &[],
        leads_with_operations: false,
    };

    /// The plan fields that hold the list of the parameter `by`; none where the suite names none.
    pub fn plan_fields(&self, by: &str) -> &'static [&'static str] {
        self.swept_fields.iter().find(|s| s.by == by).map_or(&[], |s| s.plan_fields)
    }
}
