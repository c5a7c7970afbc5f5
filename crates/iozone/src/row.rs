//! A finished cell as the results database stores it.

use crate::CellResult;
use iomatrix_store::CellRow;

impl CellResult {
    /// The cell's stored row: its file and record sizes, totals, and its figures and every
    /// client's as JSON.
    pub fn row(&self) -> CellRow {
        let spec = &self.spec;
        CellRow {
            file_size: Some(spec.file_size.bytes()),
            record_size: Some(spec.record_size.bytes()),
            direct: spec.direct,
            clients: self.clients.len(),
            bytes: self.bytes(),
            ops: self.ops(),
            wall_ns: self.wall_ns(),
            user_ns: self.user_ns(),
            sys_ns: self.sys_ns(),
            kib_per_sec: self.kib_per_sec(),
            cpu_percent: Some(self.cpu_percent()),
            metrics: serde_json::json!(self.figures),
            client_figures: serde_json::to_value(&self.clients).unwrap_or_default(),
            ..CellRow::blank(spec.test.name(), spec.backend.name())
        }
    }
}
