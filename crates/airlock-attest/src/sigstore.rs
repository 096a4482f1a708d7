//! Who signed a skill's files: Sigstore bundles (cosign's `sign-blob --bundle` over one file, an in-toto statement
//! over its files, or an OpenSSF model-signing manifest of file digests), checked offline with `sigstore-verify`
//! against a trust root (Sigstore's public-good root, shipped inside that crate, or one read from a file), with the
//! public keys the user gives for keyed bundles.
//!
//! The cryptography is the crate's: the signature over what the bundle claims (a file's digest, or a statement whose
//! subjects are digests), the certificate chain to the trust root's Fulcio at the time the transparency log (or a
//! timestamp authority) vouches for, the log's signed entry. What is airlock's own is the comparison that follows:
//! each digest the bundle signs against the file imported under that name. A valid signature over other content
//! than what was imported does not hold.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};
use sigstore_verify::crypto::VerificationKey;
use sigstore_verify::trust_root::TrustedRoot;
use sigstore_verify::types::bundle::VerificationMaterialContent;
use sigstore_verify::types::{
    Artifact, ArtifactDigest, Bundle, DerPublicKey, DigestBytes, HashAlgorithm, SignatureContent,
};
use sigstore_verify::{PublicKeyVerificationPolicy, VerificationPolicy, Verifier};

/// The predicate type of an OpenSSF model-signing manifest (v1.0).
pub const MODEL_SIGNING_V1: &str = "https://model_signing/signature/v1.0";

/// The names a Sigstore bundle goes by in a skill's folder: `FILE.sigstore.json` (or `.sigstore`, `.bundle`) beside
/// the file it signs, and `model.sig` or `skill.sig` for a manifest of the whole folder.
pub fn is_bundle_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".sigstore.json")
        || name.ends_with(".sigstore")
        || name.ends_with(".sigstore.bundle")
        || name == "model.sig"
        || name == "skill.sig"
}

/// What a Sigstore signature is checked against: a trust root, the public keys given for keyed bundles, and the
/// identity (and its OIDC issuer) a keyless one must carry, when one is asked for.
pub struct SigstoreTrust {
    verifier: Verifier,
    has_ct_logs: bool,
    keys: Vec<(String, DerPublicKey)>,
    identity: Option<(String, String)>,
}

impl SigstoreTrust {
    /// A trust root (`None`: Sigstore's public-good one), PEM public keys (`-----BEGIN PUBLIC KEY-----`), and the
    /// certificate identity and issuer a keyless signature must carry. A root or key that cannot be read is an error
    /// that says which.
    pub fn new(
        trust_root: Option<&str>,
        keys_pem: &[String],
        identity: Option<(String, String)>,
    ) -> Result<Self, String> {
        let root = match trust_root {
            Some(json) => {
                TrustedRoot::from_json(json).map_err(|e| format!("the trust root cannot be read: {e}"))?
            }
            None => TrustedRoot::from_json(sigstore_verify::trust_root::SIGSTORE_PRODUCTION_TRUSTED_ROOT)
                .map_err(|e| format!("the public-good trust root cannot be read: {e}"))?,
        };
        let has_ct_logs = !root.ctlogs.is_empty();
        let verifier = Verifier::new(&root).map_err(|e| format!("the trust root does not hold: {e}"))?;
        let mut keys = Vec::new();
        for (n, pem) in keys_pem.iter().enumerate() {
            let key = DerPublicKey::from_pem(pem)
                .map_err(|e| format!("public key {}: not a PEM public key: {e}", n + 1))?;
            keys.push((key_fingerprint(key.as_bytes()), key));
        }
        Ok(Self {
            verifier,
            has_ct_logs,
            keys,
            identity,
        })
    }
}

/// `sha256:` and the hex SHA-256 of a public key's DER (SubjectPublicKeyInfo): how a key is named in reports and
/// trust decisions.
pub fn key_fingerprint(der: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(der)))
}

/// Who signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signer {
    /// A keyless signature: the certificate's identity (an email or a URI) and the OIDC issuer that vouched for it.
    Identity { identity: String, issuer: String },
    /// A keyed signature, by the key with this fingerprint.
    Key { fingerprint: String },
}

impl Signer {
    /// The signer as a trust decision names it.
    pub fn id(&self) -> String {
        match self {
            Signer::Identity { identity, issuer } => format!("{identity} ({issuer})"),
            Signer::Key { fingerprint } => fingerprint.clone(),
        }
    }
}

impl std::fmt::Display for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A certificate's identity and issuer are whatever its holder asked for: shown through the display rule.
        use airlock_types::display::line;
        match self {
            Signer::Identity { identity, issuer } => {
                write!(f, "{} (certificate from {})", line(identity), line(issuer))
            }
            Signer::Key { fingerprint } => write!(f, "key {fingerprint}"),
        }
    }
}

/// The kind of content a bundle signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A signature over one file's bytes (cosign `sign-blob`).
    Blob,
    /// An in-toto statement whose subjects are files.
    Statement,
    /// An OpenSSF model-signing manifest: every file's digest.
    Manifest,
}

impl Form {
    pub fn as_str(self) -> &'static str {
        match self {
            Form::Blob => "a Sigstore signature over one file",
            Form::Statement => "a Sigstore-signed in-toto statement over files",
            Form::Manifest => "an OpenSSF model-signing manifest",
        }
    }
}

/// What one bundle says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleOutcome {
    /// The signature holds, by this signer, over these files as imported; the others are not covered.
    Verified {
        signer: Signer,
        form: Form,
        covers: Vec<String>,
        not_covered: Vec<String>,
    },
    /// The signature holds, but over other content than what was imported.
    OtherContent { signer: Signer, form: Form, why: String },
    /// The signature holds, by someone other than the identity asked for.
    WrongIdentity { signer: Signer, wanted: String },
    /// The certificate was not valid when the signature was made (or the log vouched for it).
    Expired { why: String },
    /// A keyed signature, and no key was given that it can be checked with.
    NoKey { hint: String },
    /// The signature does not hold, or the bundle cannot be read.
    Invalid { why: String },
}

/// One bundle and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleCheck {
    /// Its path in the skill's folder (or as given).
    pub file: String,
    pub outcome: BundleOutcome,
}

/// What was imported: each file of the skill's folder (a path relative to it) and its SHA-256, and the SHA-256 of the
/// archive the skill came in when it came in one.
pub struct Imported<'a> {
    pub files: &'a BTreeMap<String, [u8; 32]>,
    pub archive: Option<[u8; 32]>,
}

/// One digest a bundle signs, and the name it gives it.
struct Claim {
    name: String,
    sha256: [u8; 32],
}

/// Checks one bundle (`file`, its path relative to the skill's folder, or as given; `text`, its content).
pub fn check(file: &str, text: &str, imported: &Imported<'_>, trust: &SigstoreTrust) -> BundleCheck {
    let outcome = check_outcome(file, text, imported, trust);
    BundleCheck {
        file: file.to_owned(),
        outcome,
    }
}

fn check_outcome(file: &str, text: &str, imported: &Imported<'_>, trust: &SigstoreTrust) -> BundleOutcome {
    let invalid = |why: String| BundleOutcome::Invalid { why };
    let bundle = match Bundle::from_json(text) {
        Ok(b) => b,
        Err(e) => return invalid(format!("not a Sigstore bundle: {e}")),
    };
    let folder = file.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let (form, signed, claims) = match claims(file, folder, &bundle) {
        Ok(c) => c,
        Err(why) => return invalid(why),
    };
    // The signature is checked over what the bundle itself claims; what was imported is compared after.
    let digest = match ArtifactDigest::new(HashAlgorithm::Sha2256, DigestBytes::new(signed.to_vec())) {
        Ok(d) => d,
        Err(e) => return invalid(e.to_string()),
    };
    let signer = match &bundle.verification_material.content {
        VerificationMaterialContent::PublicKey(id) => {
            if trust.keys.is_empty() {
                return BundleOutcome::NoKey {
                    hint: id.hint.clone(),
                };
            }
            let mut last = String::new();
            let mut found = None;
            for (fingerprint, key) in &trust.keys {
                let held = if bundle.verification_material.tlog_entries.is_empty() {
                    // A keyed signature made offline (model signing's `key` method) is in no log and carries no
                    // time: the key alone vouches, so only the signature is checked.
                    offline_keyed(&bundle, key, &signed)
                } else {
                    trust
                        .verifier
                        .verify(
                            Artifact::from_digest(digest.clone()),
                            &bundle,
                            &PublicKeyVerificationPolicy::new(key.clone()),
                        )
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                };
                match held {
                    Ok(_) => {
                        found = Some(Signer::Key {
                            fingerprint: fingerprint.clone(),
                        });
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            match found {
                Some(s) => s,
                None => {
                    return invalid(format!(
                        "it does not hold with any key given ({} key{}): {last}",
                        trust.keys.len(),
                        if trust.keys.len() == 1 { "" } else { "s" }
                    ))
                }
            }
        }
        _ => {
            let mut policy = VerificationPolicy::any_identity();
            if !trust.has_ct_logs {
                policy = policy.skip_sct();
            }
            match trust
                .verifier
                .verify(Artifact::from_digest(digest.clone()), &bundle, &policy)
            {
                Ok(result) => Signer::Identity {
                    identity: result
                        .identity()
                        .map(|i| i.as_str().to_owned())
                        .unwrap_or_else(|| "(no identity)".into()),
                    issuer: result.issuer().unwrap_or("(no issuer)").to_owned(),
                },
                Err(e) => {
                    let why = e.to_string();
                    return if is_expiry(&why) {
                        BundleOutcome::Expired { why }
                    } else {
                        invalid(why)
                    };
                }
            }
        }
    };
    if let (Signer::Identity { identity, issuer }, Some((want, want_issuer))) = (&signer, &trust.identity) {
        if identity != want || issuer != want_issuer {
            return BundleOutcome::WrongIdentity {
                signer: signer.clone(),
                wanted: format!("{want} ({want_issuer})"),
            };
        }
    }
    // What it signs, against what was imported: the file of that name, else (for a bundle that names no file) the
    // archive or a file with that digest.
    let mut covers = BTreeSet::new();
    for claim in &claims {
        let by_digest = || {
            imported
                .files
                .iter()
                .find(|(_, d)| **d == claim.sha256)
                .map(|(name, _)| name.clone())
        };
        let why = match imported.files.get(&claim.name) {
            Some(actual) if *actual == claim.sha256 => {
                covers.insert(claim.name.clone());
                continue;
            }
            Some(actual) => format!(
                "it signs {} with SHA-256 {}, and the file imported has {}",
                shown(&claim.name),
                hex(&claim.sha256),
                hex(actual)
            ),
            None if imported.archive == Some(claim.sha256) => {
                covers.extend(imported.files.keys().cloned());
                continue;
            }
            None => match by_digest().filter(|_| claim.name.is_empty()) {
                Some(name) => {
                    covers.insert(name);
                    continue;
                }
                None => format!(
                    "it signs {} (SHA-256 {}), which is not among the files imported{}",
                    shown(&claim.name),
                    hex(&claim.sha256),
                    if imported.archive.is_some() {
                        " nor the archive they came in"
                    } else {
                        ""
                    }
                ),
            },
        };
        return BundleOutcome::OtherContent { signer, form, why };
    }
    let not_covered = imported
        .files
        .keys()
        .filter(|f| !covers.contains(*f) && !is_bundle_name(f))
        .cloned()
        .collect();
    BundleOutcome::Verified {
        signer,
        form,
        covers: covers.into_iter().collect(),
        not_covered,
    }
}

/// What a bundle claims to sign: the form, the digest its signature is over, and each file digest it stands for
/// (names relative to the skill's folder).
fn claims(file: &str, folder: &str, bundle: &Bundle) -> Result<(Form, [u8; 32], Vec<Claim>), String> {
    let join = |name: &str| -> String {
        let name = name.trim_start_matches("./");
        if folder.is_empty() {
            name.to_owned()
        } else {
            format!("{folder}/{name}")
        }
    };
    match &bundle.content {
        SignatureContent::MessageSignature(m) => {
            let digest = m
                .message_digest
                .as_ref()
                .ok_or("its message signature carries no digest of what it signs")?;
            if digest.algorithm != HashAlgorithm::Sha2256 {
                return Err(format!(
                    "it signs a {} digest; this build checks SHA-256",
                    digest.algorithm
                ));
            }
            let sha256 = to_32(digest.digest.as_bytes()).ok_or("its message digest is not 32 bytes")?;
            // `FILE.sigstore.json` signs FILE; a bundle given by hand names no file.
            let name = [".sigstore.json", ".sigstore.bundle", ".sigstore"]
                .iter()
                .find_map(|suffix| file.strip_suffix(suffix))
                .unwrap_or("")
                .to_owned();
            Ok((Form::Blob, sha256, vec![Claim { name, sha256 }]))
        }
        SignatureContent::DsseEnvelope(env) => {
            if env.payload_type != "application/vnd.in-toto+json" {
                return Err(format!(
                    "its envelope carries `{}`, not an in-toto statement",
                    airlock_types::display::line(&env.payload_type)
                ));
            }
            let statement: serde_json::Value = serde_json::from_slice(env.payload.as_bytes())
                .map_err(|e| format!("its statement is not JSON: {e}"))?;
            let subjects = statement["subject"]
                .as_array()
                .filter(|s| !s.is_empty())
                .ok_or("its statement has no subjects")?
                .iter()
                .map(|s| {
                    let sha = s["digest"]["sha256"]
                        .as_str()
                        .ok_or("a subject has no SHA-256 digest")?;
                    Ok(Claim {
                        name: join(s["name"].as_str().unwrap_or("")),
                        sha256: from_hex(sha).ok_or("a subject's SHA-256 is not 64 hex digits")?,
                    })
                })
                .collect::<Result<Vec<Claim>, String>>()?;
            let signed = subjects[0].sha256;
            if statement["predicateType"].as_str() != Some(MODEL_SIGNING_V1) {
                return Ok((Form::Statement, signed, subjects));
            }
            // A model-signing manifest: its one subject is the whole (SHA-256 over the resources' digests, in the
            // order listed); the resources are the files.
            let resources = statement["predicate"]["resources"]
                .as_array()
                .ok_or("its manifest lists no resources")?;
            let mut claims = Vec::new();
            let mut whole = Sha256::new();
            for r in resources {
                if r["algorithm"].as_str() != Some("sha256") {
                    return Err("a manifest resource is not hashed with SHA-256".into());
                }
                let sha256 = from_hex(r["digest"].as_str().unwrap_or(""))
                    .ok_or("a manifest resource's digest is not 64 hex digits")?;
                whole.update(sha256);
                claims.push(Claim {
                    name: join(r["name"].as_str().ok_or("a manifest resource has no name")?),
                    sha256,
                });
            }
            if <[u8; 32]>::from(whole.finalize()) != signed {
                return Err("its subject is not the digest of the resources it lists".into());
            }
            Ok((Form::Manifest, signed, claims))
        }
        _ => Err("it carries content of a kind this build does not know".into()),
    }
}

/// A keyed bundle with no log entry: its signature checked with the key (over the DSSE pre-authentication encoding,
/// or the message's digest).
fn offline_keyed(bundle: &Bundle, key: &DerPublicKey, digest: &[u8; 32]) -> Result<(), String> {
    let key = VerificationKey::from_spki(key).map_err(|e| format!("the key cannot be used: {e}"))?;
    match &bundle.content {
        SignatureContent::MessageSignature(m) => key.verify_prehashed(digest, &m.signature),
        SignatureContent::DsseEnvelope(env) => key.verify(env.pae(), &env.signature.sig),
        _ => return Err("it carries content of a kind this build does not know".into()),
    }
    .map_err(|e| format!("invalid signature: {e}"))
}

/// Whether a verification error says the certificate was not valid at the time that counts.
fn is_expiry(why: &str) -> bool {
    let w = why.to_ascii_lowercase();
    w.contains("after certificate validity")
        || w.contains("before certificate validity")
        || w.contains("expired")
        || w.contains("not yet valid")
}

fn shown(name: &str) -> String {
    if name.is_empty() {
        "a file it does not name".into()
    } else {
        format!("`{}`", airlock_types::display::line(name))
    }
}

fn to_32(bytes: &[u8]) -> Option<[u8; 32]> {
    bytes.try_into().ok()
}

fn from_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let s = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
