//! A study's IO500 score (`score = "io500"`): per configuration, each finished step named after an
//! IO500 phase scored from its stored run, and IO500's score over them
//! ([`iomatrix_study::io500`]), always shown with its label: iomatrix's run of IO500's phases, not
//! an official IO500 result.
//!
//! What a phase's score is read from: an ior phase's step is an access run of one setting, its
//! bytes over its time (GiB/s); an mdtest phase's step is a metadata run, whose cell of the phase
//! (file create for a write, file stat, file read, file remove for a delete; the first iteration)
//! gives the rate mdtest hands IO500, every client's items over the slowest client's time (kIOPS);
//! find's step is a metadata run with a find cell, whose items are the entries it examined.
//! Where a step repeats its cells (`--repeat`), the phase's score is the median of its repeats.

use iomatrix_metadata::{Phase as MetadataPhase, PhaseResult};
use iomatrix_store::{CellRow, StepStatus, Store, StoredRun, StudyStep};
use iomatrix_study::io500::{score, Group, Phase, PhaseScore, Score};
use iomatrix_study::StudyFile;
use std::path::Path;

/// One configuration's score, and the steps that could not be scored, each with why.
#[derive(Debug, serde::Serialize)]
pub struct ConfigScore {
    /// The configuration, as the study file names it.
    pub config: String,
    /// IO500's score over its scored steps.
    pub score: Score,
    /// "ior-hard-write: ..." for each finished step that gave no score.
    pub unscored: Vec<String>,
}

/// Every configuration's score, in the file's order; empty when the file asks for none.
pub fn scores(db: &Path, file: &StudyFile, steps: &[StudyStep]) -> anyhow::Result<Vec<ConfigScore>> {
    if file.score.is_none() {
        return Ok(Vec::new());
    }
    let store = Store::open(db)?;
    let mut all = Vec::new();
    for config in file.configs.iter().map(|c| c.name.get_ref()) {
        let mut given = Vec::new();
        let mut unscored = Vec::new();
        for step in steps.iter().filter(|s| &s.config == config && s.status == StepStatus::Done) {
            let (Some(phase), Some(run_id)) = (Phase::named(&step.step), step.run_id) else { continue };
            let scored = match store.load_run(run_id)? {
                Some(run) => phase_score(&run, &step.suite, phase),
                None => Err(format!("run #{run_id} is not in the database")),
            };
            match scored {
                Ok(p) => given.push(p),
                Err(why) => unscored.push(format!("{}: {why}", phase.name())),
            }
        }
        all.push(ConfigScore { config: config.clone(), score: score(&given), unscored });
    }
    Ok(all)
}

/// The score's lines for one configuration, as the conclusions print them.
pub fn lines(s: &ConfigScore) -> Vec<String> {
    let mut lines = vec![format!("== IO500 score of configuration '{}'", s.config)];
    lines.extend(s.score.lines());
    lines.extend(s.unscored.iter().map(|u| format!("not scored: {u}")));
    lines
}

/// `phase`'s score from its step's run (of `suite`).
fn phase_score(run: &StoredRun, suite: &str, phase: Phase) -> Result<PhaseScore, String> {
    let complete: Vec<&CellRow> = run.cell_results.iter().filter(|c| c.state.is_complete()).collect();
    match phase.group() {
        Group::Bandwidth => bandwidth(&complete, suite, phase),
        Group::Metadata => metadata_rate(&complete, suite, phase),
    }
}

/// An ior phase: the access run's complete cells of its one setting (its repeats), their median
/// bytes a second.
fn bandwidth(cells: &[&CellRow], suite: &str, phase: Phase) -> Result<PhaseScore, String> {
    if suite != "access" {
        return Err(format!("an ior phase is an access run; this step ran {suite}"));
    }
    let Some(first) = cells.first() else { return Err("its run has no complete cell".to_string()) };
    if let Some(other) = cells.iter().find(|c| c.test != first.test) {
        return Err(format!(
            "its run has cells of two settings ({}, {}); an ior phase's step runs one",
            first.test, other.test
        ));
    }
    let rates: Vec<f64> = cells.iter().map(|c| c.kib_per_sec * 1024.0).collect();
    Ok(PhaseScore::bandwidth(phase, median(rates)))
}

/// The median of the repeats' rates (the one rate without repeats).
fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    let mid = rates.len() / 2;
    match rates.len() {
        0 => 0.0,
        n if n % 2 == 1 => rates[mid],
        _ => f64::midpoint(rates[mid - 1], rates[mid]),
    }
}

/// The metadata suite's phase an mdtest phase of IO500 is.
fn metadata_phase(phase: Phase) -> Option<MetadataPhase> {
    Some(match phase {
        Phase::MdtestEasyWrite | Phase::MdtestHardWrite => MetadataPhase::FileCreate,
        Phase::MdtestEasyStat | Phase::MdtestHardStat => MetadataPhase::FileStat,
        Phase::MdtestHardRead => MetadataPhase::FileRead,
        Phase::MdtestEasyDelete | Phase::MdtestHardDelete => MetadataPhase::FileRemove,
        Phase::Find => MetadataPhase::Find,
        _ => return None,
    })
}

/// An mdtest phase: its cell's rate as mdtest hands it to IO500.
fn metadata_rate(cells: &[&CellRow], suite: &str, phase: Phase) -> Result<PhaseScore, String> {
    if suite != "metadata" {
        return Err(format!("an mdtest phase is a metadata run; this step ran {suite}"));
    }
    let want = metadata_phase(phase).ok_or_else(|| format!("{} is no mdtest phase", phase.name()))?;
    let rates: Vec<f64> = cells
        .iter()
        .filter_map(|c| c.figures().phase)
        .filter_map(|stored| serde_json::from_value::<PhaseResult>(stored).ok())
        .filter(|r| r.phase == want && r.iteration == 0)
        .map(|r| r.rate_all_over_slowest)
        .collect();
    if rates.is_empty() {
        return Err(format!("its run has no complete {} cell", want.name()));
    }
    // Repeats of the run's first iteration, where the run repeats its cells: their median.
    Ok(PhaseScore::metadata(phase, median(rates)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_store::CellState;

    fn cell(test: &str, kib_per_sec: f64, metrics: serde_json::Value) -> CellRow {
        CellRow { kib_per_sec, metrics, state: CellState::complete(2), ..CellRow::blank(test, "psync") }
    }

    fn phase_result(phase: MetadataPhase, iteration: u32, rate: f64) -> serde_json::Value {
        serde_json::to_value(PhaseResult {
            phase,
            iteration,
            items: 100,
            rate_all_over_slowest: rate,
            rate_slowest_times_clients: rate * 1.1,
            clients: Vec::new(),
            latency: None,
            failures: Default::default(),
            stonewall: None,
            found: None,
        })
        .unwrap()
    }

    #[test]
    fn an_ior_step_scores_its_one_cells_bytes_in_gib_per_second() {
        let one = cell("47008 qd=1 read=0% random=0%", 2.0 * 1024.0 * 1024.0, serde_json::json!({}));
        let scored = bandwidth(&[&one], "access", Phase::IorHardWrite).unwrap();
        assert!((scored.score - 2.0).abs() < 1e-12, "2 x 1024 x 1024 KiB/s is 2 GiB/s: {}", scored.score);
        let (slow, fast) =
            (cell(&one.test, 1024.0 * 1024.0, serde_json::json!({})), cell(&one.test, 8e6, serde_json::json!({})));
        let repeated = bandwidth(&[&fast, &one, &slow], "access", Phase::IorHardWrite).unwrap();
        assert!((repeated.score - 2.0).abs() < 1e-12, "the median of the repeats: {}", repeated.score);
        let other = cell("1m qd=1 read=0% random=0%", 1.0, serde_json::json!({}));
        assert!(bandwidth(&[&one, &other], "access", Phase::IorHardWrite).unwrap_err().contains("two settings"));
        assert!(bandwidth(&[&one], "iozone", Phase::IorEasyRead).unwrap_err().contains("an access run"));
    }

    #[test]
    fn an_mdtest_step_scores_its_phases_first_iteration_at_io500s_rate() {
        let create =
            cell("file-create", 0.0, serde_json::json!({"phase": phase_result(MetadataPhase::FileCreate, 0, 5000.0)}));
        let stat =
            cell("file-stat", 0.0, serde_json::json!({"phase": phase_result(MetadataPhase::FileStat, 0, 20000.0)}));
        let stat2 =
            cell("file-stat #2", 0.0, serde_json::json!({"phase": phase_result(MetadataPhase::FileStat, 1, 1.0)}));
        let cells = [&create, &stat2, &stat];
        let scored = metadata_rate(&cells, "metadata", Phase::MdtestHardStat).unwrap();
        assert!((scored.score - 20.0).abs() < 1e-12, "{}", scored.score);
        assert!((metadata_rate(&cells, "metadata", Phase::MdtestEasyWrite).unwrap().score - 5.0).abs() < 1e-12);
        let e = metadata_rate(&cells, "metadata", Phase::MdtestHardDelete).unwrap_err();
        assert!(e.contains("no complete file-remove cell"), "{e}");
        assert!(metadata_rate(&cells, "access", Phase::MdtestHardStat).unwrap_err().contains("a metadata run"));
    }

    #[test]
    fn a_find_step_scores_its_find_cells_entries_examined_a_second() {
        let find = cell("find", 0.0, serde_json::json!({"phase": phase_result(MetadataPhase::Find, 0, 123456.0)}));
        assert!((metadata_rate(&[&find], "metadata", Phase::Find).unwrap().score - 123.456).abs() < 1e-9);
        assert!(metadata_rate(&[], "metadata", Phase::Find).unwrap_err().contains("no complete find cell"));
    }
}
