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

/// What kind of evidence a finding is, by its rule (docs/detection.md, "Kinds of evidence"): a capability alone earns
/// at most `high`; an intent, a flow, an obfuscation or a campaign is what makes a threat; observed evidence comes from
/// running the skill (a detonation, a run's record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceKind {
    /// What the code can do: use the network, run programs, install packages, touch files, take privileges.
    Capability,
    /// What the skill asks for or does against the user: read a secret, persist, hide, inject, widen permissions.
    Intent,
    /// A secret reaching a network send, or a write to a file that runs later, both ends cited.
    Flow,
    /// Encoded, packed or hidden content, decoded and scanned again.
    Obfuscation,
    /// The parts of a known campaign's lure: a fake prerequisite, a paste into a terminal, an archive password.
    Campaign,
    /// Seen when the skill ran, sealed: what touched a canary, what would have left, what was refused.
    Observed,
}

impl EvidenceKind {
    /// The kind of a rule, by its id.
    pub fn of(rule: &str) -> Self {
        let (family, _) = rule.split_once('/').unwrap_or((rule, ""));
        match family {
            "flow" => Self::Flow,
            "obfusc" => Self::Obfuscation,
            "campaign" => Self::Campaign,
            "detonation" | "runtime" => Self::Observed,
            "secrets" | "persist" | "prompt" | "intent" | "destruct" | "weaken" => Self::Intent,
            _ if INTENT_RULES.contains(&rule) => Self::Intent,
            _ => Self::Capability,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Capability => "capability",
            Self::Intent => "intent",
            Self::Flow => "flow",
            Self::Obfuscation => "obfuscation",
            Self::Campaign => "campaign",
            Self::Observed => "observed",
        }
    }
}

/// Rules of a capability's family whose match is an intent: a shell handed to someone else, code fetched and run as
/// it arrives, root taken, data put in a lookup or an upload, installs sent to another index, commands registered to
/// run by themselves.
const INTENT_RULES: &[&str] = &[
    "exec/reverse-shell",
    "exec/bind-shell",
    "exec/remote-code",
    "priv/escalate",
    "net/exfil-endpoint",
    "net/dns-data",
    "net/upload",
    "net/publish-public",
    "install/pipe-to-shell",
    "install/custom-source",
    "hooks/auto-command",
    "hooks/broad-permissions",
    "workflow/untrusted-input",
    "secrets/workflow-all",
];

/// Where the text a finding cites stands in the skill, which decides how an agent meets it: the instructions an
/// agent follows (SKILL.md), a reference it reads when pointed to, an example or template to adapt (or a specimen a
/// guide shows as an attack), a test, the skill's code, its metadata (front matter, manifests), the file as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    Instructions,
    Reference,
    Example,
    Test,
    Code,
    Metadata,
    File,
}

impl Standing {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Instructions => "in the instructions",
            Self::Reference => "in a reference",
            Self::Example => "in an example",
            Self::Test => "in a test",
            Self::Code => "in code",
            Self::Metadata => "in metadata",
            Self::File => "the file",
        }
    }
}

/// Whether a file's name is a test's (`test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`, pytest's `conftest.py`): a
/// test runner runs it, not a user.
pub fn test_file_name(name: &str) -> bool {
    name == "conftest.py"
        || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// The start of a finding's message when a label shows its text as an attack (`Shown as an attack (after …)`), or a
/// comment marks it as what not to do: a specimen, counted one step less.
pub const SHOWN_AS_ATTACK: &str = "Shown as an attack";
/// See [`SHOWN_AS_ATTACK`].
pub const SHOWN_AS_BAD: &str = "Shown as what not to do";

impl Finding {
    /// The kind of evidence, by the rule.
    pub fn kind(&self) -> EvidenceKind {
        EvidenceKind::of(&self.rule)
    }

    /// Whether a label or a comment shows the text as an attack or what not to do (a specimen).
    pub fn specimen(&self) -> bool {
        self.message.starts_with(SHOWN_AS_ATTACK) || self.message.starts_with(SHOWN_AS_BAD)
    }

    /// Where the cited text stands, by its file's place in the skill and the finding's context.
    pub fn standing(&self) -> Standing {
        match self.context {
            FindingContext::File => return Standing::File,
            FindingContext::Metadata => return Standing::Metadata,
            _ => {}
        }
        if self.specimen() {
            return Standing::Example;
        }
        let path = self.file.as_str();
        let name = path.rsplit('/').next().unwrap_or(path);
        let dirs: Vec<&str> = path.split('/').rev().skip(1).collect();
        let under = |names: &[&str]| {
            dirs.iter()
                .any(|d| names.contains(&d.to_ascii_lowercase().as_str()))
        };
        if under(&["tests", "test", "__tests__", "spec", "testdata"]) || test_file_name(name) {
            Standing::Test
        } else if under(&[
            "examples",
            "example",
            "templates",
            "template",
            "samples",
            "sample",
            "fixtures",
        ]) {
            Standing::Example
        } else if name == "SKILL.md" {
            Standing::Instructions
        } else if [".md", ".mdx", ".markdown", ".txt", ".rst"]
            .iter()
            .any(|e| name.to_ascii_lowercase().ends_with(e))
        {
            Standing::Reference
        } else {
            Standing::Code
        }
    }
}

/// A finding as written out: its fields, with its kind of evidence and where it stands (computed, so they are always
/// the rule's and the file's; a record read back ignores them).
impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Out<'a> {
            rule: &'a str,
            severity: Severity,
            file: &'a str,
            line: u32,
            evidence: &'a str,
            message: &'a str,
            context: FindingContext,
            kind: EvidenceKind,
            stands_in: Standing,
        }
        Out {
            rule: &self.rule,
            severity: self.severity,
            file: &self.file,
            line: self.line,
            evidence: &self.evidence,
            message: &self.message,
            context: self.context,
            kind: self.kind(),
            stands_in: self.standing(),
        }
        .serialize(serializer)
    }
}

/// One piece of evidence, tied to a real file and line.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &str, file: &str, context: FindingContext, message: &str) -> Finding {
        Finding {
            rule: rule.to_owned(),
            severity: Severity::High,
            file: file.to_owned(),
            line: 3,
            evidence: "x".to_owned(),
            message: message.to_owned(),
            context,
        }
    }

    #[test]
    fn each_finding_has_a_kind_by_its_rule() {
        for (rule, kind) in [
            ("net/http-client", EvidenceKind::Capability),
            ("exec/subprocess", EvidenceKind::Capability),
            ("priv/sudo", EvidenceKind::Capability),
            ("exec/reverse-shell", EvidenceKind::Intent),
            ("secrets/ssh-keys", EvidenceKind::Intent),
            ("prompt/conceal", EvidenceKind::Intent),
            ("install/custom-source", EvidenceKind::Intent),
            ("flow/secret-to-network", EvidenceKind::Flow),
            ("obfusc/encoded-exec", EvidenceKind::Obfuscation),
            ("campaign/lure", EvidenceKind::Campaign),
            ("detonation/secret-sent", EvidenceKind::Observed),
            ("runtime/network", EvidenceKind::Observed),
        ] {
            assert_eq!(EvidenceKind::of(rule), kind, "{rule}");
        }
    }

    #[test]
    fn each_finding_says_where_it_stands() {
        let code = FindingContext::Code;
        for (file, context, message, standing) in [
            (
                "SKILL.md",
                FindingContext::Instruction,
                "Reads a key.",
                Standing::Instructions,
            ),
            ("sub/skill/SKILL.md", code, "Reads a key.", Standing::Instructions),
            (
                "references/guide.md",
                FindingContext::Instruction,
                "Reads a key.",
                Standing::Reference,
            ),
            ("templates/hook.sh", code, "Runs later.", Standing::Example),
            ("scripts/tests/test_x.py", code, "Sends.", Standing::Test),
            ("scripts/x.test.js", code, "Sends.", Standing::Test),
            ("scripts/run.py", code, "Sends.", Standing::Code),
            (
                "SKILL.md",
                code,
                "Shown as an attack (after `Attackers run:`): reads a key.",
                Standing::Example,
            ),
            (
                "package.json",
                FindingContext::Metadata,
                "Install hook.",
                Standing::Metadata,
            ),
            (
                "scripts/run.py",
                FindingContext::File,
                "A helper.",
                Standing::File,
            ),
        ] {
            assert_eq!(
                finding("secrets/ssh-keys", file, context, message).standing(),
                standing,
                "{file} {message}"
            );
        }
    }

    #[test]
    fn a_finding_written_out_carries_its_kind_and_standing_and_reads_back() {
        let f = finding(
            "flow/secret-to-network",
            "scripts/up.sh",
            FindingContext::Code,
            "Sends a key.",
        );
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["kind"], "flow");
        assert_eq!(json["stands_in"], "code");
        assert_eq!(json["rule"], "flow/secret-to-network");
        let back: Finding = serde_json::from_value(json).unwrap();
        assert_eq!(back, f);
    }
}
