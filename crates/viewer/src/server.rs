//! The server loop: a thread per request, at most [`MAX_AT_ONCE`] at once, until the stop flag
//! rises. Each request is checked ([`crate::guard`]) before a page is made; a page that panics
//! is answered with a 500 page, never a dropped connection or a dead server.

use crate::guard::{self, Access, TOKEN_COOKIE};
use crate::route::{Refusal, Route};
use crate::{pages, Answers};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Requests answered at once at most; one more gets a 503 that says so.
const MAX_AT_ONCE: usize = 32;
/// Every page's policy: the viewer's own files only; no inline script or style.
const CSP_PAGE: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                        connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; \
                        frame-ancestors 'none'";
/// The embedded HTML report: a document of its own (inline style and SVG, no script at all),
/// shown only inside the viewer's pages, in a sandboxed frame.
const CSP_REPORT: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; \
                          form-action 'none'; frame-ancestors 'self'";

/// Where and to whom the viewer listens.
pub struct Config {
    /// The address bound (port 0: a free one).
    pub address: SocketAddr,
    /// The token every request must carry: required when `address` is not the loopback.
    pub token: Option<String>,
    /// Raised to stop (SIGINT, SIGTERM).
    pub stop: &'static AtomicBool,
}

/// Where the viewer listens, once bound.
#[derive(Debug, Clone)]
pub struct Listening {
    /// The address to open, with `?token=` when a token is asked for.
    pub url: String,
}

/// Why the viewer could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address cannot be bound.
    #[error("cannot listen on {0}: {1}; give another --port, or --listen ADDR")]
    Bind(SocketAddr, std::io::Error),
    /// Beyond the loopback without a token.
    #[error("{0} is not the loopback: every request must carry a token there, and none was given")]
    NoToken(SocketAddr),
    /// The socket failed while serving.
    #[error("the viewer's socket failed: {0}")]
    Socket(String),
}

/// Serves until `config.stop` rises. `ready` hears the address once the socket is bound.
pub fn serve(config: Config, answers: Arc<dyn Answers>, ready: impl FnOnce(&Listening)) -> Result<(), ServeError> {
    let listener = TcpListener::bind(config.address).map_err(|e| ServeError::Bind(config.address, e))?;
    let bound = listener.local_addr().map_err(|e| ServeError::Bind(config.address, e))?;
    let access = match (&config.token, bound.ip().is_loopback()) {
        (Some(token), _) => Access::Token(token.clone()),
        (None, true) => Access::Loopback { port: bound.port() },
        (None, false) => return Err(ServeError::NoToken(bound)),
    };
    let server = tiny_http::Server::from_listener(listener, None).map_err(|e| ServeError::Socket(e.to_string()))?;
    let host = if bound.ip().is_unspecified() { "127.0.0.1".to_string() } else { bound.ip().to_string() };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    let url = match &config.token {
        Some(token) => format!("http://{host}:{}/?token={token}", bound.port()),
        None => format!("http://{host}:{}/", bound.port()),
    };
    ready(&Listening { url });
    let busy = Arc::new(AtomicUsize::new(0));
    let access = Arc::new(access);
    while !config.stop.load(Ordering::SeqCst) {
        let request = match server.recv_timeout(Duration::from_millis(200)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ServeError::Socket(e.to_string())),
        };
        if busy.load(Ordering::SeqCst) >= MAX_AT_ONCE {
            let refusal = Refusal::new(503, format!("{MAX_AT_ONCE} requests are being answered: try again"));
            let _ = request.respond(html_reply(&refusal_page(&refusal), refusal.status));
            continue;
        }
        busy.fetch_add(1, Ordering::SeqCst);
        let (answers, access, busy, stop) = (answers.clone(), access.clone(), busy.clone(), config.stop);
        std::thread::spawn(move || {
            answer(request, &*answers, &access, stop);
            busy.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

fn refusal_page(refusal: &Refusal) -> String {
    pages::refused(refusal)
}

/// Answers one request; a panic while making its page becomes a 500 page.
fn answer(request: tiny_http::Request, answers: &dyn Answers, access: &Access, stop: &AtomicBool) {
    let headers: Vec<(String, String)> =
        request.headers().iter().map(|h| (h.field.as_str().to_string(), h.value.as_str().to_string())).collect();
    let checked = guard::check(access, request.method().as_str(), request.url(), &headers);
    let passed = match checked {
        Ok(p) => p,
        Err(refusal) => {
            let _ = request.respond(html_reply(&refusal_page(&refusal), refusal.status));
            return;
        }
    };
    if let Route::Events(run) = passed.route {
        let mut out = request.into_writer();
        if out.write_all(crate::live::head(CSP_PAGE).as_bytes()).is_ok() {
            let _ = crate::live::stream(answers, run, &mut *out, stop);
        }
        return;
    }
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reply(&passed.route, answers)));
    let mut response = match made {
        Ok(Ok(r)) => r,
        Ok(Err(refusal)) => html_reply(&refusal_page(&refusal), refusal.status),
        Err(_) => {
            let refusal = Refusal::new(500, "the viewer failed while making this page (a bug: please report it)");
            html_reply(&refusal_page(&refusal), 500)
        }
    };
    if passed.token_in_query {
        if let Access::Token(token) = access {
            response.add_header(header(
                "Set-Cookie",
                &format!("{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"),
            ));
        }
    }
    let _ = request.respond(response);
}

use std::io::Write;

type Reply = tiny_http::Response<std::io::Cursor<Vec<u8>>>;

fn header(name: &str, value: &str) -> tiny_http::Header {
    // Both are ASCII made here: a header that cannot be made is a bug, shown as such.
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
        .unwrap_or_else(|()| tiny_http::Header::from_bytes(&b"X-Header-Refused"[..], &b"1"[..]).expect("ASCII"))
}

fn reply_of(bytes: Vec<u8>, status: u16, content_type: &str, csp: &str) -> Reply {
    tiny_http::Response::from_data(bytes)
        .with_status_code(status)
        .with_header(header("Content-Type", content_type))
        .with_header(header("Content-Security-Policy", csp))
        .with_header(header("X-Content-Type-Options", "nosniff"))
        .with_header(header("Referrer-Policy", "no-referrer"))
        .with_header(header("Cache-Control", "no-store"))
}

fn html_reply(html: &str, status: u16) -> Reply {
    reply_of(html.as_bytes().to_vec(), status, "text/html; charset=utf-8", CSP_PAGE)
}

/// The route's response, or why it is refused.
fn reply(route: &Route, answers: &dyn Answers) -> Result<Reply, Refusal> {
    match route {
        Route::Runs(query) => Ok(html_reply(&pages::runs(answers, query)?, 200)),
        Route::Run(id) => Ok(html_reply(&pages::run(answers, *id)?, 200)),
        Route::Compare(query) => Ok(html_reply(&pages::compare(answers, query)?, 200)),
        Route::History { run, figure } => Ok(html_reply(&pages::history(answers, *run, figure.as_deref())?, 200)),
        Route::Live(run) => {
            let snapshot = answers
                .live(*run)
                .map_err(|a| pages::answered(a).err().unwrap_or_else(|| Refusal::new(500, "no live answer")))?;
            Ok(html_reply(&pages::live(answers, *run, &snapshot)?, 200))
        }
        Route::RunJson(id) => {
            let json = pages::answered(answers.command(&[String::from("show"), id.to_string(), "--json".into()]))?;
            Ok(reply_of(json.into_bytes(), 200, "application/json", CSP_PAGE))
        }
        Route::Embedded(query) => {
            let bytes = report(answers, query, "html")?;
            Ok(reply_of(bytes, 200, "text/html; charset=utf-8", CSP_REPORT))
        }
        Route::Download { query, extension } => {
            let bytes = report(answers, query, extension)?;
            let reply = reply_of(bytes, 200, content_type(extension), CSP_PAGE).with_header(header(
                "Content-Disposition",
                &format!("attachment; filename=\"iomatrix-report.{extension}\""),
            ));
            Ok(reply)
        }
        Route::Asset(name) => {
            let (content_type, bytes) =
                crate::assets::get(name).ok_or_else(|| Refusal::new(404, format!("no asset {name}")))?;
            Ok(reply_of(bytes.to_vec(), 200, content_type, CSP_PAGE))
        }
        Route::Events(_) => Err(Refusal::new(500, "an event stream is answered apart")),
    }
}

fn report(answers: &dyn Answers, query: &crate::route::CompareQuery, extension: &str) -> Result<Vec<u8>, Refusal> {
    answers
        .report(&query.words(), extension)
        .map_err(|a| pages::answered(a).err().unwrap_or_else(|| Refusal::new(500, "no report")))
}

fn content_type(extension: &str) -> &'static str {
    match extension {
        "html" => "text/html; charset=utf-8",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "csv" => "text/csv; charset=utf-8",
        "md" => "text/markdown; charset=utf-8",
        _ => "application/json",
    }
}
