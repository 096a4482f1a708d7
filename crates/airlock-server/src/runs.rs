//! The run routes under `/api/runs`: a run asked for (checked as a worker will carry it out, then queued), the run
//! list, one run (its record, or where the queue has it), cancel, discard, its events as Server-Sent Events (from the
//! store, resumable with `Last-Event-ID`), its artifacts and its review bundle.

use std::sync::Arc;

use axum::extract::{Path as UrlPath, Query, State as AxState};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use tokio_stream::StreamExt as _;
use utoipa::{IntoParams, ToSchema};

use airlock_run::RunRequest;

use crate::error::{blocking, check_id, ApiError, ApiErrorBody, Body};
use crate::live::Event;
use crate::state::{App, Shared};
use airlock_protocol::{RunSpec, UPLOAD_PREFIX};
pub use airlock_protocol::{RunSummary, RunView};

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
        install_limits: Default::default(),
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
pub(crate) async fn create_run(
    AxState(app): AxState<Shared>,
    Body(body): Body<RunSpec>,
) -> Result<Response, ApiError> {
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
    let (app2, id2) = (app.clone(), run_id.clone());
    let (mode, position) = blocking(move || {
        let request = run_request(&app2, body.clone(), &id2, Arc::default())?;
        let mode = airlock_types::wire_name(&request.mode);
        let position = crate::dispatch::enqueue(&app2, &id2, body, &mode)?;
        Ok((mode, position))
    })
    .await?;
    app.queued.notify_waiters();
    app.metrics.run_queued(&mode);
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

/// Runs: the queued and running ones first, then the stored ones, newest first.
#[utoipa::path(get, path = "/api/runs", params(RunFilter), responses((status = 200, body = Vec<RunSummary>)))]
pub(crate) async fn list_runs(
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
        record,
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
pub(crate) async fn get_run(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<RunView>, ApiError> {
    check_id(&id)?;
    // Its record once one is stored (a server's own worker stores it before the queue's row ends), else where the
    // queue has it; with the worker that made it, from one store.
    blocking(move || {
        let store = app.config.store()?;
        let stored = stored_view_in(&store, &id);
        let over = stored
            .as_ref()
            .is_ok_and(|v| v.record.is_some() && v.status != "running");
        if !over {
            if let Some(view) = queued_view_in(&store, &id)? {
                return Ok(Json(view));
            }
        }
        let mut view = stored?;
        view.runner = store.queued_run(&view.run_id)?.and_then(|r| r.runner);
        Ok(Json(view))
    })
    .await
}

/// Cancel a run: a queued one never starts, a running one is stopped and recorded as `cancelled`.
#[utoipa::path(post, path = "/api/runs/{id}/cancel", params(("id" = String, Path)),
    responses((status = 202, body = RunView), (status = 404, body = ApiErrorBody), (status = 409, body = ApiErrorBody)))]
pub(crate) async fn cancel_run(
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
    // A run whose record is stored is over, even while its worker is still closing the queue's row.
    let (app2, id2) = (app.clone(), id.to_owned());
    let stored = blocking(move || Ok(stored_over(&app2.config.store()?, &id2))).await?;
    if stored {
        return Err(ApiError::new(StatusCode::CONFLICT, "finished", "the run is over"));
    }
    match crate::dispatch::cancel(app, id).await? {
        Cancelled::Dequeued => Ok("cancelled"),
        Cancelled::Asked => Ok("cancelling"),
        Cancelled::Over => Err(ApiError::new(StatusCode::CONFLICT, "finished", "the run is over")),
        Cancelled::NotFound => Err(ApiError::not_found("run in progress")),
    }
}

/// A stored run's record; 404 when the run has none (yet).
pub(crate) fn stored_record(
    store: &airlock_store::Store,
    id: &str,
) -> Result<airlock_types::SkillRun, ApiError> {
    store.run(id)?.1.ok_or_else(|| ApiError::not_found("record"))
}

/// Whether a run's record is stored with how it ended (it is over, though its worker may still be closing the
/// queue's row).
fn stored_over(store: &airlock_store::Store, id: &str) -> bool {
    store
        .run(id)
        .is_ok_and(|(row, record)| record.is_some() && row.status != "running")
}

/// Delete a stored run and its artifacts now.
#[utoipa::path(delete, path = "/api/runs/{id}", params(("id" = String, Path)),
    responses((status = 204), (status = 404, body = ApiErrorBody), (status = 409, body = ApiErrorBody)))]
pub(crate) async fn discard_run(
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
        // A run of the queue: its row and events go too (a lost or cancelled one has nothing else). A run whose
        // record is stored is being handed back: its worker closes the queue's row a moment later.
        let mut queued = store.queued_run(&id2)?;
        for _ in 0..40 {
            let open = queued.as_ref().is_some_and(|q| q.state == "running");
            if !(open && stored_over(&store, &id2)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            queued = store.queued_run(&id2)?;
        }
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
pub(crate) async fn run_events(
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
                            data: serde_json::to_string(&record).unwrap_or_default(),
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
pub(crate) async fn list_artifacts(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Vec<ArtifactView>>, ApiError> {
    check_id(&id)?;
    blocking(move || {
        let store = app.config.store()?;
        let record = stored_record(&store, &id)?;
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
pub(crate) async fn get_artifact(
    AxState(app): AxState<Shared>,
    UrlPath((id, artifact)): UrlPath<(String, String)>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    check_id(&artifact)?;
    blocking(move || {
        let store = app.config.store()?;
        let record = stored_record(&store, &id)?;
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
/// the run record and its signed statement (`attestation.intoto.json`), as a `.tar.gz`.
#[utoipa::path(get, path = "/api/runs/{id}/bundle", params(("id" = String, Path)),
    responses((status = 200, description = "application/gzip"), (status = 404, body = ApiErrorBody)))]
pub(crate) async fn get_bundle(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    blocking(move || {
        let store = app.config.store()?;
        let record = stored_record(&store, &id)?;
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
