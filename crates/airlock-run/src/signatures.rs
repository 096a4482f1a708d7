//! Who signed what was imported: the Sigstore bundles a skill carries (or the user gives), and the OpenPGP signature
//! of its git commit, each checked against the exact files imported, as findings of the skill's report. Every face
//! (the CLI, a server, its runners) gets them through [`crate::Imported::scan`].

use std::collections::BTreeMap;
use std::path::Path;

use airlock_attest::openpgp::{self, Keyring};
use airlock_attest::signers::CommitCheck;
use airlock_attest::sigstore::{self, BundleCheck, BundleOutcome, SigstoreTrust};
use airlock_types::{FileKind, Finding, FindingContext, ScanReport, Severity};
use sha2::{Digest, Sha256};

/// What signatures are checked with: given by the user (the CLI's flags) or the operator (a server's settings).
#[derive(Debug, Clone, Default)]
pub struct SignatureSettings {
    /// A Sigstore trust root (`trusted_root.json`), in place of the public-good one shipped with airlock.
    pub trust_root: Option<String>,
    /// PEM public keys keyed Sigstore bundles are checked with.
    pub sigstore_keys: Vec<String>,
    /// The certificate identity and OIDC issuer a keyless signature must carry.
    pub identity: Option<(String, String)>,
    /// OpenPGP public keys a commit's OpenPGP signature is checked with (read once, where they are given).
    pub keyring: Option<Keyring>,
    /// An OpenSSH allowed-signers file: the commit must carry an SSH signature by one of its signers.
    pub allowed_signers: Option<airlock_attest::signers::AllowedSigners>,
    /// Bundles given by hand (their name and text), over a file of the skill or the archive it came in.
    pub bundles: Vec<(String, String)>,
}

/// The Sigstore bundles among the skill's files and those given by hand, each checked.
pub fn sigstore_checks(
    scan_root: &Path,
    report: &ScanReport,
    archive: Option<&Path>,
    settings: &SignatureSettings,
) -> Result<Vec<BundleCheck>, String> {
    let carried: Vec<&str> = report
        .inventory
        .files
        .iter()
        .filter(|f| f.kind != FileKind::Symlink && sigstore::is_bundle_name(&f.path))
        .map(|f| f.path.as_str())
        .collect();
    if carried.is_empty() && settings.bundles.is_empty() {
        return Ok(Vec::new());
    }
    let trust = SigstoreTrust::new(
        settings.trust_root.as_deref(),
        &settings.sigstore_keys,
        settings.identity.clone(),
    )?;
    let mut files = BTreeMap::new();
    for f in &report.inventory.files {
        if f.kind == FileKind::Symlink {
            continue;
        }
        if let Ok(bytes) = fs_err::read(scan_root.join(&f.path)) {
            files.insert(f.path.clone(), <[u8; 32]>::from(Sha256::digest(&bytes)));
        }
    }
    // The archive the skill came in, hashed only now that a bundle may sign it (streamed, never held whole).
    let archive = match archive {
        Some(path) => {
            let mut hasher = Sha256::new();
            std::io::copy(
                &mut fs_err::File::open(path).map_err(|e| e.to_string())?,
                &mut hasher,
            )
            .map_err(|e| format!("reading the archive: {e}"))?;
            Some(<[u8; 32]>::from(hasher.finalize()))
        }
        None => None,
    };
    let imported = sigstore::Imported {
        files: &files,
        archive,
    };
    let mut checks = Vec::new();
    for path in carried {
        let text = fs_err::read(scan_root.join(path)).unwrap_or_default();
        checks.push(sigstore::check(
            path,
            &String::from_utf8_lossy(&text),
            &imported,
            &trust,
        ));
    }
    for (name, text) in &settings.bundles {
        // A bundle given by hand names no file of the skill: what it signs is found by digest.
        let mut check = sigstore::check("", text, &imported, &trust);
        check.file = name.clone();
        checks.push(check);
    }
    Ok(checks)
}

/// A finding for each bundle, citing the bundle (or, for one given by hand, the skill's SKILL.md).
pub fn sigstore_findings(checks: &[BundleCheck], report: &ScanReport) -> Vec<Finding> {
    let skill_md = skill_md(report);
    let mut found = Vec::new();
    for check in checks {
        let shown = airlock_types::display::line(&check.file);
        let carried = report.inventory.files.iter().any(|f| f.path == check.file);
        let file = if carried {
            check.file.clone()
        } else {
            skill_md.clone()
        };
        let finding = |rule: &str, severity: Severity, message: String| Finding {
            rule: rule.to_owned(),
            severity,
            file: file.clone(),
            line: 0,
            evidence: shown.clone(),
            message,
            context: FindingContext::Code,
        };
        match &check.outcome {
            BundleOutcome::Verified {
                signer,
                form,
                covers,
                not_covered,
            } => {
                found.push(finding(
                    "signature/verified",
                    Severity::Info,
                    format!(
                        "{shown}: {} by {signer} holds over {}.",
                        form.as_str(),
                        list(covers, "file")
                    ),
                ));
                if !not_covered.is_empty() {
                    found.push(finding(
                        "signature/partial",
                        Severity::Medium,
                        format!(
                            "{shown} (signed by {signer}) does not cover {}: nobody signed {}.",
                            list(not_covered, "file"),
                            if not_covered.len() == 1 { "it" } else { "them" }
                        ),
                    ));
                }
            }
            BundleOutcome::OtherContent { signer, form, why } => found.push(finding(
                "signature/other-content",
                Severity::Critical,
                format!(
                    "{shown}: {} by {signer} holds, but over other content than what was imported: {}.",
                    form.as_str(),
                    airlock_types::display::line(why)
                ),
            )),
            BundleOutcome::WrongIdentity { signer, wanted } => found.push(finding(
                "signature/wrong-identity",
                Severity::High,
                format!(
                    "{shown} is signed by {signer}, not by the identity asked for ({}).",
                    airlock_types::display::line(wanted)
                ),
            )),
            BundleOutcome::Expired { why } => found.push(finding(
                "signature/expired",
                Severity::High,
                format!(
                    "{shown}: the signing certificate was not valid when it signed: {}.",
                    airlock_types::display::line(why)
                ),
            )),
            BundleOutcome::NoKey { hint } => found.push(finding(
                "signature/unchecked",
                Severity::Low,
                format!(
                    "{shown} is signed with a key (hint `{}`) that was not given: with --sigstore-key it can be \
                     checked; until then it vouches for nothing.",
                    airlock_types::display::line(hint)
                ),
            )),
            BundleOutcome::Invalid { why } => found.push(finding(
                "signature/invalid",
                Severity::Critical,
                format!(
                    "{shown} does not hold: {}.",
                    airlock_types::display::line(why)
                ),
            )),
        }
    }
    found
}

/// "a, b and 3 more files" style list, in full up to twelve names.
fn list(names: &[String], what: &str) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(12)
        .map(|n| format!("`{}`", airlock_types::display::line(n)))
        .collect();
    let more = names.len().saturating_sub(12);
    let head = match shown.len() {
        0 => format!("no {what}"),
        1 => format!("{what} {}", shown[0]),
        _ => format!("{what}s {}", shown.join(", ")),
    };
    if more > 0 {
        format!("{head} and {more} more")
    } else {
        head
    }
}

/// How a commit check names its key and its list, for the findings' words.
struct CommitWords {
    key: &'static str,
    not_listed: &'static str,
    outside: &'static str,
}

const SSH: CommitWords = CommitWords {
    key: "key",
    not_listed: "which the allowed signers do not list",
    outside: "outside the time allowed",
};

const OPENPGP: CommitWords = CommitWords {
    key: "OpenPGP key",
    not_listed: "which the keyring does not hold",
    outside: "outside the key's validity",
};

/// A commit signature's check as a finding citing the skill's SKILL.md (the signature covers every file of the
/// commit, so none is named alone).
fn commit_finding(commit: &str, check: CommitCheck, words: &CommitWords, report: &ScanReport) -> Finding {
    let CommitWords {
        key,
        not_listed,
        outside,
    } = words;
    let who = |p: &str| airlock_types::display::line(p);
    let (rule, severity, message) = match check {
        CommitCheck::Verified { principal, fingerprint } => (
            "signature/verified",
            Severity::Info,
            format!(
                "Commit {commit} is signed by {} ({key} {fingerprint}); the signature covers every file of the \
                 commit, the skill's included.",
                who(&principal)
            ),
        ),
        CommitCheck::UnknownSigner { fingerprint } => (
            "signature/unknown-signer",
            Severity::High,
            format!("Commit {commit} is signed with {key} {fingerprint}, {not_listed}."),
        ),
        CommitCheck::Expired { principal, fingerprint, why } => (
            "signature/expired",
            Severity::High,
            format!("Commit {commit} is signed by {} ({key} {fingerprint}) {outside}: {why}.", who(&principal)),
        ),
        CommitCheck::Invalid { why } => (
            "signature/invalid",
            Severity::Critical,
            format!("Commit {commit} carries a signature that does not hold over what was imported: {why}."),
        ),
        CommitCheck::OpenPgp => (
            "signature/openpgp",
            Severity::Medium,
            format!(
                "Commit {commit} is signed with OpenPGP; --allowed-signers checks SSH signatures (--keyring checks \
                 OpenPGP ones)."
            ),
        ),
    };
    Finding {
        rule: rule.into(),
        severity,
        file: skill_md(report),
        line: 0,
        evidence: commit.to_owned(),
        message,
        context: FindingContext::Code,
    }
}

/// The commit's SSH signature against the allowed signers; asked for, an unsigned commit (or a source that is not a
/// git commit) is a finding too.
pub fn ssh_finding(
    commit: Option<&str>,
    signature: Option<&airlock_source::CommitSignature>,
    allowed: &airlock_attest::signers::AllowedSigners,
    report: &ScanReport,
) -> Finding {
    let unsigned = |message: String| Finding {
        rule: "signature/unsigned".into(),
        severity: Severity::High,
        file: skill_md(report),
        line: 0,
        evidence: commit.unwrap_or_default().to_owned(),
        message,
        context: FindingContext::Code,
    };
    let Some(commit) = commit else {
        return unsigned("Not a git commit: there is no commit signature to check.".into());
    };
    let Some(sig) = signature else {
        return unsigned(format!(
            "Commit {commit} is not signed; --allowed-signers asks for a signed one."
        ));
    };
    let check = airlock_attest::signers::check_commit(&sig.armored, &sig.signed, sig.time, allowed);
    commit_finding(commit, check, &SSH, report)
}

/// The commit's OpenPGP signature against the keyring, as a finding (none when the commit is not signed with
/// OpenPGP).
pub fn openpgp_finding(
    commit: &str,
    signature: &airlock_source::CommitSignature,
    keyring: &Keyring,
    report: &ScanReport,
) -> Option<Finding> {
    if !openpgp::is_openpgp(&signature.armored) {
        return None;
    }
    let check = openpgp::check_commit(&signature.armored, &signature.signed, signature.time, keyring);
    Some(commit_finding(commit, check, &OPENPGP, report))
}

/// The skill's SKILL.md, as the report names it: what a finding about the whole skill cites.
pub fn skill_md(report: &ScanReport) -> String {
    report
        .skills
        .first()
        .map(|s| {
            if s.path.is_empty() {
                "SKILL.md".to_owned()
            } else {
                format!("{}/SKILL.md", s.path)
            }
        })
        .unwrap_or_else(|| "SKILL.md".into())
}
