//! IO500's score over iomatrix's runs of IO500's phases: the bandwidth score (the geometric mean
//! of the four ior phases in GiB/s), the metadata score (the geometric mean of the mdtest phases
//! and find in kIOPS) and the total, sqrt(BW x MD), computed as IO500's `calc_score` does
//! (io500's src/main.c): a phase whose score is not above 0 is left out of its group's mean, and a
//! group with no phase scores 0. It is labelled [`NOT_OFFICIAL`] wherever it is shown: the
//! phases are iomatrix's, at whatever scale the study chose, never IO500's rules checked.

use serde::{Deserialize, Serialize};

/// Said with the score wherever it is shown or stored.
pub const NOT_OFFICIAL: &str = "iomatrix's run of IO500's phases, not an official IO500 result";

/// Which of IO500's two scores a phase counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Bandwidth, GiB/s: the ior phases.
    Bandwidth,
    /// Metadata, kIOPS: the mdtest phases and find.
    Metadata,
}

impl Group {
    /// The unit IO500 prints a phase of this group in.
    pub fn unit(self) -> &'static str {
        match self {
            Group::Bandwidth => "GiB/s",
            Group::Metadata => "kIOPS",
        }
    }
}

/// One of the twelve phases of IO500's standard list, which its score counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// A file per client, large sequential writes.
    IorEasyWrite,
    /// Empty files, a folder per client, stonewalled.
    MdtestEasyWrite,
    /// One shared file, 47,008-byte transfers interleaved by client.
    IorHardWrite,
    /// 3,901-byte files in one shared folder, stonewalled.
    MdtestHardWrite,
    /// Walk the trees, match name, size and newer-than.
    Find,
    /// ior-easy's files read back.
    IorEasyRead,
    /// mdtest-easy's files stated.
    MdtestEasyStat,
    /// ior-hard's file read back, interleaved.
    IorHardRead,
    /// mdtest-hard's files stated.
    MdtestHardStat,
    /// mdtest-easy's files removed.
    MdtestEasyDelete,
    /// mdtest-hard's files read.
    MdtestHardRead,
    /// mdtest-hard's files removed.
    MdtestHardDelete,
}

impl Phase {
    /// Every phase in the order IO500 runs them.
    pub const ALL: [Phase; 12] = [
        Phase::IorEasyWrite,
        Phase::MdtestEasyWrite,
        Phase::IorHardWrite,
        Phase::MdtestHardWrite,
        Phase::Find,
        Phase::IorEasyRead,
        Phase::MdtestEasyStat,
        Phase::IorHardRead,
        Phase::MdtestHardStat,
        Phase::MdtestEasyDelete,
        Phase::MdtestHardRead,
        Phase::MdtestHardDelete,
    ];

    /// IO500's name of the phase, which is also the study step's name in examples/io500.toml.
    pub fn name(self) -> &'static str {
        match self {
            Phase::IorEasyWrite => "ior-easy-write",
            Phase::MdtestEasyWrite => "mdtest-easy-write",
            Phase::IorHardWrite => "ior-hard-write",
            Phase::MdtestHardWrite => "mdtest-hard-write",
            Phase::Find => "find",
            Phase::IorEasyRead => "ior-easy-read",
            Phase::MdtestEasyStat => "mdtest-easy-stat",
            Phase::IorHardRead => "ior-hard-read",
            Phase::MdtestHardStat => "mdtest-hard-stat",
            Phase::MdtestEasyDelete => "mdtest-easy-delete",
            Phase::MdtestHardRead => "mdtest-hard-read",
            Phase::MdtestHardDelete => "mdtest-hard-delete",
        }
    }

    /// The phase IO500 names `name`.
    pub fn named(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The cell an mdtest or find phase's step scores: the metadata phase of that name (a file's
    /// create for a write, its remove for a delete); None for an ior phase, scored by its bytes.
    pub fn scored_cell(self) -> Option<&'static str> {
        Some(match self {
            Phase::MdtestEasyWrite | Phase::MdtestHardWrite => "file-create",
            Phase::MdtestEasyStat | Phase::MdtestHardStat => "file-stat",
            Phase::MdtestHardRead => "file-read",
            Phase::MdtestEasyDelete | Phase::MdtestHardDelete => "file-remove",
            Phase::Find => "find",
            Phase::IorEasyWrite | Phase::IorHardWrite | Phase::IorEasyRead | Phase::IorHardRead => return None,
        })
    }

    /// The score it counts in: IO500 tells them by the name's first letter (`i`: GiB/s).
    pub fn group(self) -> Group {
        if self.name().starts_with("ior") {
            Group::Bandwidth
        } else {
            Group::Metadata
        }
    }
}

/// A phase's score in its group's unit, from what iomatrix measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhaseScore {
    /// The phase.
    pub phase: Phase,
    /// GiB/s for an ior phase, kIOPS for the others.
    pub score: f64,
}

impl PhaseScore {
    /// An ior phase's score from its bytes over its time (every client's, over the slowest's
    /// time, as ior reports): GiB/s, 2^30 bytes a second.
    pub fn bandwidth(phase: Phase, bytes_per_second: f64) -> PhaseScore {
        PhaseScore { phase, score: bytes_per_second / (1u64 << 30) as f64 }
    }

    /// An mdtest or find phase's score from its items a second (mdtest's rate as it hands it to
    /// IO500; find's items examined over its time): kIOPS, thousands a second.
    pub fn metadata(phase: Phase, items_per_second: f64) -> PhaseScore {
        PhaseScore { phase, score: items_per_second / 1000.0 }
    }
}

/// IO500's score over the phases given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// The geometric mean of the ior phases scored above 0, in GiB/s (0 for none).
    pub bandwidth: f64,
    /// The geometric mean of the metadata phases scored above 0, in kIOPS (0 for none).
    pub metadata: f64,
    /// sqrt(bandwidth x metadata).
    pub total: f64,
    /// Every phase's own score, in IO500's order.
    pub phases: Vec<PhaseScore>,
    /// The phases of IO500's list that were not given or scored 0: left out of the means, as
    /// IO500 leaves them (its run is then invalid; this one says which).
    pub missing: Vec<Phase>,
    /// [`NOT_OFFICIAL`], stored with the figures so no copy of them goes without it.
    pub label: String,
}

/// The score as IO500's `calc_score` computes it from `phases` (any order, each phase once; a
/// phase given twice counts its last score).
pub fn score(phases: &[PhaseScore]) -> Score {
    let mut ordered: Vec<PhaseScore> = Vec::new();
    for phase in Phase::ALL {
        if let Some(given) = phases.iter().rev().find(|p| p.phase == phase) {
            ordered.push(*given);
        }
    }
    let counted = |p: &PhaseScore| p.score > 0.0 && p.score.is_finite();
    let missing =
        Phase::ALL.into_iter().filter(|&phase| !ordered.iter().any(|p| p.phase == phase && counted(p))).collect();
    let mean = |group: Group| {
        let scores: Vec<f64> =
            ordered.iter().filter(|p| p.phase.group() == group && counted(p)).map(|p| p.score).collect();
        geometric_mean(&scores)
    };
    let (bandwidth, metadata) = (mean(Group::Bandwidth), mean(Group::Metadata));
    Score {
        bandwidth,
        metadata,
        total: (bandwidth * metadata).sqrt(),
        phases: ordered,
        missing,
        label: NOT_OFFICIAL.to_string(),
    }
}

/// The geometric mean, by logarithms (a product of many small scores underflows); 0 for none.
fn geometric_mean(scores: &[f64]) -> f64 {
    if scores.is_empty() {
        return 0.0;
    }
    (scores.iter().map(|s| s.ln()).sum::<f64>() / scores.len() as f64).exp()
}

impl Score {
    /// The score as lines, IO500's `[RESULT]` and `[SCORE ]` layout under the label.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!("IO500 score: {}", self.label)];
        for p in &self.phases {
            lines.push(format!("[RESULT] {:>20} {:>15.6} {}", p.phase.name(), p.score, p.phase.group().unit()));
        }
        if !self.missing.is_empty() {
            let names: Vec<&str> = self.missing.iter().map(|p| p.name()).collect();
            lines.push(format!("left out of the means (not run, or scored 0): {}", names.join(", ")));
        }
        lines.push(format!(
            "[SCORE ] Bandwidth {:.6} GiB/s : IOPS {:.6} kiops : TOTAL {:.6}",
            self.bandwidth, self.metadata, self.total
        ));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn the_score_is_the_geometric_means_and_their_root_as_io500_computes_it() {
        let bw = [
            (Phase::IorEasyWrite, 2.0),
            (Phase::IorHardWrite, 0.5),
            (Phase::IorEasyRead, 4.0),
            (Phase::IorHardRead, 1.0),
        ];
        let md = [
            (Phase::MdtestEasyWrite, 10.0),
            (Phase::MdtestHardWrite, 5.0),
            (Phase::Find, 100.0),
            (Phase::MdtestEasyStat, 40.0),
            (Phase::MdtestHardStat, 20.0),
            (Phase::MdtestEasyDelete, 8.0),
            (Phase::MdtestHardRead, 16.0),
            (Phase::MdtestHardDelete, 4.0),
        ];
        let given: Vec<PhaseScore> = bw.iter().chain(&md).map(|&(phase, score)| PhaseScore { phase, score }).collect();
        let s = score(&given);
        // (2 x 0.5 x 4 x 1)^(1/4) = 4^(1/4); the eight metadata scores' product to the 1/8th.
        let want_bw = 4f64.powf(0.25);
        let want_md = (10.0 * 5.0 * 100.0 * 40.0 * 20.0 * 8.0 * 16.0 * 4.0f64).powf(1.0 / 8.0);
        assert!(close(s.bandwidth, want_bw), "{} against {want_bw}", s.bandwidth);
        assert!(close(s.metadata, want_md), "{} against {want_md}", s.metadata);
        assert!(close(s.total, (want_bw * want_md).sqrt()), "{}", s.total);
        assert!(s.missing.is_empty());
        assert_eq!(
            s.phases.iter().map(|p| p.phase).collect::<Vec<_>>(),
            Phase::ALL,
            "IO500's order, whatever was given"
        );
    }

    #[test]
    fn a_phase_not_run_or_scored_zero_is_left_out_of_its_mean_and_named() {
        let s = score(&[
            PhaseScore { phase: Phase::IorEasyWrite, score: 3.0 },
            PhaseScore { phase: Phase::IorHardWrite, score: 0.0 },
            PhaseScore { phase: Phase::Find, score: 12.0 },
        ]);
        assert!(close(s.bandwidth, 3.0), "the 0 is left out, not multiplied in: {}", s.bandwidth);
        assert!(close(s.metadata, 12.0));
        assert!(s.missing.contains(&Phase::IorHardWrite) && s.missing.contains(&Phase::MdtestHardDelete));
        assert_eq!(s.missing.len(), 10);
        let none = score(&[PhaseScore { phase: Phase::Find, score: 1.0 }]);
        assert_eq!((none.bandwidth, none.total), (0.0, 0.0), "a group with nothing scores 0, and so the total");
    }

    #[test]
    fn units_are_gib_per_second_and_thousands_of_items() {
        let bw = PhaseScore::bandwidth(Phase::IorHardRead, 3.0 * (1u64 << 30) as f64);
        assert!(close(bw.score, 3.0));
        assert!(close(PhaseScore::metadata(Phase::MdtestEasyStat, 123_456.0).score, 123.456));
        assert_eq!(Phase::IorHardRead.group().unit(), "GiB/s");
        assert_eq!(Phase::Find.group(), Group::Metadata);
        assert_eq!(Phase::named("mdtest-hard-read"), Some(Phase::MdtestHardRead));
        assert_eq!(Phase::named("ior-rnd4K-write"), None);
    }

    #[test]
    fn the_lines_carry_the_label_each_phase_and_the_score() {
        let s = score(&[
            PhaseScore { phase: Phase::IorEasyWrite, score: 1.5 },
            PhaseScore { phase: Phase::Find, score: 6.0 },
        ]);
        let lines = s.lines();
        assert_eq!(lines[0], format!("IO500 score: {NOT_OFFICIAL}"));
        assert!(lines[1].starts_with("[RESULT]       ior-easy-write        1.500000 GiB/s"), "{}", lines[1]);
        assert_eq!(lines.last().unwrap(), "[SCORE ] Bandwidth 1.500000 GiB/s : IOPS 6.000000 kiops : TOTAL 3.000000");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["label"], NOT_OFFICIAL);
        assert_eq!(json["phases"][0]["phase"], "ior-easy-write");
    }
}
