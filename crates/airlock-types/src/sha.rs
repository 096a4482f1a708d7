use std::fmt;

use serde::{Deserialize, Serialize};

/// A full, lowercase, 40-hex-digit git commit id. Holding one means the source is pinned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CommitSha(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is not a full commit id: expected 40 hexadecimal digits")]
pub struct ParseShaError(pub String);

impl CommitSha {
    /// Parses a full commit id, accepting upper case and normalising it to lower case.
    pub fn parse(text: &str) -> Result<Self, ParseShaError> {
        if text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(Self(text.to_ascii_lowercase()))
        } else {
            Err(ParseShaError(text.to_owned()))
        }
    }

    /// Whether `text` looks like an abbreviated or full commit id (7 to 40 hex digits).
    pub fn looks_like_sha(text: &str) -> bool {
        (7..=40).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 digits, for display.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl TryFrom<String> for CommitSha {
    type Error = ParseShaError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<CommitSha> for String {
    fn from(value: CommitSha) -> Self {
        value.0
    }
}

impl fmt::Display for CommitSha {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_lowercases_full_ids_only() {
        let sha = CommitSha::parse("ABCDEF0123456789abcdef0123456789ABCDEF01").unwrap();
        assert_eq!(sha.as_str(), "abcdef0123456789abcdef0123456789abcdef01");
        assert!(CommitSha::parse("abc123").is_err());
        assert!(CommitSha::parse("g".repeat(40).as_str()).is_err());
        assert!(CommitSha::looks_like_sha("abc1234"));
        assert!(!CommitSha::looks_like_sha("main"));
    }
}
