//! Runs the server holds in memory while they are queued or running: their state, a cancel flag, and the log of
//! their events, which a subscriber gets from the start and then live.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

/// Where a run the server accepted is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Queued,
    Running,
    /// Finished and stored (or refused before anything ran): the record's status.
    Done(String),
    /// Cancelled while it waited: it never ran and nothing was stored.
    Cancelled,
    /// airlock could not carry it out: the message.
    Error(String),
}

impl State {
    pub fn name(&self) -> String {
        match self {
            Self::Queued => "queued".into(),
            Self::Running => "running".into(),
            Self::Done(status) => status.clone(),
            Self::Cancelled => "cancelled".into(),
            Self::Error(_) => "error".into(),
        }
    }

    pub fn is_over(&self) -> bool {
        matches!(self, Self::Done(_) | Self::Cancelled | Self::Error(_))
    }
}

/// One event as sent over SSE: its name and JSON data.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: &'static str,
    pub data: String,
}

/// A run the server accepted.
pub struct Live {
    pub id: String,
    pub cancel: Arc<AtomicBool>,
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Event>,
}

struct Inner {
    state: State,
    log: Vec<Event>,
}

/// Events kept per run for late subscribers; the record always ends the log.
const MAX_LOG: usize = 20_000;

impl Live {
    pub fn new(id: String) -> Arc<Self> {
        let (tx, _) = broadcast::channel(1024);
        Arc::new(Self {
            id,
            cancel: Arc::new(AtomicBool::new(false)),
            inner: Mutex::new(Inner {
                state: State::Queued,
                log: Vec::new(),
            }),
            tx,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn state(&self) -> State {
        self.lock().state.clone()
    }

    /// Sets the state and logs it as a `state` event.
    pub fn set_state(&self, state: State) {
        let data = serde_json::json!({"state": state.name(), "message": match &state {
            State::Error(m) => m.clone(),
            _ => String::new(),
        }})
        .to_string();
        let mut inner = self.lock();
        inner.state = state;
        self.push(&mut inner, Event { name: "state", data });
    }

    /// Logs an event and sends it to the live subscribers.
    pub fn emit(&self, name: &'static str, data: String) {
        let mut inner = self.lock();
        self.push(&mut inner, Event { name, data });
    }

    fn push(&self, inner: &mut Inner, event: Event) {
        // The final record is always kept, whatever the log holds already.
        if inner.log.len() < MAX_LOG || event.name == "record" {
            inner.log.push(event.clone());
        }
        let _ = self.tx.send(event);
    }

    /// The events so far, and a receiver for the ones after them (taken under one lock, so nothing falls between).
    pub fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>, bool) {
        let inner = self.lock();
        (inner.log.clone(), self.tx.subscribe(), inner.state.is_over())
    }
}
