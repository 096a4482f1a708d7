//! A team deployment on one machine, each part its own process: one PostgreSQL cluster (the test's own, in a
//! temporary folder), two API servers sharing it and an S3-compatible bucket, three runners each with its own data folder
//! and token. Runs are submitted across both servers and must finish exactly once each; a runner killed mid-run
//! loses only its run (`failed`, runner lost); a killed API server leaves the other serving every run and its events;
//! a database restart mid-run loses nothing; a wrong, revoked or another runner's token gets nothing; a rolling
//! restart of every API server under a steady stream of runs loses none, and a client following a run through a
//! server that stops carries on through another without missing an event.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::serve::{start, Server};
use super::util::{skill_md, write};

/// An `airlock runner`, killed when dropped; the ids of the runs it started, from its log.
struct Runner {
    name: String,
    child: Child,
    started: Arc<Mutex<Vec<String>>>,
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn runner(name: &str, servers: &[&Server], token: &Path, data: &Path) -> Runner {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_airlock"));
    cmd.arg("runner");
    for s in servers {
        cmd.args(["--server", &s.base]);
    }
    let mut child = cmd
        .arg("--token-file")
        .arg(token)
        .arg("--data-dir")
        .arg(data)
        .args(["--name", name, "--slots", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Arc::new(Mutex::new(Vec::new()));
    let log = started.clone();
    let stderr = child.stderr.take().unwrap();
    let tag = format!("airlock runner {name}: running ");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(id) = line.strip_prefix(&tag) {
                log.lock().unwrap().push(id.to_owned());
            }
        }
    });
    Runner {
        name: name.to_owned(),
        child,
        started,
    }
}

/// A call with a bearer token of the caller's choosing: the status.
fn call_as(server: &Server, token: &str, method: &str, path: &str, body: Option<Value>) -> u16 {
    let r = ureq::request(method, &format!("{}{path}", server.base))
        .timeout(Duration::from_secs(60))
        .set("Authorization", &format!("Bearer {token}"));
    let result = match body {
        Some(b) => r.send_json(b),
        None => r.call(),
    };
    match result {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r.status(),
        Err(e) => panic!("{method} {path}: {e}"),
    }
}

/// Waits for the run to reach a final status on `server`: its view.
fn wait_final(server: &Server, id: &str, limit: Duration) -> Value {
    let t0 = Instant::now();
    loop {
        let (code, v) = server.call("GET", &format!("/api/runs/{id}"), None);
        let status = v["status"].as_str().unwrap_or("");
        if code == 200 && !["queued", "running", "cancelling"].contains(&status) {
            return v;
        }
        assert!(t0.elapsed() < limit, "run {id} never ended: {code} {v}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits up to 30 s for a runner process to exit: its exit code.
fn exit_code(runner: &mut Runner, what: &str) -> Option<i32> {
    let t0 = Instant::now();
    loop {
        if let Some(status) = runner.child.try_wait().unwrap() {
            return status.code();
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_running(server: &Server, id: &str) -> String {
    let t0 = Instant::now();
    loop {
        let (_, v) = server.call("GET", &format!("/api/runs/{id}"), None);
        if v["status"] == "running" {
            if let Some(r) = v["runner"].as_str() {
                return r.to_owned();
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "run {id} never started: {v}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn skill(root: &Path, name: &str, script: &str) -> PathBuf {
    let dir = root.join(name);
    write(&dir, "SKILL.md", &skill_md(name, "Run `scripts/go.sh`.\n"));
    write(&dir, "scripts/go.sh", script);
    dir
}

#[test]
fn two_servers_and_three_runners_share_the_work_and_survive_losing_a_part() {
    if std::env::var_os("AIRLOCK_TEST_AS_NOBODY").is_some() {
        return;
    }
    let cluster = airlock_store::testing::Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let skills = root.join("skills");
    let quick = skill(&skills, "quick", "echo done > DONE.txt\n");
    let slow = skill(&skills, "slow", "echo started\nsleep 60\n");
    let medium = skill(&skills, "medium", "sleep 2\necho done > DONE.txt\n");
    // 40 commands with a 60,000-byte argument each: more events than one request carries.
    let chatty = skill(
        &skills,
        "chatty",
        "long=$(head -c 60000 /dev/zero | tr '\\0' a)\nfor i in $(seq 40); do /bin/echo \"$long\" > /dev/null; done\n",
    );
    let client_token = "client-token-0123456789abcdef";
    let tokens = write_runner_tokens(root, 3);
    write(root, "client-token", client_token);
    let runner_tokens = root.join("runner-tokens");
    // Content files and uploads in an S3-compatible bucket (moto on loopback), which the servers share.
    let s3 = airlock_store::testing::S3::start();
    for (k, v) in s3.env() {
        std::env::set_var(k, v);
    }
    let bucket = s3.url("team");
    let server_args = |_: &str| -> Vec<String> {
        [
            "--database",
            &cluster.url,
            "--runner-tokens",
            runner_tokens.to_str().unwrap(),
            "--object-store",
            &bucket,
            "--lease",
            "3s",
            "--allow-local",
            skills.to_str().unwrap(),
            "--token-file",
            root.join("client-token").to_str().unwrap(),
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let start_server = |name: &str| {
        let args = server_args(name);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut s = start(&root.join(name), &args);
        s.token = Some(client_token.to_owned());
        s
    };
    let a = start_server("server-a");
    let b = start_server("server-b");
    let mut runners: Vec<Runner> = (1..=3)
        .map(|i| {
            runner(
                &format!("r{i}"),
                &[&a, &b],
                &root.join(format!("runner-{i}.token")),
                &root.join(format!("runner-{i}")),
            )
        })
        .collect();
    let quick_run = json!({"source": quick, "script": "scripts/go.sh", "timeout_secs": 120});

    // A wrong token, the clients' token and a runner's token where a client's is asked: nothing.
    let claim = json!({"name": "intruder", "modes": ["sandbox"], "wait_secs": 0});
    assert_eq!(
        call_as(
            &a,
            "wrong-token-0123456789abcdef",
            "POST",
            "/api/runner/claim",
            Some(claim.clone())
        ),
        401
    );
    assert_eq!(
        call_as(&a, client_token, "POST", "/api/runner/claim", Some(claim.clone())),
        401
    );
    assert_eq!(call_as(&a, &tokens[0], "GET", "/api/runs", None), 401);
    let bad = root.join("bad.token");
    write(root, "bad.token", "not-a-runner-token-0123456789");
    let mut intruder = runner("intruder", &[&a], &bad, &root.join("intruder"));
    let code = exit_code(&mut intruder, "a runner with a wrong token kept going");
    assert_eq!(
        code,
        Some(125),
        "a runner whose token is refused exits with airlock's error code"
    );

    // 100 runs across both servers: each finishes exactly once, whichever runner took it.
    let ids: Vec<String> = (0..100)
        .map(|i| if i % 2 == 0 { &a } else { &b }.queue(quick_run.clone()))
        .collect();
    for id in &ids {
        let v = wait_final(&b, id, Duration::from_secs(600));
        assert_eq!(v["status"], "succeeded", "{v}");
        assert_eq!(v["record"]["changes"][0]["path"], "DONE.txt", "{id}");
    }
    // Every mode goes through the runners, a dry run and an inspect run too.
    for mode in ["inspect", "dry-run"] {
        let id = a.queue(json!({"source": quick, "mode": mode}));
        let v = wait_final(&b, &id, Duration::from_secs(120));
        assert_eq!(v["status"], "succeeded", "{mode}: {v}");
        assert_eq!(v["record"]["mode"], mode, "{v}");
    }
    let mut times: HashMap<String, usize> = HashMap::new();
    for r in &runners {
        for id in r.started.lock().unwrap().iter() {
            *times.entry(id.clone()).or_default() += 1;
        }
    }
    for id in &ids {
        assert_eq!(
            times.get(id),
            Some(&1),
            "run {id} was started {:?} times",
            times.get(id)
        );
    }
    let busy = runners
        .iter()
        .filter(|r| !r.started.lock().unwrap().is_empty())
        .count();
    assert!(busy >= 2, "the work was not shared between runners");
    // Either server lists every run, with its record and artifacts (in the shared folder).
    let (_, listed) = b.call("GET", "/api/runs", None);
    let listed: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["run_id"].as_str())
        .collect();
    assert!(ids.iter().all(|id| listed.contains(&id.as_str())));
    let (code, artifacts) = a.call("GET", &format!("/api/runs/{}/artifacts", ids[1]), None);
    assert_eq!(code, 200, "{artifacts}");
    let patch = artifacts
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "patch")
        .unwrap();
    let (code, body) = a.call(
        "GET",
        &format!("/api/runs/{}/artifacts/{}", ids[1], patch["id"].as_str().unwrap()),
        None,
    );
    assert_eq!(code, 200);
    assert!(body.as_str().unwrap().contains("DONE.txt"), "{body}");

    // The servers keep no content file of their own: records and artifacts are in the bucket.
    for server in ["server-a", "server-b"] {
        let objects = root.join(server).join("objects");
        let files = walk(&objects);
        assert!(files.is_empty(), "{server} kept {files:?}");
    }

    // A runner cannot read or change another runner's run.
    let slow_id = a.queue(json!({"source": slow, "script": "scripts/go.sh", "timeout_secs": 120}));
    let holder = wait_running(&a, &slow_id);
    let other = (1..=3).find(|i| format!("r{i}") != holder).unwrap();
    let other_token = &tokens[other - 1];
    for (method, path, body) in [
        ("POST", format!("/api/runner/runs/{slow_id}/lease"), None),
        (
            "POST",
            format!("/api/runner/runs/{slow_id}/events"),
            Some(json!({"events": [{"seq": 1, "name": "state", "data": "{}"}]})),
        ),
        (
            "POST",
            format!("/api/runner/runs/{slow_id}/fail"),
            Some(json!({"message": "forged"})),
        ),
        ("GET", format!("/api/runner/runs/{slow_id}/source"), None),
    ] {
        assert_eq!(
            call_as(&b, other_token, method, &path, body),
            409,
            "{method} {path}"
        );
    }
    assert_eq!(
        b.call("GET", &format!("/api/runs/{slow_id}"), None).1["status"],
        "running"
    );
    // The web UI of the other server follows it too.
    let (code, page) = b.call("GET", &format!("/runs/{slow_id}"), None);
    assert_eq!(code, 200);
    let page = page.as_str().unwrap().to_owned();
    assert!(
        page.contains("data-live") && page.contains(&format!("on runner {holder}")),
        "{page}"
    );

    // Kill -9 the runner that holds it: the run ends `failed` (runner lost) within the lease, and no other
    // runner runs it again; the others go on.
    let victim = runners.iter().position(|r| r.name == holder).unwrap();
    let killed_at = Instant::now();
    runners[victim].child.kill().unwrap();
    let lost = wait_final(&b, &slow_id, Duration::from_secs(30));
    assert_eq!(lost["status"], "failed", "{lost}");
    assert!(
        lost["message"].as_str().unwrap().contains("runner lost"),
        "{lost}"
    );
    assert!(
        killed_at.elapsed() < Duration::from_secs(3 + 10),
        "the lost run was noticed late"
    );
    let events = b.events(&slow_id);
    assert_eq!(events.last().unwrap().0, "end");
    assert!(
        events
            .iter()
            .any(|(n, d)| n == "state" && d.contains("runner lost")),
        "{events:?}"
    );
    let (_, page) = a.call("GET", &format!("/runs/{slow_id}"), None);
    assert!(page.as_str().unwrap().contains("runner lost"), "{page}");
    let after_kill: Vec<String> = (0..6).map(|_| b.queue(quick_run.clone())).collect();
    // A finished run is discarded from any server: its record, its queue row and its events.
    let (code, _) = a.call("DELETE", &format!("/api/runs/{}", ids[2]), None);
    assert_eq!(code, 204);
    assert_eq!(b.call("GET", &format!("/api/runs/{}", ids[2]), None).0, 404);

    // Restart PostgreSQL while those runs go: nothing is lost, servers and runners reconnect.
    cluster.restart(Duration::from_millis(500));
    let more: Vec<String> = (0..6)
        .map(|i| if i % 2 == 0 { &a } else { &b }.queue(quick_run.clone()))
        .collect();
    for id in after_kill.iter().chain(&more) {
        let v = wait_final(&b, id, Duration::from_secs(300));
        assert_eq!(v["status"], "succeeded", "{v}");
    }
    let started_again = runners
        .iter()
        .flat_map(|r| r.started.lock().unwrap().clone())
        .filter(|id| id == &slow_id)
        .count();
    assert_eq!(started_again, 1, "the lost run was started again");

    // A run's long command lines reach every server's event stream whole, in several batches.
    let chatty_run = b.queue(json!({"source": chatty, "script": "scripts/go.sh", "timeout_secs": 120}));
    assert_eq!(
        wait_final(&b, &chatty_run, Duration::from_secs(120))["status"],
        "succeeded"
    );
    let events = a.events(&chatty_run);
    let long_execs = events
        .iter()
        .filter(|(n, d)| n == "sandbox" && d.contains("/bin/echo") && d.contains(&"a".repeat(60_000)))
        .count();
    assert_eq!(long_execs, 40, "{} events", events.len());

    // Cancel reaches the runner at its next renewal: the run is stopped and recorded as cancelled.
    let cancelled = a.queue(json!({"source": slow, "script": "scripts/go.sh", "timeout_secs": 120}));
    wait_running(&a, &cancelled);
    let (code, v) = b.call("POST", &format!("/api/runs/{cancelled}/cancel"), None);
    assert_eq!((code, v["status"].as_str()), (202, Some("cancelling")), "{v}");
    let v = wait_final(&b, &cancelled, Duration::from_secs(30));
    assert_eq!(v["status"], "cancelled", "{v}");
    assert_eq!(
        b.call("POST", &format!("/api/runs/{cancelled}/cancel"), None).0,
        409
    );

    // Kill one API server: clients of the other see every run and its events, and new runs still finish (the
    // runners turn to the server that is left).
    drop(a);
    let (_, listed) = b.call("GET", "/api/runs", None);
    let listed: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["run_id"].as_str().map(str::to_owned))
        .collect();
    for id in ids
        .iter()
        .filter(|id| **id != ids[2])
        .chain(&after_kill)
        .chain(&more)
        .chain([&slow_id])
    {
        assert!(
            listed.contains(id),
            "{id} is missing from the other server's list"
        );
    }
    let events = b.events(&ids[0]);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    for name in ["state", "phase", "sandbox", "record", "end"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let last = b.queue(quick_run.clone());
    assert_eq!(
        wait_final(&b, &last, Duration::from_secs(120))["status"],
        "succeeded"
    );

    // The CLI as a client: a local folder is uploaded, run by a runner, and printed like a local run.
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["run", "--server", &b.base, "--token-file"])
        .arg(root.join("client-token"))
        .arg(&quick)
        .args(["--script", "scripts/go.sh", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["status"], "succeeded", "{record}");
    assert!(
        record["source"]["input"].as_str().unwrap().starts_with("upload:"),
        "{record}"
    );

    // Revoke a runner that is left: it gets nothing more and stops.
    let left: Vec<usize> = (0..3).filter(|&i| i != victim).collect();
    let revoked = left[0];
    let kept: Vec<&String> = tokens
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != revoked)
        .map(|(_, t)| t)
        .collect();
    write(
        root,
        "runner-tokens",
        &kept.iter().map(|t| format!("{t}\n")).collect::<String>(),
    );
    let code = exit_code(&mut runners[revoked], "a revoked runner kept claiming");
    assert_eq!(code, Some(125));
    assert_eq!(
        call_as(&b, &tokens[revoked], "POST", "/api/runner/claim", Some(claim)),
        401
    );
    let final_run = b.queue(quick_run);
    assert_eq!(
        wait_final(&b, &final_run, Duration::from_secs(120))["status"],
        "succeeded"
    );
    assert!(!runners[revoked].started.lock().unwrap().contains(&final_run));

    // SIGTERM stops a runner gracefully: it claims nothing more, and the run in hand is finished and handed back.
    let last_runner = (0..3).find(|&i| i != victim && i != revoked).unwrap();
    let in_hand = b.queue(json!({"source": medium, "script": "scripts/go.sh", "timeout_secs": 60}));
    assert_eq!(wait_running(&b, &in_hand), runners[last_runner].name);
    let pid = runners[last_runner].child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let v = wait_final(&b, &in_hand, Duration::from_secs(60));
    assert_eq!(v["status"], "succeeded", "{v}");
    let code = exit_code(&mut runners[last_runner], "a stopped runner kept going");
    assert_eq!(code, Some(0));
}

/// The files under a folder (none when it is missing).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            if e.path().is_dir() {
                walk(&e.path())
            } else {
                vec![e.path()]
            }
        })
        .collect()
}

/// `airlock run --server` following a run whose runner is lost mid-run prints what the server knows (status, why,
/// which runner), in text and `--json`, and exits 1 as a failed run does; nothing is silent.
#[test]
fn a_client_following_a_lost_run_is_told_why() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let skills = root.join("skills");
    let slow = skill(&skills, "slow", "echo started\nsleep 60\n");
    let token = "runner-token-0123456789abcdef";
    write(root, "runner-tokens", &format!("{token}\n"));
    write(root, "runner.token", token);
    let server = start(
        &root.join("server"),
        &[
            "--runner-tokens",
            root.join("runner-tokens").to_str().unwrap(),
            "--lease",
            "2s",
            "--allow-local",
            skills.to_str().unwrap(),
        ],
    );
    let mut r = runner("r1", &[&server], &root.join("runner.token"), &root.join("r1"));
    for json in [true, false] {
        let mut args = vec![
            "run".to_owned(),
            slow.display().to_string(),
            "--script".into(),
            "scripts/go.sh".into(),
            "--server".into(),
            server.base.clone(),
        ];
        if json {
            args.push("--json".into());
        }
        let client = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .args(&args)
            .env("AIRLOCK_DATA_DIR", root.join("client"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once the runner holds the run, it is killed.
        let t0 = Instant::now();
        while r.started.lock().unwrap().len() < usize::from(!json) + 1 {
            assert!(t0.elapsed() < Duration::from_secs(60), "the run never started");
            std::thread::sleep(Duration::from_millis(100));
        }
        r.child.kill().unwrap();
        let out = client.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if json {
            let view: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(view["status"], "failed", "{view}");
            assert!(
                view["message"].as_str().unwrap().contains("runner lost"),
                "{view}"
            );
            assert_eq!(view["runner"], "r1", "{view}");
        } else {
            assert!(stdout.contains("status failed"), "{stdout}");
            assert!(
                stdout.contains("it ended without a record: runner lost"),
                "{stdout}"
            );
            assert!(stdout.contains("(runner r1)"), "{stdout}");
        }
        // A new runner for the next round (the same name and token).
        let started = r.started.lock().unwrap().clone();
        r = runner("r1", &[&server], &root.join("runner.token"), &root.join("r1"));
        r.started.lock().unwrap().extend(started);
    }
}

/// A TCP relay on loopback to a server, which can be cut: while cut, every connection through it is closed and new
/// ones are closed at once (the runner behind it is cut off from the servers).
struct Relay {
    base: String,
    cut: Arc<std::sync::atomic::AtomicBool>,
    open: Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn start(to: &str) -> Self {
        use std::sync::atomic::Ordering;
        let target = to.trim_start_matches("http://").to_owned();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let (cut2, open2) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if cut2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(upstream) = std::net::TcpStream::connect(&target) else {
                    continue;
                };
                for s in [&client, &upstream] {
                    open2.lock().unwrap().push(s.try_clone().unwrap());
                }
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), upstream.try_clone().unwrap()),
                    (upstream, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Self { base, cut, open }
    }

    fn cut(&self, cut: bool) {
        self.cut.store(cut, std::sync::atomic::Ordering::SeqCst);
        if cut {
            for s in self.open.lock().unwrap().drain(..) {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

/// A runner cut off from the servers for longer than its lease finds its run taken back (failed, runner lost) and,
/// once it reaches them again, hands back no second record; it goes on to take new runs.
#[test]
fn a_runner_cut_off_past_its_lease_hands_back_no_second_record() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let skills = root.join("skills");
    let slow = skill(&skills, "slow", "echo started\nsleep 6\necho done > DONE.txt\n");
    let quick = skill(&skills, "quick", "echo done > DONE.txt\n");
    let token = "runner-token-0123456789abcdef";
    write(root, "runner-tokens", &format!("{token}\n"));
    write(root, "runner.token", token);
    let server = start(
        &root.join("server"),
        &[
            "--runner-tokens",
            root.join("runner-tokens").to_str().unwrap(),
            "--lease",
            "2s",
            "--allow-local",
            skills.to_str().unwrap(),
        ],
    );
    let relay = Relay::start(&server.base);
    let through = Server {
        child: Command::new("true").spawn().unwrap(),
        base: relay.base.clone(),
        token: None,
    };
    let r = runner("r1", &[&through], &root.join("runner.token"), &root.join("r1"));
    let id = server.queue(json!({"source": slow.display().to_string(), "script": "scripts/go.sh"}));
    assert_eq!(wait_running(&server, &id), "r1");
    relay.cut(true);
    let view = wait_final(&server, &id, Duration::from_secs(60));
    assert_eq!(view["status"], "failed", "{view}");
    assert!(
        view["message"].as_str().unwrap().contains("runner lost"),
        "{view}"
    );
    // The runner reaches the server again while its run goes on, and after it has ended.
    relay.cut(false);
    std::thread::sleep(Duration::from_secs(8));
    let (_, view) = server.call("GET", &format!("/api/runs/{id}"), None);
    assert_eq!(view["status"], "failed", "a second record came back: {view}");
    assert!(view["record"].is_null(), "{view}");
    // It goes on: the next run is its, and ends with a record.
    let next = server.queue(json!({"source": quick.display().to_string(), "script": "scripts/go.sh"}));
    let done = wait_final(&server, &next, Duration::from_secs(60));
    assert_eq!(done["status"], "succeeded", "{done}");
    assert!(r.started.lock().unwrap().contains(&next));
}

/// `n` runner tokens: the servers' `runner-tokens` file (a comment, then one a line) and each runner's own
/// `runner-<i>.token`, numbered from 1.
fn write_runner_tokens(root: &Path, n: usize) -> Vec<String> {
    let tokens: Vec<String> = (1..=n)
        .map(|i| format!("runner-{i}-token-0123456789abcdef"))
        .collect();
    write(
        root,
        "runner-tokens",
        &format!("# one runner token a line\n{}\n", tokens.join("\n")),
    );
    for (i, t) in tokens.iter().enumerate() {
        write(root, &format!("runner-{}.token", i + 1), t);
    }
    tokens
}

/// A free port on loopback, for a server restarted where its clients know it.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A POST to whichever of the servers answers first: the answer, or `None` when none did.
fn post_any(bases: &[String], token: &str, path: &str, body: &Value) -> Option<Value> {
    for base in bases {
        let r = ureq::post(&format!("{base}{path}"))
            .timeout(Duration::from_secs(30))
            .set("Authorization", &format!("Bearer {token}"))
            .send_json(body.clone());
        match r {
            Ok(r) => return r.into_json().ok(),
            Err(ureq::Error::Status(code, r)) => {
                panic!("{path}: {code} {}", r.into_string().unwrap_or_default())
            }
            Err(_) => continue,
        }
    }
    None
}

/// A run's events through `base` after number `after` (`Last-Event-ID`): (id, name) of each.
fn events_after(base: &str, token: &str, run: &str, after: Option<i64>) -> Vec<(Option<i64>, String)> {
    let mut req = ureq::get(&format!("{base}/api/runs/{run}/events"))
        .timeout(Duration::from_secs(60))
        .set("Authorization", &format!("Bearer {token}"));
    if let Some(n) = after {
        req = req.set("Last-Event-ID", &n.to_string());
    }
    let mut out = Vec::new();
    let (mut id, mut name) = (None, String::new());
    for line in BufReader::new(req.call().unwrap().into_reader()).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("event: ") {
            name = n.to_owned();
        } else if let Some(n) = line.strip_prefix("id: ") {
            id = n.trim().parse().ok();
        } else if line.is_empty() && !name.is_empty() {
            let end = name == "end";
            out.push((id.take(), std::mem::take(&mut name)));
            if end {
                break;
            }
        }
    }
    out
}

#[test]
fn a_rolling_restart_loses_no_run_and_a_follower_carries_on_through_another_server() {
    if std::env::var_os("AIRLOCK_TEST_AS_NOBODY").is_some() {
        return;
    }
    let cluster = airlock_store::testing::Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let skills = root.join("skills");
    let quick = skill(&skills, "quick", "echo done > DONE.txt\n");
    let steps = skill(
        &skills,
        "steps",
        "echo one\nsleep 3\necho two\nsleep 3\necho done > DONE.txt\n",
    );
    let client_token = "client-token-0123456789abcdef";
    write(root, "client-token", client_token);
    write_runner_tokens(root, 2);
    let objects = root.join("objects");
    let ports = [free_port(), free_port()];
    let bases: Vec<String> = ports.iter().map(|p| format!("http://127.0.0.1:{p}")).collect();
    let (tokens_file, client_file) = (
        root.join("runner-tokens").display().to_string(),
        root.join("client-token").display().to_string(),
    );
    let start_server = |i: usize| {
        let addr = format!("127.0.0.1:{}", ports[i]);
        let args = [
            "--addr",
            &addr,
            "--database",
            &cluster.url,
            "--runner-tokens",
            &tokens_file,
            "--object-store",
            objects.to_str().unwrap(),
            "--lease",
            // Long enough that a runner on a loaded machine renews through a restart; losing a run is what is tested.
            "15s",
            "--allow-local",
            skills.to_str().unwrap(),
            "--token-file",
            &client_file,
        ];
        let mut s = start(&root.join(format!("server-{i}")), &args);
        s.token = Some(client_token.to_owned());
        s
    };
    let mut servers = [start_server(0), start_server(1)];
    let refs: Vec<&Server> = servers.iter().collect();
    let _runners: Vec<Runner> = (1..=2)
        .map(|i| {
            runner(
                &format!("r{i}"),
                &refs,
                &root.join(format!("runner-{i}.token")),
                &root.join(format!("runner-{i}")),
            )
        })
        .collect();
    drop(refs);

    // A steady stream of runs, each sent to whichever server answers.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let submitted = Arc::new(Mutex::new(Vec::<String>::new()));
    let stream = {
        let (stop, submitted, bases) = (stop.clone(), submitted.clone(), bases.clone());
        let body = json!({"source": quick.display().to_string(), "script": "scripts/go.sh"});
        std::thread::spawn(move || {
            let mut turn = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut order = bases.clone();
                order.rotate_left(turn % 2);
                turn += 1;
                if let Some(v) = post_any(&order, client_token, "/api/runs", &body) {
                    submitted
                        .lock()
                        .unwrap()
                        .push(v["run_id"].as_str().unwrap().to_owned());
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        })
    };

    // A client follows a run of several seconds through the first server, which then stops.
    let follower = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "run",
            steps.to_str().unwrap(),
            "--script",
            "scripts/go.sh",
            "--json",
            "--server",
        ])
        .arg(format!("{},{}", bases[0], bases[1]))
        .arg("--token-file")
        .arg(root.join("client-token"))
        .env("AIRLOCK_DATA_DIR", root.join("client"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Every API server in turn: stopped and started again where its clients know it, a few seconds apart.
    for (i, server) in servers.iter_mut().enumerate() {
        std::thread::sleep(Duration::from_secs(3));
        let _ = server.child.kill();
        let _ = server.child.wait();
        *server = start_server(i);
    }
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    stream.join().unwrap();

    let out = follower.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(record["status"], "succeeded", "{record}");

    let submitted = submitted.lock().unwrap().clone();
    assert!(submitted.len() >= 15, "only {} runs were taken", submitted.len());
    for id in &submitted {
        let v = wait_final(&servers[0], id, Duration::from_secs(120));
        assert_eq!(v["status"], "succeeded", "{id}: {v}");
        assert!(v["record"].is_object(), "{id}: {v}");
    }
    // Each run stored once, by one runner.
    let (_, runs) = servers[1].call("GET", "/api/runs", None);
    for id in &submitted {
        let n = runs
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["run_id"] == id.as_str())
            .count();
        assert_eq!(n, 1, "{id} listed {n} times");
    }

    // Events resumed after a number are exactly those after it, through either server.
    let run = &submitted[0];
    let all = events_after(&bases[0], client_token, run, None);
    assert_eq!(all.last().map(|e| e.1.as_str()), Some("end"), "{all:?}");
    let numbered: Vec<i64> = all.iter().filter_map(|e| e.0).collect();
    assert!(numbered.windows(2).all(|w| w[0] < w[1]), "{all:?}");
    let cut = numbered[numbered.len() / 2];
    let rest = events_after(&bases[1], client_token, run, Some(cut));
    let expected: Vec<_> = all
        .iter()
        .filter(|e| e.0.is_none_or(|n| n > cut))
        .cloned()
        .collect();
    assert_eq!(rest, expected);
}
