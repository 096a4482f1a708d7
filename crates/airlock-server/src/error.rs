//! What every route shares: the JSON error (a stable `code` and a human `message`) and what it is made from, the JSON
//! body extractor that answers every way a body can be wrong with one, the blocking-thread helper, and the checks of
//! ids and upload names.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use airlock_run::RunError;

pub use airlock_protocol::ApiErrorBody;

/// Request bodies larger than this are refused (413).
pub(crate) const MAX_BODY: usize = 64 * 1024;

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
