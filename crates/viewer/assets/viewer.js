// iomatrix serve: the viewer's only script (the CSP allows 'self' only: no inline script).
// Two jobs: the live page follows its run by server-sent events, and a run's figures over time
// are drawn with uPlot (drag to zoom, hover for values, click a legend entry to hide a line).
// Every figure shown is one `iomatrix show --series` prints: ops/s and MiB/s per interval.
"use strict";

function followLive(state) {
  const run = state.dataset.run;
  const events = new EventSource("/events/" + run);
  events.onmessage = (message) => {
    const snapshot = JSON.parse(message.data);
    state.textContent = snapshot.state;
    document.getElementById("live-line").textContent = snapshot.line;
    document.getElementById("live-cells").textContent = snapshot.cells;
    if (snapshot.ended) {
      events.close();
      const link = document.getElementById("live-ended");
      if (link) { link.hidden = false; }
    }
  };
  events.onerror = () => {
    // The server ended the stream (the run ended) or went away: the page keeps what it showed.
    if (events.readyState === EventSource.CLOSED) { return; }
  };
}

function perSecond(x, ns) { return ns > 0 ? x * 1e9 / ns : 0; }

function seriesChart(holder, run) {
  const cells = (run.cell_results || []).filter((c) => c.metrics && c.metrics.series && c.metrics.series.intervals.length > 0);
  if (cells.length === 0) { holder.textContent = "no figures over time in this run (`iomatrix show " + run.id + " --series` says why)"; return; }
  // One x axis for every cell: seconds from each cell's start.
  const times = new Set();
  cells.forEach((c) => c.metrics.series.intervals.forEach((i) => times.add(i.start_ns / 1e9)));
  const xs = Array.from(times).sort((a, b) => a - b);
  const data = [xs];
  const series = [{ label: "s" }];
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  cells.forEach((c, k) => {
    const at = new Map(c.metrics.series.intervals.map((i) => [i.start_ns / 1e9, perSecond(i.reads + i.writes, i.length_ns)]));
    data.push(xs.map((x) => (at.has(x) ? at.get(x) : null)));
    series.push({ label: "cell " + c.seq + " " + (c.test || "") + " ops/s", stroke: palette[k % palette.length], width: 1.5, spanGaps: false });
  });
  const width = Math.max(480, Math.min(1200, holder.clientWidth || 900));
  new uPlot({ title: "ops/s per interval", width: width, height: 320, series: series, scales: { x: { time: false } }, axes: [{ label: "seconds from the cell's start" }, { label: "ops/s" }], cursor: { drag: { x: true, y: false } } }, data, holder);
}

document.addEventListener("DOMContentLoaded", () => {
  const state = document.getElementById("live-state");
  if (state && state.dataset.run && state.dataset.follow === "yes") { followLive(state); }
  document.querySelectorAll("div.series-chart[data-run]").forEach((holder) => {
    fetch("/run/" + holder.dataset.run + "/json", { credentials: "same-origin" })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error("HTTP " + r.status))))
      .then((doc) => seriesChart(holder, doc.run))
      .catch((e) => { holder.textContent = "figures over time not drawn: " + e.message; });
  });
});
