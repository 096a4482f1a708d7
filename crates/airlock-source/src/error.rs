use std::path::PathBuf;

/// Why a source could not be imported. Each message names the input and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("`{input}` is not a source airlock understands: {reason}")]
    BadInput { input: String, reason: String },
    #[error("{path} does not exist: give a folder, an archive (.zip, .tar.gz, .skill) or a URL")]
    NotFound { path: PathBuf },
    #[error("could not fetch {url}: {reason}")]
    Fetch { url: String, reason: String },
    #[error("refused to fetch {url}: {reason}")]
    Refused { url: String, reason: String },
    #[error("{url} has no branch, tag or commit `{reference}`")]
    UnknownRef { url: String, reference: String },
    #[error("path `{subpath}` does not exist at commit {commit}")]
    MissingSubpath { subpath: String, commit: String },
    #[error("the source is too large: {what} exceeds the limit of {limit} ({hint})")]
    TooLarge {
        what: String,
        limit: String,
        hint: &'static str,
    },
    #[error("unsafe entry `{name}` in {origin}: {reason}; nothing was extracted")]
    UnsafeEntry {
        origin: String,
        name: String,
        reason: String,
    },
    #[error("{path} is not a readable archive: {reason}")]
    CorruptArchive { path: PathBuf, reason: String },
    #[error("no space left while staging into {path}: free some disk or run `airlock gc`")]
    DiskFull { path: PathBuf },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl SourceError {
    /// Maps an I/O error while writing staged files, so a full disk says so.
    pub(crate) fn from_write(err: std::io::Error, path: PathBuf) -> Self {
        if err.raw_os_error() == Some(libc_enospc()) {
            Self::DiskFull { path }
        } else {
            Self::Io(err)
        }
    }
}

const fn libc_enospc() -> i32 {
    28
}
