use std::fmt;

use serde::{Deserialize, Serialize};

use crate::SkillSource;

/// How bad one finding is on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, changes nothing.
    Info,
    Low,
    Medium,
    High,
    /// A direct attempt at secrets, credentials, persistence or the host: the skill is blocked.
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The overall verdict on a skill, in the four buckets users see.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    /// Prompt-only or prompt-dominant, no executable helpers.
    #[default]
    Low,
    /// Helper scripts, install instructions or package additions.
    Medium,
    /// Heavy shell execution, network use, privileged operations or unclear side effects.
    High,
    /// Direct attempts at secrets, home directories, credentials or unsafe host integrations.
    Block,
}

impl RiskLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Block => "block",
        }
    }

    /// The level a finding of this severity raises a skill to.
    pub fn from_severity(severity: Severity) -> Self {
        match severity {
            Severity::Info | Severity::Low => Self::Low,
            Severity::Medium => Self::Medium,
            Severity::High => Self::High,
            Severity::Critical => Self::Block,
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RiskLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            "block" => Ok(Self::Block),
            other => Err(format!(
                "unknown risk level `{other}`: use low, medium, high or block"
            )),
        }
    }
}

/// What kind of skill this is, bluntly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Classification {
    PromptOnly,
    PromptWithShellHelpers,
    ExecHeavy,
    NeedsManualReview,
}

impl Classification {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PromptOnly => "prompt-only",
            Self::PromptWithShellHelpers => "prompt-with-shell-helpers",
            Self::ExecHeavy => "exec-heavy",
            Self::NeedsManualReview => "needs-manual-review",
        }
    }

    /// The words shown to a person.
    pub fn label(self) -> &'static str {
        match self {
            Self::PromptOnly => "Prompt-only",
            Self::PromptWithShellHelpers => "Prompt + shell helpers",
            Self::ExecHeavy => "Exec-heavy",
            Self::NeedsManualReview => "Needs manual review",
        }
    }
}

impl fmt::Display for Classification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a skill may be tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunMode {
    /// The scan only: nothing executes.
    Inspect,
    /// Prompt assembly and command planning: nothing executes. (`dry_run`, as runners of earlier builds wrote it,
    /// is read as the same mode.)
    #[serde(alias = "dry_run")]
    DryRun,
    /// Executes inside the sealed sandbox.
    Sandbox,
}

impl RunMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inspect => "inspect",
            Self::DryRun => "dry-run",
            Self::Sandbox => "sandbox",
        }
    }
}

impl fmt::Display for RunMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a file the evidence sits, which decides how much it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingContext {
    /// Executable code: a script, or a fenced code block of a shell or programming language.
    Code,
    /// An instruction in markdown prose (or inline code in prose) that tells the agent to do something.
    Instruction,
    /// Prose that only mentions or warns about something.
    Prose,
    /// A comment in a script.
    Comment,
    /// The SKILL.md frontmatter or another metadata file.
    Metadata,
    /// The file as a whole (its kind, its presence).
    File,
}

/// One piece of evidence, tied to a real file and line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Rule id, as documented in `docs/rules.md`.
    pub rule: String,
    pub severity: Severity,
    /// Path relative to the repository root (or the folder or archive root).
    pub file: String,
    /// 1-based line; 0 when the finding is about the whole file.
    pub line: u32,
    /// The text that triggered the rule, trimmed and bounded.
    pub evidence: String,
    /// One sentence that says what this means.
    pub message: String,
    pub context: FindingContext,
}

/// What a file in the skill is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileKind {
    SkillMd,
    Markdown,
    Script,
    Asset,
    Workflow,
    AgentHookConfig,
    PackageManifest,
    Binary,
    Symlink,
    Other,
}

impl FileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SkillMd => "skill-md",
            Self::Markdown => "markdown",
            Self::Script => "script",
            Self::Asset => "asset",
            Self::Workflow => "workflow",
            Self::AgentHookConfig => "agent-hook-config",
            Self::PackageManifest => "package-manifest",
            Self::Binary => "binary",
            Self::Symlink => "symlink",
            Self::Other => "other",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryEntry {
    pub path: String,
    pub kind: FileKind,
    /// Script language (`shell`, `python`, `javascript`, ...) where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub size: u64,
    /// For symlinks: where the link points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_target: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    pub files: Vec<InventoryEntry>,
    pub total_bytes: u64,
}

impl Inventory {
    pub fn count(&self, kind: FileKind) -> usize {
        self.files.iter().filter(|f| f.kind == kind).count()
    }
}

/// The verdict on one skill folder (a folder with a SKILL.md) inside the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillSummary {
    /// Folder relative to the source root ("" for the root).
    pub path: String,
    /// The frontmatter `name`, if it parsed.
    pub name: Option<String>,
    pub description: Option<String>,
    pub valid: bool,
    pub risk_level: RiskLevel,
    pub classification: Classification,
    pub recommended_mode: RunMode,
    pub finding_count: usize,
}

/// What `airlock scan` produces. Top-level fields summarise the worst of the skills found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanReport {
    pub schema_version: u32,
    pub risk_level: RiskLevel,
    pub classification: Classification,
    pub recommended_mode: RunMode,
    /// Blunt sentences, most important first.
    pub headline: Vec<String>,
    pub source: SkillSource,
    pub skills: Vec<SkillSummary>,
    pub inventory: Inventory,
    /// Sorted by severity (worst first), then file and line.
    pub findings: Vec<Finding>,
    /// The policy the skill declares (`airlock.toml` or SKILL.md's `metadata.security_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_policy: Option<crate::policy::SourcedPolicy>,
    /// What the saved trust decisions say about this source (filled in by the caller that holds the store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<crate::policy::TrustStatus>,
    pub created_at: String,
}
