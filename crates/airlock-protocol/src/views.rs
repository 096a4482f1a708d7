//! What the API answers (and what a client reads back): its views and its error, one type for both ends.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An error as the API returns it: a stable `code` and a human `message`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ApiErrorBody {
    pub code: String,
    pub message: String,
}

/// A source to import: a GitHub or git URL, or (when the operator allows its folder) a local path.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSource {
    pub url: String,
}

/// An imported and scanned source.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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

/// What an upload is called from then on.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct UploadView {
    /// `upload:<sha256>`: give it as a source's `url` or a run's `source`.
    pub source: String,
    pub size: usize,
}

/// A line of the run list.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RunSummary {
    pub run_id: String,
    pub status: String,
    pub source: Option<String>,
    pub mode: Option<String>,
    pub started_at: Option<String>,
    pub position: Option<usize>,
}

/// A run as the API shows it: where it is, and its record once it has one.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
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
    pub record: Option<airlock_types::SkillRun>,
}
