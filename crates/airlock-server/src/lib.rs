//! `airlock serve`: the control API over the same run library as the CLI.
//!
//! JSON over HTTP (axum), described by an OpenAPI 3.1 document generated from the handlers' own types (utoipa), so
//! the document and the routes cannot drift. Sources are imported and scanned like `airlock scan`; runs go to the
//! store's queue and are carried out by workers of the one worker loop ([`airlock_worker`]): this server's own (as
//! many as it has run slots) or, with `--runner-tokens`, runner machines over HTTP. Each worker adds the run's
//! events to the store, which `GET /api/runs/{id}/events` replays and then follows as Server-Sent Events, whichever
//! server is asked. Everything is stored in the same data folder as the CLI's, so `airlock runs` and `airlock show`
//! see the server's runs; a run still queued when the server stops is carried out after it starts again, and one
//! that was going is marked failed once its lease runs out.

mod access;
mod api;
mod attest;
mod detonate;
mod diffview;
pub mod dispatch;
mod live;
mod metrics;
mod runs;
mod ui;
mod worker;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use access::PublicUrl;
pub use api::{openapi_and_router, ApiDoc, ApiError, RunSpec, MAX_EVENTS_BODY, MAX_UPLOAD, UPLOAD_PREFIX};

/// How a server is set up.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    pub data_dir: PathBuf,
    /// Runs executing at once; the rest wait in the queue.
    pub max_concurrent_runs: usize,
    pub retention: Duration,
    /// The bearer token every API call needs; `None` only on a loopback address.
    pub token: Option<String>,
    /// Folders whose skills (and `file://` repositories) the server may import; none by default.
    pub allow_local: Vec<PathBuf>,
    /// Hosts (`HOST[:PORT]`, `*.domain`) a run may ask to reach; none by default.
    pub allow_net: Vec<String>,
    /// The operator's egress settings every run gets: upstream proxy, trusted names, mirrors.
    pub network: airlock_egress::Policy,
    /// Extra CAs for the egress proxy and the sandbox's bundle.
    pub egress_ca: Vec<std::path::PathBuf>,
    pub github_base: String,
    /// The executable that starts each sandbox (tests name the built helper).
    pub helper: Option<PathBuf>,
    /// The operator's policy (`--policy FILE`): the most any run gets, whatever the skill declares.
    pub policy: Option<airlock_types::policy::SourcedPolicy>,
    /// Where the store's rows live: a `postgres://` URL, or the data folder's SQLite when `None`.
    pub database: Option<String>,
    /// Where content files and uploaded archives go: a folder every API server of a deployment shares, or an
    /// `s3://bucket/prefix`; the data folder when `None`.
    pub object_store: Option<String>,
    /// The runner tokens file: when given, runs go to the queue for runner machines (`airlock runner`) instead of
    /// this server's own sandboxes.
    pub runner_tokens: Option<PathBuf>,
    /// How long a runner's lease on a run lasts without a renewal.
    pub lease: Duration,
    /// Where browsers reach the server besides loopback and its own address (`--public-url`); a request sent to
    /// any other name is refused (DNS rebinding).
    pub public_urls: Vec<PublicUrl>,
    /// Where imports and git targets may be fetched from: public addresses, and the internal hosts and ranges the
    /// operator allows (`--allow-import`), through the operator's upstream proxy.
    pub fetch_guard: airlock_source::FetchGuard,
}

impl ServerConfig {
    /// The store, in the configured database.
    pub fn store(&self) -> Result<airlock_store::Store, airlock_store::StoreError> {
        let store = airlock_store::Store::connect(&self.data_dir, self.database.as_deref())?;
        match &self.object_store {
            Some(location) => store.with_objects(location),
            None => Ok(store),
        }
    }

    /// Where content files and uploads live, without opening the database.
    pub fn objects(&self) -> Result<airlock_store::objects::Objects, airlock_store::StoreError> {
        match &self.object_store {
            Some(location) => airlock_store::objects::Objects::open(location),
            None => Ok(airlock_store::objects::Objects::Folder(
                self.data_dir.join("objects"),
            )),
        }
    }

    /// Where this server keeps local copies of uploaded archives fetched from a bucket.
    pub fn upload_cache(&self) -> PathBuf {
        self.data_dir.join("cache").join("uploads")
    }

    /// Whether runs go to runner machines rather than this server's own workers.
    pub fn dispatches(&self) -> bool {
        self.runner_tokens.is_some()
    }

    pub fn new(addr: SocketAddr, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            addr,
            data_dir: data_dir.into(),
            max_concurrent_runs: std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            retention: Duration::from_secs(24 * 3600),
            token: None,
            allow_local: Vec::new(),
            allow_net: Vec::new(),
            network: airlock_egress::Policy::default(),
            egress_ca: Vec::new(),
            github_base: "https://github.com".into(),
            helper: None,
            policy: None,
            database: None,
            object_store: None,
            runner_tokens: None,
            lease: Duration::from_secs(30),
            public_urls: Vec::new(),
            fetch_guard: airlock_source::FetchGuard::default(),
        }
    }
}

/// Why a server could not start.
#[derive(Debug)]
pub enum ServeError {
    /// Binding to a non-loopback address without a token.
    NeedsToken(SocketAddr),
    Io(std::io::Error),
    Store(airlock_store::StoreError),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NeedsToken(addr) => write!(
                f,
                "{addr} is not a loopback address: give a token (--token-file) so that only its holders can use the \
                 server"
            ),
            Self::Io(e) => write!(f, "{e}"),
            Self::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Binds and serves until `shutdown` resolves. Calls `ready` with the bound address (port 0 picks a free one).
pub async fn serve(
    config: ServerConfig,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    if !config.addr.ip().is_loopback() && config.token.is_none() {
        return Err(ServeError::NeedsToken(config.addr));
    }
    fs_err::create_dir_all(&config.data_dir).map_err(ServeError::Io)?;
    // Opening the store marks runs a previous process left `running` as failed (on a blocking thread: the
    // PostgreSQL client blocks).
    let (dir, database) = (config.data_dir.clone(), config.database.clone());
    tokio::task::spawn_blocking(move || {
        airlock_store::Store::connect_and_recover(&dir, database.as_deref()).map(drop)
    })
    .await
    .map_err(|e| ServeError::Io(std::io::Error::other(e)))?
    .map_err(ServeError::Store)?;
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(ServeError::Io)?;
    let addr = listener.local_addr().map_err(ServeError::Io)?;
    let mut config = config;
    let example = write_example(&config.data_dir).map_err(ServeError::Io)?;
    config.allow_local.push(example);
    let state = Arc::new(api::App::new(config));
    if !state.config.dispatches() {
        if state.config.database.is_none() {
            // The only server on this data folder: the runs its workers held before it stopped are over now,
            // not when their leases run out.
            let app = state.clone();
            api::blocking(move || dispatch::reap_stopped(&app))
                .await
                .map_err(|e| ServeError::Io(std::io::Error::other(e.body.message)))?;
        }
        worker::start(&state);
    }
    tokio::spawn(dispatch::sweep_lost(state.clone()));
    tokio::spawn(sweep_expired(state.clone()));
    let (router, _) = openapi_and_router(state);
    ready(addr);
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
        .map_err(ServeError::Io)
}

/// Deletes expired runs, reports and sources (and the files only they named) every ten minutes. On a shared
/// PostgreSQL store one server sweeps at a time (an advisory lock); the others skip that round.
async fn sweep_expired(app: Arc<api::App>) {
    loop {
        tokio::time::sleep(Duration::from_secs(30)).await;
        let app2 = app.clone();
        let swept = tokio::task::spawn_blocking(move || {
            app2.config
                .store()
                .and_then(|mut s| s.gc(airlock_store::now_unix()))
        })
        .await;
        match swept {
            Ok(Ok(stats)) if stats.runs + stats.reports + stats.sources > 0 => {
                tracing::info!(
                    "gc: {} run(s), {} report(s), {} source(s) expired",
                    stats.runs,
                    stats.reports,
                    stats.sources
                );
            }
            Ok(Err(e)) => tracing::warn!("gc: {e}"),
            _ => {}
        }
        tokio::time::sleep(Duration::from_secs(570)).await;
    }
}

/// The bundled example skill, ready to click through from the home page.
const EXAMPLE: &[(&str, &str)] = &[
    (
        "SKILL.md",
        include_str!("../../../examples/skills/add-footer/SKILL.md"),
    ),
    (
        "scripts/add_footer.py",
        include_str!("../../../examples/skills/add-footer/scripts/add_footer.py"),
    ),
];

/// Where the bundled example is written in the data folder (and allowed to be imported from).
pub fn example_dir(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("examples").join("add-footer")
}

fn write_example(data_dir: &std::path::Path) -> std::io::Result<PathBuf> {
    let dir = example_dir(data_dir);
    for (path, text) in EXAMPLE {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::write(&p, text)?;
    }
    Ok(dir)
}
