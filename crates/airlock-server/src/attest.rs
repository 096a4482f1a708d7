//! Signed statements from the API: a source's scan and a run, each an in-toto statement in a DSSE envelope signed
//! with this server's key (its data folder's, made on first use), and the public key to check them with.

use axum::extract::{Path as UrlPath, State as AxState};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::{blocking, check_id, ApiError, ApiErrorBody};
use crate::state::Shared;

/// The key this server signs with.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyView {
    /// `ed25519:` and the first 16 hex digits of the public key's SHA-256.
    pub key_id: String,
    /// The ed25519 public key, 64 hex digits: what `airlock verify --key` takes.
    pub public_key: String,
}

/// This server's key, read (or made) once.
pub(crate) fn keys(app: &Shared) -> Result<&airlock_attest::Keys, ApiError> {
    if let Some(k) = app.attest_keys.get() {
        return Ok(k);
    }
    let k = airlock_attest::Keys::open(&app.config.data_dir, app.config.signing_key.as_deref())
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(app.attest_keys.get_or_init(|| k))
}

/// A statement signed with this server's key, as a DSSE envelope.
fn signed(app: &Shared, statement: &serde_json::Value) -> Result<Response, ApiError> {
    let bytes = keys(app)?
        .sign(statement)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], bytes).into_response())
}

/// The public key this server signs statements with.
#[utoipa::path(get, path = "/api/attestation/key", responses((status = 200, body = KeyView)))]
pub(crate) async fn key(AxState(app): AxState<Shared>) -> Result<Json<KeyView>, ApiError> {
    blocking(move || {
        let k = keys(&app)?;
        Ok(Json(KeyView {
            key_id: k.key_id(),
            public_key: k.public_hex(),
        }))
    })
    .await
}

/// A signed statement of a source's scan (its latest report): the skill's digest and commit, the level, the
/// classification and the digest of the findings.
#[utoipa::path(get, path = "/api/sources/{id}/attestation", params(("id" = String, Path)),
    responses((status = 200, description = "a DSSE envelope (JSON)"), (status = 404, body = ApiErrorBody)))]
pub(crate) async fn source(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    blocking(move || {
        let store = app.config.store()?;
        let (_, report) = store.source(&id).map_err(|_| ApiError::not_found("source"))?;
        let (_, report) = report.ok_or_else(|| ApiError::not_found("report"))?;
        signed(&app, &airlock_attest::scan_statement(&report))
    })
    .await
}

/// The signed statement of a stored run, made as its record was stored: the skill, the policy in force, what was
/// observed, the verdict, the digest of its record and the hash chain of its events.
#[utoipa::path(get, path = "/api/runs/{id}/attestation", params(("id" = String, Path)),
    responses((status = 200, description = "a DSSE envelope (JSON)"), (status = 404, body = ApiErrorBody)))]
pub(crate) async fn run(
    AxState(app): AxState<Shared>,
    UrlPath(id): UrlPath<String>,
) -> Result<Response, ApiError> {
    check_id(&id)?;
    blocking(move || {
        let store = app.config.store()?;
        let record = crate::runs::stored_record(&store, &id)?;
        // The statement signed as the record was stored; a run stored before runs were signed is signed now.
        match store.run_attestation(&id)? {
            Some(envelope) => Ok(([(header::CONTENT_TYPE, "application/json")], envelope).into_response()),
            None => signed(&app, &airlock_attest::run_statement(&record)),
        }
    })
    .await
}
