//! `iomatrix serve` started as an attacker would: every bad input is refused before it listens
//! (/dev/zero and a 10 GiB sparse file as the database or the token file, a short token, a bad
//! address, no database), and a running viewer survives a SIGSTOP and ends on SIGTERM with the
//! database file untouched.

use crate::helpers::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn serve(sb: &Sandbox, args: &[&str]) -> std::process::Output {
    let mut cmd = sb.cmd();
    cmd.arg("serve").args(args);
    bounded_child(cmd, Duration::from_secs(30))
}

#[test]
fn bad_inputs_are_refused_before_it_listens() {
    let sb = Sandbox::new();
    let (_, err) = text(&serve(&sb, &[]));
    assert!(err.contains("no results database at") && err.contains("run a suite first"), "{err}");
    let out = serve(&sb, &["--db", "/dev/zero"]);
    assert_usage_error(&out, "not a regular file");
    let sparse = sb.dir.path().join("sparse.sqlite");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    let out = serve(&sb, &["--db", sparse.to_str().unwrap()]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "a file that is no database: {err}");
    assert!(err.contains("not a database"), "{err}");
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    assert_usage_error(&serve(&sb, &["--listen", "127.0.0.1", "--token-file", "/dev/zero"]), "not a token file");
    assert_usage_error(
        &serve(&sb, &["--listen", "127.0.0.1", "--token-file", sparse.to_str().unwrap()]),
        "--token-file",
    );
    let short = sb.dir.path().join("token");
    std::fs::write(&short, "short\n").unwrap();
    assert_usage_error(&serve(&sb, &["--listen", "127.0.0.1", "--token-file", short.to_str().unwrap()]), "16 to 256");
    assert_usage_error(&serve(&sb, &["--listen", "nonsense"]), "give an IP address");
    assert_usage_error(&serve(&sb, &["--token-file", short.to_str().unwrap()]), "--listen");
}

/// A started viewer: its process and its address.
struct Viewer {
    child: std::process::Child,
    url: String,
}

impl Viewer {
    fn start(sb: &Sandbox) -> Viewer {
        let mut child = sb.cmd().arg("serve").stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let url = first.trim().strip_prefix("iomatrix serve: ").unwrap_or_else(|| panic!("{first}")).to_string();
        Viewer { child, url }
    }

    /// GET `path` with a bound on the wait; (status, body).
    fn get(&self, path: &str, wait: Duration) -> Result<(u16, String), String> {
        let host = self.url.trim_start_matches("http://").trim_end_matches('/');
        let mut s = std::net::TcpStream::connect(host).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(wait)).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).map_err(|e| e.to_string())?;
        let status = out.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        Ok((status, out))
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on the child this test started.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_stopped_viewer_answers_when_continued_and_ends_on_sigterm_with_the_database_untouched() {
    let sb = Sandbox::new();
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write"]);
    let before = std::fs::read(sb.db()).unwrap();
    let modified = std::fs::metadata(sb.db()).unwrap().modified().unwrap();
    let viewer = Viewer::start(&sb);
    let (status, page) = viewer.get("/run/1", Duration::from_secs(20)).unwrap();
    assert_eq!(status, 200, "{page}");
    viewer.signal(libc::SIGSTOP);
    let stopped = viewer.get("/run/1", Duration::from_millis(800));
    assert!(stopped.is_err(), "a stopped viewer answered: {stopped:?}");
    viewer.signal(libc::SIGCONT);
    let (status, _) = viewer.get("/run/1", Duration::from_secs(20)).unwrap();
    assert_eq!(status, 200, "answers again once continued");
    viewer.signal(libc::SIGTERM);
    let mut viewer = viewer;
    let begun = Instant::now();
    let code = loop {
        if let Some(s) = viewer.child.try_wait().unwrap() {
            break s.code();
        }
        assert!(begun.elapsed() < Duration::from_secs(10), "still serving 10 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("SIGTERM ended the viewer in {:?}, exit {code:?}", begun.elapsed());
    assert_eq!(code, Some(143), "SIGTERM's exit code, as every command's");
    assert_eq!(std::fs::read(sb.db()).unwrap(), before, "the database's bytes");
    assert_eq!(std::fs::metadata(sb.db()).unwrap().modified().unwrap(), modified, "its mtime");
}
