//! The store's queue, where every run a server accepts goes: this server's own workers claim from it directly
//! (`worker.rs`); in a team deployment, runner machines (`airlock runner`) claim from it over HTTP with a runner
//! token, renew a lease while they run them, report their events, upload their artifacts and hand back the record.
//! Runner machines are where hostile code runs, so a runner's token opens these routes only, and each route only
//! for the runs that runner holds.

use std::time::Duration;

use axum::extract::{Path as UrlPath, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};

use airlock_store::queue::{self, Cancelled, Lease};

use airlock_types::RunMode;

pub use airlock_protocol::{Claim, Failed, Finished, Job, LeaseView, RunnerEvent, RunnerEvents};

use crate::error::{blocking, check_id, ApiError, Body};
use crate::state::Shared;
use airlock_protocol::{RunSpec, UPLOAD_PREFIX};

/// The key a runner's token is known by in the store (its SHA-256, shortened): the token itself is never stored.
#[derive(Debug, Clone)]
pub struct RunnerKey(pub String);

pub fn runner_key(token: &str) -> String {
    airlock_store::sha_hex(token.as_bytes())[..24].to_owned()
}

/// The shortest runner token taken.
pub const MIN_TOKEN: usize = 16;

/// The tokens of a runner tokens file: one a line, blank lines and `#` comments left out.
pub fn read_runner_tokens(file: &std::path::Path) -> std::io::Result<Vec<String>> {
    Ok(fs_err::read_to_string(file)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// The runner tokens in force, read at each request, so that deleting a line revokes a runner at once.
fn runner_tokens(app: &Shared) -> Vec<String> {
    app.config
        .runner_tokens
        .as_deref()
        .and_then(|f| read_runner_tokens(f).ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|t| t.len() >= MIN_TOKEN)
        .collect()
}

/// Whether a bearer token is a runner token in force (every line compared in constant time).
pub fn runner_token_ok(app: &Shared, given: &str) -> bool {
    runner_tokens(app).iter().fold(false, |ok, t| {
        ok | crate::session::constant_time_eq(t.as_bytes(), given.as_bytes())
    })
}

/// Whether a runner's key is still that of a token in force (a revoked runner's wait ends).
fn key_listed(app: &Shared, key: &str) -> bool {
    runner_tokens(app).iter().any(|t| runner_key(t) == key)
}

fn not_held() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "not_held",
        "this runner does not hold the run (another runner's, over, or its lease ran out)",
    )
}

pub(crate) fn lease_ms(app: &Shared) -> i64 {
    i64::try_from(app.config.lease.as_millis()).unwrap_or(60_000)
}

/// Runs `work` on a blocking thread with one store, once the store says the runner holds the run under a current
/// lease (409 otherwise); `work` gets the store, the run's id and the runner's key.
async fn holding<T: Send + 'static>(
    app: &Shared,
    id: &str,
    key: &RunnerKey,
    work: impl FnOnce(&mut airlock_store::Store, &str, &str) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    check_id(id)?;
    let (app, id, key) = (app.clone(), id.to_owned(), key.0.clone());
    blocking(move || {
        let mut store = app.config.store()?;
        if !store.holds(&id, &key)? {
            return Err(not_held());
        }
        work(&mut store, &id, &key)
    })
    .await
}

/// Events the server adds to a run whose runner is gone or which never started: numbered after any a runner
/// could have sent.
const SERVER_SEQ: i64 = 1_000_000_000;

pub(crate) fn end_events(state: &str, message: &str) -> Vec<(i64, String, String)> {
    final_events(None, state, message)
}

/// A `state` event's data.
fn state_event(state: &str, message: &str) -> String {
    serde_json::to_string(&airlock_protocol::StateEvent {
        state: state.to_owned(),
        message: message.to_owned(),
    })
    .unwrap_or_default()
}

/// A run's last events: its record when it has one, its final state, and the end.
pub(crate) fn final_events(record: Option<String>, state: &str, message: &str) -> Vec<(i64, String, String)> {
    let mut names: Vec<(&str, String)> = Vec::new();
    if let Some(record) = record {
        names.push(("record", record));
    }
    names.push(("state", state_event(state, message)));
    names.push(("end", "{}".into()));
    (SERVER_SEQ..)
        .zip(names)
        .map(|(seq, (name, data))| (seq, name.to_owned(), data))
        .collect()
}

// ----- the client side: queueing, cancelling -----

/// Queues a checked run (on a blocking thread): its place in the queue. Whoever claims next is woken by the caller
/// (`app.queued`).
pub(crate) fn enqueue(
    app: &Shared,
    run_id: &str,
    run: RunSpec,
    mode: &str,
) -> Result<Option<usize>, ApiError> {
    let job = Job {
        run_id: run_id.to_owned(),
        run,
        policy: app.config.policy.clone(),
        retention_secs: app.config.retention.as_secs(),
        lease_ms: u64::try_from(lease_ms(app)).unwrap_or(60_000),
    };
    let json = serde_json::to_string(&job).map_err(|e| ApiError::internal(e.to_string()))?;
    let store = app.config.store()?;
    let expires = airlock_store::now_unix()
        .saturating_add(i64::try_from(app.config.retention.as_secs()).unwrap_or(i64::MAX / 4));
    store.enqueue(run_id, &json, mode, &job.run.source, expires)?;
    Ok(store.queue_position(run_id)?)
}

/// Cancels a queued run: at once when it waits, at its runner's next renewal when it runs.
pub(crate) async fn cancel(app: &Shared, id: &str) -> Result<Cancelled, ApiError> {
    let (app, id) = (app.clone(), id.to_owned());
    blocking(move || {
        let store = app.config.store()?;
        let outcome = store.cancel_queued(&id)?;
        if outcome == Cancelled::Dequeued {
            store.append_events(&id, &end_events("cancelled", "cancelled before it started"))?;
        }
        Ok(outcome)
    })
    .await
}

/// Marks failed the runs this server's workers held when it stopped (a server alone on its data folder, at start).
pub(crate) fn reap_stopped(app: &Shared) -> Result<(), ApiError> {
    let store = app.config.store()?;
    for (id, _) in store.reap_all_running()? {
        let message = format!(
            "{}: the server stopped while the run was going",
            queue::RUNNER_LOST
        );
        store.append_events(&id, &end_events("failed", &message))?;
    }
    Ok(())
}

/// Every second, marks `failed (runner lost)` the runs whose runner stopped renewing its lease (any server may
/// do it; each run is marked by one).
///
/// A server that could not reach the store within the last lease declares no runner lost: its runners could not
/// renew for the same reason (a database restarting), and their runs go on.
pub(crate) async fn sweep_lost(app: Shared) {
    let mut store_away: Option<tokio::time::Instant> = None;
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if store_away.is_some_and(|t| t.elapsed() < app.config.lease) {
            // Still look, to know when the store is back.
            let app2 = app.clone();
            if blocking(move || Ok(app2.config.store()?.queue_depth()?))
                .await
                .is_err()
            {
                store_away = Some(tokio::time::Instant::now());
            }
            continue;
        }
        let app2 = app.clone();
        let swept = blocking(move || {
            let store = app2.config.store()?;
            let lost = store.reap_lost()?;
            for (id, runner) in &lost {
                let message = format!(
                    "{}: runner {} stopped renewing its lease",
                    queue::RUNNER_LOST,
                    airlock_types::display::line(runner.as_deref().unwrap_or("?"))
                );
                store.append_events(id, &end_events("failed", &message))?;
            }
            Ok(lost.len())
        })
        .await;
        match swept {
            Ok(n) if n > 0 => tracing::warn!("{n} run(s) lost their runner"),
            Ok(_) => {}
            Err(e) => {
                store_away = Some(tokio::time::Instant::now());
                tracing::debug!("sweeping lost runs: {}", e.body.message);
            }
        }
    }
}

// ----- the runner side -----

/// Claim the oldest queued run this runner can run (long poll): 200 with the job, or 204 when none came.
#[utoipa::path(post, path = "/api/runner/claim", request_body = Claim, tag = "runner",
    responses((status = 200, body = Job), (status = 204), (status = 401, body = crate::error::ApiErrorBody)))]
pub(crate) async fn claim(
    AxState(app): AxState<Shared>,
    Extension(key): Extension<RunnerKey>,
    Body(claim): Body<Claim>,
) -> Result<Response, ApiError> {
    let name_ok = !claim.name.is_empty()
        && claim.name.len() <= 64
        && claim
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !name_ok {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_name",
            "a runner's name is 1 to 64 letters, digits, `-`, `_` or `.`",
        ));
    }
    // Each mode by its one name, the one runs are queued under (`dry-run`), however the runner spelled it.
    let modes: Vec<String> = claim
        .modes
        .into_iter()
        .filter_map(|m| serde_json::from_value::<RunMode>(serde_json::Value::String(m)).ok())
        .map(|m| airlock_types::wire_name(&m))
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(claim.wait_secs.unwrap_or(20).min(25));
    loop {
        // Registered before looking, so that a run queued meanwhile wakes this claim.
        let woken = app.queued.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let (app2, name, key2, modes2) = (app.clone(), claim.name.clone(), key.0.clone(), modes.clone());
        let got: Option<(String, String)> = blocking(move || {
            let modes: Vec<&str> = modes2.iter().map(String::as_str).collect();
            Ok(app2
                .config
                .store()?
                .claim(&name, &key2, &modes, lease_ms(&app2))?)
        })
        .await?;
        if let Some((_, job)) = got {
            let job: serde_json::Value =
                serde_json::from_str(&job).map_err(|e| ApiError::internal(e.to_string()))?;
            return Ok(Json(job).into_response());
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(StatusCode::NO_CONTENT.into_response());
        }
        // Runs queued through another server are seen at the next look.
        let _ = tokio::time::timeout((deadline - now).min(Duration::from_millis(500)), woken).await;
        // A token revoked while its runner waits stops the wait (the request's own check let it in).
        if !key_listed(&app, &key.0) {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "this runner's token was revoked",
            ));
        }
    }
}

/// Renew the lease on a run this runner holds; 409 when it does not hold it any more (stop the run).
#[utoipa::path(post, path = "/api/runner/runs/{id}/lease", params(("id" = String, Path)), tag = "runner",
    responses((status = 200, body = LeaseView), (status = 409, body = crate::error::ApiErrorBody)))]
pub(crate) async fn renew(
    AxState(app): AxState<Shared>,
    Extension(key): Extension<RunnerKey>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<LeaseView>, ApiError> {
    check_id(&id)?;
    let app2 = app.clone();
    let lease = blocking(move || Ok(app2.config.store()?.renew(&id, &key.0, lease_ms(&app2))?)).await?;
    match lease {
        Lease::Held { cancel } => Ok(Json(LeaseView {
            cancel,
            lease_ms: u64::try_from(lease_ms(&app)).unwrap_or(0),
        })),
        Lease::NotHeld => Err(not_held()),
    }
}

/// The most events kept of one run from its runner (the server's final ones always are).
pub const MAX_EVENTS: i64 = airlock_protocol::MAX_RUN_EVENTS;

/// The events of a batch a worker may add: progress, numbered within the cap. The record and the end are the
/// server's to add once the run is stored.
pub(crate) fn progress_events(events: &[RunnerEvent]) -> Vec<(i64, String, String)> {
    const NAMES: [&str; 3] = ["state", "phase", "sandbox"];
    events
        .iter()
        .filter(|e| (1..MAX_EVENTS).contains(&e.seq) && NAMES.contains(&e.name.as_str()))
        .map(|e| (e.seq, e.name.clone(), e.data.clone()))
        .collect()
}

/// Report a run's events (a retried batch adds nothing twice).
#[utoipa::path(post, path = "/api/runner/runs/{id}/events", params(("id" = String, Path)), tag = "runner",
    request_body = RunnerEvents,
    responses((status = 204), (status = 409, body = crate::error::ApiErrorBody)))]
pub(crate) async fn events(
    AxState(app): AxState<Shared>,
    Extension(key): Extension<RunnerKey>,
    UrlPath(id): UrlPath<String>,
    Body(batch): Body<RunnerEvents>,
) -> Result<Response, ApiError> {
    let events = progress_events(&batch.events);
    holding(&app, &id, &key, move |store, id, _| {
        Ok(store.append_events(id, &events)?)
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Upload a content file of a run this runner holds (an artifact), named by its SHA-256.
#[utoipa::path(put, path = "/api/runner/runs/{id}/objects/{sha}", params(("id" = String, Path), ("sha" = String, Path)),
    tag = "runner", request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses((status = 204), (status = 400, body = crate::error::ApiErrorBody), (status = 409, body = crate::error::ApiErrorBody)))]
pub(crate) async fn put_object(
    AxState(app): AxState<Shared>,
    Extension(key): Extension<RunnerKey>,
    UrlPath((id, sha)): UrlPath<(String, String)>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    holding(&app, &id, &key, move |store, _, _| {
        if airlock_store::sha_hex(&body) != sha {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_object",
                "the content's SHA-256 is not the one named",
            ));
        }
        store.put_bytes(&body)?;
        Ok(())
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The archive a client uploaded for a run this runner holds (only when its source is an upload).
#[utoipa::path(get, path = "/api/runner/runs/{id}/source", params(("id" = String, Path)), tag = "runner",
    responses((status = 200, content_type = "application/gzip"), (status = 404, body = crate::error::ApiErrorBody),
        (status = 409, body = crate::error::ApiErrorBody)))]
pub(crate) async fn get_source(
    AxState(app): AxState<Shared>,
    Extension(key): Extension<RunnerKey>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    let cache = app.config.upload_cache();
    let bytes = holding(&app, &id, &key, move |store, id, _| {
        let run = store.queued_run(id)?.ok_or_else(|| ApiError::not_found("run"))?;
        let sha = run
            .source
            .strip_prefix(UPLOAD_PREFIX)
            .ok_or_else(|| ApiError::not_found("upload for this run"))?
            .to_owned();
        crate::error::check_sha(&sha)?;
        let path = store
            .objects()
            .upload_file(&sha, &cache)?
            .ok_or_else(|| ApiError::not_found("upload"))?;
        fs_err::read(path).map_err(|_| ApiError::not_found("upload"))
    })
    .await?;
    Ok(([(axum::http::header::CONTENT_TYPE, "application/gzip")], bytes).into_response())
}

/// Hand back a run's record (and the scan it was based on) once its artifacts are uploaded: the run is stored.
#[utoipa::path(post, path = "/api/runner/runs/{id}/finish", params(("id" = String, Path)), tag = "runner",
    request_body = Finished,
    responses((status = 204), (status = 400, body = crate::error::ApiErrorBody), (status = 409, body = crate::error::ApiErrorBody)))]
pub(crate) async fn finish(
    AxState(app): AxState<Shared>,
    Extension(key): Extension<RunnerKey>,
    UrlPath(id): UrlPath<String>,
    Body(done): Body<Finished>,
) -> Result<Response, ApiError> {
    if done.record.run_id != id {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_record",
            "the record is another run's",
        ));
    }
    let retention = app.config.retention;
    let signer = app.clone();
    let record = holding(&app, &id, &key, move |store, id, key| {
        for a in &done.record.artifacts {
            if !store.has_object(&a.sha256)? {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "missing_object",
                    format!("upload artifact {} first", airlock_types::display::line(&a.id)),
                ));
            }
        }
        let expires = airlock_store::now_unix()
            .saturating_add(i64::try_from(retention.as_secs()).unwrap_or(i64::MAX / 4));
        let source_id = store.save_source(&done.record.source, expires)?;
        let report_id = store.save_report(&source_id, &done.report, expires)?;
        // The run is stored under the lease: a runner that lost it meanwhile stores nothing.
        if !store.holds(id, key)? {
            return Err(not_held());
        }
        if store.run(id).is_err() {
            store.begin_run(&done.record, &source_id, &report_id, expires)?;
        }
        store.finish_run(&done.record)?;
        // Signed with this server's key as it is stored: a record edited afterwards no longer holds.
        let envelope = crate::attest::keys(&signer)?
            .sign(&airlock_attest::run_statement(&done.record))
            .map_err(|e| ApiError::internal(e.to_string()))?;
        store.set_run_attestation(id, &envelope)?;
        store.end_queued(id, key, queue::state::DONE, None)?;
        let status = airlock_types::wire_name(&done.record.status);
        let record = serde_json::to_string(&done.record).unwrap_or_default();
        store.append_events(id, &final_events(Some(record), &status, ""))?;
        Ok(done.record)
    })
    .await?;
    app.metrics.run_done(
        &airlock_types::wire_name(&record.status),
        record.observed.overall.as_str(),
        Some(Duration::from_millis(record.duration_ms)),
    );
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Report that a run could not be carried out (an import that failed, a sandbox that could not start).
#[utoipa::path(post, path = "/api/runner/runs/{id}/fail", params(("id" = String, Path)), tag = "runner",
    request_body = Failed, responses((status = 204), (status = 409, body = crate::error::ApiErrorBody)))]
pub(crate) async fn fail(
    AxState(app): AxState<Shared>,
    Extension(key): Extension<RunnerKey>,
    UrlPath(id): UrlPath<String>,
    Body(failed): Body<Failed>,
) -> Result<Response, ApiError> {
    let message: String = failed.message.chars().take(4000).collect();
    holding(&app, &id, &key, move |store, id, key| {
        if !store.end_queued(id, key, queue::state::ERROR, Some(&message))? {
            return Err(not_held());
        }
        store.append_events(id, &end_events("error", &message))?;
        Ok(())
    })
    .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Follows a queued run's stored events (whichever server or worker wrote them) after number `after` until its
/// `end`.
pub(crate) fn follow(app: Shared, id: String, after: i64, tx: tokio::sync::mpsc::Sender<crate::live::Event>) {
    tokio::spawn(async move {
        let mut after = after;
        let mut idle_over = 0;
        let mut told_state = false;
        loop {
            // Registered before looking, so that events added meanwhile wake this follower.
            let notify = app.events_added.clone();
            let woken = notify.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let (app2, id2) = (app.clone(), id.clone());
            let got = blocking(move || {
                let store = app2.config.store()?;
                let events = store.events_after(&id2, after, 500)?;
                // The queue's state only matters while nothing new came.
                let state = if events.is_empty() {
                    store.queued_run(&id2)?.map(|r| r.state)
                } else {
                    None
                };
                Ok((events, state))
            })
            .await;
            // A store that is away (a database restarting) is looked at again.
            let Ok((events, state)) = got else {
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            };
            // A run that has no event yet (it waits in the queue) is said to be where it is, once.
            if let (Some(state), 0, false) = (&state, after, told_state) {
                told_state = true;
                let data = state_event(state, "");
                let event = crate::live::Event {
                    name: "state",
                    data,
                    id: None,
                };
                if tx.send(event).await.is_err() {
                    return;
                }
            }
            let got_any = !events.is_empty();
            for (seq, name, data) in events {
                after = seq;
                let end = name == "end";
                let name = match name.as_str() {
                    "state" => "state",
                    "phase" => "phase",
                    "sandbox" => "sandbox",
                    "record" => "record",
                    _ => "end",
                };
                let event = crate::live::Event {
                    name,
                    data,
                    id: Some(seq),
                };
                if tx.send(event).await.is_err() || end {
                    return;
                }
            }
            // A run that is over without an end event (its server stopped between storing it and adding the end)
            // ends when nothing more comes.
            let over = !got_any
                && state
                    .as_deref()
                    .is_none_or(|s| s != queue::state::QUEUED && s != queue::state::RUNNING);
            if over {
                idle_over += 1;
                if idle_over >= 3 {
                    let _ = tx
                        .send(crate::live::Event {
                            name: "end",
                            data: "{}".into(),
                            id: None,
                        })
                        .await;
                    return;
                }
            }
            if tx.is_closed() {
                return;
            }
            // Woken at once by this server's own workers; a runner's events (sent through any server) are seen at
            // the next look.
            let _ = tokio::time::timeout(Duration::from_millis(200), woken).await;
        }
    });
}
