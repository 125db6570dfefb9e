//! Who may use the web UI: the token of `--token-file`, checked on every request, and the
//! rule that only a loopback listener may go without one.
//!
//! A request carries the token as `Authorization: Bearer TOKEN`, or as the cookie
//! [`COOKIE`] that a visit of `/?token=TOKEN` sets (then redirected to `/`, so that the token
//! leaves the address bar and the history). Tokens are compared in constant time
//! ([`subtle`]); only their length can show in the time taken. A listener without a token
//! (loopback only) still refuses a request whose `Host` is not a loopback name or address:
//! a page of another site that a browser was made to send here under a name of its own
//! (DNS rebinding) cannot read the results.
//!
//! A request that changes something (any method but GET and HEAD: starting, cancelling,
//! resuming an experiment) must also come from a page of this server ([`same_origin`]):
//! its `Origin` is this server's (the scheme and the `Host` it was asked under), or, from a
//! browser that sends no `Origin`, its `Sec-Fetch-Site` is `same-origin`. A browser sends
//! the cookie with a form that another site's page posts here; the cookie alone must not
//! start experiments. A client of its own (curl, a script) sends `Origin` as well.

use std::io::Read as _;
use std::net::IpAddr;
use std::path::Path;

use anyhow::{bail, Context, Result};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use subtle::ConstantTimeEq;

/// The shortest token accepted.
pub(super) const MIN_TOKEN_CHARS: usize = 16;

/// The longest token file read: a token is one short line.
const MAX_TOKEN_FILE_BYTES: u64 = 4096;

/// The cookie that carries the token after a visit of `/?token=TOKEN`.
pub(super) const COOKIE: &str = "transputation_token";

/// The secret every request must carry. Its text never appears in `Debug` or a page.
pub(super) struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// The token in the first line of `path`: at least [`MIN_TOKEN_CHARS`] characters, each
    /// a visible ASCII character that a header and a cookie can carry as it is.
    pub(super) fn read(path: &Path) -> Result<Token> {
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_TOKEN_FILE_BYTES).read_to_string(&mut text))
            .with_context(|| format!("reading the token file {}", path.display()))?;
        Token::parse(&text).with_context(|| format!("the token file {}", path.display()))
    }

    /// The token of a token file's text: its first line, without surrounding blanks.
    fn parse(text: &str) -> Result<Token> {
        let token = text.lines().next().unwrap_or("").trim();
        if token.is_empty() {
            bail!("its first line, the token, is empty");
        }
        if let Some(c) = token.chars().find(|c| !cookie_safe(*c)) {
            bail!(
                "the token has the character {c:?}: write it with visible ASCII characters \
                 other than ; , \" and \\ (e.g. `openssl rand -hex 32`)"
            );
        }
        if token.len() < MIN_TOKEN_CHARS {
            bail!(
                "the token has {} characters; at least {MIN_TOKEN_CHARS} are needed",
                token.len()
            );
        }
        Ok(Token(token.to_string()))
    }

    /// Whether `given` is the token, in time that does not depend on where they differ.
    pub(super) fn matches(&self, given: &str) -> bool {
        self.0.as_bytes().ct_eq(given.as_bytes()).into()
    }

    /// The `Set-Cookie` value that carries the token from now on: not readable by a
    /// script, not sent along from another site's page.
    pub(super) fn cookie(&self) -> HeaderValue {
        HeaderValue::from_str(&format!(
            "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            self.0
        ))
        .expect("a token is visible ASCII, so a header value")
    }
}

/// Whether a token may hold `c`: visible ASCII other than what ends a cookie's value or
/// needs quoting in one.
fn cookie_safe(c: char) -> bool {
    c.is_ascii_graphic() && !matches!(c, ';' | ',' | '"' | '\\')
}

/// Why a listener on `listen` is refused, if it is: an address other than loopback
/// without a token.
pub(super) fn refuse_listener(listen: IpAddr, has_token: bool) -> Option<String> {
    (!listen.is_loopback() && !has_token).then(|| {
        format!(
            "refusing to listen on {listen} without --token-file: it is not a loopback \
             address, so other machines could reach the results; give a token file (its \
             first line, at least {MIN_TOKEN_CHARS} characters, is the token every request \
             must carry), or listen on 127.0.0.1"
        )
    })
}

/// What the guard decided about a request.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Serve it.
    Pass,
    /// The token came in the query of `/`: set the cookie and send the browser to `/`.
    SetCookie,
    /// Refuse it: no token, or a wrong one.
    NeedToken,
    /// Refuse it: a listener without a token was reached under a name that is not this
    /// machine's loopback (the name, as the request gave it).
    ForeignHost(String),
    /// Refuse it: a request that changes something came from another site's page, or
    /// says nothing of where it came from (what it said).
    CrossSite(String),
}

/// The guard's decision on a request for `path` with `query` and `headers`, where the
/// listener has `token` (or none).
pub(super) fn check(
    token: Option<&Token>,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Verdict {
    let Some(token) = token else {
        return match headers.get(header::HOST).map(HeaderValue::to_str) {
            // HTTP/1.0 may leave the header out; a browser never does.
            None => Verdict::Pass,
            Some(Ok(host)) if is_loopback_host(host) => Verdict::Pass,
            Some(host) => Verdict::ForeignHost(
                host.map(str::to_string)
                    .unwrap_or_else(|_| "(not text)".into()),
            ),
        };
    };
    let bearer = headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.strip_prefix("Bearer "));
    let cookies = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='));
    // Every candidate is compared, so that which one matched does not show in the time.
    let mut ok = false;
    for given in bearer.chain(cookies) {
        ok |= token.matches(given.trim());
    }
    if ok {
        return Verdict::Pass;
    }
    if path == "/" {
        let in_query = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|kv| kv.strip_prefix("token="));
        let mut ok = false;
        for given in in_query {
            ok |= token.matches(given);
        }
        if ok {
            return Verdict::SetCookie;
        }
    }
    Verdict::NeedToken
}

/// Whether a `Host` header names this machine's loopback: `localhost`, or an address in
/// 127.0.0.0/8 or `[::1]`, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        // `[::1]:8080`
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(|a| a.is_loopback())
}

/// Whether a request that changes something comes from a page of this server: its
/// `Origin` names the `Host` it was sent to (`http://HOST` or `https://HOST`), or it has no
/// `Origin` and `Sec-Fetch-Site: same-origin`.
pub(super) fn same_origin(headers: &HeaderMap) -> Verdict {
    let text = |name| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("(not text)"))
    };
    let host = text(header::HOST).unwrap_or("");
    match text(header::ORIGIN) {
        Some(origin) => {
            let named = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            match named {
                Some(named) if !host.is_empty() && named.eq_ignore_ascii_case(host) => {
                    Verdict::Pass
                }
                _ => Verdict::CrossSite(format!("Origin {origin:?}")),
            }
        }
        None => match text(header::HeaderName::from_static("sec-fetch-site")) {
            Some("same-origin") => Verdict::Pass,
            Some(site) => Verdict::CrossSite(format!("Sec-Fetch-Site {site:?}")),
            None => Verdict::CrossSite("no Origin".into()),
        },
    }
}

/// The status and the one sentence of a refusal.
pub(super) fn refusal(verdict: &Verdict) -> (StatusCode, String) {
    match verdict {
        Verdict::CrossSite(said) => (
            StatusCode::FORBIDDEN,
            format!(
                "A request that changes something must come from this server's own page \
                 (its Origin header naming this server), and this one says {said}: another \
                 site's page cannot start, cancel or resume experiments here."
            ),
        ),
        Verdict::ForeignHost(host) => (
            StatusCode::FORBIDDEN,
            format!(
                "This server answers only under a loopback name (127.0.0.1, localhost, [::1]), \
                 not {host:?}: without a token it serves this machine alone."
            ),
        ),
        _ => (
            StatusCode::UNAUTHORIZED,
            "A token is needed: send the header Authorization: Bearer TOKEN, or open \
             /?token=TOKEN once in this browser (TOKEN is the first line of the server's \
             --token-file)."
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> Token {
        Token::parse("0123456789abcdef-long\nignored\n").unwrap()
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn a_token_file_holds_one_long_visible_token() {
        assert!(token().matches("0123456789abcdef-long"));
        assert!(!token().matches("0123456789abcdef-lonG"));
        assert!(!token().matches("0123456789abcdef"));
        assert!(!token().matches(""));
        let e = |t: &str| format!("{:#}", Token::parse(t).unwrap_err());
        assert!(e("").contains("is empty"), "{}", e(""));
        assert!(e("\nsecond-line-token-here").contains("is empty"));
        assert!(
            e("short").contains("has 5 characters; at least 16"),
            "{}",
            e("short")
        );
        assert!(
            e("0123456789;abcdef").contains("';'"),
            "{}",
            e("0123456789;abcdef")
        );
        assert!(e("0123456789 abcdef").contains("' '"));
        assert!(e("0123456789abcdéf").contains("'é'"));
        assert_eq!(format!("{:?}", token()), "Token(..)");
        assert_eq!(
            token().cookie().to_str().unwrap(),
            "transputation_token=0123456789abcdef-long; Path=/; HttpOnly; SameSite=Strict"
        );
    }

    #[test]
    fn only_a_loopback_listener_may_go_without_a_token() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(refuse_listener(ip("127.0.0.1"), false), None);
        assert_eq!(refuse_listener(ip("127.8.0.3"), false), None);
        assert_eq!(refuse_listener(ip("::1"), false), None);
        let why = refuse_listener(ip("0.0.0.0"), false).unwrap();
        assert!(why.contains("without --token-file") && why.contains("not a loopback"));
        assert!(refuse_listener(ip("192.168.1.2"), false).is_some());
        assert!(refuse_listener(ip("::"), false).is_some());
        assert_eq!(refuse_listener(ip("0.0.0.0"), true), None);
    }

    #[test]
    fn a_request_passes_with_the_token_in_a_header_or_the_cookie() {
        let t = token();
        let check = |path, query, h: &HeaderMap| check(Some(&t), path, query, h);
        let none = HeaderMap::new();
        assert_eq!(check("/", None, &none), Verdict::NeedToken);
        let bearer = headers(&[(header::AUTHORIZATION, "Bearer 0123456789abcdef-long")]);
        assert_eq!(check("/experiments/1", None, &bearer), Verdict::Pass);
        let wrong = headers(&[(header::AUTHORIZATION, "Bearer 0123456789abcdef-lone")]);
        assert_eq!(check("/", None, &wrong), Verdict::NeedToken);
        let basic = headers(&[(header::AUTHORIZATION, "Basic 0123456789abcdef-long")]);
        assert_eq!(check("/", None, &basic), Verdict::NeedToken);
        let cookie = headers(&[(
            header::COOKIE,
            "theme=dark; transputation_token=0123456789abcdef-long",
        )]);
        assert_eq!(check("/simulate", None, &cookie), Verdict::Pass);
        let other = headers(&[(
            header::COOKIE,
            "x_transputation_token=0123456789abcdef-long",
        )]);
        assert_eq!(check("/", None, &other), Verdict::NeedToken);
        // In the query of `/` only, where it becomes the cookie.
        let q = Some("a=1&token=0123456789abcdef-long");
        assert_eq!(check("/", q, &none), Verdict::SetCookie);
        assert_eq!(check("/simulate", q, &none), Verdict::NeedToken);
        assert_eq!(check("/", Some("token=nope"), &none), Verdict::NeedToken);
    }

    #[test]
    fn without_a_token_only_loopback_names_are_served() {
        let host = |h: &str| check(None, "/", None, &headers(&[(header::HOST, h)]));
        for h in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:80",
            "[::1]:8080",
            "127.1.2.3",
        ] {
            assert_eq!(host(h), Verdict::Pass, "{h}");
        }
        for h in [
            "evil.example:8080",
            "10.0.0.1:8080",
            "localhost.evil.example",
            "[::2]:1",
        ] {
            assert_eq!(host(h), Verdict::ForeignHost(h.into()), "{h}");
        }
        assert_eq!(check(None, "/", None, &HeaderMap::new()), Verdict::Pass);
        let (status, text) = refusal(&host("evil.example"));
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(text.contains("\"evil.example\""), "{text}");
    }

    #[test]
    fn a_change_must_come_from_a_page_of_this_server() {
        let from = |pairs: &[(header::HeaderName, &str)]| same_origin(&headers(pairs));
        let host = (header::HOST, "127.0.0.1:8080");
        assert_eq!(
            from(&[host.clone(), (header::ORIGIN, "http://127.0.0.1:8080")]),
            Verdict::Pass
        );
        assert_eq!(
            from(&[
                (header::HOST, "Example.org"),
                (header::ORIGIN, "https://example.org")
            ]),
            Verdict::Pass
        );
        for origin in [
            "http://evil.example",
            "http://127.0.0.1:8081",
            "null",
            "http://127.0.0.1:8080.evil.example",
        ] {
            let v = from(&[host.clone(), (header::ORIGIN, origin)]);
            assert_eq!(
                v,
                Verdict::CrossSite(format!("Origin {origin:?}")),
                "{origin}"
            );
        }
        let site = header::HeaderName::from_static("sec-fetch-site");
        assert_eq!(
            from(&[host.clone(), (site.clone(), "same-origin")]),
            Verdict::Pass
        );
        assert_eq!(
            from(&[host.clone(), (site, "cross-site")]),
            Verdict::CrossSite("Sec-Fetch-Site \"cross-site\"".into())
        );
        assert_eq!(from(&[host]), Verdict::CrossSite("no Origin".into()));
        // An Origin without a Host to compare with is not this server's.
        assert!(matches!(
            from(&[(header::ORIGIN, "http://127.0.0.1:8080")]),
            Verdict::CrossSite(_)
        ));
        let (status, text) = refusal(&Verdict::CrossSite("no Origin".into()));
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert!(text.contains("this one says no Origin"), "{text}");
    }
}
