-- The store's schema, in SQL that SQLite and PostgreSQL both take (integers are 64-bit in both).
CREATE TABLE IF NOT EXISTS skill_sources (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    input TEXT NOT NULL,
    repo_url TEXT NOT NULL,
    commit_sha TEXT,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS risk_reports (
    id TEXT PRIMARY KEY,
    skill_source_id TEXT NOT NULL REFERENCES skill_sources(id) ON DELETE CASCADE,
    risk_level TEXT NOT NULL,
    classification TEXT NOT NULL,
    recommended_mode TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
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
    expires_at BIGINT NOT NULL,
    pid BIGINT NOT NULL,
    record_sha TEXT
);
CREATE TABLE IF NOT EXISTS run_artifacts (
    id TEXT PRIMARY KEY,
    sandbox_run_id TEXT NOT NULL REFERENCES sandbox_runs(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    path TEXT NOT NULL,
    summary TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL
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
