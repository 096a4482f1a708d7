//! A PostgreSQL cluster of a test's own (feature `testing`): in a temporary folder, on a Unix socket only, run as
//! `nobody` when the tests run as root (PostgreSQL refuses root), stopped when dropped.

#![expect(
    clippy::unwrap_used,
    reason = "test support: a cluster that cannot start fails the test that needs it"
)]

use std::path::PathBuf;

use airlock_types::{RunMode, RunStatus, SkillRun, SkillSource};
use std::process::{Command, Stdio};

/// A PostgreSQL cluster in a temporary folder, listening on a Unix socket only, stopped when dropped.
pub struct Cluster {
    _dir: tempfile::TempDir,
    data: PathBuf,
    /// The `postgres://` URL to give the store.
    pub url: String,
    as_user: Option<String>,
    bin: PathBuf,
    sock: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .args(["-D"])
            .arg(&self.data)
            .args(["-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Where PostgreSQL's programs are: `pg_config --bindir`, else Debian's versioned folder.
fn pg_bin() -> PathBuf {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").is_file() {
            return dir;
        }
    }
    let mut versions: Vec<PathBuf> = fs_err::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    versions.sort();
    versions
        .into_iter()
        .rev()
        .find(|d| d.join("initdb").is_file())
        .unwrap_or_else(|| panic!("PostgreSQL is not installed: run scripts/setup"))
}

impl Cluster {
    fn pg_start(&self) {
        let ok = self
            .command("pg_ctl")
            .args(["-D"])
            .arg(&self.data)
            .args(["-w", "-l"])
            .arg(self.data.join("log"))
            .arg("-o")
            .arg(format!("-c listen_addresses='' -k {} -F", self.sock.display()))
            .arg("start")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "postgres did not start");
    }

    /// Stops the server (dropping every connection), waits `down`, and starts it again on the same data.
    pub fn restart(&self, down: std::time::Duration) {
        let ok = self
            .command("pg_ctl")
            .args(["-D"])
            .arg(&self.data)
            .args(["-w", "-m", "fast", "stop"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "postgres did not stop");
        std::thread::sleep(down);
        self.pg_start();
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.as_user {
            Some(user) => {
                let mut c = Command::new("setpriv");
                c.args(["--reuid", user, "--regid", "nogroup", "--clear-groups", "--"])
                    .arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    /// Starts a cluster; fails the test with a pointer to `scripts/setup` when PostgreSQL is not installed.
    pub fn start() -> Self {
        let bin = pg_bin();
        let dir = tempfile::tempdir().unwrap();
        let root = nix::unistd::geteuid().is_root();
        let as_user = root.then(|| "nobody".to_owned());
        let data = dir.path().join("data");
        let sock = dir.path().join("sock");
        fs_err::create_dir_all(&sock).unwrap();
        if root {
            // The cluster's own folder belongs to the user that runs it.
            let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
            for p in [dir.path(), &sock] {
                nix::unistd::chown(p, Some(nobody.uid), Some(nobody.gid)).unwrap();
            }
        }
        let user = as_user.clone().unwrap_or_else(|| {
            nix::unistd::User::from_uid(nix::unistd::geteuid())
                .unwrap()
                .unwrap()
                .name
        });
        let mut cluster = Self {
            _dir: dir,
            data: data.clone(),
            url: String::new(),
            as_user,
            bin,
            sock: sock.clone(),
        };
        let ok = cluster
            .command("initdb")
            .args(["-D"])
            .arg(&data)
            .args(["-U", &user, "--auth=trust", "--no-sync", "-E", "UTF8"])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "initdb failed");
        cluster.pg_start();
        let host = sock.display().to_string().replace('/', "%2F");
        cluster.url = format!("postgres://{user}@{host}/postgres");
        cluster
    }
}

/// A source pinned to a commit, `n` telling sources apart.
pub fn source(n: usize) -> SkillSource {
    serde_json::from_value(serde_json::json!({
        "id": format!("s{n}"), "kind": "git", "input": format!("https://example.test/skill{n}"),
        "repo_url": format!("https://example.test/skill{n}"), "commit": "0123456789abcdef0123456789abcdef01234567",
        "requested_ref": null, "pinned": true, "pinned_url": null, "subpath": "", "digest": format!("sha256:{n}"),
        "detected_files": [], "created_at": "2026-11-23T10:00:00Z",
    }))
    .unwrap()
}

/// A finished run of `source(1)` with no artifacts.
pub fn run(id: &str, status: RunStatus) -> SkillRun {
    let mut value: serde_json::Value = serde_json::json!({
        "schema_version": 1, "run_id": id, "source": source(1), "mode": "sandbox", "target": null,
        "status": "running", "status_reason": null, "exit_code": 0, "started_at": format!("2026-11-23T10:00:0{}Z", id.len() % 10),
        "finished_at": "2026-11-23T10:01:00Z", "risk_level": "low", "classification": "prompt-only", "findings": 0,
        "command": [], "limits": null, "limit_hit": null, "network_allowed": false, "timeline": [], "files_read": [],
        "files_written": [], "changes": [], "patch_skipped": [], "review": [], "network": [], "installs": [],
        "plan": null, "steps": [], "stdout": "", "stderr": "", "stdout_truncated": false, "stderr_truncated": false,
        "duration_ms": 5, "artifacts": [], "verdict": [],
    });
    value["status"] = serde_json::to_value(status).unwrap();
    let mut r: SkillRun = serde_json::from_value(value).unwrap();
    r.mode = RunMode::Sandbox;
    r
}

/// A low-risk report of `source(1)`.
pub fn report() -> airlock_types::ScanReport {
    serde_json::from_value(serde_json::json!({
        "schema_version": 1, "risk_level": "low", "classification": "prompt-only", "recommended_mode": "sandbox",
        "headline": [], "source": source(1), "skills": [], "inventory": {"files": [], "total_bytes": 0},
        "findings": [], "created_at": "2026-11-23T10:00:00Z",
    }))
    .unwrap()
}
