//! The routes under `/api/`, their request and response types (which the OpenAPI document is generated from), the
//! JSON errors, authentication and the run queue.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Path as UrlPath, Query, Request, State as AxState};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio_stream::StreamExt as _;
use utoipa::{IntoParams, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use airlock_protocol::RunSpec;
use airlock_run::{ImportSettings, RunError, RunRequest};
use airlock_source::SourceSpec;

use crate::live::Event;
use crate::ServerConfig;

/// Request bodies larger than this are refused (413).
const MAX_BODY: usize = 64 * 1024;
pub use airlock_protocol::{MAX_EVENTS_BODY, MAX_UPLOAD, UPLOAD_PREFIX};
/// The most bytes of a content file a runner uploads (an artifact, a record).
const MAX_OBJECT: usize = 256 * 1024 * 1024;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "airlock",
        description = "Import, scan, run sealed and review AI agent skills."
    ),
    components(schemas(ApiErrorBody))
)]
pub struct ApiDoc;

/// The server's shared state.
pub struct App {
    pub(crate) config: ServerConfig,
    settings: ImportSettings,
    slots: Arc<Semaphore>,
    pub(crate) metrics: crate::metrics::Metrics,
    /// Woken when a run is queued for the runners (their claims wait on it).
    pub(crate) queued: Arc<tokio::sync::Notify>,
    /// Woken when events are added to a run by this server's workers (its followers wait on it).
    pub(crate) events_added: Arc<tokio::sync::Notify>,
    /// Login sessions of the web UI.
    pub(crate) sessions: crate::access::Sessions,
    /// The key statements are signed with, read (or made) on first use.
    pub(crate) attest_keys: std::sync::OnceLock<airlock_attest::Keys>,
}

impl App {
    pub fn new(config: ServerConfig) -> Self {
        let mut settings = ImportSettings::new(&config.data_dir);
        settings.github_base = config.github_base.clone();
        settings.guard = Some(config.fetch_guard.clone());
        Self {
            slots: Arc::new(Semaphore::new(config.max_concurrent_runs.max(1))),
            settings,
            config,
            metrics: crate::metrics::Metrics::default(),
            queued: Arc::default(),
            events_added: Arc::default(),
            sessions: crate::access::Sessions::default(),
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

/// An upload's name: 64 lowercase hex digits.
pub(crate) fn check_sha(sha: &str) -> Result<(), ApiError> {
    if sha.len() == 64
        && sha
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        Ok(())
    } else {
        Err(ApiError::bad(
            "bad_upload",
            "an upload is named upload:<64 hex digits>",
        ))
    }
}

/// The router and the OpenAPI document, built together from the same handlers.
pub fn openapi_and_router(state: Shared) -> (Router, utoipa::openapi::OpenApi) {
    let (api_router, doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(create_source, list_sources))
        .routes(routes!(get_source))
        .routes(routes!(get_report))
        .routes(routes!(crate::detonate::detonate))
        .routes(routes!(crate::attest::key))
        .routes(routes!(crate::attest::source))
        .routes(routes!(crate::attest::run))
        .routes(routes!(create_run, list_runs))
        .routes(routes!(get_run, discard_run))
        .routes(routes!(cancel_run))
        .routes(routes!(run_events))
        .routes(routes!(list_artifacts))
        .routes(routes!(get_artifact))
        .routes(routes!(get_bundle))
        .merge(
            // An archive is bigger than any JSON body: this route alone takes up to MAX_UPLOAD.
            OpenApiRouter::new()
                .routes(routes!(create_upload))
                .layer(axum::extract::DefaultBodyLimit::max(MAX_UPLOAD)),
        )
        .routes(routes!(crate::dispatch::claim))
        .routes(routes!(crate::dispatch::renew))
        .merge(
            // A batch of a run's events can hold long command lines (each up to 64 KiB).
            OpenApiRouter::new()
                .routes(routes!(crate::dispatch::events))
                .layer(axum::extract::DefaultBodyLimit::max(MAX_EVENTS_BODY)),
        )
        .routes(routes!(crate::dispatch::fail))
        .routes(routes!(crate::dispatch::get_source))
        .merge(
            // Artifacts and records are bigger than the other bodies.
            OpenApiRouter::new()
                .routes(routes!(crate::dispatch::put_object))
                .routes(routes!(crate::dispatch::finish))
                .layer(axum::extract::DefaultBodyLimit::max(MAX_OBJECT)),
        )
        .split_for_parts();
    let doc = complete(doc);
    let doc_json = Arc::new(doc.to_pretty_json().unwrap_or_default());
    let router = api_router
        .merge(crate::ui::routes())
        .route(
            "/api/openapi.json",
            axum::routing::get(move || {
                let doc = doc_json.clone();
                async move {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        doc.as_str().to_owned(),
                    )
                }
            }),
        )
        .route(
            "/metrics",
            axum::routing::get(|AxState(app): AxState<Shared>| async move {
                // The whole deployment's queue (what an autoscaler of runners watches).
                let app2 = app.clone();
                let (queued, running) = blocking(move || Ok(app2.config.store()?.queue_depth()?))
                    .await
                    .map(|(q, r)| (usize::try_from(q).unwrap_or(0), usize::try_from(r).unwrap_or(0)))
                    .unwrap_or((0, 0));
                (
                    [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                    app.metrics.render(queued, running),
                )
            }),
        )
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route") })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::access::guard,
        ))
        .layer(axum::middleware::from_fn(json_errors))
        .layer(axum::middleware::from_fn_with_state(state.clone(), track))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(state);
    (router, doc)
}

/// The statuses every route may answer whatever its handler says (the guards, the extractors, the store), added to
/// each operation of the document, with the pattern of the ids in paths: what the server answers is what the
/// document says.
fn complete(doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    let Ok(mut value) = serde_json::to_value(&doc) else {
        return doc;
    };
    let error = |description: &str| {
        serde_json::json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApiErrorBody"}}},
        })
    };
    let Some(paths) = value.get_mut("paths").and_then(serde_json::Value::as_object_mut) else {
        return doc;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if !["get", "post", "put", "delete"].contains(&method.as_str()) {
                continue;
            }
            let with_body = op.get("requestBody").is_some();
            let Some(responses) = op.get_mut("responses").and_then(serde_json::Value::as_object_mut) else {
                continue;
            };
            let mut add = |status: &str, description: &str| {
                responses
                    .entry(status.to_owned())
                    .or_insert_with(|| error(description));
            };
            add(
                "401",
                "no token, or not a valid one, where the server asks for one",
            );
            add(
                "421",
                "sent to a host name that is not this server's (DNS rebinding)",
            );
            add("503", "the store cannot be reached");
            if path.contains('{') {
                add("400", "an id that is not one airlock makes");
            }
            if with_body {
                add("400", "a body that cannot be read");
                add("413", "a body larger than the route takes");
                add(
                    "415",
                    "a body that is not JSON (or, for an upload, not an archive)",
                );
                add("422", "JSON that does not fit the schema");
            }
            if path.starts_with("/api/runner/") {
                add(
                    "404",
                    "this server runs its runs itself: it has no runner routes (no_runners)",
                );
            }
            if let Some(params) = op.get_mut("parameters").and_then(serde_json::Value::as_array_mut) {
                for p in params {
                    if p["in"] == "path" {
                        let pattern = if p["name"] == "sha" {
                            "^[0-9a-f]{64}$"
                        } else {
                            "^[A-Za-z0-9-]{1,100}$"
                        };
                        p["schema"] = serde_json::json!({"type": "string", "pattern": pattern});
                    }
                }
            }
        }
    }
    serde_json::from_value(value).unwrap_or(doc)
}

// ----- errors -----

/// An error as the API returns it: a stable `code` and a human `message`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiErrorBody {
    pub code: String,
    pub message: String,
}

#[derive(Debug)]
pub struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) body: ApiErrorBody,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ApiErrorBody {
                code: code.into(),
                message: message.into(),
            },
        }
    }

    /// A source that cannot be imported as given.
    pub fn bad_source(message: impl Into<String>) -> Self {
        Self::bad("bad_source", message)
    }

    /// The human message.
    pub fn message(&self) -> &str {
        &self.body.message
    }

    pub(crate) fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", format!("no such {what}"))
    }

    pub(crate) fn bad(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

impl From<airlock_store::StoreError> for ApiError {
    fn from(e: airlock_store::StoreError) -> Self {
        match e {
            airlock_store::StoreError::NotFound(_) => Self::not_found("run"),
            airlock_store::StoreError::Ambiguous(_) => {
                Self::bad("ambiguous_id", "the id matches several runs")
            }
            e @ (airlock_store::StoreError::Postgres(_) | airlock_store::StoreError::Database(_)) => {
                Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    e.to_string(),
                )
            }
            e => Self::new(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
        }
    }
}

impl From<RunError> for ApiError {
    fn from(e: RunError) -> Self {
        let message = e.to_string();
        match e {
            RunError::Usage(_) => Self::bad("bad_request", message),
            RunError::NothingToRun { .. } => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "nothing_to_run", message)
            }
            RunError::Import {
                error: airlock_source::SourceError::BadInput { .. },
                ..
            } => Self::bad("bad_source", message),
            RunError::Import {
                error: airlock_source::SourceError::Refused { .. },
                ..
            } => Self::new(StatusCode::FORBIDDEN, "fetch_refused", message),
            RunError::Import { .. } => Self::new(StatusCode::UNPROCESSABLE_ENTITY, "import_failed", message),
            RunError::Sandbox(_) => Self::new(StatusCode::SERVICE_UNAVAILABLE, "sandbox", message),
            _ => Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message),
        }
    }
}

/// A JSON body, with every way it can be wrong answered as a JSON error (400, 413, 415).
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Self(v)),
            Err(JsonRejection::MissingJsonContentType(_)) => Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "content_type",
                "send the body as application/json",
            )),
            Err(JsonRejection::BytesRejection(r)) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "too_large",
                    format!("bodies are at most {MAX_BODY} bytes"),
                ))
            }
            Err(e) => Err(ApiError::bad("bad_json", e.body_text())),
        }
    }
}

pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            e.to_string(),
        ))
    })
}

/// Ids are what airlock makes: letters, digits and dashes (no path tricks reach the store or the file system).
pub(crate) fn check_id(id: &str) -> Result<(), ApiError> {
    let ok = !id.is_empty() && id.len() <= 100 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad("bad_id", "ids are letters, digits and dashes"))
    }
}

/// Every error under `/api/` is the JSON error shape, whoever made it (the router's own 405 for a method a route does
/// not take, a body limit's 413): a client never has to parse text. Headers such as `Allow` are kept.
async fn json_errors(req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let response = next.run(req).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !api || is_json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (code, message) = match status {
        StatusCode::METHOD_NOT_ALLOWED => (
            "method_not_allowed",
            "this route does not take that method (see Allow)",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => ("too_large", "the request body is over this route's limit"),
        StatusCode::NOT_FOUND => ("not_found", "no such route"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("content_type", "this route takes another content type"),
        s if s.is_server_error() => ("internal", "the server failed to answer this request"),
        _ => ("bad_request", "the request was refused"),
    };
    let (mut parts, _) = response.into_parts();
    let (_, body) = ApiError::new(status, code, message).into_response().into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, body)
}

/// Counts every request by its route (the template, not the concrete path), method and status, with its latency.
async fn track(AxState(app): AxState<Shared>, req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let method = req.method().to_string();
    let t0 = std::time::Instant::now();
    let response = next.run(req).await;
    app.metrics
        .request(&route, &method, response.status().as_u16(), t0.elapsed());
    response
}

// ----- sources -----

/// A source to import: a GitHub or git URL, or (when the operator allows its folder) a local path.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSource {
    pub url: String,
}

/// An imported and scanned source.
#[derive(Debug, Serialize, ToSchema)]
pub struct SourceView {
    pub id: String,
    pub input: String,
    pub commit: Option<String>,
    /// Whether the input named a commit; when it named a branch or tag, `pinned_url` names the commit it resolved to.
    pub pinned: bool,
    pub requested_ref: Option<String>,
    pub pinned_url: Option<String>,
    pub report_id: Option<String>,
    pub risk_level: Option<String>,
    pub classification: Option<String>,
    /// The report's headline lines: the verdict, then its main reasons.
    pub headline: Vec<String>,
    pub findings: usize,
    pub created_at: String,
}

fn source_view(
    id: String,
    source: &airlock_types::SkillSource,
    report: Option<(&str, &airlock_types::ScanReport)>,
) -> SourceView {
    SourceView {
        id,
        input: source.input.clone(),
        commit: source.commit.as_ref().map(ToString::to_string),
        pinned: source.pinned,
        requested_ref: source.requested_ref.clone(),
        pinned_url: source.pinned_url.clone(),
        report_id: report.map(|(id, _)| id.to_owned()),
        risk_level: report.map(|(_, r)| r.risk_level.to_string()),
        classification: report.map(|(_, r)| airlock_types::wire_name(&r.classification)),
        headline: report.map_or_else(Vec::new, |(_, r)| r.headline.clone()),
        findings: report.map_or(0, |(_, r)| r.findings.len()),
        created_at: source.created_at.clone(),
    }
}

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

pub(crate) fn import_and_store(app: &App, input: &str) -> Result<SourceView, ApiError> {
    let t0 = std::time::Instant::now();
    let result = import_and_store_inner(app, input);
    app.metrics.import(result.is_ok(), t0.elapsed());
    result
}

fn import_and_store_inner(app: &App, input: &str) -> Result<SourceView, ApiError> {
    let spec = app.settings_parse(input)?;
    let mut imported = airlock_run::import(&spec, &app.settings)?;
    if input.starts_with(UPLOAD_PREFIX) {
        imported.rename(input);
    }
    let store = app.config.store()?;
    let (report, _) = imported.scan_trusted(&store)?;
    let expires =
        airlock_store::now_unix() + i64::try_from(app.config.retention.as_secs()).unwrap_or(i64::MAX / 4);
    let id = store.save_source(&imported.staged.source, expires)?;
    let report_id = store.save_report(&id, &report, expires)?;
    Ok(source_view(
        id,
        &imported.staged.source,
        Some((&report_id, &report)),
    ))
}

/// Import a source, pin it to a commit and scan it.
#[utoipa::path(post, path = "/api/sources", request_body = NewSource,
    responses((status = 201, body = SourceView), (status = 400, body = ApiErrorBody), (status = 403, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
async fn create_source(
    AxState(app): AxState<Shared>,
    Body(body): Body<NewSource>,
) -> Result<Response, ApiError> {
    if body.url.len() > 4096 {
        return Err(ApiError::bad("bad_url", "the URL is too long"));
    }
    let view = blocking(move || import_and_store(&app, &body.url)).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// What an upload is called from then on.
#[derive(Debug, Serialize, ToSchema)]
pub struct UploadView {
    /// `upload:<sha256>`: give it as a source's `url` or a run's `source`.
    pub source: String,
    pub size: usize,
}

/// Upload a skill as a gzip-compressed tar archive (a local folder or archive of a client's, for a server that
/// cannot read the client's disk); it is staged like any archive when a source or run names it.
#[utoipa::path(post, path = "/api/uploads", request_body(content = Vec<u8>, content_type = "application/gzip"),
    responses((status = 201, body = UploadView), (status = 400, body = ApiErrorBody), (status = 413, body = ApiErrorBody)))]
async fn create_upload(AxState(app): AxState<Shared>, body: axum::body::Bytes) -> Result<Response, ApiError> {
    if body.len() < 2 || body[..2] != [0x1f, 0x8b] {
        return Err(ApiError::bad(
            "bad_upload",
            "an upload is a gzip-compressed tar archive",
        ));
    }
    let size = body.len();
    let sha = blocking(move || {
        let sha = airlock_store::sha_hex(&body);
        app.config.objects()?.put_upload(&sha, &body)?;
        Ok(sha)
    })
    .await?;
    Ok((
        StatusCode::CREATED,
        Json(UploadView {
            source: format!("{UPLOAD_PREFIX}{sha}"),
            size,
        }),
    )
        .into_response())
}

/// Every stored source, newest first.
#[utoipa::path(get, path = "/api/sources", responses((status = 200, body = Vec<SourceSummary>)))]
async fn list_sources(AxState(app): AxState<Shared>) -> Result<Json<Vec<SourceSummary>>, ApiError> {
    blocking(move || {
        let store = app.config.store()?;
        Ok(Json(
            store
                .sources()?
                .into_iter()
                .map(|r| SourceSummary {
                    id: r.id,
                    input: r.input,
                    commit: r.commit,
                    created_at: r.created_at,
                    report_id: r.report_id,
                    risk_level: r.risk_level,
                })
                .collect(),
        ))
    })
    .await
}

/// A line of the source list.
#[derive(Debug, Serialize, ToSchema)]
pub struct SourceSummary {
    pub id: String,
    pub input: String,
    pub commit: Option<String>,
    pub created_at: String,
    pub report_id: Option<String>,
    pub risk_level: Option<String>,
}

/// One source and its latest scan.
#[utoipa::path(get, path = "/api/sources/{id}", params(("id" = String, Path)),
    responses((status = 200, body = SourceView), (status = 404, body = ApiErrorBody)))]
async fn get_source(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<SourceView>, ApiError> {
    check_id(&id)?;
    blocking(move || {
        let store = app.config.store()?;
        let (source, report) = store.source(&id).map_err(|e| match e {
            airlock_store::StoreError::NotFound(_) => ApiError::not_found("source"),
            e => e.into(),
        })?;
        Ok(Json(source_view(
            id,
            &source,
            report.as_ref().map(|(i, r)| (i.as_str(), r)),
        )))
    })
    .await
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ReportQuery {
    /// `json` (the default) or `sarif`.
    pub format: Option<String>,
}

/// The risk report of a source, as JSON or SARIF.
#[utoipa::path(get, path = "/api/sources/{id}/report", params(("id" = String, Path), ReportQuery),
    responses((status = 200, description = "the report (JSON or SARIF 2.1.0)"), (status = 404, body = ApiErrorBody)))]
async fn get_report(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
    Query(q): Query<ReportQuery>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    let sarif = match q.format.as_deref() {
        None | Some("json") => false,
        Some("sarif") => true,
        Some(_) => return Err(ApiError::bad("bad_format", "format is json or sarif")),
    };
    blocking(move || {
        let store = app.config.store()?;
        let (_, report) = store.source(&id).map_err(|_| ApiError::not_found("source"))?;
        let (_, report) = report.ok_or_else(|| ApiError::not_found("report"))?;
        let value = if sarif {
            airlock_scan::render::sarif(&report)
        } else {
            serde_json::to_value(&report).unwrap_or_default()
        };
        Ok(Json(value).into_response())
    })
    .await
}

// ----- runs -----

/// A run as the API shows it: where it is, and its record once it has one.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunView {
    pub run_id: String,
    /// `queued`, `running`, `cancelled`, `error`, or the record's status.
    pub status: String,
    /// Its place in the queue while it waits (1 is next).
    pub position: Option<usize>,
    pub message: Option<String>,
    /// The runner machine that holds (or held) it, in a deployment with runners.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    /// The run record (see docs/record.md) once the run is stored.
    #[schema(value_type = Object)]
    pub record: Option<serde_json::Value>,
}

/// The library's request for a run this server (or, with `ctx` of its own, a runner) carries out.
pub(crate) fn run_request(
    app: &App,
    body: RunSpec,
    run_id: &str,
    cancel: Arc<std::sync::atomic::AtomicBool>,
) -> Result<RunRequest, ApiError> {
    let ctx = airlock_run::request::Context {
        allow_net: Some(app.config.allow_net.clone()),
        egress: Some(airlock_egress::EgressConfig {
            policy: app.config.network.clone(),
            extra_ca: app.config.egress_ca.clone(),
            ..Default::default()
        }),
        retention: app.config.retention,
        helper: app.config.helper.clone(),
        policy: app.config.policy.clone(),
        bounded: true,
        ..Default::default()
    };
    let mut request = airlock_run::request::build(&body, &ctx, Some(run_id), Some(cancel), &|s| {
        app.settings_parse(s)
    })?;
    request.source_name = body
        .source
        .starts_with(UPLOAD_PREFIX)
        .then(|| body.source.clone());
    Ok(request)
}

impl From<airlock_run::request::RequestError> for ApiError {
    fn from(e: airlock_run::request::RequestError) -> Self {
        let status = if e.refused {
            StatusCode::FORBIDDEN
        } else {
            StatusCode::BAD_REQUEST
        };
        Self::new(status, e.code, e.message)
    }
}

/// Queue a run; it starts when a slot is free. Its events are at `/api/runs/{id}/events`.
#[utoipa::path(post, path = "/api/runs", request_body = RunSpec,
    responses((status = 202, body = RunView), (status = 400, body = ApiErrorBody), (status = 403, body = ApiErrorBody)))]
async fn create_run(AxState(app): AxState<Shared>, Body(body): Body<RunSpec>) -> Result<Response, ApiError> {
    let (run_id, position) = submit_run(&app, body).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(RunView {
            run_id,
            status: "queued".into(),
            position,
            message: None,
            runner: None,
            record: None,
        }),
    )
        .into_response())
}

/// Checks a run and queues it (for this server's workers, or with runners for the runners): its id and place.
pub(crate) async fn submit_run(app: &Shared, body: RunSpec) -> Result<(String, Option<usize>), ApiError> {
    // Checked here as a worker will carry it out (on a blocking thread: an uploaded archive may be fetched from a
    // bucket), then queued.
    let run_id = airlock_run::new_run_id();
    let (app2, body2, id2) = (app.clone(), body.clone(), run_id.clone());
    let request = blocking(move || run_request(&app2, body2, &id2, Arc::default())).await?;
    let mode = airlock_types::wire_name(&request.mode);
    app.metrics.run_queued(&mode);
    let position = crate::dispatch::enqueue(app, &run_id, body, &mode).await?;
    Ok((run_id, position))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct RunFilter {
    /// Only runs with this status (`queued`, `running`, `succeeded`, `failed`, ...).
    pub status: Option<String>,
    /// Only runs whose source input contains this text.
    pub source: Option<String>,
}

/// A line of the run list.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunSummary {
    pub run_id: String,
    pub status: String,
    pub source: Option<String>,
    pub mode: Option<String>,
    pub started_at: Option<String>,
    pub position: Option<usize>,
}

/// Runs: the queued and running ones first, then the stored ones, newest first.
#[utoipa::path(get, path = "/api/runs", params(RunFilter), responses((status = 200, body = Vec<RunSummary>)))]
async fn list_runs(
    AxState(app): AxState<Shared>,
    Query(filter): Query<RunFilter>,
) -> Result<Json<Vec<RunSummary>>, ApiError> {
    let app2 = app.clone();
    let (queued, stored) = blocking(move || {
        let store = app2.config.store()?;
        Ok((store.unfinished_runs()?, store.runs()?))
    })
    .await?;
    let mut out: Vec<RunSummary> = Vec::new();
    out.extend(queued.into_iter().map(|r| RunSummary {
        status: queue_status(&r.state),
        source: Some(r.source),
        mode: Some(r.mode),
        started_at: None,
        position: r.position,
        run_id: r.id,
    }));
    out.extend(
        stored
            .into_iter()
            .filter(|r| !out.iter().any(|o| o.run_id == r.id))
            .map(|r| RunSummary {
                run_id: r.id,
                status: r.status,
                source: Some(r.source),
                mode: Some(r.mode),
                started_at: Some(r.started_at),
                position: None,
            })
            .collect::<Vec<_>>(),
    );
    out.retain(|r| {
        filter.status.as_ref().is_none_or(|s| &r.status == s)
            && filter
                .source
                .as_ref()
                .is_none_or(|s| r.source.as_deref().is_some_and(|src| src.contains(s.as_str())))
    });
    Ok(Json(out))
}

async fn stored_view(app: &Shared, id: String) -> Result<RunView, ApiError> {
    let app = app.clone();
    blocking(move || stored_view_in(&app.config.store()?, &id)).await
}

/// A stored run as the API shows it.
fn stored_view_in(store: &airlock_store::Store, id: &str) -> Result<RunView, ApiError> {
    let (row, record) = store.run(id)?;
    Ok(RunView {
        run_id: row.id,
        status: row.status,
        position: None,
        message: None,
        runner: None,
        record: record.map(|r| serde_json::to_value(r).unwrap_or_default()),
    })
}

/// The status the API shows for a run of the queue that has no stored record.
pub(crate) fn queue_status(state: &str) -> String {
    match state {
        airlock_store::queue::state::LOST => "failed".into(),
        other => other.into(),
    }
}

/// A run of the queue that is not over; `None` when it is (or was never queued).
pub(crate) async fn queued_view(app: &Shared, id: &str) -> Result<Option<RunView>, ApiError> {
    let (app, id) = (app.clone(), id.to_owned());
    blocking(move || queued_view_in(&app.config.store()?, &id)).await
}

fn queued_view_in(store: &airlock_store::Store, id: &str) -> Result<Option<RunView>, ApiError> {
    let Some(run) = store.queued_run(id)? else {
        return Ok(None);
    };
    if run.state == airlock_store::queue::state::DONE {
        return Ok(None);
    }
    Ok(Some(RunView {
        position: store.queue_position(id)?,
        status: queue_status(&run.state),
        message: run.message,
        runner: run.runner,
        run_id: run.id,
        record: None,
    }))
}

/// One run: its place in the queue, or its record.
#[utoipa::path(get, path = "/api/runs/{id}", params(("id" = String, Path)),
    responses((status = 200, body = RunView), (status = 404, body = ApiErrorBody)))]
async fn get_run(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<RunView>, ApiError> {
    check_id(&id)?;
    // Where the queue has it, else its record and the worker that made it, from one store.
    blocking(move || {
        let store = app.config.store()?;
        if let Some(view) = queued_view_in(&store, &id)? {
            return Ok(Json(view));
        }
        let mut view = stored_view_in(&store, &id)?;
        view.runner = store.queued_run(&view.run_id)?.and_then(|r| r.runner);
        Ok(Json(view))
    })
    .await
}

/// Cancel a run: a queued one never starts, a running one is stopped and recorded as `cancelled`.
#[utoipa::path(post, path = "/api/runs/{id}/cancel", params(("id" = String, Path)),
    responses((status = 202, body = RunView), (status = 404, body = ApiErrorBody), (status = 409, body = ApiErrorBody)))]
async fn cancel_run(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    let status = cancel(&app, &id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(RunView {
            run_id: id,
            status: status.into(),
            position: None,
            message: None,
            runner: None,
            record: None,
        }),
    )
        .into_response())
}

/// Asks run `id` to stop: `cancelled` when it had not started, `cancelling` when it is being stopped.
pub(crate) async fn cancel(app: &Shared, id: &str) -> Result<&'static str, ApiError> {
    check_id(id)?;
    use airlock_store::queue::Cancelled;
    match crate::dispatch::cancel(app, id).await? {
        Cancelled::Dequeued => Ok("cancelled"),
        Cancelled::Asked => Ok("cancelling"),
        Cancelled::Over => Err(ApiError::new(StatusCode::CONFLICT, "finished", "the run is over")),
        Cancelled::NotFound => Err(ApiError::not_found("run in progress")),
    }
}

/// Delete a stored run and its artifacts now.
#[utoipa::path(delete, path = "/api/runs/{id}", params(("id" = String, Path)),
    responses((status = 204), (status = 404, body = ApiErrorBody), (status = 409, body = ApiErrorBody)))]
async fn discard_run(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    discard(&app, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Deletes a stored run (and its queue row and events); 409 while it is queued or running.
pub(crate) async fn discard(app: &Shared, id: &str) -> Result<(), ApiError> {
    check_id(id)?;
    let (app2, id2) = (app.clone(), id.to_owned());
    blocking(move || {
        let mut store = app2.config.store()?;
        // A run of the queue: its row and events go too (a lost or cancelled one has nothing else).
        let queued = store.queued_run(&id2)?;
        if queued
            .as_ref()
            .is_some_and(|q| matches!(q.state.as_str(), "queued" | "running"))
        {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "in_progress",
                "cancel the run first",
            ));
        }
        match store.discard(&id2) {
            Err(airlock_store::StoreError::NotFound(_)) if queued.is_some() => {}
            other => {
                other?;
            }
        }
        if queued.is_some() {
            store.forget_queued(&id2)?;
        }
        Ok(())
    })
    .await
}

/// The run's events as Server-Sent Events: everything so far, then live, ending with `record` (the stored record)
/// and `end`. Each stored event carries its number as its SSE `id`; a client that reconnects (to this server or
/// another) sends the last one it got as `Last-Event-ID` and gets only what came after. For a run stored before the
/// queue kept its events, the record alone.
#[utoipa::path(get, path = "/api/runs/{id}/events",
    params(("id" = String, Path), ("Last-Event-ID" = Option<i64>, Header, description = "the last event's number a client got")),
    responses((status = 200, description = "text/event-stream: state, phase, sandbox, record and end events"),
        (status = 404, body = ApiErrorBody)))]
async fn run_events(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    // A number a client got before; anything else is a start from the beginning.
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|n| *n >= 0)
        .unwrap_or(0);
    let (tx, rx) = tokio::sync::mpsc::channel::<Event>(256);
    let queued = blocking({
        let (app, id) = (app.clone(), id.clone());
        move || Ok(app.config.store()?.queued_run(&id)?.is_some())
    })
    .await?;
    match queued {
        true => crate::dispatch::follow(app.clone(), id, after, tx),
        false => {
            let view = stored_view(&app, id).await?;
            tokio::spawn(async move {
                if let Some(record) = view.record {
                    let _ = tx
                        .send(Event {
                            name: "record",
                            data: record.to_string(),
                            id: None,
                        })
                        .await;
                }
                let _ = tx
                    .send(Event {
                        name: "end",
                        data: "{}".into(),
                        id: None,
                    })
                    .await;
            });
        }
    }
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx).map(|e| {
        let event = SseEvent::default().event(e.name).data(e.data);
        Ok::<_, std::convert::Infallible>(match e.id {
            Some(id) => event.id(id.to_string()),
            None => event,
        })
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}

/// An artifact of a run.
#[derive(Debug, Serialize, ToSchema)]
pub struct ArtifactView {
    pub id: String,
    pub kind: String,
    pub path: String,
    pub size: u64,
    pub sha256: String,
    pub summary: String,
}

/// The artifacts of a stored run.
#[utoipa::path(get, path = "/api/runs/{id}/artifacts", params(("id" = String, Path)),
    responses((status = 200, body = Vec<ArtifactView>), (status = 404, body = ApiErrorBody)))]
async fn list_artifacts(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Vec<ArtifactView>>, ApiError> {
    check_id(&id)?;
    blocking(move || {
        let store = app.config.store()?;
        let (_, record) = store.run(&id)?;
        let record = record.ok_or_else(|| ApiError::not_found("record"))?;
        Ok(Json(
            record
                .artifacts
                .into_iter()
                .map(|a| ArtifactView {
                    id: a.id,
                    kind: a.kind,
                    path: a.path,
                    size: a.size,
                    sha256: a.sha256,
                    summary: a.summary,
                })
                .collect(),
        ))
    })
    .await
}

/// A file name safe in a `Content-Disposition` header: the last component, only letters, digits, `.`, `_`, `-`.
fn safe_file_name(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or_default();
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.').to_owned();
    if cleaned.is_empty() {
        "artifact".into()
    } else {
        cleaned
    }
}

/// Download one artifact (a patch, output, a report, a changed or skill file) as an attachment.
#[utoipa::path(get, path = "/api/runs/{id}/artifacts/{artifact}", params(("id" = String, Path), ("artifact" = String, Path)),
    responses((status = 200, description = "the artifact's bytes"), (status = 404, body = ApiErrorBody)))]
async fn get_artifact(
    AxState(app): AxState<Shared>,
    UrlPath((id, artifact)): UrlPath<(String, String)>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    check_id(&artifact)?;
    blocking(move || {
        let store = app.config.store()?;
        let (_, record) = store.run(&id)?;
        let record = record.ok_or_else(|| ApiError::not_found("record"))?;
        let a = record
            .artifacts
            .iter()
            .find(|a| a.id == artifact)
            .ok_or_else(|| ApiError::not_found("artifact"))?;
        let bytes = store.read_object(&a.sha256)?;
        app.metrics.export(&a.kind);
        let content_type = match a.kind.as_str() {
            "patch" => "text/x-diff; charset=utf-8",
            "stdout" | "stderr" => "text/plain; charset=utf-8",
            "report" => "application/json",
            _ => "application/octet-stream",
        };
        let name = safe_file_name(&a.path);
        Ok((
            [
                (header::CONTENT_TYPE, content_type.to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{name}\""),
                ),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            ],
            bytes,
        )
            .into_response())
    })
    .await
}

/// The run's sanitized bundle: the skill's files at their pinned commit with a manifest of hashes, the risk report
/// and the run record, as a `.tar.gz`.
#[utoipa::path(get, path = "/api/runs/{id}/bundle", params(("id" = String, Path)),
    responses((status = 200, description = "application/gzip"), (status = 404, body = ApiErrorBody)))]
async fn get_bundle(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    blocking(move || {
        let store = app.config.store()?;
        let (_, record) = store.run(&id)?;
        let record = record.ok_or_else(|| ApiError::not_found("record"))?;
        let mut bytes = Vec::new();
        airlock_run::bundle::write(&store, &record, &mut bytes)?;
        app.metrics.export("bundle");
        Ok((
            [
                (header::CONTENT_TYPE, "application/gzip".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!(
                        "attachment; filename=\"{}-bundle.tar.gz\"",
                        safe_file_name(&record.run_id)
                    ),
                ),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            ],
            bytes,
        )
            .into_response())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_file_names_are_safe() {
        assert!(check_id("r20261123-120000-abcd").is_ok());
        for bad in ["", "../x", "a/b", "a%2fb", "a b", "a\nb"] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
        assert_eq!(safe_file_name("src/App.jsx"), "App.jsx");
        assert_eq!(safe_file_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_file_name("a\"; evil=1.txt"), "a___evil_1.txt");
        assert_eq!(safe_file_name("..."), "artifact");
    }
}
