//! The run's changes as a git-style unified diff that `git apply` accepts on the original target, and the changes
//! a person should look at before applying it.
//!
//! The patch always applies: text files with modes, new and deleted files and symbolic links are written as git
//! writes them (a file turned into a link, or a folder into a file, as a deletion and an addition), binary files up
//! to [`MAX_BINARY_BYTES`] as git binary patches; larger binaries, files too large to diff, and paths git refuses to check out (`.git` in any case or with trailing dots or spaces,
//! `git~1`, characters that need quoting) are left out, each with its reason. The work is bounded: a side larger
//! than [`MAX_FILE_BYTES`] or [`MAX_FILE_LINES`] is not diffed, and the line diff stops looking for the shortest edit
//! script at a deadline (the patch stays correct, only less minimal).

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use airlock_types::{Change, ChangeKind, PatchSkip, ReviewItem};

/// A file larger than this (before or after) is left out of the patch; its copy is still an artifact of the run.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// A file with more lines than this (before or after) is left out of the patch.
pub const MAX_FILE_LINES: usize = 100_000;
/// Bytes of text the whole patch diffs at most; changes beyond are left out with a note.
pub const MAX_TOTAL_BYTES: u64 = 64 << 20;
/// Time the line diff of one file may spend looking for the smallest diff.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);
/// Time all the line diffs of a patch may spend looking for the smallest diffs.
const TOTAL_DEADLINE: Duration = Duration::from_secs(10);

/// A binary file larger than this (before or after) is left out of the patch; smaller ones go in as git binary
/// patches.
pub const MAX_BINARY_BYTES: u64 = 1 << 20;

/// One side of a change as the patch sees it.
enum Side {
    Missing,
    Text { text: String, mode: &'static str },
    Binary { bytes: Vec<u8>, mode: &'static str },
    Left(String),
}

impl Side {
    fn mode(&self) -> Option<&'static str> {
        match self {
            Self::Text { mode, .. } | Self::Binary { mode, .. } => Some(mode),
            _ => None,
        }
    }

    fn size(&self) -> u64 {
        match self {
            Self::Text { text, .. } => text.len() as u64,
            Self::Binary { bytes, .. } => bytes.len() as u64,
            _ => 0,
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Self::Text { text, .. } => text.as_bytes(),
            Self::Binary { bytes, .. } => bytes,
            _ => &[],
        }
    }
}

fn read(path: &Path) -> std::io::Result<Side> {
    let meta = match fs_err::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Side::Missing),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        let target = fs_err::read_link(path)?;
        return Ok(match target.to_str() {
            Some(t) if !t.contains('\n') => Side::Text {
                text: t.to_owned(),
                mode: "120000",
            },
            _ => Side::Left("a link whose target is not one line of text".into()),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Ok(Side::Left(format!(
            "too large to diff ({} bytes, the limit is {MAX_FILE_BYTES}); the file is kept as an artifact",
            meta.len()
        )));
    }
    let mode = if meta.permissions().mode() & 0o111 != 0 {
        "100755"
    } else {
        "100644"
    };
    let bytes = fs_err::read(path)?;
    let binary = |bytes: Vec<u8>| {
        if bytes.len() as u64 > MAX_BINARY_BYTES {
            Side::Left(format!(
                "binary and larger than {MAX_BINARY_BYTES} bytes ({}); the file is kept as an artifact",
                bytes.len()
            ))
        } else {
            Side::Binary { bytes, mode }
        }
    };
    if bytes.contains(&0) {
        return Ok(binary(bytes));
    }
    let lines = bytecount(&bytes);
    if lines > MAX_FILE_LINES {
        return Ok(Side::Left(format!(
            "too many lines to diff ({lines}, the limit is {MAX_FILE_LINES}); the file is kept as an artifact"
        )));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Side::Text { text, mode },
        Err(e) => binary(e.into_bytes()),
    })
}

fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

/// Why git would refuse a path from a patch or a checkout, if it would: `.git` as a component in any case, with
/// trailing dots or spaces, or with characters HFS+ ignores; NTFS's `git~1`; characters that need git's quoting
/// (which could also forge header lines); absolute paths and `..`.
pub fn refused(path: &str) -> Option<&'static str> {
    if path.is_empty() || path.starts_with('/') {
        return Some("not a relative path");
    }
    if path.chars().any(|c| c.is_control() || c == '"' || c == '\\') {
        return Some("its name has characters git quotes (control characters, quotes or backslashes)");
    }
    for part in path.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Some("it has an empty, `.` or `..` component");
        }
        let folded: String = part
            .chars()
            .filter(|c| !hfs_ignored(*c))
            .collect::<String>()
            .to_lowercase();
        let bare = folded.trim_end_matches([' ', '.']);
        let stream = bare.split(':').next().unwrap_or(bare);
        if bare == ".git" || stream == ".git" || bare == "git~1" {
            return Some("git refuses paths inside a `.git` folder (in any spelling)");
        }
    }
    None
}

/// Code points that HFS+ ignores in names, which git also ignores when it protects `.git`.
fn hfs_ignored(c: char) -> bool {
    matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}

/// The reason a new symbolic link is left out of the patch: it points outside the target.
pub const LINK_OUTSIDE: &str = "a symbolic link that points outside the target";

/// Whether a link at `path` (relative to the target's root) with this target points outside the root: an absolute
/// target, or one whose `..` climb above the root.
pub fn link_escapes(path: &str, target: &str) -> bool {
    if target.starts_with('/') {
        return true;
    }
    let mut depth = path
        .split('/')
        .filter(|c| !c.is_empty())
        .count()
        .saturating_sub(1) as i64;
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return true;
                }
            }
            _ => depth += 1,
        }
    }
    false
}

/// The run's changes as patches.
#[derive(Debug, Default)]
pub struct Patch {
    /// What `git apply` takes on the original target.
    pub text: String,
    /// The changes left out of `text`, with why.
    pub skipped: Vec<PatchSkip>,
    /// The diffs of the new symbolic links that point outside the target, left out of `text` (and named in
    /// `skipped`): `text` followed by these is the whole patch.
    pub links_outside: String,
}

/// Builds the patch from the original tree (`lower`) and the copies of changed files (`kept`), with the changes it
/// leaves out. Each change is read and diffed once.
pub fn unified(lower: &Path, kept: &Path, changes: &[Change]) -> std::io::Result<Patch> {
    let mut out = String::new();
    let mut links_outside = String::new();
    let mut skipped = Vec::new();
    let mut skip = |path: &str, reason: String| {
        skipped.push(PatchSkip {
            path: path.to_owned(),
            reason,
        });
    };
    // Deletions first: a folder's files must be gone before a file of the folder's name is added.
    let mut ordered: Vec<&Change> = changes.iter().filter(|c| c.kind == ChangeKind::Deleted).collect();
    ordered.extend(changes.iter().filter(|c| c.kind != ChangeKind::Deleted));
    let (mut budget, end) = (MAX_TOTAL_BYTES, Instant::now() + TOTAL_DEADLINE);
    for c in ordered {
        if let Some(reason) = refused(&c.path) {
            skip(&c.path, reason.into());
            continue;
        }
        let old = if c.kind == ChangeKind::Added {
            Side::Missing
        } else {
            read(&lower.join(&c.path))?
        };
        let new = if c.kind == ChangeKind::Deleted {
            Side::Missing
        } else {
            read(&kept.join(&c.path))?
        };
        let escaping = match &new {
            Side::Text { text, mode: "120000" } if link_escapes(&c.path, text) => Some(format!(
                "{LINK_OUTSIDE} (`{}`); export --include-symlinks puts it back",
                text.chars().take(200).collect::<String>()
            )),
            _ => None,
        };
        let size = old.size() + new.size();
        if size > budget {
            skip(
                &c.path,
                format!("the patch's budget of {MAX_TOTAL_BYTES} bytes of text is spent; the file is kept as an artifact"),
            );
            continue;
        }
        budget -= size;
        let deadline = end.min(Instant::now() + DIFF_DEADLINE);
        match (old, new) {
            (Side::Left(reason), _) | (_, Side::Left(reason)) => skip(&c.path, reason),
            (Side::Missing, Side::Missing) => {}
            (old, new) => {
                let dest = match escaping {
                    Some(reason) => {
                        skip(&c.path, reason);
                        &mut links_outside
                    }
                    None => &mut out,
                };
                // git applies a change of type (file and link) only as a deletion and an addition.
                let type_change = matches!((old.mode(), new.mode()), (Some(a), Some(b))
                    if (a == "120000") != (b == "120000"));
                if type_change {
                    write_diff(dest, &c.path, &old, &Side::Missing, deadline);
                    write_diff(dest, &c.path, &Side::Missing, &new, deadline);
                } else {
                    write_diff(dest, &c.path, &old, &new, deadline);
                }
            }
        }
    }
    Ok(Patch {
        text: out,
        skipped,
        links_outside,
    })
}

/// git's base-85 alphabet for binary patches.
const BASE85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// The object id git gives a blob with these bytes.
fn blob_id(bytes: &[u8]) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()));
    h.update(bytes);
    format!("{:x}", h.finalize())
}

/// One `literal` hunk of a git binary patch: the bytes deflated, in lines of up to 52 bytes in base 85, each led by
/// its length (`A`-`Z` for 1-26, `a`-`z` for 27-52), then an empty line.
fn write_literal(out: &mut String, bytes: &[u8]) {
    use std::io::Write as _;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = z.write_all(bytes);
    let deflated = z.finish().unwrap_or_default();
    let _ = writeln!(out, "literal {}", bytes.len());
    for chunk in deflated.chunks(52) {
        let n = chunk.len() as u8;
        out.push(char::from(if n <= 26 { b'A' + n - 1 } else { b'a' + n - 27 }));
        for group in chunk.chunks(4) {
            let mut word = [0u8; 4];
            word[..group.len()].copy_from_slice(group);
            let mut acc = u32::from_be_bytes(word);
            let mut five = [0u8; 5];
            for c in five.iter_mut().rev() {
                *c = BASE85[(acc % 85) as usize];
                acc /= 85;
            }
            out.extend(five.iter().map(|b| char::from(*b)));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// A change with a binary side, as a git binary patch (the new content, then the old, each whole).
fn write_binary(out: &mut String, p: &str, old: &Side, new: &Side) {
    let zero = "0".repeat(40);
    let id = |s: &Side| match s {
        Side::Missing => zero.clone(),
        other => blob_id(other.bytes()),
    };
    let _ = writeln!(out, "diff --git a/{p} b/{p}");
    match (old.mode(), new.mode()) {
        (None, Some(m)) => {
            let _ = writeln!(out, "new file mode {m}");
        }
        (Some(m), None) => {
            let _ = writeln!(out, "deleted file mode {m}");
        }
        (Some(a), Some(b)) if a != b => {
            let _ = writeln!(out, "old mode {a}\nnew mode {b}");
        }
        _ => {}
    }
    let _ = writeln!(out, "index {}..{}", id(old), id(new));
    out.push_str("GIT binary patch\n");
    write_literal(out, new.bytes());
    write_literal(out, old.bytes());
}

fn write_diff(out: &mut String, p: &str, old: &Side, new: &Side, deadline: Instant) {
    if matches!(old, Side::Binary { .. }) || matches!(new, Side::Binary { .. }) {
        return write_binary(out, p, old, new);
    }
    let (old_text, old_mode) = match old {
        Side::Text { text, mode } => (Some(text.as_str()), *mode),
        _ => (None, ""),
    };
    let (new_text, new_mode) = match new {
        Side::Text { text, mode } => (Some(text.as_str()), *mode),
        _ => (None, ""),
    };
    let _ = writeln!(out, "diff --git a/{p} b/{p}");
    match (old_text, new_text) {
        (None, Some(_)) => {
            let _ = writeln!(out, "new file mode {new_mode}");
        }
        (Some(_), None) => {
            let _ = writeln!(out, "deleted file mode {old_mode}");
        }
        (Some(_), Some(_)) if old_mode != new_mode => {
            let _ = writeln!(out, "old mode {old_mode}\nnew mode {new_mode}");
        }
        _ => {}
    }
    let (a, b) = (old_text.unwrap_or(""), new_text.unwrap_or(""));
    if a == b {
        return;
    }
    let _ = writeln!(
        out,
        "--- {}\n+++ {}",
        old_text.map_or("/dev/null".into(), |_| format!("a/{p}")),
        new_text.map_or("/dev/null".into(), |_| format!("b/{p}"))
    );
    let diff = similar::TextDiff::configure().deadline(deadline).diff_lines(a, b);
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        let _ = write!(out, "{hunk}");
    }
}

/// Changes that act on git or run later, to be read before the patch is applied: git hooks and hook managers,
/// `.gitattributes` (filters and diff drivers; it can also hide later changes from `git diff`), `.gitmodules`, CI
/// definitions, editor and environment files that run commands, `package.json` scripts, and new executable bits.
pub fn review(lower: &Path, kept: &Path, changes: &[Change]) -> Vec<ReviewItem> {
    let mut out = Vec::new();
    for c in changes {
        let mut add = |reason: String| {
            out.push(ReviewItem {
                path: c.path.clone(),
                reason,
            });
        };
        if let Some(reason) = acts_later(&c.path) {
            add(format!("{reason}; {}", wording(c.kind)));
        }
        if c.kind == ChangeKind::Deleted {
            continue;
        }
        let exec_after = c.mode_after.is_some_and(|m| m & 0o111 != 0) && c.file_type == "file";
        let exec_before = fs_err::symlink_metadata(lower.join(&c.path))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if exec_after && !exec_before {
            add(if c.kind == ChangeKind::Added {
                "a new executable file".into()
            } else {
                "made executable".into()
            });
        }
        if c.path == "package.json" || c.path.ends_with("/package.json") {
            let scripts = |root: &Path| -> Option<serde_json::Value> {
                let text = fs_err::read_to_string(root.join(&c.path)).ok()?;
                let v: serde_json::Value = serde_json::from_str(&text).ok()?;
                Some(v.get("scripts").cloned().unwrap_or(serde_json::Value::Null))
            };
            let before = if c.kind == ChangeKind::Added {
                Some(serde_json::Value::Null)
            } else {
                scripts(lower)
            };
            match (before, scripts(kept)) {
                (Some(a), Some(b)) if a != b => {
                    let names = |v: &serde_json::Value| -> Vec<(String, String)> {
                        v.as_object().map_or_else(Vec::new, |o| {
                            o.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
                        })
                    };
                    let (a, b) = (names(&a), names(&b));
                    let mut changed: Vec<String> = b
                        .iter()
                        .filter(|s| !a.contains(s))
                        .map(|(k, _)| k.clone())
                        .chain(
                            a.iter()
                                .filter(|(k, _)| !b.iter().any(|(k2, _)| k2 == k))
                                .map(|(k, _)| k.clone()),
                        )
                        .collect();
                    changed.sort();
                    changed.dedup();
                    add(format!("package.json scripts changed: {}", changed.join(", ")));
                }
                (Some(_), Some(_)) => {}
                _ => add("package.json changed and could not be read as JSON".into()),
            }
        }
    }
    // The ones that act soonest or most quietly first: the verdict names the first few.
    let rank = |r: &ReviewItem| {
        [
            "git's own folder",
            "a git hook",
            "hook manager",
            "CI",
            "package.json",
            "git attributes",
            "submodules",
        ]
        .iter()
        .position(|w| r.reason.contains(w))
        .unwrap_or(usize::MAX)
    };
    out.sort_by_key(rank);
    out
}

fn wording(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "added",
        ChangeKind::Modified => "modified",
        ChangeKind::Deleted => "deleted",
    }
}

/// Why a path acts on git or runs later, if it does.
fn acts_later(path: &str) -> Option<&'static str> {
    let lower = path.to_lowercase();
    let parts: Vec<&str> = lower.split('/').collect();
    let name = parts.last().copied().unwrap_or_default();
    let under = |dir: &str| parts[..parts.len().saturating_sub(1)].contains(&dir);
    Some(if refused(path).is_some_and(|r| r.contains(".git")) {
        "git's own folder, where hooks and config live; left out of the patch"
    } else if under(".husky") || under(".githooks") || under(".git-hooks") || under("git-hooks") {
        "a git hook"
    } else if matches!(
        name,
        ".pre-commit-config.yaml"
            | "lefthook.yml"
            | "lefthook.yaml"
            | ".lefthook.yml"
            | ".lintstagedrc"
            | ".huskyrc"
    ) {
        "a git hook manager's configuration"
    } else if name == ".gitattributes" {
        "git attributes: filters and diff drivers run commands, and can hide later changes from git diff"
    } else if name == ".gitmodules" {
        "git submodules: where git fetches code from"
    } else if lower.starts_with(".github/workflows/")
        || lower.starts_with(".github/actions/")
        || matches!(
            name,
            ".gitlab-ci.yml"
                | ".travis.yml"
                | "azure-pipelines.yml"
                | "jenkinsfile"
                | "bitbucket-pipelines.yml"
                | ".drone.yml"
        )
        || under(".circleci")
        || under(".buildkite")
    {
        "CI configuration: runs on the next push"
    } else if name == ".envrc" {
        "direnv runs it when a shell enters the folder"
    } else if name == "conftest.py" {
        "pytest runs it on every test run"
    } else if lower.starts_with(".vscode/") && (name == "tasks.json" || name == "settings.json")
        || lower.starts_with(".devcontainer/")
    {
        "editor configuration that can run commands when the folder opens"
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn binary_literals_are_written_as_git_writes_them() {
        let mut out = String::new();
        write_literal(&mut out, b"");
        // zlib's 8 bytes for nothing (git's own level writes `HcmV?d00001`; any valid stream applies).
        assert_eq!(out, "literal 0\nHc$@<O00001\n\n");
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(blob_id(b"hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
    }

    #[test]
    fn links_that_leave_the_root_are_told_apart() {
        for (path, target) in [
            ("a", "/etc/passwd"),
            ("a", "../x"),
            ("d/a", "../../x"),
            ("d/a", "e/../../../x"),
        ] {
            assert!(link_escapes(path, target), "{path} -> {target}");
        }
        for (path, target) in [
            ("a", "b"),
            ("d/a", "../b"),
            ("d/e/a", "../../b"),
            ("a", "./b/../c"),
        ] {
            assert!(!link_escapes(path, target), "{path} -> {target}");
        }
    }

    use super::*;

    #[test]
    fn paths_that_git_refuses_or_that_could_forge_a_patch_are_left_out() {
        for bad in [
            "a\n+++ b/x",
            ".git/hooks/pre-commit",
            ".GIT/hooks/pre-commit",
            ".git /config",
            ".git./config",
            "x/.Git/config",
            "GIT~1/config",
            ".g\u{200c}it/config",
            ".git::$INDEX_ALLOCATION/x",
            "../x",
            "/etc/passwd",
            "a\"b",
            "a\\b",
            "a//b",
            "x\ty",
        ] {
            assert!(refused(bad).is_some(), "{bad:?}");
        }
        for good in [
            "src/App.jsx",
            "with space.txt",
            "a/.gitignore",
            ".github/x",
            ".gitx/y",
            "ünïcode.md",
        ] {
            assert_eq!(refused(good), None, "{good:?}");
        }
    }

    #[test]
    fn hooks_ci_and_attributes_are_named() {
        assert!(acts_later(".husky/pre-commit").is_some());
        assert!(acts_later("sub/.gitattributes").is_some());
        assert!(acts_later(".gitmodules").is_some());
        assert!(acts_later(".github/workflows/ci.yml").is_some());
        assert!(acts_later("tests/conftest.py").is_some());
        assert!(acts_later(".GIT /hooks/x").is_some());
        assert_eq!(acts_later("src/husky.js"), None);
        assert_eq!(acts_later("README.md"), None);
    }
}
