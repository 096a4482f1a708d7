-- The run queue of a team deployment: runs that API servers accepted and runner machines claim, hold under a
-- lease, and report on. Times are milliseconds since the epoch.
CREATE TABLE IF NOT EXISTS run_queue (
    id TEXT PRIMARY KEY,
    job TEXT NOT NULL,
    mode TEXT NOT NULL,
    source TEXT NOT NULL,
    state TEXT NOT NULL,
    runner TEXT,
    runner_key TEXT,
    lease_until BIGINT,
    cancel BIGINT NOT NULL DEFAULT 0,
    message TEXT,
    created_at BIGINT NOT NULL,
    claimed_at BIGINT,
    finished_at BIGINT,
    -- When the row may go (seconds since the epoch, as the other tables): the run's retention.
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_queue_state ON run_queue(state, created_at);
-- The events of a queued run, as its runner reported them (any API server replays them to any client).
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL REFERENCES run_queue(id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
