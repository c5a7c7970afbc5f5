//! Studies: a study file's runs, linked. A [`StudyRecord`] is one study
//! file run (and resumed) at one scale; its [`StudyStep`]s are the
//! (configuration, step) pairs of its plan in order, each with its outcome
//! and, once done, its run. Runs stay ordinary runs (they also carry the
//! study's labels), so everything that reads runs reads a study's too.
//!
//! A study owns its runs by id, never by their labels (a user's run, or one a
//! merged database brought, may carry them): each run a step starts joins the
//! study as it begins ([`Store::begin_run_claimed`] with a [`StudyClaim`]),
//! proven by a nonce only the study's process holds (the study stores its
//! SHA-256), and is listed in `study_runs` with its step and the step's key.
//! `db merge` never copies `study_runs`: a merged run joins no study.

use super::{params, time, OptionalExtension, ProcessId, Result, Store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The environment variable through which a study's step proves its membership to the run it
/// starts: `STUDY_ID:SEQ:NONCE` ([`StudyClaim`]). Nobody types it; a run without it cannot carry
/// the study labels.
pub const STUDY_CLAIM_VAR: &str = "IOMATRIX_STUDY_CLAIM";

/// A run's claim to be step `seq` of study `study`, with the nonce of the study's process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StudyClaim {
    /// The study record's id.
    pub study: i64,
    /// The step's place in the study's plan.
    pub seq: usize,
    /// The nonce of the process running the study (the study stores only its SHA-256).
    pub nonce: String,
}

impl StudyClaim {
    /// The claim as [`STUDY_CLAIM_VAR`] holds it.
    pub fn to_var(&self) -> String {
        format!("{}:{}:{}", self.study, self.seq, self.nonce)
    }

    /// The claim in [`STUDY_CLAIM_VAR`]'s value; None when it is not one.
    pub fn parse(value: &str) -> Option<StudyClaim> {
        let mut parts = value.splitn(3, ':');
        let study = parts.next()?.parse().ok()?;
        let seq = parts.next()?.parse().ok()?;
        let nonce = parts.next()?.to_string();
        (!nonce.is_empty()).then_some(StudyClaim { study, seq, nonce })
    }
}

/// A fresh nonce for a study's process: 128 bits from the kernel's random source, in hex.
pub fn new_nonce() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: getrandom(2) writes at most the given length into the buffer given.
        let n = unsafe { libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
            continue;
        }
        filled += n as usize;
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A run a study's step started (from `study_runs`), with what the run row says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyRun {
    /// The run's id.
    pub run_id: i64,
    /// The step that started it, by its place in the plan.
    pub seq: usize,
    /// The key of the step that started it, as it was then.
    pub key: String,
    /// The run's row.
    pub summary: super::RunSummary,
}

/// A study record's status, stored as its lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StudyStatus {
    /// Under way (`study run` again resumes it once its process is gone).
    Running,
    /// Every step done.
    Complete,
    /// Ended with steps skipped or failed (`study run` again tries them again).
    Incomplete,
    /// Stopped on request (Ctrl-C, SIGTERM), or its process was killed (found by the next open
    /// of the database, as a killed run is found).
    Interrupted,
    /// Replaced by a later record of the same study (`study run --restart`).
    Superseded,
}

impl StudyStatus {
    /// The status's stored name ("running", "complete", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Complete => "complete",
            Self::Incomplete => "incomplete",
            Self::Interrupted => "interrupted",
            Self::Superseded => "superseded",
        }
    }
    fn parse(s: &str) -> StudyStatus {
        match s {
            "complete" => Self::Complete,
            "interrupted" => Self::Interrupted,
            "superseded" => Self::Superseded,
            "running" => Self::Running,
            _ => Self::Incomplete,
        }
    }
}

/// A study step's outcome, stored as its lowercase name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Not run yet (or cut short: it runs again from its start).
    Planned,
    /// Its run finished.
    Done,
    /// Its configuration's setup failed.
    Skipped,
    /// Its run failed, or could not start.
    Failed,
}

impl StepStatus {
    /// The status's stored name ("planned", "done", ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planned => "planned",
            Self::Done => "done",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }
    fn parse(s: &str) -> StepStatus {
        match s {
            "done" => Self::Done,
            "skipped" => Self::Skipped,
            "failed" => Self::Failed,
            _ => Self::Planned,
        }
    }
}

/// One study file run (and resumed) at one scale: `iomatrix study`'s record of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyRecord {
    /// The record's id in this database.
    pub id: i64,
    /// The study's name, from its file.
    pub name: String,
    /// The scale it runs at ("full", or the `--scale` given).
    pub scale: String,
    /// The study file's path, as given when it last ran.
    pub file_path: String,
    /// The study file as it was last run: what a changed file is told apart from.
    #[serde(skip)]
    pub file_text: String,
    /// Where the study stands or how it ended.
    pub status: StudyStatus,
    /// When it started, in UTC.
    pub started_at: String,
    /// When it ended, in UTC; None while it runs.
    pub ended_at: Option<String>,
    /// The host whose process runs (or ran) it.
    pub host: String,
    /// That process's id.
    pub pid: i64,
    /// That process's start time in clock ticks since boot; None where it could not be read.
    #[serde(skip)]
    pub pid_start: Option<i64>,
}

impl StudyRecord {
    /// Whether the process that runs (or ran) this study is alive on this host.
    pub fn is_running_elsewhere(&self) -> bool {
        let me = ProcessId::current();
        self.status == StudyStatus::Running
            && self.host == me.host
            && self.pid != me.pid
            && ProcessId::is_alive(self.pid, self.pid_start)
    }

    /// Whether this record says `running` while its process on this host is gone (killed): the
    /// rule `runs` uses for a run ([`ProcessId::is_alive`]: pid and start time).
    pub fn process_gone(&self) -> bool {
        self.status == StudyStatus::Running
            && self.host == ProcessId::this_host()
            && !ProcessId::is_alive(self.pid, self.pid_start)
    }
}

/// One (configuration, step) of a study's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyStep {
    /// The step's place in the plan, from 0.
    pub seq: usize,
    /// The configuration it runs in, as the study file names it.
    pub config: String,
    /// The step's name, as the study file names it.
    pub step: String,
    /// The suite the step runs.
    pub suite: String,
    /// A hash of everything the step runs with (its flags, its configuration).
    pub key: String,
    /// Where the step stands.
    pub status: StepStatus,
    /// The run it made; None where it has made none (yet).
    pub run_id: Option<i64>,
    /// Why it was skipped or failed; what it noted when done.
    pub detail: Option<String>,
    /// How long its run took, setup and teardown excluded.
    pub seconds: Option<f64>,
}

/// Why a run's study claim does not prove a step of a study.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimRefused {
    /// No study of that id.
    #[error("there is no study #{0} in this database")]
    NoStudy(i64),
    /// The study has no step of that number.
    #[error("study #{0} has no step {1}")]
    NoStep(i64, usize),
    /// The claim's nonce is not the study process's.
    #[error("it is not the nonce of the process running study #{0}")]
    OtherNonce(i64),
}

impl Store {
    /// The newest record of study `name` at `scale` that a later one has not replaced.
    pub fn current_study(&self, name: &str, scale: &str) -> Result<Option<StudyRecord>> {
        self.conn
            .query_row(
                &format!(
                    "{STUDY_SELECT} WHERE name = ?1 AND scale = ?2 AND status != 'superseded' ORDER BY id DESC LIMIT 1"
                ),
                params![name, scale],
                study_from_row,
            )
            .optional()
            .map_err(self.err("cannot read studies"))
    }

    /// The study record of that id; None when there is none.
    pub fn load_study(&self, id: i64) -> Result<Option<StudyRecord>> {
        self.conn
            .query_row(&format!("{STUDY_SELECT} WHERE id = ?1"), [id], study_from_row)
            .optional()
            .map_err(self.err("cannot read studies"))
    }

    /// Every study, oldest first.
    pub fn list_studies(&self) -> Result<Vec<StudyRecord>> {
        let mut stmt =
            self.conn.prepare(&format!("{STUDY_SELECT} ORDER BY id")).map_err(self.err("cannot read studies"))?;
        let rows = stmt
            .query_map([], study_from_row)
            .map_err(self.err("cannot read studies"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read studies"))?;
        Ok(rows)
    }

    /// A new study record with its plan, every step `planned`, in one transaction.
    pub fn begin_study(
        &self,
        name: &str,
        scale: &str,
        file_path: &str,
        file_text: &str,
        steps: &[StudyStep],
    ) -> Result<i64> {
        let me = ProcessId::current();
        let tx = self.conn.unchecked_transaction().map_err(self.err("cannot begin a study"))?;
        tx.execute(
            "INSERT INTO studies (name, scale, file_path, file_text, status, started_at_ms, host, pid, pid_start)
             VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8)",
            params![name, scale, file_path, file_text, time::now_ms(), me.host, me.pid, me.start_ticks],
        )
        .map_err(self.err("cannot begin a study"))?;
        let id = tx.last_insert_rowid();
        for s in steps {
            tx.execute(
                "INSERT INTO study_steps (study_id, seq, config, step, suite, key, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'planned')",
                params![id, s.seq as i64, s.config, s.step, s.suite, s.key],
            )
            .map_err(self.err("cannot begin a study"))?;
        }
        tx.commit().map_err(self.err("cannot begin a study"))?;
        Ok(id)
    }

    /// This process takes the study over (resuming it): running again, from `file_path`, whose
    /// text (which may differ from the record's in its conclusions only) is kept.
    pub fn resume_study(&self, id: i64, file_path: &str, file_text: &str) -> Result<()> {
        let me = ProcessId::current();
        self.conn
            .execute(
                "UPDATE studies SET status = 'running', ended_at_ms = NULL, file_path = ?2, file_text = ?3,
                        host = ?4, pid = ?5, pid_start = ?6 WHERE id = ?1",
                params![id, file_path, file_text, me.host, me.pid, me.start_ticks],
            )
            .map_err(self.err("cannot resume a study"))?;
        Ok(())
    }

    /// Ends a study with its status.
    pub fn finish_study(&self, id: i64, status: StudyStatus) -> Result<()> {
        self.conn
            .execute(
                "UPDATE studies SET status = ?2, ended_at_ms = ?3 WHERE id = ?1",
                params![id, status.as_str(), time::now_ms()],
            )
            .map_err(self.err("cannot finish a study"))?;
        Ok(())
    }

    /// A study's steps, in plan order.
    pub fn study_steps(&self, id: i64) -> Result<Vec<StudyStep>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT seq, config, step, suite, key, status, run_id, detail, seconds FROM study_steps
                 WHERE study_id = ?1 ORDER BY seq",
            )
            .map_err(self.err("cannot read a study's steps"))?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(StudyStep {
                    seq: r.get::<_, i64>(0)? as usize,
                    config: r.get(1)?,
                    step: r.get(2)?,
                    suite: r.get(3)?,
                    key: r.get(4)?,
                    status: StepStatus::parse(&r.get::<_, String>(5)?),
                    run_id: r.get(6)?,
                    detail: r.get(7)?,
                    seconds: r.get(8)?,
                })
            })
            .map_err(self.err("cannot read a study's steps"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read a study's steps"))?;
        Ok(rows)
    }

    /// Records step `seq`'s outcome.
    pub fn record_step(
        &self,
        study: i64,
        seq: usize,
        status: StepStatus,
        run_id: Option<i64>,
        detail: Option<&str>,
        seconds: Option<f64>,
    ) -> Result<()> {
        self.conn
            .execute(
                "UPDATE study_steps SET status = ?3, run_id = ?4, detail = ?5, seconds = ?6 WHERE study_id = ?1 AND seq = ?2",
                params![study, seq as i64, status.as_str(), run_id, detail, seconds],
            )
            .map_err(self.err("cannot record a study step"))?;
        Ok(())
    }

    /// The nonce of the process now running study `id`: only its SHA-256 is kept. A run claims
    /// a step of the study with it ([`StudyClaim`]); a nonce of an earlier process no longer does.
    pub fn set_study_nonce(&self, id: i64, nonce: &str) -> Result<()> {
        self.conn
            .execute("UPDATE studies SET nonce_sha256 = ?2 WHERE id = ?1", params![id, sha256_hex(nonce)])
            .map_err(self.err("cannot record the study's nonce"))?;
        Ok(())
    }

    /// Why `claim` does not prove a step of a study, if it does not: no such study or step, or
    /// a nonce that is not that study's process's.
    pub fn check_study_claim(&self, claim: &StudyClaim) -> Result<std::result::Result<String, ClaimRefused>> {
        let stored: Option<(Option<String>, Option<String>)> = self
            .conn
            .query_row(
                "SELECT s.nonce_sha256, st.key FROM studies s LEFT JOIN study_steps st
                     ON st.study_id = s.id AND st.seq = ?2 WHERE s.id = ?1",
                params![claim.study, claim.seq as i64],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.err("cannot read studies"))?;
        Ok(match stored {
            None => Err(ClaimRefused::NoStudy(claim.study)),
            Some((_, None)) => Err(ClaimRefused::NoStep(claim.study, claim.seq + 1)),
            Some((Some(hash), Some(key))) if hash == sha256_hex(&claim.nonce) => Ok(key),
            Some(_) => Err(ClaimRefused::OtherNonce(claim.study)),
        })
    }

    /// Records run `run_id` (begun in `tx`) as step `claim.seq`'s of its study, if the claim holds.
    pub(crate) fn join_study(&self, tx: &rusqlite::Transaction<'_>, run_id: i64, claim: &StudyClaim) -> Result<()> {
        let key = match self.check_study_claim(claim)? {
            Ok(key) => key,
            Err(why) => {
                return Err(super::StoreError::Other(
                    format!("the run cannot join study #{} ({}): {why}", claim.study, super::STUDY_CLAIM_VAR),
                    self.path.clone(),
                ))
            }
        };
        tx.execute(
            "INSERT INTO study_runs (run_id, study_id, seq, key) VALUES (?1, ?2, ?3, ?4)",
            params![run_id, claim.study, claim.seq as i64, key],
        )
        .map_err(self.err("cannot record the run as the study's"))?;
        Ok(())
    }

    /// Records run `run_id` as step `seq`'s of study `study` (a step across hosts, whose run
    /// the study found by the launch id it gave it), unless it is some study's already.
    pub fn adopt_study_run(&self, study: i64, seq: usize, key: &str, run_id: i64) -> Result<bool> {
        let n = self
            .conn
            .execute(
                "INSERT OR IGNORE INTO study_runs (run_id, study_id, seq, key) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, study, seq as i64, key],
            )
            .map_err(self.err("cannot record the run as the study's"))?;
        Ok(n == 1 || self.study_runs(study)?.iter().any(|r| r.run_id == run_id && r.seq == seq))
    }

    /// The runs study `id`'s steps started, oldest first (what `study_runs` lists of it).
    pub fn study_runs(&self, id: i64) -> Result<Vec<StudyRun>> {
        let mut stmt = self
            .conn
            .prepare("SELECT run_id, seq, key FROM study_runs WHERE study_id = ?1 ORDER BY run_id")
            .map_err(self.err("cannot read a study's runs"))?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as usize, r.get::<_, String>(2)?)))
            .map_err(self.err("cannot read a study's runs"))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err("cannot read a study's runs"))?;
        let mut out = Vec::with_capacity(rows.len());
        for (run_id, seq, key) in rows {
            if let Some(run) = self.load_run_summary(run_id)? {
                out.push(StudyRun { run_id, seq, key, summary: run });
            }
        }
        Ok(out)
    }

    /// Runs still `running` whose study process on this host is gone (killed): `interrupted`,
    /// as [`Store::mark_abandoned_runs`] marks a run.
    pub(crate) fn mark_abandoned_studies(&self) -> Result<()> {
        for s in self.list_studies()?.into_iter().filter(StudyRecord::process_gone) {
            self.conn
                .execute("UPDATE studies SET status = 'interrupted' WHERE id = ?1 AND status = 'running'", [s.id])
                .map_err(self.err("cannot mark an abandoned study"))?;
        }
        Ok(())
    }

    /// Removes a run and everything it stored (a study's run cut short, run again from its start).
    pub fn delete_run(&self, run_id: i64) -> Result<()> {
        self.conn.execute("DELETE FROM runs WHERE id = ?1", [run_id]).map_err(self.err("cannot delete a run"))?;
        Ok(())
    }
}

/// A score a study drew over its steps for one configuration, as it was stored when the study
/// finished (`study_scores`).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredStudyScore {
    /// The configuration, as the study file names it.
    pub config: String,
    /// Which score (the study file's `score`).
    pub kind: String,
    /// The score as the study wrote it (JSON text; the binary reads it back).
    pub score_json: String,
    /// When it was stored.
    pub stored_at: String,
}

impl Store {
    /// Stores study `study`'s `kind` score, one `(config, JSON)` a configuration in order,
    /// replacing what it stored of that kind before, in one transaction.
    pub fn store_study_scores(&self, study: i64, kind: &str, scores: &[(String, String)]) -> Result<()> {
        let failed = self.err("cannot store the study's score");
        let tx = self.conn.unchecked_transaction().map_err(&failed)?;
        tx.execute("DELETE FROM study_scores WHERE study_id = ?1 AND kind = ?2", params![study, kind])
            .map_err(&failed)?;
        let now = time::now_ms();
        for (seq, (config, json)) in scores.iter().enumerate() {
            tx.execute(
                "INSERT INTO study_scores (study_id, kind, seq, config, score_json, stored_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![study, kind, seq as i64, config, json, now],
            )
            .map_err(&failed)?;
        }
        tx.commit().map_err(&failed)?;
        Ok(())
    }

    /// Study `id`'s stored scores of `kind`, in the order they were stored (empty when none is).
    pub fn study_scores(&self, id: i64, kind: &str) -> Result<Vec<StoredStudyScore>> {
        let failed = self.err("cannot read a study's scores");
        let mut stmt = self
            .conn
            .prepare(
                "SELECT config, kind, score_json, stored_at_ms FROM study_scores
                 WHERE study_id = ?1 AND kind = ?2 ORDER BY seq",
            )
            .map_err(&failed)?;
        let rows = stmt
            .query_map(params![id, kind], |r| {
                Ok(StoredStudyScore {
                    config: r.get(0)?,
                    kind: r.get(1)?,
                    score_json: r.get(2)?,
                    stored_at: time::format_utc(r.get(3)?),
                })
            })
            .map_err(&failed)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(&failed)?;
        Ok(rows)
    }
}

const STUDY_SELECT: &str =
    "SELECT id, name, scale, file_path, file_text, status, started_at_ms, ended_at_ms, host, pid,
        pid_start FROM studies";

fn study_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StudyRecord> {
    Ok(StudyRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        scale: r.get(2)?,
        file_path: r.get(3)?,
        file_text: r.get(4)?,
        status: StudyStatus::parse(&r.get::<_, String>(5)?),
        started_at: time::format_utc(r.get(6)?),
        ended_at: r.get::<_, Option<i64>>(7)?.map(time::format_utc),
        host: r.get(8)?,
        pid: r.get(9)?,
        pid_start: r.get(10)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewRun;

    fn new_run(labels: &[(&str, &str)]) -> NewRun {
        NewRun {
            suite: "iozone".into(),
            command_line: "iomatrix run iozone".into(),
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            plan: serde_json::json!({}),
            environment: serde_json::json!({}),
            conditions: serde_json::json!({}),
            total_cells: 1,
        }
    }

    fn step(seq: usize) -> StudyStep {
        StudyStep {
            seq,
            config: "c".into(),
            step: format!("s{seq}"),
            suite: "iozone".into(),
            key: format!("key{seq}"),
            status: StepStatus::Planned,
            run_id: None,
            detail: None,
            seconds: None,
        }
    }

    #[test]
    fn a_run_joins_a_study_only_with_the_nonce_of_its_process() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store.begin_study("s", "full", "/s.toml", "x", &[step(0), step(1)]).unwrap();
        let nonce = new_nonce().unwrap();
        assert_eq!(nonce.len(), 32);
        assert_ne!(nonce, new_nonce().unwrap());
        store.set_study_nonce(id, &nonce).unwrap();
        let labels = [("study-id", "1"), ("step", "s1")];
        // Labels alone: an ordinary run, no study's.
        let by_hand = store.begin_run(&new_run(&labels)).unwrap();
        let wrong = StudyClaim { study: id, seq: 1, nonce: "0".repeat(32) };
        let e = store.begin_run_claimed(&new_run(&labels), Some(&wrong)).unwrap_err().to_string();
        assert!(e.contains("not the nonce"), "{e}");
        let e = store
            .begin_run_claimed(&new_run(&labels), Some(&StudyClaim { seq: 7, ..wrong.clone() }))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no step 8"), "{e}");
        let claim = StudyClaim { study: id, seq: 1, nonce: nonce.clone() };
        assert_eq!(StudyClaim::parse(&claim.to_var()), Some(claim.clone()));
        let joined = store.begin_run_claimed(&new_run(&labels), Some(&claim)).unwrap();
        let runs = store.study_runs(id).unwrap();
        assert_eq!(runs.iter().map(|r| (r.run_id, r.seq, r.key.as_str())).collect::<Vec<_>>(), [(joined, 1, "key1")]);
        assert!(!runs.iter().any(|r| r.run_id == by_hand));
        // A later process of the study holds another nonce: the old one no longer joins.
        store.set_study_nonce(id, &new_nonce().unwrap()).unwrap();
        assert!(store.begin_run_claimed(&new_run(&labels), Some(&claim)).is_err());
        // The refused runs were not stored: the hand-made one and the joined one are all.
        assert_eq!(store.list_runs().unwrap().len(), 2);
        store.delete_run(joined).unwrap();
        assert!(store.study_runs(id).unwrap().is_empty());
    }

    #[test]
    fn a_studys_scores_are_stored_in_order_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let id = store.begin_study("s", "small", "/s.toml", "x", &[step(0)]).unwrap();
        assert!(store.study_scores(id, "io500").unwrap().is_empty(), "none stored before the study finished");
        let first = [("zeta".to_string(), r#"{"total": 2}"#.to_string()), ("alpha".into(), r#"{"total": 1}"#.into())];
        store.store_study_scores(id, "io500", &first).unwrap();
        let stored = store.study_scores(id, "io500").unwrap();
        let read: Vec<(&str, &str)> = stored.iter().map(|s| (s.config.as_str(), s.score_json.as_str())).collect();
        assert_eq!(read, [("zeta", r#"{"total": 2}"#), ("alpha", r#"{"total": 1}"#)], "the file's order");
        assert!(stored.iter().all(|s| s.kind == "io500" && !s.stored_at.is_empty()));
        assert!(store.study_scores(id, "other").unwrap().is_empty(), "read by kind");
        // Resumed to the end again: the new scores replace the old, none is left over.
        store.store_study_scores(id, "io500", &[("alpha".into(), r#"{"total": 3}"#.into())]).unwrap();
        let again = store.study_scores(id, "io500").unwrap();
        assert_eq!(again.iter().map(|s| s.score_json.as_str()).collect::<Vec<_>>(), [r#"{"total": 3}"#]);
    }
}
