//! iomatrix-viewer: `iomatrix serve`, the results database in a browser.
//!
//! The viewer is another reader of the store, like `show` and `compare`: every figure on a page
//! is the text the command line prints for the same question, produced by the same code, through
//! the [`Answers`] seam the program implements. The viewer itself computes no figure.
//!
//! - [`serve`]: the server loop (one thread per request, bounded), until the stop flag rises.
//! - `guard`: what a request may be: the token, the Host header, the path and its parameters,
//!   checked into a [`route::Route`] before anything is read.
//! - `route`: the pages and their parameters, typed.
//! - `pages`: each page's HTML from the answers; `layout` the frame and escaping.
//! - `assets`: styles, scripts and the chart library, inside the binary.
//! - `live`: a running run's page, updated by server-sent events.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod assets;
mod guard;
mod layout;
mod live;
mod pages;
mod route;
mod server;

pub use live::Snapshot;
pub use server::{serve, Config, Listening, ServeError};

/// What the program answers for the viewer: the read-only commands, run as the terminal runs
/// them. The program implements it (src/commands/serve.rs); the viewer names no suite.
pub trait Answers: Send + Sync + 'static {
    /// Runs `iomatrix --db DB ARGS...` for a read-only command (`runs`, `show`, `compare`,
    /// `history`, `watch`) and returns what it printed on stdout, or why it failed.
    fn command(&self, args: &[String]) -> Answer;
    /// The bytes of `iomatrix report ARGS... -o report.EXT`.
    fn report(&self, args: &[String], extension: &str) -> Result<Vec<u8>, Answer>;
    /// For a command that draws a chart of its answer (`history`): what it prints and the chart's
    /// SVG, from one computation; None for any other command, or where it fails (`command`
    /// then says why).
    fn charted(&self, args: &[String]) -> Option<(String, String)>;
    /// A run's live snapshot: what `iomatrix watch RUN --once` prints, and its parts.
    fn live(&self, run: i64) -> Result<Snapshot, Answer>;
    /// The database's path, for the command lines the pages show.
    fn db_path(&self) -> &std::path::Path;
}

/// What a command printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Its standard output.
    pub stdout: String,
    /// Its error message when it failed (as `iomatrix: error: ...` would say it).
    pub error: Option<String>,
    /// Its exit code (2: the question was wrong; 0: fine).
    pub exit: u8,
}

impl Answer {
    /// A command that printed `stdout` and ended well.
    pub fn printed(stdout: String) -> Answer {
        Answer { stdout, error: None, exit: 0 }
    }
}
