//! Egress policy tests. Every server is on loopback; names are mapped to them with `--connect-to`, never
//! resolved outside this machine.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// A plain HTTP server on loopback that answers `ok` and keeps each request head it saw.
struct Upstream {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

fn read_head(stream: &mut impl Read) -> String {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") && buf.len() < 65536 {
        match stream.read(&mut byte) {
            Ok(1) => buf.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// A server on loopback: `answer` handles one connection, keeping the request head it read in the log (before it
/// answers, so the head is there once the client has its answer).
fn upstream(answer: impl Fn(TcpStream, &Mutex<Vec<String>>) + Send + Sync + 'static) -> Upstream {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (log, answer) = (seen.clone(), Arc::new(answer));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (log, answer) = (log.clone(), answer.clone());
            std::thread::spawn(move || answer(stream, &log));
        }
    });
    Upstream { port, seen }
}

fn http_upstream() -> Upstream {
    upstream(|mut stream, log| {
        log.lock().unwrap().push(read_head(&mut stream));
        let _ =
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nupstream\n");
    })
}

/// A TLS server for `api.test` on loopback with a certificate from a test CA; returns the CA's PEM path.
fn tls_upstream(dir: &std::path::Path) -> (Upstream, std::path::PathBuf) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "airlock test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["api.test".to_owned()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let ca_path = dir.join("ca.pem");
    fs_err::write(&ca_path, ca.pem()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    let config = Arc::new(config);
    let server = upstream(move |stream, log| {
        let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, stream);
        log.lock().unwrap().push(read_head(&mut tls));
        let _ = tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nmodel\n");
        tls.conn.send_close_notify();
        let _ = tls.flush();
    });
    (server, ca_path)
}

fn exec(args: &[&str], script: &str, env: &[(&str, &str)]) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_airlock"));
    cmd.arg("exec")
        .arg("--json")
        .args(args)
        .args(["--", "/bin/bash", "-c", script]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no record ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn attempts(record: &Value) -> Vec<Value> {
    record["network"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["decision"] != "local")
        .cloned()
        .collect()
}

fn find<'a>(list: &'a [Value], protocol: &str, destination: &str) -> &'a Value {
    list.iter()
        .find(|a| a["protocol"] == protocol && a["destination"] == destination)
        .unwrap_or_else(|| panic!("no {protocol} attempt to {destination} in {list:#?}"))
}

#[test]
fn allowed_host_works_with_and_without_proxy_variables() {
    let up = http_upstream();
    let map = format!("allowed.test:80=127.0.0.1:{}", up.port);
    let record = exec(
        &["--allow-net", "allowed.test:80", "--connect-to", &map],
        "curl -sS http://allowed.test/via-proxy; curl -sS --noproxy '*' http://allowed.test/direct; \
         python3 -c 'import socket; s = socket.create_connection((\"allowed.test\", 80)); \
         s.sendall(b\"GET /raw HTTP/1.0\\r\\nHost: allowed.test\\r\\n\\r\\n\"); print(s.recv(100).split(b\"\\r\\n\")[0].decode())'",
        &[],
    );
    assert_eq!(record["status"], "succeeded", "{record}");
    assert_eq!(record["network_allowed"], true);
    let out = record["stdout"].as_str().unwrap();
    assert_eq!(out.matches("upstream").count(), 2, "{out}");
    assert!(out.contains("HTTP/1.1 200 OK"), "{out}");
    let seen = up.seen.lock().unwrap().clone();
    let paths: Vec<_> = seen
        .iter()
        .map(|h| h.lines().next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        paths,
        [
            "GET /via-proxy HTTP/1.1",
            "GET /direct HTTP/1.1",
            "GET /raw HTTP/1.1"
        ]
    );
    let list = attempts(&record);
    let http: Vec<_> = list.iter().filter(|a| a["protocol"] == "http").collect();
    assert_eq!(http.len(), 3, "{list:#?}");
    for a in http {
        assert_eq!(a["decision"], "allowed");
        assert_eq!(a["rule"], "allowed.test:80");
        assert!(a["bytes_down"].as_u64().unwrap() > 0);
        assert!(a["bytes_up"].as_u64().unwrap() > 0);
    }
    // The program that ignored the proxy variables looked the name up through the DNS stub.
    assert_eq!(find(&list, "dns", "allowed.test (A)")["decision"], "allowed");
}

#[test]
fn everything_else_is_refused_and_recorded() {
    let up = http_upstream();
    let tls_port = TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let maps = [
        format!("allowed.test:80=127.0.0.1:{}", up.port),
        format!(
            "allowed.test:443=127.0.0.1:{}",
            tls_port.local_addr().unwrap().port()
        ),
    ];
    let script = format!(
        r#"
curl -sS -o /dev/null -w "denied %{{http_code}}\n" http://denied.test/
curl -sS --noproxy '*' -m 5 -o /dev/null http://10.9.8.7/ ; echo "raw ip $?"
curl -sS --noproxy '*' -m 5 -o /dev/null http://127.0.0.1:{up}/ ; echo "host loopback $?"
python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"leak", ("198.51.100.7", 443))' 2>&1 | tail -1
python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"leak", ("127.0.0.1", {udp}))'
getent hosts secret-data.denied.test; echo "dns $?"
curl -sS -o /dev/null -w "rebind %{{http_code}}\n" --noproxy '' -x http://127.0.0.1:3128 http://localhost:{up}/
curl -sS -o /dev/null -w "forged %{{http_code}}\n" -H "Host: denied.test" http://allowed.test/
python3 - <<'EOF'
import socket, ssl
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
print("connect", s.recv(100).split(b"\r\n")[0].decode())
ctx = ssl.create_default_context()
try:
    ctx.wrap_socket(s, server_hostname="other.test")
    print("sni handshake done")
except Exception as e:
    print("sni refused", type(e).__name__)
EOF
"#,
        up = up.port,
        udp = udp_port
    );
    let record = exec(
        &[
            "--allow-net",
            "allowed.test",
            "--allow-net",
            "localhost",
            "--connect-to",
            &maps[0],
            "--connect-to",
            &maps[1],
        ],
        &script,
        &[],
    );
    let out = record["stdout"].as_str().unwrap().to_owned();
    assert!(out.contains("denied 403"), "{out}");
    assert!(out.contains("raw ip 7"), "{out}");
    assert!(out.contains("host loopback 7"), "{out}");
    assert!(out.contains("Network is unreachable"), "{out}");
    assert!(out.contains("dns 2"), "{out}");
    assert!(out.contains("rebind 403"), "{out}");
    assert!(out.contains("forged 403"), "{out}");
    assert!(out.contains("connect HTTP/1.1 200"), "{out}");
    assert!(out.contains("sni refused"), "{out}");
    assert!(
        up.seen.lock().unwrap().is_empty(),
        "a refused request reached the server"
    );
    udp.set_nonblocking(true).unwrap();
    assert!(
        udp.recv(&mut [0u8; 16]).is_err(),
        "a UDP datagram reached the host"
    );

    let list = attempts(&record);
    let denied = |protocol: &str, destination: &str| {
        let a = find(&list, protocol, destination);
        assert_eq!(a["decision"], "denied", "{a}");
        a["reason"].as_str().unwrap().to_owned()
    };
    assert!(denied("http", "denied.test:80").contains("not on the allowlist"));
    denied("tcp", "10.9.8.7:80");
    denied("udp", "198.51.100.7:443");
    assert!(denied("dns", "secret-data.denied.test (A)").contains("NXDOMAIN"));
    assert!(denied("http", &format!("localhost:{}", up.port)).contains("rebinding"));
    assert!(list
        .iter()
        .any(|a| a["destination"] == "allowed.test:80"
            && a["reason"].as_str().unwrap().contains("Host header")));
    assert!(list.iter().any(|a| a["protocol"] == "https-connect"
        && a["decision"] == "denied"
        && a["reason"].as_str().unwrap().contains("other.test")));
    // The raw loopback connect never left the sandbox: its own loopback has nothing on that port.
    assert!(record["network"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["destination"] == format!("127.0.0.1:{}", up.port) && a["decision"] == "local"));
}

#[test]
fn injected_secret_reaches_the_server_and_never_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let (up, ca) = tls_upstream(dir.path());
    let map = format!("api.test:443=127.0.0.1:{}", up.port);
    let secret = "sk-test-7f3a9c-SECRET-VALUE";
    // The scan builds the needle from two halves so that no command line holds it whole.
    let script = r#"
curl -sS -X POST -H 'content-type: application/json' -d '{"q":1}' http://api.test/v1/messages
curl -sS -o /dev/null -w 'tls %{http_code}\n' https://api.test/v1/ping
python3 - <<'EOF'
import glob, os
needle = ("7f3a" + "9c").encode()
env = sum(needle in f"{k}={v}".encode() for k, v in os.environ.items())
proc = 0
for p in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
    try:
        proc += needle in open(p, "rb").read()
    except OSError:
        pass
files = 0
for top in ["/home", "/tmp", "/etc", "/workspace"]:
    for root, dirs, names in os.walk(top):
        for n in names:
            try:
                files += needle in open(os.path.join(root, n), "rb").read()
            except OSError:
                pass
print(f"env={env} proc={proc} files={files}")
EOF
"#;
    let record = exec(
        &[
            "--allow-net",
            "api.test:443",
            "--connect-to",
            &map,
            "--secret",
            "api.test=x-api-key:AIRLOCK_TEST_API_KEY",
            "--egress-ca",
            ca.to_str().unwrap(),
        ],
        script,
        &[("AIRLOCK_TEST_API_KEY", secret)],
    );
    let out = record["stdout"].as_str().unwrap();
    // The operator's CA is in the sandbox's bundle, so a program that checks TLS itself trusts the server.
    assert_eq!(
        out, "model\ntls 200\nenv=0 proc=0 files=0\n",
        "{}",
        record["stderr"]
    );
    let seen = up.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].starts_with("POST /v1/messages HTTP/1.1"), "{}", seen[0]);
    assert!(seen[0].contains(&format!("x-api-key: {secret}")), "{}", seen[0]);
    let a = find(&attempts(&record), "http", "api.test:80").clone();
    assert_eq!(a["secret_injected"], true);
    assert_eq!(a["decision"], "allowed");
    assert!(
        !record.to_string().contains("7f3a9c"),
        "the secret is in the record"
    );
}

#[test]
fn bad_policies_are_usage_errors_and_no_policy_means_loopback_only() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_airlock"))
            .arg("exec")
            .args(args)
            .args(["--", "/bin/true"])
            .output()
            .unwrap()
    };
    for bad in [
        &["--allow-net", "bad host"][..],
        &["--allow-net", "10.0.0.0/99"],
        &["--net-preset", "everything"],
        &["--connect-to", "nonsense"],
        &["--secret", "api.test=x-api-key:AIRLOCK_UNSET_VARIABLE_FOR_TEST"],
    ] {
        let out = run(bad);
        assert_eq!(
            out.status.code(),
            Some(125),
            "{bad:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let record = exec(&[], "curl -sS -m 3 http://192.0.2.1/ ; echo rc=$?", &[]);
    assert_eq!(record["network_allowed"], false);
    assert!(record["stdout"].as_str().unwrap().contains("rc=7"));
    let a = find(&attempts(&record), "tcp/udp", "192.0.2.1:80").clone();
    assert_eq!(a["decision"], "denied");
}

#[test]
fn a_policy_file_allows_and_denies_like_the_flags() {
    let up = http_upstream();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("net.toml");
    fs_err::write(
        &policy,
        format!(
            "presets = [\"none\"]\nallow = [\"*.pkg.test:80\"]\ndeny = [\"evil.pkg.test\"]\nconnect_to = [\"a.pkg.test:80=127.0.0.1:{0}\", \"evil.pkg.test:80=127.0.0.1:{0}\"]\n",
            up.port
        ),
    )
    .unwrap();
    let record = exec(
        &["--net-policy", policy.to_str().unwrap()],
        "curl -sS -o /dev/null -w 'a %{http_code}\\n' http://a.pkg.test/; \
         curl -sS -o /dev/null -w 'evil %{http_code}\\n' http://evil.pkg.test/",
        &[],
    );
    let out = record["stdout"].as_str().unwrap();
    assert!(out.contains("a 200") && out.contains("evil 403"), "{out}");
    let list = attempts(&record);
    assert_eq!(find(&list, "http", "a.pkg.test:80")["rule"], "*.pkg.test:80");
    assert_eq!(find(&list, "http", "evil.pkg.test:80")["rule"], "evil.pkg.test");
    assert_eq!(up.seen.lock().unwrap().len(), 1);
    fs_err::write(&policy, "allow = [\"x.test\"]\nunknown = 1\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "exec",
            "--net-policy",
            policy.to_str().unwrap(),
            "--",
            "/bin/true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown"));
}

/// A company proxy on loopback: answers an absolute-form request itself (`proxied <request line>`), and after a
/// `CONNECT` plays the far end of the tunnel (`tunnel <first line>`). Keeps each head it read.
fn company_proxy() -> Upstream {
    upstream(|mut stream, log| {
        let head = read_head(&mut stream);
        log.lock().unwrap().push(head.clone());
        let first = head.lines().next().unwrap_or_default().to_owned();
        if first.starts_with("CONNECT ") {
            let _ = stream.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            while !line.ends_with(b"\n") && line.len() < 1000 {
                match stream.read(&mut byte) {
                    Ok(1) => line.push(byte[0]),
                    _ => break,
                }
            }
            let answer = format!("tunnel {}", String::from_utf8_lossy(&line));
            let _ = stream.write_all(answer.as_bytes());
        } else {
            let body = format!("proxied {first}\n");
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    })
}

#[test]
fn an_upstream_proxy_carries_allowed_traffic_and_no_proxy_names_go_direct() {
    let proxy = company_proxy();
    let direct = http_upstream();
    let password = "s3cret-proxy-pass";
    let proxy_url = format!("http://alice:{password}@127.0.0.1:{}", proxy.port);
    let env = [
        ("HTTP_PROXY", proxy_url.as_str()),
        ("HTTPS_PROXY", proxy_url.as_str()),
        ("NO_PROXY", "localhost,.internal.test"),
    ];
    let local = format!("localhost:{}", direct.port);
    let script = format!(
        "curl -sS http://far.test/page; \
         python3 -c 'import socket; s = socket.create_connection((\"far.test\", 9000)); s.sendall(b\"hello over tcp\\n\"); print(s.makefile(\"rb\").read().decode().strip())'; \
         curl -sS --noproxy \"\" -x http://127.0.0.1:3128 http://{local}/near; echo; \
         env; tr \"\\0\" \"\\n\" < /proc/self/environ; cat /etc/pip.conf 2>/dev/null; true"
    );
    let args = [
        "--allow-net",
        "far.test:80",
        "--allow-net",
        "far.test:9000",
        "--allow-net",
        &local,
        "--trust-name",
        "localhost",
    ];
    let record = exec(&args, &script, &env);
    let out = record["stdout"].as_str().unwrap();
    assert!(
        out.contains("proxied GET http://far.test/page HTTP/1.1"),
        "{out}\n{record:#}"
    );
    assert!(out.contains("tunnel hello over tcp"), "{out}");
    assert!(out.contains("upstream"), "the NO_PROXY name went direct: {out}");
    // The proxy got airlock's credentials; nothing of them is inside the sandbox or in the record.
    let seen = proxy.seen.lock().unwrap().clone();
    let basic = "Proxy-Authorization: Basic YWxpY2U6czNjcmV0LXByb3h5LXBhc3M=";
    assert!(
        seen.iter()
            .any(|h| h.starts_with("GET http://far.test/page ") && h.contains(basic)),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|h| h.starts_with("CONNECT far.test:9000 ") && h.contains(basic)),
        "{seen:#?}"
    );
    assert!(!seen.iter().any(|h| h.contains("near")), "{seen:#?}");
    let text = record.to_string();
    assert!(
        !text.contains(password) && !text.contains("YWxpY2U6czNjcmV0"),
        "{text}"
    );
    assert!(!out.contains("alice"), "{out}");
    // The record says which attempts went through the proxy.
    let list = attempts(&record);
    let via = format!("upstream proxy 127.0.0.1:{} (with credentials)", proxy.port);
    assert_eq!(find(&list, "http", "far.test:80")["via"], via.as_str());
    assert_eq!(find(&list, "tcp", "far.test:9000")["via"], via.as_str());
    let near = find(&list, "http", &local);
    assert_eq!(near["decision"], "allowed", "{near:#}");
    assert!(near.get("via").is_none(), "{near:#}");
    // Without the trust, the same name is refused as DNS rebinding, and the reason says how to trust it.
    let record = exec(&args[..6], &script, &env);
    let near = find(&attempts(&record), "http", &local).clone();
    assert_eq!(near["decision"], "denied", "{near:#}");
    assert!(
        near["reason"]
            .as_str()
            .unwrap()
            .contains("--trust-name localhost"),
        "{near:#}"
    );
    // An explicit `--upstream-proxy none` goes direct (and far.test then does not resolve).
    let mut none = args.to_vec();
    none.extend(["--upstream-proxy", "none"]);
    let record = exec(&none, "curl -sS http://far.test/page; true", &env);
    let far = find(&attempts(&record), "http", "far.test:80").clone();
    assert_eq!(far["decision"], "denied", "{far:#}");
    assert!(far.get("via").is_none());
}

#[test]
fn installs_in_a_run_reach_the_mirrors_through_the_package_registries_preset() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let pypi = super::environment::index(tmp.path());
    let npm = super::environment::npm_registry(tmp.path());
    let skill = tmp.path().join("installer");
    super::util::write(
        &skill,
        "SKILL.md",
        &super::util::skill_md(
            "installer",
            "Installs its tools.\n\nRun `bash scripts/setup.sh`.\n",
        ),
    );
    super::util::write(
        &skill,
        "scripts/setup.sh",
        "set -e\ncd /tmp\npip install --quiet --target /tmp/py greetlib\nPYTHONPATH=/tmp/py python3 -c 'import greetlib; print(greetlib.greet())'\nnpm install --no-audit --no-fund --loglevel error greet-node >/dev/null\nnode -e \"console.log(require('/tmp/node_modules/greet-node')())\"\n",
    );
    let pypi_map = format!("pypi.test:80=127.0.0.1:{}", pypi.port);
    let npm_map = format!("npm.test:80=127.0.0.1:{}", npm.port);
    let r = super::util::airlock(
        &data,
        &[
            "run",
            "--json",
            skill.to_str().unwrap(),
            "--script",
            "scripts/setup.sh",
            "--net-preset",
            "package-registries",
            "--mirror",
            "pypi=http://pypi.test/simple/",
            "--mirror",
            "npm=http://npm.test/",
            "--connect-to",
            &pypi_map,
            "--connect-to",
            &npm_map,
        ],
    );
    let rec = r.json();
    let out = rec["stdout"].as_str().unwrap_or_default();
    assert_eq!(
        rec["status"], "succeeded",
        "{out}\n{}\n{}",
        rec["stderr"], r.stderr
    );
    assert!(
        out.contains("hello from greetlib") && out.contains("hello from greet-node"),
        "{out}"
    );
    let managers: Vec<&str> = rec["installs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["manager"].as_str())
        .collect();
    assert!(
        managers.contains(&"pip") && managers.contains(&"npm"),
        "{:#}",
        rec["installs"]
    );
    let net = rec["network"].as_array().unwrap();
    for host in ["pypi.test", "npm.test"] {
        let a = net
            .iter()
            .find(|n| n["host"] == host && n["decision"] == "allowed")
            .unwrap_or_else(|| panic!("no request to {host}: {net:#?}"));
        assert!(a["rule"].as_str().unwrap().starts_with("mirror "), "{a:#}");
    }
    // A mirror without the preset opens nothing.
    let r = super::util::airlock(
        &data,
        &[
            "run",
            "--json",
            skill.to_str().unwrap(),
            "--script",
            "scripts/setup.sh",
            "--mirror",
            "pypi=http://pypi.test/simple/",
            "--connect-to",
            &pypi_map,
        ],
    );
    assert_eq!(r.code, 125, "{}", r.stderr);
    assert!(r.stderr.contains("need a host allowed"), "{}", r.stderr);
    let rec = super::util::airlock(
        &data,
        &[
            "run",
            "--json",
            skill.to_str().unwrap(),
            "--script",
            "scripts/setup.sh",
            "--mirror",
            "pypi=http://pypi.test/simple/",
        ],
    )
    .json();
    assert_eq!(rec["network_allowed"], false, "{rec:#}");
    assert_eq!(rec["status"], "failed", "{rec:#}");
    assert!(
        !rec["network"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["decision"] == "allowed"),
        "{:#}",
        rec["network"]
    );
}

#[test]
fn doctor_says_where_traffic_leaves_and_never_the_proxy_password() {
    let doctor = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_airlock"));
        cmd.arg("doctor")
            .env_remove("HTTPS_PROXY")
            .env_remove("https_proxy")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy");
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    };
    assert!(doctor(&[]).contains("egress: direct"));
    let out = doctor(&[("HTTPS_PROXY", "http://alice:hunter2-pass@proxy.corp:3128")]);
    assert!(
        out.contains("through the upstream proxy (HTTPS and other TCP: proxy.corp:3128 (with credentials)"),
        "{out}"
    );
    assert!(!out.contains("hunter2"), "{out}");
    let out = doctor(&[("HTTPS_PROXY", "socks5://proxy.corp:1080")]);
    assert!(out.contains("MISSING egress: invalid upstream proxy"), "{out}");
}

#[test]
fn a_loopback_port_named_in_the_policy_is_the_hosts_service() {
    let up = http_upstream();
    let allow = format!("127.0.0.1:{}", up.port);
    let script = format!(
        "curl -sS --noproxy '*' http://127.0.0.1:{0}/host-service; echo; \
         curl -sS -m 3 --noproxy '*' http://127.0.0.1:{1}/other; echo rc=$?",
        up.port,
        up.port.wrapping_add(1).max(1024)
    );
    // The same connect from a thread that is not the process's main one (as in Bun, Java or Go clients).
    let script = format!(
        "{script}; python3 -c 'import socket, threading\n\
         def go():\n    s = socket.create_connection((\"127.0.0.1\", {0}))\n    \
         s.sendall(b\"GET /from-a-thread HTTP/1.0\\r\\n\\r\\n\")\n    \
         print(\"thread\", s.recv(100).split(b\"\\r\\n\")[0].decode())\n\
         t = threading.Thread(target=go); t.start(); t.join()'",
        up.port
    );
    let record = exec(&["--allow-net", &allow], &script, &[]);
    let out = record["stdout"].as_str().unwrap();
    assert!(out.starts_with("upstream"), "{out}\n{record:#}");
    assert!(out.contains("thread HTTP/1.1 200 OK"), "{out}\n{record:#}");
    // Any other loopback port stays the sandbox's own (nothing listens there).
    assert!(out.contains("rc=7"), "{out}");
    let seen = up.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(seen[0].starts_with("GET /host-service "), "{seen:#?}");
    assert!(seen[1].starts_with("GET /from-a-thread "), "{seen:#?}");
    let a = find(&attempts(&record), "tcp", &allow).clone();
    assert_eq!(a["decision"], "allowed", "{a:#}");
    assert_eq!(a["rule"], allow.as_str(), "{a:#}");
    // Without the rule the same connect stays inside the sandbox.
    let record = exec(
        &["--allow-net", "example.test:443"],
        &format!(
            "curl -sS -m 3 --noproxy '*' http://127.0.0.1:{}/x; echo rc=$?",
            up.port
        ),
        &[],
    );
    assert!(record["stdout"].as_str().unwrap().contains("rc=7"), "{record:#}");
    assert_eq!(up.seen.lock().unwrap().len(), 2);
}
