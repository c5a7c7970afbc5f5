//! A study's IO500 score (`score = "io500"`): per configuration, each finished step named after an
//! IO500 phase scored from its stored run, and IO500's score over them
//! ([`iomatrix_study::io500`]), always shown with its label: iomatrix's run of IO500's phases, not
//! an official IO500 result.
//!
//! What a phase's score is read from, through the stored cells' own figures (no suite is named
//! here): an ior phase's step is a run of one setting that moves bytes, its bytes over its time
//! (GiB/s); an mdtest phase's step is a run with a cell of the phase's name
//! ([`Phase::scored_cell`]: file-create for a write, file-stat, file-read, file-remove for a
//! delete), whose figure is the rate mdtest hands IO500, every client's items over the slowest
//! client's time (kIOPS); find's step has a find cell, whose items are the entries it examined.
//! Where a step repeats its cells (`--repeat`, mdtest's iterations), the phase's score is the
//! median of its repeats.

use iomatrix_store::{CellRow, StepStatus, Store, StoredRun, StoredStudyScore, StudyStep};
use iomatrix_study::io500::{score, Group, Phase, PhaseScore, Score};
use iomatrix_study::StudyFile;

/// One configuration's score, and the steps that could not be scored, each with why: what a
/// finished study stores of it, and reads back.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ConfigScore {
    /// The configuration, as the study file names it.
    pub config: String,
    /// IO500's score over its scored steps.
    pub score: Score,
    /// "ior-hard-write: ..." for each finished step that gave no score.
    pub unscored: Vec<String>,
}

/// A configuration's score as `study show` and the conclusions show it: the one stored with the
/// study when it finished, or, where none is stored (an unfinished study, one an older iomatrix
/// ran), computed now from the steps' stored runs and said to be.
#[derive(Debug, serde::Serialize)]
pub struct ShownScore {
    #[serde(flatten)]
    scored: ConfigScore,
    /// Whether it is the stored score.
    stored: bool,
    /// When it was stored (absent when computed now).
    #[serde(skip_serializing_if = "Option::is_none")]
    stored_at: Option<String>,
}

/// Every configuration's score computed from its steps' stored runs, in the file's order; empty
/// when the file asks for none.
fn scores(store: &Store, file: &StudyFile, steps: &[StudyStep]) -> anyhow::Result<Vec<ConfigScore>> {
    if file.score.is_none() {
        return Ok(Vec::new());
    }
    file.configs.iter().map(|c| config_score(store, c.name.get_ref(), steps)).collect()
}

/// `config`'s score computed from its done steps' stored runs.
fn config_score(store: &Store, config: &str, steps: &[StudyStep]) -> anyhow::Result<ConfigScore> {
    let mut given = Vec::new();
    let mut unscored = Vec::new();
    for step in steps.iter().filter(|s| s.config == config && s.status == StepStatus::Done) {
        let (Some(phase), Some(run_id)) = (Phase::named(&step.step), step.run_id) else { continue };
        let scored = match store.load_run(run_id)? {
            Some(run) => phase_score(&run, phase),
            None => Err(format!("run #{run_id} is not in the database")),
        };
        match scored {
            Ok(p) => given.push(p),
            Err(why) => unscored.push(format!("{}: {why}", phase.name())),
        }
    }
    Ok(ConfigScore { config: config.to_string(), score: score(&given), unscored })
}

/// Stores study `study`'s score, computed from its steps' runs, when the file asks for one: at its
/// end with every step done. `ran_now`: a step ran in this process; without one a score already
/// stored is kept (the runs it was drawn from may since have been removed).
pub fn store_finished(
    store: &Store,
    file: &StudyFile,
    study: i64,
    steps: &[StudyStep],
    ran_now: bool,
) -> anyhow::Result<()> {
    let Some(kind) = file.score.as_ref().map(|k| k.get_ref()) else { return Ok(()) };
    if !ran_now && !store.study_scores(study, kind)?.is_empty() {
        return Ok(());
    }
    let mut rows = Vec::new();
    for scored in scores(store, file, steps)? {
        rows.push((scored.config.clone(), serde_json::to_string(&scored)?));
    }
    store.store_study_scores(study, kind, &rows)?;
    Ok(())
}

/// Every configuration's score as shown, in the file's order: the stored one where the study
/// stored it, else computed now; empty when the file asks for none.
pub fn shown(store: &Store, file: &StudyFile, study: i64, steps: &[StudyStep]) -> anyhow::Result<Vec<ShownScore>> {
    let Some(kind) = file.score.as_ref().map(|k| k.get_ref()) else { return Ok(Vec::new()) };
    let stored = store.study_scores(study, kind)?;
    let mut all = Vec::new();
    for config in file.configs.iter().map(|c| c.name.get_ref()) {
        let kept = stored.iter().find(|s| &s.config == config).and_then(|s| read_stored(study, s));
        let shown = match kept {
            Some(shown) => shown,
            None => ShownScore { scored: config_score(store, config, steps)?, stored: false, stored_at: None },
        };
        all.push(shown);
    }
    Ok(all)
}

/// A stored score read back; None, with a warning, when it does not read (it is computed now).
fn read_stored(study: i64, s: &StoredStudyScore) -> Option<ShownScore> {
    match serde_json::from_str::<ConfigScore>(&s.score_json) {
        Ok(scored) => Some(ShownScore { scored, stored: true, stored_at: Some(s.stored_at.clone()) }),
        Err(e) => {
            eprintln!(
                "iomatrix: warning: study #{study}'s stored score of configuration '{}' does not read ({e}): computed \
                 now instead",
                s.config
            );
            None
        }
    }
}

/// The score's lines for one configuration, as the conclusions print them: where it came from last.
pub fn lines(s: &ShownScore) -> Vec<String> {
    let mut lines = vec![format!("== IO500 score of configuration '{}'", s.scored.config)];
    lines.extend(s.scored.score.lines());
    lines.extend(s.scored.unscored.iter().map(|u| format!("not scored: {u}")));
    lines.push(match &s.stored_at {
        Some(at) if s.stored => format!("stored with the study when it finished ({at})"),
        _ => "computed now from the steps' stored runs, not stored (the study has not finished every step, or \
              finished before iomatrix stored scores)"
            .to_string(),
    });
    lines
}

/// `phase`'s score from its step's run.
fn phase_score(run: &StoredRun, phase: Phase) -> Result<PhaseScore, String> {
    let complete: Vec<&CellRow> = run.cell_results.iter().filter(|c| c.state.is_complete()).collect();
    match phase.group() {
        Group::Bandwidth => bandwidth(&complete, phase),
        Group::Metadata => metadata_rate(&complete, phase),
    }
}

/// Whether a cell counts operations (a metadata phase's ops/s), not bytes.
fn counts_operations(cell: &CellRow) -> bool {
    cell.figures().unit.as_deref() == Some("ops/s")
}

/// An ior phase: the access run's complete cells of its one setting (its repeats), their median
/// bytes a second.
fn bandwidth(cells: &[&CellRow], phase: Phase) -> Result<PhaseScore, String> {
    let Some(first) = cells.first() else { return Err("its run has no complete cell".to_string()) };
    if counts_operations(first) {
        return Err("an ior phase is a run that moves bytes (run access); this step's cells count operations".into());
    }
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

/// An mdtest phase: its cell's rate as mdtest hands it to IO500 (the cell's figure).
fn metadata_rate(cells: &[&CellRow], phase: Phase) -> Result<PhaseScore, String> {
    let want = phase.scored_cell().ok_or_else(|| format!("{} is no mdtest phase", phase.name()))?;
    let rates: Vec<f64> =
        cells.iter().filter(|c| c.test == want && counts_operations(c)).filter_map(|c| c.figures().per_sec).collect();
    if rates.is_empty() {
        return Err(format!("its run has no complete {want} cell (an mdtest phase is a run metadata step)"));
    }
    // Every iteration of the phase (each a sample), or the run's repeats: their median.
    Ok(PhaseScore::metadata(phase, median(rates)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_store::CellState;
    use serde_json::json;

    fn cell(test: &str, kib_per_sec: f64, metrics: serde_json::Value) -> CellRow {
        CellRow { kib_per_sec, metrics, state: CellState::complete(2), ..CellRow::blank(test, "psync") }
    }

    /// A metadata phase's cell as `run metadata` stores it: its figure in ops/s.
    fn phase_cell(test: &str, per_sec: f64) -> CellRow {
        cell(test, 0.0, json!({"per_sec": per_sec, "unit": "ops/s"}))
    }

    #[test]
    fn an_ior_step_scores_its_one_cells_bytes_in_gib_per_second() {
        let one = cell("47008 qd=1 read=0% random=0%", 2.0 * 1024.0 * 1024.0, json!({}));
        let scored = bandwidth(&[&one], Phase::IorHardWrite).unwrap();
        assert!((scored.score - 2.0).abs() < 1e-12, "2 x 1024 x 1024 KiB/s is 2 GiB/s: {}", scored.score);
        let (slow, fast) = (cell(&one.test, 1024.0 * 1024.0, json!({})), cell(&one.test, 8e6, json!({})));
        let repeated = bandwidth(&[&fast, &one, &slow], Phase::IorHardWrite).unwrap();
        assert!((repeated.score - 2.0).abs() < 1e-12, "the median of the repeats: {}", repeated.score);
        let other = cell("1m qd=1 read=0% random=0%", 1.0, json!({}));
        assert!(bandwidth(&[&one, &other], Phase::IorHardWrite).unwrap_err().contains("two settings"));
        let ops = phase_cell("file-create", 5000.0);
        assert!(bandwidth(&[&ops], Phase::IorEasyRead).unwrap_err().contains("count operations"));
    }

    #[test]
    fn an_mdtest_step_scores_its_phases_iterations_median_at_io500s_rate() {
        let create = phase_cell("file-create", 5000.0);
        let stats = [phase_cell("file-stat", 20000.0), phase_cell("file-stat", 1.0), phase_cell("file-stat", 30000.0)];
        let cells = [&create, &stats[0], &stats[1], &stats[2]];
        let scored = metadata_rate(&cells, Phase::MdtestHardStat).unwrap();
        assert!((scored.score - 20.0).abs() < 1e-12, "the median of three iterations: {}", scored.score);
        assert!((metadata_rate(&cells, Phase::MdtestEasyWrite).unwrap().score - 5.0).abs() < 1e-12);
        let e = metadata_rate(&cells, Phase::MdtestHardDelete).unwrap_err();
        assert!(e.contains("no complete file-remove cell"), "{e}");
        let bytes = cell("file-stat", 100.0, json!({}));
        assert!(metadata_rate(&[&bytes], Phase::MdtestHardStat).is_err(), "a cell of bytes is no mdtest phase");
    }

    #[test]
    fn a_find_step_scores_its_find_cells_entries_examined_a_second() {
        let find = phase_cell("find", 123456.0);
        assert!((metadata_rate(&[&find], Phase::Find).unwrap().score - 123.456).abs() < 1e-9);
        assert!(metadata_rate(&[], Phase::Find).unwrap_err().contains("no complete find cell"));
    }
}
