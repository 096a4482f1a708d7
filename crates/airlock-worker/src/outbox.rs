//! A run's events on their way to the queue, numbered from 1 and sent in order.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use airlock_protocol::RunnerEvent;

use crate::{Queue, QueueError};

/// Events of one run sent at most, short of the queue's cap so that state events still fit (the queue adds the
/// final ones).
const MAX_EVENTS: i64 = airlock_protocol::MAX_RUN_EVENTS - 1_000;

/// The pending events of one run.
#[derive(Default)]
pub struct Outbox {
    /// The events not sent yet, and the number the last one pushed got.
    pending: Mutex<(Vec<RunnerEvent>, i64)>,
    /// Held while a batch is on its way, so that batches arrive in order (a follower reads them by number).
    sending: Mutex<()>,
}

impl Outbox {
    pub fn push(&self, name: &str, data: String) {
        let mut pending = self.lock();
        let (events, last) = &mut *pending;
        if *last >= MAX_EVENTS && name != "state" {
            return;
        }
        *last += 1;
        events.push(RunnerEvent {
            seq: *last,
            name: name.to_owned(),
            data,
        });
    }

    fn lock(&self) -> MutexGuard<'_, (Vec<RunnerEvent>, i64)> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends what is pending, in batches well under the queue's limit; a batch the queue could not be reached for
    /// is kept for the next flush, one it refused is dropped (it would be refused again). Whether all went.
    pub fn flush(&self, queue: &dyn Queue, run_id: &str, patience: Duration) -> bool {
        let _sending = self.sending.lock().unwrap_or_else(PoisonError::into_inner);
        let mut pending: VecDeque<RunnerEvent> = std::mem::take(&mut self.lock().0).into();
        let budget = airlock_protocol::MAX_EVENTS_BODY / 4;
        let mut all_sent = true;
        while !pending.is_empty() {
            let mut batch = Vec::new();
            let mut size = 0;
            while let Some(e) = pending.front() {
                let len = e.data.len() + 64;
                if !batch.is_empty() && size + len > budget {
                    break;
                }
                size += len;
                batch.extend(pending.pop_front());
            }
            match queue.events(run_id, &batch, patience) {
                Ok(()) => {}
                Err(QueueError::NotHeld | QueueError::Refused(_)) => return false,
                Err(QueueError::Rejected(code, message)) => {
                    all_sent = false;
                    tracing::warn!("events of {run_id} refused ({code}): {message}");
                }
                Err(QueueError::Away(_)) => {
                    // Kept, in order, before whatever came meanwhile.
                    let back = &mut self.lock().0;
                    let later = std::mem::take(back);
                    back.extend(batch);
                    back.extend(pending);
                    back.extend(later);
                    return false;
                }
            }
        }
        all_sent
    }
}
