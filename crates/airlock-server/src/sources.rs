//! The source routes under `/api/sources` and `/api/uploads`: import a skill (pinned to a commit, scanned, stored),
//! upload an archive, list sources, one source and its latest scan, its risk report as JSON or SARIF.

use axum::extract::{Path as UrlPath, Query, State as AxState};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use airlock_protocol::UPLOAD_PREFIX;
pub use airlock_protocol::{NewSource, SourceView, UploadView};

use crate::error::{blocking, check_id, ApiError, ApiErrorBody, Body};
use crate::state::{App, Shared};

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
pub(crate) async fn create_source(
    AxState(app): AxState<Shared>,
    Body(body): Body<NewSource>,
) -> Result<Response, ApiError> {
    if body.url.len() > 4096 {
        return Err(ApiError::bad("bad_url", "the URL is too long"));
    }
    let view = blocking(move || import_and_store(&app, &body.url)).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// Upload a skill as a gzip-compressed tar archive (a local folder or archive of a client's, for a server that
/// cannot read the client's disk); it is staged like any archive when a source or run names it.
#[utoipa::path(post, path = "/api/uploads", request_body(content = Vec<u8>, content_type = "application/gzip"),
    responses((status = 201, body = UploadView), (status = 400, body = ApiErrorBody), (status = 413, body = ApiErrorBody)))]
pub(crate) async fn create_upload(
    AxState(app): AxState<Shared>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
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
pub(crate) async fn list_sources(
    AxState(app): AxState<Shared>,
) -> Result<Json<Vec<SourceSummary>>, ApiError> {
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
pub(crate) async fn get_source(
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
pub(crate) async fn get_report(
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
