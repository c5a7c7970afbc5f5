//! `iomatrix study show` and `study list`: stored studies, their steps and
//! runs, and (show) their conclusions drawn again from the stored file.

use super::conclude;
use iomatrix_core::human;
use iomatrix_core::UsageError;
use iomatrix_report::table::{Column, Table};
use iomatrix_store::{StepStatus, Store, StudyRecord};
use std::path::Path;
use std::process::ExitCode;

pub fn list(db: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let store = Store::open(db)?;
    // A database opened for reading only is not marked: a study whose process is gone is shown
    // interrupted all the same, by the rule `runs` uses for a run (pid and start time).
    let studies: Vec<StudyRecord> = store.list_studies()?.into_iter().map(shown_status).collect();
    let mut rows = Vec::with_capacity(studies.len());
    for s in &studies {
        let steps = store.study_steps(s.id)?;
        let done = steps.iter().filter(|st| st.status == StepStatus::Done).count();
        rows.push((s, done, steps.len()));
    }
    if json {
        let doc = serde_json::json!({
            "schema": "iomatrix.studies/1",
            "studies": rows.iter().map(|(s, done, total)| {
                let mut v = serde_json::to_value(s).unwrap_or_default();
                v["steps_done"] = (*done).into();
                v["steps"] = (*total).into();
                v
            }).collect::<Vec<_>>(),
        });
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    if studies.is_empty() {
        crate::out::print("no studies stored (`iomatrix study run FILE` runs one)\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(vec![
        Column::right("id", 4),
        Column::left("name", 20).gap("  "),
        Column::left("scale", 6),
        Column::left("status", 11),
        Column::right("steps", 6),
        Column::left("started", 20).gap("  "),
        Column::free("file").gap("  "),
    ]);
    for (s, done, total) in rows {
        table.row([
            s.id.to_string(),
            s.name.clone(),
            s.scale.clone(),
            s.status.as_str().to_string(),
            format!("{done}/{total}"),
            s.started_at.clone(),
            s.file_path.clone(),
        ]);
    }
    crate::out::print(&table.render())?;
    Ok(ExitCode::SUCCESS)
}

/// `record` as `study list` and `show` tell it: `interrupted` when it says running but its
/// process on this host is gone.
fn shown_status(mut record: StudyRecord) -> StudyRecord {
    if record.process_gone() {
        record.status = iomatrix_store::StudyStatus::Interrupted;
    }
    record
}

pub fn show(db: &Path, which: &str, json: bool) -> anyhow::Result<ExitCode> {
    let store = Store::open(db)?;
    let record = shown_status(find(&store, which)?);
    let steps = store.study_steps(record.id)?;
    if json {
        let mut doc = serde_json::json!({"schema": "iomatrix.study/1", "study": record, "steps": steps});
        // The score the study's file asks for, as stored when it finished, else computed now from
        // its stored runs, which it says (absent when the file asks for none).
        if let Ok(file) = iomatrix_study::parse(&record.file_text) {
            let scores = super::io500::shown(&store, &file, record.id, &steps)?;
            if !scores.is_empty() {
                doc["io500"] = serde_json::to_value(&scores)?;
            }
        }
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "study #{} '{}' ({} scale): {}\nfile: {}\nstarted {}{}\n\n",
        record.id,
        record.name,
        record.scale,
        record.status.as_str(),
        record.file_path,
        record.started_at,
        record.ended_at.as_deref().map(|e| format!(", ended {e}")).unwrap_or_default()
    );
    let mut table = Table::new(vec![
        Column::right("step", 4),
        Column::left("config", 16).gap("  "),
        Column::left("step", 16),
        Column::left("suite", 10),
        Column::left("status", 8),
        Column::right("run", 6),
        Column::right("seconds", 9),
        Column::free("detail").gap("  "),
    ]);
    for s in &steps {
        table.row([
            (s.seq + 1).to_string(),
            s.config.clone(),
            s.step.clone(),
            s.suite.clone(),
            s.status.as_str().to_string(),
            s.run_id.map(|r| format!("#{r}")).unwrap_or_else(|| "-".into()),
            s.seconds.map(|x| human::fixed(x, 1)).unwrap_or_else(|| "-".into()),
            s.detail.as_deref().unwrap_or("").lines().next().unwrap_or("").to_string(),
        ]);
    }
    out.push_str(&table.render());
    crate::out::print(&out)?;
    // The conclusions, drawn again from the file as it was stored.
    match iomatrix_study::parse(&record.file_text) {
        Ok(file) => conclude::print(db, &file, record.id, &steps, false)?,
        Err(e) => eprintln!("iomatrix: warning: the stored study file no longer parses ({e}): no conclusions"),
    }
    Ok(ExitCode::SUCCESS)
}

/// A study by id (`3`, `#3`) or by name (its latest record at any scale).
fn find(store: &Store, which: &str) -> anyhow::Result<StudyRecord> {
    let studies = store.list_studies()?;
    let id = which.trim_start_matches('#').parse::<i64>().ok();
    let found = match id {
        Some(id) => studies.into_iter().find(|s| s.id == id),
        None => studies.into_iter().rev().find(|s| s.name == which),
    };
    found.ok_or_else(|| {
        UsageError::new(format!("no study '{which}' in {}; `iomatrix study list` lists them", db_name(store))).into()
    })
}

fn db_name(store: &Store) -> String {
    store.path().display().to_string()
}
