use serde::{Deserialize, Serialize};

use crate::CommitSha;

/// How a skill was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// A github.com (or GitHub Enterprise) URL.
    Github,
    /// Any other git URL.
    Git,
    /// A folder on this machine.
    Folder,
    /// A `.zip`, `.tar.gz` or `.skill` archive.
    Archive,
}

/// Where a skill came from, normalised and pinned.
///
/// For git sources `commit` is the resolved commit; for folders and archives there is no commit and
/// `digest` (a SHA-256 over every file's path, mode and content) pins the exact content instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillSource {
    /// Stable id: derived from the repository, commit (or digest) and subpath.
    pub id: String,
    pub kind: SourceKind,
    /// What the user gave, with any credentials redacted.
    pub input: String,
    /// The repository to clone (credentials redacted), or the folder or archive path.
    pub repo_url: String,
    pub commit: Option<CommitSha>,
    /// The branch, tag or `HEAD` the input named, if it named a moving ref rather than a commit.
    pub requested_ref: Option<String>,
    /// True when the input itself named the commit; false when a moving ref was resolved.
    pub pinned: bool,
    /// The URL to use next time to get exactly this content (GitHub sources only).
    pub pinned_url: Option<String>,
    /// Folder inside the repository the user pointed at ("" for the root).
    pub subpath: String,
    pub digest: String,
    /// Every file under `subpath`, relative to it, sorted.
    pub detected_files: Vec<String>,
    /// RFC 3339 time the source was resolved.
    pub created_at: String,
}
