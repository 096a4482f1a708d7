//! Archive sources: `.zip` and `.skill` (zip), `.tar.gz`, `.tgz` and `.tar`. Every member name is checked before
//! anything is written; a member that would land outside the root rejects the whole archive.

use std::io::Read;
use std::path::Path;

use airlock_types::SourceKind;

use crate::stage::{publish, staging_dir, SafeTree, StagedSource};
use crate::{make_source, ImportOptions, PinInfo, SourceError, SourceSpec};

fn corrupt(path: &Path, err: impl std::fmt::Display) -> SourceError {
    SourceError::CorruptArchive {
        path: path.to_path_buf(),
        reason: err.to_string(),
    }
}

pub(crate) fn import_archive(
    path: &Path,
    spec: &SourceSpec,
    options: &ImportOptions,
) -> Result<StagedSource, SourceError> {
    let abs = fs_err::canonicalize(path)?;
    let tmp = staging_dir(options)?;
    let stage_root = tmp.path().join("tree");
    let mut tree = SafeTree::new(stage_root.clone(), abs.display().to_string(), options.limits)?;
    let mut skipped = Vec::new();
    let lower = abs.to_string_lossy().to_ascii_lowercase();
    if lower.ends_with(".zip") || lower.ends_with(".skill") {
        extract_zip(&abs, &mut tree, &mut skipped)?;
    } else {
        let file = fs_err::File::open(&abs)?;
        if lower.ends_with(".tar") {
            extract_tar(&abs, file, &mut tree, &mut skipped)?;
        } else {
            extract_tar(&abs, flate2::read::GzDecoder::new(file), &mut tree, &mut skipped)?;
        }
    }
    // Archives often wrap everything in one top folder: treat that folder as the root.
    let root = single_top_folder(&stage_root)?.unwrap_or(stage_root.clone());
    let subpath = root
        .strip_prefix(&stage_root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let source = make_source(
        SourceKind::Archive,
        spec,
        abs.display().to_string(),
        PinInfo::by_content(),
        subpath,
        &stage_root,
    )?;
    let dest = options
        .data_dir
        .join("sources")
        .join("archive")
        .join(&source.digest[7..]);
    if !dest.is_dir() {
        publish(&stage_root, &dest)?;
    }
    Ok(StagedSource {
        signature: None,
        source,
        root: dest,
        skipped,
    })
}

fn single_top_folder(root: &Path) -> Result<Option<std::path::PathBuf>, SourceError> {
    let entries: Vec<_> = fs_err::read_dir(root)?.collect::<Result<_, _>>()?;
    if entries.len() == 1 && entries[0].file_type()?.is_dir() && !root.join("SKILL.md").exists() {
        return Ok(Some(entries[0].path()));
    }
    Ok(None)
}

fn extract_zip(
    path: &Path,
    tree: &mut SafeTree,
    skipped: &mut Vec<(String, String)>,
) -> Result<(), SourceError> {
    let file = fs_err::File::open(path)?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| corrupt(path, e))?;
    // Check every name first, so a hostile member rejects the archive before anything is written.
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| corrupt(path, e))?;
        if entry.is_dir() && SafeTree::names_root(entry.name()) {
            continue;
        }
        tree.check_name(entry.name())?;
    }
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| corrupt(path, e))?;
        let name = entry.name().to_owned();
        let mode = entry.unix_mode().unwrap_or(0o644);
        if entry.is_dir() && SafeTree::names_root(&name) {
            continue;
        }
        if entry.is_dir() {
            tree.dir(&name)?;
        } else if mode & 0o170000 == 0o120000 {
            let mut target = String::new();
            entry
                .by_ref()
                .take(4096)
                .read_to_string(&mut target)
                .map_err(|e| corrupt(path, e))?;
            tree.symlink(&name, &target)?;
        } else if mode & 0o170000 == 0 || mode & 0o170000 == 0o100000 {
            let size = entry.size();
            tree.file(&name, size, mode & 0o111 != 0, &mut entry)
                .map_err(|e| match e {
                    SourceError::Io(io) if io.kind() == std::io::ErrorKind::InvalidData => corrupt(path, io),
                    other => other,
                })?;
        } else {
            skipped.push((name, "special file".to_owned()));
        }
    }
    Ok(())
}

fn extract_tar(
    path: &Path,
    reader: impl Read,
    tree: &mut SafeTree,
    skipped: &mut Vec<(String, String)>,
) -> Result<(), SourceError> {
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().map_err(|e| corrupt(path, e))? {
        let mut entry = entry.map_err(|e| corrupt(path, e))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        if kind == tar::EntryType::Directory && SafeTree::names_root(&name) {
            continue;
        }
        tree.check_name(&name)?;
        match kind {
            tar::EntryType::Directory => tree.dir(&name)?,
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let size = entry.header().size().map_err(|e| corrupt(path, e))?;
                let exec = entry.header().mode().map(|m| m & 0o111 != 0).unwrap_or(false);
                tree.file(&name, size, exec, &mut entry).map_err(|e| match e {
                    SourceError::Io(io) => corrupt(path, io),
                    other => other,
                })?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name_bytes()
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                tree.symlink(&name, &target)?;
            }
            tar::EntryType::Link => {
                return Err(SourceError::UnsafeEntry {
                    origin: path.display().to_string(),
                    name: name.escape_debug().to_string(),
                    reason: "hard links are not accepted in skill archives".to_owned(),
                })
            }
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader | tar::EntryType::GNULongName => {}
            _ => skipped.push((name, "special file".to_owned())),
        }
    }
    Ok(())
}
