//! RUNS arguments (`12`, `#12`, `3,4,5`, `server=netware`, `server=linux,cache=2`)
//! turned into named groups of stored runs, for compare, sweep and report.
//! `RUNS@HOST` keeps one host's clients of runs whose MPI ranks ran on several
//! hosts, so `compare 12@host1 12@host2` compares the hosts of one run with
//! compare's own tables.

use iomatrix_core::UsageError;
use iomatrix_store::reader::Fact;
use iomatrix_store::reader::NOT_THE_SETUP;
use iomatrix_store::{RunStatus, Store, StoredRun};

/// One group per argument, in the order given: (the argument, its runs).
pub fn resolve(store: &Store, specs: &[String]) -> anyhow::Result<Vec<(String, Vec<StoredRun>)>> {
    let mut sides = Vec::with_capacity(specs.len());
    for spec in specs {
        sides.push((spec.clone(), load_side(store, spec, Reading::Whole)?));
    }
    Ok(sides)
}

/// As [`resolve`], each side handed to `each` as it is loaded and dropped after, its runs read
/// summarised ([`Store::load_run_summarised`]: no cell's figures over time, no client's own
/// figures but a `RUNS@HOST` side's): a compare of 1,400 runs against 1,400 holds one side's
/// runs at a time, not both.
pub fn resolve_each<T>(
    store: &Store,
    specs: &[String],
    mut each: impl FnMut(&str, Vec<StoredRun>) -> anyhow::Result<T>,
) -> anyhow::Result<Vec<T>> {
    let mut sides = Vec::with_capacity(specs.len());
    for spec in specs {
        // `@HOST` keeps the clients its host ran: it reads them.
        let reading = if host_of(spec).is_some() { Reading::Whole } else { Reading::Summarised };
        sides.push(each(spec, load_side(store, spec, reading)?)?);
    }
    Ok(sides)
}

/// How a side's runs are read: whole ([`Store::load_run`]) or summarised
/// ([`Store::load_run_summarised`]).
#[derive(Clone, Copy)]
enum Reading {
    Whole,
    Summarised,
}

/// The runs one side names, read as `reading` says.
fn load_side(store: &Store, spec: &str, reading: Reading) -> anyhow::Result<Vec<StoredRun>> {
    let (runs_spec, host) = split_host(spec);
    let ids = match ids_of(runs_spec)? {
        Some(ids) => ids,
        None => by_labels(runs_spec, store)?,
    };
    let mut runs = Vec::with_capacity(ids.len());
    for id in ids {
        let loaded = match reading {
            Reading::Whole => store.load_run(id),
            Reading::Summarised => store.load_run_summarised(id),
        };
        let run = loaded?.ok_or_else(|| {
            UsageError::new(format!("{spec}: there is no run #{id}; `iomatrix runs` lists the stored runs"))
        })?;
        match run.summary.status {
            RunStatus::Complete => {}
            RunStatus::Partial => eprintln!(
                "iomatrix: warning: run #{id} is partial (clients or connections failed in some of its cells): \
                 those cells are left out of the medians unless --include-partial, and named"
            ),
            status => eprintln!(
                "iomatrix: warning: run #{id} is {} ({} of {} cells): only its finished cells are used",
                status.as_str(),
                run.summary.cells,
                run.summary.total_cells
            ),
        }
        match host {
            Some(host) => runs.push(on_host(&run, host).map_err(|e| UsageError::new(format!("'{spec}': {e}")))?),
            None => runs.push(run),
        }
    }
    Ok(runs)
}

/// The host a `RUNS@HOST` side keeps, if any.
pub fn host_of(spec: &str) -> Option<&str> {
    split_host(spec).1
}

/// `RUNS@HOST`: (RUNS, HOST). A label value may hold an `@` (`target=smb://u@h`): only a
/// last part without `=`, `/` or `,` is a host.
fn split_host(spec: &str) -> (&str, Option<&str>) {
    match spec.rsplit_once('@') {
        Some((runs, host)) if !runs.is_empty() && !host.contains(['=', '/', ',']) => (runs, Some(host.trim())),
        _ => (spec, None),
    }
}

fn on_host(run: &StoredRun, host: &str) -> Result<StoredRun, String> {
    if host.is_empty() {
        return Err("name a host after the @ (a host name or address that `show` lists under Hosts)".into());
    }
    let (view, columns) = crate::suites::client_view(run)
        .ok_or_else(|| format!("run #{} is of a suite this iomatrix does not know", run.summary.id))?;
    iomatrix_report::text::clients::on_host(run, &view, columns, host)
}

/// `12`, `#12`, `3,4,5`: run ids; None for anything else (a label selector).
fn ids_of(spec: &str) -> Result<Option<Vec<i64>>, UsageError> {
    if spec.contains('=') {
        return Ok(None);
    }
    spec.split(',')
        .map(|part| {
            let p = part.trim().trim_start_matches('#');
            p.parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(|| {
                UsageError::new(format!(
                    "'{spec}': give run ids (12, #12, or 3,4,5 for repeats of one setup) or labels \
                     (server=netware or server=linux,cache=2)"
                ))
            })
        })
        .collect::<Result<Vec<i64>, _>>()
        .map(Some)
}

/// Every complete or partial run (every cell ran; a partial one's cells say which are whole)
/// carrying all the labels of `spec`.
fn by_labels(spec: &str, store: &Store) -> anyhow::Result<Vec<i64>> {
    let wanted: Vec<(String, String)> = spec
        .split(',')
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| {
                    UsageError::new(format!("'{spec}': write labels as KEY=VALUE[,KEY=VALUE], e.g. server=netware"))
                })
        })
        .collect::<Result<_, _>>()?;
    // Found in SQL: listing every run to find a side's cost a compare of 10,000 a tenth of its time.
    let ids = store.finished_runs_labelled(&wanted)?;
    if ids.is_empty() {
        let mut known: Vec<String> =
            store.list_runs()?.iter().flat_map(|r| r.labels.iter().map(|(k, v)| format!("{k}={v}"))).collect();
        known.sort();
        known.dedup();
        return Err(UsageError::new(format!(
            "'{spec}' matches no complete run (nor a partial one); labels stored: {}",
            if known.is_empty() { "none (label runs with --label KEY=VALUE)".to_string() } else { known.join(", ") }
        ))
        .into());
    }
    Ok(ids)
}

/// The conditions that say where a run measured: the target, and the file system there.
/// Runs pooled as repeats of one setup (`3,4,5`, a label selector, one level of a sweep) must
/// share their plan and their target; otherwise the command refuses, naming what differs.
pub fn repeats(name: &str, runs: &[StoredRun]) -> Result<(), UsageError> {
    repeats_but(name, runs, &[])
}

/// As [`repeats`], the plan keys `but` (a sweep's swept setting: `record_sizes`, `queue_depths`)
/// aside.
pub fn repeats_but(name: &str, runs: &[StoredRun], but: &[&str]) -> Result<(), UsageError> {
    let Some(first) = runs.first() else { return Ok(()) };
    let mut seen = std::collections::BTreeSet::new();
    if let Some(twice) = runs.iter().find(|r| !seen.insert(r.summary.id)) {
        return Err(UsageError::new(format!(
            "'{name}' names run #{} twice: a run is one sample, not two; name each run once",
            twice.summary.id
        )));
    }
    for other in &runs[1..] {
        let differs = setup_differences(first, other, but);
        if !differs.is_empty() {
            return Err(UsageError::new(format!(
                "'{name}' pools runs #{} and #{} as repeats of one setup, but they differ in {}; repeats must share \
                 their plan and target: give them as separate arguments (or label them apart)",
                first.summary.id,
                other.summary.id,
                differs.join("; ")
            )));
        }
    }
    Ok(())
}

/// What differs between two runs' setups: plan parameters (but the number of repeats and the
/// keys `but`) and the target, each as "fsync: false (#3) vs true (#5)".
pub fn setup_differences(a: &StoredRun, b: &StoredRun, but: &[&str]) -> Vec<String> {
    let (ids, mut out) = ((a.summary.id, b.summary.id), Vec::new());
    let mut differ = |what: &str, va: Option<&String>, vb: Option<&String>| {
        if va != vb {
            let shown = |v: Option<&String>| v.cloned().unwrap_or_else(|| "absent".into());
            out.push(format!("{what}: {} (#{}) vs {} (#{})", shown(va), ids.0, shown(vb), ids.1));
        }
    };
    let (pa, pb) = (a.plan_facts(), b.plan_facts());
    let keys: std::collections::BTreeSet<&String> = pa.keys().chain(pb.keys()).collect();
    for key in keys {
        let top = iomatrix_store::reader::top_key(key);
        if !NOT_THE_SETUP.contains(&top) && !but.contains(&top) {
            differ(&format!("plan {key}"), pa.get(key), pb.get(key));
        }
    }
    let said = |fact: Fact| (!fact.is_null()).then(|| fact.shown());
    let target = |run: &StoredRun| {
        let c = run.conditions_facts();
        [("target", said(c.target)), ("fs_type", said(c.fs_type))]
    };
    for ((key, va), (_, vb)) in target(a).into_iter().zip(target(b)) {
        differ(key, va.as_ref(), vb.as_ref());
    }
    out
}

/// The runs' suite, which must be one: comparing a Bonnie run with an IOzone run compares nothing.
pub fn one_suite(groups: &[(String, Vec<StoredRun>)]) -> Result<String, UsageError> {
    one_suite_of(groups.iter().flat_map(|(name, runs)| suites_of(name, runs)).collect())
}

/// Each run's (suite, "SIDE #ID"), for [`one_suite_of`].
pub fn suites_of(name: &str, runs: &[StoredRun]) -> Vec<(String, String)> {
    runs.iter().map(|r| (r.summary.suite.clone(), format!("{name} #{}", r.summary.id))).collect()
}

/// As [`one_suite`], over each run's (suite, "SIDE #ID").
pub fn one_suite_of(mut suites: Vec<(String, String)>) -> Result<String, UsageError> {
    suites.sort();
    let first = suites.first().map(|s| s.0.clone()).unwrap_or_default();
    if let Some(other) = suites.iter().find(|s| s.0 != first) {
        return Err(UsageError::new(format!(
            "the runs are of different suites ({first} and {} in {}): compare like with like",
            other.0, other.1
        )));
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_selectors_are_told_apart() {
        assert_eq!(ids_of("12").unwrap(), Some(vec![12]));
        assert_eq!(ids_of("#12").unwrap(), Some(vec![12]));
        assert_eq!(ids_of("3, 4,#5").unwrap(), Some(vec![3, 4, 5]));
        assert_eq!(ids_of("server=x").unwrap(), None);
        assert!(ids_of("twelve").is_err());
        assert!(ids_of("0").is_err());
    }

    #[test]
    fn a_host_follows_the_last_at_unless_it_is_part_of_a_label() {
        assert_eq!(split_host("12@host1"), ("12", Some("host1")));
        assert_eq!(split_host("3,4@10.0.0.2"), ("3,4", Some("10.0.0.2")));
        assert_eq!(split_host("server=a@host2"), ("server=a", Some("host2")));
        assert_eq!(split_host("target=smb://u@h/share"), ("target=smb://u@h/share", None));
        assert_eq!(split_host("who=u@h,fs=ext4"), ("who=u@h,fs=ext4", None));
        assert_eq!(split_host("12"), ("12", None));
    }
}
