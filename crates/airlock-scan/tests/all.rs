#![expect(clippy::unwrap_used, reason = "test setup panics with the failing step")]

mod suite;
