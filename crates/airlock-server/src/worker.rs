//! The workers of one server: the same worker loop `airlock runner` machines run ([`airlock_worker`]), over this
//! server's store queue instead of HTTP. Every run a server accepts goes to the store's queue (SQLite on one
//! machine, PostgreSQL for a team); a server without runner machines starts as many workers as it has run slots,
//! each taking a slot before it claims, so a detonation (which holds a slot too) and the runs share the cap.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use airlock_protocol::{Job, RunnerEvent};
use airlock_store::queue::Lease;
use airlock_worker::{Prepared, Queue, QueueError, Renewed};
use tokio::sync::OwnedSemaphorePermit;

use crate::dispatch;
use crate::state::Shared;

/// The store's queue as this server's own workers see it.
pub(crate) struct StoreQueue {
    app: Shared,
    name: String,
    /// The key the runs this server's workers hold are known by in the queue.
    key: String,
    handle: tokio::runtime::Handle,
    /// The run slot each run in hand holds.
    permits: Mutex<HashMap<String, OwnedSemaphorePermit>>,
}

fn away(e: impl std::fmt::Display) -> QueueError {
    QueueError::Away(e.to_string())
}

impl StoreQueue {
    fn store(&self) -> Result<airlock_store::Store, QueueError> {
        self.app.config.store().map_err(away)
    }
}

/// Starts this server's workers: one a run slot, on threads of their own.
pub(crate) fn start(app: &Shared) {
    let queue = Arc::new(StoreQueue {
        app: app.clone(),
        name: "this server".into(),
        key: format!("server-{}", airlock_run::new_run_id()),
        handle: tokio::runtime::Handle::current(),
        permits: Mutex::default(),
    });
    for _ in 0..app.config.max_concurrent_runs.max(1) {
        let queue = queue.clone();
        std::thread::spawn(move || {
            let (stop, refused) = (AtomicBool::new(false), AtomicBool::new(false));
            // A worker that fails in a way nobody foresaw starts again (the run it held is taken back when its
            // lease runs out): the server never ends up with fewer workers than slots.
            loop {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    airlock_worker::slot(&*queue, &stop, &refused);
                }));
                if outcome.is_ok() {
                    return;
                }
                tracing::error!("a worker of this server failed; it starts again");
                std::thread::sleep(Duration::from_secs(1));
            }
        });
    }
}

impl Queue for StoreQueue {
    fn name(&self) -> &str {
        &self.name
    }

    fn claim(&self, wait: Duration) -> Result<Option<Job>, QueueError> {
        let deadline = Instant::now() + wait;
        let modes = [
            airlock_types::wire_name(&airlock_types::RunMode::Inspect),
            airlock_types::wire_name(&airlock_types::RunMode::DryRun),
            airlock_types::wire_name(&airlock_types::RunMode::Sandbox),
        ];
        let modes: Vec<&str> = modes.iter().map(String::as_str).collect();
        loop {
            // Registered before looking, so that a run queued meanwhile wakes this worker.
            let notify = self.app.queued.clone();
            let mut woken = std::pin::pin!(notify.notified());
            woken.as_mut().enable();
            let permit = self
                .handle
                .block_on(self.app.slots().acquire_owned())
                .map_err(away)?;
            let got = self
                .store()?
                .claim(&self.name, &self.key, &modes, dispatch::lease_ms(&self.app))
                .map_err(away)?;
            if let Some((id, job)) = got {
                let job: Job =
                    serde_json::from_str(&job).map_err(|e| QueueError::Rejected(500, e.to_string()))?;
                self.permits
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(id, permit);
                return Ok(Some(job));
            }
            drop(permit);
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            // Runs queued through another server are seen at the next look.
            let nap = (deadline - now).min(Duration::from_millis(500));
            self.handle.block_on(async {
                let _ = tokio::time::timeout(nap, woken).await;
            });
        }
    }

    fn renew(&self, run_id: &str) -> Result<Renewed, QueueError> {
        match self
            .store()?
            .renew(run_id, &self.key, dispatch::lease_ms(&self.app))
            .map_err(away)?
        {
            Lease::Held { cancel } => Ok(Renewed { cancel }),
            Lease::NotHeld => Err(QueueError::NotHeld),
        }
    }

    fn events(&self, run_id: &str, events: &[RunnerEvent], _patience: Duration) -> Result<(), QueueError> {
        let store = self.store()?;
        if !store.holds(run_id, &self.key).map_err(away)? {
            return Err(QueueError::NotHeld);
        }
        store
            .append_events(run_id, &dispatch::progress_events(events))
            .map_err(away)?;
        self.app.events_added.notify_waiters();
        Ok(())
    }

    fn prepare(&self, job: &Job, cancel: Arc<AtomicBool>) -> Result<Prepared, String> {
        let request = crate::runs::run_request(&self.app, job.run.clone(), &job.run_id, cancel)
            .map_err(|e| e.body.message)?;
        Ok(Prepared {
            request,
            settings: self.app.settings().clone(),
            store: self.app.config.store().map_err(|e| e.to_string())?,
        })
    }

    /// The record is in this server's store already (the run was carried out into it): the queue's row ends, and
    /// the record and the end are added to the run's events.
    fn finish(
        &self,
        run_id: &str,
        outcome: airlock_run::Outcome,
        _store: airlock_store::Store,
        _patience: Duration,
    ) -> Result<(), QueueError> {
        let record = outcome.record;
        let store = self.store()?;
        if !store
            .end_queued(run_id, &self.key, airlock_store::queue::state::DONE, None)
            .map_err(away)?
        {
            return Err(QueueError::NotHeld);
        }
        let status = airlock_types::wire_name(&record.status);
        let data = serde_json::to_string(&record).unwrap_or_default();
        store
            .append_events(run_id, &dispatch::final_events(Some(data), &status, ""))
            .map_err(away)?;
        self.app.events_added.notify_waiters();
        self.app.metrics.run_done(
            &status,
            record.observed.overall.as_str(),
            Some(Duration::from_millis(record.duration_ms)),
        );
        Ok(())
    }

    fn fail(&self, run_id: &str, message: &str, _patience: Duration) -> Result<(), QueueError> {
        let store = self.store()?;
        let message: String = message.chars().take(4000).collect();
        if !store
            .end_queued(
                run_id,
                &self.key,
                airlock_store::queue::state::ERROR,
                Some(&message),
            )
            .map_err(away)?
        {
            return Err(QueueError::NotHeld);
        }
        store
            .append_events(run_id, &dispatch::end_events("error", &message))
            .map_err(away)?;
        self.app.events_added.notify_waiters();
        Ok(())
    }

    fn release(&self, run_id: &str) {
        self.permits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(run_id);
    }
}
