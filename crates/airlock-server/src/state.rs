//! The server's shared state: its configuration, import settings, run slots, metrics, login sessions and signing
//! key; and how a source named in a request is parsed (uploads, and local paths only inside the allowed folders).

use std::sync::Arc;

use axum::http::StatusCode;
use tokio::sync::Semaphore;

use airlock_run::ImportSettings;
use airlock_source::SourceSpec;

use crate::config::ServerConfig;
use crate::error::{check_sha, ApiError};

pub use airlock_protocol::UPLOAD_PREFIX;

/// The server's shared state.
pub struct App {
    pub(crate) config: ServerConfig,
    pub(crate) settings: ImportSettings,
    slots: Arc<Semaphore>,
    pub(crate) metrics: crate::metrics::Metrics,
    /// Woken when a run is queued for the runners (their claims wait on it).
    pub(crate) queued: Arc<tokio::sync::Notify>,
    /// Woken when events are added to a run by this server's workers (its followers wait on it).
    pub(crate) events_added: Arc<tokio::sync::Notify>,
    /// Login sessions of the web UI.
    pub(crate) sessions: crate::session::Sessions,
    /// The key statements are signed with, read (or made) on first use.
    pub(crate) attest_keys: std::sync::OnceLock<airlock_attest::Keys>,
}

impl App {
    pub fn new(config: ServerConfig) -> Self {
        let mut settings = ImportSettings::new(&config.data_dir);
        settings.github_base = config.github_base.clone();
        settings.guard = Some(config.fetch_guard.clone());
        settings.signing_key = config.signing_key.clone();
        settings.signatures = config.signatures.clone();
        Self {
            slots: Arc::new(Semaphore::new(config.max_concurrent_runs.max(1))),
            settings,
            config,
            metrics: crate::metrics::Metrics::default(),
            queued: Arc::default(),
            events_added: Arc::default(),
            sessions: crate::session::Sessions::default(),
            attest_keys: std::sync::OnceLock::new(),
        }
    }

    /// The run slots: a sandbox started outside a run's queue (a detonation) holds one too.
    pub(crate) fn slots(&self) -> Arc<Semaphore> {
        self.slots.clone()
    }

    pub(crate) fn settings(&self) -> &ImportSettings {
        &self.settings
    }

    /// Parses a source as the API does, refusing local paths outside the allowed folders.
    pub(crate) fn settings_parse(&self, input: &str) -> Result<SourceSpec, ApiError> {
        // An archive a client uploaded (`POST /api/uploads`), kept in the server's own folder.
        if let Some(sha) = input.strip_prefix(UPLOAD_PREFIX) {
            check_sha(sha)?;
            let path = self
                .config
                .objects()?
                .upload_file(sha, &self.config.upload_cache())?
                .ok_or_else(|| ApiError::not_found("upload"))?;
            return Ok(SourceSpec::Archive(path));
        }
        let spec = self.settings.parse(input)?;
        check_local(self, &spec)?;
        Ok(spec)
    }
}

pub(crate) type Shared = Arc<App>;

/// Refuses a local folder, archive or `file://` repository outside the folders the operator allows.
fn check_local(app: &App, spec: &SourceSpec) -> Result<(), ApiError> {
    let local: Option<std::path::PathBuf> = match spec {
        SourceSpec::Folder(p) | SourceSpec::Archive(p) => Some(p.clone()),
        SourceSpec::Git { url, .. } => url.expose().strip_prefix("file://").map(Into::into),
        SourceSpec::GitHub(_) => None,
    };
    let Some(path) = local else { return Ok(()) };
    let refused = || {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "local_refused",
            "this server does not import local paths outside the folders its operator allows (--allow-local)",
        )
    };
    let real = fs_err::canonicalize(&path).map_err(|_| refused())?;
    let allowed = app
        .config
        .allow_local
        .iter()
        .filter_map(|d| fs_err::canonicalize(d).ok())
        .any(|d| real.starts_with(&d));
    if allowed {
        Ok(())
    } else {
        Err(refused())
    }
}
