//! One compared figure outside any matrix, and its change: what compare's scalar rows, the
//! figures measured beside them (`beside`) and seed 003's headline rows (`headline`) share, below
//! all three.

use crate::noise::Judgement;
use serde::Serialize;

/// One figure of a scalar suite: A, B and the change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalarRow {
    /// The metric's name.
    pub metric: String,
    /// The metric's unit.
    pub unit: &'static str,
    /// A's median.
    pub a: f64,
    /// B's median.
    pub b: f64,
    /// B against A: (B - A) / A, in %.
    pub change_pct: f64,
    /// Faster, slower or within noise, from each side's samples.
    pub verdict: Judgement,
    /// A side's median took in samples of partial cells (`--include-partial`).
    pub partial: bool,
}

/// (b - a) / a in %, 0 when a is 0.
pub fn change_pct(a: f64, b: f64) -> f64 {
    if a == 0.0 {
        0.0
    } else {
        (b - a) / a * 100.0
    }
}
