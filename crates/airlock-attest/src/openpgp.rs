//! Who signed a skill's commit with OpenPGP (git's default `gpg.format`): the signature in the commit's `gpgsig`
//! header, over the commit object without it, checked with rPGP (the `pgp` crate) against a keyring the user gives
//! (armored public keys, as `gpg --export --armor` writes them), at the commit's own time, as `git verify-commit`
//! does: a key made after the commit, expired by then or revoked does not hold.

use pgp::composed::{Deserializable, DetachedSignature, SignedPublicKey};
use pgp::types::KeyDetails;

use crate::signers::CommitCheck;

/// OpenPGP public keys.
#[derive(Debug, Clone, Default)]
pub struct Keyring {
    keys: Vec<SignedPublicKey>,
}

impl Keyring {
    /// Reads armored public keys (one block or several, one after another); a block that cannot be read is an
    /// error.
    pub fn parse(armored: &str) -> Result<Self, String> {
        let (keys, _) = SignedPublicKey::from_string_many(armored)
            .map_err(|e| format!("not OpenPGP public keys: {e}"))?;
        let keys = keys
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("a key cannot be read: {e}"))?;
        if keys.is_empty() {
            return Err("no OpenPGP public key in it".into());
        }
        for key in &keys {
            key.verify_bindings()
                .map_err(|e| format!("key {}: its self-signatures do not hold: {e}", key.fingerprint()))?;
        }
        Ok(Self { keys })
    }
}

/// Whether a commit's signature is an OpenPGP one.
pub fn is_openpgp(armored: &str) -> bool {
    armored.trim_start().starts_with("-----BEGIN PGP SIGNATURE-----")
}

/// Checks a commit's OpenPGP signature (`armored`) over `signed` (the commit object without it), made at `time` (the
/// committer's, seconds since 1970), against the keyring.
pub fn check_commit(armored: &str, signed: &[u8], time: i64, keyring: &Keyring) -> CommitCheck {
    let sig = match DetachedSignature::from_string(armored) {
        Ok((s, _)) => s,
        Err(e) => {
            return CommitCheck::Invalid {
                why: format!("the signature cannot be read: {e}"),
            }
        }
    };
    let issuers: Vec<String> = sig
        .signature
        .issuer_fingerprint()
        .iter()
        .map(|f| f.to_string())
        .chain(sig.signature.issuer_key_id().iter().map(|k| k.to_string()))
        .collect();
    for key in &keyring.keys {
        let fingerprint = key.fingerprint().to_string();
        let principal = key
            .details
            .users
            .first()
            .and_then(|u| u.id.as_str().map(str::to_owned))
            .unwrap_or_else(|| "(no user id)".into());
        // The primary key or one of its subkeys.
        let mut held = sig.verify(&key.primary_key, signed).is_ok();
        let mut signing_created = key.primary_key.created_at().as_secs();
        if !held {
            for sub in &key.public_subkeys {
                if sig.verify(&sub.key, signed).is_ok() {
                    held = true;
                    signing_created = sub.key.created_at().as_secs();
                    break;
                }
            }
        }
        if !held {
            continue;
        }
        let expired = |why: String| CommitCheck::Expired {
            principal: principal.clone(),
            fingerprint: fingerprint.clone(),
            why,
        };
        if !key.details.revocation_signatures.is_empty() {
            return expired("the key is revoked".into());
        }
        if time < i64::from(signing_created) {
            return expired("the key was made after the commit".into());
        }
        let created = i64::from(key.primary_key.created_at().as_secs());
        let expiry = key
            .details
            .users
            .iter()
            .flat_map(|u| u.signatures.iter())
            .filter_map(|s| s.key_expiration_time())
            .map(|d| created + i64::from(d.as_secs()))
            .max();
        if let Some(end) = expiry {
            if time > end {
                return expired(format!("the key expired at {end}, before the commit ({time})"));
            }
        }
        return CommitCheck::Verified {
            principal,
            fingerprint,
        };
    }
    // No key of the keyring holds: a key it names that is in the keyring means the content is not what it signed.
    let named_in_keyring = keyring.keys.iter().any(|k| {
        let fp = k.fingerprint().to_string();
        let id = k.legacy_key_id().to_string();
        issuers
            .iter()
            .any(|i| i.eq_ignore_ascii_case(&fp) || i.eq_ignore_ascii_case(&id))
    });
    if named_in_keyring {
        return CommitCheck::Invalid {
            why: "it does not hold over this commit with the key it names".into(),
        };
    }
    CommitCheck::UnknownSigner {
        fingerprint: issuers.first().cloned().unwrap_or_else(|| "(unnamed)".into()),
    }
}

/// The fingerprint of the keyring's key whose OpenPGP signature holds over the commit, at its time.
pub fn signing_key(armored: &str, signed: &[u8], time: i64, keyring: &Keyring) -> Option<String> {
    match check_commit(armored, signed, time, keyring) {
        CommitCheck::Verified { fingerprint, .. } => Some(fingerprint),
        _ => None,
    }
}
