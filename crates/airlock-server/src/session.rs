//! The login sessions of the web UI: random ids with their expiry, kept by the server (a session id is never the
//! token), and the constant-time comparison every secret the server checks goes through.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The cookie the login page sets: a session id, sent back only to this server.
pub(crate) const SESSION_COOKIE: &str = "airlock_session";
/// How long a login lasts.
pub(crate) const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// The most sessions kept at once; the oldest go first.
const MAX_SESSIONS: usize = 10_000;

/// The login sessions of this server: random ids with their expiry.
#[derive(Default)]
pub(crate) struct Sessions {
    by_id: Mutex<HashMap<String, Instant>>,
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        self.by_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a session; its id.
    pub(crate) fn start(&self) -> String {
        let id = airlock_sandbox::random_hex(32);
        let now = Instant::now();
        let mut map = self.lock();
        map.retain(|_, until| *until > now);
        if map.len() >= MAX_SESSIONS {
            if let Some(oldest) = map
                .iter()
                .min_by_key(|(_, until)| **until)
                .map(|(k, _)| k.clone())
            {
                map.remove(&oldest);
            }
        }
        map.insert(id.clone(), now + SESSION_TTL);
        id
    }

    /// Whether `id` is a live session (compared in constant time against each).
    pub(crate) fn valid(&self, id: &str) -> bool {
        let now = Instant::now();
        self.lock().iter().fold(false, |found, (k, until)| {
            found | (constant_time_eq(k.as_bytes(), id.as_bytes()) && *until > now)
        })
    }

    /// Ends a session.
    pub(crate) fn end(&self, id: &str) {
        self.lock().remove(id);
    }
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_start_end_and_are_not_guessable() {
        let s = Sessions::default();
        let a = s.start();
        let b = s.start();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(s.valid(&a) && s.valid(&b));
        assert!(!s.valid(""));
        assert!(!s.valid(&a[..63]));
        s.end(&a);
        assert!(!s.valid(&a) && s.valid(&b));
    }
}
