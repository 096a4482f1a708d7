//! The embedded store: one SQLite database (`store.sqlite`, WAL) holding the seed's objects (`SkillSource`,
//! `RiskReport`, `SandboxRun`, `RunArtifact`) and a folder of content-addressed files (`objects/ab/abcdef...`,
//! named by SHA-256). Every run is written in two steps, each one transaction: a row marked `running` when it starts
//! and the finished record with its artifacts when it ends, so a crash leaves a `running` row that the next open
//! marks failed, and never half a record. Files are written to a temporary name and renamed into place before the
//! row that names them is committed.

use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use airlock_types::{ScanReport, SkillRun, SkillSource};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("store files: {0}")]
    Io(#[from] std::io::Error),
    #[error("store record: {0}")]
    Json(#[from] serde_json::Error),
    #[error("no run matches `{0}`")]
    NotFound(String),
    #[error("`{0}` matches more than one run; give more of the id")]
    Ambiguous(String),
    #[error("no trust decision matches `{0}` (see `airlock trust --list`)")]
    TrustNotFound(String),
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// One line of `airlock runs`.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub id: String,
    pub source: String,
    pub mode: String,
    pub status: String,
    pub target: String,
    pub started_at: String,
    pub expires_at: i64,
}

/// The columns of a [`RunRow`] (then the record's hash), joined with the source's input.
const RUN_ROWS: &str =
    "SELECT r.id, s.input, r.mode, r.status, r.target, r.started_at, r.expires_at, r.record_sha
     FROM sandbox_runs r JOIN skill_sources s ON s.id = r.skill_source_id";

impl RunRow {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            source: r.get(1)?,
            mode: r.get(2)?,
            status: r.get(3)?,
            target: r.get(4)?,
            started_at: r.get(5)?,
            expires_at: r.get(6)?,
        })
    }
}

/// One stored source, as the API lists it.
#[derive(Debug, Clone)]
pub struct SourceRow {
    pub id: String,
    pub input: String,
    pub commit: Option<String>,
    pub created_at: String,
    pub report_id: Option<String>,
    pub risk_level: Option<String>,
}

/// What a sweep removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GcStats {
    pub runs: usize,
    pub reports: usize,
    pub sources: usize,
    pub objects: usize,
    pub bytes: u64,
}

pub struct Store {
    conn: Connection,
    root: PathBuf,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS skill_sources (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    input TEXT NOT NULL,
    repo_url TEXT NOT NULL,
    commit_sha TEXT,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS risk_reports (
    id TEXT PRIMARY KEY,
    skill_source_id TEXT NOT NULL REFERENCES skill_sources(id) ON DELETE CASCADE,
    risk_level TEXT NOT NULL,
    classification TEXT NOT NULL,
    recommended_mode TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    json_sha TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sandbox_runs (
    id TEXT PRIMARY KEY,
    skill_source_id TEXT NOT NULL REFERENCES skill_sources(id) ON DELETE CASCADE,
    risk_report_id TEXT REFERENCES risk_reports(id) ON DELETE SET NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    expires_at INTEGER NOT NULL,
    pid INTEGER NOT NULL,
    record_sha TEXT
);
CREATE TABLE IF NOT EXISTS run_artifacts (
    id TEXT PRIMARY KEY,
    sandbox_run_id TEXT NOT NULL REFERENCES sandbox_runs(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    path TEXT NOT NULL,
    summary TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS trust_decisions (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    repo TEXT NOT NULL,
    subpath TEXT NOT NULL,
    commit_sha TEXT,
    created_at TEXT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trust_decisions_repo ON trust_decisions(repo, subpath);
CREATE INDEX IF NOT EXISTS run_artifacts_run ON run_artifacts(sandbox_run_id);
CREATE INDEX IF NOT EXISTS sandbox_runs_expiry ON sandbox_runs(expires_at);
";

/// Seconds since the epoch.
pub fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

fn sha_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Store {
    /// Opens (or creates) the store under `data_dir` and marks runs left `running` by a process that is gone as
    /// failed.
    /// Opens the store and marks `failed` the runs a dead process left `running` (and this process's own: a
    /// process that opens the store this way has no run in progress yet). A long-lived process that runs several
    /// runs at once (the server) recovers once at start and then uses [`Store::open_shared`].
    pub fn open(data_dir: &Path) -> Result<Self> {
        let store = Self::open_shared(data_dir)?;
        store.recover()?;
        Ok(store)
    }

    /// Opens the store without recovering: the runs this process has in progress stay `running`.
    pub fn open_shared(data_dir: &Path) -> Result<Self> {
        fs_err::create_dir_all(data_dir.join("objects"))?;
        let conn = Connection::open(data_dir.join("store.sqlite"))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn,
            root: data_dir.to_path_buf(),
        })
    }

    fn recover(&self) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, pid FROM sandbox_runs WHERE status = 'running'")?;
        let rows: Vec<(String, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<std::result::Result<_, _>>()?;
        for (id, pid) in rows {
            let alive = i32::try_from(pid).is_ok_and(|p| p > 0 && pid_alive(p))
                && pid != i64::from(std::process::id());
            if !alive {
                self.conn.execute(
                    "UPDATE sandbox_runs SET status = 'failed', finished_at = ?2 WHERE id = ?1 AND status = 'running'",
                    params![id, airlock_types::now_rfc3339()],
                )?;
            }
        }
        Ok(())
    }

    /// Saves a trust decision (kept until removed: trust does not expire with the retention). A decision for the
    /// same repository, folder and commit (or the same repository, for a repository decision) replaces the older.
    pub fn save_trust(&self, decision: &airlock_types::policy::TrustDecision) -> Result<()> {
        self.conn.execute(
            "DELETE FROM trust_decisions WHERE kind = ?1 AND repo = ?2 AND subpath = ?3 AND commit_sha IS ?4",
            params![decision.kind, decision.repo, decision.subpath, decision.commit],
        )?;
        self.conn.execute(
            "INSERT INTO trust_decisions (id, kind, repo, subpath, commit_sha, created_at, json) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                decision.id,
                decision.kind,
                decision.repo,
                decision.subpath,
                decision.commit,
                decision.created_at,
                serde_json::to_string(decision)?
            ],
        )?;
        Ok(())
    }

    /// Trust decisions, newest first; only those for `repo` and `subpath` when given.
    pub fn trust_decisions(
        &self,
        repo: Option<(&str, &str)>,
    ) -> Result<Vec<airlock_types::policy::TrustDecision>> {
        let mut stmt = self.conn.prepare(
            "SELECT json FROM trust_decisions WHERE ?1 IS NULL OR (repo = ?1 AND subpath = ?2) \
             ORDER BY created_at DESC, id DESC",
        )?;
        let (r, sub) = repo.map_or((None, ""), |(r, s)| (Some(r), s));
        let rows: Vec<String> = stmt
            .query_map(params![r, sub], |row| row.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        rows.iter()
            .map(|j| serde_json::from_str(j).map_err(StoreError::from))
            .collect()
    }

    /// Removes a trust decision by id (or a unique prefix of it); its id.
    pub fn remove_trust(&self, id: &str) -> Result<String> {
        let ids: Vec<String> = self
            .conn
            .prepare("SELECT id FROM trust_decisions WHERE id LIKE ?1 || '%'")?
            .query_map(params![id], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        match ids.as_slice() {
            [one] => {
                self.conn
                    .execute("DELETE FROM trust_decisions WHERE id = ?1", params![one])?;
                Ok(one.clone())
            }
            [] | [_, _, ..] => Err(StoreError::TrustNotFound(id.to_owned())),
        }
    }

    pub fn object_path(&self, sha: &str) -> PathBuf {
        let sha: String = sha.chars().filter(char::is_ascii_hexdigit).collect();
        self.root
            .join("objects")
            .join(sha.get(..2).unwrap_or("00"))
            .join(&sha)
    }

    /// Stores bytes by content; returns (sha256, size).
    pub fn put_bytes(&self, bytes: &[u8]) -> Result<(String, u64)> {
        let sha = sha_hex(bytes);
        let path = self.object_path(&sha);
        if !path.exists() {
            let dir = path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| self.root.join("objects"));
            fs_err::create_dir_all(&dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
            tmp.write_all(bytes)?;
            tmp.as_file().sync_data()?;
            tmp.persist(&path).map_err(|e| StoreError::Io(e.error))?;
        }
        Ok((sha, bytes.len() as u64))
    }

    /// Stores a file's content (never following a symbolic link); returns (sha256, size).
    pub fn put_file(&self, path: &Path) -> Result<(String, u64)> {
        let meta = fs_err::symlink_metadata(path)?;
        if meta.file_type().is_symlink() {
            let target = fs_err::read_link(path)?;
            return self.put_bytes(target.as_os_str().as_encoded_bytes());
        }
        let bytes = fs_err::read(path)?;
        self.put_bytes(&bytes)
    }

    pub fn read_object(&self, sha: &str) -> Result<Vec<u8>> {
        Ok(fs_err::read(self.object_path(sha))?)
    }

    /// Saves a source (one row per id: the same source and commit share it) with its expiry.
    pub fn save_source(&self, source: &SkillSource, expires_at: i64) -> Result<String> {
        let commit = source.commit.as_ref().map(ToString::to_string);
        let id = format!(
            "src-{}",
            &sha_hex(
                format!(
                    "{}\0{}\0{}",
                    source.repo_url,
                    commit.as_deref().unwrap_or(""),
                    source.digest
                )
                .as_bytes()
            )[..16]
        );
        self.conn.execute(
            "INSERT INTO skill_sources (id, kind, input, repo_url, commit_sha, digest, created_at, expires_at, json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT(id) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)",
            params![
                id,
                airlock_types::wire_name(&source.kind),
                source.input,
                source.repo_url,
                commit,
                source.digest,
                source.created_at,
                expires_at,
                serde_json::to_string(source)?
            ],
        )?;
        Ok(id)
    }

    pub fn save_report(&self, source_id: &str, report: &ScanReport, expires_at: i64) -> Result<String> {
        let json = serde_json::to_vec(report)?;
        let (sha, _) = self.put_bytes(&json)?;
        let id = format!("rep-{}", &sha[..16]);
        self.conn.execute(
            "INSERT INTO risk_reports (id, skill_source_id, risk_level, classification, recommended_mode, created_at, expires_at, json_sha)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(id) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)",
            params![
                id,
                source_id,
                report.risk_level.to_string(),
                airlock_types::wire_name(&report.classification),
                airlock_types::wire_name(&report.recommended_mode),
                report.created_at,
                expires_at,
                sha
            ],
        )?;
        Ok(id)
    }

    /// Records that a run started (status `running`, this process's pid).
    pub fn begin_run(&self, run: &SkillRun, source_id: &str, report_id: &str, expires_at: i64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO sandbox_runs (id, skill_source_id, risk_report_id, mode, status, target_type, target, started_at, expires_at, pid)
             VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8, ?9)",
            params![
                run.run_id,
                source_id,
                report_id,
                airlock_types::wire_name(&run.mode),
                run.target.as_ref().map_or("none", |t| t.kind.as_str()),
                run.target.as_ref().map_or("", |t| t.input.as_str()),
                run.started_at,
                expires_at,
                i64::from(std::process::id())
            ],
        )?;
        Ok(())
    }

    /// Stores the finished record and its artifacts in one transaction.
    pub fn finish_run(&mut self, run: &SkillRun) -> Result<()> {
        let json = serde_json::to_vec_pretty(run)?;
        let (sha, _) = self.put_bytes(&json)?;
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE sandbox_runs SET status = ?2, finished_at = ?3, record_sha = ?4 WHERE id = ?1",
            params![
                run.run_id,
                airlock_types::wire_name(&run.status),
                run.finished_at,
                sha
            ],
        )?;
        for a in &run.artifacts {
            tx.execute(
                "INSERT OR REPLACE INTO run_artifacts (id, sandbox_run_id, type, path, summary, sha256, size)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    a.id,
                    run.run_id,
                    a.kind,
                    a.path,
                    a.summary,
                    a.sha256,
                    i64::try_from(a.size).unwrap_or(i64::MAX)
                ],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Resolves a full id or a unique prefix.
    pub fn resolve(&self, id: &str) -> Result<String> {
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM sandbox_runs WHERE id LIKE ?1 LIMIT 2")?;
        let ids: Vec<String> = stmt
            .query_map([pattern], |r| r.get(0))?
            .collect::<std::result::Result<_, _>>()?;
        match ids.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(StoreError::NotFound(id.to_owned())),
            _ if ids.iter().any(|i| i == id) => Ok(id.to_owned()),
            _ => Err(StoreError::Ambiguous(id.to_owned())),
        }
    }

    /// The finished record of a run; a run that never finished gives its row's status and no record.
    pub fn run(&self, id: &str) -> Result<(RunRow, Option<SkillRun>)> {
        let id = self.resolve(id)?;
        let (row, sha): (RunRow, Option<String>) =
            self.conn
                .query_row(&format!("{RUN_ROWS} WHERE r.id = ?1"), [&id], |r| {
                    Ok((RunRow::from_row(r)?, r.get(7)?))
                })?;
        let record = match sha {
            Some(sha) => Some(serde_json::from_slice(&self.read_object(&sha)?)?),
            None => None,
        };
        Ok((row, record))
    }

    /// Every stored source, newest first, with its latest report's id and level.
    pub fn sources(&self) -> Result<Vec<SourceRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT s.id, s.input, s.commit_sha, s.created_at,
                    (SELECT r.id FROM risk_reports r WHERE r.skill_source_id = s.id ORDER BY r.created_at DESC LIMIT 1),
                    (SELECT r.risk_level FROM risk_reports r WHERE r.skill_source_id = s.id ORDER BY r.created_at DESC LIMIT 1)
             FROM skill_sources s ORDER BY s.created_at DESC, s.id",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok(SourceRow {
                    id: r.get(0)?,
                    input: r.get(1)?,
                    commit: r.get(2)?,
                    created_at: r.get(3)?,
                    report_id: r.get(4)?,
                    risk_level: r.get(5)?,
                })
            })?
            .collect::<std::result::Result<_, _>>()?;
        Ok(rows)
    }

    /// One stored source and its latest report.
    pub fn source(&self, id: &str) -> Result<(SkillSource, Option<(String, ScanReport)>)> {
        let json: String = self
            .conn
            .query_row("SELECT json FROM skill_sources WHERE id = ?1", [id], |r| r.get(0))
            .map_err(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => StoreError::NotFound(id.to_owned()),
                e => e.into(),
            })?;
        let source: SkillSource = serde_json::from_str(&json)?;
        let report = self
            .conn
            .query_row(
                "SELECT id, json_sha FROM risk_reports WHERE skill_source_id = ?1 ORDER BY created_at DESC LIMIT 1",
                [id],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
            )
            .ok();
        let report = match report {
            Some((rid, sha)) => Some((rid, serde_json::from_slice(&self.read_object(&sha)?)?)),
            None => None,
        };
        Ok((source, report))
    }

    pub fn runs(&self) -> Result<Vec<RunRow>> {
        let mut stmt = self
            .conn
            .prepare(&format!("{RUN_ROWS} ORDER BY r.started_at DESC, r.id DESC"))?;
        let rows = stmt
            .query_map([], RunRow::from_row)?
            .collect::<std::result::Result<_, _>>()?;
        Ok(rows)
    }

    /// Deletes one run and its artifacts now (files go at the next sweep once nothing names them).
    pub fn discard(&mut self, id: &str) -> Result<String> {
        let id = self.resolve(id)?;
        self.conn
            .execute("DELETE FROM sandbox_runs WHERE id = ?1", [&id])?;
        self.sweep_objects()?;
        Ok(id)
    }

    /// Deletes runs, reports and sources whose time is up, then every file nothing names any more.
    pub fn gc(&mut self, now: i64) -> Result<GcStats> {
        let mut stats = GcStats::default();
        let tx = self.conn.transaction()?;
        stats.runs = tx.execute(
            "DELETE FROM sandbox_runs WHERE expires_at <= ?1 AND status != 'running'",
            [now],
        )?;
        stats.reports = tx.execute(
            "DELETE FROM risk_reports WHERE expires_at <= ?1 AND id NOT IN (SELECT risk_report_id FROM sandbox_runs WHERE risk_report_id IS NOT NULL)",
            [now],
        )?;
        stats.sources = tx.execute(
            "DELETE FROM skill_sources WHERE expires_at <= ?1 AND id NOT IN (SELECT skill_source_id FROM sandbox_runs)
             AND id NOT IN (SELECT skill_source_id FROM risk_reports)",
            [now],
        )?;
        tx.commit()?;
        // Files only lose their last name when a row goes; with nothing deleted there is nothing to look for.
        if stats.runs + stats.reports + stats.sources > 0 {
            (stats.objects, stats.bytes) = self.sweep_objects()?;
        }
        Ok(stats)
    }

    /// Removes import caches (staged copies under `sources/`, clones under `git/`) not used for `older_than`:
    /// they hold other people's code and are rebuilt on the next import that needs them.
    pub fn sweep_caches(&self, older_than: std::time::Duration) -> Result<(usize, u64)> {
        let cutoff = std::time::SystemTime::now()
            .checked_sub(older_than)
            .unwrap_or(std::time::UNIX_EPOCH);
        let mut parents = vec![self.root.join("git")];
        if let Ok(kinds) = fs_err::read_dir(self.root.join("sources")) {
            parents.extend(kinds.flatten().map(|k| k.path()));
        }
        let (mut n, mut bytes) = (0, 0);
        for parent in parents {
            let Ok(entries) = fs_err::read_dir(&parent) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(meta) = fs_err::symlink_metadata(e.path()) else {
                    continue;
                };
                if meta.modified().is_ok_and(|m| m < cutoff) {
                    bytes += tree_size(&e.path());
                    let removed = if meta.is_dir() {
                        fs_err::remove_dir_all(e.path())
                    } else {
                        fs_err::remove_file(e.path())
                    };
                    if removed.is_ok() {
                        n += 1;
                    }
                }
            }
        }
        Ok((n, bytes))
    }

    /// Removes content files that no row names (also those a crashed run wrote and never named).
    pub fn sweep_objects(&self) -> Result<(usize, u64)> {
        let mut live = std::collections::HashSet::new();
        for sql in [
            "SELECT record_sha FROM sandbox_runs WHERE record_sha IS NOT NULL",
            "SELECT sha256 FROM run_artifacts",
            "SELECT json_sha FROM risk_reports",
        ] {
            let mut stmt = self.conn.prepare(sql)?;
            for sha in stmt.query_map([], |r| r.get::<_, String>(0))? {
                live.insert(sha?);
            }
        }
        // A run in progress may have written files it has not named yet: keep young files.
        let young = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let has_running: bool = self
            .conn
            .query_row(
                "SELECT 1 FROM sandbox_runs WHERE status = 'running' LIMIT 1",
                [],
                |_| Ok(true),
            )
            .optional()?
            .unwrap_or(false);
        let (mut n, mut bytes) = (0, 0);
        let objects = self.root.join("objects");
        for dir in fs_err::read_dir(&objects)? {
            let dir = dir?;
            if !dir.file_type()?.is_dir() {
                continue;
            }
            for f in fs_err::read_dir(dir.path())? {
                let f = f?;
                let name = f.file_name().to_string_lossy().into_owned();
                if live.contains(&name) {
                    continue;
                }
                let meta = f.metadata()?;
                if has_running && meta.modified().is_ok_and(|m| m > young) {
                    continue;
                }
                fs_err::remove_file(f.path())?;
                n += 1;
                bytes += meta.len();
            }
        }
        Ok((n, bytes))
    }
}

fn tree_size(path: &Path) -> u64 {
    let Ok(meta) = fs_err::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    fs_err::read_dir(path)
        .map(|entries| entries.flatten().map(|e| tree_size(&e.path())).sum())
        .unwrap_or(0)
}

fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
}
