//! Who may use `airlock serve`, over real HTTP on loopback: a request sent to a name that is not this server's
//! (DNS rebinding) is refused, the session cookie is not the token and ends at logout, the bearer scheme is read
//! in any case, and imports never reach internal addresses the operator did not allow.

use std::io::{Read, Write};
use std::time::Duration;

use super::serve::start;
use super::util::{skill_md, write};

/// One raw HTTP/1.1 request with the headers given (`Host` among them), as a page on another domain would send
/// it: (status, head, body).
fn raw(base: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn port(base: &str) -> &str {
    base.rsplit(':').next().unwrap()
}

#[test]
fn a_rebound_dns_name_cannot_read_or_drive_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let skills = tmp.path().join("skills");
    let dir = skills.join("secret-project");
    write(&dir, "SKILL.md", &skill_md("secret-project", "Reads.\n"));
    write(&dir, ".env", "API_KEY=sk-live-do-not-leak\n");
    let server = start(&data, &["--allow-local", skills.to_str().unwrap()]);
    let p = port(&server.base);
    let evil_host = format!("attacker.example:{p}");
    let evil_origin = format!("http://attacker.example:{p}");
    let import = format!("{{\"url\": {}}}", serde_json::json!(dir.to_str().unwrap()));

    // The page at attacker.example (now resolving to 127.0.0.1) is same-origin to the browser: it sends its own
    // name as Host and Origin. Nothing is read, imported or started.
    for (method, path, body) in [
        ("GET", "/api/sources", ""),
        ("GET", "/api/runs", ""),
        ("GET", "/", ""),
        ("GET", "/metrics", ""),
        ("POST", "/api/sources", import.as_str()),
        ("POST", "/api/runs", "{\"source\": \"x\"}"),
    ] {
        let (code, head, text) = raw(
            &server.base,
            method,
            path,
            &[
                ("Host", &evil_host),
                ("Origin", &evil_origin),
                ("Content-Type", "application/json"),
            ],
            body,
        );
        assert_eq!(code, 421, "{method} {path}: {head}\n{text}");
        assert!(text.contains("unknown_host"), "{text}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
    }
    // Nothing was imported by those requests.
    let (code, _, list) = raw(
        &server.base,
        "GET",
        "/api/sources",
        &[("Host", &format!("127.0.0.1:{p}"))],
        "",
    );
    assert_eq!(code, 200);
    assert_eq!(list.trim(), "[]", "{list}");

    // The same requests under the server's own names work.
    for host in [
        format!("127.0.0.1:{p}"),
        format!("localhost:{p}"),
        format!("[::1]:{p}"),
    ] {
        let (code, _, text) = raw(&server.base, "GET", "/api/runs", &[("Host", &host)], "");
        assert_eq!(code, 200, "{host}: {text}");
    }
    let own = format!("localhost:{p}");
    let (code, _, text) = raw(
        &server.base,
        "POST",
        "/api/sources",
        &[
            ("Host", &own),
            ("Origin", &format!("http://{own}")),
            ("Content-Type", "application/json"),
        ],
        &import,
    );
    assert_eq!(code, 201, "{text}");
    let id = serde_json::from_str::<serde_json::Value>(&text).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The secret the rebinding page was after stays out of its reach.
    let (code, _, text) = raw(
        &server.base,
        "GET",
        &format!("/sources/{id}/file?path=.env"),
        &[("Host", &evil_host)],
        "",
    );
    assert_eq!(code, 421);
    assert!(!text.contains("sk-live"), "{text}");
}

#[test]
fn a_public_url_names_the_host_and_makes_the_session_cookie_secure() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let token_file = tmp.path().join("token");
    fs_err::write(&token_file, "s3cret-token-value\n").unwrap();
    let server = start(
        &data,
        &[
            "--token-file",
            token_file.to_str().unwrap(),
            "--public-url",
            "https://airlock.example.com",
        ],
    );
    let p = port(&server.base);
    let public = "airlock.example.com";
    let form = [("Content-Type", "application/x-www-form-urlencoded")];

    // Without a token, any name but the public one and the loopback ones is refused, logged in or not.
    let (code, _, _) = raw(&server.base, "GET", "/login", &[("Host", "attacker.example")], "");
    assert_eq!(code, 421);

    // Logging in through the public name: the cookie is a session id, not the token, and Secure (https).
    let (code, head, _) = raw(
        &server.base,
        "POST",
        "/login",
        &[("Host", public), form[0]],
        "token=s3cret-token-value",
    );
    assert_eq!(code, 303, "{head}");
    let cookie_line = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .unwrap()
        .to_owned();
    assert!(!cookie_line.contains("s3cret"), "{cookie_line}");
    for attr in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
        assert!(cookie_line.contains(attr), "{attr} missing: {cookie_line}");
    }
    let session = cookie_line
        .split_once(':')
        .unwrap()
        .1
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(session.len(), "airlock_session=".len() + 64, "{session}");

    // Over loopback (plain HTTP) the cookie is not Secure, or the browser would never send it back.
    let own = format!("127.0.0.1:{p}");
    let (_, head, _) = raw(
        &server.base,
        "POST",
        "/login",
        &[("Host", &own), form[0]],
        "token=s3cret-token-value",
    );
    assert!(
        head.contains("airlock_session=") && !head.contains("Secure"),
        "{head}"
    );

    // The session opens the pages and the API.
    let (code, _, page) = raw(
        &server.base,
        "GET",
        "/",
        &[("Host", public), ("Cookie", &session)],
        "",
    );
    assert_eq!(code, 200);
    assert!(page.contains("Log out"), "{page}");
    let (code, _, _) = raw(
        &server.base,
        "GET",
        "/api/runs",
        &[("Host", public), ("Cookie", &session)],
        "",
    );
    assert_eq!(code, 200);
    // The token itself as a cookie is no session.
    let (code, _, _) = raw(
        &server.base,
        "GET",
        "/api/runs",
        &[("Host", public), ("Cookie", "airlock_session=s3cret-token-value")],
        "",
    );
    assert_eq!(code, 401);

    // Logout ends the session on the server, not only in the browser.
    let (code, head, _) = raw(
        &server.base,
        "POST",
        "/logout",
        &[
            ("Host", public),
            ("Origin", "https://airlock.example.com"),
            ("Cookie", &session),
            form[0],
        ],
        "",
    );
    assert_eq!(code, 303, "{head}");
    assert!(head.contains("Max-Age=0"), "{head}");
    let (code, _, _) = raw(
        &server.base,
        "GET",
        "/api/runs",
        &[("Host", public), ("Cookie", &session)],
        "",
    );
    assert_eq!(code, 401);
    let (code, head, _) = raw(
        &server.base,
        "GET",
        "/",
        &[("Host", public), ("Cookie", &session)],
        "",
    );
    assert_eq!(code, 303, "{head}");

    // The bearer scheme is read in any case.
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let auth = format!("{scheme} s3cret-token-value");
        let (code, _, _) = raw(
            &server.base,
            "GET",
            "/api/runs",
            &[("Host", &own), ("Authorization", &auth)],
            "",
        );
        assert_eq!(code, 200, "{scheme}");
    }
}
