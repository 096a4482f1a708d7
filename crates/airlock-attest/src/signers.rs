//! Who signed a skill's commit: git's SSH signatures (`gpg.format = ssh`, an SSHSIG over the commit object without
//! its signature, namespace `git`) checked with the `ssh-key` crate against an OpenSSH allowed-signers file (the
//! file `git` and `ssh-keygen -Y verify` read: `principals [options] keytype key`, with `namespaces=`,
//! `valid-after=` and `valid-before=`), at the commit's own time, as `git verify-commit` does.

use ssh_key::{HashAlg, PublicKey, SshSig};

/// One line of an allowed-signers file.
#[derive(Debug, Clone)]
struct Entry {
    principals: Vec<String>,
    key: PublicKey,
    namespaces: Option<Vec<String>>,
    valid_after: Option<i64>,
    valid_before: Option<i64>,
}

/// An allowed-signers file.
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    entries: Vec<Entry>,
}

/// What a commit's signature says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitCheck {
    /// Signed by an allowed signer whose key was valid at the commit's time.
    Verified { principal: String, fingerprint: String },
    /// A valid signature by a key the allowed signers do not list (for git's namespace).
    UnknownSigner { fingerprint: String },
    /// A valid signature by an allowed signer's key outside the time it is allowed.
    Expired {
        principal: String,
        fingerprint: String,
        why: String,
    },
    /// The signature does not hold over this commit (what it signs is not what was imported), or cannot be read.
    Invalid { why: String },
    /// An OpenPGP signature: this build checks SSH signatures only.
    OpenPgp,
}

impl AllowedSigners {
    /// Parses an allowed-signers file; a line that cannot be read is an error that names it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| format!("allowed signers, line {}: {why}", n + 1);
            let mut words = split_words(line).into_iter();
            let principals: Vec<String> = words
                .next()
                .ok_or_else(|| bad("no principal"))?
                .split(',')
                .map(str::to_owned)
                .collect();
            let mut rest: Vec<String> = words.collect();
            let mut options = Vec::new();
            // Options come before the key type.
            while rest.first().is_some_and(|w| !is_key_type(w)) {
                options.extend(split_options(&rest.remove(0)));
            }
            if rest.len() < 2 {
                return Err(bad("no key (expected `principals [options] keytype base64`)"));
            }
            let key = PublicKey::from_openssh(&format!("{} {}", rest[0], rest[1]))
                .map_err(|e| bad(&format!("the key cannot be read: {e}")))?;
            let mut entry = Entry {
                principals,
                key,
                namespaces: None,
                valid_after: None,
                valid_before: None,
            };
            for option in options {
                let (name, value) = option.split_once('=').unwrap_or((option.as_str(), ""));
                let value = value.trim_matches('"');
                match name.to_ascii_lowercase().as_str() {
                    "namespaces" => entry.namespaces = Some(value.split(',').map(str::to_owned).collect()),
                    "valid-after" => entry.valid_after = Some(parse_time(value).map_err(|e| bad(&e))?),
                    "valid-before" => entry.valid_before = Some(parse_time(value).map_err(|e| bad(&e))?),
                    "cert-authority" => return Err(bad("certificate authorities are not supported")),
                    other => return Err(bad(&format!("unknown option `{other}`"))),
                }
            }
            entries.push(entry);
        }
        Ok(Self { entries })
    }
}

fn is_key_type(word: &str) -> bool {
    word.starts_with("ssh-") || word.starts_with("ecdsa-") || word.starts_with("sk-")
}

/// Words of a line, a double-quoted stretch kept whole (`namespaces="git,file"`).
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                word.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Options separated by commas, a double-quoted value kept whole (`namespaces="git,file",valid-before="2030"`).
fn split_options(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut option = String::new();
    let mut quoted = false;
    for c in word.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut option)),
            c => option.push(c),
        }
    }
    out.push(option);
    out.retain(|o| !o.is_empty());
    out
}

/// `YYYYMMDD[HHMM[SS]][Z]` as seconds since the epoch (read as UTC, `Z` or not).
fn parse_time(text: &str) -> Result<i64, String> {
    let digits = text.trim_end_matches(['Z', 'z']);
    let bad = || format!("`{text}` is not a time (YYYYMMDD[HHMM[SS]][Z])");
    if !digits.bytes().all(|b| b.is_ascii_digit()) || ![8, 12, 14].contains(&digits.len()) {
        return Err(bad());
    }
    let n = |a: usize, b: usize| digits.get(a..b).and_then(|s| s.parse::<u32>().ok()).unwrap_or(0);
    let month = time::Month::try_from(u8::try_from(n(4, 6)).map_err(|_| bad())?).map_err(|_| bad())?;
    let date = time::Date::from_calendar_date(
        i32::try_from(n(0, 4)).map_err(|_| bad())?,
        month,
        u8::try_from(n(6, 8)).map_err(|_| bad())?,
    )
    .map_err(|_| bad())?;
    let hms = |v: u32| u8::try_from(v).map_err(|_| bad());
    let at = time::Time::from_hms(hms(n(8, 10))?, hms(n(10, 12))?, hms(n(12, 14))?).map_err(|_| bad())?;
    Ok(time::PrimitiveDateTime::new(date, at)
        .assume_utc()
        .unix_timestamp())
}

/// Checks a commit's signature: `armored` as git stores it, `signed` the commit object without it, `time` the
/// committer's time.
pub fn check_commit(armored: &str, signed: &[u8], time: i64, allowed: &AllowedSigners) -> CommitCheck {
    if armored.contains("BEGIN PGP SIGNATURE") {
        return CommitCheck::OpenPgp;
    }
    let sig = match SshSig::from_pem(armored.trim()) {
        Ok(s) => s,
        Err(e) => {
            return CommitCheck::Invalid {
                why: format!("the signature cannot be read: {e}"),
            }
        }
    };
    if sig.namespace() != "git" {
        return CommitCheck::Invalid {
            why: format!("the signature is for `{}`, not for git", sig.namespace()),
        };
    }
    let key = PublicKey::from(sig.public_key().clone());
    let fingerprint = key.fingerprint(HashAlg::Sha256).to_string();
    if let Err(e) = key.verify("git", signed, &sig) {
        return CommitCheck::Invalid {
            why: format!("the signature by {fingerprint} does not hold over this commit: {e}"),
        };
    }
    let listed: Vec<&Entry> = allowed
        .entries
        .iter()
        .filter(|e| e.key.key_data() == key.key_data())
        .filter(|e| {
            e.namespaces
                .as_ref()
                .is_none_or(|ns| ns.iter().any(|n| n == "git"))
        })
        .collect();
    let Some(first) = listed.first() else {
        return CommitCheck::UnknownSigner { fingerprint };
    };
    match listed
        .iter()
        .find(|e| e.valid_after.is_none_or(|a| time >= a) && e.valid_before.is_none_or(|b| time < b))
    {
        Some(e) => CommitCheck::Verified {
            principal: e.principals.join(","),
            fingerprint,
        },
        None => CommitCheck::Expired {
            principal: first.principals.join(","),
            fingerprint,
            why: format!(
                "the key is allowed {}{}, and the commit is dated {}",
                first
                    .valid_after
                    .map(|a| format!("from {}", date(a)))
                    .unwrap_or_default(),
                first
                    .valid_before
                    .map(|b| format!(" until {}", date(b)))
                    .unwrap_or_default(),
                date(time)
            ),
        },
    }
}

/// The key that signed a commit, when its SSH signature holds over it (namespace `git`): its SHA-256
/// fingerprint. Whose key it is, and whether it is trusted, is for the caller (an allowed-signers file, a trust
/// decision naming the key).
pub fn signing_key(armored: &str, signed: &[u8]) -> Option<String> {
    let sig = SshSig::from_pem(armored.trim()).ok()?;
    if sig.namespace() != "git" {
        return None;
    }
    let key = PublicKey::from(sig.public_key().clone());
    key.verify("git", signed, &sig).ok()?;
    Some(key.fingerprint(HashAlg::Sha256).to_string())
}

fn date(t: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(t)
        .map(|d| d.date().to_string())
        .unwrap_or_else(|_| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_signers_lines_are_read_with_their_options() {
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGv0gr9WlrW2Z+f0lzUhuY3Ve3lc6d7FwEz0cQzLRwDx";
        let text = format!(
            "# a comment\nalice@example.com {key} alice\nbob,carol namespaces=\"git,file\",valid-before=\"20200101Z\" {key}\n"
        );
        let signers = AllowedSigners::parse(&text).unwrap();
        assert_eq!(signers.entries.len(), 2);
        assert_eq!(signers.entries[1].principals, ["bob", "carol"]);
        assert_eq!(signers.entries[1].valid_before, Some(1_577_836_800));
        assert!(AllowedSigners::parse("alice ssh-ed25519 notbase64").is_err());
        assert!(AllowedSigners::parse(&format!("alice cert-authority {key}")).is_err());
        assert_eq!(parse_time("202001021230"), Ok(1_577_968_200));
        assert!(parse_time("2020-01-01").is_err());
    }
}
