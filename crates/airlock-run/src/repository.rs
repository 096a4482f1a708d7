//! The target as a git repository. A target is copied without its `.git` (its history never reaches a skill), so a
//! skill that works on a repository (`git diff`, `git log`, a script that runs `git` with `--base main`) would meet
//! a plain folder. When the skill uses git, the run's copy of the target is made a repository of its own: one
//! commit of the files as they are, on `main`. Its internals are not the skill's changes; what a skill writes there
//! that runs later (a hook, the repository's settings) still is.

use std::path::Path;
use std::process::Command;

use regex::Regex;
use std::sync::LazyLock;

static USES_GIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?m)(?:^|[\s;&|(`'"\[])git\s+[a-z]|['"]git['"]\s*[,\]]|\bGitPython\b|\bimport\s+git\b|\bpygit2\b|simple-git|isomorphic-git"#)
        .ok()
});

/// Whether the commands the run will start, or the skill's scripts, use git (read until one does).
pub(crate) fn uses_git<T: AsRef<str>>(texts: impl IntoIterator<Item = T>) -> bool {
    let Some(re) = USES_GIT.as_ref() else {
        return false;
    };
    texts.into_iter().any(|t| re.is_match(t.as_ref()))
}

/// Makes `dir` a git repository with one commit of its files on `main`, owned by `owner` when given, with `origin`
/// as its remote when given (a detonation's project looks like one that is pushed somewhere: a skill that acts only
/// in such a project acts there too). The host's git runs with none of the user's or the system's settings and no
/// hooks. `false` when git is not on this machine or any step fails (the run goes on with a plain folder).
pub(crate) fn scaffold(dir: &Path, owner: Option<u32>, origin: Option<&str>) -> bool {
    if dir.join(".git").exists() {
        return false;
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "user.name=airlock",
                "-c",
                "user.email=airlock@localhost",
                "-c",
                "init.defaultBranch=main",
                // The copy may belong to the sandbox's user (a root run), not to the one running git here.
                "-c",
                "safe.directory=*",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    // Commits the skill makes need an author: the sandbox's, named in the repository's own settings.
    let made = git(&["init", "-q"])
        && git(&["config", "user.name", "airlock sandbox"])
        && git(&["config", "user.email", "sandbox@airlock.invalid"])
        && git(&["add", "-A"])
        && git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "The target as the run started",
        ])
        && origin.is_none_or(|url| git(&["remote", "add", "origin", url]));
    if !made {
        let _ = fs_err::remove_dir_all(dir.join(".git"));
        return false;
    }
    if let Some(uid) = owner {
        if chown_tree(&dir.join(".git"), uid).is_err() {
            let _ = fs_err::remove_dir_all(dir.join(".git"));
            return false;
        }
    }
    true
}

fn chown_tree(path: &Path, uid: u32) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid))?;
    if fs_err::symlink_metadata(path)?.is_dir() {
        for entry in fs_err::read_dir(path)? {
            chown_tree(&entry?.path(), uid)?;
        }
    }
    Ok(())
}

/// Whether a change in the scaffolded repository's `.git` is its bookkeeping (objects, the index, refs, logs), which
/// is not the skill's work on the project; a hook, the settings and anything else that acts later is kept.
pub(crate) fn bookkeeping(path: &str) -> bool {
    let Some(inside) = path.strip_prefix(".git/") else {
        return false;
    };
    let first = inside.split('/').next().unwrap_or_default();
    matches!(
        first,
        "objects"
            | "refs"
            | "logs"
            | "index"
            | "HEAD"
            | "ORIG_HEAD"
            | "FETCH_HEAD"
            | "COMMIT_EDITMSG"
            | "packed-refs"
            | "index.lock"
            | "AUTO_MERGE"
            | "MERGE_HEAD"
            | "MERGE_MSG"
            | "REBASE_HEAD"
            | "description"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_runs_use_git() {
        assert!(uses_git(["git diff --cached"]));
        assert!(uses_git(["echo x && git log --oneline"]));
        assert!(uses_git(["subprocess.run([\"git\", \"rev-parse\"])"]));
        assert!(uses_git(["import git\nrepo = git.Repo('.')"]));
        assert!(!uses_git(["echo digit value", "pip install gitpython-docs"]));
    }

    #[test]
    fn bookkeeping_is_not_the_skills_work_but_hooks_are() {
        assert!(bookkeeping(".git/objects/ab/cdef"));
        assert!(bookkeeping(".git/index"));
        assert!(bookkeeping(".git/refs/heads/main"));
        assert!(!bookkeeping(".git/hooks/pre-commit"));
        assert!(!bookkeeping(".git/config"));
        assert!(!bookkeeping("src/app.js"));
    }

    #[test]
    fn a_folder_becomes_a_repository_of_one_commit() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("a.txt"), "a\n").unwrap();
        assert!(scaffold(dir.path(), None, None));
        let log = Command::new("git")
            .args(["log", "--oneline", "main"])
            .current_dir(dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&log.stdout).contains("The target as the run started"));
        // Never over a repository that is there.
        assert!(!scaffold(dir.path(), None, None));
        // A detonation's copy has a remote.
        let other = tempfile::tempdir().unwrap();
        assert!(scaffold(
            other.path(),
            None,
            Some("https://github.com/acme-labs/webapp.git")
        ));
        let url = Command::new("git")
            .args(["remote", "get-url", "origin"])
            .current_dir(other.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&url.stdout).trim(),
            "https://github.com/acme-labs/webapp.git"
        );
    }
}
