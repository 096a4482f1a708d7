//! Scratch folders under the system's temporary folder, named after the process that made them
//! (`airlock-run-<pid>-XXXXXX`), and the sweep of those a process left behind when it was killed before it could
//! remove them (a copy of the user's project among them): nothing of a run outlives it, a crash included.

use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// A new scratch folder `<prefix><pid>-XXXXXX` under the temporary folder, removed when dropped; first, the
/// folders of the same prefix that this user's processes that no longer run left behind are removed.
pub fn scratch_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let tmp = std::env::temp_dir();
    sweep(&tmp, prefix);
    tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(tmp)
}

/// Removes each folder `<prefix><pid>-…` of `dir` owned by this user whose process is gone. A process that still
/// runs (or that this user may not signal, so not its own) keeps its folders.
pub fn sweep(dir: &Path, prefix: &str) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    let me = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
            continue;
        };
        let Some(pid) = rest.split_once('-').and_then(|(p, _)| p.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me || pid <= 0 || alive(pid) {
            continue;
        }
        if let Err(e) = fs_err::remove_dir_all(entry.path()) {
            tracing::warn!("could not remove a scratch folder left behind: {e}");
        }
    }
}

/// Whether a process with this id runs (one this user may not signal runs too).
fn alive(pid: i32) -> bool {
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(e) => e != nix::errno::Errno::ESRCH,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_of_a_process_that_is_gone_are_swept_and_others_kept() {
        let tmp = tempfile::tempdir().unwrap();
        // A process that ran and ended: its id is free (unless reused at once, which only keeps its folder).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let left = tmp.path().join(format!("airlock-run-{gone}-abc123"));
        fs_err::create_dir_all(left.join("target/src")).unwrap();
        fs_err::write(left.join("target/src/main.rs"), "fn main() {}").unwrap();
        let mine = tmp
            .path()
            .join(format!("airlock-run-{}-def456", std::process::id()));
        fs_err::create_dir_all(&mine).unwrap();
        let other = tmp.path().join(format!("airlock-root-{gone}-ghi789"));
        fs_err::create_dir_all(&other).unwrap();
        let unnamed = tmp.path().join("airlock-run-xyz");
        fs_err::create_dir_all(&unnamed).unwrap();
        sweep(tmp.path(), "airlock-run-");
        assert!(!left.exists() || alive(i32::try_from(gone).unwrap()));
        assert!(mine.exists(), "a running process keeps its folder");
        assert!(other.exists(), "another prefix is not this sweep's");
        assert!(unnamed.exists(), "a folder without a process id is not touched");
    }
}
