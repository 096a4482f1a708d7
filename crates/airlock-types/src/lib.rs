//! Plain data shared by every airlock crate, with no I/O.
//!
//! A [`SkillSource`] says where a skill came from and which commit it is pinned to. Scanning it yields a
//! [`ScanReport`]: an [`Inventory`] of its files, [`Finding`]s that each cite a file and line, and a
//! [`RiskLevel`], [`Classification`] and recommended [`RunMode`]. Running a command in the sandbox yields a
//! [`RunRecord`]. These types are what `--format json` prints, so their field names are a stable interface.

mod record;
mod report;
mod run;
mod sha;
mod source;

pub use record::{
    Change, ChangeKind, ExecEvent, FileAccess, LimitEnforcement, LimitKind, Limits, NetAttempt, NetDecision,
    RunRecord, RunStatus,
};
pub use report::{
    Classification, FileKind, Finding, FindingContext, Inventory, InventoryEntry, RiskLevel, RunMode,
    ScanReport, Severity, SkillSummary,
};
pub use run::{Artifact, ContextFile, Install, Plan, PlanStep, SkillRun, StepResult, TargetInfo};
pub use sha::{CommitSha, ParseShaError};
pub use source::{SkillSource, SourceKind};

/// Version of the JSON documents airlock prints; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;
