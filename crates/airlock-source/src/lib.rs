//! Import a skill and pin it.
//!
//! [`SourceSpec::parse`] turns what a user typed (a GitHub URL in any of its forms, another git URL, a folder or
//! an archive) into a typed spec; [`import`] fetches it into the data directory and stages its files as a
//! [`StagedSource`]: a plain folder on disk, pinned to a commit (or a content digest), with symlinks kept as
//! symlinks and every path checked so nothing lands outside the staging root. Nothing from the skill ever runs:
//! git objects are read straight from the object database, so no hook, filter, LFS smudge or submodule is
//! involved, and every import is bounded by [`Limits`].

mod archive;
mod error;
mod git;
mod guard;
mod spec;
mod stage;

use std::path::{Path, PathBuf};

pub use error::SourceError;
pub use guard::FetchGuard;
pub use spec::{GitHubTarget, RedactedUrl, SourceSpec};
pub use stage::{discover_skills, CommitSignature, Limits, StagedSource};

use airlock_types::{SkillSource, SourceKind};

/// Settings for an import.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Where clones, extracted trees and archives are cached.
    pub data_dir: PathBuf,
    /// Base URL that GitHub `owner/repo` paths are appended to (`https://github.com` unless overridden).
    pub github_base: String,
    pub limits: Limits,
    /// Where network fetches may go: `None` for anywhere this machine reaches (the CLI, run by its user); a shared
    /// server's guard refuses internal addresses its operator did not allow, and transports other than HTTP(S).
    pub guard: Option<FetchGuard>,
}

impl ImportOptions {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            github_base: "https://github.com".to_owned(),
            limits: Limits::default(),
            guard: None,
        }
    }
}

/// Fetches and stages a source, returning where its files are and what it resolved to.
pub fn import(spec: &SourceSpec, options: &ImportOptions) -> Result<StagedSource, SourceError> {
    let staged = match spec {
        SourceSpec::GitHub(target) => git::import_github(target, spec, options)?,
        SourceSpec::Git {
            url,
            reference,
            subpath,
        } => git::import_git(url, reference.as_deref(), subpath, spec, options)?,
        SourceSpec::Folder(path) => stage::import_folder(path, spec, options)?,
        SourceSpec::Archive(path) => archive::import_archive(path, spec, options)?,
    };
    // Staged copies are caches, reused by content or commit: mark this one as used now so that a sweep of unused
    // caches keeps it.
    if let Ok(dir) = std::fs::File::open(&staged.root) {
        let _ = dir.set_modified(std::time::SystemTime::now());
    }
    Ok(staged)
}

/// Builds the public record of a staged source.
pub(crate) fn make_source(
    kind: SourceKind,
    spec: &SourceSpec,
    repo_url: String,
    pinned: PinInfo,
    subpath: String,
    root: &Path,
) -> Result<SkillSource, SourceError> {
    let scan_root = if subpath.is_empty() {
        root.to_path_buf()
    } else {
        root.join(&subpath)
    };
    let digested = stage::digest_tree(&scan_root)?;
    Ok(describe(kind, spec, repo_url, pinned, subpath, digested))
}

/// The public record of a staged source whose folder has this digest and these files.
pub(crate) fn describe(
    kind: SourceKind,
    spec: &SourceSpec,
    repo_url: String,
    pinned: PinInfo,
    subpath: String,
    (digest, detected_files): (String, Vec<String>),
) -> SkillSource {
    let pin_key = pinned
        .commit
        .as_ref()
        .map(|c| c.to_string())
        .unwrap_or_else(|| digest.clone());
    let id = stage::short_hash(&format!("{repo_url}\n{pin_key}\n{subpath}"));
    SkillSource {
        id,
        kind,
        input: spec.display_input(),
        repo_url,
        commit: pinned.commit,
        requested_ref: pinned.requested_ref,
        pinned: pinned.pinned,
        pinned_url: pinned.pinned_url,
        subpath,
        digest,
        detected_files,
        created_at: now_rfc3339(),
    }
}

pub(crate) struct PinInfo {
    pub commit: Option<airlock_types::CommitSha>,
    pub requested_ref: Option<String>,
    pub pinned: bool,
    pub pinned_url: Option<String>,
}

impl PinInfo {
    /// Folders and archives: pinned by their content digest, not by a commit.
    pub(crate) fn by_content() -> Self {
        Self {
            commit: None,
            requested_ref: None,
            pinned: true,
            pinned_url: None,
        }
    }
}

pub use airlock_types::now_rfc3339;
