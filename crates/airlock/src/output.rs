//! Standard output for what a command prints. A reader that went away (`airlock scan --json | head`) ends the
//! output, not the command: nothing more is written, the command finishes (a run is still stored) and exits with its
//! own code, as ripgrep does. Any other failure to write (a full disk under `> report.json`) stops the output too and
//! is reported when the command ends, with airlock's own exit code.

use std::io::{self, Write};
use std::sync::Mutex;

/// The first failure to write, if any; once set, nothing more is written.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Writes to standard output unless an earlier write failed.
pub fn write(args: std::fmt::Arguments<'_>) {
    let mut failed = FAILED.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_some() {
        return;
    }
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        *failed = Some(err);
    }
}

/// The failure to write that is the command's to report: none for a reader that went away.
pub fn failure() -> Option<io::Error> {
    let failed = FAILED.lock().unwrap_or_else(|e| e.into_inner()).take();
    failed.filter(|err| err.kind() != io::ErrorKind::BrokenPipe)
}

/// Whether a command's error is a write to a reader that went away (`io::Write` on standard output with `?`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
