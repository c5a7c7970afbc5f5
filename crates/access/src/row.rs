//! A finished cell as the results database stores it.

use crate::{AccessCellFigures, AccessPlan, AccessResult};
use iomatrix_store::CellRow;
use serde_json::json;

impl AccessResult {
    /// The cell's stored row under `plan`: the block size in its own figure (and, as runs
    /// before it kept it, in the record-size column), its figures and every client's as JSON,
    /// and both latency histograms as blobs.
    pub fn row(&self, plan: &AccessPlan) -> CellRow {
        self.row_of_job(plan, None)
    }

    /// [`AccessResult::row`] of a cell of jobs run at once: its job's plan, and its job's name.
    pub fn row_of_job(&self, plan: &AccessPlan, job: Option<&str>) -> CellRow {
        let clients: Vec<_> = self
            .clients
            .iter()
            .map(|c| {
                let mut figures = json!({
                    "rank": c.rank,
                    "read_bytes": c.read_bytes,
                    "write_bytes": c.write_bytes,
                    "ops": c.ops(),
                    "iops": c.iops(),
                    "mib_per_sec": c.mib_per_sec(),
                    "measured": c.measured,
                    "read": c.reads.summary(),
                    "write": c.writes.summary(),
                });
                if let Some(held) = c.cached_at_start {
                    figures["cached_at_start"] = json!(held);
                }
                if let Some(cpu) = c.cpu {
                    figures["cpu"] = json!(cpu);
                }
                figures
            })
            .collect();
        CellRow {
            seq: 0,
            test: "access".into(),
            file_size: Some(plan.file_size.bytes()),
            record_size: Some(self.cell.block_size.bytes()),
            backend: plan.backend.name().into(),
            direct: plan.direct,
            clients: self.clients.len(),
            bytes: self.read_bytes + self.write_bytes,
            ops: self.ops(),
            wall_ns: self.wall_ns,
            user_ns: self.user_ns,
            sys_ns: self.sys_ns,
            kib_per_sec: self.mib_per_sec * 1024.0,
            cpu_percent: Some(self.cpu_percent),
            metrics: json!(AccessCellFigures {
                block_size: Some(self.cell.block_size.bytes()),
                mix: self.cell.mix(),
                repeat: self.cell.repeat,
                iops: self.iops,
                mib_per_sec: self.mib_per_sec,
                mib_per_sec_sum_of_clients: self.mib_per_sec_sum(),
                failed_clients: self.failures.clone(),
                start_barrier: self.starts.clone(),
                read_bytes: self.read_bytes,
                write_bytes: self.write_bytes,
                read: self.reads.summary(),
                write: self.writes.summary(),
                per_second: self.series.clone(),
                series: Some(self.intervals.clone()),
                requests: self.issued(),
                verify: self.verify.clone(),
                cached_at_start: self.cached_at_start,
                slat: self.split.as_ref().map(|s| [s.slat_reads, s.slat_writes]),
                open_loop: self.open,
                curve: self.curve.clone(),
                latency_target: self.latency_target.clone(),
                steady: self.steady.clone(),
                steady_by_rank: self.steady_by_rank.clone(),
                queue_depths: Some(self.depths),
                block_split: plan
                    .block_split
                    .clone()
                    .map(|split| crate::bssplit::SplitDone { split, counts: self.sizes.clone().unwrap_or_default() }),
                fio_job: job.map(str::to_string),
            }),
            client_figures: json!(clients),
            state: Default::default(),
            blobs: self.blobs(),
        }
    }

    /// The latency histograms: every request's (`latency.*`) and, where requests were queued,
    /// their completion latency apart (`clat.*`, fio's clat).
    fn blobs(&self) -> Vec<(String, Vec<u8>)> {
        let mut blobs =
            vec![("latency.read".into(), self.reads.to_bytes()), ("latency.write".into(), self.writes.to_bytes())];
        if let Some(split) = &self.split {
            blobs.push(("clat.read".into(), split.clat_reads.to_bytes()));
            blobs.push(("clat.write".into(), split.clat_writes.to_bytes()));
        }
        blobs
    }

    /// How the clients issued their requests, each account once.
    fn issued(&self) -> Vec<String> {
        let mut said: Vec<String> = self.clients.iter().map(|c| c.issued.clone()).collect();
        said.sort_unstable();
        said.dedup();
        said
    }
}
