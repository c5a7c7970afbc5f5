//! `iomatrix run backup`: the backup walk's flags, as a validated plan. The
//! target is a tree that is only read: a local folder, or one on a server.

use crate::BackupPlan;
use clap::Args;
use iomatrix_backend::RemoteKind;
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_harness::args::RunArgs;
use iomatrix_harness::target::existing_tree;
use iomatrix_harness::{RunOptions, Server, Target};
use std::path::{Path, PathBuf};

/// The suite's plan: the walk, and how many times the tree is walked
/// (`--repeat`; each walk is a cell, a cold one dropping the cache again first).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BackupWalks {
    /// The walk itself: tree, read size and cache state.
    #[serde(flatten)]
    pub walk: BackupPlan,
    /// How many times the tree is walked, one cell each (`--repeat`).
    pub walks: u32,
}

/// Backup walk: every file of a tree read start to end in walk order, as a backup agent does
/// (read only: nothing is written to the tree)
#[derive(Args, Debug)]
#[command(next_help_heading = "Backup walk")]
pub struct RunBackupArgs {
    /// The tree to walk and read (read only: no working folder, nothing written there). With
    /// --clients N > 1 (or N MPI ranks), client r walks DIR/client-r instead, the layout a kept
    /// many-client run leaves; each must exist. Hooks run in the current folder. DIR may be
    /// nfs://host[:port]/export/path or smb://[user@]host[:port]/share/path: read through
    /// iomatrix's own protocol client, one session per client, no client cache (not cold:
    /// the server's cache is out of reach), no FIEMAP, hard links read once per name, symlinks
    /// as the server shows them; --warm is refused there
    // The doc comment is clap's help text: `[user@]host[:port]` there is a URL's shape, not a link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "DIR", value_parser = Target::parse_tree)]
    pub target: Target,

    /// Bytes per read call
    #[arg(long, default_value = "1m", value_name = "SIZE", allow_hyphen_values = true)]
    pub read_size: String,

    /// Read through the page cache as it is. Default: cold (syncfs first, then each file's
    /// cached pages dropped with POSIX_FADV_DONTNEED before it is read). Local trees only
    #[arg(long)]
    pub warm: bool,

    /// The figures over time the walk stores.
    #[command(flatten)]
    pub series: iomatrix_harness::series::SeriesArgs,

    /// The flags every `run` takes: labels, output, clients and repeats.
    #[command(flatten)]
    pub run: RunArgs,
}

impl RunBackupArgs {
    /// The validated plan and the run's options; `mpi_ranks` is the number of ranks under mpirun.
    pub fn validate(&self, mpi_ranks: Option<usize>) -> anyhow::Result<(BackupWalks, RunOptions)> {
        let read_size = self
            .read_size
            .parse::<ByteSize>()
            .map_err(|e| UsageError::new(format!("--read-size {}: {e}", self.read_size)))?;
        let run = self.run.options(self.target.clone(), mpi_ranks)?;
        let clients = run.clients.count;
        let root = match &self.target {
            Target::ServerTree(server) => {
                if self.warm {
                    return Err(UsageError::new(format!(
                        "--warm: over iomatrix's own protocol client ({}) there is no client cache to warm or to \
                         drop: every read goes to the server, whose own cache is out of reach from here; leave \
                         --warm out",
                        server.url()
                    ))
                    .into());
                }
                check_remote_trees(server, clients)?;
                PathBuf::from(server.url())
            }
            Target::Tree(dir) => {
                let root = existing_tree(dir, "--target")?;
                check_client_trees(&root, clients)?;
                root
            }
            other => anyhow::bail!("--target {}: not a tree to walk (a bug)", other.shown()),
        };
        // Over a protocol client nothing can be made cold: see the conditions.
        let on_server = self.target.server().is_some();
        let walk = BackupPlan {
            root,
            read_size: read_size.bytes(),
            cold: !self.warm && !on_server,
            series_interval_ns: self.series.interval_ns()?,
        };
        walk.validate().map_err(|e| UsageError::new(format!("--read-size {}: {e}", self.read_size)))?;
        Ok((BackupWalks { walk, walks: run.repeat.count }, run))
    }
}

/// With more than one client, each walks `root/client-r`: all must be there
/// before anything runs.
fn check_client_trees(root: &Path, clients: usize) -> Result<(), UsageError> {
    let missing: Vec<PathBuf> = crate::missing_client_trees(root, clients);
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
    Err(UsageError::new(format!(
        "{clients} clients, but {} {} missing (or not a folder): with more than one client, client r walks its own tree \
         TARGET/client-r, so {}/client-0 .. client-{} must each be a folder (the layout a kept run with --clients \
         {clients} leaves); make them, or walk {} itself with one client",
        names.join(", "),
        if names.len() == 1 { "is" } else { "are" },
        root.display(),
        clients - 1,
        root.display()
    )))
}

/// Connects to the server and checks the tree(s) to walk there: the
/// target's folder, or with N > 1 clients its `client-0 .. client-N-1`.
fn check_remote_trees(server: &Server, clients: usize) -> Result<(), UsageError> {
    let url = server.url();
    let mut fs = server
        .connect()
        .map_err(|e| UsageError::new(format!("--target: {e}; give an existing folder on the server to walk")))?;
    let trees: Vec<String> =
        if clients < 2 { vec![String::new()] } else { (0..clients).map(|r| format!("client-{r}")).collect() };
    let mut missing = Vec::new();
    for below in &trees {
        let shown = if below.is_empty() { url.clone() } else { format!("{url}/{below}") };
        match fs.stat(below) {
            Ok(entry) if entry.kind == RemoteKind::Folder => {}
            Ok(_) => missing.push(format!("{shown} (not a folder)")),
            Err(e) => missing.push(format!("{shown} ({e})")),
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    if clients < 2 {
        return Err(UsageError::new(format!(
            "--target {}: give an existing folder on the server to walk",
            missing.join(", ")
        )));
    }
    Err(UsageError::new(format!(
        "{clients} clients, but {} missing: with more than one client, client r walks its own tree TARGET/client-r, \
         so {url}/client-0 .. client-{} must each be a folder on the server; make them, or walk {url} itself with \
         one client",
        missing.join(", "),
        clients - 1
    )))
}
