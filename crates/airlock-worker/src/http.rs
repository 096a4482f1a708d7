//! The queue of a team deployment as a runner machine sees it: the API servers over HTTP, reached with a runner
//! token (`/api/runner/...`). A server that cannot be reached is passed over for the next; calls are retried while
//! the servers or their database are away, within the patience each call is given.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use airlock_protocol::{Claim, Failed, Finished, Job, LeaseView, RunnerEvent, RunnerEvents};

use crate::{Prepared, Queue, QueueError, Renewed};

/// What a runner machine brings to every run: its name, what its machine can enforce, its data folder, import
/// settings and network.
pub struct RunnerSetup {
    pub name: String,
    /// The modes its machine can enforce (its doctor's verdict), as the wire names them.
    pub modes: Vec<String>,
    pub data: PathBuf,
    pub settings: airlock_run::ImportSettings,
    pub network: airlock_egress::Policy,
    pub egress_ca: Vec<PathBuf>,
}

/// The API servers, this runner's token, and what it brings.
pub struct HttpQueue {
    servers: Vec<String>,
    current: AtomicUsize,
    token: String,
    agent: ureq::Agent,
    setup: RunnerSetup,
}

/// A request's body.
enum Payload<'a> {
    None,
    Json(serde_json::Value),
    Bytes(&'a [u8]),
}

/// A wire value as JSON (these types always serialize).
fn json(v: &impl serde::Serialize) -> Payload<'static> {
    Payload::Json(serde_json::to_value(v).unwrap_or(serde_json::Value::Null))
}

impl HttpQueue {
    /// `servers` are base URLs (`http://host:port`), tried in turn.
    pub fn new(servers: Vec<String>, token: String, setup: RunnerSetup) -> Self {
        Self {
            servers,
            current: AtomicUsize::new(0),
            token,
            agent: ureq::AgentBuilder::new().build(),
            setup,
        }
    }

    pub fn servers(&self) -> &[String] {
        &self.servers
    }

    pub fn setup(&self) -> &RunnerSetup {
        &self.setup
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        payload: &Payload<'_>,
        timeout: Duration,
    ) -> Result<ureq::Response, QueueError> {
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
                Payload::Json(v) => req.send_json(v),
                Payload::Bytes(b) => req.set("Content-Type", "application/octet-stream").send_bytes(b),
            };
            match result {
                Ok(r) => return Ok(r),
                Err(ureq::Error::Status(code, r)) if code != 502 && code != 504 => {
                    let message = r
                        .into_json::<airlock_protocol::ApiErrorBody>()
                        .map_or_else(|_| "no message".to_owned(), |b| b.message);
                    return Err(match code {
                        401 => QueueError::Refused(message),
                        409 => QueueError::NotHeld,
                        500..=599 => QueueError::Away(format!("{code}: {message}")),
                        _ => QueueError::Rejected(code, message),
                    });
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
        Err(QueueError::Away(last))
    }

    /// A call retried while the servers are away or their store is: until it is answered, refused, or `patience`
    /// runs out.
    fn call_retrying(
        &self,
        method: &str,
        path: &str,
        payload: &Payload<'_>,
        patience: Duration,
    ) -> Result<ureq::Response, QueueError> {
        let start = Instant::now();
        let mut wait = Duration::from_millis(200);
        loop {
            match self.call(method, path, payload, Duration::from_secs(60)) {
                Err(QueueError::Away(_)) if start.elapsed() < patience => {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(2));
                }
                other => return other,
            }
        }
    }

    /// The archive a client uploaded for this run, fetched once into this runner's data folder and checked.
    fn fetch_upload(&self, run_id: &str, sha: &str) -> Result<PathBuf, String> {
        let data = &self.setup.data;
        // Kept as the data folder keeps any upload (`uploads/<sha256>.tar.gz`).
        let kept = airlock_store::objects::Objects::Folder(data.join("objects"));
        let keep_err = |e: airlock_store::StoreError| format!("keeping the uploaded archive: {e}");
        if let Some(path) = kept.upload_file(sha, data).map_err(keep_err)? {
            return Ok(path);
        }
        let response = self
            .call_retrying(
                "GET",
                &format!("/api/runner/runs/{run_id}/source"),
                &Payload::None,
                Duration::from_secs(30),
            )
            .map_err(|e| format!("fetching the uploaded archive: {e}"))?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(response.into_reader(), airlock_protocol::MAX_UPLOAD as u64 + 1),
            &mut bytes,
        )
        .map_err(|e| format!("fetching the uploaded archive: {e}"))?;
        if airlock_store::sha_hex(&bytes) != sha {
            return Err("the uploaded archive the server sent is not the one named".into());
        }
        kept.put_upload(sha, &bytes).map_err(keep_err)?;
        kept.upload_file(sha, data)
            .map_err(keep_err)?
            .ok_or_else(|| "the uploaded archive was not kept".to_owned())
    }
}

impl Queue for HttpQueue {
    fn name(&self) -> &str {
        &self.setup.name
    }

    fn tell(&self, message: &str) {
        eprintln!(
            "airlock runner {}: {message}",
            airlock_types::display::line(&self.setup.name)
        );
    }

    fn claim(&self, wait: Duration) -> Result<Option<Job>, QueueError> {
        let claim = Claim {
            name: self.setup.name.clone(),
            modes: self.setup.modes.clone(),
            wait_secs: Some(wait.as_secs()),
        };
        let r = self.call(
            "POST",
            "/api/runner/claim",
            &json(&claim),
            wait + Duration::from_secs(30),
        )?;
        if r.status() != 200 {
            return Ok(None);
        }
        r.into_json::<Job>()
            .map(Some)
            .map_err(|e| QueueError::Rejected(200, format!("a job the server sent could not be read: {e}")))
    }

    fn renew(&self, run_id: &str) -> Result<Renewed, QueueError> {
        let r = self.call(
            "POST",
            &format!("/api/runner/runs/{run_id}/lease"),
            &Payload::None,
            Duration::from_secs(20),
        )?;
        Ok(Renewed {
            cancel: r.into_json::<LeaseView>().is_ok_and(|l| l.cancel),
        })
    }

    fn events(&self, run_id: &str, events: &[RunnerEvent], patience: Duration) -> Result<(), QueueError> {
        let body = json(&RunnerEvents {
            events: events.to_vec(),
        });
        self.call_retrying(
            "POST",
            &format!("/api/runner/runs/{run_id}/events"),
            &body,
            patience,
        )
        .map(drop)
    }

    fn prepare(&self, job: &Job, cancel: Arc<AtomicBool>) -> Result<Prepared, String> {
        let ctx = airlock_run::request::Context {
            // The server checked the hosts against what it allows.
            allow_net: None,
            egress: Some(airlock_egress::EgressConfig {
                policy: self.setup.network.clone(),
                extra_ca: self.setup.egress_ca.clone(),
                ..Default::default()
            }),
            retention: Duration::from_secs(job.retention_secs),
            helper: None,
            policy: job.policy.clone(),
            install_limits: Default::default(),
            bounded: true,
            ..Default::default()
        };
        let upload = match job.run.source.strip_prefix(airlock_protocol::UPLOAD_PREFIX) {
            Some(sha) => Some(self.fetch_upload(&job.run_id, sha)?),
            None => None,
        };
        let parse = |input: &str| -> Result<airlock_source::SourceSpec, airlock_run::request::RequestError> {
            match (&upload, input.starts_with(airlock_protocol::UPLOAD_PREFIX)) {
                (Some(path), true) => Ok(airlock_source::SourceSpec::Archive(path.clone())),
                _ => self
                    .setup
                    .settings
                    .parse(input)
                    .map_err(|e| airlock_run::request::RequestError::bad("bad_source", e.to_string())),
            }
        };
        let mut request =
            airlock_run::request::build(&job.run, &ctx, Some(&job.run_id), Some(cancel), &parse)
                .map_err(|e| e.message)?;
        request.source_name = upload.is_some().then(|| job.run.source.clone());
        let store = airlock_store::Store::connect(&self.setup.data, None).map_err(|e| e.to_string())?;
        Ok(Prepared {
            request,
            settings: self.setup.settings.clone(),
            store,
        })
    }

    /// Uploads the run's artifacts, then hands back its record; this runner's own copy goes once the servers have
    /// it.
    fn finish(
        &self,
        run_id: &str,
        outcome: airlock_run::Outcome,
        store: airlock_store::Store,
        patience: Duration,
    ) -> Result<(), QueueError> {
        let record = &outcome.record;
        for a in &record.artifacts {
            let bytes = match store.read_object(&a.sha256) {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(
                        "artifact {} of {run_id} is missing: {e}",
                        airlock_types::display::line(&a.id)
                    );
                    continue;
                }
            };
            if let Err(e) = self.call_retrying(
                "PUT",
                &format!("/api/runner/runs/{run_id}/objects/{}", a.sha256),
                &Payload::Bytes(&bytes),
                patience,
            ) {
                tracing::warn!(
                    "uploading artifact {} of {run_id}: {e}",
                    airlock_types::display::line(&a.id)
                );
            }
        }
        let body = json(&Finished {
            report: outcome.report,
            record: record.clone(),
        });
        self.call_retrying(
            "POST",
            &format!("/api/runner/runs/{run_id}/finish"),
            &body,
            patience,
        )?;
        let _ = store.forget(run_id);
        Ok(())
    }

    fn fail(&self, run_id: &str, message: &str, patience: Duration) -> Result<(), QueueError> {
        let body = json(&Failed {
            message: message.to_owned(),
        });
        self.call_retrying(
            "POST",
            &format!("/api/runner/runs/{run_id}/fail"),
            &body,
            patience,
        )
        .map(drop)
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
        let data = tempfile::tempdir().unwrap();
        let setup = RunnerSetup {
            name: "t".into(),
            modes: vec![],
            data: data.path().to_owned(),
            settings: airlock_run::ImportSettings::new(data.path()),
            network: airlock_egress::Policy::default(),
            egress_ca: vec![],
        };
        let queue = HttpQueue::new(vec![dead, live], "t".into(), setup);
        // As after turning from server to server a few times.
        queue.current.store(4, Ordering::Relaxed);
        for _ in 0..3 {
            let r = queue.call("GET", "/", &Payload::None, Duration::from_secs(5));
            assert_eq!(r.unwrap().status(), 204);
        }
    }
}
