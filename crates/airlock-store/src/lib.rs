//! The store: a database holding the seed's objects (`SkillSource`, `RiskReport`, `SandboxRun`, `RunArtifact`) and
//! trust decisions, and a folder of content-addressed files (`objects/ab/abcdef...`, named by SHA-256). The database
//! is the embedded SQLite (`store.sqlite`, WAL) by default, or PostgreSQL for a team ([`Store::connect`]); both get
//! the same schema from one set of migrations and the same statements ([`db`]). Every run is written in two steps, each one transaction: a row marked `running` when it starts
//! and the finished record with its artifacts when it ends, so a crash leaves a `running` row that the next open
//! marks failed, and never half a record. Files are written to a temporary name and renamed into place before the
//! row that names them is committed.

use std::path::{Path, PathBuf};

use std::cell::RefCell;

use sha2::{Digest, Sha256};

pub mod db;
pub mod objects;
pub mod queue;
#[cfg(feature = "testing")]
pub mod testing;
use db::{Db, Row, Val};

use airlock_types::{ScanReport, SkillRun, SkillSource};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("store database: {0}")]
    Postgres(#[from] postgres::Error),
    #[error("store database: {0}")]
    Database(String),
    #[error("store files: {0}")]
    Io(#[from] std::io::Error),
    #[error("object store: {0}")]
    Objects(String),
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
    fn from_row(r: &Row) -> Result<Self> {
        Ok(Self {
            id: r.text(0)?,
            source: r.text(1)?,
            mode: r.text(2)?,
            status: r.text(3)?,
            target: r.text(4)?,
            started_at: r.text(5)?,
            expires_at: r.int(6)?,
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
    db: RefCell<Db>,
    root: PathBuf,
    /// Where content files live: `root/objects`, or a folder the servers of a deployment share.
    objects: objects::Objects,
    /// The PostgreSQL URL, to give the connection back to the pool when the store is dropped.
    database: Option<String>,
}

impl Drop for Store {
    fn drop(&mut self) {
        let Some(url) = &self.database else { return };
        if let Db::Postgres(client) = std::mem::replace(self.db.get_mut(), Db::Closed) {
            db::give_back(url, client);
        }
    }
}

/// The advisory lock the sweeper holds on a shared PostgreSQL store ("airlockg").
const GC_LOCK: i64 = 0x6169_726c_6f63_6b67;

/// A statement's parameters.
macro_rules! vals {
    ($($v:expr),* $(,)?) => { vec![$(Val::from($v)),*] };
}

/// Seconds since the epoch.
pub fn now_unix() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

/// The SHA-256 of bytes in lowercase hex: the name content files and uploads go by.
pub fn sha_hex(bytes: &[u8]) -> String {
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
        Self::connect(data_dir, None)
    }

    /// Opens the store with its rows in `database` (`postgres://...`), or in the data folder's SQLite when `None`;
    /// content files always live under `data_dir/objects`. Brings the schema up to date. Does not recover.
    pub fn connect(data_dir: &Path, database: Option<&str>) -> Result<Self> {
        fs_err::create_dir_all(data_dir.join("objects"))?;
        let mut db = match database {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                match db::pooled(url) {
                    Some(client) => Db::Postgres(client),
                    None => Db::Postgres(Box::new(postgres::Client::connect(url, postgres::NoTls)?)),
                }
            }
            Some(other) => {
                return Err(StoreError::Database(format!(
                    "unsupported database `{}`: give a postgres:// URL, or none for the data folder's SQLite",
                    other.split('@').next_back().unwrap_or(other)
                )))
            }
            None => {
                let conn = rusqlite::Connection::open(data_dir.join("store.sqlite"))?;
                conn.busy_timeout(std::time::Duration::from_secs(10))?;
                conn.pragma_update(None, "journal_mode", "WAL")?;
                conn.pragma_update(None, "foreign_keys", "ON")?;
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                Db::Sqlite(conn)
            }
        };
        // The schema is brought up to date once per process and database.
        static MIGRATED: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<String>>> =
            std::sync::OnceLock::new();
        let key = database.map_or_else(|| data_dir.display().to_string(), str::to_owned);
        let migrated = MIGRATED.get_or_init(Default::default);
        if !migrated.lock().is_ok_and(|m| m.contains(&key)) {
            // Two processes opening a new store at once race to record the first migration; the loser finds it
            // done when it looks again.
            if db.migrate().is_err() {
                std::thread::sleep(std::time::Duration::from_millis(300));
                db.migrate()?;
            }
            if let Ok(mut m) = migrated.lock() {
                m.insert(key);
            }
        }
        Ok(Self {
            db: RefCell::new(db),
            root: data_dir.to_path_buf(),
            objects: objects::Objects::Folder(data_dir.join("objects")),
            database: database.map(str::to_owned),
        })
    }

    /// Opens the store in `database` (or the data folder's SQLite) and recovers, as [`Store::open`] does.
    pub fn connect_and_recover(data_dir: &Path, database: Option<&str>) -> Result<Self> {
        let store = Self::connect(data_dir, database)?;
        store.recover()?;
        Ok(store)
    }

    /// Which database holds the rows: `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match &*self.db.borrow() {
            Db::Sqlite(_) => "sqlite",
            Db::Postgres(_) => "postgres",
            Db::Closed => "closed",
        }
    }

    fn execute(&self, sql: &str, params: Vec<Val>) -> Result<u64> {
        self.db.borrow_mut().execute(sql, &params)
    }

    fn query(&self, sql: &str, params: Vec<Val>) -> Result<Vec<Row>> {
        self.db.borrow_mut().query(sql, &params)
    }

    /// The first column of every row, as text.
    fn texts(&self, sql: &str, params: Vec<Val>) -> Result<Vec<String>> {
        self.query(sql, params)?.iter().map(|r| r.text(0)).collect()
    }

    fn recover(&self) -> Result<()> {
        let rows = self.query(
            "SELECT id, pid FROM sandbox_runs WHERE status = 'running'",
            vals![],
        )?;
        for row in rows {
            let (id, pid) = (row.text(0)?, row.int(1)?);
            let alive = i32::try_from(pid).is_ok_and(|p| p > 0 && pid_alive(p))
                && pid != i64::from(std::process::id());
            if !alive {
                self.execute(
                    "UPDATE sandbox_runs SET status = 'failed', finished_at = ?2 WHERE id = ?1 AND status = 'running'",
                    vals![id, airlock_types::now_rfc3339()],
                )?;
            }
        }
        Ok(())
    }

    /// Saves a trust decision (kept until removed: trust does not expire with the retention). A decision for the
    /// same repository, folder and commit (or the same repository, for a repository decision) replaces the older.
    pub fn save_trust(&self, decision: &airlock_types::policy::TrustDecision) -> Result<()> {
        self.db.borrow_mut().batch(&[
            (
                "DELETE FROM trust_decisions WHERE kind = ?1 AND repo = ?2 AND subpath = ?3 \
                 AND (commit_sha = ?4 OR (commit_sha IS NULL AND CAST(?4 AS TEXT) IS NULL))",
                vals![
                    &decision.kind,
                    &decision.repo,
                    &decision.subpath,
                    decision.commit.clone()
                ],
            ),
            (
                "INSERT INTO trust_decisions (id, kind, repo, subpath, commit_sha, created_at, json) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                vals![
                    &decision.id,
                    &decision.kind,
                    &decision.repo,
                    &decision.subpath,
                    decision.commit.clone(),
                    &decision.created_at,
                    serde_json::to_string(decision)?
                ],
            ),
        ])?;
        Ok(())
    }

    /// Trust decisions, newest first; only those for `repo` and `subpath` when given.
    pub fn trust_decisions(
        &self,
        repo: Option<(&str, &str)>,
    ) -> Result<Vec<airlock_types::policy::TrustDecision>> {
        let (r, sub) = repo.map_or((None, ""), |(r, s)| (Some(r), s));
        self.texts(
            "SELECT json FROM trust_decisions WHERE CAST(?1 AS TEXT) IS NULL OR (repo = ?1 AND subpath = ?2) \
             ORDER BY created_at DESC, id DESC",
            vals![r, sub],
        )?
        .iter()
        .map(|json| Ok(serde_json::from_str(json)?))
        .collect()
    }

    /// Removes a trust decision by id (or a unique prefix of it); its id.
    pub fn remove_trust(&self, id: &str) -> Result<String> {
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let ids = self.texts("SELECT id FROM trust_decisions WHERE id LIKE ?1", vals![pattern])?;
        match ids.as_slice() {
            [one] => {
                self.execute("DELETE FROM trust_decisions WHERE id = ?1", vals![one])?;
                Ok(one.clone())
            }
            [] | [_, _, ..] => Err(StoreError::TrustNotFound(id.to_owned())),
        }
    }

    /// Keeps content files (records, reports, artifacts) and uploads in `location` instead of the data folder: a
    /// folder the API servers of a deployment share, or an `s3://bucket/prefix` (see [`objects::Objects::open`]).
    pub fn with_objects(mut self, location: &str) -> Result<Self> {
        self.objects = objects::Objects::open(location)?;
        Ok(self)
    }

    /// Where content files live.
    pub fn objects(&self) -> &objects::Objects {
        &self.objects
    }

    /// Stores bytes by content; returns (sha256, size).
    pub fn put_bytes(&self, bytes: &[u8]) -> Result<(String, u64)> {
        let sha = sha_hex(bytes);
        self.objects.put(&sha, bytes)?;
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
        self.objects.get(sha)
    }

    /// Whether a content file is stored.
    pub fn has_object(&self, sha: &str) -> Result<bool> {
        self.objects.has(sha)
    }

    /// The id a source is stored under: the same repository, commit and content share it.
    pub fn source_id(source: &SkillSource) -> String {
        let commit = source.commit.as_ref().map(ToString::to_string);
        format!(
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
        )
    }

    /// Saves a source (one row per id: the same source and commit share it) with its expiry.
    pub fn save_source(&self, source: &SkillSource, expires_at: i64) -> Result<String> {
        let commit = source.commit.as_ref().map(ToString::to_string);
        let id = Self::source_id(source);
        self.execute(
            "INSERT INTO skill_sources (id, kind, input, repo_url, commit_sha, digest, created_at, expires_at, json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT(id) DO UPDATE SET expires_at = CASE WHEN excluded.expires_at > skill_sources.expires_at
                 THEN excluded.expires_at ELSE skill_sources.expires_at END",
            vals![
                &id,
                airlock_types::wire_name(&source.kind),
                &source.input,
                &source.repo_url,
                commit,
                &source.digest,
                &source.created_at,
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
        self.execute(
            "INSERT INTO risk_reports (id, skill_source_id, risk_level, classification, recommended_mode, created_at, expires_at, json_sha)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT(id) DO UPDATE SET expires_at = CASE WHEN excluded.expires_at > risk_reports.expires_at
                 THEN excluded.expires_at ELSE risk_reports.expires_at END",
            vals![
                &id,
                source_id,
                report.risk_level.to_string(),
                airlock_types::wire_name(&report.classification),
                airlock_types::wire_name(&report.recommended_mode),
                &report.created_at,
                expires_at,
                sha
            ],
        )?;
        Ok(id)
    }

    /// Records that a run started (status `running`, this process's pid).
    pub fn begin_run(&self, run: &SkillRun, source_id: &str, report_id: &str, expires_at: i64) -> Result<()> {
        self.execute(
            "INSERT INTO sandbox_runs (id, skill_source_id, risk_report_id, mode, status, target_type, target, started_at, expires_at, pid)
             VALUES (?1, ?2, ?3, ?4, 'running', ?5, ?6, ?7, ?8, ?9)",
            vals![
                &run.run_id,
                source_id,
                report_id,
                airlock_types::wire_name(&run.mode),
                run.target.as_ref().map_or("none", |t| t.kind.as_str()),
                run.target.as_ref().map_or("", |t| t.input.as_str()),
                &run.started_at,
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
        let mut statements = vec![(
            "UPDATE sandbox_runs SET status = ?2, finished_at = ?3, record_sha = ?4 WHERE id = ?1",
            vals![
                &run.run_id,
                airlock_types::wire_name(&run.status),
                run.finished_at.clone(),
                sha
            ],
        )];
        for a in &run.artifacts {
            statements.push((
                "INSERT INTO run_artifacts (id, sandbox_run_id, type, path, summary, sha256, size)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(id) DO UPDATE SET sandbox_run_id = excluded.sandbox_run_id, type = excluded.type,
                     path = excluded.path, summary = excluded.summary, sha256 = excluded.sha256, size = excluded.size",
                vals![
                    &a.id,
                    &run.run_id,
                    &a.kind,
                    &a.path,
                    &a.summary,
                    &a.sha256,
                    i64::try_from(a.size).unwrap_or(i64::MAX)
                ],
            ));
        }
        self.db.borrow_mut().batch(&statements)?;
        Ok(())
    }

    /// Resolves a full id or a unique prefix.
    pub fn resolve(&self, id: &str) -> Result<String> {
        let pattern = format!("{}%", id.replace(['%', '_'], ""));
        let ids = self.texts(
            "SELECT id FROM sandbox_runs WHERE id LIKE ?1 LIMIT 2",
            vals![pattern],
        )?;
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
        let found = self
            .query(&format!("{RUN_ROWS} WHERE r.id = ?1"), vals![&id])?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        let (row, sha) = (RunRow::from_row(&found)?, found.opt_text(7)?);
        let record = match sha {
            Some(sha) => Some(serde_json::from_slice(&self.read_object(&sha)?)?),
            None => None,
        };
        Ok((row, record))
    }

    /// Keeps the signed statement of a stored run, made as its record was stored.
    pub fn set_run_attestation(&self, id: &str, envelope: &[u8]) -> Result<()> {
        let (sha, _) = self.put_bytes(envelope)?;
        self.execute(
            "UPDATE sandbox_runs SET attestation_sha = ?2 WHERE id = ?1",
            vals![id, sha],
        )?;
        Ok(())
    }

    /// The signed statement kept for a run, if one was made as its record was stored.
    pub fn run_attestation(&self, id: &str) -> Result<Option<Vec<u8>>> {
        let id = self.resolve(id)?;
        let sha = self
            .query(
                "SELECT attestation_sha FROM sandbox_runs WHERE id = ?1",
                vals![&id],
            )?
            .into_iter()
            .next()
            .map(|r| r.opt_text(0))
            .transpose()?
            .flatten();
        match sha {
            Some(sha) => Ok(Some(self.read_object(&sha)?)),
            None => Ok(None),
        }
    }

    /// Every stored source, newest first, with its latest report's id and level.
    pub fn sources(&self) -> Result<Vec<SourceRow>> {
        self.query(
            "SELECT s.id, s.input, s.commit_sha, s.created_at,
                    (SELECT r.id FROM risk_reports r WHERE r.skill_source_id = s.id ORDER BY r.created_at DESC LIMIT 1),
                    (SELECT r.risk_level FROM risk_reports r WHERE r.skill_source_id = s.id ORDER BY r.created_at DESC LIMIT 1)
             FROM skill_sources s ORDER BY s.created_at DESC, s.id",
            vals![],
        )?
        .iter()
        .map(|r| {
            Ok(SourceRow {
                id: r.text(0)?,
                input: r.text(1)?,
                commit: r.opt_text(2)?,
                created_at: r.text(3)?,
                report_id: r.opt_text(4)?,
                risk_level: r.opt_text(5)?,
            })
        })
        .collect()
    }

    /// One stored source and its latest report.
    pub fn source(&self, id: &str) -> Result<(SkillSource, Option<(String, ScanReport)>)> {
        let json = self
            .query("SELECT json FROM skill_sources WHERE id = ?1", vals![id])?
            .first()
            .ok_or_else(|| StoreError::NotFound(id.to_owned()))?
            .text(0)?;
        let source: SkillSource = serde_json::from_str(&json)?;
        let report = match self
            .query(
                "SELECT id, json_sha FROM risk_reports WHERE skill_source_id = ?1 ORDER BY created_at DESC LIMIT 1",
                vals![id],
            )?
            .first()
        {
            Some(r) => Some((r.text(0)?, r.text(1)?)),
            None => None,
        };
        let report = match report {
            Some((rid, sha)) => Some((rid, serde_json::from_slice(&self.read_object(&sha)?)?)),
            None => None,
        };
        Ok((source, report))
    }

    pub fn runs(&self) -> Result<Vec<RunRow>> {
        self.query(
            &format!("{RUN_ROWS} ORDER BY r.started_at DESC, r.id DESC"),
            vals![],
        )?
        .iter()
        .map(RunRow::from_row)
        .collect()
    }

    /// Deletes one run and its artifacts now (files go at the next sweep once nothing names them).
    pub fn discard(&mut self, id: &str) -> Result<String> {
        let id = self.resolve(id)?;
        self.execute("DELETE FROM sandbox_runs WHERE id = ?1", vals![&id])?;
        self.sweep_objects()?;
        Ok(id)
    }

    /// Deletes one run's row and its artifacts' rows now, leaving the files to the next gc (which keeps young files
    /// while a run is in progress): what a runner does once a server has the run, while other runs go on.
    pub fn forget(&self, id: &str) -> Result<()> {
        self.execute("DELETE FROM sandbox_runs WHERE id = ?1", vals![id])?;
        Ok(())
    }

    /// Deletes runs, reports and sources whose time is up, then every file nothing names any more.
    pub fn gc(&mut self, now: i64) -> Result<GcStats> {
        let mut stats = GcStats::default();
        // Several servers share a PostgreSQL store: one sweeps at a time (a session advisory lock); the others skip.
        let postgres = self.backend() == "postgres";
        if postgres {
            let got = self.query("SELECT pg_try_advisory_lock(?1)", vals![GC_LOCK])?;
            if got.first().map(|r| r.int(0)).transpose()? != Some(1) {
                return Ok(stats);
            }
        }
        let swept = self.sweep_rows(now, &mut stats);
        if postgres {
            self.query("SELECT pg_advisory_unlock(?1)", vals![GC_LOCK])?;
        }
        swept?;
        // Files only lose their last name when a row goes; with nothing deleted there is nothing to look for.
        if stats.runs + stats.reports + stats.sources > 0 {
            (stats.objects, stats.bytes) = self.sweep_objects()?;
        }
        Ok(stats)
    }

    /// Deletes the rows whose time is up, in one transaction.
    fn sweep_rows(&self, now: i64, stats: &mut GcStats) -> Result<()> {
        let counts = self.db.borrow_mut().batch(&[
            (
                "DELETE FROM sandbox_runs WHERE expires_at <= ?1 AND status != 'running'",
                vals![now],
            ),
            (
                "DELETE FROM risk_reports WHERE expires_at <= ?1 AND id NOT IN (SELECT risk_report_id FROM sandbox_runs WHERE risk_report_id IS NOT NULL)",
                vals![now],
            ),
            (
                "DELETE FROM skill_sources WHERE expires_at <= ?1 AND id NOT IN (SELECT skill_source_id FROM sandbox_runs)
                 AND id NOT IN (SELECT skill_source_id FROM risk_reports)",
                vals![now],
            ),
            (
                "DELETE FROM run_queue WHERE expires_at <= ?1 AND state NOT IN ('queued', 'running')",
                vals![now],
            ),
        ])?;
        let count = |i: usize| {
            counts
                .get(i)
                .map_or(0, |n| usize::try_from(*n).unwrap_or(usize::MAX))
        };
        (stats.runs, stats.reports, stats.sources) = (count(0), count(1), count(2));
        Ok(())
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
            "SELECT attestation_sha FROM sandbox_runs WHERE attestation_sha IS NOT NULL",
            "SELECT sha256 FROM run_artifacts",
            "SELECT json_sha FROM risk_reports",
        ] {
            live.extend(self.texts(sql, vals![])?);
        }
        // A run in progress may have written files it has not named yet: keep young files.
        // (Runners upload a run's artifacts before its row is written: a run held in the queue counts.)
        let has_running = !self
            .query(
                "SELECT 1 FROM sandbox_runs WHERE status = 'running' \
                 UNION ALL SELECT 1 FROM run_queue WHERE state = 'running' LIMIT 1",
                vals![],
            )?
            .is_empty();
        let keep_after = has_running.then(|| now_unix() - 3600);
        self.objects.sweep(&live, keep_after)
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
