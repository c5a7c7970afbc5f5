//! `iomatrix compare A B C ...`: every side against the baseline through the pairwise compare,
//! one table with the sides as columns, the JSON document (`iomatrix.compare/3`) and the exit
//! code of `--fail-if-slower` over every side.

use super::numbers::NumberArgs;
use iomatrix_analysis::{
    compare_many, flag_cached, regressions, CacheFlags, Gate, Group, Limit, ManyComparison, Region,
};
use iomatrix_core::UsageError;
use iomatrix_report::text;
use std::process::ExitCode;

/// What `compare`'s flags ask of more than two sides, as `compare` read them.
pub(super) struct ManyArgs<'a> {
    pub json: bool,
    pub all: bool,
    pub metric: Option<&'a str>,
    pub numbers: &'a NumberArgs,
    /// `--derive` was given (it takes two sides).
    pub derive: bool,
    /// `--limit`, read.
    pub limit: Option<Limit>,
}

pub(super) fn run(
    args: &ManyArgs<'_>,
    groups: &[Group],
    labels: &[Vec<String>],
    baseline: usize,
    region: Region,
    fail_if_slower: Option<f64>,
) -> anyhow::Result<ExitCode> {
    let flags: Option<Vec<_>> = args.limit.as_ref().map(|l| groups.iter().map(|g| flag_cached(g, l)).collect());
    if args.derive {
        return Err(UsageError::new(
            "--derive works on two sides (A's and B's figures); with more sides compare the baseline with one \
             side at a time, e.g. compare A C --derive ...",
        )
        .into());
    }
    let mut many = compare_many(groups, baseline, region);
    // --exclude: each pair's matrices leave the cell out of their means, as two sides do.
    for pair in &mut many.pairs {
        super::numbers::exclude(pair, &args.numbers.exclude)?;
    }
    for (side, labels) in many.sides.iter_mut().zip(labels) {
        side.labels.clone_from(labels);
    }
    let gates = fail_if_slower.map(|t| held(&many, groups, baseline, t, args.metric)).transpose()?;
    // The outcome over every side: slower anywhere, else not checked anywhere, else passed.
    let outcome = gates.as_ref().map(|gates| {
        let outcomes: Vec<&str> = gates.iter().map(Gate::outcome).collect();
        ["slower", "not checked"].into_iter().find(|o| outcomes.contains(o)).unwrap_or("passed")
    });
    if args.json {
        print_json(args, &many, baseline, flags.as_deref(), (fail_if_slower, gates.as_deref(), outcome))?;
    } else {
        let out = args.numbers.render(|| {
            let mut out = text::compare_many::comparison(&many, flags.as_deref(), args.all);
            if let (Some(t), Some(gates)) = (fail_if_slower, &gates) {
                out.push_str(&text::compare_many::gates(t, args.metric, &many, gates));
            }
            out
        });
        crate::out::print(&out)?;
    }
    match (outcome, fail_if_slower, &gates) {
        (Some("slower"), _, _) => Ok(ExitCode::from(crate::exit::SLOWER)),
        (Some("not checked"), Some(t), Some(gates)) => {
            for (gate, other) in gates.iter().zip(&many.others).filter(|(g, _)| g.outcome() == "not checked") {
                eprintln!(
                    "iomatrix: {} against {}: {}",
                    many.sides[*other].letter,
                    many.sides[baseline].letter,
                    text::compare::not_checked(t, gate)
                );
            }
            Ok(ExitCode::from(crate::exit::NOT_CHECKED))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Every side's gate against the baseline. `--metric` that names no figure of any pair is
/// refused; a pair where it names none is not checked.
fn held(
    many: &ManyComparison,
    groups: &[Group],
    baseline: usize,
    threshold: f64,
    metric: Option<&str>,
) -> Result<Vec<Gate>, UsageError> {
    let held: Vec<_> = many
        .pairs
        .iter()
        .zip(&many.others)
        .map(|(pair, other)| regressions(pair, &groups[baseline], &groups[*other], threshold, metric))
        .collect();
    if let Some(Err(refused)) = held.iter().find(|h| h.is_err()).filter(|_| held.iter().all(Result::is_err)) {
        return Err(refused.clone().into());
    }
    Ok(held.into_iter().map(|h| h.unwrap_or_else(|refused| Gate::over_nothing(refused.0))).collect())
}

/// `compare --json` with more than two sides: schema iomatrix.compare/3; `gate` is
/// `--fail-if-slower`'s threshold, each pair's gate and the outcome over every side.
fn print_json(
    args: &ManyArgs<'_>,
    many: &ManyComparison,
    baseline: usize,
    flags: Option<&[CacheFlags]>,
    (fail_if_slower, gates, outcome): (Option<f64>, Option<&[Gate]>, Option<&str>),
) -> anyhow::Result<()> {
    let letter = |i: usize| many.sides[i].letter.clone();
    let pairs: Vec<serde_json::Value> = many
        .pairs
        .iter()
        .zip(&many.others)
        .enumerate()
        .map(|(k, (pair, other))| {
            serde_json::json!({
                "side": letter(*other),
                "comparison": pair,
                "fail_if_slower": gates.map(|g| serde_json::to_value(&g[k]).map(|mut v| {
                    v["outcome"] = g[k].outcome().into();
                    v
                }).unwrap_or_default()),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "schema": "iomatrix.compare/3",
        "suite": many.suite,
        "baseline": letter(baseline),
        "sides": many.sides,
        "rows": many.rows,
        "pairs": pairs,
        "cache_flags": flags.map(|f| {
            many.sides.iter().zip(f).map(|(s, f)| (s.letter.clone(), serde_json::to_value(f).unwrap_or_default()))
                .collect::<serde_json::Map<_, _>>()
        }),
        "fail_if_slower": fail_if_slower.map(|t| serde_json::json!({
            "threshold_pct": t * 100.0,
            "metric": args.metric,
            "outcome": outcome,
        })),
    });
    crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))
}
