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

pub(super) fn port(base: &str) -> &str {
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

/// A loopback listener that counts the connections it sees (it must see none), answering each with `answer`.
pub(super) struct Listener {
    pub(super) base: String,
    seen: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

pub(super) fn listener(answer: impl Fn(&str) -> String + Send + 'static) -> Listener {
    use std::sync::atomic::Ordering;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            seen2.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let _ = s.write_all(answer(&path).as_bytes());
        }
    });
    Listener { base, seen }
}

impl Listener {
    pub(super) fn seen(&self) -> usize {
        self.seen.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Serves the git repositories under `root` over smart HTTP on loopback (`git http-backend` as a CGI program),
/// as a company's git server would.
fn git_http_server(root: &std::path::Path) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let root = root.to_path_buf();
    let backend = {
        let exec = super::util::git(&root, &["--exec-path"]);
        std::path::Path::new(exec.trim()).join("git-http-backend")
    };
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (root, backend) = (root.clone(), backend.clone());
            std::thread::spawn(move || {
                let _ = serve_git(s, &root, &backend);
            });
        }
    });
    format!("{port}")
}

fn serve_git(
    mut s: std::net::TcpStream,
    root: &std::path::Path,
    backend: &std::path::Path,
) -> std::io::Result<()> {
    let mut reader = std::io::BufReader::new(s.try_clone()?);
    loop {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut reader, &mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let (method, target) = (
            parts.next().unwrap_or("").to_owned(),
            parts.next().unwrap_or("").to_owned(),
        );
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            std::io::BufRead::read_line(&mut reader, &mut h)?;
            let h = h.trim_end().to_owned();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let mut body = Vec::new();
        if let Some(len) = header("content-length").and_then(|l| l.parse::<usize>().ok()) {
            body.resize(len, 0);
            reader.read_exact(&mut body)?;
        } else if header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
            loop {
                let mut size = String::new();
                std::io::BufRead::read_line(&mut reader, &mut size)?;
                let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
                let mut chunk = vec![0u8; n + 2];
                reader.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        }
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let mut cgi = std::process::Command::new(backend)
            .env_clear()
            .env("GIT_PROJECT_ROOT", root)
            .env("GIT_HTTP_EXPORT_ALL", "1")
            .env("REQUEST_METHOD", &method)
            .env("PATH_INFO", path)
            .env("QUERY_STRING", query)
            .env("CONTENT_TYPE", header("content-type").unwrap_or_default())
            .env("CONTENT_LENGTH", body.len().to_string())
            .env("GIT_PROTOCOL", header("git-protocol").unwrap_or_default())
            .env(
                "HTTP_CONTENT_ENCODING",
                header("content-encoding").unwrap_or_default(),
            )
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        cgi.stdin.take().unwrap().write_all(&body)?;
        let out = cgi.wait_with_output()?.stdout;
        let split = out.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, 4));
        let split = split.or_else(|| out.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
        let (end, skip) = split.unwrap_or((0, 0));
        let cgi_head = String::from_utf8_lossy(&out[..end]).into_owned();
        let payload = &out[end + skip..];
        let mut status = "200 OK".to_owned();
        let mut response = String::new();
        for h in cgi_head.lines() {
            match h.split_once(':') {
                Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_owned(),
                Some(_) => response.push_str(&format!("{}\r\n", h.trim_end())),
                None => {}
            }
        }
        // Like a real server, it honours `Connection: close` (which airlock's proxy sends).
        let close = header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close"));
        if close {
            response.push_str("Connection: close\r\n");
        }
        s.write_all(
            format!(
                "HTTP/1.1 {status}\r\n{response}Content-Length: {}\r\n\r\n",
                payload.len()
            )
            .as_bytes(),
        )?;
        s.write_all(payload)?;
        if close {
            return Ok(());
        }
    }
}

/// An error body's code.
fn code_of(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text).unwrap_or_default()["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn imports_never_reach_internal_addresses_the_operator_did_not_allow() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // The internal service a forged request would be aimed at: it must see nothing.
    let internal = listener(|_| "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret".into());
    // A server the operator allows, which redirects every request inward.
    let inward = internal.base.clone();
    let redirector = listener(move |path| {
        format!("HTTP/1.1 302 Found\r\nLocation: {inward}{path}\r\nContent-Length: 0\r\n\r\n")
    });
    let redirector_addr = redirector.base.trim_start_matches("http://").to_owned();
    let skills = tmp.path().join("skills");
    let dir = skills.join("plain");
    write(&dir, "SKILL.md", &skill_md("plain", "Says hello.\n"));
    write(&dir, "s.sh", "echo hello\n");
    let server = start(
        &data,
        &[
            "--allow-import",
            &redirector_addr,
            "--allow-local",
            skills.to_str().unwrap(),
        ],
    );
    let own = format!("127.0.0.1:{}", port(&server.base));
    let import = |url: &str| {
        raw(
            &server.base,
            "POST",
            "/api/sources",
            &[("Host", &own), ("Content-Type", "application/json")],
            &serde_json::json!({ "url": url }).to_string(),
        )
    };
    let p = port(&internal.base);
    for url in [
        format!("http://localhost:{p}/admin.git"),
        format!("http://127.0.0.1:{p}/admin.git"),
        format!("http://[::1]:{p}/admin.git"),
        format!("http://0x7f000001:{p}/admin.git"),
        format!("https://localhost:{p}/admin.git"),
    ] {
        let (code, _, text) = import(&url);
        assert_eq!(
            (code, code_of(&text).as_str()),
            (403, "fetch_refused"),
            "{url}: {text}"
        );
        assert!(
            text.contains("private or local") || text.contains("not a valid host"),
            "{url}: {text}"
        );
    }
    // Transports the guard cannot watch are refused outright.
    for url in [
        format!("ssh://git@localhost:{p}/admin.git"),
        format!("git://localhost:{p}/admin.git"),
    ] {
        let (code, _, text) = import(&url);
        assert_eq!(
            (code, code_of(&text).as_str()),
            (403, "fetch_refused"),
            "{url}: {text}"
        );
    }
    // An allowed server's redirect inward is refused too.
    let (code, _, text) = import(&format!("{}/repo.git", redirector.base));
    assert!(redirector.seen() > 0, "the allowed server was not asked");
    assert_eq!((code, code_of(&text).as_str()), (403, "fetch_refused"), "{text}");
    // A run's git target goes through the same guard: the run fails and says why.
    let (code, _, text) = raw(
        &server.base,
        "POST",
        "/api/runs",
        &[("Host", &own), ("Content-Type", "application/json")],
        &serde_json::json!({ "source": dir, "script": "s.sh", "target": format!("http://localhost:{p}/app.git") })
            .to_string(),
    );
    assert_eq!(code, 202, "{text}");
    let run = serde_json::from_str::<serde_json::Value>(&text).unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let t0 = std::time::Instant::now();
    let view = loop {
        let (_, _, text) = raw(
            &server.base,
            "GET",
            &format!("/api/runs/{run}"),
            &[("Host", &own)],
            "",
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        if !matches!(v["status"].as_str(), Some("queued" | "running")) {
            break v;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{v}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        matches!(view["status"].as_str(), Some("failed" | "error")),
        "{view}"
    );
    assert!(view.to_string().contains("refused to fetch"), "{view}");
    assert_eq!(internal.seen(), 0, "an internal address was reached");
}

/// A company git server under a name of its own, serving a repository with the skill `skills/corp`: its port, and
/// the wrapper command under which `git.corp.example` resolves to it (a mount namespace whose /etc/hosts says so).
pub(super) fn corp_git_server(tmp: &std::path::Path) -> (String, Vec<String>) {
    let repos = tmp.join("repos");
    let work = super::util::init_repo(&repos.join("work"));
    write(
        &work,
        "skills/corp/SKILL.md",
        &skill_md("corp", "Formats things.\n"),
    );
    super::util::commit_all(&work, "skill");
    super::util::git(&repos, &["clone", "-q", "--bare", "work", "corp.git"]);
    let port = git_http_server(&repos);
    let hosts = tmp.join("hosts");
    fs_err::write(&hosts, "127.0.0.1 localhost\n127.0.0.1 git.corp.example\n").unwrap();
    let script = format!("mount --bind {} /etc/hosts && exec \"$@\"", hosts.display());
    let wrapper = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        &script,
        "sh",
    ];
    (port, wrapper.iter().map(|w| (*w).to_owned()).collect())
}

#[test]
fn an_internal_git_server_the_operator_allows_by_name_imports() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let (port, wrapper) = corp_git_server(tmp.path());
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let url = format!("http://git.corp.example:{port}/corp.git#:skills/corp");

    // Not allowed: the name resolves to a loopback address, so it is refused.
    let server = super::serve::start_in(&wrapper, &data, &[]);
    let own = format!("127.0.0.1:{}", super::serve_access::port(&server.base));
    let body = serde_json::json!({ "url": url }).to_string();
    let headers = [("Host", own.as_str()), ("Content-Type", "application/json")];
    let (code, _, text) = raw(&server.base, "POST", "/api/sources", &headers, &body);
    assert_eq!((code, code_of(&text).as_str()), (403, "fetch_refused"), "{text}");
    assert!(text.contains("git.corp.example resolved to 127.0.0.1"), "{text}");
    assert!(
        text.contains("--allow-import") || text.contains("--trust-name"),
        "{text}"
    );
    drop(server);

    // Allowed by name: the import goes through and is pinned.
    let server = super::serve::start_in(&wrapper, &data, &["--allow-import", "git.corp.example"]);
    let own = format!("127.0.0.1:{}", super::serve_access::port(&server.base));
    let headers = [("Host", own.as_str()), ("Content-Type", "application/json")];
    let (code, _, text) = raw(&server.base, "POST", "/api/sources", &headers, &body);
    assert_eq!(code, 201, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["commit"].as_str().map(str::len), Some(40), "{v}");
}

/// Errors under `/api/` are JSON whoever makes them: a method a route does not take (405, with `Allow`) and an upload
/// over its limit (413).
#[test]
fn every_api_error_is_json() {
    let tmp = tempfile::tempdir().unwrap();
    let server = start(&tmp.path().join("data"), &[]);
    let own = format!("127.0.0.1:{}", port(&server.base));
    for method in ["TRACE", "PUT", "PATCH"] {
        let (code, head, body) = raw(&server.base, method, "/api/runs", &[("Host", &own)], "");
        assert_eq!(code, 405, "{method}: {head}");
        assert!(head.to_ascii_lowercase().contains("allow:"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        assert_eq!(code_of(&body), "method_not_allowed", "{body}");
    }
    // An upload over 64 MiB: refused as JSON (the client may stop sending once refused).
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let size = 65 * 1024 * 1024;
    let head = format!(
        "POST /api/uploads HTTP/1.1\r\nHost: {own}\r\nContent-Type: application/gzip\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut chunk = vec![0u8; 1 << 20];
    chunk[0] = 0x1f;
    chunk[1] = 0x8b;
    for _ in 0..65 {
        if s.write_all(&chunk).is_err() {
            break;
        }
        chunk[0] = 0;
        chunk[1] = 0;
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    assert_eq!(code_of(body), "too_large", "{body}");
}

/// The API against its own OpenAPI document, with requests schemathesis generates from it (installed by
/// `scripts/test`): no 5xx, no status the document does not name, no answer outside its schema. The server and
/// schemathesis share a network namespace of their own with only a loopback, so a generated URL reaches nothing.
#[test]
fn the_api_keeps_its_documented_contract_under_generated_requests() {
    let Some(schemathesis) = std::env::var_os("AIRLOCK_TEST_SCHEMATHESIS") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "scripts/test installs schemathesis and sets AIRLOCK_TEST_SCHEMATHESIS"
        );
        eprintln!("skipped: AIRLOCK_TEST_SCHEMATHESIS is not set (scripts/test sets it)");
        return;
    };
    if super::util::as_nobody() || !nix::unistd::geteuid().is_root() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let script = r#"set -e
ip link set lo up
"$AIRLOCK" serve --addr 127.0.0.1:38999 --data-dir "$DATA" 2>"$DATA.log" &
server=$!
for _ in $(seq 100); do
  (exec 3<>/dev/tcp/127.0.0.1/38999) 2>/dev/null && break
  sleep 0.1
done
set +e
"$SCHEMATHESIS" run http://127.0.0.1:38999/api/openapi.json --url http://127.0.0.1:38999 -n 10 \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --exclude-path /api/uploads --no-color
code=$?
kill $server
exit $code
"#;
    // Run from the test's own folder: schemathesis keeps a cache where it runs.
    let out = std::process::Command::new("unshare")
        .current_dir(tmp.path())
        .args(["--net", "bash", "-c", script])
        .env("AIRLOCK", env!("CARGO_BIN_EXE_airlock"))
        .env("SCHEMATHESIS", schemathesis)
        .env("DATA", tmp.path().join("data"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("passed"), "{stdout}");
}
