//! Helpers: run the real `airlock` binary and build real git repositories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", self.stdout, self.stderr))
    }
}

pub fn airlock(data: &Path, args: &[&str]) -> Run {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(args)
        .env("AIRLOCK_DATA_DIR", data)
        .env("NO_COLOR", "1")
        .env_remove("AIRLOCK_GITHUB_BASE")
        // An install phase a test does not point elsewhere asks a loopback port where nothing listens, never a
        // registry off the machine.
        .env("AIRLOCK_PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
        .env("AIRLOCK_NPM_REGISTRY", "http://127.0.0.1:9/")
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

pub fn write(root: &Path, rel: &str, content: &str) {
    let path = root.join(rel);
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    fs_err::write(path, content).unwrap();
}

/// A repository with all its files committed; returns the commit id.
pub fn commit_all(repo: &Path, message: &str) -> String {
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", message]);
    git(repo, &["rev-parse", "HEAD"])
}

pub fn init_repo(path: &Path) -> PathBuf {
    fs_err::create_dir_all(path).unwrap();
    git(path, &["init", "-q"]);
    path.to_path_buf()
}

pub fn skill_md(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: Test skill {name}. Use it in tests.\n---\n\n{body}\n")
}

/// `field` of each element of a JSON array, as strings.
pub fn strings<'a>(list: &'a serde_json::Value, field: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| e[field].as_str().unwrap())
        .collect()
}

/// `(path, kind)` of each change in a run record.
pub fn changes(record: &serde_json::Value) -> Vec<(String, String)> {
    record["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_owned(),
                c["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Whether to run the binary as `nobody` (set by the unprivileged pass of `scripts/test`).
pub fn as_nobody() -> bool {
    std::env::var_os("AIRLOCK_TEST_AS_NOBODY").is_some()
}

/// A command that starts `airlock` as the user the test pass runs it as: itself, or `nobody` (through `setpriv`)
/// on a copy of the binary that user can reach (`AIRLOCK_TEST_BIN`, made by `scripts/test` in its own temporary
/// folder).
pub fn airlock_command() -> Command {
    if !as_nobody() {
        return Command::new(env!("CARGO_BIN_EXE_airlock"));
    }
    let bin = std::env::var("AIRLOCK_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_airlock").to_owned());
    let mut c = Command::new("setpriv");
    c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", &bin]);
    c
}

/// The word that follows `marker` in `text` (an id a command printed), failing the test when there is none.
pub fn word_after(text: &str, marker: &str) -> String {
    text.split(marker)
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("no `{marker}` in {text}"))
        .to_owned()
}
