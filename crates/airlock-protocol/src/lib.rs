//! What airlock's faces say to each other: the CLI to a server, a server to its runners and back. Each type is the
//! one both ends read and write, so a field added here reaches every face that carries it; the OpenAPI document is
//! generated from them.
//!
//! A run is asked for with a [`RunSpec`] wherever it comes from (`airlock run`, `airlock run --server`, the API, the
//! web UI's form); `airlock_run::request` turns it into the library's `RunRequest`, with the defaults below.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use airlock_types::RunMode;

mod views;
pub use views::{ApiErrorBody, NewSource, RunSummary, RunView, SourceView, UploadView};

/// How a run's source names an archive a client uploaded (`upload:<sha256>`).
pub const UPLOAD_PREFIX: &str = "upload:";
/// The most bytes of an uploaded archive.
pub const MAX_UPLOAD: usize = 64 * 1024 * 1024;
/// The most bytes of one batch of a run's events.
pub const MAX_EVENTS_BODY: usize = 8 * 1024 * 1024;
/// The most events kept of one run from its worker (the queue's final ones always are).
pub const MAX_RUN_EVENTS: i64 = 20_000;
/// The task an agent gets when none is given.
pub const DEFAULT_TASK: &str = "Use the installed skill on this project.";
/// A run's time when none is given, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The longest time a run may ask for, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 30 * 60;
/// The memory a run may ask for, in MiB: from 16 to 8 GiB.
pub const MEMORY_MB: std::ops::RangeInclusive<u64> = 16..=8192;
/// The disk a run may ask for, in MiB.
pub const DISK_MB: std::ops::RangeInclusive<u64> = 16..=65_536;
/// The processes a run may ask for.
pub const PIDS: std::ops::RangeInclusive<u64> = 8..=4096;
/// The CPUs a run may ask for.
pub const CPUS: std::ops::RangeInclusive<u32> = 1..=64;

/// A run, as any face asks for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// The skill: a URL, an allowed local path, or `upload:<sha256>` of an archive uploaded before.
    pub source: String,
    /// `inspect`, `dry_run` (or `dry-run`) or `sandbox` (the default).
    #[serde(default = "sandbox")]
    #[schema(value_type = String, pattern = "^(inspect|dry_run|dry-run|sandbox)$")]
    pub mode: RunMode,
    /// `blank` (the bundled sample app, the default), or a git URL or allowed folder.
    #[serde(default = "blank")]
    pub target: String,
    /// A script of the skill to run (a path inside it), with its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// An agent preset (`claude`, `codex`) or command template, and its task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Limits; each one given replaces the default (and a skill's accepted policy cannot raise it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_mb: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// Hosts the run may reach (each one a server allows, on a server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_net: Vec<String>,
    /// Run even when the scan says block.
    #[serde(default)]
    pub force: bool,
    /// Apply the policy the skill declares (within the operator's).
    #[serde(default)]
    pub accept_policy: bool,
    /// Install what the skill needs before a sandbox run (the default).
    #[serde(default = "yes")]
    pub install: bool,
}

fn sandbox() -> RunMode {
    RunMode::Sandbox
}

fn blank() -> String {
    "blank".into()
}

fn yes() -> bool {
    true
}

impl RunSpec {
    /// A sandbox run of `source`'s plan against the sample app, with every default.
    pub fn new(source: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            mode: RunMode::Sandbox,
            target: blank(),
            script: None,
            args: Vec::new(),
            agent: None,
            task: None,
            timeout_secs: None,
            memory_mb: None,
            disk_mb: None,
            pids: None,
            cpus: None,
            allow_net: Vec::new(),
            force: false,
            accept_policy: false,
            install: true,
        }
    }

    /// The limits the request gives (the others are defaults a skill's accepted policy may replace).
    pub fn given(&self) -> Vec<&'static str> {
        [
            self.timeout_secs.map(|_| "timeout"),
            self.memory_mb.map(|_| "memory"),
            self.disk_mb.map(|_| "disk"),
            self.pids.map(|_| "pids"),
            self.cpus.map(|_| "cpus"),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// What a runner gets when it claims a run: the request as the server checked it, and the server's settings the
/// runner applies to it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Job {
    pub run_id: String,
    pub run: RunSpec,
    /// The operator's policy (`--policy` of `airlock serve`).
    #[schema(value_type = Option<Object>)]
    pub policy: Option<airlock_types::policy::SourcedPolicy>,
    pub retention_secs: u64,
    /// How long a lease lasts: renew well within it.
    pub lease_ms: u64,
}

/// A runner asking for work.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The runner's name, shown on the runs it holds (letters, digits, `-`, `_`, `.`).
    pub name: String,
    /// The modes its machine can enforce (its doctor's verdict): `inspect`, `dry-run`, `sandbox`.
    pub modes: Vec<String>,
    /// How long to wait for a run when none is queued (at most 25 s).
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

/// A renewed lease.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct LeaseView {
    /// Someone asked for the run to stop: stop it and hand back its record.
    pub cancel: bool,
    pub lease_ms: u64,
}

/// One event of a run, numbered by the runner from 1.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunnerEvent {
    pub seq: i64,
    /// `state`, `phase`, `sandbox`, `record` or `end`.
    pub name: String,
    pub data: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunnerEvents {
    pub events: Vec<RunnerEvent>,
}

/// A run's state, as its `state` event carries it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StateEvent {
    /// `queued`, `running`, `cancelled`, `error`, or the record's status.
    pub state: String,
    #[serde(default)]
    pub message: String,
}

/// What a runner hands back when a run is over.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Finished {
    #[schema(value_type = Object)]
    pub report: airlock_types::ScanReport,
    #[schema(value_type = Object)]
    pub record: airlock_types::SkillRun,
}

/// Why a runner could not carry out a run.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Failed {
    pub message: String,
}

/// A request of `airlock exec --json-io` (docs/json-io.md): a command, or a call of a skill's Python function, with
/// its mounts, limits and network. Unknown keys are an error, so a typo never silently loosens a limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoRequest {
    /// The program and its arguments; or `call`.
    #[serde(default)]
    pub command: Vec<String>,
    /// A function of a Python skill module to call instead of a command.
    #[serde(default)]
    pub call: Option<IoCall>,
    /// A skill folder on the host, mounted read-only at `/skill`.
    #[serde(default)]
    pub skill: Option<std::path::PathBuf>,
    /// The policy the caller grants the call (docs/policy.md), within the operator's (`AIRLOCK_POLICY`).
    #[serde(default)]
    pub policy: Option<serde_json::Value>,
    #[serde(default)]
    pub request_id: Option<String>,
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Host folders mounted read-only and copy-on-write: `HOST[:SANDBOX_PATH]`.
    #[serde(default)]
    pub ro: Vec<String>,
    #[serde(default)]
    pub rw: Vec<String>,
    #[serde(default)]
    pub workdir: Option<std::path::PathBuf>,
    /// `30s`, `500ms`, `2m`.
    #[serde(default)]
    pub timeout: Option<String>,
    /// `512M`, `2G`.
    #[serde(default)]
    pub memory: Option<String>,
    #[serde(default)]
    pub disk: Option<String>,
    #[serde(default)]
    pub pids: Option<u64>,
    #[serde(default)]
    pub cpus: Option<u32>,
    #[serde(default)]
    pub allow_net: Vec<String>,
    #[serde(default)]
    pub deny_net: Vec<String>,
    #[serde(default)]
    pub net_preset: Vec<String>,
    #[serde(default)]
    pub connect_to: Vec<String>,
    #[serde(default = "yes")]
    pub record_files: bool,
}

/// `{"module": "skill.py", "function": "name", "kwargs": {...}}`: a function of a Python module in the skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoCall {
    #[serde(default = "skill_py")]
    pub module: String,
    pub function: String,
    #[serde(default)]
    pub kwargs: serde_json::Map<String, serde_json::Value>,
}

fn skill_py() -> String {
    "skill.py".into()
}

/// The answer of `airlock exec --json-io` to a request it ran (docs/json-io.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IoAnswer {
    pub schema_version: u32,
    /// A call's return value (null without a call, or when the call raised).
    pub result: Option<serde_json::Value>,
    /// What a call raised: `{"type": ..., "message": ...}`; `NoResult` when it ended without an answer.
    pub call_error: Option<serde_json::Value>,
    /// The policy in force, when the skill declared one or the request gave one.
    pub policy: Option<airlock_types::policy::EffectivePolicy>,
    pub request_id: String,
    pub status: airlock_types::RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub stdout: String,
    pub stderr: String,
    pub record: airlock_types::RunRecord,
}

/// The answer of `airlock exec --json-io` to a request it could not run: nothing ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IoFailure {
    pub schema_version: u32,
    pub error: IoFailureReason,
}

/// Why a JSON-IO request did not run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IoFailureReason {
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_spec_takes_both_spellings_of_a_mode_and_fills_the_defaults() {
        let spec: RunSpec = serde_json::from_str(r#"{"source": "s", "mode": "dry_run"}"#).unwrap();
        assert_eq!(spec.mode, RunMode::DryRun);
        assert_eq!(spec.target, "blank");
        assert!(spec.install);
        let spec: RunSpec = serde_json::from_str(r#"{"source": "s", "mode": "dry-run"}"#).unwrap();
        assert_eq!(spec.mode, RunMode::DryRun);
        assert_eq!(
            serde_json::from_str::<RunSpec>(r#"{"source": "s"}"#).unwrap(),
            RunSpec::new("s")
        );
        assert!(serde_json::from_str::<RunSpec>(r#"{"source": "s", "mode": "run"}"#).is_err());
        assert!(serde_json::from_str::<RunSpec>(r#"{"source": "s", "colour": 1}"#).is_err());
        // What one face writes, another reads back the same.
        let mut spec = RunSpec::new("https://github.com/o/r");
        spec.script = Some("scripts/x.py".into());
        spec.args = vec!["--n".into(), "3".into()];
        spec.memory_mb = Some(1024);
        let back: RunSpec = serde_json::from_value(serde_json::to_value(&spec).unwrap()).unwrap();
        assert_eq!(back, spec);
        assert_eq!(back.given(), ["memory"]);
    }
}
