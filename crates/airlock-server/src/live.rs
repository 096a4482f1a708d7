//! A run's events as a follower gets them over Server-Sent Events: read from the store's queue, whichever worker
//! (this server's own or a runner machine) wrote them.

/// One event as sent over SSE: its name, JSON data, and its number in the run's stored events (the SSE `id`, which
/// a client that reconnects, to this server or another, gives back as `Last-Event-ID` to miss nothing).
#[derive(Debug, Clone)]
pub struct Event {
    pub name: &'static str,
    pub data: String,
    pub id: Option<i64>,
}
