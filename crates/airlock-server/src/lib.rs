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
mod attest;
mod config;
mod detonate;
mod diffview;
pub mod dispatch;
mod error;
mod live;
mod metrics;
mod router;
mod runs;
mod session;
mod sources;
mod state;
mod ui;
mod worker;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use airlock_protocol::{RunSpec, MAX_EVENTS_BODY, MAX_UPLOAD, UPLOAD_PREFIX};
pub use config::{example_dir, PublicUrl, ServerConfig};
pub use error::ApiError;
pub use router::{openapi_and_router, ApiDoc};

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
    let example = config::write_example(&config.data_dir).map_err(ServeError::Io)?;
    config.allow_local.push(example);
    let state = Arc::new(state::App::new(config));
    if !state.config.dispatches() {
        if state.config.database.is_none() {
            // The only server on this data folder: the runs its workers held before it stopped are over now,
            // not when their leases run out.
            let app = state.clone();
            error::blocking(move || dispatch::reap_stopped(&app))
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
async fn sweep_expired(app: Arc<state::App>) {
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
