//! Settings shared by commands: the data directory, colour, and escaping of untrusted text.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;

/// The data directory: `--data-dir`, else `$AIRLOCK_DATA_DIR`, else `$XDG_DATA_HOME/airlock`, else
/// `~/.local/share/airlock`.
pub fn data_dir(flag: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = flag {
        return Ok(dir.clone());
    }
    if let Some(dir) = std::env::var_os("AIRLOCK_DATA_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("airlock"));
    }
    let home =
        std::env::var_os("HOME").context("cannot find a data directory: set AIRLOCK_DATA_DIR or HOME")?;
    Ok(PathBuf::from(home).join(".local/share/airlock"))
}

/// Whether stdout gets colour: only on a terminal, never with `NO_COLOR`.
pub fn color_stdout() -> airlock_scan::render::Color {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    if !no_color && std::io::stdout().is_terminal() {
        airlock_scan::render::Color::Always
    } else {
        airlock_scan::render::Color::Never
    }
}

/// Untrusted text (a message, a diff, output) made safe for a terminal: lines kept, everything else a skill could use
/// to move the cursor, change the terminal, reorder or hide text shown as visible escapes.
pub fn escape(text: &str) -> String {
    airlock_types::display::block(text)
}

/// One untrusted field (a path, an argument, an address) on one line: newlines escaped too.
pub fn field(text: &str) -> String {
    airlock_types::display::line(text)
}
