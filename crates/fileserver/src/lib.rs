//! The file-server load (seed 003): many connections at once, each in its
//! own folder with its own files; a write phase (create, open, write in
//! records, close) and then a read phase (open, read all, close) or a mixed
//! one, every operation timed on its own.
//!
//! - [`FileserverPlan`]: the validated, serialisable plan: connections,
//!   files per connection, file sizes ([`FileSizes`]: a list cycled through,
//!   or a size profile), record size, what follows the writes ([`Then`]),
//!   `fsync_every`, `interleave` (files growing at once, the case delayed
//!   allocation exists for), `drop_caches`, seed. [`FileserverPlan::planned`]
//!   says exactly what each connection is asked to do ([`Planned`],
//!   [`OpCounts`] per [`Op`]).
//! - [`execute`]: runs a plan with one small-stacked thread per connection
//!   at a [`Place`]: a local folder that must exist (else an error, before
//!   any connection), or a folder on a server through iomatrix's own
//!   protocol client, each connection with a session of its own; the
//!   connection's file operations go through [`ConnectionFiles`]
//!   ([`LocalFiles`]: system calls, [`RemoteFiles`]: a [`RemoteFs`]),
//!   all released together by the leader at the start of each [`Phase`],
//!   and hands each merged [`PhaseResult`] (per-operation HDR histograms,
//!   per-connection [`ConnectionFigures`], throughput, errors by kind, lost
//!   samples) to the caller before the next phase starts. A connection that
//!   fails is counted with its [`ConnectionError`] and the others go on.
//! - [`execute_clients`]: the same from many clients at once (threads, or
//!   MPI ranks), each with its own connections in its own folder, started
//!   after its `--before` hook, every phase started together (the page
//!   cache dropped by each client before the barrier); each phase merged as
//!   a [`FileserverCell`] (histograms added exactly, the clients' own
//!   figures kept, failed clients recorded as [`ClientFailure`]s).
//!
//! [`ClientFailure`]: iomatrix_coord::ClientFailure
//! [`RemoteFs`]: iomatrix_backend::RemoteFs
//! - [`FileserverCellFigures`]: what a phase stores (its row's `metrics`), and
//!   [`ConnectionRecord`]: what it stores per connection (`client_figures`), declared once
//!   for the suite that writes them and the tables ([`render`]) that read them.
//! - [`Live`]: counters for a live display (files done, bytes, failures).
//! - [`drop_caches`]: what the run needs of the system.
#![warn(missing_docs)]

pub mod cli;
mod clients;
pub mod figures;
mod files;
pub mod import;
mod plan;
pub mod render;
mod runner;
mod stored;
mod sys;

pub use clients::{execute_clients, ClientPhase, FileserverCell};
pub use figures::{ClientPhaseFigures, ConnectionRecord, FileserverCellFigures, OpTimes, SetupFigures};
pub use files::{ConnectionFiles, LocalFiles, OpenFor, RemoteFiles};
pub use iomatrix_backend::{Connect, Place};
pub use plan::{
    FileSizes, FileserverPlan, MixVisits, Op, OpCounts, Phase, Planned, SizeDraw, Then, MAX_CONNECTIONS, MAX_RECORD,
};
pub use runner::{
    execute, ConnectionError, ConnectionFigures, Live, LiveSnapshot, PhaseResult, REMOTE_STACK_SIZE, SAMPLE_BUFFER,
    STACK_SIZE,
};
pub use sys::{can_drop_caches, drop_caches, DROP_CACHES};
