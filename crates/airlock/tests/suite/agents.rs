//! `--agent claude` and `--agent codex` with the real CLIs (installed from the npm registry by `scripts/setup`), end
//! to end:
//! a fake model API on loopback, reached through airlock's egress (the name mapped with `--connect-to`, a test CA
//! with `--egress-ca`, the key added by the proxy), answers with a canned tool call that makes the agent run the
//! skill's script.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

use super::util::{airlock, skill_md, write};

/// The fake Anthropic Messages API: answers the first request that offers the Bash tool with a call of the
/// skill's script, every later one with text; logs each request (path, headers, body) as a JSON line.
const FAKE_API: &str = r#"
import http.server, json, ssl, sys
port_file, log_path, cert, key, command = sys.argv[1:6]
log = open(log_path, "a")
def sse(events):
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()
def anthropic(req):
    if any(isinstance(m.get("content"), list) and any(c.get("type") == "tool_result" for c in m["content"])
           for m in req.get("messages", [])) or not any(t.get("name") == "Bash" for t in req.get("tools", [])):
        block, stop = {"type": "text", "text": "Done."}, "end_turn"
    else:
        block = {"type": "tool_use", "id": "toolu_airlock", "name": "Bash", "input": {"command": command, "description": "run the skill"}}
        stop = "tool_use"
    if not req.get("stream"):
        return "application/json", json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "model": req.get("model"),
            "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
    start = dict(block, input={}) if block["type"] == "tool_use" else {"type": "text", "text": ""}
    delta = ({"type": "input_json_delta", "partial_json": json.dumps(block["input"])} if block["type"] == "tool_use"
             else {"type": "text_delta", "text": block["text"]})
    return "text/event-stream", sse([
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
         "model": req.get("model"), "content": [], "stop_reason": None, "stop_sequence": None,
         "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])
def openai(req):
    if any(i.get("type") in ("custom_tool_call_output", "function_call_output") for i in req.get("input", [])):
        items = [{"type": "message", "role": "assistant", "id": "msg_1", "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}]
    else:
        items = [{"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_airlock", "name": "exec", "namespace": "functions",
                  "status": "completed", "input": "const r = await tools.exec_command({cmd: " + json.dumps(command) +
                  ", login: false, yield_time_ms: 20000});\ntext(r.output);"}]
    events = [("response.created", {"type": "response.created", "response": {"id": "resp_1"}})]
    events += [("response.output_item.done", {"type": "response.output_item.done", "output_index": n, "item": it}) for n, it in enumerate(items)]
    events.append(("response.completed", {"type": "response.completed", "response": {"id": "resp_1", "output": items,
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}}}))
    return "text/event-stream", sse(events)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def reply(self, status, ctype, data):
        self.send_response(status); self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_GET(self):
        self.reply(404, "application/json", b"{}")
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        headers = {k.lower(): v for k, v in self.headers.items()}
        log.write(json.dumps({"path": self.path, "headers": headers, "body": body.decode("utf-8", "replace")}) + "\n"); log.flush()
        req = json.loads(body or b"{}")
        if "count_tokens" in self.path:
            return self.reply(200, "application/json", b'{"input_tokens": 10}')
        self.reply(200, *(openai(req) if self.path.startswith("/v1/responses") else anthropic(req)))
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(port_file, "w").write(str(srv.server_address[1]))
srv.serve_forever()
"#;

struct FakeApi {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
    ca: std::path::PathBuf,
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl FakeApi {
    fn requests(&self) -> Vec<Value> {
        fs_err::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The fake API for `host`, with a certificate from a fresh test CA.
fn fake_api(dir: &Path, host: &str, command: &str) -> FakeApi {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "airlock agent test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec![host.to_owned()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let paths = [
        "ca.pem",
        "cert.pem",
        "key.pem",
        "api.py",
        "port",
        "requests.jsonl",
    ]
    .map(|n| dir.join(n));
    fs_err::write(&paths[0], ca.pem()).unwrap();
    fs_err::write(&paths[1], cert.pem()).unwrap();
    fs_err::write(&paths[2], key.serialize_pem()).unwrap();
    fs_err::write(&paths[3], FAKE_API).unwrap();
    let child = Command::new("python3")
        .arg(&paths[3])
        .args([&paths[4], &paths[5], &paths[1], &paths[2]])
        .arg(command)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let port = loop {
        if let Some(p) = fs_err::read_to_string(&paths[4])
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break p;
        }
        assert!(t0.elapsed().as_secs() < 20, "the fake API did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    FakeApi {
        child,
        port,
        log: paths[5].clone(),
        ca: paths[0].clone(),
    }
}

/// Whether the real CLI is installed. `scripts/setup` installs it from the npm registry; only when that registry
/// cannot be reached is the test skipped, and it says so. Otherwise a missing CLI fails the test.
fn installed(program: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()));
    if found {
        return true;
    }
    let reachable = Command::new("npm")
        .args(["ping", "--fetch-timeout=10000", "--fetch-retries=0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(!reachable, "`{program}` is not installed: run scripts/setup");
    eprintln!("skipped: `{program}` is not installed and the npm registry cannot be reached to install it");
    false
}

/// One agent preset end to end: the skill installed where the agent looks, a canned tool call that runs its
/// script, the key added by the proxy and never visible inside, every model request in the record.
struct Agent {
    name: &'static str,
    host: &'static str,
    key_var: &'static str,
    /// The header that carries the key, and how the key appears in it.
    header: &'static str,
    bearer: bool,
    skills_dir: &'static str,
    /// Where the model requests go (paths under it carry the real key).
    model_path: &'static str,
    /// Text of the tool result the agent sends back.
    result_marker: &'static str,
}

fn agent_end_to_end(agent: &Agent) {
    if !installed(agent.name) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let skill = tmp.path().join("marker");
    write(
        &skill,
        "SKILL.md",
        &skill_md(
            "marker",
            "Marks the project.\n\nRun `bash scripts/mark.sh` from the project's root.\n",
        ),
    );
    // The script marks the project and looks for the key everywhere it can (the needle is put together inside, so
    // that neither the script nor an argument holds it).
    write(
        &skill,
        "scripts/mark.sh",
        "echo marked > MARKED.txt\npython3 - <<'EOF'\nimport glob, os\n\
         needle = ('sk-airlock-' + 'test-7f3a9c').encode()\n\
         found = any(needle in f'{k}={v}'.encode() for k, v in os.environ.items())\n\
         paths = glob.glob('/proc/[0-9]*/environ') + glob.glob('/proc/[0-9]*/cmdline')\n\
         for top in ['/home', '/tmp', '/etc', '/workspace']:\n\
         \x20   for root, dirs, names in os.walk(top):\n\
         \x20       paths += [os.path.join(root, n) for n in names]\n\
         for p in paths:\n\
         \x20   try:\n\
         \x20       found = found or needle in open(p, 'rb').read()\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         print(f'key-visible={int(found)}')\nEOF\n",
    );
    let command = format!("bash {}/marker/scripts/mark.sh", agent.skills_dir);
    let api = fake_api(tmp.path(), agent.host, &command);
    let connect = format!("{}:443=127.0.0.1:{}", agent.host, api.port);
    let allow = format!("{}:443", agent.host);
    let key = "sk-airlock-test-7f3a9c";
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["run", "--json", skill.to_str().unwrap(), "--agent", agent.name])
        .args(["--allow-net", &allow, "--connect-to", &connect])
        .args(["--egress-ca", api.ca.to_str().unwrap(), "--timeout", "120s"])
        .env("AIRLOCK_DATA_DIR", &data)
        .env(agent.key_var, key)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let record: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    let requests = api.requests();
    let path = |r: &Value| r["path"].as_str().unwrap().to_owned();
    let body = |r: &Value| r["body"].as_str().unwrap().to_owned();
    assert_eq!(record["status"], "succeeded", "{record:#}\n{requests:#?}");
    // The skill was found where the agent looks for skills: it told the model about it.
    let model: Vec<&Value> = requests
        .iter()
        .filter(|r| path(r).starts_with(agent.model_path))
        .collect();
    assert!(
        model
            .iter()
            .any(|r| body(r).contains("marker: Test skill marker.")),
        "the skill is not in what the agent sent: {requests:#?}"
    );
    // The script ran from the canned tool call and its change is in the patch.
    assert!(record["changes"].to_string().contains("MARKED.txt"), "{record:#}");
    let patch = tmp.path().join("p.patch");
    let run_id = record["run_id"].as_str().unwrap();
    let r = airlock(&data, &["export", run_id, "--patch", patch.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(fs_err::read_to_string(&patch).unwrap().contains("+marked"));
    // What the script saw went back to the model: the key was nowhere inside.
    let results: String = model
        .iter()
        .map(|r| body(r))
        .filter(|b| b.contains(agent.result_marker))
        .collect();
    assert!(results.contains("key-visible=0"), "{requests:#?}");
    // Every model request reached the API with the real key, added by the proxy; the CLI's own HTTPS requests to the
    // same host (feature flags, telemetry) carry only the stand-in it was given.
    let real = if agent.bearer {
        format!("Bearer {key}")
    } else {
        key.to_owned()
    };
    let stand_in = if agent.bearer {
        "Bearer airlock-proxy-adds-the-real-key".to_owned()
    } else {
        "airlock-proxy-adds-the-real-key".to_owned()
    };
    for r in &requests {
        let expected = if path(r).starts_with(agent.model_path) {
            &real
        } else {
            &stand_in
        };
        assert_eq!(r["headers"][agent.header], expected.as_str(), "{r:#}");
    }
    // Each model request is one plain-HTTP attempt the proxy carried with the key, in the record; the CLI's own HTTPS
    // requests went through recorded tunnels (a tunnel may carry several).
    let attempts: Vec<&Value> = record["network"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["host"] == agent.host && a["decision"] == "allowed")
        .collect();
    let injected = attempts.iter().filter(|a| a["secret_injected"] == true).count();
    assert_eq!(injected, model.len(), "{attempts:#?}\n{requests:#?}");
    let tunnels = attempts
        .iter()
        .filter(|a| a["protocol"] == "https-connect")
        .count();
    assert!(model.len() == requests.len() || tunnels > 0, "{attempts:#?}");
    assert!(!text.contains(key), "the key is in the record");
    // The agent's own model requests are listed apart, not counted as the skill's network use.
    assert_eq!(
        record["observed"]["agent_model"],
        json!([agent.host]),
        "{}",
        record["observed"]
    );
    assert!(
        !record["observed"]["network_allowed"]
            .to_string()
            .contains(agent.host),
        "{}",
        record["observed"]
    );
    assert!(
        record["verdict"]
            .to_string()
            .contains("The agent talked to its model at"),
        "{}",
        record["verdict"]
    );
}

#[test]
fn claude_code_finds_the_skill_runs_its_script_and_never_sees_the_key() {
    agent_end_to_end(&Agent {
        name: "claude",
        host: "api.anthropic.com",
        key_var: "ANTHROPIC_API_KEY",
        header: "x-api-key",
        bearer: false,
        skills_dir: ".claude/skills",
        model_path: "/v1/messages",
        result_marker: "toolu_airlock",
    });
}

#[test]
fn codex_finds_the_skill_runs_its_script_and_never_sees_the_key() {
    agent_end_to_end(&Agent {
        name: "codex",
        host: "api.openai.com",
        key_var: "OPENAI_API_KEY",
        header: "authorization",
        bearer: true,
        skills_dir: ".codex/skills",
        model_path: "/v1/responses",
        result_marker: "call_airlock",
    });
}
