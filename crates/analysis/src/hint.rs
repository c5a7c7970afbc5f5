//! What compare says when the sides' cells differ in one swept parameter only (QD 1 against
//! QD 32, 4k against 64k blocks): which parameter, its levels on each side, and the
//! `iomatrix sweep` that compares them level by level. A cell-by-cell comparison cannot: no cell
//! of one side has its twin on the other.

use crate::cells::{size, CellKey};
use crate::SuiteShape;
use iomatrix_core::IoMix;
use serde::Serialize;
use std::collections::BTreeSet;

/// A parameter `iomatrix sweep --by` takes from the cells themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweptParameter {
    /// sweep's `--by` name.
    pub by: &'static str,
    /// The parameter in words.
    pub what: &'static str,
}

/// Every parameter sweep reads from a cell, in the order a hint looks for them.
pub const SWEPT_PARAMETERS: [SweptParameter; 5] = [
    SweptParameter { by: "qd", what: "queue depth" },
    SweptParameter { by: "record", what: "record (block) size" },
    SweptParameter { by: "file", what: "file size" },
    SweptParameter { by: "read", what: "read share" },
    SweptParameter { by: "random", what: "random share" },
];

impl SweptParameter {
    /// The parameter named by sweep's `--by`.
    pub fn named(by: &str) -> Option<SweptParameter> {
        SWEPT_PARAMETERS.iter().copied().find(|p| p.by == by)
    }

    /// The token of an access mix that holds the parameter ("qd="), if it lives in the mix.
    fn mix_key(&self) -> Option<&'static str> {
        match self.by {
            "qd" => Some(IoMix::QD_KEY),
            "read" => Some(IoMix::READ_KEY),
            "random" => Some(IoMix::RANDOM_KEY),
            _ => None,
        }
    }

    /// The cell's level of the parameter and the key without it, or None where the cell does not
    /// carry the parameter.
    pub fn split(&self, key: &CellKey) -> Option<(u64, CellKey)> {
        let mut rest = key.clone();
        let level = match self.by {
            "record" => rest.record_size.take()?,
            "file" => rest.file_size.take()?,
            _ => {
                let token = self.mix_key()?;
                let parts: Vec<&str> = key.variant.split(' ').collect();
                let part = parts.iter().find(|p| p.starts_with(token))?;
                let level = part[token.len()..].trim_end_matches('%').parse::<u64>().ok()?;
                rest.variant = parts.iter().filter(|p| !p.starts_with(token)).copied().collect::<Vec<_>>().join(" ");
                level
            }
        };
        Some((level, rest))
    }

    /// A level as sweep names it: "32", "64k", "70%".
    pub fn level_name(&self, level: u64) -> String {
        match self.by {
            "record" | "file" => size(level),
            "read" | "random" => format!("{level}%"),
            _ => level.to_string(),
        }
    }
}

/// The one swept parameter the sides' cells differ in, and the sweep that compares them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepHint {
    /// sweep's `--by` name: "qd", "record", "file", "read", "random".
    pub by: &'static str,
    /// The parameter in words.
    pub what: &'static str,
    /// Its levels on each side, as sweep names them.
    pub a_levels: Vec<String>,
    /// B's levels, as `a_levels` are A's.
    pub b_levels: Vec<String>,
    /// The command that compares the sides level by level (`iomatrix sweep 1 2 --by qd`).
    pub command: String,
    /// Plan parameters that differ besides the swept one: the sweep's levels carry them too.
    pub also_differ: Vec<String>,
}

/// The hint, where the sides' cells are the same but for one swept parameter whose levels differ:
/// every cell of both sides carries the parameter, and with it taken out both sides hold the same
/// cells. Nothing where the cells differ in more than one way, or in none. The plan fields that
/// hold the swept list (the suite's `shape`) are not counted as another difference.
pub fn sweep_hint<'a>(
    a: impl IntoIterator<Item = &'a CellKey> + Clone,
    b: impl IntoIterator<Item = &'a CellKey> + Clone,
    runs: (&[i64], &[i64]),
    plan_differences: &[String],
    shape: SuiteShape,
) -> Option<SweepHint> {
    for p in SWEPT_PARAMETERS {
        // Each side's levels and the cells without the parameter; None unless every cell carries
        // it and the side holds every cell at every level (the grid a run sweeps), so that the
        // levels are the only thing its cells differ in.
        let side = |keys: &mut dyn Iterator<Item = &'a CellKey>| -> Option<(BTreeSet<u64>, BTreeSet<CellKey>)> {
            let mut levels = BTreeSet::new();
            let mut rest = BTreeSet::new();
            let mut cells = BTreeSet::new();
            for key in keys {
                let (level, without) = p.split(key)?;
                levels.insert(level);
                rest.insert(without);
                cells.insert(key);
            }
            (cells.len() == levels.len() * rest.len()).then_some((levels, rest))
        };
        let (Some((la, ra)), Some((lb, rb))) = (side(&mut a.clone().into_iter()), side(&mut b.clone().into_iter()))
        else {
            continue;
        };
        if ra.is_empty() || ra != rb || la == lb {
            continue;
        }
        let selector = |ids: &[i64]| ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let also_differ =
            plan_differences.iter().filter(|name| !shape.plan_fields(p.by).contains(&name.as_str())).cloned().collect();
        return Some(SweepHint {
            by: p.by,
            what: p.what,
            a_levels: la.iter().map(|l| p.level_name(*l)).collect(),
            b_levels: lb.iter().map(|l| p.level_name(*l)).collect(),
            command: format!("iomatrix sweep {} {} --by {}", selector(runs.0), selector(runs.1), p.by),
            also_differ,
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(file: u64, record: u64, qd: u64, read: u64) -> CellKey {
        CellKey {
            test: "access".into(),
            file_size: Some(file),
            record_size: Some(record),
            variant: IoMix { read_percent: read, random_percent: 100, queue_depth: qd, load: None }.name(),
        }
    }

    fn hint(a: &[CellKey], b: &[CellKey]) -> Option<SweepHint> {
        sweep_hint(a, b, (&[1], &[2]), &[], SuiteShape::PLAIN)
    }

    #[test]
    fn one_queue_depth_against_another_is_a_sweep_by_qd() {
        let h = hint(&[access(1 << 20, 4096, 1, 100)], &[access(1 << 20, 4096, 32, 100)]).unwrap();
        assert_eq!((h.by, h.a_levels.clone(), h.b_levels.clone()), ("qd", vec!["1".into()], vec!["32".into()]));
        assert_eq!(h.command, "iomatrix sweep 1 2 --by qd");
    }

    #[test]
    fn several_levels_a_side_and_several_cells_at_each() {
        let a: Vec<CellKey> =
            [1, 2].iter().flat_map(|qd| [4096, 65536].map(|bs| access(1 << 20, bs, *qd, 100))).collect();
        let b: Vec<CellKey> =
            [16, 32].iter().flat_map(|qd| [4096, 65536].map(|bs| access(1 << 20, bs, *qd, 100))).collect();
        const ACCESS: SuiteShape = SuiteShape {
            swept_fields: &[crate::SweptFields { by: "qd", plan_fields: &["queue_depths"] }],
            ..SuiteShape::PLAIN
        };
        let differing = ["queue_depths".into(), "direct".into()];
        let h = sweep_hint(&a, &b, (&[3, 4], &[5]), &differing, ACCESS).unwrap();
        assert_eq!((h.a_levels.len(), h.b_levels.len()), (2, 2));
        assert_eq!(h.command, "iomatrix sweep 3,4 5 --by qd");
        assert_eq!(h.also_differ, vec!["direct".to_string()], "the swept list is not another difference");
    }

    #[test]
    fn record_size_and_read_share_are_found_as_well() {
        let h = hint(&[access(1 << 20, 4096, 1, 100)], &[access(1 << 20, 65536, 1, 100)]).unwrap();
        assert_eq!((h.by, h.b_levels[0].as_str()), ("record", "64k"));
        let h = hint(&[access(1 << 20, 4096, 1, 100)], &[access(1 << 20, 4096, 1, 70)]).unwrap();
        assert_eq!((h.by, h.b_levels[0].as_str()), ("read", "70%"));
    }

    #[test]
    fn no_hint_where_two_parameters_differ_or_none() {
        assert_eq!(hint(&[access(1 << 20, 4096, 1, 100)], &[access(1 << 20, 65536, 32, 100)]), None);
        assert_eq!(hint(&[access(1 << 20, 4096, 1, 100)], &[access(1 << 20, 4096, 1, 100)]), None);
        // B's cells are no grid of block size by depth (4k at QD 32, 64k at QD 1): neither
        // parameter alone tells its cells from A's.
        let a = [access(1 << 20, 4096, 1, 100), access(1 << 20, 4096, 32, 100)];
        let b = [access(1 << 20, 4096, 32, 100), access(1 << 20, 65536, 1, 100)];
        assert_eq!(hint(&a, &b), None);
        // A test only one side ran is not a level.
        let write =
            CellKey { test: "write".into(), file_size: Some(1 << 20), record_size: None, variant: String::new() };
        let read = CellKey { test: "read".into(), ..write.clone() };
        assert_eq!(hint(&[write], &[read]), None);
        assert_eq!(hint(&[], &[]), None);
    }
}
