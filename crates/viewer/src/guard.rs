//! What a request may be, checked before anything is read: its method, its length, the token
//! (when the viewer listens beyond this machine), the Host header (when it does not: a page of
//! another site cannot reach it through a name that resolves here), and its path and parameters
//! ([`Route`]).

use crate::route::{Refusal, Route};

/// The longest request target taken: 10,000 picked runs are refused by their count with words
/// ([`crate::route::MAX_LISTED_RUNS`]), not by their length, so the limit is well above that.
const MAX_TARGET: usize = 256 * 1024;
/// The name of the cookie that carries the token after the first request.
pub const TOKEN_COOKIE: &str = "iomatrix_token";

/// Who may ask.
#[derive(Debug, Clone)]
pub enum Access {
    /// Listening on the loopback only: the Host header must name it.
    Loopback { port: u16 },
    /// Listening beyond this machine: every request carries the token.
    Token(String),
}

/// A request that passed: its route, and whether the token came in the query (the reply then
/// sets it as a cookie, so that the page's links need not carry it).
#[derive(Debug)]
pub struct Passed {
    pub route: Route,
    pub token_in_query: bool,
}

/// Checks a request given its method, target (`/path?query`) and headers.
pub fn check(access: &Access, method: &str, target: &str, headers: &[(String, String)]) -> Result<Passed, Refusal> {
    if method != "GET" && method != "HEAD" {
        return Err(Refusal::new(405, format!("{method}: the viewer only reads (GET); it never writes the database")));
    }
    if target.len() > MAX_TARGET {
        return Err(Refusal::new(
            414,
            format!(
                "a request of {} bytes: at most {MAX_TARGET}; compare label groups instead of listing runs",
                target.len()
            ),
        ));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    check_path(path)?;
    let pairs: Vec<(String, String)> =
        form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let token_in_query = match access {
        Access::Loopback { port } => {
            check_host(*port, header(headers, "host"))?;
            false
        }
        Access::Token(token) => {
            check_token(token, &pairs, header(headers, "cookie"), header(headers, "authorization"))?
        }
    };
    let pairs: Vec<(String, String)> = pairs.into_iter().filter(|(k, _)| k != "token").collect();
    Ok(Passed { route: Route::of(path, &pairs)?, token_in_query })
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// A path of plain segments: no `..`, no empty segment, no percent-encoding (an encoded slash or
/// dot is a way around the first two), nothing but letters, digits, `.`, `-` and `_`.
fn check_path(path: &str) -> Result<(), Refusal> {
    let refuse = || {
        Refusal::new(
            400,
            format!("the path '{}' is not one the viewer serves: no '..', no '%', no '//'", path.escape_default()),
        )
    };
    if !path.starts_with('/') || path.contains("//") {
        return Err(refuse());
    }
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'-' | b'_');
    if !path.bytes().all(plain) || path.split('/').any(|s| s == ".." || s == ".") {
        return Err(refuse());
    }
    Ok(())
}

fn check_host(port: u16, host: Option<&str>) -> Result<(), Refusal> {
    let host = host.unwrap_or_default();
    let allowed = [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
        return Ok(());
    }
    Err(Refusal::new(
        403,
        format!(
            "Host '{}': the viewer listens on this machine only and answers 127.0.0.1:{port} or localhost:{port}; to \
             serve other hosts, start it with --listen ADDR (it then asks for a token)",
            host.escape_default()
        ),
    ))
}

/// The token in the query (`?token=`), a cookie or `Authorization: Bearer`; true when in the query.
fn check_token(
    token: &str,
    pairs: &[(String, String)],
    cookie: Option<&str>,
    authorization: Option<&str>,
) -> Result<bool, Refusal> {
    let in_query = pairs.iter().find(|(k, _)| k == "token").map(|(_, v)| v.as_str());
    let in_cookie = cookie.and_then(|c| {
        c.split(';').filter_map(|kv| kv.trim().split_once('=')).find(|(k, _)| *k == TOKEN_COOKIE).map(|(_, v)| v)
    });
    let in_header = authorization.and_then(|a| a.strip_prefix("Bearer ")).map(str::trim);
    if in_query.is_some_and(|t| same(t, token)) {
        return Ok(true);
    }
    if in_cookie.is_some_and(|t| same(t, token)) || in_header.is_some_and(|t| same(t, token)) {
        return Ok(false);
    }
    Err(Refusal::new(
        401,
        "this viewer asks for its token: open the address `iomatrix serve` printed (it ends in ?token=...), or send \
         Authorization: Bearer TOKEN",
    ))
}

/// Equal in a time that does not depend on where they differ.
fn same(given: &str, token: &str) -> bool {
    given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(h: &str) -> Vec<(String, String)> {
        vec![("Host".to_string(), h.to_string())]
    }

    #[test]
    fn paths_around_the_pages_are_refused() {
        let local = Access::Loopback { port: 8080 };
        for bad in ["/../etc/passwd", "/run/..%2f..%2fetc", "/assets/%2e%2e/x", "//etc", "/run/1/../2", "/a\\b"] {
            let refused = check(&local, "GET", bad, &host("127.0.0.1:8080")).unwrap_err();
            assert_eq!(refused.status, 400, "{bad}: {refused:?}");
        }
        assert!(check(&local, "GET", "/run/3", &host("127.0.0.1:8080")).is_ok());
        assert_eq!(check(&local, "POST", "/run/3", &host("127.0.0.1:8080")).unwrap_err().status, 405);
    }

    #[test]
    fn a_foreign_host_name_is_refused_on_the_loopback() {
        let local = Access::Loopback { port: 8080 };
        assert_eq!(check(&local, "GET", "/", &host("evil.example:8080")).unwrap_err().status, 403);
        assert_eq!(check(&local, "GET", "/", &[]).unwrap_err().status, 403);
        assert!(check(&local, "GET", "/", &host("localhost:8080")).is_ok());
    }

    #[test]
    fn the_token_is_asked_for_everywhere_when_listening_beyond() {
        let open = Access::Token("s3cret-token-0123456789".into());
        assert_eq!(check(&open, "GET", "/", &[]).unwrap_err().status, 401);
        assert_eq!(check(&open, "GET", "/?token=wrong", &[]).unwrap_err().status, 401);
        let passed = check(&open, "GET", "/runs?token=s3cret-token-0123456789", &[]).unwrap();
        assert!(passed.token_in_query);
        let cookie = vec![("Cookie".to_string(), format!("a=b; {TOKEN_COOKIE}=s3cret-token-0123456789"))];
        assert!(!check(&open, "GET", "/run/2", &cookie).unwrap().token_in_query);
        let bearer = vec![("Authorization".to_string(), "Bearer s3cret-token-0123456789".to_string())];
        assert!(check(&open, "GET", "/run/2", &bearer).is_ok());
    }
}
