//! The viewer's safety rules (issue 53), each over plain HTTP (no browser): a request from another
//! host needs the token; hostile paths and parameters (`../`, encoded `..`, a huge page, 10,000
//! selected runs) get a clear 4xx and the server answers after; the database is never written; a
//! read-only database serves; a database damaged or replaced while serving gives a clear error
//! page and the next request is answered; every response has a Content-Security-Policy that
//! allows only the viewer's own assets.

use crate::helpers::{is_root, skip, Sandbox};
use crate::viewer_fixture::{Fixture, Serve};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// One HTTP response: status, headers (names lower-cased), body.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// `GET target` sent as is (no normalising of `..`, as a hostile client sends it), read to the
/// end (Connection: close), every wait bounded by 20 s.
fn get(host_port: &str, target: &str) -> Response {
    get_as(host_port, host_port, target)
}

/// [`get`] with the Host header `host` (what a browser sends for a DNS name that resolves here).
fn get_as(host_port: &str, host: &str, target: &str) -> Response {
    let mut stream =
        TcpStream::connect(host_port).unwrap_or_else(|e| panic!("connect to the viewer at {host_port}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    // A server that refuses a huge request may close before reading it all: what it answered counts.
    let _ = stream.write_all(request.as_bytes());
    let mut raw = Vec::new();
    if let Err(e) = stream.read_to_end(&mut raw) {
        assert!(!raw.is_empty(), "no answer to GET {}: {e}", shorten(target));
    }
    parse(&raw)
        .unwrap_or_else(|| panic!("GET {}: not an HTTP response: {:?}", shorten(target), String::from_utf8_lossy(&raw)))
}

fn parse(raw: &[u8]) -> Option<Response> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let mut lines = head.lines();
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some(Response { status, headers, body: body.to_string() })
}

/// A request target for a message: its first 120 characters.
fn shorten(target: &str) -> String {
    target.chars().take(120).collect()
}

/// A Content-Security-Policy that allows only the viewer's own assets: a default-src, and no
/// source but 'self' or 'none' (no other origin, no inline or eval'd script). Two sources are not
/// another origin and run nothing: `data:` images, and inline style in a document that allows no
/// script at all (the HTML report in its sandboxed frame).
fn assert_only_self(target: &str, response: &Response) {
    let csp = response
        .header("content-security-policy")
        .unwrap_or_else(|| panic!("GET {}: no Content-Security-Policy header", shorten(target)));
    let directives: Vec<Vec<&str>> =
        csp.split(';').map(|d| d.split_whitespace().collect::<Vec<_>>()).filter(|d| !d.is_empty()).collect();
    let named = |name: &str| directives.iter().find(|d| d[0] == name);
    let default_src =
        named("default-src").unwrap_or_else(|| panic!("GET {}: no default-src: {csp:?}", shorten(target)));
    let no_script = default_src[1..] == ["'none'"] && named("script-src").is_none();
    for directive in &directives {
        for source in &directive[1..] {
            let allowed = matches!(*source, "'self'" | "'none'")
                || (directive[0] == "img-src" && *source == "data:")
                || (directive[0] == "style-src" && *source == "'unsafe-inline'" && no_script);
            assert!(allowed, "GET {}: the CSP allows {source} in {}: {csp:?}", shorten(target), directive[0]);
        }
    }
}

/// A clear refusal: a 4xx with words, no panic, nothing of the file system outside the database.
fn assert_clear_4xx(target: &str, response: &Response) {
    assert!((400..500).contains(&response.status), "GET {}: {} {}", shorten(target), response.status, response.body);
    let words = response.body.split_whitespace().filter(|w| w.chars().any(char::is_alphabetic)).count();
    assert!(words >= 2, "GET {}: the {} says nothing: {:?}", shorten(target), response.status, response.body);
    assert!(!response.body.contains("panicked") && !response.body.contains("root:x:0:0"), "{}", response.body);
}

#[test]
fn hostile_paths_and_parameters_get_a_clear_4xx_and_the_server_answers_after() {
    let Some(fixture) = Fixture::get() else { return };
    let Some(mut serve) = Serve::start(&fixture.db(), &[]) else { return };
    let at = serve.host_port();
    let every_run = (1..=10_000).map(|id| format!("side={id}")).collect::<Vec<_>>().join("&");
    let hostile = [
        "/../etc/passwd".to_string(),
        "/../../../../etc/passwd".to_string(),
        "/%2e%2e/%2e%2e/etc/passwd".to_string(),
        "/run/..%2f..%2f..%2fetc%2fpasswd".to_string(),
        "/static/../../etc/passwd".to_string(),
        "/run/abc".to_string(),
        "/run/99999999999999999999999".to_string(),
        "/runs?page=99999999999999999999999".to_string(),
        "/runs?page=-1".to_string(),
        "/runs?state=sideways".to_string(),
        format!("/compare?{every_run}&baseline=1"),
        "/history/1?figure=%00%ff".to_string(),
        "/download/..%2f..%2fetc%2fpasswd".to_string(),
    ];
    for target in &hostile {
        let response = get(&at, target);
        eprintln!("GET {} -> {}", shorten(target), response.status);
        assert_clear_4xx(target, &response);
        assert_only_self(target, &response);
        assert!(serve.alive(), "the server ended after GET {}", shorten(target));
        let after = get(&at, "/runs");
        assert_eq!(after.status, 200, "GET /runs after GET {}: {}", shorten(target), after.body);
    }
    let pages = ["/", "/runs", "/run/1", "/compare?side=1&side=2&baseline=1", "/history/1", "/assets/viewer.css"];
    for target in pages.into_iter().chain(["/embed/report.html?side=1&side=2&baseline=1"]) {
        let response = get(&at, target);
        assert_eq!(response.status, 200, "GET {target}: {}", response.body);
        assert_only_self(target, &response);
    }
    serve.assert_stops_on_sigterm();
}

#[test]
fn a_session_leaves_the_database_byte_for_byte_as_it_was() {
    let Some(fixture) = Fixture::get() else { return };
    let sb = Sandbox::new();
    let db = fixture.copy_into(sb.dir.path());
    let (bytes, modified) = (std::fs::read(&db).unwrap(), std::fs::metadata(&db).unwrap().modified().unwrap());
    let Some(mut serve) = Serve::start(&db, &[]) else { return };
    let at = serve.host_port();
    for target in [
        "/runs",
        "/runs?suite=iozone&label=sys%3Da",
        "/run/1",
        "/compare?side=1&side=2&baseline=1",
        "/history/1",
        "/live/1",
    ] {
        let response = get(&at, target);
        assert!(
            response.status == 200 || target.starts_with("/live"),
            "GET {target}: {} {}",
            response.status,
            response.body
        );
    }
    serve.assert_stops_on_sigterm();
    assert!(std::fs::read(&db).unwrap() == bytes, "the database's bytes changed during a session");
    assert_eq!(std::fs::metadata(&db).unwrap().modified().unwrap(), modified, "the database's mtime changed");
    let beside: Vec<String> = std::fs::read_dir(sb.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    eprintln!("beside the database after the session: {beside:?}");
}

/// A file made unwritable for the test's life: chmod 0444 (and its folder 0555), and as root,
/// whom modes do not stop, `chattr +i`; undone on drop so the folder can be removed.
struct ReadOnly<'a> {
    file: &'a Path,
    immutable: bool,
}

impl<'a> ReadOnly<'a> {
    fn new(file: &'a Path) -> Option<ReadOnly<'a>> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::fs::set_permissions(file.parent().unwrap(), std::fs::Permissions::from_mode(0o555)).unwrap();
        let mut guard = ReadOnly { file, immutable: false };
        if is_root() {
            let ok =
                Command::new("chattr").arg("+i").arg(file).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
            if !ok {
                skip(format!("root writes through chmod 0444, and chattr +i failed on {}", file.display()));
                return None;
            }
            guard.immutable = true;
        }
        // The proof: writing it fails.
        assert!(std::fs::OpenOptions::new().append(true).open(file).is_err(), "{} is still writable", file.display());
        Some(guard)
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = Command::new("chattr").arg("-i").arg(self.file).status();
        }
        let _ = std::fs::set_permissions(self.file.parent().unwrap(), std::fs::Permissions::from_mode(0o755));
        let _ = std::fs::set_permissions(self.file, std::fs::Permissions::from_mode(0o644));
    }
}

#[test]
fn a_read_only_database_is_served() {
    let Some(fixture) = Fixture::get() else { return };
    let sb = Sandbox::new();
    let folder = sb.dir.path().join("read-only");
    std::fs::create_dir(&folder).unwrap();
    let db = fixture.copy_into(&folder);
    let Some(_read_only) = ReadOnly::new(&db) else { return };
    let Some(mut serve) = Serve::start(&db, &[]) else { return };
    let at = serve.host_port();
    for target in ["/runs", "/run/1", "/compare?side=1&side=2&baseline=1"] {
        let response = get(&at, target);
        assert_eq!(response.status, 200, "GET {target} of a read-only database: {}", response.body);
        assert!(response.body.contains("<pre"), "GET {target}: no text: {}", response.body);
    }
    serve.assert_stops_on_sigterm();
}

/// A page of a damaged database: a 5xx that says so in words; the server lives on.
fn assert_clear_5xx(what: &str, response: &Response) {
    assert!((500..600).contains(&response.status), "{what}: {} {}", response.status, response.body);
    let words = response.body.split_whitespace().filter(|w| w.chars().any(char::is_alphabetic)).count();
    assert!(words >= 3 && !response.body.contains("panicked"), "{what}: {:?}", response.body);
}

#[test]
fn a_database_damaged_or_replaced_while_serving_gives_a_clear_page_and_no_crash() {
    let Some(fixture) = Fixture::get() else { return };
    let sb = Sandbox::new();
    let db = fixture.copy_into(sb.dir.path());
    let Some(mut serve) = Serve::start(&db, &[]) else { return };
    let at = serve.host_port();
    assert_eq!(get(&at, "/runs").status, 200);
    // Overwritten in place by garbage, the same inode the server has open.
    let garbage: Vec<u8> = (0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    let response = get(&at, "/runs");
    eprintln!("garbage in place -> {} {}", response.status, shorten(&response.body));
    assert_clear_5xx("/runs of a database overwritten by garbage", &response);
    assert_only_self("/runs", &response);
    assert!(serve.alive(), "the server ended on a damaged database");
    // Truncated to nothing.
    std::fs::File::create(&db).unwrap();
    let response = get(&at, "/run/1");
    eprintln!("truncated -> {} {}", response.status, shorten(&response.body));
    assert_clear_5xx("/run/1 of a truncated database", &response);
    assert!(serve.alive(), "the server ended on a truncated database");
    // Replaced by another file (rename over it): the old one may still be open, or the new one
    // read; either way an answer, never a crash.
    let other = sb.dir.path().join("other.sqlite");
    std::fs::write(&other, b"not a database at all").unwrap();
    std::fs::rename(&other, &db).unwrap();
    let response = get(&at, "/runs");
    eprintln!("replaced -> {} {}", response.status, shorten(&response.body));
    assert!(response.status == 200 || (500..600).contains(&response.status), "{} {}", response.status, response.body);
    if response.status != 200 {
        assert_clear_5xx("/runs of a replaced database", &response);
    }
    // The good database back: served again.
    fixture.copy_into(sb.dir.path());
    let response = get(&at, "/runs");
    assert!(serve.alive(), "the server ended after its database was replaced");
    assert_eq!(response.status, 200, "the good database back in place: {}", response.body);
    serve.assert_stops_on_sigterm();
}

/// A second host: a network namespace joined to this one by a veth pair (10.214.N.1 here,
/// .2 there), removed on drop (also when the test fails). Root only.
struct SecondHost {
    netns: String,
    veth: String,
    here: String,
}

impl SecondHost {
    fn new() -> Option<SecondHost> {
        if !is_root() {
            skip("a second host (a network namespace) needs root");
            return None;
        }
        let id = std::process::id() % 200 + 20;
        let host =
            SecondHost { netns: format!("iomx-view-{id}"), veth: format!("iomxv{id}"), here: format!("10.214.{id}.1") };
        let (ns, veth, peer) = (host.netns.as_str(), host.veth.as_str(), format!("{}p", host.veth));
        let there = format!("10.214.{id}.2/24");
        let steps: [&[&str]; 7] = [
            &["netns", "add", ns],
            &["link", "add", veth, "type", "veth", "peer", "name", &peer],
            &["link", "set", &peer, "netns", ns],
            &["addr", "add", &format!("{}/24", host.here), "dev", veth],
            &["link", "set", veth, "up"],
            &["-n", ns, "addr", "add", &there, "dev", &peer],
            &["-n", ns, "link", "set", &peer, "up"],
        ];
        for step in steps {
            if !Command::new("ip").args(step).status().is_ok_and(|s| s.success()) {
                skip(format!("cannot make a network namespace: ip {}", step.join(" ")));
                return None; // drop removes what was made
            }
        }
        Some(host)
    }

    /// The HTTP status of `url` fetched from inside the namespace (curl), or 0 when refused.
    fn status(&self, url: &str) -> u16 {
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.netns,
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--max-time",
                "20",
            ])
            .arg(url)
            .output()
            .expect("ip netns exec curl");
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
    }
}

impl Drop for SecondHost {
    fn drop(&mut self) {
        // Deleting the namespace deletes its end of the pair, and with it ours.
        let _ = Command::new("ip").args(["netns", "delete", &self.netns]).status();
        let _ = Command::new("ip").args(["link", "delete", &self.veth]).stderr(Stdio::null()).status();
    }
}

#[test]
fn a_second_hosts_request_is_refused_without_the_token() {
    if !crate::helpers::have("curl") {
        return skip("the second host's requests are made with curl (apt-get install curl)");
    }
    let Some(fixture) = Fixture::get() else { return };
    let Some(host) = SecondHost::new() else { return };
    let listen = format!("{}:0", host.here);
    let Some(mut serve) = Serve::start(&fixture.db(), &["--listen", &listen]) else { return };
    let token = serve.token().unwrap_or_else(|| panic!("--listen printed no token: {}", serve.url));
    assert!(token.len() >= 16, "a token of {} characters is guessable", token.len());
    let port = serve.host_port().rsplit(':').next().unwrap().to_string();
    let base = format!("http://{}:{port}", host.here);
    for (target, want) in [
        ("/runs".to_string(), false),
        ("/runs?token=wrong".to_string(), false),
        (format!("/runs?token={}", &token[..token.len() - 1]), false),
        (format!("/run/1?token={token}"), true),
        (format!("/runs?token={token}"), true),
    ] {
        let status = host.status(&format!("{base}{target}"));
        eprintln!("from the second host: GET {target} -> {status}");
        if want {
            assert_eq!(status, 200, "GET {target} with the token");
        } else {
            assert!(status == 401 || status == 403, "GET {target} without the token: {status}");
        }
    }
    assert!(serve.alive());
    serve.assert_stops_on_sigterm();
}

#[test]
fn serve_listens_on_127_0_0_1_alone_unless_told() {
    let Some(fixture) = Fixture::get() else { return };
    let Some(mut serve) = Serve::start(&fixture.db(), &[]) else { return };
    assert!(serve.url.starts_with("http://127.0.0.1:"), "{}", serve.url);
    assert!(serve.token().is_none(), "no token on 127.0.0.1: {}", serve.url);
    let response = get(&serve.host_port(), "/");
    assert_eq!(response.status, 200, "{}", response.body);
    assert_only_self("/", &response);
    // A web page that reaches the viewer through a DNS name resolving here (DNS rebinding) is refused.
    let port = serve.host_port().rsplit(':').next().unwrap().to_string();
    let response = get_as(&serve.host_port(), &format!("rebound.example:{port}"), "/runs");
    assert_clear_4xx("/runs with Host rebound.example", &response);
    assert_eq!(get_as(&serve.host_port(), &format!("localhost:{port}"), "/runs").status, 200);
    serve.assert_stops_on_sigterm();
}
