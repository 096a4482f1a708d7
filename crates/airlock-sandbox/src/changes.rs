//! Reads a run's changes from the overlay upper layers once every process of the run is gone: added and modified
//! files are in the upper layer, deletions are whiteouts (0/0 character devices) and opaque directories (the
//! `user.overlay.opaque` attribute). Nothing here follows a symbolic link: the layers were written by the sandbox.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use airlock_types::{Change, ChangeKind};

/// Files larger than this are compared by size and modification only, not byte by byte.
const COMPARE_LIMIT: u64 = 64 << 20;

/// One copy-on-write workspace: its real folder, its path inside the sandbox and its upper layer.
pub struct Layer<'a> {
    pub lower: &'a Path,
    pub mount: &'a Path,
    pub upper: PathBuf,
}

/// Lists the changes of every layer; when `keep` is given, copies each added or modified file to
/// `keep/<index>/<path>` (symbolic links are recreated as links, never followed).
pub fn collect(layers: &[Layer<'_>], keep: Option<&Path>) -> std::io::Result<Vec<Change>> {
    let mut out = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        let keep = keep.map(|k| k.join(i.to_string()));
        walk(layer, Path::new(""), keep.as_deref(), &mut out)?;
    }
    out.sort_by(|a, b| (&a.mount, &a.path).cmp(&(&b.mount, &b.path)));
    Ok(out)
}

fn walk(layer: &Layer<'_>, rel: &Path, keep: Option<&Path>, out: &mut Vec<Change>) -> std::io::Result<()> {
    let dir = layer.upper.join(rel);
    let mut entries: Vec<_> = fs_err::read_dir(&dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(fs_err::DirEntry::file_name);
    let opaque = !rel.as_os_str().is_empty() && is_opaque(&dir);
    if opaque {
        // Everything the lower folder had here and the upper layer does not is gone.
        let names: std::collections::BTreeSet<_> = entries.iter().map(fs_err::DirEntry::file_name).collect();
        if let Ok(lower) = fs_err::read_dir(layer.lower.join(rel)) {
            for e in lower.flatten() {
                if !names.contains(&e.file_name()) {
                    deleted(layer, &rel.join(e.file_name()), out);
                }
            }
        }
    }
    for e in entries {
        let rel_path = rel.join(e.file_name());
        let up = e.path();
        let meta = fs_err::symlink_metadata(&up)?;
        let ft = meta.file_type();
        let lower = fs_err::symlink_metadata(layer.lower.join(&rel_path)).ok();
        if ft.is_char_device() && meta.rdev() == 0 {
            deleted(layer, &rel_path, out);
        } else if ft.is_dir() {
            if lower.as_ref().is_some_and(|l| !l.is_dir()) {
                deleted(layer, &rel_path, out);
            }
            walk(layer, &rel_path, keep, out)?;
        } else if ft.is_file() || ft.is_symlink() {
            let before = lower.as_ref().filter(|l| l.is_file() || l.is_symlink());
            if let Some(l) = before {
                if same(&layer.lower.join(&rel_path), l, &up, &meta) {
                    continue;
                }
            }
            if lower.as_ref().is_some_and(std::fs::Metadata::is_dir) {
                deleted(layer, &rel_path, out);
            }
            if let Some(keep) = keep {
                let dst = keep.join(&rel_path);
                if let Some(parent) = dst.parent() {
                    fs_err::create_dir_all(parent)?;
                }
                if ft.is_symlink() {
                    std::os::unix::fs::symlink(fs_err::read_link(&up)?, &dst)?;
                } else {
                    fs_err::copy(&up, &dst)?;
                    fs_err::set_permissions(&dst, std::fs::Permissions::from_mode(meta.mode() & 0o755))?;
                }
            }
            out.push(Change {
                mount: layer.mount.display().to_string(),
                path: rel_path.display().to_string(),
                kind: if before.is_some() {
                    ChangeKind::Modified
                } else {
                    ChangeKind::Added
                },
                file_type: if ft.is_symlink() { "symlink" } else { "file" }.into(),
                size_before: before.map(std::fs::Metadata::len),
                size_after: Some(meta.len()),
                mode_after: Some(meta.mode() & 0o7777),
            });
        }
    }
    Ok(())
}

/// Records `rel` as deleted: each file under it when the lower entry is a folder.
fn deleted(layer: &Layer<'_>, rel: &Path, out: &mut Vec<Change>) {
    let path = layer.lower.join(rel);
    let Ok(meta) = fs_err::symlink_metadata(&path) else {
        return;
    };
    if meta.is_dir() {
        if let Ok(entries) = fs_err::read_dir(&path) {
            for e in entries.flatten() {
                deleted(layer, &rel.join(e.file_name()), out);
            }
        }
        return;
    }
    out.push(Change {
        mount: layer.mount.display().to_string(),
        path: rel.display().to_string(),
        kind: ChangeKind::Deleted,
        file_type: if meta.is_symlink() { "symlink" } else { "file" }.into(),
        size_before: Some(meta.len()),
        size_after: None,
        mode_after: None,
    });
}

/// Whether a copied-up entry is unchanged: same kind, mode and content.
fn same(lower: &Path, lmeta: &std::fs::Metadata, upper: &Path, umeta: &std::fs::Metadata) -> bool {
    if lmeta.file_type().is_symlink() != umeta.file_type().is_symlink() {
        return false;
    }
    if lmeta.is_symlink() {
        return fs_err::read_link(lower).ok() == fs_err::read_link(upper).ok();
    }
    if lmeta.len() != umeta.len() || lmeta.mode() & 0o111 != umeta.mode() & 0o111 {
        return false;
    }
    if lmeta.len() > COMPARE_LIMIT {
        return lmeta.mtime() == umeta.mtime();
    }
    match (fs_err::read(lower), fs_err::read(upper)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn is_opaque(dir: &Path) -> bool {
    let Ok(path) = CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    let mut buf = [0u8; 4];
    for name in [c"user.overlay.opaque", c"trusted.overlay.opaque"] {
        // SAFETY: valid C strings and a buffer of the given size; lgetxattr does not follow links.
        let n = unsafe { libc::lgetxattr(path.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 && buf[0] == b'y' {
            return true;
        }
    }
    false
}
