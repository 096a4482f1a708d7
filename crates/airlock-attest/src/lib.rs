//! What airlock saw, signed so that anyone holding the public key can check it later: an in-toto Statement (v1)
//! whose subject is the skill (its tree digest, and its commit when there is one) and whose predicate is the scan's
//! verdict or the run's, in a DSSE envelope signed with an ed25519 key made on first use in the data folder
//! (`keys/attest.ed25519`, mode 0600). A run's statement carries the SHA-256 of its stored record, so a record edited
//! afterwards no longer matches what was signed.

pub mod openpgp;
pub mod signers;
pub mod sigstore;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use airlock_types::{ScanReport, SkillRun, SkillSource};

/// The envelope's payload type for an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// What a scan's predicate says.
pub const SCAN_PREDICATE: &str = "urn:airlock:predicate:scan:v1";
/// What a run's predicate says.
pub const RUN_PREDICATE: &str = "urn:airlock:predicate:run:v1";

#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    #[error("the signing key {path}: {why}")]
    Key { path: String, why: String },
    #[error("not a signed statement: {0}")]
    Envelope(String),
    #[error("the signature does not hold for this key: {0}")]
    Signature(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The data folder's signing key.
pub struct Keys {
    signer: dsse::Ed25519Signer,
    public: [u8; 32],
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keys({})", self.key_id())
    }
}

/// Bytes in lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// SHA-256 of bytes, in hex.
pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

impl Keys {
    /// Where a data folder keeps its key.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("keys").join("attest.ed25519")
    }

    /// The data folder's key, made (and kept, mode 0600) on first use.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, AttestError> {
        let path = Self::path(data_dir);
        let err = |why: String| AttestError::Key {
            path: path.display().to_string(),
            why,
        };
        let seed = match fs_err::read_to_string(&path) {
            Ok(text) => unhex(&text)
                .filter(|s| s.len() == 32)
                .ok_or_else(|| err("not 64 hex digits".into()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut seed = vec![0u8; 32];
                getrandom::fill(&mut seed).map_err(|e| err(e.to_string()))?;
                if let Some(dir) = path.parent() {
                    fs_err::create_dir_all(dir)?;
                }
                // Created with its mode, never readable by others for an instant.
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode_0600()
                    .open(&path)
                    .map_err(|e| err(e.to_string()))?;
                file.write_all(hex(&seed).as_bytes())?;
                seed
            }
            Err(e) => return Err(err(e.to_string())),
        };
        Self::from_seed(&seed).map_err(err)
    }

    /// A key the operator gives (a file of 64 hex digits, as the data folder keeps its own), refused when anyone but
    /// its owner may read it.
    pub fn load(path: &Path) -> Result<Self, AttestError> {
        let err = |why: String| AttestError::Key {
            path: path.display().to_string(),
            why,
        };
        let mode = std::os::unix::fs::PermissionsExt::mode(&fs_err::metadata(path)?.permissions());
        if mode & 0o077 != 0 {
            return Err(err(format!(
                "others may read it (mode {:o}); `chmod 600` it",
                mode & 0o777
            )));
        }
        let text = fs_err::read_to_string(path)?;
        let seed = unhex(text.trim())
            .filter(|s| s.len() == 32)
            .ok_or_else(|| err("not 64 hex digits (an ed25519 seed)".into()))?;
        Self::from_seed(&seed).map_err(err)
    }

    /// The key to sign with: the operator's file when one is given, else the data folder's (made on first use).
    pub fn open(data_dir: &Path, key_file: Option<&Path>) -> Result<Self, AttestError> {
        match key_file {
            Some(file) => Self::load(file),
            None => Self::load_or_create(data_dir),
        }
    }

    fn from_seed(seed: &[u8]) -> Result<Self, String> {
        let arr: [u8; 32] = seed.try_into().map_err(|_| "not 32 bytes".to_owned())?;
        let public = ed25519_dalek::SigningKey::from_bytes(&arr)
            .verifying_key()
            .to_bytes();
        let signer = dsse::Ed25519Signer::from_bytes(seed)
            .map_err(|e| e.to_string())?
            .with_key_id(key_id(&public));
        Ok(Self { signer, public })
    }

    /// The public key, in hex: what `airlock verify --key` takes.
    pub fn public_hex(&self) -> String {
        hex(&self.public)
    }

    pub fn key_id(&self) -> String {
        key_id(&self.public)
    }

    /// A DSSE envelope (JSON) over the statement.
    pub fn sign(&self, statement: &Value) -> Result<Vec<u8>, AttestError> {
        let payload = serde_json::to_vec(statement).map_err(|e| AttestError::Envelope(e.to_string()))?;
        let envelope = dsse::sign(PAYLOAD_TYPE, &payload, &self.signer)
            .map_err(|e| AttestError::Envelope(e.to_string()))?;
        let mut out = envelope
            .to_json()
            .map_err(|e| AttestError::Envelope(e.to_string()))?;
        out.push(b'\n');
        Ok(out)
    }
}

trait CreateMode {
    fn mode_0600(&mut self) -> &mut Self;
}

impl CreateMode for std::fs::OpenOptions {
    fn mode_0600(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::mode(self, 0o600)
    }
}

/// A key's id: the first 16 hex digits of the SHA-256 of its public key.
fn key_id(public: &[u8; 32]) -> String {
    format!("ed25519:{}", &sha256(public)[..16])
}

/// A public key given as 64 hex digits (or a file holding them).
pub fn public_key(text_or_file: &str) -> Result<[u8; 32], AttestError> {
    let text = if Path::new(text_or_file).is_file() {
        fs_err::read_to_string(text_or_file)?
    } else {
        text_or_file.to_owned()
    };
    unhex(&text)
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| AttestError::Key {
            path: text_or_file.chars().take(80).collect(),
            why: "a public key is 64 hex digits".into(),
        })
}

/// The statement of a checked envelope: its signature held for `public`.
pub fn verify(envelope: &[u8], public: &[u8; 32]) -> Result<Statement, AttestError> {
    let envelope = dsse::Envelope::from_json(envelope).map_err(|e| AttestError::Envelope(e.to_string()))?;
    let verifier =
        dsse::Ed25519Verifier::from_bytes(public).map_err(|e| AttestError::Signature(e.to_string()))?;
    let verified =
        dsse::verify(&envelope, &[&verifier], 1).map_err(|e| AttestError::Signature(e.to_string()))?;
    if verified.payload_type != PAYLOAD_TYPE {
        return Err(AttestError::Envelope(format!(
            "payload type {} is not an in-toto statement",
            verified.payload_type
        )));
    }
    let statement: Statement =
        serde_json::from_slice(&verified.payload).map_err(|e| AttestError::Envelope(e.to_string()))?;
    if statement.statement_type != STATEMENT_TYPE {
        return Err(AttestError::Envelope(format!(
            "statement type {} is not in-toto v1",
            statement.statement_type
        )));
    }
    Ok(statement)
}

/// An in-toto statement (v1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub statement_type: String,
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    pub predicate: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    pub name: String,
    /// `sha256` (the skill's tree digest) and `gitCommit` when there is one.
    pub digest: std::collections::BTreeMap<String, String>,
}

/// The skill as a subject: its tree digest, and its commit.
pub fn subject(source: &SkillSource) -> Subject {
    let mut digest = std::collections::BTreeMap::new();
    digest.insert(
        "sha256".to_owned(),
        source.digest.trim_start_matches("sha256:").to_owned(),
    );
    if let Some(c) = &source.commit {
        digest.insert("gitCommit".to_owned(), c.to_string());
    }
    let name = if source.subpath.is_empty() {
        source.repo_url.clone()
    } else {
        format!("{}#{}", source.repo_url, source.subpath)
    };
    Subject { name, digest }
}

/// What a scan said about a skill.
pub fn scan_statement(report: &ScanReport) -> Value {
    let findings = serde_json::to_vec(&report.findings).unwrap_or_default();
    json!({
        "_type": STATEMENT_TYPE,
        "subject": [subject(&report.source)],
        "predicateType": SCAN_PREDICATE,
        "predicate": {
            "scanner": {"name": "airlock", "version": env!("CARGO_PKG_VERSION")},
            "risk_level": report.risk_level,
            "classification": report.classification,
            "recommended_mode": report.recommended_mode,
            "findings": report.findings.len(),
            "findings_sha256": sha256(&findings),
            "headline": report.headline,
            "created_at": report.created_at,
        },
    })
}

/// The predicate type of a SLSA verification summary (v1).
pub const VSA_PREDICATE: &str = "https://slsa.dev/verification_summary/v1";
/// The level a passed runtime policy check verifies (a custom level, as the SLSA summary allows).
pub const RUNTIME_LEVEL: &str = "AIRLOCK_RUNTIME_POLICY";

/// A runtime policy check (`scan --runtime`) as a SLSA verification summary: the skill is the subject and the
/// resource, the policy is the skill's declared one (within the operator's, when given: its file's digest), the runs
/// that checked it are the inputs (their records' digests), and the result is `PASSED` when no run went beyond the
/// policy.
pub fn verification_summary(
    report: &ScanReport,
    passed: bool,
    policy: (&str, Option<String>),
    runs: &[(String, String)],
) -> Value {
    let (uri, digest) = policy;
    json!({
        "_type": STATEMENT_TYPE,
        "subject": [subject(&report.source)],
        "predicateType": VSA_PREDICATE,
        "predicate": {
            "verifier": {"id": "urn:airlock:verifier:runtime", "version": {"airlock": env!("CARGO_PKG_VERSION")}},
            "timeVerified": airlock_types::now_rfc3339(),
            "resourceUri": report.source.pinned_url.clone().unwrap_or_else(|| report.source.input.clone()),
            "policy": match digest {
                Some(d) => json!({"uri": uri, "digest": {"sha256": d}}),
                None => json!({"uri": uri}),
            },
            "inputAttestations": runs.iter().map(|(id, sha)| json!({
                "uri": format!("urn:airlock:run:{id}"), "digest": {"sha256": sha},
            })).collect::<Vec<_>>(),
            "verificationResult": if passed { "PASSED" } else { "FAILED" },
            "verifiedLevels": if passed { vec![RUNTIME_LEVEL] } else { vec![] },
            "slsaVersion": "1.0",
        },
    })
}

/// What a run did: the policy in force, what was observed, the verdict, and the digest of its stored record.
pub fn run_statement(record: &SkillRun) -> Value {
    json!({
        "_type": STATEMENT_TYPE,
        "subject": [subject(&record.source)],
        "predicateType": RUN_PREDICATE,
        "predicate": {
            "runner": {"name": "airlock", "version": env!("CARGO_PKG_VERSION")},
            "run_id": record.run_id,
            "mode": record.mode,
            "status": record.status,
            "policy": record.policy,
            "observed": record.observed,
            "network": record.network.iter().map(|n| json!({
                "destination": n.host.clone().unwrap_or_else(|| n.destination.clone()),
                "decision": n.decision,
            })).collect::<Vec<_>>(),
            "installs": record.installs.iter().map(|i| i.argv.join(" ")).collect::<Vec<_>>(),
            "verdict": record.verdict,
            "record_sha256": record_digest(record),
            "events": event_chain(record),
        },
    })
}

/// How many events apart the checkpoints of a chain are.
pub const CHECKPOINT_EVERY: usize = 100;

/// The run's events as a hash chain: each link the SHA-256 of the one before and the next event (its kind and its
/// JSON), in the order the record keeps them (commands, file reads, file writes, network attempts, installs,
/// steps). `chain_sha256` is the last link; a checkpoint is kept every [`CHECKPOINT_EVERY`] events, so that an
/// edit is placed among a hundred events rather than only found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventChain {
    pub count: usize,
    pub chain_sha256: String,
    pub every: usize,
    pub checkpoints: Vec<String>,
}

/// The event chain of a run record.
pub fn event_chain(record: &SkillRun) -> EventChain {
    let mut events: Vec<Vec<u8>> = Vec::new();
    let mut add = |kind: &str, v: serde_json::Result<Vec<u8>>| {
        let mut bytes = kind.as_bytes().to_vec();
        bytes.push(0);
        bytes.extend(v.unwrap_or_default());
        events.push(bytes);
    };
    record
        .timeline
        .iter()
        .for_each(|e| add("command", serde_json::to_vec(e)));
    record
        .files_read
        .iter()
        .for_each(|e| add("file_read", serde_json::to_vec(e)));
    record
        .files_written
        .iter()
        .for_each(|e| add("file_write", serde_json::to_vec(e)));
    record
        .network
        .iter()
        .for_each(|e| add("network", serde_json::to_vec(e)));
    record
        .installs
        .iter()
        .for_each(|e| add("install", serde_json::to_vec(e)));
    record
        .steps
        .iter()
        .for_each(|e| add("step", serde_json::to_vec(e)));
    let mut link = sha256(b"airlock run events v1");
    let mut checkpoints = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let mut bytes = link.into_bytes();
        bytes.extend(event);
        link = sha256(&bytes);
        if (i + 1) % CHECKPOINT_EVERY == 0 {
            checkpoints.push(link.clone());
        }
    }
    EventChain {
        count: events.len(),
        chain_sha256: link,
        every: CHECKPOINT_EVERY,
        checkpoints,
    }
}

/// Where a record's events no longer match the chain that was signed: the first and last event (numbered from
/// 1) of the stretch where they first differ, or `None` when they match.
pub fn changed_events(signed: &EventChain, now: &EventChain) -> Option<(usize, usize)> {
    if signed == now {
        return None;
    }
    let every = signed.every.max(1);
    let first_bad = signed
        .checkpoints
        .iter()
        .zip(&now.checkpoints)
        .position(|(a, b)| a != b)
        .unwrap_or(signed.checkpoints.len().min(now.checkpoints.len()));
    let from = first_bad * every + 1;
    let to = ((first_bad + 1) * every)
        .min(signed.count.max(now.count))
        .max(from);
    Some((from, to))
}

/// The SHA-256 of a run record as it is stored (its JSON).
pub fn record_digest(record: &SkillRun) -> String {
    sha256(&serde_json::to_vec(record).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_statement_holds_for_its_key_only_and_not_once_changed() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keys::load_or_create(dir.path()).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &fs_err::metadata(Keys::path(dir.path())).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        // The same key the next time.
        let again = Keys::load_or_create(dir.path()).unwrap();
        assert_eq!(again.public_hex(), keys.public_hex());

        let statement = json!({"_type": STATEMENT_TYPE, "subject": [{"name": "s", "digest": {"sha256": "ab"}}],
            "predicateType": SCAN_PREDICATE, "predicate": {"risk_level": "low"}});
        let envelope = keys.sign(&statement).unwrap();
        let public = public_key(&keys.public_hex()).unwrap();
        let checked = verify(&envelope, &public).unwrap();
        assert_eq!(checked.predicate["risk_level"], "low");

        let other = Keys::load_or_create(tempfile::tempdir().unwrap().path()).unwrap();
        assert!(verify(&envelope, &public_key(&other.public_hex()).unwrap()).is_err());

        // The payload changed (`low` to `high` in the signed bytes): the signature no longer holds.
        let mut env: Value = serde_json::from_slice(&envelope).unwrap();
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let payload = String::from_utf8(b64.decode(env["payload"].as_str().unwrap()).unwrap()).unwrap();
        env["payload"] = Value::String(b64.encode(payload.replace("low", "high")));
        assert!(verify(&serde_json::to_vec(&env).unwrap(), &public).is_err());
    }

    /// The formats as `docs/attestations.md` documents them: its full example is an envelope and a statement this
    /// crate reads, with every field of a run's predicate, and its event chain the type verify compares.
    #[test]
    fn the_documented_example_is_a_statement_airlock_reads() {
        let doc = include_str!("../../../docs/attestations.md");
        let example = doc.split("## A full example").nth(1).unwrap();
        let blocks: Vec<&str> = example
            .split("```json")
            .skip(1)
            .map(|b| b.split("```").next().unwrap())
            .collect();
        assert_eq!(blocks.len(), 2);
        let envelope: Value = serde_json::from_str(blocks[0]).unwrap();
        assert_eq!(envelope["payloadType"], "application/vnd.in-toto+json");
        assert!(envelope["signatures"][0]["keyid"]
            .as_str()
            .unwrap()
            .starts_with("ed25519:"));
        let statement: Statement = serde_json::from_str(blocks[1]).unwrap();
        assert_eq!(statement.predicate_type, RUN_PREDICATE);
        assert_eq!(statement.subject[0].digest["sha256"].len(), 64);
        let p = &statement.predicate;
        for field in [
            "runner",
            "run_id",
            "mode",
            "status",
            "policy",
            "observed",
            "network",
            "installs",
            "verdict",
            "record_sha256",
            "events",
        ] {
            assert!(p.get(field).is_some(), "{field} is not in the example");
            assert!(doc.contains(&format!("`{field}`")), "{field} is not described");
        }
        let chain: EventChain = serde_json::from_value(p["events"].clone()).unwrap();
        assert_eq!(chain.every, CHECKPOINT_EVERY);
        // The statement a run makes has the same fields as the example.
        let mut minimal = serde_json::json!({
            "schema_version": 1, "run_id": "r", "source": {"id": "s", "kind": "folder", "input": "x", "repo_url": "", "commit": null, "requested_ref": null, "pinned": false, "pinned_url": null, "subpath": "", "digest": "ab", "detected_files": [], "created_at": "t"},
            "mode": "sandbox", "target": null, "status": "succeeded", "exit_code": 0, "started_at": "t",
            "finished_at": null, "risk_level": "low", "classification": "prompt-only", "findings": 0,
            "command": [], "limits": null, "limit_hit": null, "network_allowed": false, "timeline": [],
            "files_read": [], "files_written": [], "changes": [], "patch_skipped": [], "review": [],
            "observed": {}, "max_rss_bytes": 0, "cpu_ms": 0, "environment": null, "network": [], "installs": [],
            "plan": null, "steps": [], "stdout": "", "stderr": "", "stdout_truncated": false,
            "stderr_truncated": false, "artifacts": [], "verdict": [], "duration_ms": 0
        });
        minimal["observed"] = p["observed"].clone();
        let made = run_statement(
            &serde_json::from_value(minimal).unwrap_or_else(|e| panic!("a minimal record: {e}")),
        );
        let made_fields: Vec<&String> = made["predicate"].as_object().unwrap().keys().collect();
        let doc_fields: Vec<&String> = p.as_object().unwrap().keys().collect();
        let (mut a, mut b) = (made_fields, doc_fields);
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }

    #[test]
    fn an_edit_among_the_events_is_placed_by_the_first_checkpoint_that_differs() {
        let chain = |n: usize, bad: Option<usize>| {
            let mut c = EventChain {
                count: n,
                chain_sha256: String::new(),
                every: 100,
                checkpoints: vec![],
            };
            for i in 0..n / 100 {
                c.checkpoints.push(if bad.is_some_and(|b| b / 100 <= i) {
                    format!("x{i}")
                } else {
                    format!("c{i}")
                });
            }
            c.chain_sha256 = if bad.is_some() {
                "changed".into()
            } else {
                "head".into()
            };
            c
        };
        let signed = chain(350, None);
        assert_eq!(changed_events(&signed, &signed), None);
        assert_eq!(changed_events(&signed, &chain(350, Some(150))), Some((101, 200)));
        assert_eq!(changed_events(&signed, &chain(350, Some(5))), Some((1, 100)));
        // After the last checkpoint.
        assert_eq!(changed_events(&signed, &chain(350, Some(320))), Some((301, 350)));
    }
}
