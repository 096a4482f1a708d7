//! The run queue of a team deployment: API servers add runs, runner machines claim them under a lease that they
//! renew, report their events, and hand back the record. On PostgreSQL a claim takes the oldest queued run that no
//! other claim holds (`FOR UPDATE SKIP LOCKED`), so any number of API servers can hand out work at once and each
//! run goes to exactly one runner. A run whose lease runs out is `lost`, never queued again: a skill's run is not
//! idempotent, so it must not silently run twice.

use crate::db::Val;
use crate::{Result, Store};

/// A run's place in the queue's life.
pub mod state {
    pub const QUEUED: &str = "queued";
    pub const RUNNING: &str = "running";
    /// Its runner handed back the record (the run itself may have failed: see the record).
    pub const DONE: &str = "done";
    pub const CANCELLED: &str = "cancelled";
    /// Its runner stopped renewing the lease.
    pub const LOST: &str = "lost";
    /// Its runner could not carry it out (an import that failed, a sandbox that could not start): the message.
    pub const ERROR: &str = "error";
}

/// The message of a run whose runner stopped renewing its lease.
pub const RUNNER_LOST: &str = "runner lost";

/// A row of the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedRun {
    pub id: String,
    pub mode: String,
    pub source: String,
    pub state: String,
    /// The name the runner holding it gave.
    pub runner: Option<String>,
    pub message: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Its place in the queue while it waits (1 is next), where the caller asked for it.
    pub position: Option<usize>,
}

/// What renewing a lease found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// Renewed; `cancel` when someone asked for the run to stop.
    Held { cancel: bool },
    /// The run is not this runner's (another's, lost, over, or no such run).
    NotHeld,
}

/// What a cancel did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancelled {
    /// It was waiting: it will never run.
    Dequeued,
    /// It is running: its runner is told at its next renewal.
    Asked,
    /// It is over already.
    Over,
    NotFound,
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    i64::try_from(time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

const COLUMNS: &str = "id, mode, source, state, runner, message, created_at FROM run_queue";

fn from_row(row: &crate::db::Row) -> Result<QueuedRun> {
    Ok(QueuedRun {
        id: row.text(0)?,
        mode: row.text(1)?,
        source: row.text(2)?,
        state: row.text(3)?,
        runner: row.opt_text(4)?,
        message: row.opt_text(5)?,
        created_at: row.int(6)?,
        position: None,
    })
}

impl Store {
    /// Adds a run to the queue.
    pub fn enqueue(&self, id: &str, job: &str, mode: &str, source: &str, expires_at: i64) -> Result<()> {
        self.execute(
            "INSERT INTO run_queue (id, job, mode, source, state, created_at, expires_at) \
             VALUES (?1, ?2, ?3, ?4, 'queued', ?5, ?6)",
            vec![
                Val::from(id),
                Val::from(job),
                Val::from(mode),
                Val::from(source),
                Val::from(now_ms()),
                Val::from(expires_at),
            ],
        )?;
        Ok(())
    }

    /// One run of the queue.
    pub fn queued_run(&self, id: &str) -> Result<Option<QueuedRun>> {
        self.query(&format!("SELECT {COLUMNS} WHERE id = ?1"), vec![Val::from(id)])?
            .first()
            .map(from_row)
            .transpose()
    }

    /// Every run of the queue that has not handed back a record (queued, running, lost, cancelled, failed to
    /// start), newest first, the queued ones with their place.
    pub fn unfinished_runs(&self) -> Result<Vec<QueuedRun>> {
        let mut runs = self
            .query(
                &format!("SELECT {COLUMNS} WHERE state != 'done' ORDER BY created_at DESC, id DESC"),
                vec![],
            )?
            .iter()
            .map(from_row)
            .collect::<Result<Vec<_>>>()?;
        // Newest first: the last queued one is next.
        let queued = runs.iter().filter(|r| r.state == state::QUEUED).count();
        let mut place = queued;
        for r in runs.iter_mut().filter(|r| r.state == state::QUEUED) {
            r.position = Some(place);
            place -= 1;
        }
        Ok(runs)
    }

    /// A queued run's place (1 is next).
    pub fn queue_position(&self, id: &str) -> Result<Option<usize>> {
        let Some(run) = self.queued_run(id)? else {
            return Ok(None);
        };
        if run.state != state::QUEUED {
            return Ok(None);
        }
        let ahead = self
            .query(
                "SELECT COUNT(*) FROM run_queue WHERE state = 'queued' AND (created_at < ?1 OR (created_at = ?1 AND id < ?2))",
                vec![Val::from(run.created_at), Val::from(id)],
            )?
            .first()
            .map(|r| r.int(0))
            .transpose()?
            .unwrap_or(0);
        Ok(Some(usize::try_from(ahead).unwrap_or(0) + 1))
    }

    /// How many runs wait and how many are held by runners.
    pub fn queue_depth(&self) -> Result<(u64, u64)> {
        let rows = self.query(
            "SELECT state, COUNT(*) FROM run_queue WHERE state IN ('queued', 'running') GROUP BY state",
            vec![],
        )?;
        let (mut queued, mut running) = (0, 0);
        for r in rows {
            let n = u64::try_from(r.int(1)?).unwrap_or(0);
            match r.text(0)?.as_str() {
                state::QUEUED => queued = n,
                _ => running = n,
            }
        }
        Ok((queued, running))
    }

    /// Takes the oldest queued run of one of `modes` for a runner: its id and job. Each run is handed out once,
    /// whichever server the claim reaches.
    pub fn claim(
        &self,
        runner: &str,
        runner_key: &str,
        modes: &[&str],
        lease_ms: i64,
    ) -> Result<Option<(String, String)>> {
        if modes.is_empty() {
            return Ok(None);
        }
        let now = now_ms();
        let list = (0..modes.len())
            .map(|i| format!("?{}", i + 5))
            .collect::<Vec<_>>()
            .join(", ");
        let lock = if self.backend() == "postgres" {
            " FOR UPDATE SKIP LOCKED"
        } else {
            ""
        };
        let sql = format!(
            "UPDATE run_queue SET state = 'running', runner = ?1, runner_key = ?2, claimed_at = ?3, lease_until = ?4 \
             WHERE id = (SELECT id FROM run_queue WHERE state = 'queued' AND cancel = 0 AND mode IN ({list}) \
                         ORDER BY created_at, id LIMIT 1{lock}) \
               AND state = 'queued' \
             RETURNING id, job"
        );
        let mut params = vec![
            Val::from(runner),
            Val::from(runner_key),
            Val::from(now),
            Val::from(now.saturating_add(lease_ms)),
        ];
        params.extend(modes.iter().map(|m| Val::from(*m)));
        match self.query(&sql, params)?.first() {
            Some(row) => Ok(Some((row.text(0)?, row.text(1)?))),
            None => Ok(None),
        }
    }

    /// Extends a runner's lease on a run it holds.
    pub fn renew(&self, id: &str, runner_key: &str, lease_ms: i64) -> Result<Lease> {
        let now = now_ms();
        let rows = self.query(
            "UPDATE run_queue SET lease_until = ?3 \
             WHERE id = ?1 AND runner_key = ?2 AND state = 'running' AND lease_until >= ?4 \
             RETURNING cancel",
            vec![
                Val::from(id),
                Val::from(runner_key),
                Val::from(now.saturating_add(lease_ms)),
                Val::from(now),
            ],
        )?;
        Ok(match rows.first() {
            Some(r) => Lease::Held {
                cancel: r.int(0)? != 0,
            },
            None => Lease::NotHeld,
        })
    }

    /// Whether the runner with this key holds the run under a current lease.
    pub fn holds(&self, id: &str, runner_key: &str) -> Result<bool> {
        Ok(!self
            .query(
                "SELECT 1 FROM run_queue WHERE id = ?1 AND runner_key = ?2 AND state = 'running' AND lease_until >= ?3",
                vec![Val::from(id), Val::from(runner_key), Val::from(now_ms())],
            )?
            .is_empty())
    }

    /// Ends a run its runner holds: `done` once its record is stored, or `error` with the message. Whether the
    /// runner still held it.
    pub fn end_queued(&self, id: &str, runner_key: &str, end: &str, message: Option<&str>) -> Result<bool> {
        let n = self.execute(
            "UPDATE run_queue SET state = ?3, message = ?4, finished_at = ?5, lease_until = NULL \
             WHERE id = ?1 AND runner_key = ?2 AND state = 'running'",
            vec![
                Val::from(id),
                Val::from(runner_key),
                Val::from(end),
                Val::from(message),
                Val::from(now_ms()),
            ],
        )?;
        Ok(n == 1)
    }

    /// Cancels a queued run at once, or asks a running one's runner to stop it.
    pub fn cancel_queued(&self, id: &str) -> Result<Cancelled> {
        let now = now_ms();
        let dequeued = self.execute(
            "UPDATE run_queue SET state = 'cancelled', finished_at = ?2, message = 'cancelled before it started' \
             WHERE id = ?1 AND state = 'queued'",
            vec![Val::from(id), Val::from(now)],
        )?;
        if dequeued == 1 {
            return Ok(Cancelled::Dequeued);
        }
        let asked = self.execute(
            "UPDATE run_queue SET cancel = 1 WHERE id = ?1 AND state = 'running'",
            vec![Val::from(id)],
        )?;
        if asked == 1 {
            return Ok(Cancelled::Asked);
        }
        Ok(match self.queued_run(id)? {
            Some(_) => Cancelled::Over,
            None => Cancelled::NotFound,
        })
    }

    /// Marks `lost` every running run whose lease ran out; the ids and runners, each returned to one caller only
    /// (several servers may sweep at once).
    pub fn reap_lost(&self) -> Result<Vec<(String, Option<String>)>> {
        let now = now_ms();
        self.query(
            "UPDATE run_queue SET state = 'lost', message = ?2, finished_at = ?1, lease_until = NULL \
             WHERE state = 'running' AND lease_until < ?1 RETURNING id, runner",
            vec![Val::from(now), Val::from(RUNNER_LOST)],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.opt_text(1)?)))
        .collect()
    }

    /// Marks `lost` every running run, whatever its lease: for a server that is the only one on its store, whose
    /// own workers held them all before it stopped. The ids and workers.
    pub fn reap_all_running(&self) -> Result<Vec<(String, Option<String>)>> {
        let now = now_ms();
        self.query(
            "UPDATE run_queue SET state = 'lost', message = ?2, finished_at = ?1, lease_until = NULL \
             WHERE state = 'running' RETURNING id, runner",
            vec![Val::from(now), Val::from(RUNNER_LOST)],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.opt_text(1)?)))
        .collect()
    }

    /// Deletes a run's row of the queue and its events.
    pub fn forget_queued(&self, id: &str) -> Result<()> {
        self.db.borrow_mut().batch(&[
            ("DELETE FROM run_events WHERE run_id = ?1", vec![Val::from(id)]),
            ("DELETE FROM run_queue WHERE id = ?1", vec![Val::from(id)]),
        ])?;
        Ok(())
    }

    /// Adds a run's events (numbered by their sender; a number already stored is skipped, so a retried batch adds
    /// nothing twice).
    pub fn append_events(&self, id: &str, events: &[(i64, String, String)]) -> Result<()> {
        let statements: Vec<(&str, Vec<Val>)> = events
            .iter()
            .map(|(seq, name, data)| {
                (
                    "INSERT INTO run_events (run_id, seq, name, data) VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT (run_id, seq) DO NOTHING",
                    vec![
                        Val::from(id),
                        Val::from(*seq),
                        Val::from(name.as_str()),
                        Val::from(data.as_str()),
                    ],
                )
            })
            .collect();
        self.db.borrow_mut().batch(&statements)?;
        Ok(())
    }

    /// A run's events numbered after `after`, in order, at most `limit`.
    pub fn events_after(&self, id: &str, after: i64, limit: i64) -> Result<Vec<(i64, String, String)>> {
        self.query(
            "SELECT seq, name, data FROM run_events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            vec![Val::from(id), Val::from(after), Val::from(limit)],
        )?
        .iter()
        .map(|r| Ok((r.int(0)?, r.text(1)?, r.text(2)?)))
        .collect()
    }
}
