//! fio's two ways of giving jobs, read into [`FioJob`]s: the command line (`--name=a --rw=read
//! --name=b ...`, options before the first `--name` global) and job files (`[global]`, then a
//! section per job; options inherit from the `[global]` sections above them). A job file is
//! read through the guarded reader: a regular file of bounded size, never /dev/zero or a
//! 10 GiB sparse file.

use super::options::{self, refused, FioJob};
use iomatrix_core::UsageError;
use iomatrix_guard::read::{read_text, Input};
use iomatrix_harness::{Cost, Demand};
use std::path::{Path, PathBuf};

/// A fio job file: short text (fio's examples are a few dozen lines).
pub const JOB_FILE: Input = Input {
    what: "fio job file",
    max_bytes: 1 << 20,
    max_line: Some(64 << 10),
    bound: "bound of a job file",
    raise: None,
    stream: None,
};

/// How the results are printed, as fio's `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// fio's normal text output.
    Normal,
    /// fio's JSON layout (`--output-format=json`).
    Json,
}

/// Everything `iomatrix fio` was given.
#[derive(Debug)]
pub struct Invocation {
    /// The jobs to run, in order, global options folded into each.
    pub jobs: Vec<FioJob>,
    /// `--output-format`: normal unless json was asked for.
    pub format: Format,
    /// `--help` or `-h` was given: print the usage and run nothing.
    pub help: bool,
    /// iomatrix's own flags beside fio's: `--db PATH`, `--label KEY=VALUE`.
    pub db: Option<PathBuf>,
    /// `--label KEY=VALUE`, each as given, stored with every job's run.
    pub labels: Vec<String>,
    /// The job files named on the command line, read in order.
    pub job_files: Vec<PathBuf>,
}

/// One option as given: key, value (None for a bare word), where.
type Given = (String, Option<String>, String);

/// Reads fio's command line (the words after `iomatrix fio`).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let mut inv = Invocation {
        jobs: Vec::new(),
        format: Format::Normal,
        help: false,
        db: None,
        labels: Vec::new(),
        job_files: Vec::new(),
    };
    let mut global: Vec<Given> = Vec::new();
    // Jobs of the command line: each `--name` starts one.
    let mut jobs: Vec<(String, Vec<Given>)> = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let Some(flag) = word.strip_prefix("--") else {
            if word == "-h" {
                inv.help = true;
                continue;
            }
            if word.starts_with('-') && word.len() > 1 {
                return Err(refused(word, "the command line"));
            }
            inv.job_files.push(PathBuf::from(word));
            continue;
        };
        let (key, value) = match flag.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (flag.to_string(), None),
        };
        // iomatrix's own flags take their value as the next word too.
        let mut value_or_next = |what: &str| -> Result<String, UsageError> {
            value
                .clone()
                .or_else(|| words.next().cloned())
                .ok_or_else(|| UsageError::new(format!("--{key} needs a value: --{key}={what}")))
        };
        match key.as_str() {
            "help" => inv.help = true,
            "output-format" => {
                inv.format = match value_or_next("normal|json")?.as_str() {
                    "normal" => Format::Normal,
                    "json" => Format::Json,
                    other => {
                        return Err(UsageError::new(format!(
                            "--output-format={other}: iomatrix fio prints normal or json (fio's json+ and terse \
                             layouts are not written)"
                        )))
                    }
                }
            }
            "db" => inv.db = Some(PathBuf::from(value_or_next("PATH")?)),
            "label" => inv.labels.push(value_or_next("KEY=VALUE")?),
            "name" => {
                let name = value_or_next("JOB")?;
                jobs.push((name.clone(), vec![("name".into(), Some(name), "the command line".into())]));
            }
            _ => {
                // As fio's getopt reads them: an option that takes a value takes the next word
                // too (`--bs 4k`); a boolean's value is only ever attached (`--direct=1`).
                let value = match value {
                    None if !options::BOOLEANS.contains(&key.as_str()) => words.next().cloned(),
                    v => v,
                };
                let given = (key, value, "the command line".to_string());
                match jobs.last_mut() {
                    Some((_, options)) => options.push(given),
                    None => global.push(given),
                }
            }
        }
    }
    if inv.help {
        return Ok(inv);
    }
    add_command_line_jobs(&mut inv, &global, &jobs)?;
    for file in inv.job_files.clone() {
        let text = read_text(&file, &JOB_FILE).map_err(UsageError::from)?;
        inv.jobs.extend(read_job_file(&text, &file)?);
    }
    if inv.jobs.is_empty() {
        return Err(UsageError::new(
            "no job given: name a job file (iomatrix fio job.fio) or give a job on the command line (iomatrix fio \
             --name=t --rw=randread --bs=4k --size=256m --runtime=10 --time_based)",
        ));
    }
    Ok(inv)
}

/// The command line's jobs, each with the options given before the first `--name`; refused
/// beside a job file, and global options without a job are a mistake.
fn add_command_line_jobs(
    inv: &mut Invocation,
    global: &[Given],
    jobs: &[(String, Vec<Given>)],
) -> Result<(), UsageError> {
    if !inv.job_files.is_empty() && (!jobs.is_empty() || !global.is_empty()) {
        let first =
            jobs.first().map(|(n, _)| format!("--name={n}")).or_else(|| global.first().map(|g| format!("--{}", g.0)));
        return Err(UsageError::new(format!(
            "{}: job options on the command line beside a job file are not combined; put them in the job file \
             ([global] for every job)",
            first.unwrap_or_default()
        )));
    }
    for (name, options) in jobs {
        inv.jobs.push(job_of(name, global, options)?);
    }
    if jobs.is_empty() && !global.is_empty() {
        return Err(UsageError::new(format!(
            "--{} given, but no job: fio's command line starts each job with --name=NAME",
            global[0].0
        )));
    }
    Ok(())
}

/// The jobs of a job file's text; `file` names it in messages.
pub fn read_job_file(text: &str, file: &Path) -> Result<Vec<FioJob>, UsageError> {
    let shown = file.display();
    let mut global: Vec<Given> = Vec::new();
    // Each job: its name, how many of the [global] options above it it takes (the list only
    // grows, so a prefix: a file of many options and many sections is not copied per section),
    // its own options.
    let mut jobs: Vec<(String, usize, Vec<Given>)> = Vec::new();
    let mut in_global = false;
    for (n, raw) in text.lines().enumerate() {
        let at = format!("line {} of {shown}", n + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let name = section.strip_suffix(']').map(str::trim).filter(|s| !s.is_empty()).ok_or_else(|| {
                UsageError::new(format!("{at}: '{line}' is not a section header; write [global] or [JOBNAME]"))
            })?;
            in_global = name == "global";
            if !in_global {
                jobs.push((name.to_string(), global.len(), Vec::new()));
            }
            continue;
        }
        if line.starts_with("include ") {
            return Err(UsageError::new(format!("{at}: include is not followed; put the options in this file")));
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (line.to_string(), None),
        };
        if value.as_deref().is_some_and(|v| v.contains("${") || v.starts_with('$')) {
            return Err(UsageError::new(format!(
                "{at}: {key}={}: environment variables in job files are not expanded; write the value",
                value.unwrap_or_default()
            )));
        }
        let given = (key, value, at);
        match (in_global, jobs.last_mut()) {
            (true, _) => global.push(given),
            (false, Some((_, _, own))) => own.push(given),
            (false, None) => {
                return Err(UsageError::new(format!(
                    "{}: an option before any section; start the file with [global] or [JOBNAME]",
                    given.2
                )))
            }
        }
    }
    if jobs.is_empty() {
        return Err(UsageError::new(format!("{shown} holds no job: add a section [JOBNAME] after [global]")));
    }
    check_options_held(&global, &jobs, &shown.to_string())?;
    jobs.iter().map(|(name, inherited, own)| job_of(name, &global[..*inherited], own)).collect()
}

/// Each job holds the [global] options it inherits as its own (they are its "job options" in the
/// JSON output): what that takes goes through the plan-time memory check before a job is made,
/// so a short file of many options and many sections is refused rather than copied into memory.
fn check_options_held(global: &[Given], jobs: &[(String, usize, Vec<Given>)], file: &str) -> Result<(), UsageError> {
    let bytes =
        |g: &Given| (std::mem::size_of::<(String, String)>() + g.0.len() + g.1.as_ref().map_or(0, String::len)) as u64;
    // Bytes of the first n global options, for each n.
    let mut prefix = vec![0u64];
    for g in global {
        prefix.push(prefix[prefix.len() - 1] + bytes(g));
    }
    let job = std::mem::size_of::<FioJob>() as u64;
    let held = jobs.iter().fold(0u64, |sum, (name, inherited, own)| {
        sum.saturating_add(job + name.len() as u64 + prefix[*inherited] + own.iter().map(bytes).sum::<u64>())
    });
    let count = jobs.len().max(1) as u64;
    let demand = Demand {
        total: Cost::memory(held),
        knobs: Vec::new(),
        counted: format!("the options of the {count} job(s) of {file}"),
    }
    .knob("jobs", count, Cost::memory(held / count));
    iomatrix_harness::limits::check_now(&demand)
}

fn job_of(name: &str, global: &[Given], own: &[Given]) -> Result<FioJob, UsageError> {
    let mut job = FioJob::new(name);
    for (key, value, at) in global.iter().chain(own) {
        if key == "output-format" {
            return Err(UsageError::new(format!(
                "output-format ({at}) is a command-line option: give --output-format=json on the command line"
            )));
        }
        job.set(key, value.as_deref(), at)?;
    }
    job.name = name.to_string();
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn each_name_starts_a_job_and_options_before_it_are_global() {
        let inv = parse(&words("--bs=8k --output-format=json --name=a --rw=randread --name=b --iodepth=4")).unwrap();
        assert_eq!(inv.format, Format::Json);
        assert_eq!(inv.jobs.len(), 2);
        assert_eq!((inv.jobs[0].name.as_str(), inv.jobs[0].bs.bytes(), inv.jobs[0].mix.random), ("a", 8192, true));
        assert_eq!((inv.jobs[1].name.as_str(), inv.jobs[1].iodepth, inv.jobs[1].mix.random), ("b", 4, false));
    }

    #[test]
    fn job_files_inherit_from_the_global_sections_above_them() {
        let text = "; comment\n[global]\nbs=16k\nsize=1m\n\n[first]\nrw=randread\n[global]\ndirect=1\n[second]\n\
                    stonewall\nrw=write\n";
        let jobs = read_job_file(text, Path::new("j.fio")).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!((jobs[0].bs.bytes(), jobs[0].direct, jobs[0].stonewall), (16384, false, false));
        assert_eq!((jobs[1].bs.bytes(), jobs[1].direct, jobs[1].stonewall), (16384, true, true));
        assert_eq!(jobs[1].read_percent(), 0);
    }

    #[test]
    fn refusals_name_the_line() {
        let e = read_job_file("[j]\nverify=md5\n", Path::new("j.fio")).unwrap_err().to_string();
        assert!(e.contains("verify (line 2 of j.fio)"), "{e}");
        let e = read_job_file("bs=4k\n[j]\n", Path::new("j.fio")).unwrap_err().to_string();
        assert!(e.contains("line 1 of j.fio: an option before any section"), "{e}");
        let e = read_job_file("[global]\nbs=4k\n", Path::new("j.fio")).unwrap_err().to_string();
        assert!(e.contains("holds no job"), "{e}");
    }
}
