//! The flags `compare` and `sweep` share for their numbers: `--precision N` (the decimals of
//! every change and figure the text prints) and `--exclude CELL` (a cell left out of the means,
//! and said so), and compare's `--derive`.

use clap::Args;
use iomatrix_analysis::{exclude_from_means, Comparison, Partial};
use iomatrix_core::{human, UsageError};

/// `--precision` and `--exclude`.
#[derive(Args, Debug, Default, Clone)]
pub struct NumberArgs {
    /// Decimals of every % change and every figure the text prints (seed 003 prints its % change
    /// to 3: --precision 3 gives -75.852% for -75.8517%, -75.851% with --rounding toward-zero as
    /// the seed wrote it). Without it, the one rule: a change to 1 decimal, a
    /// figure to 2 decimals at least and 3 significant digits (docs/compare.md). JSON always
    /// holds every digit
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=12))]
    pub precision: Option<u8>,

    /// How the last decimal shown is reached: nearest, or toward-zero (the digits after it cut
    /// off, as seed 003 wrote its % change column: -75.8517 as -75.851) to print a published table
    /// as it was printed
    #[arg(long, value_enum, value_name = "nearest|toward-zero", default_value = "nearest")]
    pub rounding: Rounding,

    /// Leave this cell out of the means, as the tables name it (--exclude 'backward-read
    /// 512k/64k'): compare's record-size and file-size views, overall change and --files/--records
    /// region; sweep's averages, totals by direction and read/write ratios. Its figures are still
    /// shown, and the output names it (repeatable)
    #[arg(long = "exclude", value_name = "CELL")]
    pub exclude: Vec<String>,
}

/// `--rounding`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Rounding {
    #[default]
    Nearest,
    TowardZero,
}

impl NumberArgs {
    /// `render` with the figures and changes at `--precision`'s decimals, if given, rounded as
    /// `--rounding` says.
    pub fn render<T>(&self, render: impl FnOnce() -> T) -> T {
        let rounding = match self.rounding {
            Rounding::Nearest => human::Rounding::Nearest,
            Rounding::TowardZero => human::Rounding::TowardZero,
        };
        human::with_precision(self.precision.map(usize::from), rounding, render)
    }
}

/// `compare --exclude`: the cells left out of the matrices' means.
pub fn exclude(c: &mut Comparison, cells: &[String]) -> Result<(), UsageError> {
    exclude_from_means(c, cells).map_err(UsageError::from)
}

/// `--include-partial` (compare, sweep, report) as the analysis takes it.
pub fn partial(include: bool) -> Partial {
    if include {
        Partial::Included
    } else {
        Partial::LeftOut
    }
}

/// `--include-partial` and `--include-disturbed` (compare, sweep, report) as the analysis takes them.
pub fn admit(include_partial: bool, include_disturbed: bool) -> iomatrix_analysis::Admit {
    let disturbed =
        if include_disturbed { iomatrix_analysis::Disturbed::Included } else { iomatrix_analysis::Disturbed::LeftOut };
    iomatrix_analysis::Admit { partial: partial(include_partial), disturbed }
}
