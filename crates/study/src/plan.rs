//! A parsed study file checked and turned into its [`Plan`]: the
//! (configuration, step) pairs in the order they run, each with the flags
//! of its `run SUITE` command line and a key that hashes everything it
//! runs with, so a resumed study knows a finished step again.

use crate::file::{nearest, Config, FileError, Order, Params, Step, StudyFile};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::time::Duration;
use toml::Spanned;

/// How big a study's steps are: as written, or each step's `small` flags (CI, a first try).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Every step's flags as written.
    Full,
    /// Each step's `small` flags in place of its `args` (`--scale small`).
    Small,
}

impl Scale {
    /// The name `--scale` takes and STUDY_SCALE gives the commands: `full` or `small`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scale::Full => "full",
            Scale::Small => "small",
        }
    }
}

/// What the study needs to know of the suites' command lines; the binary
/// answers it with the very parser `iomatrix run SUITE` uses.
pub trait SuiteFlags {
    /// The suites, by the names `run` takes.
    fn suites(&self) -> Vec<String>;
    /// The long flags (without `--`) of `run SUITE`.
    fn flags(&self, suite: &str) -> Vec<String>;
    /// Parses `run SUITE ARGS` as the command line would: Err holds the parser's message.
    fn check(&self, suite: &str, args: &[String]) -> Result<(), StudyError>;
}

/// What a study's plan refuses in the file's own words, before the file's line is added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StudyError {
    /// A configuration's or step's name that is not safe ([`safe_name`]): what is wrong with it.
    #[error(
        "{0}: give 1 to 64 of the letters a-z and A-Z, the digits 0-9, '.', '_' and '-', beginning with a letter or \
         digit"
    )]
    UnsafeName(String),
    /// A step's `run SUITE ARGS`, refused by the suite's own parser: its message.
    #[error("{0}")]
    Flags(String),
    /// `${` with no `}` in the text.
    #[error("'{0}': a '${{' without its '}}'")]
    Unclosed(String),
    /// `${name}` in `text` names a variable that is not set.
    #[error(
        "'{text}': ${{{name}}} is not set (variables come from the environment, the study's STUDY_DIR, STUDY_NAME \
         and STUDY_SCALE, and KEY=VALUE lines a setup command prints)"
    )]
    NotSet {
        /// The text as written, before expansion.
        text: String,
        /// The variable's name.
        name: String,
    },
}

/// Flags a study sets itself on every run it starts: a step may not.
pub const STUDY_FLAGS: [&str; 5] = ["target", "label", "db", "json", "help"];

/// One (configuration, step) pair, in the order the study runs them.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedStep {
    /// Its place in the study's order, from 0.
    pub seq: usize,
    /// Index into the file's configurations and steps.
    pub config: usize,
    /// Index into the file's steps.
    pub step: usize,
    /// The configuration's name.
    pub config_name: String,
    /// The step's name (the suite's, unless the step names itself).
    pub step_name: String,
    /// The suite it runs.
    pub suite: String,
    /// What follows `iomatrix run SUITE` (before the study's own flags); `${VAR}` not yet expanded.
    pub args: Vec<String>,
    /// Where its run goes: this host, or many under mpirun or srun.
    pub across: Across,
    /// What the step's run depends on (suite, flags, the configuration's target, labels,
    /// environment and commands), hashed: a stored step with another key has changed ([`changes`]).
    pub key: String,
}

/// Where a step's run goes: the step's own `hosts` or `slurm`, else its configuration's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Across {
    /// This host, clients as threads.
    Here,
    /// `iomatrix run ... --hosts HOSTS` (which starts mpirun); `${VAR}` not yet expanded, and
    /// empty once expanded means this host.
    Hosts(String),
    /// `srun --mpi=pmix -N nodes --ntasks-per-node tasks_per_node iomatrix run ...`.
    Slurm {
        /// How many nodes (`srun -N`).
        nodes: u32,
        /// How many MPI ranks on each node (`srun --ntasks-per-node`).
        tasks_per_node: u32,
    },
}

/// What a study file asks for, checked: every (configuration, step) pair in running order.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Every (configuration, step) pair, in the order they run.
    pub steps: Vec<PlannedStep>,
    /// The longest a setup or teardown command may take.
    pub timeout: Duration,
}

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Checks `file` (read from `text`) and orders its steps.
pub fn plan(file: &StudyFile, text: &str, scale: Scale, suites: &dyn SuiteFlags) -> Result<Plan, FileError> {
    let at = |span: std::ops::Range<usize>, msg: String| FileError::at(text, span, msg);
    check_name(file, text)?;
    if file.configs.is_empty() || file.steps.is_empty() {
        return Err(FileError { line: None, message: "a study needs at least one [[config]] and one [[step]]".into() });
    }
    let config_names = unique(file.configs.iter().map(|c| &c.name), "configuration", text)?;
    for c in &file.configs {
        check_labels(c, text)?;
    }
    let step_names: Vec<Spanned<String>> = file.steps.iter().map(step_name).collect();
    let step_names = unique(step_names.iter(), "step", text)?;
    let known_suites = suites.suites();
    let mut args_of = Vec::with_capacity(file.configs.len() * file.steps.len());
    let mut across_of = Vec::with_capacity(file.configs.len() * file.steps.len());
    for step in &file.steps {
        let suite = step.suite.get_ref();
        if !known_suites.contains(suite) {
            let hint = nearest(suite, known_suites.iter().map(String::as_str))
                .map(|n| format!("; did you mean '{n}'?"))
                .unwrap_or_default();
            return Err(at(
                step.suite.span(),
                format!("unknown suite '{suite}'{hint} (suites: {})", known_suites.join(", ")),
            ));
        }
        let flags = suites.flags(suite);
        for config in &file.configs {
            let args = step_args(file, config, step, scale, &flags, text)?;
            // The whole command line the step will run, its target as written (expanded later).
            let mut line = args.clone();
            if let Some(t) = &config.target {
                line.extend(["--target".to_string(), t.clone()]);
            }
            suites.check(suite, &line).map_err(|e| {
                at(
                    step.suite.span(),
                    format!(
                        "step '{}' ({suite}) in configuration '{}': {e}",
                        step_name(step).get_ref(),
                        config.name.get_ref()
                    ),
                )
            })?;
            args_of.push(args);
            across_of.push(across(config, step, text)?);
        }
    }
    check_references(file, &config_names, &step_names, text)?;
    check_score(file, &step_names, text)?;
    let timeout = match &file.timeout {
        None => DEFAULT_TIMEOUT,
        Some(t) => duration(t.get_ref())
            .map_err(|e| at(t.span(), format!("timeout = \"{}\": {e}; write 30s, 5m or 1h", t.get_ref())))?,
    };
    let pairs: Vec<(usize, usize)> = match file.order {
        Order::Interleaved => {
            (0..file.steps.len()).flat_map(|s| (0..file.configs.len()).map(move |c| (c, s))).collect()
        }
        Order::Sequential => (0..file.configs.len()).flat_map(|c| (0..file.steps.len()).map(move |s| (c, s))).collect(),
    };
    let steps = pairs
        .into_iter()
        .enumerate()
        .map(|(seq, (c, s))| {
            let args = args_of[s * file.configs.len() + c].clone();
            let config = &file.configs[c];
            let suite = file.steps[s].suite.get_ref().clone();
            let across = across_of[s * file.configs.len() + c].clone();
            PlannedStep {
                seq,
                config: c,
                step: s,
                config_name: config.name.get_ref().clone(),
                step_name: step_names[s].clone(),
                key: key(file, config, &suite, &args, &across),
                suite,
                args,
                across,
            }
        })
        .collect();
    Ok(Plan { steps, timeout })
}

/// The study's name: not empty, not too long, printable.
fn check_name(file: &StudyFile, text: &str) -> Result<(), FileError> {
    let at = |span: std::ops::Range<usize>, msg: String| FileError::at(text, span, msg);
    let name = file.name.get_ref();
    if name.trim().is_empty() {
        return Err(at(file.name.span(), "name is empty: give the study a name".into()));
    }
    // The name goes into a label of every run (`study=NAME`) and the logs' folder name
    // (`studies/NAME-ID`, at most 255 bytes): refused here, before any record is made.
    let chars = name.chars().count();
    if chars > MAX_STUDY_NAME {
        return Err(at(
            file.name.span(),
            format!("name is {chars} characters long; a study's name holds at most {MAX_STUDY_NAME}: shorten it"),
        ));
    }
    if let Some((at_char, c)) = iomatrix_core::text::first_control(name) {
        return Err(at(
            file.name.span(),
            format!(
                "name: {} at character {at_char}: a study's name holds printable text only",
                iomatrix_core::text::describe_control(c)
            ),
        ));
    }
    Ok(())
}

/// Configuration `c`'s labels: none of the study's own, each as `--label` takes it.
fn check_labels(c: &Config, text: &str) -> Result<(), FileError> {
    let at = |span: std::ops::Range<usize>, msg: String| FileError::at(text, span, msg);
    if let Some(k) = c.labels.keys().find(|k| crate::STUDY_LABELS.contains(&k.as_str())) {
        return Err(at(
            c.name.span(),
            format!("configuration '{}': the label '{k}' is the study's own", c.name.get_ref()),
        ));
    }
    // As `--label` takes them: a key without '=', nothing unprintable (a stored newline would
    // print as a fake row of `runs`).
    for (k, v) in &c.labels {
        let bad = if k.trim().is_empty() || k.contains('=') {
            Some("a label's key is a word without '='".to_string())
        } else {
            iomatrix_core::text::first_control(k).or_else(|| iomatrix_core::text::first_control(v)).map(|(_, ch)| {
                format!("{}: a label holds printable text only", iomatrix_core::text::describe_control(ch))
            })
        };
        if let Some(why) = bad {
            return Err(at(
                c.name.span(),
                format!("configuration '{}': label '{}': {why}", c.name.get_ref(), iomatrix_core::text::printable(k)),
            ));
        }
    }
    Ok(())
}

/// The configurations and steps the compares and sweeps name are the study's.
fn check_references(
    file: &StudyFile,
    config_names: &[String],
    step_names: &[String],
    text: &str,
) -> Result<(), FileError> {
    for c in &file.compares {
        for side in [&c.a, &c.b] {
            known(side, config_names, "configuration", text)?;
        }
        if let Some(s) = &c.step {
            known(s, step_names, "step", text)?;
        }
    }
    for s in &file.sweeps {
        known(&s.step, step_names, "step", text)?;
        for c in &s.configs {
            known(c, config_names, "configuration", text)?;
        }
    }
    Ok(())
}

/// `score = "io500"`: the one score there is, over at least one step named after an IO500 phase.
fn check_score(file: &StudyFile, step_names: &[String], text: &str) -> Result<(), FileError> {
    let Some(score) = &file.score else { return Ok(()) };
    if score.get_ref() != "io500" {
        return Err(FileError::at(
            text,
            score.span(),
            format!("score = \"{}\": the score a study draws is \"io500\" (or leave score out)", score.get_ref()),
        ));
    }
    if !step_names.iter().any(|s| crate::io500::Phase::named(s).is_some()) {
        let names: Vec<&str> = crate::io500::Phase::ALL.iter().map(|p| p.name()).collect();
        return Err(FileError::at(
            text,
            score.span(),
            format!(
                "score = \"io500\" scores the steps named after IO500's phases, and no step is: name them {}",
                names.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The longest study name (in characters).
pub const MAX_STUDY_NAME: usize = 128;

/// The longest configuration or step name.
pub const MAX_NAME: usize = 64;

/// Whether a configuration's or step's name is safe where the study puts it: in labels
/// (`config=NAME`, where ',' and '=' separate), in selectors, and in its logs' file names
/// (`001-CONFIG-STEP.log`, where '/' or '..' would reach outside the log folder). Err: why not,
/// and what is allowed.
pub fn safe_name(name: &str) -> Result<(), StudyError> {
    let first_ok = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let all_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if name.is_empty() || name.len() > MAX_NAME || !first_ok || !all_ok {
        let bad = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')));
        let what = match bad {
            Some(c) => format!("{c:?} is not allowed in a name"),
            None if name.is_empty() => "empty".into(),
            None if name.len() > MAX_NAME => format!("{} characters long", name.len()),
            None => "must begin with a letter or digit".into(),
        };
        return Err(StudyError::UnsafeName(what));
    }
    Ok(())
}

/// A step's name: its own, or its suite's.
fn step_name(step: &Step) -> Spanned<String> {
    step.name.clone().unwrap_or_else(|| step.suite.clone())
}

fn unique<'a>(
    names: impl Iterator<Item = &'a Spanned<String>>,
    what: &str,
    text: &str,
) -> Result<Vec<String>, FileError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for n in names {
        let name = n.get_ref();
        if let Err(why) = safe_name(name) {
            return Err(FileError::at(text, n.span(), format!("{what} name {name:?}: {why}")));
        }
        if !seen.insert(name.clone()) {
            return Err(FileError::at(text, n.span(), format!("two {what}s are named '{name}': names must differ")));
        }
        out.push(name.clone());
    }
    Ok(out)
}

fn known(name: &Spanned<String>, names: &[String], what: &str, text: &str) -> Result<(), FileError> {
    if names.contains(name.get_ref()) {
        return Ok(());
    }
    let hint = nearest(name.get_ref(), names.iter().map(String::as_str))
        .map(|n| format!("; did you mean '{n}'?"))
        .unwrap_or_default();
    Err(FileError::at(
        text,
        name.span(),
        format!("there is no {what} '{}'{hint} ({what}s: {})", name.get_ref(), names.join(", ")),
    ))
}

/// The flags of `step` in `config`: the configuration's, the step's over them (its `small` ones
/// over those at small scale), the study's repeat and tolerance where the step sets none.
fn step_args(
    file: &StudyFile,
    config: &Config,
    step: &Step,
    scale: Scale,
    flags: &[String],
    text: &str,
) -> Result<Vec<String>, FileError> {
    let mut merged: Vec<(&Spanned<String>, &Spanned<toml::Value>)> = Vec::new();
    let mut layers: Vec<&Params> = vec![&config.args, &step.args];
    if scale == Scale::Small {
        layers.push(&step.small);
    }
    for layer in layers {
        for (k, v) in layer {
            check_flag(k, flags, step.suite.get_ref(), text)?;
            merged.retain(|(old, _)| old.get_ref() != k.get_ref());
            merged.push((k, v));
        }
    }
    merged.sort_by(|a, b| a.0.get_ref().cmp(b.0.get_ref()));
    let mut args = Vec::new();
    for (k, v) in &merged {
        flag_values(k.get_ref(), v, text, &mut args)?;
    }
    let set = |name: &str| merged.iter().any(|(k, _)| k.get_ref() == name);
    if let (Some(n), false) = (file.repeat, set("repeat")) {
        args.extend(["--repeat".to_string(), n.to_string()]);
    }
    if let (Some(t), false) = (file.tolerance, set("tolerance")) {
        args.extend(["--tolerance".to_string(), t.to_string()]);
    }
    Ok(args)
}

fn check_flag(k: &Spanned<String>, flags: &[String], suite: &str, text: &str) -> Result<(), FileError> {
    let name = k.get_ref();
    if STUDY_FLAGS.contains(&name.as_str()) {
        let why = match name.as_str() {
            "target" => "set it on the configuration (target = ...)",
            "label" => "set the configuration's labels (labels = { key = \"value\" })",
            _ => "the study sets it on every run",
        };
        return Err(FileError::at(text, k.span(), format!("parameter '{name}': {why}")));
    }
    if flags.iter().any(|f| f == name) {
        return Ok(());
    }
    let hint =
        nearest(name, flags.iter().map(String::as_str)).map(|n| format!("; did you mean '{n}'?")).unwrap_or_default();
    Err(FileError::at(
        text,
        k.span(),
        format!("'{name}' is not a flag of `iomatrix run {suite}`{hint} (`iomatrix run {suite} --help` lists them)"),
    ))
}

/// `--name VALUE`: a string or number as it is, `true` the flag alone, `false` nothing, a
/// list as iomatrix's list flags take one (`--records 4k,64k`).
fn flag_values(name: &str, v: &Spanned<toml::Value>, text: &str, out: &mut Vec<String>) -> Result<(), FileError> {
    let bad = || {
        FileError::at(
            text,
            v.span(),
            format!("parameter '{name}': give a string, a number, true/false or a list of strings or numbers"),
        )
    };
    let one = |value: &toml::Value| -> Option<String> {
        match value {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Integer(i) => Some(i.to_string()),
            toml::Value::Float(f) => Some(f.to_string()),
            _ => None,
        }
    };
    match v.get_ref() {
        toml::Value::Boolean(true) => out.push(format!("--{name}")),
        toml::Value::Boolean(false) => {}
        toml::Value::Array(items) => {
            let values = items.iter().map(|i| one(i).ok_or_else(bad)).collect::<Result<Vec<_>, _>>()?;
            out.extend([format!("--{name}"), values.join(",")]);
        }
        other => out.extend([format!("--{name}"), one(other).ok_or_else(bad)?]),
    }
    Ok(())
}

/// Everything a step's run depends on, hashed: its suite and flags, its configuration's
/// target, labels, environment, setup and teardown, and the study's own setup.
/// Where a step's run goes: the step's `hosts` or `slurm`, else its configuration's; one of
/// the two at most, and a Slurm shape of at least one node and one task.
fn across(config: &Config, step: &Step, text: &str) -> Result<Across, FileError> {
    let at = |span: std::ops::Range<usize>, msg: String| FileError::at(text, span, msg);
    let pick = |hosts: &Option<toml::Spanned<String>>,
                slurm: &Option<toml::Spanned<crate::file::Slurm>>,
                whose: &str| {
        match (hosts, slurm) {
            (Some(h), Some(_)) => Err(at(
                h.span(),
                format!(
                    "{whose} names both hosts and slurm: give one (hosts: mpirun over a hostfile or list; slurm: srun)"
                ),
            )),
            (Some(h), None) => Ok(Some(Across::Hosts(h.get_ref().clone()))),
            (None, Some(s)) => {
                let shape = *s.get_ref();
                if shape.nodes == 0 || shape.tasks_per_node == 0 {
                    return Err(at(
                        s.span(),
                        format!(
                            "{whose}: slurm = {{ nodes = {}, tasks_per_node = {} }}: give at least one node and one task per node",
                            shape.nodes, shape.tasks_per_node
                        ),
                    ));
                }
                Ok(Some(Across::Slurm { nodes: shape.nodes, tasks_per_node: shape.tasks_per_node }))
            }
            (None, None) => Ok(None),
        }
    };
    let step_says = pick(&step.hosts, &step.slurm, &format!("step '{}'", step_name(step).get_ref()))?;
    let config_says = pick(&config.hosts, &config.slurm, &format!("configuration '{}'", config.name.get_ref()))?;
    Ok(step_says.or(config_says).unwrap_or(Across::Here))
}

fn key(file: &StudyFile, config: &Config, suite: &str, args: &[String], across: &Across) -> String {
    let mut doc = serde_json::json!({
        "suite": suite,
        "args": args,
        "config": {
            "name": config.name.get_ref(),
            "target": config.target,
            "labels": config.labels,
            "env": config.env,
            "setup": config.setup,
            "teardown": config.teardown,
        },
        "study_setup": file.setup,
    });
    // Written only where a step leaves this host: keys of studies from before stay as they were.
    if *across != Across::Here {
        doc["across"] = serde_json::to_value(across).unwrap_or_default();
    }
    let digest = Sha256::digest(doc.to_string().as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// `30s`, `5m`, `1h` or plain seconds, as every duration of iomatrix
/// (`iomatrix_core::parse_duration`: at most 30 days).
pub fn duration(text: &str) -> Result<Duration, iomatrix_core::DurationError> {
    iomatrix_core::parse_duration(text)
}

/// What differs between a study's stored steps (config, step, key) and `plan`: empty when every
/// step would run exactly as before.
pub fn changes(stored: &[(String, String, String)], plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    for s in &plan.steps {
        match stored.iter().find(|(c, st, _)| *c == s.config_name && *st == s.step_name) {
            None => out.push(format!("step '{}' of configuration '{}' is new", s.step_name, s.config_name)),
            Some((_, _, key)) if *key != s.key => out.push(format!(
                "step '{}' of configuration '{}' changed (its flags, or its configuration's target, labels, \
                 environment, setup or teardown, or the study's setup)",
                s.step_name, s.config_name
            )),
            Some(_) => {}
        }
    }
    for (c, st, _) in stored {
        if !plan.steps.iter().any(|s| s.config_name == *c && s.step_name == *st) {
            out.push(format!("step '{st}' of configuration '{c}' is gone"));
        }
    }
    let order_now: Vec<(&str, &str)> =
        plan.steps.iter().map(|s| (s.config_name.as_str(), s.step_name.as_str())).collect();
    let order_then: Vec<(&str, &str)> = stored.iter().map(|(c, s, _)| (c.as_str(), s.as_str())).collect();
    if out.is_empty() && order_now != order_then {
        out.push("the order of the steps changed".into());
    }
    out
}

/// `text` with every `${NAME}` replaced by `var(NAME)`; Err names a variable that is not set.
pub fn expand(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, StudyError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(StudyError::Unclosed(text.to_string()));
        };
        // `${NAME:-DEFAULT}`, as the shell writes it: DEFAULT where NAME is unset or empty.
        let (name, default) = match after[..end].split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (&after[..end], None),
        };
        match (var(name).filter(|v| default.is_none() || !v.is_empty()), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(StudyError::NotSet { text: text.to_string(), name: name.to_string() }),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::parse;

    #[test]
    fn a_study_name_too_long_or_unprintable_is_refused_before_anything_runs() {
        for (name, said) in [
            ("n".repeat(5000), "name is 5000 characters long; a study's name holds at most 128"),
            ("a\\u001bb".to_string(), "ESC"),
        ] {
            let text = TWO.replacen("name = \"s\"", &format!("name = \"{name}\""), 1);
            let file = parse(&text).unwrap();
            let e = plan(&file, &text, Scale::Full, &Fake).unwrap_err().to_string();
            assert!(e.contains(said) && e.contains("line 2"), "{e}");
        }
        let text = TWO.replacen("name = \"s\"", &format!("name = \"{}\"", "n".repeat(128)), 1);
        assert!(plan(&parse(&text).unwrap(), &text, Scale::Full, &Fake).is_ok());
    }

    /// Two suites with a few flags; `check` refuses a second --file-size, as clap would.
    struct Fake;
    impl SuiteFlags for Fake {
        fn suites(&self) -> Vec<String> {
            vec!["iozone".into(), "access".into()]
        }
        fn flags(&self, _: &str) -> Vec<String> {
            ["file-size", "records", "direct", "repeat", "tolerance", "no-space-check"].map(String::from).to_vec()
        }
        fn check(&self, _: &str, args: &[String]) -> Result<(), StudyError> {
            if args.iter().filter(|a| *a == "--file-size").count() > 1 {
                return Err(StudyError::Flags("the argument '--file-size' cannot be used multiple times".into()));
            }
            Ok(())
        }
    }

    const TWO: &str = r#"version = 1
name = "s"
repeat = 3
[[config]]
name = "a"
target = "/tmp/a"
[[config]]
name = "b"
target = "/tmp/b"
args = { no-space-check = true }
[[step]]
suite = "iozone"
args = { file-size = "64m", records = ["4k", "64k"], direct = false }
small = { file-size = "1m" }
[[step]]
name = "second"
suite = "access"
args = { repeat = 1 }
"#;

    fn plan_of(text: &str, scale: Scale) -> Result<Plan, FileError> {
        plan(&parse(text).unwrap(), text, scale, &Fake)
    }

    #[test]
    fn names_that_would_leave_the_log_folder_or_break_a_label_are_refused() {
        let quoted = |name: &str| format!("\"{}\"", name.replace('\t', "\\t").replace('\u{1b}', "\\u001B"));
        for bad in ["../../x", "a/b", "..", ".hidden", "-dash", "a b", "a,b", "a=b", "", "tab\t", "\u{1b}[31mred"] {
            let text = TWO.replace("name = \"a\"", &format!("name = {}", quoted(bad)));
            let e = plan_of(&text, Scale::Full).unwrap_err();
            assert_eq!(e.line, Some(5), "{bad:?}: {e}");
            assert!(e.message.starts_with("configuration name"), "{bad:?}: {e}");
            assert!(e.message.contains("give 1 to 64 of the letters"), "{bad:?}: {e}");
            let text = TWO.replace("name = \"second\"", &format!("name = {}", quoted(bad)));
            assert!(plan_of(&text, Scale::Full).unwrap_err().message.starts_with("step name"), "{bad:?}");
        }
        let e = safe_name(&"x".repeat(65)).unwrap_err().to_string();
        assert!(e.starts_with("65 characters long"), "{e}");
        for good in ["a", "ext4-delalloc", "xfs_4k.v2", "0", &"x".repeat(64)] {
            assert_eq!(safe_name(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn a_score_is_io500_over_steps_named_after_its_phases() {
        let scored = TWO.replace("repeat = 3", "repeat = 3\nscore = \"io500\"");
        let e = plan_of(&scored, Scale::Full).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("no step is: name them ior-easy-write, mdtest-easy-write"), "{e}");
        let named = scored.replace("name = \"second\"", "name = \"ior-hard-write\"");
        assert!(plan_of(&named, Scale::Full).is_ok());
        let other = named.replace("score = \"io500\"", "score = \"io5000\"");
        let e = plan_of(&other, Scale::Full).unwrap_err();
        assert!(e.message.contains("score = \"io5000\": the score a study draws is \"io500\""), "{e}");
    }

    #[test]
    fn configurations_are_interleaved_per_step_by_default() {
        let p = plan_of(TWO, Scale::Full).unwrap();
        let order: Vec<(&str, &str)> = p.steps.iter().map(|s| (s.config_name.as_str(), s.step_name.as_str())).collect();
        assert_eq!(order, [("a", "iozone"), ("b", "iozone"), ("a", "second"), ("b", "second")]);
        let p = plan_of(&TWO.replace("repeat = 3", "repeat = 3\norder = \"sequential\""), Scale::Full).unwrap();
        let order: Vec<(&str, &str)> = p.steps.iter().map(|s| (s.config_name.as_str(), s.step_name.as_str())).collect();
        assert_eq!(order, [("a", "iozone"), ("a", "second"), ("b", "iozone"), ("b", "second")]);
    }

    #[test]
    fn flags_come_from_the_configuration_the_step_the_scale_and_the_study() {
        let p = plan_of(TWO, Scale::Full).unwrap();
        assert_eq!(p.steps[0].args, ["--file-size", "64m", "--records", "4k,64k", "--repeat", "3"]);
        assert_eq!(p.steps[1].args, ["--file-size", "64m", "--no-space-check", "--records", "4k,64k", "--repeat", "3"]);
        // The step's own repeat wins over the study's.
        assert_eq!(p.steps[2].args, ["--repeat", "1"]);
        let small = plan_of(TWO, Scale::Small).unwrap();
        assert_eq!(small.steps[0].args[..2], ["--file-size", "1m"]);
        assert_ne!(small.steps[0].key, p.steps[0].key, "a step at another size is another step");
    }

    #[test]
    fn keys_change_with_what_a_step_runs_with_and_only_then() {
        let p = plan_of(TWO, Scale::Full).unwrap();
        let same = plan_of(&TWO.replace("name = \"s\"", "name = \"s\"\ndescription = \"x\""), Scale::Full).unwrap();
        assert_eq!(
            p.steps.iter().map(|s| &s.key).collect::<Vec<_>>(),
            same.steps.iter().map(|s| &s.key).collect::<Vec<_>>()
        );
        let moved = plan_of(&TWO.replace("/tmp/b", "/tmp/c"), Scale::Full).unwrap();
        assert_eq!(moved.steps[0].key, p.steps[0].key);
        assert_ne!(moved.steps[1].key, p.steps[1].key);
        let stored: Vec<(String, String, String)> =
            p.steps.iter().map(|s| (s.config_name.clone(), s.step_name.clone(), s.key.clone())).collect();
        assert!(changes(&stored, &p).is_empty());
        let said = changes(&stored, &moved);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].contains("step 'iozone' of configuration 'b' changed"), "{said:?}");
    }

    #[test]
    fn mistakes_name_their_line_and_the_nearest_name() {
        let e = plan_of(&TWO.replace("file-size = \"64m\"", "fil-size = \"64m\""), Scale::Full).unwrap_err();
        assert_eq!(e.line, Some(13), "{e}");
        assert!(
            e.message.contains("'fil-size' is not a flag of `iomatrix run iozone`; did you mean 'file-size'?"),
            "{e}"
        );
        let e = plan_of(&TWO.replace("name = \"b\"", "name = \"a\""), Scale::Full).unwrap_err();
        assert_eq!(e.line, Some(8));
        assert!(e.message.contains("two configurations are named 'a'"), "{e}");
        let e = plan_of(&TWO.replace("suite = \"access\"", "suite = \"acess\""), Scale::Full).unwrap_err();
        assert!(e.message.contains("did you mean 'access'?"), "{e}");
        let e = plan_of(&TWO.replace("direct = false", "target = \"/x\""), Scale::Full).unwrap_err();
        assert!(e.message.contains("set it on the configuration"), "{e}");
        let e = plan_of(&format!("{TWO}[[compare]]\na = \"a\"\nb = \"bb\"\n"), Scale::Full).unwrap_err();
        assert!(e.message.contains("there is no configuration 'bb'; did you mean 'b'?"), "{e}");
        // The parser's own verdict on the whole command line, on the step's line.
        let e = plan_of(&TWO.replace("args = { no-space-check = true }", "args = { file-size = \"2m\" }"), Scale::Full);
        assert!(e.is_ok(), "the step's value replaces the configuration's: one --file-size");
    }

    #[test]
    fn variables_are_expanded_and_a_missing_one_is_named() {
        let var = |n: &str| (n == "MNT").then(|| "/mnt/x".to_string());
        assert_eq!(expand("${MNT}/sub", &var).unwrap(), "/mnt/x/sub");
        assert_eq!(expand("plain $HOME", &var).unwrap(), "plain $HOME");
        assert!(expand("${NOPE}", &var).unwrap_err().to_string().contains("${NOPE} is not set"));
        assert!(expand("${MNT", &var).is_err());
    }

    #[test]
    fn a_default_stands_in_for_a_variable_unset_or_empty() {
        let var = |n: &str| match n {
            "SET" => Some("h1,h2".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        assert_eq!(expand("${SET:-}", &var).unwrap(), "h1,h2");
        assert_eq!(expand("${EMPTY:-here}", &var).unwrap(), "here");
        assert_eq!(expand("${UNSET:-}", &var).unwrap(), "");
        assert_eq!(expand("${EMPTY}", &var).unwrap(), "", "no default: empty is a value");
    }

    #[test]
    fn a_step_runs_across_its_own_hosts_else_its_configurations_and_the_key_says_so() {
        let hosts = TWO
            .replace("target = \"/tmp/a\"", "target = \"/tmp/a\"\nhosts = \"h1,h2\"")
            .replace("name = \"second\"", "name = \"second\"\nslurm = { nodes = 2, tasks_per_node = 3 }");
        let p = plan_of(&hosts, Scale::Full).unwrap();
        let across: Vec<(&str, &str, &Across)> =
            p.steps.iter().map(|s| (s.config_name.as_str(), s.step_name.as_str(), &s.across)).collect();
        assert_eq!(
            across,
            [
                ("a", "iozone", &Across::Hosts("h1,h2".into())),
                ("b", "iozone", &Across::Here),
                ("a", "second", &Across::Slurm { nodes: 2, tasks_per_node: 3 }),
                ("b", "second", &Across::Slurm { nodes: 2, tasks_per_node: 3 }),
            ]
        );
        let here = plan_of(TWO, Scale::Full).unwrap();
        assert_ne!(p.steps[0].key, here.steps[0].key, "the hosts are part of what a step runs with");
        assert_eq!(p.steps[1].key, here.steps[1].key, "a step on this host keeps its key");
    }

    #[test]
    fn hosts_and_slurm_together_or_an_empty_slurm_are_refused_at_their_line() {
        let both = TWO.replace(
            "target = \"/tmp/a\"",
            "target = \"/tmp/a\"\nhosts = \"h1\"\nslurm = { nodes = 1, tasks_per_node = 1 }",
        );
        let e = plan_of(&both, Scale::Full).unwrap_err();
        assert!(e.to_string().contains("configuration 'a' names both hosts and slurm"), "{e}");
        assert_eq!(e.line, Some(7));
        let none = TWO.replace("name = \"second\"", "name = \"second\"\nslurm = { nodes = 0, tasks_per_node = 1 }");
        let e = plan_of(&none, Scale::Full).unwrap_err();
        assert!(e.to_string().contains("give at least one node and one task per node"), "{e}");
        let unknown = TWO.replace("name = \"second\"", "name = \"second\"\nslurm = { nodes = 1, tasks = 1 }");
        assert!(parse(&unknown).is_err(), "slurm's keys are nodes and tasks_per_node");
    }

    #[test]
    fn durations() {
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(duration("12"), Ok(Duration::from_secs(12)));
        assert!(duration("0s").is_err());
        assert!(duration("5 minutes").is_err());
        assert!(duration("18446744073709551615s").unwrap_err().to_string().contains("at most 30 days"));
    }
}
