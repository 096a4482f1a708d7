//! Plain data shared by every airlock crate, with no I/O.
//!
//! A [`SkillSource`] says where a skill came from and which commit it is pinned to. Scanning it yields a
//! [`ScanReport`]: an [`Inventory`] of its files, [`Finding`]s that each cite a file and line, and a
//! [`RiskLevel`], [`Classification`] and recommended [`RunMode`]. Running a command in the sandbox yields a
//! [`RunRecord`]. These types are what `--format json` prints, so their field names are a stable interface.

pub mod display;
pub mod observe;
pub mod policy;
mod record;
mod report;
mod run;
mod sha;
mod source;

pub use record::{
    Catch, Change, ChangeKind, DroppedEvents, EventSink, ExecEvent, FileAccess, LimitEnforcement, LimitKind,
    Limits, LiveEvent, NetAttempt, NetDecision, RunRecord, RunStatus, StepExit, LIVE_OUTPUT_EVENTS,
    LIVE_OUTPUT_LIMIT,
};
pub use report::{
    test_file_name, Classification, EvidenceKind, FileKind, Finding, FindingContext, Inventory,
    InventoryEntry, RiskLevel, RunMode, ScanReport, Severity, SkillSummary, Standing, SHOWN_AS_ATTACK,
    SHOWN_AS_BAD,
};
pub use run::{
    Artifact, ContextFile, Environment, Install, Observed, PatchSkip, Plan, PlanStep, ReviewItem, SkillRun,
    StepResult, TargetInfo,
};
pub use sha::{CommitSha, ParseShaError};
pub use source::{SkillSource, SourceKind};

/// Version of the JSON documents airlock prints; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The current time as RFC 3339 in UTC.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

/// A Unix time as RFC 3339 (UTC).
pub fn rfc3339(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// The name a value has in the JSON documents (`"timed_out"` for [`RunStatus::TimedOut`]); empty for values that
/// are not a plain name.
pub fn wire_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}
