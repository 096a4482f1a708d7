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

/// An S3-compatible server of a test's own on a loopback port (moto's `moto_server`), with one empty bucket,
/// stopped when dropped. `AIRLOCK_TEST_MOTO` names the program (scripts/test installs it into its own virtual
/// environment); without it, one is installed from PyPI into a temporary virtual environment once per process.
pub struct S3 {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    pub bucket: String,
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn moto_server() -> PathBuf {
    if let Some(p) = std::env::var_os("AIRLOCK_TEST_MOTO") {
        return PathBuf::from(p);
    }
    static INSTALLED: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, bin) = INSTALLED.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        assert!(Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .status()
            .unwrap()
            .success());
        let ok = Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "--disable-pip-version-check", "moto[server]"])
            .status()
            .unwrap();
        assert!(
            ok.success(),
            "installing moto (an S3-compatible test server) from PyPI failed"
        );
        let bin = venv.join("bin/moto_server");
        (dir, bin)
    });
    bin.clone()
}

impl S3 {
    pub fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(moto_server())
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let endpoint = format!("http://127.0.0.1:{port}");
        let s3 = Self {
            child,
            endpoint,
            bucket: "airlock-test".into(),
        };
        // Up when it answers; then the bucket (moto takes an unsigned request).
        let t0 = std::time::Instant::now();
        loop {
            if let Ok(mut conn) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                use std::io::{Read, Write};
                let req = format!(
                    "PUT /{} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    s3.bucket
                );
                conn.write_all(req.as_bytes()).unwrap();
                let mut answer = String::new();
                let _ = conn.read_to_string(&mut answer);
                if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                    break;
                }
            }
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(30),
                "moto_server did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        s3
    }

    /// The variables a process needs to reach the bucket.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_DEFAULT_REGION", "us-east-1".into()),
        ]
    }

    /// The bucket's URL with a prefix.
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.bucket)
    }
}
