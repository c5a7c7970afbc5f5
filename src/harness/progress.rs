//! Progress on stderr: a bar with cells done / total and ETA on a terminal,
//! one plain line per cell otherwise (logs, CI, pipes).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Live figures of the running cell.
#[derive(Clone)]
pub struct LiveLine {
    bar: Option<ProgressBar>,
    /// Without a terminal: when the last plain line went out.
    printed: Arc<Mutex<Option<Instant>>>,
}

impl LiveLine {
    /// Without a terminal a cell's live figures go out every this often.
    const PLAIN_EVERY: Duration = Duration::from_secs(5);

    pub fn set_message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
            return;
        }
        let mut printed = self.printed.lock().unwrap_or_else(|e| e.into_inner());
        // The first figures of a run are often from its first instants: wait one interval.
        let last = *printed.get_or_insert_with(Instant::now);
        if last.elapsed() >= Self::PLAIN_EVERY {
            *printed = Some(Instant::now());
            let _ = writeln!(std::io::stderr(), "  live: {message}");
        }
    }
}

pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    /// Keep a line per finished cell above the bar (for runs of few, long cells).
    keep_lines: bool,
    /// Nothing shown ([`Progress::silence`]).
    silent: bool,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            if let Ok(style) =
                ProgressStyle::with_template("{bar:30} {pos}/{len} cells, {elapsed} elapsed, ETA {eta}  {msg}")
            {
                bar.set_style(style);
            }
            // Redraw while a long cell runs, so elapsed time and ETA keep moving.
            bar.enable_steady_tick(std::time::Duration::from_millis(250));
            bar
        });
        Progress { bar, total, done: 0, keep_lines: false, silent: false }
    }

    /// Finished cells stay on the screen, one line each, above the bar.
    pub fn keep_lines(mut self) -> Progress {
        self.keep_lines = true;
        self
    }

    /// No bar and no lines from here on (standard error kept for the
    /// tables and messages, as bonnie++'s `-q` keeps it).
    pub fn silence(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.silent = true;
    }

    /// A handle to show live figures of the running cell: on the bar on a
    /// terminal, else a plain line at most every five seconds (logs, CI).
    pub fn live_line(&self) -> Option<LiveLine> {
        (!self.silent).then(|| LiveLine { bar: self.bar.clone(), printed: Arc::new(Mutex::new(None)) })
    }

    pub fn cell_done(&mut self, what: &str) {
        self.done += 1;
        match &self.bar {
            Some(bar) => {
                if self.keep_lines {
                    bar.println(what);
                    bar.set_message("");
                } else {
                    bar.set_message(what.to_string());
                }
                bar.inc(1);
            }
            None if self.silent => {}
            // A closed stderr (a pipe into `head`) must not stop a run.
            None => {
                let _ = writeln!(std::io::stderr(), "[{}/{}] {what}", self.done, self.total);
            }
        }
    }

    /// More cells than planned at the start (noisy cells measured again).
    pub fn add(&mut self, more: usize) {
        self.total += more;
        if let Some(bar) = &self.bar {
            bar.inc_length(more as u64);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
