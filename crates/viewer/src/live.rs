//! A running run's live page, kept up by server-sent events: once a second the program's live
//! answer (what `iomatrix watch RUN --once` prints: the state, the live line, the cells stored so
//! far) goes out when it changed, until the run ends. The run itself is never touched: its live
//! state is a file it writes anyway, and its cells are read from the database.

use crate::Answers;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the live page shows of a run at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Snapshot {
    /// Its state word: running, complete, failed, ...
    pub state: String,
    /// The live figures line, as the terminal shows it ("" when none).
    pub line: String,
    /// The text `iomatrix watch RUN --once` prints.
    pub cells: String,
    /// The run has ended: nothing more will come.
    pub ended: bool,
}

/// How often the stream looks again.
const EVERY: Duration = Duration::from_secs(1);
/// A stream ends after this long even if the run goes on (the page then reconnects by itself:
/// EventSource does): no request holds a thread for ever.
const LONGEST: Duration = Duration::from_secs(600);
/// A comment line keeps a quiet stream open through proxies.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The response head of an event stream; `csp` the policy every response carries.
pub fn head(csp: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-store\r\n\
         Content-Security-Policy: {csp}\r\nX-Content-Type-Options: nosniff\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n"
    )
}

/// One chunk of a chunked body, sent at once. The stream is chunked so that its end is said in
/// it (the last, empty chunk): the connection under it is the server's, and stays open.
fn chunk(out: &mut dyn Write, bytes: &[u8]) -> std::io::Result<()> {
    write!(out, "{:x}\r\n", bytes.len())?;
    out.write_all(bytes)?;
    out.write_all(b"\r\n")?;
    out.flush()
}

/// Streams `run`'s snapshots into `out` (the raw connection, head already written) until the run
/// ends, the reader goes away, the viewer stops, or [`LONGEST`]; then ends the body.
pub fn stream(answers: &dyn Answers, run: i64, out: &mut dyn Write, stop: &AtomicBool) -> std::io::Result<()> {
    events(answers, run, out, stop)?;
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

fn events(answers: &dyn Answers, run: i64, out: &mut dyn Write, stop: &AtomicBool) -> std::io::Result<()> {
    let began = Instant::now();
    let mut last: Option<Snapshot> = None;
    let mut said = Instant::now();
    while began.elapsed() < LONGEST && !stop.load(Ordering::SeqCst) {
        let now = match answers.live(run) {
            Ok(s) => s,
            Err(answer) => Snapshot {
                state: "unreadable".into(),
                line: answer.error.unwrap_or_default(),
                cells: String::new(),
                ended: true,
            },
        };
        if last.as_ref() != Some(&now) {
            let data = serde_json::to_string(&now).unwrap_or_default();
            chunk(out, format!("data: {data}\n\n").as_bytes())?;
            said = Instant::now();
            if now.ended {
                return Ok(());
            }
            last = Some(now);
        } else if said.elapsed() >= KEEP_ALIVE {
            chunk(out, b": still running\n\n")?;
            said = Instant::now();
        }
        std::thread::sleep(EVERY);
    }
    Ok(())
}
