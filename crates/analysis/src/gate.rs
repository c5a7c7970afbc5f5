//! `--fail-if-slower`: one gate over a family of figures that knows its error rate.
//!
//! "Slower" is one direction, so each figure's test is the one-sided Mann-Whitney rank test
//! ([`worse_p`]); over the k figures of the family Holm's step-down correction holds the chance
//! that any same-setup figure trips the gate to 5% (family-wise). A figure trips it when Holm
//! rejects "B is not worse" for it and its median moved the worse way by more than the
//! threshold. Before that, the gate asks whether each figure could trip it: the smallest
//! one-sided p its samples can give (1/C(n+m, n)) must reach Holm's first level (alpha/k), and
//! the change its samples can detect (see [`detectable_at`]) must not exceed the threshold. A
//! figure that fails either is "not checked", with the repeats a side it needs.

use crate::noise::{detectable_at, is_exact, min_worse_p, relative_pooled_sd, worse_p, POWER};
use crate::BadFlag;
use serde::Serialize;

/// The family-wise error rate the gate holds: 5%.
pub const FAMILY_ALPHA: f64 = 0.05;

/// The most repeats a side the gate names; beyond, it says "more than".
const MOST_REPEATS: usize = 1000;

/// One figure the gate could hold to its threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The figure's name as the tables print it ("write 64m/4k", "read read p99").
    pub name: String,
    /// Its unit ("KB/s", "ops/s", "ms").
    pub unit: &'static str,
    /// The operation figure it is ("rate", "p50", "p99", "mean", "max"), "" for a cell's figure.
    pub figure: &'static str,
    /// Rates: true; times: false.
    pub higher_is_better: bool,
    /// A's and B's samples, or why there are none to compare.
    pub samples: Result<(Vec<f64>, Vec<f64>), String>,
    /// A cell's request size in bytes where its KB/s counts requests of one size (an access
    /// cell's block, an IOzone cell's record): its IOPS are its KB/s times 1024 over it.
    pub request_bytes: Option<u64>,
}

impl Candidate {
    /// A cell's KB/s samples as requests per second: KB/s times 1024 over the request size. The
    /// same ranks and the same % change; the unit the tables and the gate's lines print.
    pub(crate) fn as_iops(&mut self) {
        let Some(bytes) = self.request_bytes.filter(|b| *b > 0) else { return };
        let per_second = |v: &mut Vec<f64>| v.iter_mut().for_each(|x| *x = *x * 1024.0 / bytes as f64);
        if let Ok((a, b)) = &mut self.samples {
            per_second(a);
            per_second(b);
        }
        self.unit = "IOPS";
    }
}

/// Which figures `--metric` asks the gate about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Family {
    /// No `--metric`: the headline figures, every rate where higher is better.
    Headline,
    /// `--metric KB/s`: the figures in that unit.
    Unit(String),
    /// `--metric IOPS`: the cells whose KB/s counts requests of one size, as requests per second.
    Iops,
    /// `--metric p99`: the latency figures at that percentile.
    Percentile(String),
    /// `--metric read`: the figures whose name contains it.
    Named(String),
}

impl Family {
    /// `--metric` read against the figures there are: a unit (any case), a percentile, else part
    /// of a figure's name. One that names nothing is refused, naming what there is.
    pub fn choose(metric: Option<&str>, candidates: &[Candidate]) -> Result<Family, BadFlag> {
        let Some(m) = metric.map(str::trim) else { return Ok(Family::Headline) };
        if let Some(c) = candidates.iter().find(|c| c.unit.eq_ignore_ascii_case(m)) {
            return Ok(Family::Unit(c.unit.to_string()));
        }
        if m.eq_ignore_ascii_case("IOPS") {
            if candidates.iter().any(|c| c.request_bytes.is_some()) {
                return Ok(Family::Iops);
            }
            return Err(unknown(m, "no compared cell counts requests of one size", candidates));
        }
        if is_percentile(m) {
            let p = m.to_ascii_lowercase();
            if candidates.iter().any(|c| c.figure == p) {
                return Ok(Family::Percentile(p));
            }
            return Err(unknown(m, "no compared figure is at that percentile", candidates));
        }
        if candidates.iter().any(|c| c.name.contains(m)) {
            return Ok(Family::Named(m.to_string()));
        }
        Err(unknown(m, "no compared figure has that unit or that in its name", candidates))
    }

    pub(crate) fn takes(&self, c: &Candidate) -> bool {
        match self {
            Family::Headline => c.higher_is_better,
            Family::Unit(u) => c.unit == u,
            Family::Iops => c.request_bytes.is_some(),
            Family::Percentile(p) => c.figure == p,
            Family::Named(n) => c.name.contains(n.as_str()),
        }
    }

    /// "headline rates (KB/s, ops/s)", "unit KB/s", "percentile p99", "named \"read\"".
    fn describe(&self, units: &[&str]) -> String {
        match self {
            Family::Headline => format!("headline rates ({})", units.join(", ")),
            Family::Unit(u) => format!("unit {u}"),
            Family::Iops => "unit IOPS".to_string(),
            Family::Percentile(p) => format!("latency {p}"),
            Family::Named(n) => format!("named \"{n}\""),
        }
    }
}

/// p50, p99, P99.9.
fn is_percentile(m: &str) -> bool {
    let Some(rest) = m.strip_prefix(['p', 'P']) else { return false };
    !rest.is_empty() && rest.parse::<f64>().is_ok_and(|v| v > 0.0 && v < 100.0) && !rest.starts_with(['+', '-'])
}

fn unknown(metric: &str, why: &str, candidates: &[Candidate]) -> BadFlag {
    let mut units: Vec<&str> = candidates.iter().map(|c| c.unit).filter(|u| !u.is_empty()).collect();
    units.sort_unstable();
    units.dedup();
    let mut percentiles: Vec<&str> = candidates.iter().map(|c| c.figure).filter(|f| is_percentile(f)).collect();
    percentiles.sort_unstable();
    percentiles.dedup();
    let names: Vec<&str> = candidates.iter().take(3).map(|c| c.name.as_str()).collect();
    let or_none = |v: &[&str]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    BadFlag(format!(
        "--metric {metric}: {why}; give a unit ({}), a percentile ({}) or part of a figure's name as the tables \
         print it ({})",
        or_none(&units),
        or_none(&percentiles),
        or_none(&names)
    ))
}

/// A figure of B slower than A's beyond the threshold and the noise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regression {
    /// The figure's name ("write 64m/4k", a metric or an operation's figure).
    pub cell: String,
    /// The figure's unit.
    pub unit: &'static str,
    /// A's median.
    pub a: f64,
    /// B's median.
    pub b: f64,
    /// B against A: (B - A) / A, in %.
    pub change_pct: f64,
    /// The one-sided rank test's p-value.
    pub p_value: f64,
}

/// What the gate did with one figure of its family.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The figure's name.
    pub figure: String,
    /// Its unit.
    pub unit: &'static str,
    /// "slower", "not slower" or "not checked".
    pub verdict: &'static str,
    /// A's samples.
    pub a_samples: usize,
    /// B's samples.
    pub b_samples: usize,
    /// The one-sided p-value that B is worse; None where there were no samples to test.
    pub p_value: Option<f64>,
    /// B against A (medians), in %.
    pub change_pct: Option<f64>,
    /// The smallest change its samples could have detected, in %; None where unknown (a side
    /// has fewer than two samples).
    pub detectable_change_pct: Option<f64>,
}

/// What `--fail-if-slower` found: the figures of B slower than A's beyond the threshold and the
/// noise, how many figures it could hold to the threshold, and those it was asked about but could
/// not (not in B, left out as not whole, too few samples to reach the corrected level or to
/// detect the threshold). A gate that checked nothing, or not all it was asked, must say so: it
/// never passes on what it did not check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    /// The figures slower beyond the threshold.
    pub slower: Vec<Regression>,
    /// How many figures were held to the threshold.
    pub checked: usize,
    /// The figures asked about that could not be checked, each with why.
    pub not_checked: Vec<String>,
    /// The family: how many figures it holds to the threshold together (k).
    pub figures: usize,
    /// Which figures: "headline rates (KB/s, ops/s)", "unit KB/s", "latency p99", "named ...".
    pub family: String,
    /// "one-sided Mann-Whitney, exact".
    pub test: &'static str,
    /// "Holm, 5% family-wise".
    pub correction: String,
    /// The largest of the figures' detectable changes, in %; None where none is known.
    pub detectable_change_pct: Option<f64>,
    /// How it is worked out, in words.
    pub detectable_method: String,
    /// Repeats a side that would let every figure asked about be checked, where some could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats_needed: Option<usize>,
    /// Each figure of the family, in the tables' order.
    pub checks: Vec<Check>,
}

impl Gate {
    /// "slower" (a figure beyond the threshold), "not checked" (none slower, but a figure asked
    /// about could not be held to it, or none was), or "passed" (every figure asked about
    /// checked, none slower): the JSON's outcome, the exit code's and the text's.
    pub fn outcome(&self) -> &'static str {
        if !self.slower.is_empty() {
            "slower"
        } else if !self.not_checked.is_empty() || self.checked == 0 {
            "not checked"
        } else {
            "passed"
        }
    }

    /// A gate over no figure: the metric named none on this pair of sides.
    pub fn over_nothing(why: String) -> Gate {
        hold_family(Vec::new(), "none".to_string(), 0.0, FAMILY_ALPHA).with_not_checked(why)
    }

    fn with_not_checked(mut self, why: String) -> Gate {
        self.not_checked.push(why);
        self
    }
}

/// Holds the figures `metric` picks out of `candidates` to `threshold` (0.05: 5%) at the
/// family-wise level `alpha`.
pub fn hold(candidates: Vec<Candidate>, metric: Option<&str>, threshold: f64, alpha: f64) -> Result<Gate, BadFlag> {
    let family = Family::choose(metric, &candidates)?;
    let mut chosen: Vec<Candidate> = candidates.into_iter().filter(|c| family.takes(c)).collect();
    if family == Family::Iops {
        chosen.iter_mut().for_each(Candidate::as_iops);
    }
    let mut units: Vec<&str> = chosen.iter().map(|c| c.unit).filter(|u| !u.is_empty()).collect();
    units.dedup();
    units.sort_unstable();
    units.dedup();
    Ok(hold_family(chosen, family.describe(&units), threshold, alpha))
}

/// One figure's numbers before Holm's step.
struct Tested {
    index: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    p: f64,
    /// The change the worse way, as a fraction of A's median (0.2: 20% slower).
    worse_by: f64,
    detectable: f64,
    sd: f64,
}

/// The gate over a chosen family (see the module's words).
pub fn hold_family(family: Vec<Candidate>, described: String, threshold: f64, alpha: f64) -> Gate {
    let k = family.iter().filter(|c| c.samples.is_ok()).count();
    let first_level = alpha / k.max(1) as f64;
    let tested: Vec<Tested> = family
        .iter()
        .enumerate()
        .filter_map(|(index, c)| c.samples.as_ref().ok().map(|(a, b)| test_one(index, c, a, b, first_level)))
        .collect();
    let rejected = holm(&tested.iter().map(|t| t.p).collect::<Vec<_>>(), alpha);
    let mut gate = Gate {
        slower: Vec::new(),
        checked: 0,
        not_checked: Vec::new(),
        figures: k,
        family: described,
        test: test_name(&tested),
        correction: format!("Holm, {}% family-wise", alpha * 100.0),
        detectable_change_pct: None,
        detectable_method: format!(
            "the smallest change found with {}% power by a one-sided test at Holm's first level ({alpha}/{k} = {}), \
             normal approximation from the pooled standard deviation",
            POWER * 100.0,
            human_p(first_level)
        ),
        repeats_needed: None,
        checks: Vec::new(),
    };
    let mut tested = tested.into_iter().zip(rejected).peekable();
    for (index, c) in family.iter().enumerate() {
        match tested.next_if(|(t, _)| t.index == index) {
            Some((t, rejected)) => judge_one(&mut gate, c, &t, rejected, (threshold, first_level)),
            None => {
                let why = c.samples.as_ref().err().cloned().unwrap_or_default();
                gate.not_checked.push(format!("{} ({why})", c.name));
                gate.checks.push(Check {
                    figure: c.name.clone(),
                    unit: c.unit,
                    verdict: "not checked",
                    a_samples: 0,
                    b_samples: 0,
                    p_value: None,
                    change_pct: None,
                    detectable_change_pct: None,
                });
            }
        }
    }
    gate
}

fn test_one(index: usize, c: &Candidate, a: &[f64], b: &[f64], first_level: f64) -> Tested {
    let a: Vec<f64> = a.iter().copied().filter(|v| v.is_finite()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|v| v.is_finite()).collect();
    let (ma, mb) = (crate::median(&a), crate::median(&b));
    let moved = if ma > 0.0 { (mb - ma) / ma } else { 0.0 };
    let worse_by = if c.higher_is_better { -moved } else { moved };
    let sd = relative_pooled_sd(&a, &b);
    let detectable = if sd.is_finite() { detectable_at(sd, a.len(), b.len(), first_level) } else { f64::INFINITY };
    let p = worse_p(&a, &b, c.higher_is_better);
    Tested { index, a, b, p, worse_by, detectable, sd }
}

/// Holm's step-down: the p-values in ascending order against alpha/k, alpha/(k-1), ... until
/// the first that is above its level; those before it are rejected.
pub fn holm(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let k = p_values.len();
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by(|x, y| p_values[*x].total_cmp(&p_values[*y]));
    let mut rejected = vec![false; k];
    for (step, &i) in order.iter().enumerate() {
        if p_values[i] > alpha / (k - step) as f64 {
            break;
        }
        rejected[i] = true;
    }
    rejected
}

fn judge_one(gate: &mut Gate, c: &Candidate, t: &Tested, rejected: bool, (threshold, first_level): (f64, f64)) {
    let (ma, mb) = (crate::median(&t.a), crate::median(&t.b));
    let pct = |f: f64| f * 100.0;
    let cannot_reach = min_worse_p(t.a.len(), t.b.len()) > first_level;
    let verdict = if rejected && t.worse_by > threshold {
        gate.slower.push(Regression {
            cell: c.name.clone(),
            unit: c.unit,
            a: ma,
            b: mb,
            change_pct: crate::compare::change_pct(ma, mb),
            p_value: t.p,
        });
        "slower"
    } else if cannot_reach || t.detectable > threshold {
        let needed = repeats_needed(t, threshold, first_level);
        gate.repeats_needed = gate.repeats_needed.max(Some(needed));
        let why = refusal(t, threshold, first_level);
        // Without a spread to go by, the repeats reach the corrected level; the spread may ask more.
        let at_least = if t.sd.is_finite() { "" } else { "at least " };
        gate.not_checked.push(format!("{} ({why}; needs {at_least}{} a side)", c.name, repeats_words(needed)));
        "not checked"
    } else {
        "not slower"
    };
    if verdict != "not checked" {
        gate.checked += 1;
    }
    if t.detectable.is_finite() {
        let d = pct(t.detectable);
        gate.detectable_change_pct = Some(gate.detectable_change_pct.map_or(d, |g| g.max(d)));
    }
    gate.checks.push(Check {
        figure: c.name.clone(),
        unit: c.unit,
        verdict,
        a_samples: t.a.len(),
        b_samples: t.b.len(),
        p_value: Some(t.p),
        change_pct: Some(crate::compare::change_pct(ma, mb)),
        detectable_change_pct: t.detectable.is_finite().then(|| pct(t.detectable)),
    });
}

/// Why a figure cannot be held to the threshold: too few samples to reach Holm's first level,
/// a spread that hides a change of the threshold's size, or both.
fn refusal(t: &Tested, threshold: f64, first_level: f64) -> String {
    let (n, m) = (t.a.len(), t.b.len());
    let mut why = Vec::new();
    if min_worse_p(n, m) > first_level {
        why.push(format!(
            "too few samples: {n} vs {m}: the one-sided test's smallest p, {}, is above Holm's first level {}",
            human_p(min_worse_p(n, m)),
            human_p(first_level)
        ));
    }
    let asked = human_pct(threshold * 100.0);
    if t.detectable.is_infinite() && why.is_empty() {
        why.push(format!("not enough samples to detect {asked}% (no spread to go by)"));
    } else if t.detectable.is_finite() && t.detectable > threshold {
        why.push(format!("not enough samples to detect {asked}% (detectable: {}%)", human_pct(t.detectable * 100.0)));
    }
    why.join("; ")
}

/// Samples a side (at least what each side has) with which the figure could trip the gate and
/// its detectable change would be within the threshold, at the same spread.
fn repeats_needed(t: &Tested, threshold: f64, first_level: f64) -> usize {
    let have = t.a.len().max(t.b.len()).max(2);
    let reach = (have..=MOST_REPEATS).find(|r| min_worse_p(*r, *r) <= first_level).unwrap_or(MOST_REPEATS + 1);
    if !t.sd.is_finite() {
        return reach;
    }
    // The detectable change at r a side is its value at one a side over sqrt(r).
    let at_one = detectable_at(t.sd, 1, 1, first_level);
    let detect = if threshold > 0.0 { (at_one / threshold).powi(2) } else { f64::INFINITY };
    let detect = if detect.is_finite() && detect <= MOST_REPEATS as f64 {
        (detect - 1e-9).ceil() as usize
    } else if at_one == 0.0 {
        0
    } else {
        MOST_REPEATS + 1
    };
    reach.max(detect)
}

/// "9 repeats", "more than 1000 repeats".
pub fn repeats_words(needed: usize) -> String {
    if needed > MOST_REPEATS {
        format!("more than {MOST_REPEATS} repeats")
    } else {
        format!("{needed} repeats")
    }
}

/// 5, 0.5, 18.25: a percentage with no more digits than it needs (two decimals at most).
pub fn human_pct(v: f64) -> String {
    let rounded = format!("{v:.2}");
    if rounded.contains('.') {
        rounded.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        rounded
    }
}

fn test_name(tested: &[Tested]) -> &'static str {
    let exact = tested.iter().filter(|t| is_exact(t.a.len(), t.b.len())).count();
    match exact {
        e if e == tested.len() => "one-sided Mann-Whitney, exact",
        0 => "one-sided Mann-Whitney, normal approximation (over 40 samples)",
        _ => "one-sided Mann-Whitney, exact up to 40 samples, normal approximation above",
    }
}

/// A p-value or level to three significant digits: 0.00397, 0.05.
fn human_p(p: f64) -> String {
    let decimals = (2.0 - p.log10().floor()).clamp(0.0, 12.0) as usize;
    let text = format!("{p:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gate's settings in the error-rate trials: `--fail-if-slower 10%`, 5% family-wise.
    /// 10% sits above the change 10 samples a side at 5% standard deviation can detect over 8
    /// figures (7.6%, see [`detectable_at`]), so the gate can hold it.
    const THRESHOLD: f64 = 0.10;
    /// "10% spread" as the tables' spread column means it (the sample furthest from the median,
    /// in % of the median): normal samples with a 5% standard deviation read about 10% there at
    /// 10 samples; the trials check that they do.
    const SD: f64 = 0.05;

    /// Seeded draws: the trials repeat exactly.
    struct Rng(iomatrix_random::Generator);
    impl Rng {
        fn normal(&mut self, mu: f64, sd: f64) -> f64 {
            let (u, v) = (self.0.unit(), self.0.unit());
            mu + sd * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
        fn samples(&mut self, k: usize, mu: f64) -> Vec<f64> {
            (0..k).map(|_| self.normal(mu, mu * SD)).collect()
        }
    }

    /// 8 headline figures, `k` samples a side, B's centre `factor` times A's.
    fn figures(rng: &mut Rng, k: usize, factor: f64) -> Vec<Candidate> {
        (0..8)
            .map(|i| {
                let mu = 1000.0 * f64::from(i + 1);
                Candidate {
                    name: format!("figure {i}"),
                    unit: "KB/s",
                    figure: "",
                    higher_is_better: true,
                    samples: Ok((rng.samples(k, mu), rng.samples(k, mu * factor))),
                    request_bytes: None,
                }
            })
            .collect()
    }

    /// 1,000 gates of 8 figures, 10 samples a side: (outcomes, mean spread column in %).
    fn trials(seed: u64, factor: f64, threshold: f64) -> (Vec<Gate>, f64) {
        let mut rng = Rng(iomatrix_random::Generator::seeded(seed));
        let mut spread = 0.0;
        let gates: Vec<Gate> = (0..1000)
            .map(|_| {
                let family = figures(&mut rng, 10, factor);
                if let Ok((a, _)) = &family[0].samples {
                    spread += crate::CellStats::of(a.clone(), "KB/s").spread_pct;
                }
                hold(family, None, threshold, FAMILY_ALPHA).unwrap()
            })
            .collect();
        (gates, spread / 1000.0)
    }

    fn count(gates: &[Gate], outcome: &str) -> usize {
        gates.iter().filter(|g| g.outcome() == outcome).count()
    }

    #[test]
    fn one_distribution_against_itself_trips_the_gate_at_most_65_times_in_1000() {
        let (gates, spread) = trials(50, 1.0, THRESHOLD);
        let tripped = count(&gates, "slower");
        println!("tripped {tripped}, not checked {}, spread {spread:.1}%", count(&gates, "not checked"));
        assert!((8.0..12.0).contains(&spread), "the samples' spread column reads {spread:.1}%, not about 10%");
        assert!(tripped <= 65, "{tripped} of 1000 same-setup gates tripped");
        assert_eq!(gates[0].figures, 8);
        assert_eq!(gates[0].test, "one-sided Mann-Whitney, exact");
        assert_eq!(gates[0].correction, "Holm, 5% family-wise");
        // Holm's level itself, without the threshold's help: at 0% only the rank test stands
        // between noise and a trip, and it holds the family-wise 5% (seeded: the count is exact).
        let (gates, _) = trials(51, 1.0, 0.0);
        let tripped = count(&gates, "slower");
        println!("threshold 0%: tripped {tripped}");
        assert!((10..=65).contains(&tripped), "{tripped} of 1000 at 0%: the test should trip about 50 times");
    }

    #[test]
    fn every_figure_20_percent_slower_trips_the_gate_at_least_950_times_in_1000() {
        let (gates, _) = trials(52, 0.8, THRESHOLD);
        let tripped = count(&gates, "slower");
        let worst = gates.iter().filter_map(|g| g.detectable_change_pct).fold(0.0, f64::max);
        println!("tripped {tripped}; largest detectable change {worst:.1}%");
        assert!(tripped >= 950, "{tripped} of 1000 gates found a 20% slowdown");
        // The detectable-change rule never stood in the way of a 20% slowdown.
        assert!(worst < 20.0, "detectable change up to {worst:.1}%");
    }

    #[test]
    fn five_samples_a_side_and_8_figures_are_not_checked_and_name_the_repeats_needed() {
        let mut rng = Rng(iomatrix_random::Generator::seeded(53));
        // 1/C(10, 5) = 0.00397 is below Holm's first level 0.05/8 = 0.00625 one-sided, so the
        // test could reach it; but 5 samples at this spread cannot detect 10% (about 11%).
        let gate = hold(figures(&mut rng, 5, 1.0), None, THRESHOLD, FAMILY_ALPHA).unwrap();
        assert_eq!(gate.outcome(), "not checked", "{gate:?}");
        let needed = gate.repeats_needed.expect("the repeats a side it needs");
        assert!((6..=12).contains(&needed), "{needed}");
        assert!(gate.not_checked.iter().any(|n| n.contains("not enough samples to detect 10%")), "{gate:?}");
        assert!(gate.not_checked.iter().any(|n| n.ends_with(&format!("needs {needed} repeats a side)"))), "{gate:?}");
        // 4 samples a side cannot reach 0.00625 at all (1/70 = 0.0143).
        let gate = hold(figures(&mut rng, 4, 1.0), None, THRESHOLD, FAMILY_ALPHA).unwrap();
        assert_eq!((gate.outcome(), gate.checked), ("not checked", 0));
        assert!(gate.not_checked[0].contains("too few samples: 4 vs 4"), "{}", gate.not_checked[0]);
        assert!(gate.repeats_needed >= Some(5), "{gate:?}");
    }

    #[test]
    fn holm_steps_down_until_a_p_value_is_above_its_level() {
        // Levels 0.0125, 0.0167, 0.025, 0.05 in order of the p-values.
        assert_eq!(holm(&[0.01, 0.04, 0.016, 0.03], 0.05), [true, false, true, false]);
        assert_eq!(holm(&[0.03, 0.001], 0.05), [true, true]);
        assert_eq!(holm(&[0.06, 0.001], 0.05), [false, true]);
        assert_eq!(holm(&[0.03, 0.04], 0.05), [false, false]);
        assert!(holm(&[], 0.05).is_empty());
    }

    #[test]
    fn the_threshold_is_a_change_of_the_medians_beyond_the_noise() {
        let a = [100.0, 100.5, 101.0, 99.5, 100.2];
        let held = |b: Vec<f64>, higher_is_better, threshold| {
            let c = Candidate {
                name: "x".into(),
                unit: "KB/s",
                figure: "",
                higher_is_better,
                samples: Ok((a.to_vec(), b)),
                request_bytes: None,
            };
            hold_family(vec![c], String::new(), threshold, FAMILY_ALPHA).slower.len()
        };
        // B 3% slower, clearly: slower, but not by more than 5%.
        let b: Vec<f64> = a.iter().map(|v| v * 0.97).collect();
        assert_eq!(held(b.clone(), true, 0.05), 0);
        assert_eq!(held(b, true, 0.01), 1);
        // Times: higher is worse; lower is better, never slower.
        let t: Vec<f64> = a.iter().map(|v| v * 1.10).collect();
        assert_eq!(held(t, false, 0.05), 1);
        let t: Vec<f64> = a.iter().map(|v| v * 0.90).collect();
        assert_eq!(held(t, false, 0.05), 0);
    }

    #[test]
    fn metric_takes_a_unit_a_percentile_or_a_name_and_refuses_one_that_names_nothing() {
        let c = |name: &str, unit, figure, higher_is_better| Candidate {
            name: name.into(),
            unit,
            figure,
            higher_is_better,
            samples: Ok((vec![1.0, 2.0], vec![1.0, 2.0])),
            request_bytes: None,
        };
        let all = [
            c("read 8m/4k", "KB/s", "", true),
            c("read 8m/4k read rate", "ops/s", "rate", true),
            c("read 8m/4k read p99", "ms", "p99", false),
        ];
        assert_eq!(Family::choose(None, &all).unwrap(), Family::Headline);
        assert_eq!(Family::choose(Some("kb/s"), &all).unwrap(), Family::Unit("KB/s".into()));
        assert_eq!(Family::choose(Some("P99"), &all).unwrap(), Family::Percentile("p99".into()));
        assert_eq!(Family::choose(Some("read rate"), &all).unwrap(), Family::Named("read rate".into()));
        let refused = Family::choose(Some("IOPS"), &all).unwrap_err().0;
        assert!(refused.contains("a unit (KB/s, ms, ops/s), a percentile (p99)"), "{refused}");
        let refused = Family::choose(Some("p99.9"), &all).unwrap_err().0;
        assert!(refused.starts_with("--metric p99.9: no compared figure is at that percentile"), "{refused}");
        let gate = hold(all.to_vec(), None, 0.05, FAMILY_ALPHA).unwrap();
        assert_eq!((gate.figures, gate.family.as_str()), (2, "headline rates (KB/s, ops/s)"));
    }

    #[test]
    fn iops_are_the_kb_per_second_of_cells_of_one_request_size_as_requests() {
        // 4 KiB requests: 400 KB/s is 100 IOPS.
        let cell = |name: &str, request_bytes| Candidate {
            name: name.into(),
            unit: "KB/s",
            figure: "",
            higher_is_better: true,
            samples: Ok((vec![400.0; 3], vec![800.0; 3])),
            request_bytes,
        };
        let all = [cell("access 8m/4k qd=1", Some(4096)), cell("backup", None)];
        assert_eq!(Family::choose(Some("iops"), &all).unwrap(), Family::Iops);
        let gate = hold(all.to_vec(), Some("IOPS"), 0.05, FAMILY_ALPHA).unwrap();
        assert_eq!((gate.figures, gate.family.as_str()), (1, "unit IOPS"), "only the cell of one request size");
        let mut iops = all[0].clone();
        iops.as_iops();
        assert_eq!((iops.unit, iops.samples), ("IOPS", Ok((vec![100.0; 3], vec![200.0; 3]))));
        let refused = Family::choose(Some("IOPS"), &all[1..]).unwrap_err().0;
        assert!(refused.contains("no compared cell counts requests of one size"), "{refused}");
    }
}
