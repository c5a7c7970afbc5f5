//! The report as JSON, schema "iomatrix.report/1" (docs/json.md).

use crate::document::Report;
use serde_json::{json, Value};

/// The report's schema (docs/json.md); a later write tells a previous report by it.
pub const SCHEMA: &str = "iomatrix.report/1";

/// The report as JSON, schema "iomatrix.report/1" (docs/json.md).
pub fn render(report: &Report) -> Value {
    let groups: Vec<Value> = report
        .groups
        .iter()
        .map(|g| {
            let cells: Vec<Value> = g
                .summary
                .cells
                .iter()
                .map(|(k, s)| {
                    json!({
                        "test": k.test, "file_size": k.file_size, "record_size": k.record_size, "variant": k.variant,
                        "median": s.median, "min": s.min, "max": s.max, "spread_pct": s.spread_pct,
                        "samples": s.values, "unit": s.unit,
                        "partial_samples": s.partial_samples,
                        "disturbed_samples": s.disturbed_samples,
                        "cached": g.flags.as_ref().map(|f| f.is_flagged(k)),
                    })
                })
                .collect();
            json!({
                "name": g.name,
                "suite": g.summary.suite,
                "runs": g.runs.iter().map(|r| json!({
                    "id": r.summary.id, "status": r.summary.status, "host": r.summary.host,
                    "labels": r.summary.labels,
                    "started_at": r.summary.started_at, "conditions": r.records().conditions, "environment": r.records().environment,
                })).collect::<Vec<_>>(),
                "cells": cells,
                "partial": g.summary.partial,
                "disturbed": g.summary.disturbed,
                "left_out": g.summary.left_out,
                "cache_flags": g.flags,
                "hosts": g.hosts,
            })
        })
        .collect();
    let mut doc = json!({
        "schema": SCHEMA,
        "made_by": report.made_by,
        "made_at": report.made_at,
        "groups": groups,
        "comparisons": report.comparisons,
    });
    // Additive: only with three sides or more, so a report of two reads as before.
    if let Some(many) = &report.sides {
        doc["sides"] = json!({
            "baseline": many.sides[many.baseline].letter,
            "sides": many.sides,
            "rows": many.rows,
        });
    }
    doc
}

#[cfg(test)]
mod tests {
    use crate::document::sample;

    #[test]
    fn the_schema_groups_medians_flags_and_comparisons() {
        let doc = super::render(&sample::report());
        assert_eq!(doc["schema"], "iomatrix.report/1");
        let groups = doc["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 3);
        assert_eq!(groups[1]["name"], "2,3");
        assert_eq!(groups[1]["runs"].as_array().unwrap().len(), 2);
        let cell = groups[1]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["test"] == "write" && c["file_size"] == 65536 && c["record_size"] == 4096)
            .unwrap();
        assert_eq!(cell["median"], 30000.0);
        assert_eq!(cell["samples"], serde_json::json!([20000.0, 40000.0]));
        assert_eq!(cell["cached"], true);
        assert!(groups[0]["cache_flags"]["boundaries"].as_array().is_some_and(|b| !b.is_empty()));
        assert!(groups[2]["cache_flags"].is_null() && groups[2]["cells"][0]["cached"].is_null());
        assert_eq!(groups[2]["runs"][0]["environment"]["cpu_model"], "Xeon & co");
        let ratios = &doc["comparisons"][0]["matrices"][0]["ratios"];
        assert_eq!(ratios, &serde_json::json!([[3.0, 3.0], [3.0, 3.0]]));
    }
}
