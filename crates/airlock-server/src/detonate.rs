//! `POST /api/sources/{id}/detonate`: the skill's runnable parts run sealed with planted secrets and a sinkhole
//! network ([`airlock_run::detonate`]), on this server, in one of its run slots. The source's report is stored again
//! with the detonation's evidence, so the risk screen and `GET /api/sources/{id}/report` show it.

use std::sync::Arc;

use axum::extract::{Path as UrlPath, State as AxState};
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::{blocking, check_id, ApiError, ApiErrorBody};
use crate::state::Shared;
use airlock_protocol::UPLOAD_PREFIX;

/// What a detonation found, and the source's level with it.
#[derive(Debug, Serialize, ToSchema)]
pub struct DetonationView {
    pub source_id: String,
    /// The run that carried it out (`GET /api/runs/{id}`), when anything ran.
    pub run_id: Option<String>,
    /// The run's status, or `nothing to run`.
    pub status: String,
    pub steps: usize,
    pub duration_ms: u64,
    /// One sentence, as the report's headline says it.
    pub summary: String,
    /// The report's level with the detonation's evidence.
    pub risk_level: String,
    /// The detonation's findings (as in the report: rule, severity, file, line, evidence, message).
    #[schema(value_type = Vec<Object>)]
    pub findings: Vec<airlock_types::Finding>,
}

/// Detonates a source: its runnable parts run sealed with planted secrets and a sinkhole network, for at most 10 s;
/// what touched a secret and what would have left becomes findings of its report.
#[utoipa::path(post, path = "/api/sources/{id}/detonate", params(("id" = String, Path)),
    responses((status = 200, body = DetonationView), (status = 400, body = ApiErrorBody),
        (status = 404, body = ApiErrorBody),
        (status = 409, description = "this server hands runs to runners: a detonation runs on a single server",
            body = ApiErrorBody),
        (status = 503, body = ApiErrorBody)))]
pub(crate) async fn detonate(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<DetonationView>, ApiError> {
    Ok(Json(run(&app, id).await?))
}

/// Detonates source `id` and stores its report with the evidence.
pub(crate) async fn run(app: &Shared, id: String) -> Result<DetonationView, ApiError> {
    check_id(&id)?;
    if app.config.dispatches() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "runners_only",
            "this server hands runs to runners and runs no sandbox itself: detonate with `airlock scan --detonate` \
             or on a single server",
        ));
    }
    let app2 = app.clone();
    let id2 = id.clone();
    let input = blocking(move || {
        let store = app2.config.store()?;
        store
            .source(&id2)
            .map(|(s, _)| s.input)
            .map_err(|_| ApiError::not_found("source"))
    })
    .await?;
    let spec = app.settings_parse(&input)?;
    let permit = app
        .slots()
        .acquire_owned()
        .await
        .map_err(|_| ApiError::internal("the server is stopping"))?;
    let app2 = app.clone();
    let view = blocking(move || {
        let _permit = permit;
        let mut store = app2.config.store()?;
        let options = airlock_run::detonate::DetonateOptions {
            helper: app2.config.helper.clone(),
            source_name: input.starts_with(UPLOAD_PREFIX).then(|| input.clone()),
            retention: app2.config.retention,
            ..Default::default()
        };
        let quiet: airlock_run::OnEvent = Arc::new(|_| {});
        let found = airlock_run::detonate::detonate(&spec, app2.settings(), &mut store, &options, &quiet)?;
        let base = match &found.report {
            Some(r) => r.clone(),
            None => {
                store
                    .source(&id)
                    .map_err(|_| ApiError::not_found("source"))?
                    .1
                    .ok_or_else(|| ApiError::not_found("report"))?
                    .1
            }
        };
        let report = found.judged(&base);
        let expires = airlock_store::now_unix()
            .saturating_add(i64::try_from(app2.config.retention.as_secs()).unwrap_or(i64::MAX / 2));
        store.save_report(&id, &report, expires)?;
        Ok(DetonationView {
            source_id: id,
            run_id: found.run_id,
            status: found.status,
            steps: found.steps,
            duration_ms: found.duration_ms,
            summary: found.summary,
            risk_level: report.risk_level.to_string(),
            findings: found.findings,
        })
    })
    .await?;
    Ok(view)
}
