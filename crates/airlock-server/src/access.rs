//! Who may use the server, checked on every request before any route runs:
//!
//! - the name the request was sent to (`Host`): a loopback name or address, the address the server is bound to,
//!   or a host the operator named with `--public-url`. A web page on another domain that its owner points at
//!   127.0.0.1 (DNS rebinding) counts as same-origin to the browser, so without this check it could read and drive
//!   the server; with it, such a request is refused before anything else happens;
//! - the token, as a bearer header (the scheme in any case) or a login session: a random id that the login page
//!   sets as a cookie (HttpOnly, SameSite=Strict, Secure when the public URL is `https`), kept on the server and
//!   ended by logging out; the cookie never holds the token;
//! - a state-changing request that a browser sent from another origin is refused.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State as AxState};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::config::{host_of, PublicUrl};
use crate::error::ApiError;
use crate::session::{constant_time_eq, SESSION_COOKIE, SESSION_TTL};
use crate::state::{App, Shared};

/// Whether a request sent to `host` (its `Host` header) may be served by a server bound to `bound`.
pub(crate) fn host_allowed(host: &str, bound: SocketAddr, public: &[PublicUrl]) -> bool {
    let Some(name) = host_of(host) else {
        return false;
    };
    if let Ok(ip) = name.parse::<IpAddr>() {
        // An address typed into a browser cannot be rebound: the page came from that address itself.
        let ip = airlock_egress::to_canonical(ip);
        return ip.is_loopback()
            || ip == airlock_egress::to_canonical(bound.ip())
            || bound.ip().is_unspecified();
    }
    name == "localhost" || name.ends_with(".localhost") || public.iter().any(|p| p.host == name)
}

/// The host a request was sent to: its `Host` header, or the authority of an absolute-form request.
fn request_host(req: &Request) -> Option<String> {
    req.headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()))
}

/// The session id a request's cookie carries, if any.
pub(crate) fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(SESSION_COOKIE)?.strip_prefix('='))
}

/// The `Set-Cookie` value that starts (`Some(id)`) or clears (`None`) a session, for a request sent to `host`.
pub(crate) fn session_set_cookie(app: &App, host: Option<&str>, id: Option<&str>) -> String {
    let secure = host
        .and_then(host_of)
        .is_some_and(|h| app.config.public_urls.iter().any(|p| p.https && p.host == h));
    let (value, age) = match id {
        Some(id) => (id, SESSION_TTL.as_secs()),
        None => ("", 0),
    };
    format!(
        "{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={age}{}",
        if secure { "; Secure" } else { "" }
    )
}

/// Every request: the host it was sent to, then the token (API calls get a 401, pages go to the login page),
/// then the origin of a state-changing request.
pub(crate) async fn guard(AxState(app): AxState<Shared>, mut req: Request, next: Next) -> Response {
    let host = request_host(&req).unwrap_or_default();
    if !host_allowed(&host, app.config.addr, &app.config.public_urls) {
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "unknown_host",
            "this server answers only to loopback names, its own address and the hosts its operator names with \
             --public-url",
        )
        .into_response();
    }
    let path = req.uri().path().to_owned();
    // The runner routes take a runner's token and nothing else (not the clients' token, not a cookie).
    if path.starts_with("/api/runner/") {
        let bearer = bearer(req.headers()).unwrap_or("").to_owned();
        if !app.config.dispatches() {
            return ApiError::new(
                StatusCode::NOT_FOUND,
                "no_runners",
                "this server runs its runs itself (start it with --runner-tokens for runner machines)",
            )
            .into_response();
        }
        if !crate::dispatch::runner_token_ok(&app, &bearer) {
            return ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "give a runner token from the server's runner tokens file",
            )
            .into_response();
        }
        req.extensions_mut()
            .insert(crate::dispatch::RunnerKey(crate::dispatch::runner_key(&bearer)));
        return next.run(req).await;
    }
    let open = path == "/login" || path.starts_with("/static/");
    if app.config.token.is_some() && !open {
        let by_token = bearer(req.headers()).is_some_and(|given| token_matches(&app, given));
        let by_session = session_cookie(req.headers()).is_some_and(|id| app.sessions.valid(id));
        if !(by_token || by_session) {
            if path.starts_with("/api/") || path == "/metrics" {
                return ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "give the server's token as a bearer token",
                )
                .into_response();
            }
            return axum::response::Redirect::to("/login").into_response();
        }
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) && cross_origin(req.headers()) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_origin",
            "state-changing requests from another origin are refused",
        )
        .into_response();
    }
    next.run(req).await
}

/// The bearer token of a request, if it has one (the scheme's name in any case, RFC 9110).
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(char::is_whitespace)?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Whether a token is the server's (constant time); `true` when the server has none.
pub(crate) fn token_matches(app: &App, given: &str) -> bool {
    app.config
        .token
        .as_ref()
        .is_none_or(|t| constant_time_eq(given.as_bytes(), t.as_bytes()))
}

fn cross_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let origin_host = origin.split_once("://").map_or(origin, |(_, h)| h);
    !origin_host.eq_ignore_ascii_case(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_different_origin_is_cross_site() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "127.0.0.1:7878".parse().unwrap());
        assert!(!cross_origin(&h));
        h.insert(header::ORIGIN, "http://127.0.0.1:7878".parse().unwrap());
        assert!(!cross_origin(&h));
        h.insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        assert!(cross_origin(&h));
    }

    #[test]
    fn a_rebound_name_is_not_this_server() {
        let bound: SocketAddr = "127.0.0.1:7878".parse().unwrap();
        let public = [PublicUrl::parse("https://Airlock.Example.com/").unwrap()];
        for ok in [
            "127.0.0.1:7878",
            "localhost:7878",
            "LOCALHOST",
            "ui.localhost:7878",
            "[::1]:7878",
            "127.0.0.2",
            "airlock.example.com",
            "airlock.example.com.:443",
        ] {
            assert!(host_allowed(ok, bound, &public), "{ok}");
        }
        for bad in [
            "attacker.example:7878",
            "localhost.attacker.example",
            "airlock.example.com.attacker.example",
            "10.0.0.5:7878",
            "",
            "a b",
            "[::1",
            "evil@127.0.0.1",
            "127.0.0.1:7878:1",
        ] {
            assert!(!host_allowed(bad, bound, &public), "{bad}");
        }
        let any: SocketAddr = "0.0.0.0:7878".parse().unwrap();
        assert!(host_allowed("10.0.0.5:7878", any, &[]));
        assert!(!host_allowed("attacker.example:7878", any, &[]));
    }

    #[test]
    fn public_urls_parse() {
        assert_eq!(
            PublicUrl::parse("https://airlock.example.com:8443/ui").unwrap(),
            PublicUrl {
                host: "airlock.example.com".into(),
                https: true
            }
        );
        for bad in [
            "airlock.example.com",
            "ftp://x",
            "https://",
            "https://u@x",
            "https://a b",
        ] {
            assert!(PublicUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        let mut h = HeaderMap::new();
        for (value, want) in [
            ("Bearer abc", Some("abc")),
            ("bearer abc", Some("abc")),
            ("BEARER   abc ", Some("abc")),
            ("Basic abc", None),
            ("Bearer", None),
            ("Bearerabc", None),
        ] {
            h.insert(header::AUTHORIZATION, value.parse().unwrap());
            assert_eq!(bearer(&h), want, "{value}");
        }
    }
}
