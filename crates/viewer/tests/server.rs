//! The server's logic with a stand-in for the program's answers (the real program's pages are
//! tested in tests/cli/viewer_*.rs): every response carries the policy, a page that panics is a
//! 500 page and the server answers on, a request without the token is refused, and the event
//! stream ends with the run.

use iomatrix_viewer::{serve, Answer, Answers, Config, Snapshot};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

struct StandIn {
    live_calls: AtomicUsize,
}

impl Answers for StandIn {
    fn command(&self, args: &[String]) -> Answer {
        match args.first().map(String::as_str) {
            Some("show") if args[1] == "13" => panic!("a page that panics"),
            Some("show") => Answer::printed(format!("run #{} <as printed>\n", args[1])),
            _ => Answer { stdout: String::new(), error: Some(format!("no such question: {args:?}")), exit: 2 },
        }
    }
    fn report(&self, _args: &[String], _extension: &str) -> Result<Vec<u8>, Answer> {
        Ok(b"report".to_vec())
    }
    fn charted(&self, _args: &[String]) -> Option<(String, String)> {
        None
    }
    fn live(&self, run: i64) -> Result<Snapshot, Answer> {
        let n = self.live_calls.fetch_add(1, Ordering::SeqCst);
        let ended = n >= 2;
        let state = if ended { "complete" } else { "running" };
        Ok(Snapshot { state: state.into(), line: format!("{n} ops/s"), cells: format!("run {run}: {n} cells"), ended })
    }
    fn db_path(&self) -> &Path {
        Path::new("/db.sqlite")
    }
}

/// Starts a server on a free loopback port; returns its address (host:port) and its stop flag.
fn start(token: Option<&str>) -> (String, &'static AtomicBool) {
    let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    let (tx, rx) = mpsc::channel();
    let config = Config { address: "127.0.0.1:0".parse().unwrap(), token: token.map(str::to_string), stop };
    std::thread::spawn(move || {
        serve(config, Arc::new(StandIn { live_calls: AtomicUsize::new(0) }), |l| tx.send(l.url.clone()).unwrap())
    });
    let url = rx.recv_timeout(Duration::from_secs(10)).expect("the server said where it listens");
    let host = url.trim_start_matches("http://").split('/').next().unwrap().to_string();
    (host, stop)
}

/// One request; the whole response as text.
fn get(host: &str, target: &str, extra: &str) -> String {
    let mut stream = TcpStream::connect(host).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(stream, "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}\r\n").unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    out
}

fn status(response: &str) -> u16 {
    response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn every_response_carries_the_policy_and_a_panic_is_a_page() {
    let (host, stop) = start(None);
    let page = get(&host, "/run/12", "");
    assert_eq!(status(&page), 200, "{page}");
    assert!(page.contains("Content-Security-Policy: default-src 'none'; script-src 'self'"), "{page}");
    assert!(page.contains("<pre id=\"show\">run #12 &lt;as printed&gt;\n</pre>"), "escaped, as printed: {page}");
    assert!(page.contains("<code id=\"cli\">iomatrix --db /db.sqlite show 12</code>"), "{page}");
    let panicked = get(&host, "/run/13", "");
    assert_eq!(status(&panicked), 500, "{panicked}");
    assert!(panicked.contains("a bug: please report it") && panicked.contains("Content-Security-Policy"));
    assert_eq!(status(&get(&host, "/run/12", "")), 200, "answers on after a panic");
    let wrong = get(&host, "/history/12", "");
    assert_eq!(status(&wrong), 400, "the command's exit 2 is the asker's: {wrong}");
    assert!(wrong.contains("no such question"), "its words: {wrong}");
    assert_eq!(status(&get(&host, "/../../etc/passwd", "")), 400);
    stop.store(true, Ordering::SeqCst);
}

#[test]
fn beyond_the_loopback_every_request_carries_the_token() {
    let (host, stop) = start(Some("a-token-of-sixteen-chars"));
    assert_eq!(status(&get(&host, "/run/1", "")), 401);
    let first = get(&host, "/run/1?token=a-token-of-sixteen-chars", "");
    assert_eq!(status(&first), 200, "{first}");
    assert!(first.contains("Set-Cookie: iomatrix_token=a-token-of-sixteen-chars; HttpOnly; SameSite=Strict"));
    let by_cookie = get(&host, "/run/1", "Cookie: iomatrix_token=a-token-of-sixteen-chars\r\n");
    assert_eq!(status(&by_cookie), 200, "{by_cookie}");
    stop.store(true, Ordering::SeqCst);
}

#[test]
fn the_event_stream_sends_each_change_and_ends_with_the_run() {
    let (host, stop) = start(None);
    let stream = get(&host, "/events/7", "");
    assert!(stream.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"), "{stream}");
    let events: Vec<&str> = stream.lines().filter(|l| l.starts_with("data: ")).collect();
    assert!(stream.ends_with("\r\n0\r\n\r\n"), "the chunked body says its end: {stream:?}");
    assert_eq!(events.len(), 3, "running, running, complete: {stream}");
    assert!(events[2].contains("\"state\":\"complete\"") && events[2].contains("\"ended\":true"), "{stream}");
    stop.store(true, Ordering::SeqCst);
}
