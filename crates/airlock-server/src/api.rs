//! The routes under `/api/` (the sources here, the runs in `runs.rs`), their request and response types (which the
//! OpenAPI document is generated from), the JSON errors and the server's shared state.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Path as UrlPath, Query, Request, State as AxState};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use utoipa::{IntoParams, OpenApi, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use airlock_protocol::RunSpec;
use airlock_run::{ImportSettings, RunError};
use airlock_source::SourceSpec;

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
        .routes(routes!(crate::runs::create_run, crate::runs::list_runs))
        .routes(routes!(crate::runs::get_run, crate::runs::discard_run))
        .routes(routes!(crate::runs::cancel_run))
        .routes(routes!(crate::runs::run_events))
        .routes(routes!(crate::runs::list_artifacts))
        .routes(routes!(crate::runs::get_artifact))
        .routes(routes!(crate::runs::get_bundle))
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
