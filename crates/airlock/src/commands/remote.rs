//! The CLI as a client of `airlock serve` (`--server URL --token-file F`, or `AIRLOCK_SERVER` and
//! `AIRLOCK_TOKEN_FILE`): `scan`, `run`, `runs`, `show` and `export` do their work on the server (a local folder or
//! archive is uploaded first) and print what the same commands print locally.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde::de::DeserializeOwned;
use serde::Serialize;

use airlock_protocol::{ApiErrorBody, RunView, UploadView};
use airlock_types::{Artifact, SkillRun};

#[derive(Debug, Clone, Default, Args)]
pub struct ServerArgs {
    /// Do the work on this airlock server (`https://airlock.example.com`) instead of this machine; repeat it (or
    /// separate with commas) to name the API servers of one deployment: a call that cannot reach one goes to the
    /// next, and a run's events followed through a server that goes away carry on through another.
    #[arg(long, value_name = "URL", env = "AIRLOCK_SERVER", value_delimiter = ',')]
    pub server: Vec<String>,
    /// A file holding the server's token.
    #[arg(long, value_name = "FILE", env = "AIRLOCK_TOKEN_FILE", requires = "server")]
    pub token_file: Option<PathBuf>,
}

/// The servers of one deployment and its token; a server that cannot be reached is passed over for the next.
pub struct Remote {
    bases: Vec<String>,
    current: std::cell::Cell<usize>,
    token: Option<String>,
}

/// How long a run's events are waited for while no server answers (a rolling restart, a load balancer's switch).
const FOLLOW_PATIENCE: Duration = Duration::from_secs(120);

/// The most bytes of a folder a client uploads: what the server takes.
const MAX_UPLOAD: u64 = airlock_server::MAX_UPLOAD as u64;

impl ServerArgs {
    /// The server to work through, when one is named.
    pub fn remote(&self) -> anyhow::Result<Option<Remote>> {
        if self.server.is_empty() {
            return Ok(None);
        }
        let mut bases = Vec::new();
        for url in &self.server {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                anyhow::bail!("--server takes an http:// or https:// URL");
            }
            bases.push(url.trim_end_matches('/').to_owned());
        }
        let token = match &self.token_file {
            Some(f) => Some(
                fs_err::read_to_string(f)
                    .with_context(|| "reading --token-file")?
                    .trim()
                    .to_owned(),
            ),
            None => None,
        };
        Ok(Some(Remote {
            bases,
            current: std::cell::Cell::new(0),
            token,
        }))
    }
}

impl Remote {
    fn req(&self, method: &str, path: &str) -> ureq::Request {
        let base = &self.bases[self.current.get() % self.bases.len()];
        let r = ureq::request(method, &format!("{base}{path}")).timeout(Duration::from_secs(600));
        match &self.token {
            Some(t) => r.set("Authorization", &format!("Bearer {t}")),
            None => r,
        }
    }

    /// Sends a request to the current server, and to the next ones in turn while none can be reached (or a load
    /// balancer in front of them answers 502 or 503): up to three rounds of the servers, a pause of a second, then
    /// two, between rounds, so that a rolling restart of every server is ridden out.
    fn send(
        &self,
        method: &str,
        path: &str,
        send: &dyn Fn(ureq::Request) -> Result<ureq::Response, Box<ureq::Error>>,
    ) -> Result<ureq::Response, Box<ureq::Error>> {
        const ROUNDS: usize = 3;
        let servers = self.bases.len();
        let mut tries = servers * ROUNDS;
        loop {
            match send(self.req(method, path)) {
                Err(e)
                    if matches!(*e, ureq::Error::Transport(_) | ureq::Error::Status(502 | 503, _))
                        && tries > 1 =>
                {
                    tries -= 1;
                    self.current.set(self.current.get() + 1);
                    if tries.is_multiple_of(servers) {
                        let round = ROUNDS - tries / servers;
                        std::thread::sleep(Duration::from_secs(u64::try_from(round).unwrap_or(1)));
                    }
                }
                other => return other,
            }
        }
    }

    /// Turns a failed call into the server's own message.
    fn check(result: Result<ureq::Response, Box<ureq::Error>>, what: &str) -> anyhow::Result<ureq::Response> {
        result.map_err(|e| Self::refusal(*e, what))
    }

    fn refusal(e: ureq::Error, what: &str) -> anyhow::Error {
        match e {
            ureq::Error::Status(code, r) => {
                let message = r
                    .into_json::<ApiErrorBody>()
                    .map_or_else(|_| "no message".to_owned(), |b| b.message);
                anyhow::anyhow!(
                    "the server refused {what} ({code}): {}",
                    crate::settings::escape(&message)
                )
            }
            e => anyhow::anyhow!("cannot reach the server for {what}: {e}"),
        }
    }

    /// A GET answered with `T` (one of the API's views, from `airlock_protocol`).
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        let r = Self::check(self.send("GET", path, &|r| r.call().map_err(Box::new)), path)?;
        r.into_json()
            .with_context(|| format!("the server's answer to {path} is not what this client reads"))
    }

    /// A POST of `body` answered with `T`.
    pub fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> anyhow::Result<T> {
        let r = Self::check(
            self.send("POST", path, &|r| r.send_json(body).map_err(Box::new)),
            path,
        )?;
        r.into_json()
            .with_context(|| format!("the server's answer to {path} is not what this client reads"))
    }

    pub fn bytes(&self, path: &str) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        Self::check(self.send("GET", path, &|r| r.call().map_err(Box::new)), path)?
            .into_reader()
            .take(1 << 30)
            .read_to_end(&mut out)?;
        Ok(out)
    }

    /// The source as the server names it: a local folder or `.tar.gz` is uploaded first; anything else (a URL) is
    /// passed on.
    pub fn source(&self, source: &str) -> anyhow::Result<String> {
        let path = Path::new(source);
        let bytes = if path.is_dir() {
            pack(path)?
        } else if path.is_file() && (source.ends_with(".tar.gz") || source.ends_with(".tgz")) {
            fs_err::read(path)?
        } else if path.exists() {
            anyhow::bail!("--server uploads a folder or a .tar.gz archive; {source} is neither");
        } else {
            return Ok(source.to_owned());
        };
        if bytes.len() as u64 > MAX_UPLOAD {
            anyhow::bail!(
                "{source} is over {} MiB packed: too large to upload",
                MAX_UPLOAD >> 20
            );
        }
        let r = Self::check(
            self.send("POST", "/api/uploads", &|r| {
                r.set("Content-Type", "application/gzip")
                    .send_bytes(&bytes)
                    .map_err(Box::new)
            }),
            "the upload",
        )?;
        let view: UploadView = r
            .into_json()
            .context("the server's upload answer names no source")?;
        Ok(view.source)
    }

    /// A run's record, once stored.
    pub fn run(&self, id: &str) -> anyhow::Result<SkillRun> {
        let view: RunView = self.get(&format!("/api/runs/{}", segment(id)))?;
        view.record.with_context(|| {
            format!(
                "run {} has no record yet (status {})",
                crate::settings::escape(id),
                crate::settings::escape(&view.status)
            )
        })
    }

    /// An artifact's bytes.
    pub fn artifact(&self, run: &str, a: &Artifact) -> anyhow::Result<Vec<u8>> {
        self.bytes(&format!(
            "/api/runs/{}/artifacts/{}",
            segment(run),
            segment(&a.id)
        ))
    }

    /// Follows a run's events to its end: phases go to `phase`; the record at the end, or the server's view of a
    /// run that ended without one (its runner lost). When the connection drops before the end (the server stopped,
    /// a load balancer moved), it goes on through the next server that answers, from the last event it got
    /// (`Last-Event-ID`), so no event is missed or told twice.
    pub fn follow(&self, id: &str, phase: &dyn Fn(&str, &str)) -> anyhow::Result<Followed> {
        let path = format!("/api/runs/{}/events", segment(id));
        let mut record = None;
        let mut last_id: Option<String> = None;
        let mut away_since: Option<std::time::Instant> = None;
        'connect: loop {
            let got = self.send("GET", &path, &|r| {
                match &last_id {
                    Some(n) => r.set("Last-Event-ID", n).call(),
                    None => r.call(),
                }
                .map_err(Box::new)
            });
            let reader = match got {
                Ok(r) => BufReader::new(r.into_reader()),
                Err(e) if matches!(*e, ureq::Error::Transport(_)) => {
                    let since = *away_since.get_or_insert_with(std::time::Instant::now);
                    if since.elapsed() > FOLLOW_PATIENCE {
                        anyhow::bail!("cannot reach a server for the run's events: {e}");
                    }
                    self.current.set(self.current.get() + 1);
                    std::thread::sleep(Duration::from_millis(300));
                    continue 'connect;
                }
                Err(e) => return Err(Self::refusal(*e, "the run's events")),
            };
            let mut heard = false;
            let mut name = String::new();
            let mut event_id: Option<String> = None;
            for line in reader.lines() {
                let Ok(line) = line else {
                    // The connection dropped: on through the next server.
                    break;
                };
                heard = true;
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(n) = line.strip_prefix("id: ") {
                    event_id = Some(n.trim().to_owned());
                } else if let Some(data) = line.strip_prefix("data: ") {
                    match name.as_str() {
                        "phase" => {
                            if let Ok(airlock_run::RunEvent::Phase {
                                phase: p, message, ..
                            }) = serde_json::from_str(data)
                            {
                                phase(airlock_types::wire_name(&p).as_str(), &message);
                            }
                        }
                        "record" => record = Some(serde_json::from_str(data)?),
                        "end" => break 'connect,
                        _ => {}
                    }
                } else if line.is_empty() {
                    // An event is over: what came with an id is had.
                    if let Some(n) = event_id.take() {
                        last_id = Some(n);
                    }
                }
            }
            // The stream ended without its `end`: the server went away between events. A server that keeps ending
            // the stream with nothing in it counts as away.
            if heard {
                away_since = None;
            } else if away_since.get_or_insert_with(std::time::Instant::now).elapsed() > FOLLOW_PATIENCE {
                anyhow::bail!("the servers keep ending the run's events before its end");
            }
            self.current.set(self.current.get() + 1);
            std::thread::sleep(Duration::from_millis(200));
        }
        if let Some(r) = record {
            return Ok(Followed::Record(Box::new(r)));
        }
        let mut view: RunView = self.get(&format!("/api/runs/{}", segment(id)))?;
        match view.record.take() {
            Some(r) => Ok(Followed::Record(Box::new(r))),
            None if ["queued", "running", "cancelling"].contains(&view.status.as_str()) => {
                anyhow::bail!(
                    "the server ended the run's events while the run is still {}; follow it again with \
                     `airlock show {} --server ...`",
                    crate::settings::escape(&view.status),
                    crate::settings::escape(id)
                )
            }
            None => Ok(Followed::Ended(Box::new(view))),
        }
    }
}

/// How a followed run ended.
pub enum Followed {
    /// Stored, with its record.
    Record(Box<SkillRun>),
    /// Ended without a record (a runner lost mid-run): the server's view of it (status, message, runner).
    Ended(Box<RunView>),
}

/// One path segment, as the server's ids are (letters, digits, dashes); anything else is refused here.
fn segment(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_' || *c == '.')
        .collect()
}

/// A folder as a gzip-compressed tar archive: regular files and folders, links as links, nothing followed.
fn pack(dir: &Path) -> anyhow::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    tar.follow_symlinks(false);
    tar.mode(tar::HeaderMode::Deterministic);
    // Under the folder's own name, as a downloaded archive of it would be.
    let name = fs_err::canonicalize(dir)?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "skill".into());
    tar.append_dir_all(&name, dir)
        .with_context(|| format!("packing {}", dir.display()))?;
    Ok(tar.into_inner()?.finish()?)
}
