//! Skill policies: what a skill declares it needs (an `airlock.toml` beside SKILL.md, or SKILL.md's
//! `metadata.security_policy`) and what an operator lets any skill have (`--policy FILE`). One schema for both;
//! `docs/policy.md` documents it.

use serde::{Deserialize, Serialize};

/// A policy document. Every part is optional; unknown keys are an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyDoc {
    pub network: NetworkPolicy,
    pub filesystem: FilesystemPolicy,
    pub resources: ResourcePolicy,
    pub install: InstallPolicy,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkPolicy {
    /// Rules in the grammar of `--allow-net`: `HOST[:PORT]`, `*.domain`, an address or CIDR.
    pub allow: Vec<String>,
    /// Rules that are always refused (deny wins).
    pub deny: Vec<String>,
    /// `package-registries`, `model-api`.
    pub presets: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FilesystemPolicy {
    /// Absolute paths (or `~/...`) the skill writes beyond the workspace and `/tmp`.
    pub writable: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResourcePolicy {
    /// `30s`, `2m`.
    pub timeout: Option<String>,
    /// `512M`, `2G`.
    pub memory: Option<String>,
    pub disk: Option<String>,
    pub pids: Option<u64>,
    pub cpus: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InstallPolicy {
    /// Whether the skill installs packages before it runs (its requirements, its imports).
    pub packages: Option<bool>,
    /// The registries installs may use: `pypi`, `npm`.
    pub registries: Vec<String>,
}

impl PolicyDoc {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// Where a policy came from, as the record and the report say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicySource {
    /// `skill`, `operator`.
    pub role: String,
    /// `airlock.toml`, `SKILL.md metadata.security_policy`, or the operator's file.
    pub origin: String,
    /// The file, relative to the skill (or the operator's path).
    pub file: String,
    /// 1-based line where the policy starts.
    pub line: u32,
}

/// A policy with where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourcedPolicy {
    pub source: PolicySource,
    pub policy: PolicyDoc,
}

/// One part of the effective policy and what set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyPart {
    /// `network.allow`, `resources.timeout`, ...
    pub key: String,
    pub value: String,
    /// `skill (airlock.toml)`, `operator (FILE)`, `flag --timeout`, `default`.
    pub from: String,
}

/// The policy a run ran under: the skill's declaration (when accepted), the operator's cap and the user's flags,
/// merged with deny winning and the stricter limit applying.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EffectivePolicy {
    /// The skill's declaration, whether or not it was accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<SourcedPolicy>,
    /// Whether the declaration was applied (`--accept-policy`, a trust decision, `scan --runtime`).
    pub accepted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<SourcedPolicy>,
    /// Every part of the policy the run had, with what set it.
    pub parts: Vec<PolicyPart>,
    /// What the declaration asked for that the operator's cap did not grant, with why.
    pub refused: Vec<String>,
    /// What the run did beyond the declaration (a host, a write, a limit, an install), each with its evidence.
    pub beyond: Vec<Beyond>,
}

/// One thing a run did beyond its declared policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Beyond {
    /// `network`, `write`, `limit`, `install`.
    pub kind: String,
    /// The host, path, limit or install command.
    pub what: String,
    /// From the record: the attempt's decision and reason, the write, the limit hit.
    pub evidence: String,
}

/// Parses `30s`, `500ms`, `2m`, `1h` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    use std::time::Duration;
    let (num, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: use 30s, 2m or 500ms"))?;
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => Ok(Duration::from_secs(n.saturating_mul(60))),
        "h" => Ok(Duration::from_secs(n.saturating_mul(3600))),
        _ => Err(format!("`{text}` is not a duration: use 30s, 2m or 500ms")),
    }
}

/// Parses `512M`, `2G`, `64K` or a number of bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (num, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size: use 512M or 2G"))?;
    let mult: u64 = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return Err(format!("`{text}` is not a size: use 512M or 2G")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// A saved trust decision: "allow this commit with this policy", or "skills from this repository get at most this
/// policy".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustDecision {
    pub id: String,
    /// `commit` or `repository`.
    pub kind: String,
    /// The repository (or folder) the source came from, and the skill's folder in it.
    pub repo: String,
    pub subpath: String,
    /// The trusted commit (or content digest, for a folder or archive); `None` for a repository decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub policy: PolicyDoc,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub created_at: String,
    /// The skill's files (path and SHA-256) and findings (`rule file: evidence`) at the trusted commit, to show what
    /// changed in a later one.
    #[serde(default)]
    pub files: Vec<(String, String)>,
    #[serde(default)]
    pub findings: Vec<String>,
}

/// What the saved trust decisions say about the source at hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustStatus {
    /// The decision that speaks for this source (the one for this commit, else the repository's, else the newest
    /// for another commit).
    pub decision_id: String,
    pub kind: String,
    /// Whether it applies to this commit: a commit decision applies only to its own commit.
    pub applies: bool,
    /// One sentence for people.
    pub note: String,
    /// For a decision about another commit: what changed since the trusted one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<TrustChanges>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustChanges {
    pub trusted_commit: String,
    pub files_added: Vec<String>,
    pub files_removed: Vec<String>,
    pub files_changed: Vec<String>,
    pub findings_new: Vec<String>,
    pub findings_gone: Vec<String>,
}
