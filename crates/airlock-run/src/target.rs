//! The target a skill works on: always a snapshot copy (the bundled sample app, a folder or a git URL staged the
//! same safe way as skills), never the user's live folder.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use airlock_source::SourceSpec;
use airlock_types::TargetInfo;

use crate::{ImportSettings, RunError};

/// The bundled sample project: a small React app.
pub const BLANK: &[(&str, &str)] = &[
    ("package.json", include_str!("../assets/blank/package.json")),
    ("README.md", include_str!("../assets/blank/README.md")),
    ("index.html", include_str!("../assets/blank/index.html")),
    (".gitignore", include_str!("../assets/blank/.gitignore")),
    ("src/main.jsx", include_str!("../assets/blank/src/main.jsx")),
    ("src/App.jsx", include_str!("../assets/blank/src/App.jsx")),
    ("src/todos.js", include_str!("../assets/blank/src/todos.js")),
    (
        "src/todos.test.js",
        include_str!("../assets/blank/src/todos.test.js"),
    ),
];

/// A snapshot of the target.
pub struct Target {
    pub info: TargetInfo,
    /// The snapshot (never the user's folder).
    pub root: PathBuf,
}

/// Where the bundled sample app is written (once) in a data folder.
pub fn blank_dir(data: &Path) -> PathBuf {
    data.join("targets").join("blank-v1")
}

/// Snapshots `target`: `blank`, a folder or a git URL.
pub fn prepare(target: &str, settings: &ImportSettings) -> Result<Target, RunError> {
    let data = &settings.data_dir;
    let (kind, spec) = if target == "blank" {
        let dir = blank_dir(data);
        if !dir.join("package.json").exists() {
            // Written aside and renamed into place, so a run importing it never sees it half-made; several runs
            // (a server's) may race to write it, and the first rename wins.
            let tmp = tempfile::Builder::new()
                .prefix("blank-v1.tmp")
                .tempdir_in(data.join("targets").as_path())
                .or_else(|_| {
                    fs_err::create_dir_all(data.join("targets"))?;
                    tempfile::Builder::new()
                        .prefix("blank-v1.tmp")
                        .tempdir_in(data.join("targets"))
                })?;
            for (path, text) in BLANK {
                let p = tmp.path().join(path);
                if let Some(parent) = p.parent() {
                    fs_err::create_dir_all(parent)?;
                }
                fs_err::write(&p, text)?;
            }
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))?;
            // A folder left without its marker by an older crash is replaced; a complete one is never touched.
            if dir.exists() && !dir.join("package.json").exists() {
                let _ = fs_err::remove_dir_all(&dir);
            }
            if std::fs::rename(tmp.path(), &dir).is_err() && !dir.join("package.json").exists() {
                return Err(RunError::Io(std::io::Error::other(format!(
                    "cannot write the sample app to {}",
                    dir.display()
                ))));
            }
        }
        ("blank", SourceSpec::Folder(dir))
    } else {
        let spec = SourceSpec::parse_with_github_base(target, &settings.github_base)
            .map_err(|e| RunError::Usage(format!("target {}: {e}", airlock_types::display::line(target))))?;
        match &spec {
            SourceSpec::Folder(_) => ("path", spec),
            SourceSpec::GitHub(_) | SourceSpec::Git { .. } => ("git", spec),
            SourceSpec::Archive(_) => {
                return Err(RunError::Usage(
                    "the target is `blank`, a folder or a git URL, not an archive".into(),
                ))
            }
        }
    };
    let staged = airlock_source::import(&spec, &settings.options()).map_err(|error| RunError::Import {
        input: format!("the target {}", airlock_types::display::line(target)),
        error,
    })?;
    Ok(Target {
        info: TargetInfo {
            kind: kind.into(),
            input: if kind == "blank" {
                "blank".into()
            } else {
                staged.source.input.clone()
            },
            commit: staged.source.commit.as_ref().map(ToString::to_string),
            digest: staged.source.digest.clone(),
        },
        root: staged.scan_root(),
    })
}

/// Copies a tree (files and folders only; links are recreated as links, never followed).
pub fn copy_tree(from: &Path, to: &Path, owner: Option<u32>) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    fs_err::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    if let Some(uid) = owner {
        std::os::unix::fs::lchown(to, Some(uid), Some(uid))?;
    }
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let meta = fs_err::symlink_metadata(&src)?;
        if meta.is_dir() {
            copy_tree(&src, &dst, owner)?;
            continue;
        }
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(fs_err::read_link(&src)?, &dst)?;
        } else if meta.is_file() {
            fs_err::copy(&src, &dst)?;
            fs_err::set_permissions(&dst, std::fs::Permissions::from_mode(meta.mode() & 0o755 | 0o644))?;
        } else {
            continue;
        }
        if let Some(uid) = owner {
            std::os::unix::fs::lchown(&dst, Some(uid), Some(uid))?;
        }
    }
    Ok(())
}
