//! Studies: a study file's runs, linked. A [`StudyRecord`] is one study
//! file run (and resumed) at one scale; its [`StudyStep`]s are the
//! (configuration, step) pairs of its plan in order, each with its outcome
//! and, once done, its run. Runs stay ordinary runs (they also carry the
//! study's labels), so everything that reads runs reads a study's too.

use super::{params, time, OptionalExtension, ProcessId, Result, Store};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StudyStatus {
    /// Under way, or its process died (`study run` again resumes it).
    Running,
    /// Every step done.
    Complete,
    /// Ended with steps skipped or failed (`study run` again tries them again).
    Incomplete,
    /// Stopped on request (Ctrl-C, SIGTERM).
    Interrupted,
    /// Replaced by a later record of the same study (`study run --restart`).
    Superseded,
}

impl StudyStatus {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// Not run yet (or cut short: it runs again from its start).
    Planned,
    Done,
    /// Its configuration's setup failed.
    Skipped,
    /// Its run failed, or could not start.
    Failed,
}

impl StepStatus {
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyRecord {
    pub id: i64,
    pub name: String,
    pub scale: String,
    pub file_path: String,
    /// The study file as it was last run: what a changed file is told apart from.
    #[serde(skip)]
    pub file_text: String,
    pub status: StudyStatus,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub host: String,
    pub pid: i64,
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
}

/// One (configuration, step) of a study's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyStep {
    pub seq: usize,
    pub config: String,
    pub step: String,
    pub suite: String,
    /// A hash of everything the step runs with (its flags, its configuration).
    pub key: String,
    pub status: StepStatus,
    pub run_id: Option<i64>,
    /// Why it was skipped or failed; what it noted when done.
    pub detail: Option<String>,
    /// How long its run took, setup and teardown excluded.
    pub seconds: Option<f64>,
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

    pub fn finish_study(&self, id: i64, status: StudyStatus) -> Result<()> {
        self.conn
            .execute(
                "UPDATE studies SET status = ?2, ended_at_ms = ?3 WHERE id = ?1",
                params![id, status.as_str(), time::now_ms()],
            )
            .map_err(self.err("cannot finish a study"))?;
        Ok(())
    }

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

    /// Removes a run and everything it stored (a study's run cut short, run again from its start).
    pub fn delete_run(&self, run_id: i64) -> Result<()> {
        self.conn.execute("DELETE FROM runs WHERE id = ?1", [run_id]).map_err(self.err("cannot delete a run"))?;
        Ok(())
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
