//! The record of `airlock run`: a skill run in one of the three modes, with what the scan said, what was planned
//! and what was observed. Field names are stable and documented in the README.

use serde::{Deserialize, Serialize};

use crate::{
    Change, Classification, ExecEvent, FileAccess, LimitKind, Limits, NetAttempt, RiskLevel, RunMode,
    RunStatus, SkillSource,
};

/// The project a run works on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// `blank` (the bundled sample), `path` or `git`.
    pub kind: String,
    /// What the user named (a folder or URL); `blank` for the sample.
    pub input: String,
    /// Commit of a git target.
    pub commit: Option<String>,
    /// Content digest of the snapshot the run started from.
    pub digest: String,
}

/// One command the skill asks for, found without running anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// `shell` (a fenced shell block line), `script` (a file the skill ships), `install` (a package install).
    pub kind: String,
    pub command: String,
    /// For scripts: the interpreter that would run it.
    pub interpreter: Option<String>,
    pub file: String,
    pub line: u32,
    /// Rules of the scan's findings on this file and line.
    pub findings: Vec<String>,
    /// Why a plain run does not run this step, when it does not: an example with placeholders, a file it names
    /// that exists nowhere, a script that a command of SKILL.md already runs with its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    /// What the run does differently from the command as written, and why (`uv run x.py` runs `python3 x.py`
    /// with the script's inline dependencies installed before the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For a script: the arguments the instructions show it with (a usage line in inline code), placeholders kept
    /// (`--repo <hami>`). The step runs with them when they are real; otherwise they are what the user fills in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_arguments: Option<String>,
}

/// What an agent would receive and what the skill asks to run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub skill_name: Option<String>,
    pub description: Option<String>,
    pub allowed_tools: Vec<String>,
    /// The exact context: SKILL.md's body and the files it references, in order.
    pub context: Vec<ContextFile>,
    pub steps: Vec<PlanStep>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextFile {
    pub path: String,
    pub bytes: u64,
    /// The text (bounded); absent for binary or very large files.
    pub text: Option<String>,
}

/// The outcome of one executed plan step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepResult {
    pub index: usize,
    pub command: String,
    pub file: String,
    pub line: u32,
    /// The step's exit code, from airlock's step runner (`None` when it did not finish).
    pub exit_code: Option<i32>,
    /// The signal that ended the step, if one did.
    #[serde(default)]
    pub signal: Option<i32>,
    /// Bytes of the run's stdout and stderr written when the step ended (its output ends there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_end: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_end: Option<u64>,
}

/// The skill's environment: what it needs, and what the sealed install phase before the run did (or that a cached
/// layer was reused).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// `installed`, `reused`, `nothing to install`, `skipped (--no-install)`, or `incomplete: ...`.
    pub status: String,
    /// The digest of the install phase's inputs, which names the cached layer.
    pub digest: Option<String>,
    /// Whether a cached layer was reused (no install phase ran).
    pub cached: bool,
    /// Requirements files, as paths in the skill.
    pub requirements: Vec<String>,
    /// Top-level modules its Python files import that it does not ship.
    pub modules: Vec<String>,
    /// Packages (and `-r FILE`) the install phase installed.
    pub installed: Vec<String>,
    /// Modules the sandbox's interpreter already had (standard or system packages).
    pub present: Vec<String>,
    /// Packages or requirements files that could not be installed.
    pub failed: Vec<String>,
    /// Programs the skill names that this machine does not have.
    pub missing_programs: Vec<String>,
    /// Of those, the ones this machine has outside the folders a sandbox sees (in a home folder, `/opt`, a version
    /// manager's shims), with where.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub outside_sandbox: std::collections::BTreeMap<String, String>,
    pub duration_ms: u64,
    /// The install phase's record: programs run, package installs, network attempts, exit code, last error lines.
    pub execs: usize,
    pub installs: Vec<Install>,
    pub network: Vec<NetAttempt>,
    pub exit_code: Option<i32>,
    pub errors_tail: Vec<String>,
}

impl Environment {
    /// The install phase's refused network attempts, one line per distinct reason (the reason names the host and,
    /// when the user can change it, the flag that would allow it).
    /// Why a program the skill needs is missing, in words: not on this machine, or on it but not in the sandbox.
    pub fn missing_why(&self, program: &str) -> String {
        match self.outside_sandbox.get(program) {
            Some(at) => format!(
                "on this machine ({at}) but not in the sandbox, which sees the system folders only (--host-opt adds /opt)"
            ),
            None => "not on this machine".to_owned(),
        }
    }

    pub fn refusals(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for n in &self.network {
            if n.decision == crate::NetDecision::Denied && !out.contains(&n.reason.as_str()) {
                out.push(&n.reason);
            }
        }
        out
    }
}

/// A changed file the patch leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "PatchSkipWire")]
pub struct PatchSkip {
    pub path: String,
    pub reason: String,
}

/// Records written before reasons were kept list paths only.
#[derive(Deserialize)]
#[serde(untagged)]
enum PatchSkipWire {
    Path(String),
    Full { path: String, reason: String },
}

impl From<PatchSkipWire> for PatchSkip {
    fn from(w: PatchSkipWire) -> Self {
        match w {
            PatchSkipWire::Path(path) => Self {
                path,
                reason: "binary".into(),
            },
            PatchSkipWire::Full { path, reason } => Self { path, reason },
        }
    }
}

/// A change that acts on git or runs later, named for review before the patch is applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewItem {
    pub path: String,
    /// Why it matters, in a few words (`a git hook`, `package.json scripts changed: postinstall`).
    pub reason: String,
}

/// What a run did that matters for its risk, drawn from the record (not from the scan), with the level it earns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// The level the run's behaviour earns on its own (`low` when it did nothing that matters).
    pub level: RiskLevel,
    /// The scan's level and the observed one, whichever is worse.
    pub overall: RiskLevel,
    /// Why the observed level is what it is, one sentence per reason.
    pub reasons: Vec<String>,
    /// Credential-like paths read or written (with what a link reached, `a (a link to b)`).
    pub secrets_read: Vec<String>,
    /// Writes to start-up, hook or persistence files and anywhere outside the workspace.
    pub persistence_writes: Vec<String>,
    /// Package managers the run installed with.
    pub installs: Vec<String>,
    /// Remote destinations the policy allowed.
    pub network_allowed: Vec<String>,
    /// Remote destinations the policy denied.
    pub network_denied: Vec<String>,
    /// The model host an agent run's agent itself talked to (its own requests, not the skill's): listed apart,
    /// never raising the level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_model: Vec<String>,
    /// Files the run wrote (or downloaded) and then executed.
    pub executed_written: Vec<String>,
    /// Changes to review before applying the patch (see `review`).
    pub review: Vec<String>,
    /// Events the recorder did not keep, in all.
    pub dropped: u64,
}

/// A package install recognised in the timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Install {
    /// pip, npm, pnpm, yarn, cargo, apt, curl-pipe-shell.
    pub manager: String,
    pub argv: Vec<String>,
    pub pid: i32,
    pub t_ms: u64,
    pub exit_code: Option<i32>,
}

/// A stored output of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    pub id: String,
    /// `record`, `stdout`, `stderr`, `patch`, `change`, `skill-file`, `report`.
    pub kind: String,
    /// Path inside the workspace or skill, or a name.
    pub path: String,
    pub sha256: String,
    pub size: u64,
    pub summary: String,
}

/// Everything about one `airlock run`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillRun {
    pub schema_version: u32,
    pub run_id: String,
    pub source: SkillSource,
    pub mode: RunMode,
    pub target: Option<TargetInfo>,
    pub status: RunStatus,
    /// Why a run was refused or failed before running, in a sentence.
    pub status_reason: Option<String>,
    pub exit_code: Option<i32>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub risk_level: RiskLevel,
    pub classification: Classification,
    pub findings: usize,
    /// What ran: the argv given to the sandbox.
    pub command: Vec<String>,
    pub limits: Option<Limits>,
    pub limit_hit: Option<LimitKind>,
    pub network_allowed: bool,
    pub timeline: Vec<ExecEvent>,
    pub files_read: Vec<FileAccess>,
    pub files_written: Vec<FileAccess>,
    pub changes: Vec<Change>,
    /// Changed files that the patch leaves out, each with the reason.
    pub patch_skipped: Vec<PatchSkip>,
    /// Changes that act on git or run later (hooks, CI, package scripts, new executable bits): to review carefully
    /// before applying the patch.
    #[serde(default)]
    pub review: Vec<ReviewItem>,
    /// What the run did that matters for its risk, and the level it earns.
    #[serde(default)]
    pub observed: Observed,
    /// Peak resident memory of the run's processes, in bytes, and the CPU time they used.
    #[serde(default)]
    pub max_rss_bytes: u64,
    #[serde(default)]
    pub cpu_ms: u64,
    /// The skill's environment: what it needs and what the install phase did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// The policy the run ran under: declared, operator's cap, flags, what it did beyond the declaration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<crate::policy::EffectivePolicy>,
    pub network: Vec<NetAttempt>,
    pub installs: Vec<Install>,
    pub plan: Option<Plan>,
    pub steps: Vec<StepResult>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub artifacts: Vec<Artifact>,
    /// Events the recorder did not keep, by kind (the verdict says so when there are any).
    #[serde(default)]
    pub dropped: crate::DroppedEvents,
    /// Sentences that join what the scan warned about with what the run did.
    pub verdict: Vec<String>,
    pub duration_ms: u64,
}
