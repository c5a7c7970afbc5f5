//! How a run ended, decided in one place from how its clients ended and the
//! states of the cells it stored: a run is `complete` only when every
//! planned cell is stored whole; `partial` when every cell ran but clients or
//! connections failed in some (those cells are stored partial or failed),
//! and some part of some cell finished; `failed` when nothing finished
//! anywhere, or it stopped on a failure; `interrupted` when it was stopped.
//! The exit code follows from the status and the stored cells, whatever
//! suite ran and whatever launched it.

use iomatrix_coord::Ending;
use iomatrix_store::{CellRow, RunStatus};

/// The run's status: `ending` is how its clients ended, `cells` what it stored.
pub fn status(ending: &Ending, cells: &[CellRow]) -> RunStatus {
    let something_finished = cells.iter().any(|c| c.state.kind != iomatrix_store::CellStateKind::Failed);
    match ending {
        // A disturbed cell finished in every part: its run is complete, and says so (job.rs).
        Ending::Completed if cells.iter().all(every_part_finished) => RunStatus::Complete,
        // Under `--on-client-error continue`: clients failed, and the cells they failed in are
        // stored partial, or failed where every client failed.
        Ending::Completed | Ending::ClientsLost(_) if something_finished => RunStatus::Partial,
        // Every cell ran, and in every one every part failed: nothing was measured.
        Ending::Completed | Ending::ClientsLost(_) => RunStatus::Failed,
        Ending::Interrupted => RunStatus::Interrupted,
        Ending::ClientFailed { .. } | Ending::SinkFailed(_) => RunStatus::Failed,
    }
}

/// The cells stored but not whole: (partial, failed). A disturbed cell whose parts all finished
/// is whole, though not a figure ([`disturbed`]).
pub fn not_complete(cells: &[CellRow]) -> (usize, usize) {
    let partial = cells.iter().filter(|c| c.state.is_partial()).count();
    let failed = cells.iter().filter(|c| c.state.kind == iomatrix_store::CellStateKind::Failed).count();
    (partial, failed)
}

/// Whether every part (client, connection) of the cell finished it.
pub fn every_part_finished(cell: &CellRow) -> bool {
    cell.state.kind != iomatrix_store::CellStateKind::Failed && cell.state.ok >= cell.state.of
}

/// The cells stored disturbed: they did not run for their time.
pub fn disturbed(cells: &[CellRow]) -> Vec<&CellRow> {
    cells.iter().filter(|c| c.state.kind == iomatrix_store::CellStateKind::Disturbed).collect()
}

/// The exit code of a run that was not stopped by a failure: 0 complete, 3 (clients or
/// connections failed: [`crate::exit::CLIENTS_LOST`]) partial, 4 when every cell is whole but
/// `--verify` found blocks that were not what was written. None for the other statuses, whose
/// code is the caller's (the signal's, or the failure's).
pub fn exit_code(status: RunStatus, cells: &[CellRow]) -> Option<u8> {
    match status {
        RunStatus::Complete if super::data::mismatches(cells) > 0 => Some(crate::exit::DATA_MISMATCHES),
        RunStatus::Complete => Some(0),
        RunStatus::Partial => Some(crate::exit::CLIENTS_LOST),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_coord::ClientFailure;
    use iomatrix_store::CellState;

    fn cell(state: CellState) -> CellRow {
        CellRow {
            seq: 0,
            test: "write".into(),
            file_size: None,
            record_size: None,
            backend: "psync".into(),
            direct: false,
            clients: 1,
            bytes: 1,
            ops: 1,
            wall_ns: 1,
            user_ns: 0,
            sys_ns: 0,
            kib_per_sec: 1.0,
            cpu_percent: Some(0.0),
            metrics: serde_json::json!({}),
            client_figures: serde_json::json!([]),
            state,
            blobs: Vec::new(),
        }
    }

    #[test]
    fn a_run_is_complete_only_when_every_stored_cell_is() {
        let whole = [cell(CellState::complete(2)), cell(CellState::complete(2))];
        assert_eq!(status(&Ending::Completed, &whole), RunStatus::Complete);
        assert_eq!(exit_code(RunStatus::Complete, &whole), Some(0));
        let some = [cell(CellState::complete(4)), cell(CellState::counted(3, 4, "connections"))];
        assert_eq!(status(&Ending::Completed, &some), RunStatus::Partial);
        assert_eq!(exit_code(RunStatus::Partial, &some), Some(crate::exit::CLIENTS_LOST));
        assert_eq!(not_complete(&some), (1, 0));
        let none = [cell(CellState::counted(0, 4, "connections"))];
        assert_eq!(status(&Ending::Completed, &none), RunStatus::Failed, "nothing finished anywhere");
        assert_eq!(not_complete(&none), (0, 1));
        let one_failed = [cell(CellState::counted(0, 4, "connections")), cell(CellState::counted(1, 4, "connections"))];
        assert_eq!(status(&Ending::Completed, &one_failed), RunStatus::Partial);
        let lost_all = Ending::ClientsLost(vec![(0, ClientFailure::error(0, "gone".into()))]);
        assert_eq!(status(&lost_all, &[]), RunStatus::Failed, "no cell stored at all");
        let lost = Ending::ClientsLost(vec![(1, ClientFailure::error(0, "gone".into()))]);
        let one_cell_failed = [cell(CellState::complete(1)), cell(CellState::counted(0, 1, "clients"))];
        assert_eq!(status(&lost, &one_cell_failed), RunStatus::Partial, "a cell every client failed is stored failed");
        let failed = Ending::ClientFailed { cell: 1, failures: vec![ClientFailure::error(0, "ENOSPC".into())] };
        assert_eq!(status(&failed, &whole), RunStatus::Failed);
        assert_eq!(exit_code(RunStatus::Failed, &whole), None);
        assert_eq!(status(&Ending::Interrupted, &some), RunStatus::Interrupted);
    }

    #[test]
    fn a_disturbed_cell_keeps_its_run_complete_and_its_exit_code_and_counts_as_partial_only_when_it_is() {
        let stopped = cell(CellState::complete(2).disturbed("the process was stopped for 20 s".into()));
        let run = [cell(CellState::complete(2)), stopped.clone()];
        assert_eq!(status(&Ending::Completed, &run), RunStatus::Complete);
        assert_eq!(exit_code(RunStatus::Complete, &run), Some(0));
        assert_eq!(not_complete(&run), (0, 0));
        assert_eq!(disturbed(&run).len(), 1);
        let both = [cell(CellState::counted(1, 2, "clients").disturbed("stopped".into()))];
        assert_eq!(status(&Ending::Completed, &both), RunStatus::Partial);
        assert_eq!(not_complete(&both), (1, 0));
        let failed = CellState::counted(0, 2, "clients").disturbed("stopped".into());
        assert_eq!(failed.kind, iomatrix_store::CellStateKind::Failed, "a failed cell has no figure to doubt");
        assert_eq!(stopped.state.describe(), "disturbed: the process was stopped for 20 s");
    }
}
