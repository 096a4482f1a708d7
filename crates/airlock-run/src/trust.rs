//! Trust decisions: "allow this commit with this policy" and "skills from this repository get at most this policy",
//! saved in the store, looked up for every scan and run, and never applied to a different commit without saying so:
//! a later commit of a trusted source is shown with what changed since the trusted one (files and findings).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use sha2::{Digest, Sha256};

use airlock_store::Store;
use airlock_types::policy::{PolicyDoc, TrustChanges, TrustDecision, TrustStatus};
use airlock_types::{ScanReport, SkillSource};

use crate::RunError;

/// What a trust decision names: the commit (or, for a folder or archive, the content digest).
fn pin(source: &SkillSource) -> String {
    source
        .commit
        .as_ref()
        .map_or_else(|| source.digest.clone(), ToString::to_string)
}

fn short(pin: &str) -> &str {
    pin.get(..12).unwrap_or(pin)
}

/// SHA-256 of every regular file under `root`, by path relative to it (the staging's own completion marker aside).
pub fn hash_tree(root: &Path) -> std::io::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs_err::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if kind.is_file() && !(dir == root && entry.file_name() == ".airlock-complete") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                let digest = Sha256::digest(fs_err::read(&path)?);
                out.insert(rel, digest.iter().map(|b| format!("{b:02x}")).collect());
            }
        }
    }
    Ok(out)
}

/// A finding as trust compares them: rule, file and evidence (lines move between commits).
fn finding_keys(report: &ScanReport) -> Vec<String> {
    let set: BTreeSet<String> = report
        .findings
        .iter()
        .map(|f| format!("{} {}: {}", f.rule, f.file, f.evidence))
        .collect();
    set.into_iter().collect()
}

/// What a decision trusts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trusting<'a> {
    /// The commit at hand (or, for a folder or archive, its exact content).
    Commit,
    /// Every skill of its repository, at any commit, at most with the policy.
    Repository,
    /// Every commit the key (its SHA-256 fingerprint) signs, in any repository.
    Signer(&'a str),
}

/// Saves a decision for the source at hand: its commit with `policy` (`repository == false`), or every skill of its
/// repository at most `policy`.
pub fn trust(
    store: &Store,
    source: &SkillSource,
    skill_root: &Path,
    report: &ScanReport,
    policy: PolicyDoc,
    what: Trusting<'_>,
    note: Option<String>,
) -> Result<TrustDecision, RunError> {
    let signer = match what {
        Trusting::Signer(key) => Some(key),
        _ => None,
    };
    // A signer's decision speaks for every skill its key signs, whichever repository: it keeps no files.
    let repository = !matches!(what, Trusting::Commit);
    let decision = TrustDecision {
        id: format!("t{}", airlock_sandbox::random_hex(6)),
        kind: match signer {
            Some(_) => "signer",
            None if repository => "repository",
            None => "commit",
        }
        .into(),
        repo: match signer {
            Some(key) => signer_repo(key),
            None => source.repo_url.clone(),
        },
        subpath: if repository {
            String::new()
        } else {
            source.subpath.clone()
        },
        commit: (!repository).then(|| pin(source)),
        policy,
        note,
        created_at: airlock_types::now_rfc3339(),
        files: if repository {
            Vec::new()
        } else {
            hash_tree(skill_root)?.into_iter().collect()
        },
        findings: if repository {
            Vec::new()
        } else {
            finding_keys(report)
        },
    };
    store.save_trust(&decision)?;
    Ok(decision)
}

/// A signer as a trust decision names it (`Imported::signer`), in words: an SSH key's fingerprint, an OpenPGP key's,
/// a Sigstore certificate's identity and issuer, or a Sigstore key's fingerprint.
pub fn signer_words(key: &str) -> String {
    let key = airlock_types::display::line(key);
    if let Some(id) = key.strip_prefix("sigstore:sha256:") {
        format!("Sigstore key sha256:{id}")
    } else if let Some(id) = key.strip_prefix("sigstore:") {
        format!("{id}, a Sigstore certificate's identity")
    } else if let Some(fp) = key.strip_prefix("openpgp:") {
        format!("OpenPGP key {fp}")
    } else {
        format!("SSH key {key}")
    }
}

/// Where a signer's decision is kept: under its key's fingerprint in place of a repository.
fn signer_repo(key: &str) -> String {
    format!("signer:{key}")
}

/// What the saved decisions say about this source: the decision for this very commit applies; else one naming the
/// key that signed this commit (`signer`, when its signature holds); else a repository decision (as a cap); else the
/// newest decision for another commit of the same skill is named, with what changed since, and does not apply.
pub fn status(
    store: &Store,
    source: &SkillSource,
    skill_root: &Path,
    report: &ScanReport,
    signer: Option<&str>,
) -> Result<Option<(TrustStatus, TrustDecision)>, RunError> {
    let here = pin(source);
    let mut decisions = store.trust_decisions(Some((&source.repo_url, &source.subpath)))?;
    if !source.subpath.is_empty() {
        decisions.extend(store.trust_decisions(Some((&source.repo_url, "")))?);
    }
    let applying = |d: &TrustDecision, note: String| TrustStatus {
        decision_id: d.id.clone(),
        kind: d.kind.clone(),
        applies: true,
        note,
        changes: None,
    };
    if let Some(d) = decisions
        .iter()
        .find(|d| d.kind == "commit" && d.commit.as_deref() == Some(here.as_str()))
    {
        let note = format!(
            "Trusted: this commit ({}) was allowed with a policy on {} (decision {}).",
            short(&here),
            d.created_at,
            d.id
        );
        return Ok(Some((applying(d, note), d.clone())));
    }
    if let Some(key) = signer {
        if let Some(d) = store
            .trust_decisions(Some((&signer_repo(key), "")))?
            .into_iter()
            .find(|d| d.kind == "signer")
        {
            let note = format!(
                "Signed by {}, trusted with the policy of decision {} ({}).",
                signer_words(key),
                d.id,
                d.created_at
            );
            return Ok(Some((applying(&d, note), d)));
        }
    }
    if let Some(d) = decisions.iter().find(|d| d.kind == "repository") {
        let note = format!(
            "Skills from {} get at most the policy of decision {} ({}).",
            source.repo_url, d.id, d.created_at
        );
        return Ok(Some((applying(d, note), d.clone())));
    }
    let Some(d) = decisions.iter().find(|d| d.kind == "commit") else {
        return Ok(None);
    };
    let trusted = d.commit.clone().unwrap_or_default();
    let before: BTreeMap<&str, &str> = d.files.iter().map(|(p, h)| (p.as_str(), h.as_str())).collect();
    let now = hash_tree(skill_root)?;
    let mut changes = TrustChanges {
        trusted_commit: trusted.clone(),
        ..TrustChanges::default()
    };
    for (path, hash) in &now {
        match before.get(path.as_str()) {
            None => changes.files_added.push(path.clone()),
            Some(h) if h != hash => changes.files_changed.push(path.clone()),
            Some(_) => {}
        }
    }
    changes.files_removed = before
        .keys()
        .filter(|p| !now.contains_key(**p))
        .map(|p| (*p).to_owned())
        .collect();
    let old: BTreeSet<&String> = d.findings.iter().collect();
    let new_keys = finding_keys(report);
    let new: BTreeSet<&String> = new_keys.iter().collect();
    changes.findings_new = new.difference(&old).map(|s| (*s).clone()).collect();
    changes.findings_gone = old.difference(&new).map(|s| (*s).clone()).collect();
    Ok(Some((
        TrustStatus {
            decision_id: d.id.clone(),
            kind: d.kind.clone(),
            applies: false,
            note: format!(
                "Not trusted: decision {} allowed commit {}, and this is commit {}; it does not apply here. Since the \
                 trusted commit: {} file(s) added, {} changed, {} removed; {} new finding(s), {} gone.",
                d.id,
                short(&trusted),
                short(&here),
                changes.files_added.len(),
                changes.files_changed.len(),
                changes.files_removed.len(),
                changes.findings_new.len(),
                changes.findings_gone.len()
            ),
            changes: Some(changes),
        },
        d.clone(),
    )))
}
