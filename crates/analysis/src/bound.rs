//! One effect counted once. Figures a suite declares bound together by construction
//! ([`iomatrix_store::reader::BoundRates`]: a closed loop's per-operation rates, each the
//! loop's rate times a constant) move as one when the storage does: compare counts them as one
//! effect in its verdicts, with the loop's own rate (the phase's operations per second) as its
//! change and verdict, not as one "slower" per operation.

use crate::cells::{CellKey, Group};
use crate::compare::{NoiseSummary, OperationTable, ScalarRow};
use crate::noise::{judge, Judgement};
use crate::row::change_pct;
use serde::Serialize;

/// The rates of one phase bound together, counted as one effect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundEffect {
    /// The phase (the cells' name, as the operation tables head it).
    pub phase: String,
    /// What binds them: "flow loop".
    pub what: &'static str,
    /// The operations whose rates it holds.
    pub operations: Vec<String>,
    /// Whether the phase's operations per second row (the loop's rate) is part of it.
    pub with_total: bool,
    /// The loop's rate's change, B against A, in %.
    pub change_pct: f64,
    /// The per-operation rates' changes: the lowest and the highest, in %.
    pub range_pct: (f64, f64),
    /// The loop's rate's verdict: the effect's.
    pub verdict: Judgement,
}

impl BoundEffect {
    /// How many compared figures it holds.
    pub fn figures(&self) -> usize {
        self.operations.len() + usize::from(self.with_total)
    }

    /// "7 rates of one flow loop (run) and its ops/s: -15.4% (each -14.9% to -16.0%)".
    pub fn describe(&self) -> String {
        let pct = iomatrix_core::human::signed_percent;
        format!(
            "{} rates of one {} ({}){}: {} (each {} to {})",
            self.operations.len(),
            self.what,
            self.phase,
            if self.with_total { " and its ops/s" } else { "" },
            pct(self.change_pct),
            pct(self.range_pct.0),
            pct(self.range_pct.1)
        )
    }

    fn holds_rate(&self, phase: &str, operation: &str, figure: &str) -> bool {
        figure == "rate" && self.phase == phase && self.operations.iter().any(|o| o == operation)
    }

    fn holds_scalar(&self, row: &ScalarRow) -> bool {
        self.with_total && row.unit == OPS_PER_SEC && row.metric == self.phase
    }
}

/// The unit of a cell's operations per second ([`crate::Group::ops_per_sec`]).
const OPS_PER_SEC: &str = "ops/s";

/// The effects of B against A: per operation table, the rates both sides declare bound (two at
/// least), with the phase's operations per second.
pub(crate) fn effects(a: &Group, b: &Group, scalars: &[ScalarRow], tables: &[OperationTable]) -> Vec<BoundEffect> {
    let mut out = Vec::new();
    for table in tables {
        let Some(key) = a.latency.keys().map(|(k, _)| k).find(|k| k.describe() == table.phase) else { continue };
        let bound_in = |g: &Group| g.bound.iter().find(|r| r.test == key.test).map(|r| r.operations.clone());
        let (Some(in_a), Some(in_b)) = (bound_in(a), bound_in(b)) else { continue };
        let rates: Vec<_> = table
            .rows
            .iter()
            .filter(|r| r.figure == "rate" && in_a.contains(&r.operation) && in_b.contains(&r.operation))
            .collect();
        if rates.len() < 2 {
            continue;
        }
        let total = scalars.iter().find(|s| s.unit == OPS_PER_SEC && s.metric == table.phase);
        let (change, verdict) = match total {
            Some(row) => (row.change_pct, row.verdict.clone()),
            None => loop_rate(key, a, b).unwrap_or_else(|| (rates[0].change_pct, rates[0].verdict.clone())),
        };
        let changes = rates.iter().map(|r| r.change_pct).filter(|c| c.is_finite());
        let range = changes.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| (lo.min(c), hi.max(c)));
        out.push(BoundEffect {
            phase: table.phase.clone(),
            what: a.bound.iter().find(|r| r.test == key.test).map_or("loop", |r| r.what),
            operations: rates.iter().map(|r| r.operation.clone()).collect(),
            with_total: total.is_some(),
            change_pct: change,
            range_pct: range,
            verdict,
        });
    }
    out
}

/// The phase's operations per second, A against B, where no row shows it.
fn loop_rate(key: &CellKey, a: &Group, b: &Group) -> Option<(f64, Judgement)> {
    let (sa, sb) = (a.ops_per_sec.get(key)?, b.ops_per_sec.get(key)?);
    Some((change_pct(sa.median, sb.median), judge(&sa.values, &sb.values, true)))
}

/// The verdicts counted: every figure on its own, but those of an effect, which counts once.
pub(crate) fn count(
    matrix_verdicts: &[Vec<Vec<Option<Judgement>>>],
    scalars: &[ScalarRow],
    tables: &[OperationTable],
    effects: &[BoundEffect],
) -> NoiseSummary {
    let mut noise = NoiseSummary::default();
    let scalar_verdicts = scalars.iter().filter(|s| !effects.iter().any(|e| e.holds_scalar(s))).map(|s| &s.verdict);
    let operation_verdicts = tables.iter().flat_map(|t| {
        t.rows
            .iter()
            .filter(|r| !effects.iter().any(|e| e.holds_rate(&t.phase, &r.operation, r.figure)))
            .map(|r| &r.verdict)
    });
    let judgements = matrix_verdicts
        .iter()
        .flatten()
        .flatten()
        .flatten()
        .chain(scalar_verdicts)
        .chain(operation_verdicts)
        .chain(effects.iter().map(|e| &e.verdict));
    for j in judgements {
        match j.verdict {
            "faster" => noise.faster += 1,
            "slower" => noise.slower += 1,
            "within noise" => noise.within_noise += 1,
            _ => noise.no_verdict += 1,
        }
    }
    noise.bound = effects.iter().map(|e| e.figures() - 1).sum();
    noise
}
