use std::fmt;
use std::path::{Path, PathBuf};

use crate::SourceError;

/// A URL whose credentials (user info, tokens in the query) are hidden when it is printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedactedUrl(String);

impl RedactedUrl {
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The URL with credentials, for handing to the fetcher only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

/// Hides `user:password@` in a URL and the values of query parameters.
pub(crate) fn redact(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        let host_end = out[rest_start..].find('/').map_or(out.len(), |i| rest_start + i);
        if let Some(at) = out[rest_start..host_end].rfind('@') {
            out.replace_range(rest_start..rest_start + at, "***");
        }
    }
    if let Some(q) = out.find('?') {
        out.truncate(q);
        out.push_str("?***");
    }
    out
}

/// A GitHub repository and what in it the URL pointed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubTarget {
    pub owner: String,
    pub repo: String,
    /// What followed `tree/`, `blob/` or `commit/`: a ref or sha, maybe followed by a path. Split later against
    /// the real refs, because branch names may hold slashes.
    pub rest: Option<String>,
    /// The URL named a commit page (`/commit/<sha>`).
    pub commit_page: bool,
    /// The URL named a file (`/blob/...`): its folder is the skill.
    pub file: bool,
}

/// What a user asked to import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    GitHub(GitHubTarget),
    /// Any other git URL; `reference` and `subpath` come from a `#ref:path` fragment.
    Git {
        url: RedactedUrl,
        reference: Option<String>,
        subpath: String,
    },
    Folder(PathBuf),
    Archive(PathBuf),
}

const ARCHIVE_SUFFIXES: [&str; 5] = [".zip", ".skill", ".tar.gz", ".tgz", ".tar"];

fn bad(input: &str, reason: impl Into<String>) -> SourceError {
    SourceError::BadInput {
        input: redact(input),
        reason: reason.into(),
    }
}

fn valid_name(part: &str) -> bool {
    !part.is_empty()
        && part != "."
        && part != ".."
        && part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl SourceSpec {
    /// Parses a source as typed by a user.
    pub fn parse(input: &str) -> Result<Self, SourceError> {
        let text = input.trim();
        if text.is_empty() {
            return Err(bad(input, "it is empty"));
        }
        if text.chars().any(char::is_control) {
            return Err(bad(input, "it contains control characters"));
        }
        if let Some(rest) = text.strip_prefix("git@github.com:") {
            return parse_github_path(input, rest.trim_end_matches(".git"));
        }
        for prefix in [
            "https://github.com/",
            "http://github.com/",
            "https://www.github.com/",
            "github.com/",
        ] {
            if let Some(rest) = text.strip_prefix(prefix) {
                return parse_github_path(input, rest);
            }
        }
        if text.starts_with("https://")
            || text.starts_with("http://")
            || text.starts_with("ssh://")
            || text.starts_with("git://")
            || text.starts_with("file://")
            || (text.contains('@') && text.contains(':') && !Path::new(text).exists())
        {
            let (url, fragment) = match text.split_once('#') {
                Some((u, f)) => (u, Some(f)),
                None => (text, None),
            };
            let (reference, subpath) = match fragment {
                Some(f) => match f.split_once(':') {
                    Some((r, p)) => (non_empty(r), clean_subpath(input, p)?),
                    None => (non_empty(f), String::new()),
                },
                None => (None, String::new()),
            };
            if text.starts_with("http") && url.split('/').nth(2).is_none_or(str::is_empty) {
                return Err(bad(input, "the URL has no host"));
            }
            return Ok(Self::Git {
                url: RedactedUrl::new(url),
                reference,
                subpath,
            });
        }
        if text.contains("://") {
            return Err(bad(
                input,
                "unsupported URL scheme: use https://, ssh://, git://, file:// or a path",
            ));
        }
        let path = PathBuf::from(text);
        let lower = text.to_ascii_lowercase();
        if ARCHIVE_SUFFIXES.iter().any(|s| lower.ends_with(s)) && !path.is_dir() {
            if !path.exists() {
                return Err(SourceError::NotFound { path });
            }
            return Ok(Self::Archive(path));
        }
        if path.is_dir() {
            return Ok(Self::Folder(path));
        }
        if path.file_name().is_some_and(|n| n == "SKILL.md") && path.is_file() {
            let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
            return Ok(Self::Folder(if parent.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                parent
            }));
        }
        if path.exists() {
            return Err(bad(
                input,
                "it is a file but not an archive (.zip, .tar.gz, .tgz, .tar, .skill)",
            ));
        }
        Err(SourceError::NotFound { path })
    }

    /// Like [`parse`](Self::parse), and URLs under `github_base` (a GitHub Enterprise host) are GitHub URLs too.
    pub fn parse_with_github_base(input: &str, github_base: &str) -> Result<Self, SourceError> {
        let base = github_base.trim_end_matches('/');
        let is_web = base.starts_with("https://") || base.starts_with("http://");
        if is_web && !base.ends_with("://github.com") {
            if let Some(rest) = input.trim().strip_prefix(&format!("{base}/")) {
                return parse_github_path(input, rest);
            }
        }
        Self::parse(input)
    }

    /// The input as it may be printed (credentials hidden).
    pub fn display_input(&self) -> String {
        match self {
            Self::GitHub(t) => {
                let mut s = format!("https://github.com/{}/{}", t.owner, t.repo);
                if let Some(rest) = &t.rest {
                    let kind = if t.commit_page {
                        "commit"
                    } else if t.file {
                        "blob"
                    } else {
                        "tree"
                    };
                    s.push_str(&format!("/{kind}/{rest}"));
                }
                s
            }
            Self::Git {
                url,
                reference,
                subpath,
            } => {
                let mut s = url.to_string();
                if let Some(r) = reference {
                    s.push('#');
                    s.push_str(r);
                    if !subpath.is_empty() {
                        s.push(':');
                        s.push_str(subpath);
                    }
                }
                s
            }
            Self::Folder(p) | Self::Archive(p) => p.display().to_string(),
        }
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

/// Checks a subpath from a URL: relative, no `..`, no empty or `.git` components.
pub(crate) fn clean_subpath(input: &str, raw: &str) -> Result<String, SourceError> {
    let trimmed = raw.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        if part.is_empty() || part == "." {
            continue;
        }
        if part == ".." || part.eq_ignore_ascii_case(".git") || part.contains('\0') {
            return Err(bad(
                input,
                format!("the path `{raw}` may not contain `..` or `.git`"),
            ));
        }
        parts.push(part);
    }
    Ok(parts.join("/"))
}

fn parse_github_path(input: &str, rest: &str) -> Result<SourceSpec, SourceError> {
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let mut parts = rest.trim_end_matches('/').splitn(4, '/');
    let owner = parts.next().unwrap_or_default();
    let repo = parts.next().unwrap_or_default().trim_end_matches(".git");
    if !valid_name(owner) || !valid_name(repo) {
        return Err(bad(
            input,
            "a GitHub URL needs an owner and a repository: https://github.com/OWNER/REPO",
        ));
    }
    let kind = parts.next();
    let tail = parts
        .next()
        .map(|t| t.trim_matches('/').to_owned())
        .filter(|t| !t.is_empty());
    let target = |rest: Option<String>, commit_page, file| GitHubTarget {
        owner: owner.to_owned(),
        repo: repo.to_owned(),
        rest,
        commit_page,
        file,
    };
    match (kind, tail) {
        (None, _) => Ok(SourceSpec::GitHub(target(None, false, false))),
        (Some("tree"), Some(t)) => {
            clean_subpath(input, &t)?;
            Ok(SourceSpec::GitHub(target(Some(t), false, false)))
        }
        (Some("blob"), Some(t)) => {
            clean_subpath(input, &t)?;
            Ok(SourceSpec::GitHub(target(Some(t), false, true)))
        }
        (Some("commit" | "commits"), Some(t)) if airlock_types::CommitSha::looks_like_sha(&t) => {
            Ok(SourceSpec::GitHub(target(Some(t), true, false)))
        }
        (Some(other), _) => Err(bad(
            input,
            format!(
                "`{other}` pages are not supported: use the repository, a /tree/, /blob/ or /commit/ URL"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gh(input: &str) -> GitHubTarget {
        match SourceSpec::parse(input).unwrap() {
            SourceSpec::GitHub(t) => t,
            other => panic!("not github: {other:?}"),
        }
    }

    #[test]
    fn github_forms() {
        assert_eq!(gh("https://github.com/o/r").rest, None);
        assert_eq!(gh("github.com/o/r/").repo, "r");
        assert_eq!(gh("git@github.com:o/r.git").repo, "r");
        assert_eq!(gh("https://github.com/o/r.git").repo, "r");
        let t = gh("https://github.com/o/r/tree/main/skills/pdf");
        assert_eq!(t.rest.as_deref(), Some("main/skills/pdf"));
        let t = gh("https://github.com/o/r/blob/main/skills/pdf/SKILL.md");
        assert!(t.file);
        let t = gh("https://github.com/o/r/commit/0123456789abcdef0123456789abcdef01234567");
        assert!(t.commit_page);
    }

    #[test]
    fn rejects_malformed() {
        for input in [
            "",
            "https://github.com/",
            "https://github.com/o",
            "https://github.com/o/r/issues/3",
            "https://github.com/o/r/tree/main/../../etc",
            "ftp://x/y",
            "https://",
            "github.com/o/r\u{1b}[31m",
        ] {
            assert!(SourceSpec::parse(input).is_err(), "{input:?} should be rejected");
        }
    }

    #[test]
    fn git_urls_and_redaction() {
        let spec = SourceSpec::parse("https://user:tok@example.com/a/b.git#v1:skills/x").unwrap();
        assert_eq!(
            spec.display_input(),
            "https://***@example.com/a/b.git#v1:skills/x"
        );
        match spec {
            SourceSpec::Git {
                reference, subpath, ..
            } => {
                assert_eq!(reference.as_deref(), Some("v1"));
                assert_eq!(subpath, "skills/x");
            }
            other => panic!("{other:?}"),
        }
    }
}
