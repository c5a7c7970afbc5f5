//! `iomatrix study run FILE`: the plan's steps in order, each an
//! `iomatrix run` of its own whose outcome is recorded as soon as it ends;
//! a study record found for the same file and scale is resumed (its done
//! steps are not run again), a changed file is refused until `--restart`.

use super::process::{self, Ended};
use super::{conclude, folder_of, io500, RunParser};
use crate::harness::signals;
use anyhow::Context;
use iomatrix_core::UsageError;
use iomatrix_store::{ProcessId, RunStatus, StepStatus, Store, StudyRecord, StudyStatus, StudyStep};
use iomatrix_study::{Across, Plan, PlannedStep, Scale, StudyFile};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The study file (TOML, docs/studies.md)
    file: PathBuf,

    /// full: the steps as written; small: each step's `small` flags over them (seconds each:
    /// for CI and a first try). A study's records at each scale are kept apart
    #[arg(long, default_value = "full", value_parser = ["full", "small"])]
    scale: String,

    /// Begin the study again although its file changed since it ran: its finished runs stay
    /// in the database, no longer part of the study
    #[arg(long)]
    restart: bool,

    /// Let the study's logs replace files at their paths that are not study logs (the logs
    /// never replace the results database, whatever the flag)
    #[arg(long)]
    force: bool,

    /// The hosts for the steps that name `hosts = "${HOSTS:-}"` (a hostfile, a line per host:
    /// HOST [slots=N], or a,b,c): the study's ${HOSTS}. Those steps run under mpirun, one client per
    /// slot; without it they run on this host
    #[arg(long, value_name = "FILE|LIST")]
    hosts: Option<String>,

    /// A device the steps still to run of a resumed study may destroy data on: a resume never
    /// replays a step's --destroy-data-on from the file (the name may be another disk's by now);
    /// give each again here
    #[arg(long = "destroy-data-on", value_name = "DEVICE")]
    destroy_data_on: Vec<String>,
}

/// Longest wait for a step's run left behind by a killed study to finish stopping.
const LEFTOVER_WAIT: Duration = Duration::from_secs(120);

pub fn run(args: RunArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let text = iomatrix_guard::read_text(&args.file, &iomatrix_guard::Input::STUDY).map_err(UsageError::from)?;
    let shown = args.file.display().to_string();
    let scale = if args.scale == "small" { Scale::Small } else { Scale::Full };
    let file = iomatrix_study::parse(&text).map_err(|e| UsageError::new(format!("{shown}: {e}")))?;
    let plan =
        iomatrix_study::plan(&file, &text, scale, &RunParser).map_err(|e| UsageError::new(format!("{shown}: {e}")))?;
    let store = Store::open_for_writing(db)?;
    let name = file.name.get_ref().clone();
    let (record, resumed) = take_record(&store, &args, &name, scale, &text, &plan)?;
    // Only this process knows the nonce: a run proves it is one of this study's steps with it.
    let nonce = iomatrix_store::new_nonce().context("cannot draw the study's nonce")?;
    store.set_study_nonce(record.id, &nonce)?;
    let stop = signals::install()?;
    if let Err(e) = process::adopt_orphans() {
        eprintln!(
            "iomatrix: warning: cannot adopt the orphans of the study's setups (PR_SET_CHILD_SUBREAPER: {e}): a \
             process a setup starts in a session of its own (setsid) may outlive a stopped study"
        );
    }
    let logs = match log_folder(db, &name, record.id) {
        Ok(logs) => logs,
        Err(e) => {
            // Never left `running` behind a study that could not begin.
            store.finish_study(record.id, StudyStatus::Incomplete)?;
            return Err(e);
        }
    };
    let mut study = Study {
        store: &store,
        db,
        file: &file,
        path: &args.file,
        text: &text,
        plan: &plan,
        scale,
        id: record.id,
        nonce,
        devices_given: resumed.then(|| args.destroy_data_on.clone()),
        logs,
        force: args.force,
        vars: args.hosts.iter().map(|h| ("HOSTS".to_string(), h.clone())).collect(),
        worst: 0,
        durations: Vec::new(),
    };
    let done_before = done_count(&store.study_steps(record.id)?);
    let outcome = study.run_steps();
    let steps = store.study_steps(record.id)?;
    let all_done = steps.iter().all(|s| s.status == StepStatus::Done);
    if matches!(outcome, Ok(Flow::Stopped)) && stop.load(Ordering::SeqCst) {
        // What the setups left running (daemons, `setsid` children) ends with the stopped study.
        match process::end_descendants() {
            Ok(0) => {}
            Ok(n) => eprintln!("iomatrix: study stopped: ended {n} process(es) its setups had left running"),
            Err(why) => eprintln!("iomatrix: warning: {why}"),
        }
    }
    let status = match &outcome {
        Ok(Flow::Stopped) if stop.load(Ordering::SeqCst) => StudyStatus::Interrupted,
        _ if all_done => StudyStatus::Complete,
        _ => StudyStatus::Incomplete,
    };
    store.finish_study(record.id, status)?;
    if status == StudyStatus::Complete {
        io500::store_finished(&store, &file, record.id, &steps, done_count(&steps) > done_before)?;
    }
    let flow = outcome?;
    if let Flow::Refused(why) = flow {
        return Err(UsageError::new(why).into());
    }
    let done = steps.iter().filter(|s| s.status == StepStatus::Done).count();
    eprintln!(
        "study '{name}' (#{}): {done} of {} steps done, {}; logs in {}",
        record.id,
        steps.len(),
        status.as_str(),
        study.logs.display()
    );
    if flow == Flow::Stopped {
        if stop.load(Ordering::SeqCst) {
            return Ok(ExitCode::from(signals::exit_code()));
        }
        return Ok(ExitCode::from(crate::exit::USAGE));
    }
    conclude::print(db, &file, record.id, &steps, true)?;
    if !all_done {
        eprintln!("iomatrix: study '{name}': some steps did not run (see above); `iomatrix study run {shown}` tries them again");
    }
    Ok(ExitCode::from(if all_done { study.worst } else { study.worst.max(crate::exit::CLIENTS_LOST) }))
}

fn done_count(steps: &[StudyStep]) -> usize {
    steps.iter().filter(|s| s.status == StepStatus::Done).count()
}

/// The study's record: the current one resumed (unless its file changed, or `--restart`), or a new one.
fn take_record(
    store: &Store,
    args: &RunArgs,
    name: &str,
    scale: Scale,
    text: &str,
    plan: &Plan,
) -> anyhow::Result<(StudyRecord, bool)> {
    let path = std::path::absolute(&args.file).unwrap_or_else(|_| args.file.clone()).display().to_string();
    let new_steps: Vec<StudyStep> = plan
        .steps
        .iter()
        .map(|s| StudyStep {
            seq: s.seq,
            config: s.config_name.clone(),
            step: s.step_name.clone(),
            suite: s.suite.clone(),
            key: s.key.clone(),
            status: StepStatus::Planned,
            run_id: None,
            detail: None,
            seconds: None,
        })
        .collect();
    let begin = |store: &Store| -> anyhow::Result<StudyRecord> {
        let id = store.begin_study(name, scale.as_str(), &path, text, &new_steps)?;
        store.load_study(id)?.context("the study record just written is not there")
    };
    let Some(current) = store.current_study(name, scale.as_str())? else {
        return Ok((begin(store)?, false));
    };
    if current.is_running_elsewhere() {
        return Err(UsageError::new(format!(
            "study '{name}' (#{}) is being run by process {} on this host: wait for it, or stop it first",
            current.id, current.pid
        ))
        .into());
    }
    let stored = store.study_steps(current.id)?;
    let done = stored.iter().filter(|s| s.status == StepStatus::Done).count();
    if args.restart {
        store.finish_study(current.id, StudyStatus::Superseded)?;
        eprintln!(
            "study '{name}': beginning again (--restart); record #{} and its {done} finished run(s) stay in the database",
            current.id
        );
        return Ok((begin(store)?, false));
    }
    let triples: Vec<(String, String, String)> =
        stored.iter().map(|s| (s.config.clone(), s.step.clone(), s.key.clone())).collect();
    let changed = iomatrix_study::changes(&triples, plan);
    if !changed.is_empty() {
        return Err(UsageError::new(format!(
            "{} changed since study '{name}' (#{}) ran ({done} of {} steps done):\n  - {}\nadd --restart to begin it \
             again (the finished runs stay in the database, no longer part of the study), or undo the change to resume it",
            args.file.display(),
            current.id,
            stored.len(),
            changed.join("\n  - ")
        ))
        .into());
    }
    let todo: Vec<&PlannedStep> =
        plan.steps.iter().filter(|p| stored.get(p.seq).is_none_or(|r| r.status != StepStatus::Done)).collect();
    check_destroy_flags(&todo, &args.destroy_data_on, name, current.id)?;
    store.resume_study(current.id, &path, text)?;
    if done > 0 || current.status != StudyStatus::Running {
        eprintln!("study '{name}': resuming record #{} ({done} of {} steps done)", current.id, stored.len());
    }
    Ok((current, true))
}

/// The devices `step`'s flags let it destroy data on (`--destroy-data-on`, as written).
fn destroy_flags(step: &PlannedStep) -> Vec<&str> {
    let mut it = step.args.iter();
    let mut out = Vec::new();
    while let Some(a) = it.next() {
        if a == DESTROY_FLAG {
            out.extend(it.next().map(String::as_str));
        } else if let Some(v) = a.strip_prefix("--destroy-data-on=") {
            out.push(v);
        }
    }
    out
}

const DESTROY_FLAG: &str = "--destroy-data-on";

/// Whether `device` is one the user named on this command line (by the same name, or a name of
/// the same device node).
fn named_again(device: &str, given: &[String]) -> bool {
    let real = |p: &str| std::fs::canonicalize(p).ok();
    given.iter().any(|g| g == device || (real(g).is_some() && real(g) == real(device)))
}

/// A resumed study never replays a step's `--destroy-data-on`: each device the steps still to
/// run name must be given again on this command line (one written with `${VAR}` is checked as
/// its step starts). Refused (exit 2) otherwise, before the record is touched.
fn check_destroy_flags(todo: &[&PlannedStep], given: &[String], name: &str, id: i64) -> anyhow::Result<()> {
    let mut missing: Vec<&str> = todo
        .iter()
        .flat_map(|p| destroy_flags(p))
        .filter(|d| if d.contains("${") { given.is_empty() } else { !named_again(d, given) })
        .collect();
    missing.dedup();
    if missing.is_empty() {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "study '{name}' (#{id}) is resumed, and its steps still to run destroy data on {}: a resumed study never \
         replays {DESTROY_FLAG} from its file (a device's name may be another disk's since it began); check the \
         device and give it again: `iomatrix study run FILE {}`",
        missing.join(", "),
        missing.iter().map(|d| format!("{DESTROY_FLAG} {d}")).collect::<Vec<_>>().join(" ")
    ))
    .into())
}

/// Each study's logs: `studies/NAME-ID/` beside the results database.
fn log_folder(db: &Path, name: &str, id: i64) -> anyhow::Result<PathBuf> {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let dir = db.parent().unwrap_or(Path::new(".")).join("studies").join(format!("{safe}-{id}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make the study's log folder {}", dir.display()))?;
    Ok(dir)
}

/// How a setup or teardown command went.
enum Shell {
    /// Its `KEY=VALUE` output.
    Done(BTreeMap<String, String>),
    /// Why it failed.
    Failed(String),
    /// The study was told to stop; it ended, with its process group.
    Stopped,
}

impl Shell {
    /// Why a teardown did not finish, if it did not.
    fn failure(self) -> Option<String> {
        match self {
            Shell::Done(_) => None,
            Shell::Failed(why) => Some(why),
            Shell::Stopped => Some("stopped (the study was told to stop)".into()),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Flow {
    Finished,
    /// Stopped early: a signal, or the file changed under the study.
    Stopped,
    /// A step's run refused its flags (exit 2): the study file needs fixing; why.
    Refused(String),
}

struct Study<'a> {
    store: &'a Store,
    db: &'a Path,
    file: &'a StudyFile,
    path: &'a Path,
    text: &'a str,
    plan: &'a Plan,
    scale: Scale,
    id: i64,
    /// What the study's steps' runs prove their membership with (`IOMATRIX_STUDY_CLAIM`).
    nonce: String,
    /// On a resumed study, the devices named on its command line: the only ones a step may
    /// destroy data on (`--destroy-data-on` is never replayed from the file).
    devices_given: Option<Vec<String>>,
    logs: PathBuf,
    /// `--force`: logs may replace files that are not study logs.
    force: bool,
    /// Variables from the study's setup's output.
    vars: BTreeMap<String, String>,
    /// The worst outcome so far as an exit code: 0, 3 (a setup, teardown or step failed, or lost
    /// clients), 4 (--verify found mismatches).
    worst: u8,
    /// How long each finished step's run took, for the time left.
    durations: Vec<f64>,
}

impl Study<'_> {
    fn run_steps(&mut self) -> anyhow::Result<Flow> {
        let recorded = self.store.study_steps(self.id)?;
        let todo: Vec<&PlannedStep> = self
            .plan
            .steps
            .iter()
            .filter(|p| recorded.get(p.seq).is_none_or(|r| r.status != StepStatus::Done))
            .collect();
        let total = self.plan.steps.len();
        self.durations = recorded.iter().filter(|r| r.status == StepStatus::Done).filter_map(|r| r.seconds).collect();
        let mut finished = total - todo.len();
        if todo.is_empty() {
            eprintln!("study '{}': all {total} steps are done", self.file.name.get_ref());
            return Ok(Flow::Finished);
        }
        if let Some(cmd) = &self.file.setup {
            match self.shell("study setup", cmd, &self.env(&BTreeMap::new(), None)?, "setup")? {
                Shell::Failed(why) => {
                    for p in &todo {
                        self.store.record_step(self.id, p.seq, StepStatus::Skipped, None, Some(&why), None)?;
                    }
                    eprintln!("iomatrix: study setup failed, every step skipped: {why}");
                    self.worst = self.worst.max(crate::exit::CLIENTS_LOST);
                    return Ok(Flow::Finished);
                }
                // Told to stop during the setup: its steps stay planned, for the study run again.
                Shell::Stopped => return Ok(Flow::Stopped),
                Shell::Done(vars) => self.vars.extend(vars),
            }
        }
        let flow = self.visits(&todo, &mut finished, total);
        self.remove_strays()?;
        if let Some(cmd) = &self.file.teardown {
            if let Some(why) =
                self.shell("study teardown", cmd, &self.env(&BTreeMap::new(), None)?, "teardown")?.failure()
            {
                eprintln!("iomatrix: warning: study teardown failed: {why}");
                self.worst = self.worst.max(crate::exit::CLIENTS_LOST);
            }
        }
        flow
    }

    /// Consecutive steps of one configuration are one visit: its setup, its steps, its teardown.
    fn visits(&mut self, todo: &[&PlannedStep], finished: &mut usize, total: usize) -> anyhow::Result<Flow> {
        let mut setup_failed: BTreeMap<usize, String> = BTreeMap::new();
        let mut i = 0;
        while i < todo.len() {
            let config_index = todo[i].config;
            let visit: Vec<&PlannedStep> = todo[i..].iter().take_while(|p| p.config == config_index).copied().collect();
            i += visit.len();
            let config = &self.file.configs[config_index];
            let cname = config.name.get_ref().clone();
            if let Some(why) = setup_failed.get(&config_index) {
                for p in &visit {
                    self.store.record_step(self.id, p.seq, StepStatus::Skipped, None, Some(why), None)?;
                }
                continue;
            }
            let mut config_vars = BTreeMap::new();
            if let Some(cmd) = &config.setup {
                let env = self.env(&BTreeMap::new(), Some(config_index))?;
                match self.shell(&format!("setup of '{cname}'"), cmd, &env, &format!("setup-{cname}"))? {
                    Shell::Done(vars) => config_vars = vars,
                    Shell::Stopped => return Ok(Flow::Stopped),
                    Shell::Failed(why) => {
                        let why = format!("setup of configuration '{cname}' failed: {why}");
                        eprintln!("iomatrix: {why}; its steps are skipped");
                        for p in todo.iter().filter(|p| p.config == config_index) {
                            self.store.record_step(self.id, p.seq, StepStatus::Skipped, None, Some(&why), None)?;
                        }
                        self.worst = self.worst.max(crate::exit::CLIENTS_LOST);
                        setup_failed.insert(config_index, why);
                        continue;
                    }
                }
            }
            let mut flow = Flow::Finished;
            for p in &visit {
                if signals::STOP.load(Ordering::SeqCst) || self.file_changed() {
                    flow = Flow::Stopped;
                    break;
                }
                *finished += 1;
                flow = self.step(p, &config_vars, *finished, total)?;
                if flow != Flow::Finished {
                    break;
                }
            }
            if let Some(cmd) = &config.teardown {
                let env = self.env(&config_vars, Some(config_index))?;
                if let Some(why) =
                    self.shell(&format!("teardown of '{cname}'"), cmd, &env, &format!("teardown-{cname}"))?.failure()
                {
                    eprintln!("iomatrix: warning: teardown of configuration '{cname}' failed: {why}");
                    self.worst = self.worst.max(crate::exit::CLIENTS_LOST);
                }
            }
            if flow != Flow::Finished {
                return Ok(flow);
            }
        }
        Ok(Flow::Finished)
    }

    /// Whether the study file is no longer what the study started with (said once, when found).
    fn file_changed(&self) -> bool {
        let now = iomatrix_guard::read_text(self.path, &iomatrix_guard::Input::STUDY).unwrap_or_default();
        if now == self.text {
            return false;
        }
        eprintln!(
            "iomatrix: {} changed while the study ran: stopping before the next step; run `iomatrix study run {}` \
             again (it says what changed, and resumes if nothing its steps run with did)",
            self.path.display(),
            self.path.display()
        );
        true
    }

    /// Runs one step (unless its run is already there) and records how it went.
    fn step(
        &mut self,
        p: &PlannedStep,
        config_vars: &BTreeMap<String, String>,
        nth: usize,
        total: usize,
    ) -> anyhow::Result<Flow> {
        let what = format!("{} · {}", p.config_name, p.step_name);
        if let Some(run) = self.leftovers(p)? {
            self.store.record_step(
                self.id,
                p.seq,
                StepStatus::Done,
                Some(run),
                Some("its run had finished before the study stopped"),
                None,
            )?;
            eprintln!("[{nth}/{total}] {what}: run #{run}, finished before the study stopped");
            return Ok(Flow::Finished);
        }
        let left = self.time_left(total + 1 - nth);
        if !std::io::stderr().is_terminal() {
            eprintln!("[{nth}/{total}] {what}: {} ...{left}", p.suite);
        }
        let tag = format!("[{nth}/{total}] {what}");
        let args = match self.step_args(p, config_vars, &what, &tag)? {
            Ok(args) => args,
            Err(flow) => return Ok(flow),
        };
        let mut env = self.env(config_vars, Some(p.config))?;
        let claim = iomatrix_store::StudyClaim { study: self.id, seq: p.seq, nonce: self.nonce.clone() };
        env.push((iomatrix_store::STUDY_CLAIM_VAR.to_string(), claim.to_var()));
        let before: Vec<i64> = self.store.study_runs(self.id)?.iter().map(|r| r.run_id).collect();
        let log = self.logs.join(format!("{:03}-{}-{}.log", p.seq + 1, p.config_name, p.step_name));
        let log_file = process::open_log(&log, self.db, self.force, &format!("step '{what}'"))?;
        let launch = self.launch(p, config_vars, &what, &mut env)?;
        let (program, args) = program_and_args(p, launch.as_ref(), args, &what)?;
        let started = Instant::now();
        let ran = with_spinner(format!("{tag}{left}"), || process::step(&program, &args, &env, &log_file));
        let (ended, pid) = ran.with_context(|| format!("cannot start step '{what}'"))?;
        let seconds = started.elapsed().as_secs_f64();
        let run = self.run_of(p, &before, pid, launch.as_ref().map(|(_, id)| id.as_str()))?;
        let status = match ended {
            Ended::Stopped => {
                // Cut short: run again from its start when the study resumes.
                if let Some(id) = run {
                    self.store.delete_run(id)?;
                }
                eprintln!("[{nth}/{total}] {what}: stopped; `iomatrix study run` again runs it from its start");
                return Ok(Flow::Stopped);
            }
            Ended::TimedOut => unreachable!("a step's run has no time limit"),
            Ended::Exited(status) => status,
        };
        self.record_exit(p, status, run, &log, seconds, &tag)
    }

    /// The `iomatrix` command line of step `p`: its suite and flags with the study's variables
    /// expanded, its configuration's target, and the study's labels; or, when it must not run,
    /// what the study does instead (`tag` is the step's `[n/total] what` in messages).
    fn step_args(
        &mut self,
        p: &PlannedStep,
        config_vars: &BTreeMap<String, String>,
        what: &str,
        tag: &str,
    ) -> anyhow::Result<Result<Vec<String>, Flow>> {
        let config = &self.file.configs[p.config];
        let var = |name: &str| self.var(name, config_vars);
        let mut args = vec!["--db".to_string(), self.db.display().to_string(), "run".into(), p.suite.clone()];
        let mut expanded = Vec::with_capacity(p.args.len());
        for a in &p.args {
            expanded.push(iomatrix_study::expand(a, &var).map_err(|e| UsageError::new(format!("step '{what}': {e}")))?);
        }
        if let Some(given) = &self.devices_given {
            let step = PlannedStep { args: expanded.clone(), ..(*p).clone() };
            if let Some(d) = destroy_flags(&step).into_iter().find(|d| !named_again(d, given)) {
                return Ok(Err(Flow::Refused(format!(
                    "step '{what}' destroys data on {d} ({DESTROY_FLAG}), and a resumed study never replays it from \
                     its file: check the device and give it again on the command line ({DESTROY_FLAG} {d})"
                ))));
            }
        }
        args.extend(expanded);
        if let Some(t) = &config.target {
            let target = iomatrix_study::expand(t, &var)
                .map_err(|e| UsageError::new(format!("configuration '{}': target {e}", p.config_name)))?;
            if !target.contains("://") && !Path::new(&target).exists() {
                let why = format!("target {target} does not exist (it did when the study was planned? a setup or teardown may have removed it)");
                self.store.record_step(self.id, p.seq, StepStatus::Failed, None, Some(&why), None)?;
                eprintln!("iomatrix: {tag}: failed: {why}");
                self.worst = self.worst.max(crate::exit::CLIENTS_LOST);
                return Ok(Err(Flow::Finished));
            }
            args.extend(["--target".into(), target]);
        }
        let name = self.file.name.get_ref();
        for (k, v) in [
            ("study", name.clone()),
            ("study-id", self.id.to_string()),
            ("config", p.config_name.clone()),
            ("step", p.step_name.clone()),
        ]
        .into_iter()
        .chain(config.labels.iter().map(|(k, v)| (k.as_str(), v.clone())))
        {
            args.extend(["--label".into(), format!("{k}={v}")]);
        }
        Ok(Ok(args))
    }

    /// For a step across hosts, its hosts and the launch id it is found by, which goes into `env`.
    fn launch(
        &self,
        p: &PlannedStep,
        config_vars: &BTreeMap<String, String>,
        what: &str,
        env: &mut Vec<(String, String)>,
    ) -> anyhow::Result<Option<(String, String)>> {
        let var = |name: &str| self.var(name, config_vars);
        // Across hosts the run's rank 0 is on another host: the step finds its run by the launch
        // id rank 0 records (IOMATRIX_LAUNCH_ID, passed on by mpirun's launcher and by srun).
        Ok(match &p.across {
            Across::Here => None,
            Across::Hosts(h) => {
                let hosts = iomatrix_study::expand(h, &var)
                    .map_err(|e| UsageError::new(format!("step '{what}': hosts {e}")))?;
                (!hosts.trim().is_empty()).then_some(hosts)
            }
            Across::Slurm { .. } => Some(String::new()),
        }
        .map(|hosts| {
            // Hex digits and '-', as a launch id is (iomatrix_coord::launch_id).
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            let id = format!("{:x}-{:x}-{:x}-{now:x}", self.id, p.seq, std::process::id());
            env.push((iomatrix_coord::LAUNCH_ID.to_string(), id.clone()));
            (hosts, id)
        }))
    }

    /// Records how step `p`'s run (`run`, if it stored one) ended with `status`, and whether the
    /// study goes on (`tag` is the step's `[n/total] what` in messages).
    fn record_exit(
        &mut self,
        p: &PlannedStep,
        status: std::process::ExitStatus,
        run: Option<i64>,
        log: &Path,
        seconds: f64,
        tag: &str,
    ) -> anyhow::Result<Flow> {
        let code = status.code().unwrap_or(i32::from(crate::exit::FAILED));
        // Exit 3 is a partial run (every cell ran, some clients failed some: the step is done, with a
        // note) or a run stopped at its first failed client (failed): the stored status tells.
        let stopped_by_clients = code == i32::from(crate::exit::CLIENTS_LOST)
            && run
                .map(|id| self.store.load_run(id))
                .transpose()?
                .flatten()
                .is_some_and(|r| r.summary.status == iomatrix_store::RunStatus::Failed);
        match (code, run) {
            (3, _) if stopped_by_clients => {
                let why = format!("its clients failed (exit 3): {}", process::tail(log, 1));
                self.store.record_step(self.id, p.seq, StepStatus::Failed, run, Some(&why), Some(seconds))?;
                self.worst = self.worst.max(crate::exit::CLIENTS_LOST);
                eprintln!("iomatrix: {tag}: failed ({why}); the study goes on\n{}", indent(&process::tail(log, 8)));
            }
            (0, Some(id)) => {
                self.store.record_step(self.id, p.seq, StepStatus::Done, Some(id), None, Some(seconds))?;
                self.durations.push(seconds);
                eprintln!("{tag}: run #{id} in {seconds:.1} s");
            }
            (3 | 4, Some(id)) => {
                let why = if code == 3 {
                    "some clients failed some cells (exit 3)"
                } else {
                    "--verify found mismatches (exit 4)"
                };
                self.store.record_step(self.id, p.seq, StepStatus::Done, Some(id), Some(why), Some(seconds))?;
                self.durations.push(seconds);
                self.worst = self.worst.max(code as u8);
                eprintln!("{tag}: run #{id} in {seconds:.1} s: {why} (log: {})", log.display());
            }
            (129 | 130 | 143, _) => {
                if let Some(id) = run {
                    self.store.delete_run(id)?;
                }
                eprintln!("{tag}: its run was stopped by a signal; `iomatrix study run` again runs it from its start");
                return Ok(Flow::Stopped);
            }
            (2, _) => {
                let said = process::tail(log, 1);
                let said = said.strip_prefix("iomatrix: error: ").unwrap_or(&said);
                self.store.record_step(self.id, p.seq, StepStatus::Failed, run, Some(said), Some(seconds))?;
                return Ok(Flow::Refused(format!(
                    "step '{}' of configuration '{}' ({}): {said}; fix the study file and run it again",
                    p.step_name, p.config_name, p.suite
                )));
            }
            _ => {
                let why = format!("exit {code}: {}", process::tail(log, 1));
                // A failed run's cells stay in the database as that run; the study records its id.
                self.store.record_step(self.id, p.seq, StepStatus::Failed, run, Some(&why), Some(seconds))?;
                self.worst = self.worst.max(crate::exit::CLIENTS_LOST);
                eprintln!("iomatrix: {tag}: failed ({why}); the study goes on\n{}", indent(&process::tail(log, 8)));
            }
        }
        Ok(Flow::Finished)
    }

    /// The runs a killed study left for step `p`, of its own (by id, in its table): a complete
    /// one of the step's key is the step's; any other (cut short) is removed. Waits while a
    /// process that stored one still runs (it may be stopping, its working folder not yet
    /// removed). A run the study did not start is never taken, nor removed, whatever its labels.
    fn leftovers(&self, p: &PlannedStep) -> anyhow::Result<Option<i64>> {
        let deadline = Instant::now() + LEFTOVER_WAIT;
        loop {
            let runs = self.runs_of(p)?;
            let alive = runs.iter().any(|r| r.summary.process_alive());
            if alive && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(200));
                // Reopening marks runs whose process has gone as incomplete.
                let _ = Store::open(self.db)?;
                continue;
            }
            let mut complete = None;
            for r in runs {
                if r.summary.status == RunStatus::Complete && r.key == p.key && complete.is_none() {
                    complete = Some(r.run_id);
                } else if !r.summary.process_alive() {
                    self.store.delete_run(r.run_id)?;
                }
            }
            return Ok(complete);
        }
    }

    /// The runs this study's step `p` started (its table), that no step has taken.
    fn runs_of(&self, p: &PlannedStep) -> anyhow::Result<Vec<iomatrix_store::StudyRun>> {
        let claimed = self.claimed()?;
        Ok(self
            .store
            .study_runs(self.id)?
            .into_iter()
            .filter(|r| r.seq == p.seq && !claimed.contains(&r.run_id))
            .collect())
    }

    /// The runs the study's steps have taken (done or failed, with their run).
    fn claimed(&self) -> anyhow::Result<Vec<i64>> {
        Ok(self.store.study_steps(self.id)?.iter().filter_map(|s| s.run_id).collect())
    }

    /// Removes the study's own runs that no step claims: what steps cut short by a killed study
    /// stored after the study resumed (their process may still be stopping: waited for).
    fn remove_strays(&self) -> anyhow::Result<()> {
        let deadline = Instant::now() + LEFTOVER_WAIT;
        loop {
            let claimed = self.claimed()?;
            let _ = Store::open(self.db)?;
            let strays: Vec<iomatrix_store::StudyRun> =
                self.store.study_runs(self.id)?.into_iter().filter(|r| !claimed.contains(&r.run_id)).collect();
            if strays.iter().any(|r| r.summary.process_alive()) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            for r in strays.iter().filter(|r| !r.summary.process_alive()) {
                self.store.delete_run(r.run_id)?;
            }
            return Ok(());
        }
    }

    /// The run step `p`'s process `pid` started (one of the study's runs that was not there
    /// before the step, `before`); across hosts, the one of its launch id. Other new runs of
    /// the step (strays of a killed study) are removed.
    fn run_of(&self, p: &PlannedStep, before: &[i64], pid: u32, launch: Option<&str>) -> anyhow::Result<Option<i64>> {
        let launched = match launch {
            Some(id) => self.store.find_run_by_environment("launch_id", id)?.map(|r| r.id),
            None => None,
        };
        let mut mine = None;
        let new: Vec<iomatrix_store::StudyRun> =
            self.runs_of(p)?.into_iter().filter(|r| !before.contains(&r.run_id)).collect();
        for r in &new {
            let this_one = match launch {
                Some(_) => launched == Some(r.run_id),
                None => r.summary.pid == i64::from(pid) && r.summary.host == ProcessId::this_host(),
            };
            if this_one && mine.is_none() {
                mine = Some(r.run_id);
            }
        }
        for r in new.iter().filter(|r| Some(r.run_id) != mine && !r.summary.process_alive()) {
            self.store.delete_run(r.run_id)?;
        }
        Ok(mine)
    }

    /// A setup or teardown command: its KEY=VALUE output, why it failed, or stopped.
    fn shell(&self, what: &str, cmd: &str, env: &[(String, String)], log_name: &str) -> anyhow::Result<Shell> {
        let log = self.logs.join(format!("{log_name}.log"));
        let log_file = process::open_log(&log, self.db, self.force, what)?;
        eprintln!("{what}: {cmd}");
        let (ended, stdout) = process::shell(cmd, env, &log_file, &self.logs, self.plan.timeout)
            .with_context(|| format!("cannot start the {what}"))?;
        let failed = |why: String| {
            let tail = process::tail(&log, 6);
            Ok(Shell::Failed(if tail.is_empty() { why } else { format!("{why}\n{}", indent(&tail)) }))
        };
        match ended {
            Ended::Exited(s) if s.success() => Ok(Shell::Done(process::exports(&stdout).into_iter().collect())),
            Ended::Exited(s) => failed(format!("`{cmd}` exited with {s}")),
            Ended::TimedOut => {
                failed(format!("`{cmd}` did not finish within {} s (the study's timeout)", self.plan.timeout.as_secs()))
            }
            Ended::Stopped => {
                match process::end_descendants() {
                    Ok(_) => eprintln!("{what}: stopped, with every process it started (the study was told to stop)"),
                    Err(why) => eprintln!("{what}: stopped (the study was told to stop); iomatrix: warning: {why}"),
                }
                Ok(Shell::Stopped)
            }
        }
    }

    /// What a step's run, setup and teardown see: the study's variables, the configuration's
    /// (from its setup's output) and its `env`, expanded.
    fn env(
        &self,
        config_vars: &BTreeMap<String, String>,
        config: Option<usize>,
    ) -> anyhow::Result<Vec<(String, String)>> {
        let mut env: Vec<(String, String)> = vec![
            ("STUDY_DIR".into(), folder_of(self.path).display().to_string()),
            ("STUDY_NAME".into(), self.file.name.get_ref().clone()),
            ("STUDY_SCALE".into(), self.scale.as_str().into()),
            ("IOMATRIX_DB".into(), self.db.display().to_string()),
        ];
        env.extend(self.vars.iter().map(|(k, v)| (k.clone(), v.clone())));
        env.extend(config_vars.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(c) = config {
            let var = |name: &str| self.var(name, config_vars);
            for (k, v) in &self.file.configs[c].env {
                let value = iomatrix_study::expand(v, &var).map_err(|e| {
                    UsageError::new(format!("configuration '{}': env {k}: {e}", self.file.configs[c].name.get_ref()))
                })?;
                env.push((k.clone(), value));
            }
        }
        Ok(env)
    }

    fn var(&self, name: &str, config_vars: &BTreeMap<String, String>) -> Option<String> {
        match name {
            "STUDY_DIR" => Some(folder_of(self.path).display().to_string()),
            "STUDY_NAME" => Some(self.file.name.get_ref().clone()),
            "STUDY_SCALE" => Some(self.scale.as_str().into()),
            _ => config_vars.get(name).or_else(|| self.vars.get(name)).cloned().or_else(|| std::env::var(name).ok()),
        }
    }

    /// "; about 2m left" from the steps finished in this process (nothing before the first).
    fn time_left(&self, remaining: usize) -> String {
        if self.durations.is_empty() {
            return String::new();
        }
        let mean = self.durations.iter().sum::<f64>() / self.durations.len() as f64;
        let secs = (mean * remaining as f64).round() as u64;
        let text = if secs >= 120 { format!("{}m", secs.div_ceil(60)) } else { format!("{}s", secs.max(1)) };
        format!(" (about {text} left, from the steps done so far)")
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  | {l}")).collect::<Vec<_>>().join("\n")
}

/// A step's arguments without `--clients N`: across hosts each MPI rank is one client (a slot of a
/// host, or a Slurm task), and the run refuses `--clients` there. Said in the step's progress.
/// The program a step runs and its command line: `iomatrix` itself, or under Slurm `srun`
/// with the step's command line after it; across hosts or under Slurm without `--clients`.
fn program_and_args(
    p: &PlannedStep,
    launch: Option<&(String, String)>,
    mut args: Vec<String>,
    what: &str,
) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let own = std::env::current_exe().context("cannot find iomatrix's own program file")?;
    let program = match (&p.across, launch) {
        (Across::Slurm { nodes, tasks_per_node }, Some(_)) => {
            // Each task one client: the step's own --clients would be refused under MPI.
            let mut srun: Vec<String> =
                ["--mpi=pmix", "-N", &nodes.to_string(), "--ntasks-per-node", &tasks_per_node.to_string()]
                    .map(String::from)
                    .to_vec();
            srun.push(own.display().to_string());
            srun.extend(without_clients(&args, what));
            args = srun;
            PathBuf::from("srun")
        }
        (Across::Hosts(_), Some((hosts, _))) => {
            args = without_clients(&args, what);
            args.extend(["--hosts".to_string(), hosts.clone()]);
            own
        }
        _ => own,
    };
    Ok((program, args))
}

/// Runs `work` under a spinner showing `message` and the time it has taken.
fn with_spinner<T>(message: String, work: impl FnOnce() -> T) -> T {
    let spinner = indicatif::ProgressBar::new_spinner().with_message(message);
    spinner.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    spinner.enable_steady_tick(Duration::from_millis(500));
    let done = work();
    spinner.finish_and_clear();
    done
}

fn without_clients(args: &[String], what: &str) -> Vec<String> {
    let mut kept = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--clients" {
            if let Some(n) = it.next() {
                eprintln!(
                    "iomatrix: step '{what}': across hosts each MPI rank is one client: its --clients {n} is left out"
                );
            }
        } else if let Some(n) = a.strip_prefix("--clients=") {
            eprintln!(
                "iomatrix: step '{what}': across hosts each MPI rank is one client: its --clients {n} is left out"
            );
        } else {
            kept.push(a.clone());
        }
    }
    kept
}
