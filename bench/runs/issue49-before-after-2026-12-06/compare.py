#!/usr/bin/env python3
"""compare.py PREFIX...: the before/after table of the logs pairs.sh wrote (PREFIX-N-SIDE.log);
PREFIX1+PREFIX2 pools the pairs of two rounds into one table.

Reads every run line of each log (pread-vs-bare.sh: repeat, tool, IOPS ...; access-vs-fio.sh:
repeat, case, tool, figure, unit ...). Per log, per case: each tool's median figure over the
log's repeats, and the median of the per-repeat ratios iomatrix/OTHER. Per case and figure
(iomatrix's own figure, and each ratio): the median of the 5 (or N) before logs and of the after
logs, their ratio ("of medians"), and the median of the per-pair ratios after/before (pair N:
PREFIX-N-after over PREFIX-N-before) with the lowest and highest of them and the sign-test
confidence interval of that median. "within 3%" is judged on the paired median: yes when it lies
in 0.97-1.03 (the interval says whether the pairs could tell a 3% change from none). The bare loop's and fio's own figures are
shown as a control: the same programs ran on both sides, so their after/before is the machine's
drift between the sides."""
import glob, math, re, statistics, sys

PREAD = re.compile(r"^(\d+)\s+(iomatrix|fio|bare)\s+(\d+)\s+\S+\s+\S+\s+[\d.]+$")
TOOLS = ("iomatrix", "bare", "fio")
ACCESS = re.compile(r"^(\d+)\s+(.+?)\s+(iomatrix|fio)\s+(\d+)\s+(IOPS|MiB/s)\s")


def runs_of(path):
    """{case: {tool: {repeat: figure}}} and the units, from one log."""
    out, units = {}, {}
    for line in open(path):
        m = ACCESS.match(line)
        if m:
            rep, case, tool, fig, unit = m.groups()
            units[case] = unit
        else:
            m = PREAD.match(line)
            if not m:
                continue
            rep, tool, fig = m.groups()
            case = "psync qd1 4k randread, tmpfs"
            units[case] = "IOPS"
        out.setdefault(case, {}).setdefault(tool, {})[rep] = float(fig)
    return out, units


def figures(case_runs):
    """{figure name: value} of one log's case: iomatrix's median, and iomatrix/OTHER paired."""
    res = {tool: statistics.median(case_runs[tool].values()) for tool in TOOLS if tool in case_runs}
    for other in ("bare", "fio"):
        if other in case_runs:
            a, b = case_runs["iomatrix"], case_runs[other]
            res["iomatrix/" + other] = statistics.median(a[r] / b[r] for r in a if r in b)
    return res


def median_interval(values):
    """The sign-test confidence interval of the median, as bench/lib.sh's median_table gives it:
    (low, high, level), the k-th smallest and k-th largest value for the largest k whose level is
    still >= 95% (k = 1 below 6 values: the range, at the level it has)."""
    v, n = sorted(values), len(values)
    below = lambda k: sum(math.comb(n, i) for i in range(k)) / 2 ** n
    k = 1
    while k + 1 <= n // 2 and 1 - 2 * below(k + 1) >= 0.95:
        k += 1
    return v[k - 1], v[n - k], 1 - 2 * below(k)


def interval_percent(values):
    low, high, level = median_interval(values)
    return low, high, 100 * level


def verdict(name, paired):
    """Within 3%, for iomatrix's figures; the other tools' own figures are a control: they show
    how much the machine moved between the two sides (the same fio and bare loop ran in both)."""
    if name in ("bare", "fio"):
        return "(control)"
    return "yes" if 0.97 <= paired <= 1.03 else "no"


def main(prefixes):
    for prefix in prefixes:
        logs = {}
        for one in prefix.split("+"):
            for path in glob.glob(one + "-*-*.log"):
                m = re.search(r"-(\d+)-(before|after)\.log$", path)
                if m:
                    logs[("%s-%s" % (one, m.group(1)), m.group(2))] = runs_of(path)
        pairs = sorted({n for n, _ in logs if (n, "before") in logs and (n, "after") in logs})
        print("%s: %d pairs (%s)" % (prefix, len(pairs), ", ".join(map(str, pairs))))
        cases = []
        for n in pairs:
            for case in logs[(n, "before")][0]:
                if case not in cases:
                    cases.append(case)
        head = ("case", "figure", "before", "after", "after/before", "paired", "range", "interval", "within 3%")
        rows = []
        for case in cases:
            unit = logs[(pairs[0], "before")][1][case]
            per = {side: [figures(logs[(n, side)][0][case]) for n in pairs] for side in ("before", "after")}
            for name in per["before"][0]:
                b = [f[name] for f in per["before"]]
                a = [f[name] for f in per["after"]]
                ratios = [x / y for x, y in zip(a, b)]
                paired = statistics.median(ratios)
                fmt = "%.3f" if "/" in name else "%.0f"
                rows.append((case, name + ("" if "/" in name else " " + unit), fmt % statistics.median(b),
                             fmt % statistics.median(a), "%.3f" % (statistics.median(a) / statistics.median(b)),
                             "%.3f" % paired, "%.3f-%.3f" % (min(ratios), max(ratios)),
                             "%.3f-%.3f (%.0f%%)" % interval_percent(ratios),
                             verdict(name, paired)))
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
        for r in [head] + rows:
            print("  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(r)))
        print()


main(sys.argv[1:])
