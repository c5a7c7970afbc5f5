//! A study's conclusions: its `[[compare]]`, `[[sweep]]` and `report`
//! entries as `iomatrix compare`, `sweep` and `report` command lines over
//! its runs (selected by the labels the study put on them where those select
//! exactly the step's own run, else by its id), parsed by those commands' own
//! parsers and run in this process; and the score the file asks for (`score = "io500"`).

use crate::commands::compare::{self, CompareArgs};
use crate::commands::report::{self, ReportArgs};
use crate::commands::sweep::{self, SweepArgs};
use clap::Parser;
use iomatrix_store::{StepStatus, StudyStep};
use iomatrix_study::StudyFile;
use std::path::Path;

#[derive(Parser)]
#[command(name = "compare")]
struct CompareLine {
    #[command(flatten)]
    args: CompareArgs,
}

#[derive(Parser)]
#[command(name = "sweep")]
struct SweepLine {
    #[command(flatten)]
    args: SweepArgs,
}

#[derive(Parser)]
#[command(name = "report")]
struct ReportLine {
    #[command(flatten)]
    args: ReportArgs,
}

/// The runs of one configuration's step: a selector `compare`, `sweep` and `report` take. The
/// labels read best, but a user's run or a merged one may carry them too: they are the selector
/// only while they select the step's own run (by id, the study's record) and nothing else.
struct Selectors {
    study: i64,
    /// (config, step) -> the step's own run.
    own: Vec<(String, String, Option<i64>)>,
    runs: Vec<iomatrix_store::RunSummary>,
}

impl Selectors {
    fn new(db: &Path, study: i64, steps: &[StudyStep]) -> anyhow::Result<Selectors> {
        let own = steps.iter().map(|s| (s.config.clone(), s.step.clone(), s.run_id)).collect();
        Ok(Selectors { study, own, runs: iomatrix_store::Store::open(db)?.list_runs()? })
    }

    fn of(&self, config: &str, step: &str) -> String {
        let by_labels = format!("study-id={},config={config},step={step}", self.study);
        let own = self.own.iter().find(|(c, s, _)| c == config && s == step).and_then(|(_, _, run)| *run);
        let has = |r: &iomatrix_store::RunSummary, k: &str, v: &str| r.labels.iter().any(|(rk, rv)| rk == k && rv == v);
        let labelled: Vec<i64> = self
            .runs
            .iter()
            .filter(|r| has(r, "study-id", &self.study.to_string()) && has(r, "config", config) && has(r, "step", step))
            .map(|r| r.id)
            .collect();
        match own {
            Some(id) if labelled != [id] => id.to_string(),
            _ => by_labels,
        }
    }
}

/// Prints every conclusion the file asks for, over the study's done steps; one that lacks its
/// runs says so and the others go on. The report is written only with `write_report`
/// (`study run`; `study show` names it). Errors only for the results database itself.
pub fn print(db: &Path, file: &StudyFile, study: i64, steps: &[StudyStep], write_report: bool) -> anyhow::Result<()> {
    let done = |config: &str, step: &str| {
        steps.iter().any(|s| s.config == config && s.step == step && s.status == StepStatus::Done)
    };
    let sel = Selectors::new(db, study, steps)?;
    let selector = |_: i64, config: &str, step: &str| sel.of(config, step);
    let mut step_names: Vec<&str> = steps.iter().map(|s| s.step.as_str()).collect();
    step_names.sort_unstable();
    step_names.dedup();
    for c in &file.compares {
        let (a, b) = (c.a.get_ref(), c.b.get_ref());
        let wanted: Vec<&str> = match &c.step {
            Some(s) => vec![s.get_ref().as_str()],
            None => step_names.clone(),
        };
        for step in wanted {
            let title = format!("{b} against {a}, step '{step}'");
            if !done(a, step) || !done(b, step) {
                say(&format!("\n== {title}: not compared (a side has no finished run)\n"));
                continue;
            }
            let mut argv = vec!["compare".to_string(), selector(study, a, step), selector(study, b, step)];
            for (flag, value) in [("--limit", &c.limit), ("--files", &c.files), ("--records", &c.records)] {
                if let Some(v) = value {
                    argv.extend([flag.to_string(), v.clone()]);
                }
            }
            say(&format!("\n== {title} (iomatrix {})\n", shown(&argv)));
            let outcome = CompareLine::try_parse_from(&argv)
                .map_err(anyhow::Error::from)
                .and_then(|line| compare::run(line.args, db, true));
            said(&title, outcome);
        }
    }
    for s in &file.sweeps {
        let step = s.step.get_ref();
        let configs: Vec<&str> = if s.configs.is_empty() {
            file.configs.iter().map(|c| c.name.get_ref().as_str()).collect()
        } else {
            s.configs.iter().map(|c| c.get_ref().as_str()).collect()
        };
        let title = format!("sweep of step '{step}' by {}", s.by);
        let ready: Vec<&str> = configs.iter().copied().filter(|c| done(c, step)).collect();
        if ready.len() < configs.len() {
            say(&format!("\n== {title}: not swept (a configuration has no finished run)\n"));
            continue;
        }
        let mut argv = vec!["sweep".to_string()];
        argv.extend(ready.iter().map(|c| selector(study, c, step)));
        argv.extend(["--by".to_string(), s.by.clone()]);
        say(&format!("\n== {title} (iomatrix {})\n", shown(&argv)));
        let outcome =
            SweepLine::try_parse_from(&argv).map_err(anyhow::Error::from).and_then(|line| sweep::run(line.args, db));
        said(&title, outcome);
    }
    for scored in super::io500::shown(&iomatrix_store::Store::open(db)?, file, study, steps)? {
        say(&format!("\n{}\n", super::io500::lines(&scored).join("\n")));
    }
    if let (Some(r), false) = (&file.report, write_report) {
        say(&format!("\nreport: {} (written by `study run`)\n", r.file));
    }
    if let (Some(r), true) = (&file.report, write_report) {
        let mut argv = vec!["report".to_string()];
        argv.extend(steps.iter().filter(|s| s.status == StepStatus::Done).map(|s| selector(study, &s.config, &s.step)));
        if argv.len() == 1 {
            say("\nno report: no step finished\n");
            return Ok(());
        }
        argv.extend(["-o".to_string(), r.file.clone()]);
        if let Some(l) = &r.limit {
            argv.extend(["--limit".to_string(), l.clone()]);
        }
        let outcome =
            ReportLine::try_parse_from(&argv).map_err(anyhow::Error::from).and_then(|line| report::run(line.args, db));
        if outcome.is_ok() {
            say(&format!("\nreport: {}\n", r.file));
        }
        said("the report", outcome);
    }
    Ok(())
}

fn say(text: &str) {
    let _ = crate::out::print(text);
}

fn shown(argv: &[String]) -> String {
    crate::harness::args::command_text(argv)
}

fn said(what: &str, outcome: anyhow::Result<std::process::ExitCode>) {
    if let Err(e) = outcome {
        eprintln!("iomatrix: warning: {what}: {e:#}");
    }
}
