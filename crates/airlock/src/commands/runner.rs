//! `airlock runner`: a runner machine of a team deployment. It claims runs from the API servers over HTTP (long
//! poll) with a runner token, runs each in this machine's sealed runner, renews its lease while it runs, streams
//! the run's events, uploads its artifacts and hands back the record. It holds no database or object-store
//! credentials: the token lets it claim runs and report on the runs it holds, nothing else.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use serde_json::Value;

use airlock_protocol::{Claim, Failed, Finished, Job, LeaseView, RunnerEvent, RunnerEvents, StateEvent};
use airlock_types::RunMode;

use crate::exit;
use crate::settings::{data_dir, escape};

/// A wire value as JSON (these types always serialize).
fn to_value(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

#[derive(Debug, Args)]
pub struct RunnerArgs {
    /// An API server to claim runs from; repeat it (or separate with commas) to fail over between servers.
    #[arg(
        long = "server",
        value_name = "URL",
        env = "AIRLOCK_SERVER",
        value_delimiter = ',',
        required = true
    )]
    pub servers: Vec<String>,
    /// A file holding this runner's token (a line of the servers' `--runner-tokens` file).
    #[arg(long, value_name = "FILE", env = "AIRLOCK_RUNNER_TOKEN_FILE")]
    pub token_file: PathBuf,
    /// Where this runner keeps its caches and a run's files while it runs.
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Runs carried out at once.
    #[arg(long, default_value_t = 1)]
    pub slots: usize,
    /// The name shown on the runs this runner holds (default: the host's name).
    #[arg(long)]
    pub name: Option<String>,
    /// A host (`git.corp.example`, `*.corp.example`) or range (`10.1.0.0/16`) on this machine's own networks that
    /// git targets may be fetched from. Without it, a URL whose host is or resolves to a loopback, private,
    /// link-local or unique-local address is refused, on the first request and on every redirect.
    #[arg(long, value_name = "HOST|CIDR")]
    pub allow_import: Vec<String>,
    #[command(flatten)]
    pub net: super::net::OperatorNetArgs,
    /// Base URL for GitHub sources.
    #[arg(long, env = "AIRLOCK_GITHUB_BASE", default_value = "https://github.com")]
    pub github_base: String,
}

/// Why a call to the servers failed.
#[derive(Debug)]
enum CallError {
    /// The server answered with an error: its status and message.
    Status(u16, String),
    /// No server could be reached (or it answered garbage).
    Transport(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Status(code, m) => write!(f, "{code}: {}", escape(m)),
            Self::Transport(m) => write!(f, "{}", escape(m)),
        }
    }
}

/// The API servers and this runner's token; a server that cannot be reached is passed over for the next.
struct Client {
    servers: Vec<String>,
    current: AtomicUsize,
    token: String,
    agent: ureq::Agent,
}

enum Payload<'a> {
    None,
    Json(&'a Value),
    Bytes(&'a [u8]),
}

impl Client {
    fn call(
        &self,
        method: &str,
        path: &str,
        payload: &Payload<'_>,
        timeout: Duration,
    ) -> Result<ureq::Response, CallError> {
        let mut last = String::new();
        for _ in 0..self.servers.len() {
            let current = self.current.load(Ordering::Relaxed);
            let i = current % self.servers.len();
            let url = format!("{}{path}", self.servers[i]);
            let req = self
                .agent
                .request(method, &url)
                .timeout(timeout)
                .set("Authorization", &format!("Bearer {}", self.token));
            let result = match payload {
                Payload::None => req.call(),
                Payload::Json(v) => req.send_json(*v),
                Payload::Bytes(b) => req.set("Content-Type", "application/octet-stream").send_bytes(b),
            };
            match result {
                Ok(r) => return Ok(r),
                Err(ureq::Error::Status(code, r)) if code != 502 && code != 504 => {
                    let body: Value = r.into_json().unwrap_or(Value::Null);
                    return Err(CallError::Status(
                        code,
                        body["message"].as_str().unwrap_or("no message").to_owned(),
                    ));
                }
                Err(e) => {
                    last = e.to_string();
                    // The next server, for this call and the ones after it (unless another slot moved on already).
                    let next = (i + 1) % self.servers.len();
                    let _ =
                        self.current
                            .compare_exchange(current, next, Ordering::Relaxed, Ordering::Relaxed);
                }
            }
        }
        Err(CallError::Transport(last))
    }

    /// A call retried while the servers are away or their store is (a database restarting): until it is answered,
    /// refused, or `patience` runs out.
    fn call_retrying(
        &self,
        method: &str,
        path: &str,
        payload: &Payload<'_>,
        patience: Duration,
    ) -> Result<ureq::Response, CallError> {
        let start = Instant::now();
        let mut wait = Duration::from_millis(200);
        loop {
            match self.call(method, path, payload, Duration::from_secs(60)) {
                Err(CallError::Transport(_) | CallError::Status(500..=599, _))
                    if start.elapsed() < patience =>
                {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }
}

/// What every slot shares.
struct Runner {
    client: Client,
    name: String,
    modes: Vec<String>,
    data: PathBuf,
    settings: airlock_run::ImportSettings,
    network: airlock_egress::Policy,
    egress_ca: Vec<PathBuf>,
    /// Set when the servers refuse this runner's token: every slot stops.
    refused: AtomicBool,
    /// Set by SIGTERM or SIGINT: no more claims; the runs in hand are finished and handed back.
    draining: AtomicBool,
}

pub fn runner(args: &RunnerArgs) -> anyhow::Result<u8> {
    let data = data_dir(args.data_dir.as_ref())?;
    fs_err::create_dir_all(&data)?;
    anyhow::ensure!(args.slots > 0, "--slots must be at least 1");
    let mut servers = Vec::new();
    for s in &args.servers {
        anyhow::ensure!(
            s.starts_with("http://") || s.starts_with("https://"),
            "--server takes an http:// or https:// URL"
        );
        servers.push(s.trim_end_matches('/').to_owned());
    }
    let token = fs_err::read_to_string(&args.token_file)
        .context("reading --token-file")?
        .trim()
        .to_owned();
    anyhow::ensure!(!token.is_empty(), "the token file is empty");
    let name = match &args.name {
        Some(n) => n.clone(),
        None => nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .unwrap_or_else(|| "runner".into()),
    };
    // What this machine can enforce decides what it is sent: without every layer, no sandbox runs.
    let doctor = airlock_sandbox::doctor(None);
    let mut modes = vec![
        airlock_types::wire_name(&RunMode::Inspect),
        airlock_types::wire_name(&RunMode::DryRun),
    ];
    if doctor.ready {
        modes.push(airlock_types::wire_name(&RunMode::Sandbox));
    } else {
        let missing: Vec<String> = doctor
            .checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.layer.clone())
            .collect();
        eprintln!(
            "airlock runner: this machine cannot enforce {}; it takes inspect and dry-run runs only (see `airlock doctor`)",
            missing.join(", ")
        );
    }
    let mut settings = airlock_run::ImportSettings::new(&data);
    settings.github_base = args.github_base.clone();
    let network = args.net.base_policy()?;
    settings.guard = Some(
        airlock_source::FetchGuard::new(&network, &args.allow_import)
            .map_err(|e| super::net::UsageError(format!("--allow-import: {e}")))?,
    );
    let runner = Arc::new(Runner {
        client: Client {
            servers,
            current: AtomicUsize::new(0),
            token,
            agent: ureq::AgentBuilder::new().build(),
        },
        name,
        modes,
        data,
        settings,
        network,
        egress_ca: args.net.egress_ca.clone(),
        refused: AtomicBool::new(false),
        draining: AtomicBool::new(false),
    });
    let drain = runner.clone();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
            return;
        };
        rt.block_on(async {
            let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        });
        eprintln!("airlock runner: stopping: no more claims; the runs in hand are finished first");
        drain.draining.store(true, Ordering::Relaxed);
    });
    eprintln!(
        "airlock runner {}: claiming {} run(s) at once ({}) from {}",
        escape(&runner.name),
        args.slots,
        runner.modes.join(", "),
        runner.client.servers.join(", ")
    );
    let slots: Vec<_> = (0..args.slots)
        .map(|_| {
            let r = runner.clone();
            std::thread::spawn(move || slot(&r))
        })
        .collect();
    for s in slots {
        let _ = s.join();
    }
    if runner.refused.load(Ordering::Relaxed) {
        eprintln!("airlock runner: the server refused this runner's token (revoked, or not in its --runner-tokens file)");
        return Ok(exit::AIRLOCK);
    }
    Ok(exit::OK)
}

/// One slot: claims a run, carries it out, and again, until the token is refused.
fn slot(runner: &Runner) {
    let mut wait = Duration::from_millis(200);
    while !runner.refused.load(Ordering::Relaxed) && !runner.draining.load(Ordering::Relaxed) {
        let body = to_value(&Claim {
            name: runner.name.clone(),
            modes: runner.modes.clone(),
            wait_secs: Some(10),
        });
        match runner.client.call(
            "POST",
            "/api/runner/claim",
            &Payload::Json(&body),
            Duration::from_secs(40),
        ) {
            Ok(r) if r.status() == 200 => {
                wait = Duration::from_millis(200);
                match r.into_json::<Job>() {
                    Ok(job) => carry_out(runner, job),
                    Err(e) => eprintln!("airlock runner: a job the server sent could not be read: {e}"),
                }
            }
            Ok(_) => wait = Duration::from_millis(200),
            Err(CallError::Status(401, _)) => runner.refused.store(true, Ordering::Relaxed),
            Err(e) => {
                tracing::warn!("claiming a run: {e}");
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// A run's events on their way to the servers, numbered from 1.
#[derive(Default)]
struct Outbox {
    /// The events not sent yet, and the number the last one pushed got.
    pending: Mutex<(Vec<RunnerEvent>, i64)>,
    /// Held while a batch is on its way, so that batches arrive in order (a follower reads them by number).
    sending: Mutex<()>,
}

/// Events of one run sent at most, short of the server's cap so that state events still fit (the server adds the
/// final ones).
const MAX_EVENTS: i64 = airlock_server::dispatch::MAX_EVENTS - 1_000;

impl Outbox {
    fn push(&self, name: &str, data: String) {
        let mut pending = self.lock();
        let (events, last) = &mut *pending;
        if *last >= MAX_EVENTS && name != "state" {
            return;
        }
        *last += 1;
        events.push(RunnerEvent {
            seq: *last,
            name: name.to_owned(),
            data,
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<RunnerEvent>, i64)> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends what is pending, in batches well under the server's limit; a batch the servers could not be reached
    /// for is kept for the next flush, one they refused is dropped (it would be refused again).
    fn flush(&self, client: &Client, run_id: &str, patience: Duration) -> bool {
        let _sending = self
            .sending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut pending: std::collections::VecDeque<RunnerEvent> = std::mem::take(&mut self.lock().0).into();
        let budget = airlock_server::MAX_EVENTS_BODY / 4;
        let mut all_sent = true;
        while !pending.is_empty() {
            let mut batch = Vec::new();
            let mut size = 0;
            while let Some(e) = pending.front() {
                let len = e.data.len() + 64;
                if !batch.is_empty() && size + len > budget {
                    break;
                }
                size += len;
                batch.extend(pending.pop_front());
            }
            let sent = RunnerEvents { events: batch };
            let body = to_value(&sent);
            let batch = sent.events;
            match client.call_retrying(
                "POST",
                &format!("/api/runner/runs/{run_id}/events"),
                &Payload::Json(&body),
                patience,
            ) {
                Ok(_) => {}
                Err(CallError::Status(code @ 400..=499, message)) => {
                    all_sent = false;
                    if code == 409 || code == 401 {
                        // The run is not this runner's any more: nothing more goes.
                        return false;
                    }
                    tracing::warn!("events of {run_id} refused ({code}): {message}");
                }
                Err(_) => {
                    // Kept, in order, before whatever came meanwhile.
                    let back = &mut self.lock().0;
                    let later = std::mem::take(back);
                    back.extend(batch);
                    back.extend(pending);
                    back.extend(later);
                    return false;
                }
            }
        }
        all_sent
    }
}

/// Carries out one claimed run and reports it.
fn carry_out(runner: &Runner, job: Job) {
    let id = job.run_id.as_str();
    eprintln!("airlock runner {}: running {id}", escape(&runner.name));
    let cancel = Arc::new(AtomicBool::new(false));
    let lost = AtomicBool::new(false);
    let done = Stop::default();
    let outbox = Arc::new(Outbox::default());
    outbox.push(
        "state",
        serde_json::to_string(&StateEvent {
            state: "running".into(),
            message: format!("on runner {}", runner.name),
        })
        .unwrap_or_default(),
    );
    // The lease, renewed at a third of its length; a run whose lease is gone is stopped.
    let lease = Duration::from_millis(job.lease_ms.max(300) / 3);
    let (cancel2, lost2, done2, outbox2) = (&*cancel, &lost, &done, &*outbox);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            while !done2.wait(lease) {
                match runner.client.call(
                    "POST",
                    &format!("/api/runner/runs/{id}/lease"),
                    &Payload::None,
                    lease,
                ) {
                    Ok(r) => {
                        if r.into_json::<LeaseView>().is_ok_and(|l| l.cancel) {
                            cancel2.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(CallError::Status(409 | 401, _)) => {
                        lost2.store(true, Ordering::Relaxed);
                        cancel2.store(true, Ordering::Relaxed);
                    }
                    Err(e) => tracing::warn!("renewing the lease on {id}: {e}"),
                }
            }
        });
        // The events, sent every quarter second while the run goes.
        scope.spawn(move || {
            while !done2.wait(Duration::from_millis(250)) {
                outbox2.flush(&runner.client, id, Duration::ZERO);
            }
        });
        let result = execute(runner, &job, &cancel, &outbox);
        if lost.load(Ordering::Relaxed) {
            eprintln!(
                "airlock runner {}: lost the lease on {id}; its record is not handed back",
                escape(&runner.name)
            );
        } else {
            report(runner, id, result, &outbox);
        }
        done.stop();
    });
}

/// A flag the threads of a run wait on, set when the run is over (they stop at once, not at their next tick).
#[derive(Default)]
struct Stop {
    over: Mutex<bool>,
    changed: std::sync::Condvar,
}

impl Stop {
    fn stop(&self) {
        *self
            .over
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        self.changed.notify_all();
    }

    /// Waits up to `timeout`: whether the run is over.
    fn wait(&self, timeout: Duration) -> bool {
        let over = self
            .over
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (over, _) = self
            .changed
            .wait_timeout_while(over, timeout, |over| !*over)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *over
    }
}

/// Runs the job in this machine's sealed runner, with the run's local record in this runner's data folder.
fn execute(
    runner: &Runner,
    job: &Job,
    cancel: &Arc<AtomicBool>,
    outbox: &Arc<Outbox>,
) -> Result<(airlock_run::Outcome, airlock_store::Store), String> {
    let ctx = airlock_run::request::Context {
        // The server checked the hosts against what it allows.
        allow_net: None,
        egress: Some(airlock_egress::EgressConfig {
            policy: runner.network.clone(),
            extra_ca: runner.egress_ca.clone(),
            ..Default::default()
        }),
        retention: Duration::from_secs(job.retention_secs),
        helper: None,
        policy: job.policy.clone(),
        bounded: true,
        ..Default::default()
    };
    let upload = match job.run.source.strip_prefix(airlock_server::UPLOAD_PREFIX) {
        Some(sha) => Some(fetch_upload(runner, &job.run_id, sha)?),
        None => None,
    };
    let parse = |input: &str| -> Result<airlock_source::SourceSpec, airlock_run::request::RequestError> {
        match (&upload, input.starts_with(airlock_server::UPLOAD_PREFIX)) {
            (Some(path), true) => Ok(airlock_source::SourceSpec::Archive(path.clone())),
            _ => runner
                .settings
                .parse(input)
                .map_err(|e| airlock_run::request::RequestError::bad("bad_source", e.to_string())),
        }
    };
    let mut request =
        airlock_run::request::build(&job.run, &ctx, Some(&job.run_id), Some(cancel.clone()), &parse)
            .map_err(|e| e.message)?;
    request.source_name = upload.is_some().then(|| job.run.source.clone());
    let mut store = airlock_store::Store::connect(&runner.data, None).map_err(|e| e.to_string())?;
    let sink = outbox.clone();
    let on_event: airlock_run::OnEvent = Arc::new(move |event: airlock_run::RunEvent| {
        let name = match &event {
            airlock_run::RunEvent::Phase { .. } => "phase",
            airlock_run::RunEvent::Sandbox { .. } => "sandbox",
        };
        sink.push(name, serde_json::to_string(&event).unwrap_or_default());
    });
    let outcome =
        airlock_run::execute(&request, &runner.settings, &mut store, &on_event).map_err(|e| e.to_string())?;
    Ok((outcome, store))
}

/// The archive a client uploaded for this run, fetched once into this runner's data folder and checked.
fn fetch_upload(runner: &Runner, run_id: &str, sha: &str) -> Result<PathBuf, String> {
    // Kept as the data folder keeps any upload (`uploads/<sha256>.tar.gz`).
    let kept = airlock_store::objects::Objects::Folder(runner.data.join("objects"));
    let keep_err = |e: airlock_store::StoreError| format!("keeping the uploaded archive: {e}");
    if let Some(path) = kept.upload_file(sha, &runner.data).map_err(keep_err)? {
        return Ok(path);
    }
    let response = runner
        .client
        .call_retrying(
            "GET",
            &format!("/api/runner/runs/{run_id}/source"),
            &Payload::None,
            Duration::from_secs(30),
        )
        .map_err(|e| format!("fetching the uploaded archive: {e}"))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(response.into_reader(), airlock_server::MAX_UPLOAD as u64 + 1),
        &mut bytes,
    )
    .map_err(|e| format!("fetching the uploaded archive: {e}"))?;
    if airlock_store::sha_hex(&bytes) != sha {
        return Err("the uploaded archive the server sent is not the one named".into());
    }
    kept.put_upload(sha, &bytes).map_err(keep_err)?;
    kept.upload_file(sha, &runner.data)
        .map_err(keep_err)?
        .ok_or_else(|| "the uploaded archive was not kept".to_owned())
}

/// Hands the run back: its artifacts, then its record, then its last events; or why it could not be carried out.
/// The runner's own copy goes once the servers have it.
fn report(
    runner: &Runner,
    id: &str,
    result: Result<(airlock_run::Outcome, airlock_store::Store), String>,
    outbox: &Outbox,
) {
    // Retried while the servers or their database are away, within what a lease allows a runner to be gone.
    let patience = Duration::from_secs(120);
    match result {
        Ok((outcome, store)) => {
            let record = &outcome.record;
            for a in &record.artifacts {
                let bytes = match store.read_object(&a.sha256) {
                    Ok(b) => b,
                    Err(e) => {
                        eprintln!(
                            "airlock runner: artifact {} of {id} is missing: {e}",
                            escape(&a.id)
                        );
                        continue;
                    }
                };
                if let Err(e) = runner.client.call_retrying(
                    "PUT",
                    &format!("/api/runner/runs/{id}/objects/{}", a.sha256),
                    &Payload::Bytes(&bytes),
                    patience,
                ) {
                    eprintln!(
                        "airlock runner: uploading artifact {} of {id}: {e}",
                        escape(&a.id)
                    );
                }
            }
            outbox.flush(&runner.client, id, patience);
            let body = to_value(&Finished {
                report: outcome.report,
                record: record.clone(),
            });
            match runner.client.call_retrying(
                "POST",
                &format!("/api/runner/runs/{id}/finish"),
                &Payload::Json(&body),
                patience,
            ) {
                Ok(_) => {
                    // The server adds the record and the end to the run's events.
                    let status = airlock_types::wire_name(&record.status);
                    let _ = store.forget(id);
                    eprintln!("airlock runner {}: {id} {status}", escape(&runner.name));
                }
                Err(e) => eprintln!("airlock runner: handing back {id}: {e}"),
            }
        }
        Err(message) => {
            outbox.flush(&runner.client, id, patience);
            let body = to_value(&Failed {
                message: message.clone(),
            });
            if let Err(e) = runner.client.call_retrying(
                "POST",
                &format!("/api/runner/runs/{id}/fail"),
                &Payload::Json(&body),
                patience,
            ) {
                eprintln!("airlock runner: reporting that {id} failed: {e}");
            }
            eprintln!(
                "airlock runner {}: {id} could not be carried out: {}",
                escape(&runner.name),
                escape(&message)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on loopback that answers every request with 204, and a port where nothing listens.
    fn live_and_dead() -> (String, String) {
        let live = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let live_url = format!("http://{}", live.local_addr().unwrap());
        std::thread::spawn(move || {
            for conn in live.incoming() {
                let mut conn = conn.unwrap();
                let mut buf = [0u8; 4096];
                let _ = std::io::Read::read(&mut conn, &mut buf);
                let _ = std::io::Write::write_all(
                    &mut conn,
                    b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
                );
            }
        });
        let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let dead_url = format!("http://{}", dead.local_addr().unwrap());
        drop(dead);
        (live_url, dead_url)
    }

    #[test]
    fn a_call_moves_on_to_the_server_that_answers_however_often_it_moved_before() {
        let (live, dead) = live_and_dead();
        let client = Client {
            servers: vec![dead, live],
            // As after turning from server to server a few times.
            current: AtomicUsize::new(4),
            token: "t".into(),
            agent: ureq::AgentBuilder::new().build(),
        };
        for _ in 0..3 {
            let r = client.call("GET", "/", &Payload::None, Duration::from_secs(5));
            assert_eq!(r.unwrap().status(), 204);
        }
    }
}
