//! Live figures across processes: what each MPI rank sends rank 0 mid-cell
//! ([`LiveSample`]) and what rank 0 keeps of them ([`LiveBoard`]).

/// A client's figures of the last moment: what each MPI rank sends rank 0
/// mid-cell for its live line.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LiveSample {
    pub cell: usize,
    pub bytes_per_sec: f64,
    pub ops_per_sec: f64,
}

/// At rank 0: the last sample heard from each other rank.
#[derive(Clone, Default)]
pub struct LiveBoard(
    std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<usize, (std::time::Instant, LiveSample)>>>,
);

impl LiveBoard {
    /// Samples younger than three seconds, by rank.
    fn fresh(&self) -> Vec<(usize, LiveSample)> {
        let board = self.0.lock().unwrap_or_else(|e| e.into_inner());
        board.iter().filter(|(_, (at, _))| at.elapsed().as_secs() < 3).map(|(r, (_, s))| (*r, *s)).collect()
    }

    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub fn heard(&self, rank: usize, sample: LiveSample) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(rank, (std::time::Instant::now(), sample));
    }

    /// Rank 0's live words under MPI: every rank's rates summed (rank 0's
    /// own `mine`, the others' latest samples of the same cell) and the
    /// slowest rank. `unit` names `bytes_per_sec` as shown ("MiB/s").
    pub fn summary(&self, ranks: usize, mine: LiveSample, show: impl Fn(&LiveSample) -> String) -> String {
        let mut all: Vec<(usize, LiveSample)> = vec![(0, mine)];
        all.extend(self.fresh().into_iter().filter(|(_, s)| s.cell == mine.cell));
        let sum = LiveSample {
            cell: mine.cell,
            bytes_per_sec: all.iter().map(|(_, s)| s.bytes_per_sec).sum(),
            ops_per_sec: all.iter().map(|(_, s)| s.ops_per_sec).sum(),
        };
        let mut text = format!("{} summed over {} of {ranks} ranks", show(&sum), all.len());
        if let Some((rank, slowest)) = all.iter().min_by(|a, b| a.1.bytes_per_sec.total_cmp(&b.1.bytes_per_sec)) {
            if all.len() > 1 {
                text += &format!(", slowest rank {rank}: {}", show(slowest));
            }
        }
        text
    }
}
