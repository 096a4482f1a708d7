//! The router and the OpenAPI document, built together from the same handlers (utoipa-axum), the document completed
//! with what the guards, extractors and store may answer on every route; and the middleware every `/api/` request
//! passes (JSON errors whoever made them, request metrics).

use std::sync::Arc;

use axum::extract::{Request, State as AxState};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{blocking, ApiError, ApiErrorBody, MAX_BODY};
use crate::state::Shared;

pub use airlock_protocol::{MAX_EVENTS_BODY, MAX_UPLOAD};

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

/// The router and the OpenAPI document, built together from the same handlers.
pub fn openapi_and_router(state: Shared) -> (Router, utoipa::openapi::OpenApi) {
    let (api_router, doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(
            crate::sources::create_source,
            crate::sources::list_sources
        ))
        .routes(routes!(crate::sources::get_source))
        .routes(routes!(crate::sources::get_report))
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
                .routes(routes!(crate::sources::create_upload))
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
