//! The one way a run is carried out once it is queued: a worker claims it from a [`Queue`], runs it with
//! [`airlock_run::execute`], renews its lease while it runs (a lease that is gone stops the run, and its record is
//! not handed back), streams its events in order, stops it when someone cancels it, and hands back its record, or
//! why it could not be carried out.
//!
//! The queue is a small trait with two implementations: the store's own queue, for the workers inside one
//! `airlock serve` (in the server crate, next to the routes that share its store calls), and [`http::HttpQueue`],
//! for `airlock runner` machines that reach the API servers with a runner token. The loop does not know which it
//! has.

pub mod http;
mod outbox;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use airlock_protocol::{Job, StateEvent};

pub use outbox::Outbox;

/// Why a queue could not do what a worker asked.
#[derive(Debug)]
pub enum QueueError {
    /// The queue refuses this worker (a runner token revoked): every slot stops.
    Refused(String),
    /// The worker does not hold the run any more (its lease ran out, or someone else's): it stops the run.
    NotHeld,
    /// The queue answered that the request is wrong: its status and why.
    Rejected(u16, String),
    /// The queue could not be reached (a server or its database away): tried again later.
    Away(String),
}

impl std::fmt::Display for QueueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(m) => write!(f, "refused: {}", airlock_types::display::line(m)),
            Self::NotHeld => write!(f, "the run is not this worker's any more"),
            Self::Rejected(code, m) => write!(f, "{code}: {}", airlock_types::display::line(m)),
            Self::Away(m) => write!(f, "{}", airlock_types::display::line(m)),
        }
    }
}

/// A renewed lease: whether someone asked for the run to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renewed {
    pub cancel: bool,
}

/// What a claimed run needs to be carried out here: the library's request, the import settings, and the store
/// its record is written to.
pub struct Prepared {
    pub request: airlock_run::RunRequest,
    pub settings: airlock_run::ImportSettings,
    pub store: airlock_store::Store,
}

/// Where runs come from and go back to.
pub trait Queue: Send + Sync {
    /// The worker's name, shown on the runs it holds.
    fn name(&self) -> &str;
    /// The next run this worker may carry out, waiting up to `wait` for one.
    fn claim(&self, wait: Duration) -> Result<Option<Job>, QueueError>;
    /// Renews the lease on a run this worker holds.
    fn renew(&self, run_id: &str) -> Result<Renewed, QueueError>;
    /// Adds a batch of a run's events (numbered from 1; a batch sent twice adds nothing twice).
    fn events(
        &self,
        run_id: &str,
        events: &[airlock_protocol::RunnerEvent],
        patience: Duration,
    ) -> Result<(), QueueError>;
    /// The request for a claimed run (its source fetched when it was uploaded), with `cancel` as its stop flag.
    fn prepare(&self, job: &Job, cancel: Arc<AtomicBool>) -> Result<Prepared, String>;
    /// Hands back a run that was carried out: its record, its scan and its artifacts from `store`.
    fn finish(
        &self,
        run_id: &str,
        outcome: airlock_run::Outcome,
        store: airlock_store::Store,
        patience: Duration,
    ) -> Result<(), QueueError>;
    /// Says why a run could not be carried out.
    fn fail(&self, run_id: &str, message: &str, patience: Duration) -> Result<(), QueueError>;
    /// Called when the worker is done with a run, however it ended (a slot it held is free again).
    fn release(&self, _run_id: &str) {}
    /// Says what the worker does with a run (`running <id>`, `<id> succeeded`): to its operator's terminal for a
    /// runner machine, to the log for a server's own workers.
    fn tell(&self, message: &str) {
        tracing::info!("{}: {message}", airlock_types::display::line(self.name()));
    }
}

/// How long a hand-back is retried while the queue is away (a database restarting), within what a lease allows a
/// worker to be gone.
pub const HAND_BACK_PATIENCE: Duration = Duration::from_secs(120);

/// One slot: claims a run, carries it out, and again, until `stop` is set (no more claims; the run in hand is
/// finished first) or the queue refuses this worker (then `refused` is set too).
pub fn slot(queue: &dyn Queue, stop: &AtomicBool, refused: &AtomicBool) {
    let mut wait = Duration::from_millis(200);
    while !refused.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
        match queue.claim(Duration::from_secs(10)) {
            Ok(Some(job)) => {
                wait = Duration::from_millis(200);
                carry_out(queue, job);
            }
            Ok(None) => wait = Duration::from_millis(200),
            Err(QueueError::Refused(_)) => refused.store(true, Ordering::Relaxed),
            Err(e) => {
                tracing::warn!("claiming a run: {e}");
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Carries out one claimed run and hands it back.
pub fn carry_out(queue: &dyn Queue, job: Job) {
    let id = job.run_id.as_str();
    queue.tell(&format!("running {id}"));
    let cancel = Arc::new(AtomicBool::new(false));
    let lost = AtomicBool::new(false);
    let done = Stop::default();
    let outbox = Arc::new(Outbox::default());
    outbox.push(
        "state",
        serde_json::to_string(&StateEvent {
            state: "running".into(),
            message: format!("on {}", queue.name()),
        })
        .unwrap_or_default(),
    );
    // The lease, renewed at a third of its length; a run whose lease is gone is stopped.
    let lease = Duration::from_millis(job.lease_ms.max(300) / 3);
    let (cancel2, lost2, done2, outbox2) = (&*cancel, &lost, &done, &*outbox);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            while !done2.wait(lease) {
                match queue.renew(id) {
                    Ok(r) => {
                        if r.cancel {
                            cancel2.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(QueueError::NotHeld | QueueError::Refused(_)) => {
                        lost2.store(true, Ordering::Relaxed);
                        cancel2.store(true, Ordering::Relaxed);
                    }
                    Err(e) => tracing::warn!("renewing the lease on {id}: {e}"),
                }
            }
        });
        // The events, sent every quarter second while the run goes.
        scope.spawn(move || {
            while !done2.wait(Duration::from_millis(250)) {
                outbox2.flush(queue, id, Duration::ZERO);
            }
        });
        let result = execute(queue, &job, &cancel, &outbox);
        if lost.load(Ordering::Relaxed) {
            queue.tell(&format!("lost the lease on {id}; its record is not handed back"));
        } else {
            hand_back(queue, id, result, &outbox);
        }
        done.stop();
    });
    queue.release(id);
}

/// Runs the job: its record is written to the store the queue gave.
fn execute(
    queue: &dyn Queue,
    job: &Job,
    cancel: &Arc<AtomicBool>,
    outbox: &Arc<Outbox>,
) -> Result<(airlock_run::Outcome, airlock_store::Store), String> {
    let Prepared {
        request,
        settings,
        mut store,
    } = queue.prepare(job, cancel.clone())?;
    let sink = outbox.clone();
    let on_event: airlock_run::OnEvent = Arc::new(move |event: airlock_run::RunEvent| {
        let name = match &event {
            airlock_run::RunEvent::Phase { .. } => "phase",
            airlock_run::RunEvent::Sandbox { .. } => "sandbox",
        };
        sink.push(name, serde_json::to_string(&event).unwrap_or_default());
    });
    let outcome =
        airlock_run::execute(&request, &settings, &mut store, &on_event).map_err(|e| e.to_string())?;
    Ok((outcome, store))
}

/// Hands the run back: its events, then its record (the queue adds the record and the end to its events); or why
/// it could not be carried out.
fn hand_back(
    queue: &dyn Queue,
    id: &str,
    result: Result<(airlock_run::Outcome, airlock_store::Store), String>,
    outbox: &Outbox,
) {
    match result {
        Ok((outcome, store)) => {
            outbox.flush(queue, id, HAND_BACK_PATIENCE);
            let status = airlock_types::wire_name(&outcome.record.status);
            match queue.finish(id, outcome, store, HAND_BACK_PATIENCE) {
                Ok(()) => queue.tell(&format!("{id} {status}")),
                Err(e) => queue.tell(&format!("handing back {id}: {e}")),
            }
        }
        Err(message) => {
            outbox.flush(queue, id, HAND_BACK_PATIENCE);
            if let Err(e) = queue.fail(id, &message, HAND_BACK_PATIENCE) {
                queue.tell(&format!("reporting that {id} failed: {e}"));
            }
            queue.tell(&format!(
                "{id} could not be carried out: {}",
                airlock_types::display::line(&message)
            ));
        }
    }
}

/// A flag the threads of a run wait on, set when the run is over (they stop at once, not at their next tick).
#[derive(Default)]
struct Stop {
    over: Mutex<bool>,
    changed: Condvar,
}

impl Stop {
    fn stop(&self) {
        *self.over.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.changed.notify_all();
    }

    /// Waits up to `timeout`: whether the run is over.
    fn wait(&self, timeout: Duration) -> bool {
        let over = self.over.lock().unwrap_or_else(PoisonError::into_inner);
        let (over, _) = self
            .changed
            .wait_timeout_while(over, timeout, |over| !*over)
            .unwrap_or_else(PoisonError::into_inner);
        *over
    }
}
