//! The pages and their parameters, typed: a request becomes a [`Route`] or a refusal ([`Refusal`])
//! before anything is read.

/// At most this many sides in one compare: a chart stays readable with 16 systems, and a page of
/// 32 columns is already more than a screen.
pub const MAX_SIDES: usize = 32;
/// At most this many run ids listed over every side: more is a label group's job (`server=a`).
pub const MAX_LISTED_RUNS: usize = 2_000;
/// The highest page number taken (a million pages of 1,000 runs).
pub const MAX_PAGE: u64 = 1_000_000;

/// A page or a file the viewer serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The runs, filtered and paged.
    Runs(RunsQuery),
    /// One run.
    Run(i64),
    /// N sides against a baseline.
    Compare(CompareQuery),
    /// One figure of a run's plan over time.
    History { run: i64, figure: Option<String> },
    /// A running run's page.
    Live(i64),
    /// Its server-sent events.
    Events(i64),
    /// A report of the sides, as `iomatrix report` writes it (`html`, `xlsx`, `csv`, `md`, `json`).
    Download { query: CompareQuery, extension: &'static str },
    /// The HTML report shown inside a page (charts), with its own inline style.
    Embedded(CompareQuery),
    /// A run's `show --json`, for the interactive charts.
    RunJson(i64),
    /// A file of the viewer's own.
    Asset(&'static str),
}

/// The runs page's filters, as `iomatrix runs` takes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunsQuery {
    /// (flag without its dashes, value), in a fixed order: suite, label..., target, host, fs,
    /// state, since, until, search.
    pub filters: Vec<(&'static str, String)>,
    pub page: u64,
}

/// Sides and a baseline, as `iomatrix compare` and `iomatrix report` take them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompareQuery {
    pub sides: Vec<String>,
    pub baseline: Option<String>,
    /// `--include-partial`, `--include-disturbed`.
    pub include_partial: bool,
    pub include_disturbed: bool,
}

impl CompareQuery {
    /// The words after `compare` (or `report`): the sides, the baseline, the inclusions.
    pub fn words(&self) -> Vec<String> {
        let mut words = self.sides.clone();
        if let Some(b) = &self.baseline {
            words.extend(["--baseline".to_string(), b.clone()]);
        }
        if self.include_partial {
            words.push("--include-partial".into());
        }
        if self.include_disturbed {
            words.push("--include-disturbed".into());
        }
        words
    }
}

/// Why a request is refused, with its HTTP status and words for the person asking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why}")]
pub struct Refusal {
    pub status: u16,
    pub why: String,
}

impl Refusal {
    pub fn new(status: u16, why: impl Into<String>) -> Refusal {
        Refusal { status, why: why.into() }
    }
}

/// The filters the runs page takes: the query key is `iomatrix runs`'s flag.
const RUN_FILTERS: [&str; 9] = ["suite", "label", "target", "host", "fs", "state", "since", "until", "search"];

impl Route {
    /// The route of `path` (already checked by the guard: no `..`, no encoded slash) and its
    /// decoded query pairs.
    pub fn of(path: &str, query: &[(String, String)]) -> Result<Route, Refusal> {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match segments.as_slice() {
            ["" | "runs"] => Ok(Route::Runs(runs_query(query)?)),
            ["run", id] => Ok(Route::Run(run_id(id)?)),
            ["run", id, "json"] => Ok(Route::RunJson(run_id(id)?)),
            ["compare"] => Ok(Route::Compare(compare_query(query)?)),
            ["history", id] => Ok(Route::History { run: run_id(id)?, figure: one(query, "figure")? }),
            ["live", id] => Ok(Route::Live(run_id(id)?)),
            ["events", id] => Ok(Route::Events(run_id(id)?)),
            ["embed", "report.html"] => Ok(Route::Embedded(compare_query(query)?)),
            ["download", file] => download(file, query),
            ["assets", name] => crate::assets::named(name)
                .map(Route::Asset)
                .ok_or_else(|| Refusal::new(404, format!("no asset {name}: the viewer serves only its own files"))),
            _ => Err(Refusal::new(
                404,
                format!("no page {path}: the pages are /runs, /run/ID, /compare, /history/ID and /live/ID"),
            )),
        }
    }
}

fn download(file: &str, query: &[(String, String)]) -> Result<Route, Refusal> {
    let extension = match file {
        "report.html" => "html",
        "report.xlsx" => "xlsx",
        "report.csv" => "csv",
        "report.md" => "md",
        "report.json" => "json",
        _ => {
            return Err(Refusal::new(
                404,
                format!("no download {file}: report.html, report.xlsx, report.csv, report.md or report.json"),
            ))
        }
    };
    Ok(Route::Download { query: compare_query(query)?, extension })
}

/// A run id: digits only, above 0.
fn run_id(text: &str) -> Result<i64, Refusal> {
    match text.parse::<i64>() {
        Ok(id) if id > 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(id),
        _ => Err(Refusal::new(400, format!("'{text}' is not a run id: give the number `iomatrix runs` lists"))),
    }
}

/// The one value of `key`, if given; given twice is refused.
fn one(query: &[(String, String)], key: &str) -> Result<Option<String>, Refusal> {
    let mut values = query.iter().filter(|(k, _)| k == key).map(|(_, v)| v.trim().to_string());
    let first = values.next().filter(|v| !v.is_empty());
    if values.next().is_some() {
        return Err(Refusal::new(400, format!("{key} is given twice: give it once")));
    }
    Ok(first)
}

fn runs_query(query: &[(String, String)]) -> Result<RunsQuery, Refusal> {
    if let Some((key, _)) = query.iter().find(|(k, _)| !RUN_FILTERS.contains(&k.as_str()) && k != "page") {
        return Err(Refusal::new(
            400,
            format!("the runs page takes no '{key}': it filters by {} and pages with page", RUN_FILTERS.join(", ")),
        ));
    }
    let mut filters = Vec::new();
    for key in RUN_FILTERS {
        let values = query.iter().filter(|(k, v)| k == key && !v.trim().is_empty());
        for (_, value) in values {
            if key != "label" && filters.iter().any(|(k, _)| *k == key) {
                return Err(Refusal::new(400, format!("{key} is given twice: give it once (only label repeats)")));
            }
            filters.push((key, value.trim().to_string()));
        }
    }
    let page = match one(query, "page")? {
        None => 1,
        Some(text) => match text.parse::<u64>() {
            Ok(p) if (1..=MAX_PAGE).contains(&p) => p,
            _ => return Err(Refusal::new(400, format!("page={text}: give a page number from 1 to {MAX_PAGE}"))),
        },
    };
    Ok(RunsQuery { filters, page })
}

fn compare_query(query: &[(String, String)]) -> Result<CompareQuery, Refusal> {
    const KEYS: [&str; 4] = ["side", "baseline", "partial", "disturbed"];
    if let Some((key, _)) = query.iter().find(|(k, _)| !KEYS.contains(&k.as_str())) {
        return Err(Refusal::new(
            400,
            format!("compare takes side=... (repeated), baseline=..., partial=1 and disturbed=1, not '{key}'"),
        ));
    }
    let flag = |key: &str| -> Result<bool, Refusal> {
        match one(query, key)?.as_deref() {
            None | Some("0") => Ok(false),
            Some("1" | "on") => Ok(true),
            Some(other) => Err(Refusal::new(400, format!("{key}={other}: give {key}=1 or leave it out"))),
        }
    };
    let sides: Vec<String> =
        query.iter().filter(|(k, v)| k == "side" && !v.trim().is_empty()).map(|(_, v)| v.trim().to_string()).collect();
    let listed: usize = sides.iter().map(|s| s.split(',').count()).sum();
    if sides.len() > MAX_SIDES || listed > MAX_LISTED_RUNS {
        return Err(Refusal::new(
            413,
            format!(
                "{} side(s) with {listed} run(s) listed: a compare takes at most {MAX_SIDES} sides and \
                 {MAX_LISTED_RUNS} listed runs; compare label groups instead (side=server=a&side=server=b), which \
                 take any number of runs",
                sides.len()
            ),
        ));
    }
    if sides.is_empty() {
        return Err(Refusal::new(400, "no run picked: pick the runs to compare on the runs page (two or more)"));
    }
    if let Some(bad) = sides.iter().find(|s| s.starts_with('-')) {
        return Err(Refusal::new(400, format!("side '{bad}': a side is a run id, ids (3,4,5) or a label (k=v)")));
    }
    Ok(CompareQuery {
        sides,
        baseline: one(query, "baseline")?,
        include_partial: flag("partial")?,
        include_disturbed: flag("disturbed")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
    }

    #[test]
    fn pages_and_their_refusals() {
        assert_eq!(Route::of("/run/12", &[]), Ok(Route::Run(12)));
        assert_eq!(Route::of("/run/0", &[]).unwrap_err().status, 400);
        assert_eq!(Route::of("/run/+1", &[]).unwrap_err().status, 400);
        assert_eq!(Route::of("/run/99999999999999999999", &[]).unwrap_err().status, 400);
        assert_eq!(Route::of("/etc/passwd", &[]).unwrap_err().status, 404);
        assert_eq!(Route::of("/assets/../x", &[]).unwrap_err().status, 404);
        let runs = Route::of("/runs", &q(&[("suite", "access"), ("label", "a=1"), ("label", "b=2")])).unwrap();
        assert_eq!(
            runs,
            Route::Runs(RunsQuery {
                filters: vec![("suite", "access".into()), ("label", "a=1".into()), ("label", "b=2".into())],
                page: 1
            })
        );
        assert_eq!(Route::of("/runs", &q(&[("page", "0")])).unwrap_err().status, 400);
        assert_eq!(Route::of("/runs", &q(&[("page", "99999999999")])).unwrap_err().status, 400);
        assert_eq!(Route::of("/runs", &q(&[("drop", "table")])).unwrap_err().status, 400);
        assert_eq!(Route::of("/runs", &q(&[("suite", "a"), ("suite", "b")])).unwrap_err().status, 400);
    }

    #[test]
    fn ten_thousand_sides_are_refused_with_the_way_out() {
        let many: Vec<(String, String)> = (1..=10_000).map(|i| ("side".to_string(), i.to_string())).collect();
        let refused = Route::of("/compare", &many).unwrap_err();
        assert_eq!(refused.status, 413);
        assert!(refused.why.contains("label groups"), "{}", refused.why);
        assert_eq!(Route::of("/compare", &[]).unwrap_err().status, 400);
        assert_eq!(Route::of("/compare", &q(&[("side", "--db=/etc/x")])).unwrap_err().status, 400);
        let two = Route::of("/compare", &q(&[("side", "1"), ("side", "2"), ("baseline", "2")])).unwrap();
        assert_eq!(
            two,
            Route::Compare(CompareQuery {
                sides: vec!["1".into(), "2".into()],
                baseline: Some("2".into()),
                ..CompareQuery::default()
            })
        );
    }
}
