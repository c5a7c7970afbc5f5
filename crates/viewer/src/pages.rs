//! Each page from the program's answers: the text the command prints for the same question, in a
//! `<pre>` with the page's id, and what a browser adds to it (a table to pick runs from, charts,
//! links). Nothing here computes a figure.

use crate::layout::{command_line, escape, page, pre, query_value, Frame};
use crate::route::{CompareQuery, Refusal, RunsQuery};
use crate::{Answer, Answers};

/// A page, or a refusal the server turns into an error page.
pub type Page = Result<String, Refusal>;

/// `iomatrix --db DB` followed by `args`, as the page shows it.
fn shown(answers: &dyn Answers, args: &[String]) -> String {
    let mut words = vec!["iomatrix".to_string(), "--db".to_string(), answers.db_path().display().to_string()];
    words.extend(args.iter().cloned());
    command_line(&words)
}

/// The command's output, or its failure as a refusal: exit 2 (a wrong question) is the asker's
/// (400), anything else the database's or the program's (500), with the command's own words.
pub fn answered(answer: Answer) -> Result<String, Refusal> {
    match answer.error {
        None => Ok(answer.stdout),
        Some(why) if answer.exit == 2 => Err(Refusal::new(400, why)),
        Some(why) => Err(Refusal::new(500, why)),
    }
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

/// `runs` with the page's filters (`--page` always: newest first).
fn runs_args(query: &RunsQuery, json: bool) -> Vec<String> {
    let mut args = words(&["runs"]);
    for (flag, value) in &query.filters {
        // One word: a value that starts with '-' is the value, never a flag.
        args.push(format!("--{flag}={value}"));
    }
    args.push("--page".into());
    args.push(query.page.to_string());
    if json {
        args.push("--json".into());
    }
    args
}

/// The runs page: the filter form, a table to pick runs from, and the text `iomatrix runs` prints.
pub fn runs(answers: &dyn Answers, query: &RunsQuery) -> Page {
    let text_args = runs_args(query, false);
    let text = answered(answers.command(&text_args))?;
    let doc: serde_json::Value = serde_json::from_str(&answered(answers.command(&runs_args(query, true)))?)
        .map_err(|e| Refusal::new(500, format!("`iomatrix runs --json` printed what is not JSON: {e}")))?;
    let listed = doc["runs"].as_array().cloned().unwrap_or_default();
    let mut body = filter_form(query);
    body += &pick_table(&listed);
    body += &pager(query, &doc, listed.len());
    body += "<details open><summary>As the terminal prints it</summary>\n";
    body += &pre("runs", &text);
    body += "</details>\n";
    Ok(page(&Frame { title: "Runs", commands: vec![shown(answers, &text_args)], downloads: None }, &body))
}

fn filter_form(query: &RunsQuery) -> String {
    let value = |key: &str| query.filters.iter().find(|(k, _)| *k == key).map(|(_, v)| escape(v)).unwrap_or_default();
    let labels: Vec<&str> = query.filters.iter().filter(|(k, _)| *k == "label").map(|(_, v)| v.as_str()).collect();
    let mut form = String::from("<form id=\"filter\" method=\"get\" action=\"/runs\">");
    for (key, hint) in [
        ("search", "text anywhere"),
        ("suite", "a suite's name"),
        ("target", "part of the target"),
        ("host", "host"),
        ("fs", "ext4"),
        ("state", "complete"),
        ("since", "2026-12-01"),
        ("until", "2026-12-31"),
    ] {
        form += &format!(
            "<label>{key} <input name=\"{key}\" id=\"filter-{key}\" value=\"{}\" placeholder=\"{hint}\" size=\"12\"/></label>",
            value(key)
        );
    }
    form += &format!(
        "<label>label <input name=\"label\" id=\"filter-label\" value=\"{}\" placeholder=\"key=value\" size=\"14\"/></label>",
        escape(labels.first().copied().unwrap_or_default())
    );
    for more in labels.iter().skip(1) {
        form += &format!("<input type=\"hidden\" name=\"label\" value=\"{}\"/>", escape(more));
    }
    form + "<button id=\"apply\" type=\"submit\">filter</button> <a href=\"/runs\">clear</a></form>\n"
}

/// A stored label as `key=value`, whichever way the JSON holds it.
fn label_text(label: &serde_json::Value) -> String {
    match label {
        serde_json::Value::Array(kv) if kv.len() == 2 => {
            format!("{}={}", kv[0].as_str().unwrap_or_default(), kv[1].as_str().unwrap_or_default())
        }
        serde_json::Value::Object(o) => format!(
            "{}={}",
            o.get("key").and_then(|v| v.as_str()).unwrap_or_default(),
            o.get("value").and_then(|v| v.as_str()).unwrap_or_default()
        ),
        other => other.as_str().unwrap_or_default().to_string(),
    }
}

fn pick_table(listed: &[serde_json::Value]) -> String {
    let mut table = String::from(
        "<form id=\"pick\" method=\"get\" action=\"/compare\"><table id=\"runs\"><thead><tr><th>pick</th>\
         <th>baseline</th><th>run</th><th>started (UTC)</th><th>suite</th><th>status</th><th>cells</th><th>host</th>\
         <th>labels</th></tr></thead><tbody>\n",
    );
    for run in listed {
        let id = run["id"].as_i64().unwrap_or_default();
        let status = run["status"].as_str().unwrap_or_default();
        let labels: String = run["labels"]
            .as_array()
            .map(|l| l.iter().map(|l| format!("<span class=\"label\">{}</span>", escape(&label_text(l)))).collect())
            .unwrap_or_default();
        table += &format!(
            "<tr class=\"run state-{status_class}\" data-run=\"{id}\"><td><input type=\"checkbox\" class=\"pick\" \
             name=\"side\" value=\"{id}\" id=\"pick-{id}\"/></td><td><input type=\"radio\" name=\"baseline\" \
             value=\"{id}\"/></td><td><a href=\"/run/{id}\">#{id}</a></td><td>{started}</td><td>{suite}</td>\
             <td>{status}</td><td>{cells}/{total}</td><td>{host}</td><td>{labels}</td></tr>\n",
            status_class = escape(status),
            started = escape(run["started_at"].as_str().unwrap_or_default()),
            suite = escape(run["suite"].as_str().unwrap_or_default()),
            status = escape(status),
            cells = run["cells"].as_u64().unwrap_or_default(),
            total = run["total_cells"].as_u64().unwrap_or_default(),
            host = escape(run["host"].as_str().unwrap_or_default()),
        );
    }
    if listed.is_empty() {
        table += "<tr><td colspan=\"9\">no run matches these filters</td></tr>\n";
    }
    table += "</tbody></table><p>Sides besides the picked runs: a label group (<code>server=a</code>, every run \
              labelled so: medians) or repeats (<code>3,4,5</code>): <input name=\"side\" id=\"side-more-1\" size=\"16\"/> \
              <input name=\"side\" id=\"side-more-2\" size=\"16\"/></p>";
    table += "<p><button id=\"compare-picked\" type=\"submit\">compare the picked runs</button> \
              (the baseline is the run marked, else the first picked). A report of them, as <code>iomatrix report \
              -o</code> writes it:";
    for ext in ["html", "xlsx", "csv", "md", "json"] {
        table += &format!(
            " <button class=\"download\" type=\"submit\" formaction=\"/download/report.{ext}\">.{ext}</button>"
        );
    }
    table + "</p></form>\n"
}

fn pager(query: &RunsQuery, doc: &serde_json::Value, shown_here: usize) -> String {
    let base: String = query.filters.iter().map(|(k, v)| format!("{k}={}&", query_value(v))).collect();
    let total = doc["total"].as_u64();
    let mut links = String::from("<p class=\"pager\">");
    if query.page > 1 {
        links += &format!("<a id=\"page-prev\" href=\"/runs?{}page={}\">newer</a>", escape(&base), query.page - 1);
    }
    let more = total.map_or(shown_here > 0, |t| query.page * (shown_here.max(1) as u64) < t);
    if more && shown_here > 0 {
        links += &format!("<a id=\"page-next\" href=\"/runs?{}page={}\">older</a>", escape(&base), query.page + 1);
    }
    links + "</p>\n"
}

/// A run: what `iomatrix show` prints, its charts (the report's), its figures over time, and how
/// to repeat it.
pub fn run(answers: &dyn Answers, id: i64) -> Page {
    let args = vec!["show".to_string(), id.to_string()];
    let text = answered(answers.command(&args))?;
    // As `show` does, every cell is shown, marked: partial and disturbed ones too.
    let sides = format!("side={id}&partial=1&disturbed=1");
    let running = answers.live(id).is_ok_and(|s| !s.ended);
    let mut body = String::new();
    body += &format!(
        "<p><a id=\"history-link\" href=\"/history/{id}\">this figure over time (history)</a>{live}</p>\n",
        live = if running {
            format!(" · <a id=\"live-link\" href=\"/live/{id}\">follow it live</a>")
        } else {
            String::new()
        }
    );
    body += &pre("show", &text);
    body += &format!("<h2>Figures over time</h2><div class=\"chart series-chart\" data-run=\"{id}\"></div>\n");
    body += &format!(
        "<h2>Charts (the HTML report)</h2><iframe class=\"report\" sandbox=\"\" src=\"/embed/report.html?{sides}\" \
         title=\"iomatrix report {id}\"></iframe>\n"
    );
    let commands = vec![shown(answers, &args), shown(answers, &words(&["rerun", &id.to_string()]))];
    Ok(page(&Frame { title: &format!("Run #{id}"), commands, downloads: Some(sides) }, &body))
}

/// `compare`'s words for the query.
pub fn compare_args(query: &CompareQuery) -> Vec<String> {
    let mut args = words(&["compare"]);
    args.extend(query.words());
    args
}

/// The sides, baseline and inclusions as the downloads' and the report's query.
pub fn sides_query(query: &CompareQuery) -> String {
    let mut q: Vec<String> = query.sides.iter().map(|s| format!("side={}", query_value(s))).collect();
    if let Some(b) = &query.baseline {
        q.push(format!("baseline={}", query_value(b)));
    }
    if query.include_partial {
        q.push("partial=1".into());
    }
    if query.include_disturbed {
        q.push("disturbed=1".into());
    }
    q.join("&")
}

/// The compare page's switches: take partial or disturbed cells in, as the flags do.
fn inclusions(query: &CompareQuery) -> String {
    let mut form = String::from("<form id=\"include\" method=\"get\" action=\"/compare\">");
    for side in &query.sides {
        form += &format!("<input type=\"hidden\" name=\"side\" value=\"{}\"/>", escape(side));
    }
    if let Some(b) = &query.baseline {
        form += &format!("<input type=\"hidden\" name=\"baseline\" value=\"{}\"/>", escape(b));
    }
    for (key, on, words) in [
        ("partial", query.include_partial, "take partial cells in (--include-partial)"),
        ("disturbed", query.include_disturbed, "take disturbed cells in (--include-disturbed)"),
    ] {
        let checked = if on { " checked" } else { "" };
        form += &format!("<label><input type=\"checkbox\" name=\"{key}\" value=\"1\"{checked}/> {words}</label> ");
    }
    form + "<label>another side <input name=\"side\" id=\"side-add\" size=\"16\" placeholder=\"server=a or 3,4,5\"/></label> \
            <button id=\"include-apply\" type=\"submit\">apply</button></form>\n"
}

/// N sides against a baseline: what `iomatrix compare` prints, and the report's charts.
pub fn compare(answers: &dyn Answers, query: &CompareQuery) -> Page {
    if query.sides.len() < 2 {
        return Err(Refusal::new(400, "pick two runs or more to compare (the runs page's pick boxes)"));
    }
    let args = compare_args(query);
    let text = answered(answers.command(&args))?;
    let sides = sides_query(query);
    let body = inclusions(query)
        + &pre("compare", &text)
        + &format!(
            "<h2>Charts (the HTML report)</h2><iframe class=\"report\" sandbox=\"\" src=\"/embed/report.html?{}\" \
             title=\"iomatrix report\"></iframe>\n",
            escape(&sides)
        );
    let mut report_args = words(&["report"]);
    report_args.extend(query.words());
    report_args.extend(words(&["-o", "report.html"]));
    let commands = vec![shown(answers, &args), shown(answers, &report_args)];
    Ok(page(&Frame { title: "Compare", commands, downloads: Some(sides) }, &body))
}

/// One figure of a run's plan over time: what `iomatrix history` prints, and its chart.
pub fn history(answers: &dyn Answers, run: i64, figure: Option<&str>) -> Page {
    let mut args = vec!["history".to_string(), run.to_string()];
    if let Some(f) = figure {
        args.extend(["--figure".to_string(), f.to_string()]);
    }
    // The text and the chart (the report layer's SVG) from one computation; the command alone
    // where there is none, for its words on what failed.
    let (text, chart) = match answers.charted(&args) {
        Some(both) => both,
        None => (answered(answers.command(&args))?, String::new()),
    };
    let body = format!(
        "<form id=\"figure\" method=\"get\" action=\"/history/{run}\"><label>figure <input name=\"figure\" \
         value=\"{}\" size=\"24\" placeholder=\"as --figure takes it\"/></label> <button type=\"submit\">show</button> \
         (the text below lists the others)</form>\n<div class=\"chart\">{chart}</div>\n",
        escape(figure.unwrap_or_default())
    ) + &pre("history", &text);
    Ok(page(
        &Frame {
            title: &format!("History of run #{run}'s figure"),
            commands: vec![shown(answers, &args)],
            downloads: Some(format!("side={run}&partial=1&disturbed=1")),
        },
        &body,
    ))
}

/// A running run's page: its state, live line and cells, then followed by server-sent events.
pub fn live(answers: &dyn Answers, run: i64, snapshot: &crate::live::Snapshot) -> Page {
    let args = vec!["watch".to_string(), run.to_string()];
    let follow = if snapshot.ended { "no" } else { "yes" };
    let body = format!(
        "<p>State: <span id=\"live-state\" data-run=\"{run}\" data-follow=\"{follow}\">{state}</span></p>\n\
         <p>Live: <span id=\"live-line\">{line}</span></p>\n{cells}\
         <p id=\"live-ended\"{hidden}><a href=\"/run/{run}\">the run's page</a></p>\n",
        state = escape(&snapshot.state),
        line = escape(&snapshot.line),
        cells = pre("live-cells", &snapshot.cells),
        hidden = if snapshot.ended { "" } else { " hidden" },
    );
    Ok(page(
        &Frame {
            title: &format!("Run #{run}, live"),
            commands: vec![shown(answers, &args)],
            downloads: Some(format!("side={run}&partial=1&disturbed=1")),
        },
        &body,
    ))
}

/// The page for a refusal: the status, the words, and the way back.
pub fn refused(refusal: &Refusal) -> String {
    let body = format!(
        "<div class=\"error\" id=\"error\"><p><b>{status}</b></p><pre id=\"error-text\">{why}</pre></div>\n\
         <p><a href=\"/runs\">back to the runs</a></p>\n",
        status = refusal.status,
        why = escape(&refusal.why)
    );
    page(&Frame { title: "Not shown", commands: Vec::new(), downloads: None }, &body)
}
