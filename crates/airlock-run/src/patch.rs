//! The run's changes as a git-style unified diff that `git apply` accepts on the original target: text files with
//! modes, new and deleted files, symbolic links as git writes them. Binary files are left out and listed.

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use airlock_types::{Change, ChangeKind};

/// (content, git mode) of a file as the patch sees it; `None` when it is binary.
fn read(path: &Path) -> std::io::Result<Option<(String, &'static str)>> {
    let meta = fs_err::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        let target = fs_err::read_link(path)?;
        return Ok(target.to_str().map(|t| (t.to_owned(), "120000")));
    }
    let bytes = fs_err::read(path)?;
    if bytes.contains(&0) {
        return Ok(None);
    }
    let mode = if meta.permissions().mode() & 0o111 != 0 {
        "100755"
    } else {
        "100644"
    };
    Ok(String::from_utf8(bytes).ok().map(|s| (s, mode)))
}

/// Whether a path written by the sandbox can appear in a patch as is: no control characters, quotes or backslashes
/// (which would need git's quoting and could forge header lines), nothing absolute, no `..`, nothing in `.git`.
fn safe_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.chars().any(|c| c.is_control() || c == '"' || c == '\\')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && part != "." && part != ".git")
}

/// Builds the patch from the original tree (`lower`) and the copies of changed files (`kept`).
pub fn unified(lower: &Path, kept: &Path, changes: &[Change]) -> std::io::Result<(String, Vec<String>)> {
    let mut out = String::new();
    let mut skipped = Vec::new();
    for c in changes {
        if !safe_path(&c.path) {
            skipped.push(c.path.clone());
            continue;
        }
        // Each side: `None` where the file does not exist, `Err` where it is binary (left out).
        let side = |root: &Path, exists: bool| -> std::io::Result<Result<Option<(String, &str)>, ()>> {
            if !exists {
                return Ok(Ok(None));
            }
            Ok(read(&root.join(&c.path))?.map(Some).ok_or(()))
        };
        let (Ok(old), Ok(new)) = (
            side(lower, c.kind != ChangeKind::Added)?,
            side(kept, c.kind != ChangeKind::Deleted)?,
        ) else {
            skipped.push(c.path.clone());
            continue;
        };
        let p = &c.path;
        let _ = writeln!(out, "diff --git a/{p} b/{p}");
        match (&old, &new) {
            (None, Some((_, mode))) => {
                let _ = writeln!(out, "new file mode {mode}");
            }
            (Some((_, mode)), None) => {
                let _ = writeln!(out, "deleted file mode {mode}");
            }
            (Some((_, m1)), Some((_, m2))) if m1 != m2 => {
                let _ = writeln!(out, "old mode {m1}\nnew mode {m2}");
            }
            _ => {}
        }
        let (old_text, new_text) = (
            old.as_ref().map_or("", |(t, _)| t.as_str()),
            new.as_ref().map_or("", |(t, _)| t.as_str()),
        );
        if old_text == new_text {
            continue;
        }
        let _ = writeln!(
            out,
            "--- {}",
            if old.is_some() {
                format!("a/{p}")
            } else {
                "/dev/null".into()
            }
        );
        let _ = writeln!(
            out,
            "+++ {}",
            if new.is_some() {
                format!("b/{p}")
            } else {
                "/dev/null".into()
            }
        );
        let diff = similar::TextDiff::from_lines(old_text, new_text);
        for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
            let _ = write!(out, "{hunk}");
        }
    }
    Ok((out, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_could_forge_a_patch_are_left_out() {
        for bad in [
            "a\n+++ b/x",
            ".git/hooks/pre-commit",
            "../x",
            "/etc/passwd",
            "a\"b",
            "a\\b",
            "a//b",
            "x\ty",
        ] {
            assert!(!safe_path(bad), "{bad:?}");
        }
        for good in ["src/App.jsx", "with space.txt", "a/.gitignore", "ünïcode.md"] {
            assert!(safe_path(good), "{good:?}");
        }
    }
}
