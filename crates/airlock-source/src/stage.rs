//! Staging: writing a source's files into a folder of the data directory, safely and within bounds.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use airlock_types::{SkillSource, SourceKind};

use crate::{make_source, ImportOptions, PinInfo, SourceError, SourceSpec};

/// Bounds on what an import may bring in.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_files: usize,
    pub max_total_bytes: u64,
    pub max_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_files: 20_000,
            max_total_bytes: 200 * 1024 * 1024,
            max_file_bytes: 50 * 1024 * 1024,
        }
    }
}

const LIMIT_HINT: &str =
    "point at the skill's folder, or raise --max-files / --max-bytes if you trust the size";

/// A source whose files sit in a folder, pinned.
#[derive(Debug, Clone)]
pub struct StagedSource {
    pub source: SkillSource,
    /// The staged copy of the whole repository, folder or archive.
    pub root: PathBuf,
    /// Submodules and other entries that were not staged, with the reason.
    pub skipped: Vec<(String, String)>,
    /// The commit's signature, for a git source whose commit is signed.
    pub signature: Option<CommitSignature>,
}

/// A signed commit's signature (an SSH signature, `-----BEGIN SSH SIGNATURE-----`, or an OpenPGP one), the exact
/// bytes it signs (the commit object without its signature), and the committer's time (when a signer's key must
/// have been valid).
#[derive(Debug, Clone)]
pub struct CommitSignature {
    pub armored: String,
    pub signed: Vec<u8>,
    pub time: i64,
}

impl StagedSource {
    /// The folder the user pointed at.
    pub fn scan_root(&self) -> PathBuf {
        if self.source.subpath.is_empty() {
            self.root.clone()
        } else {
            self.root.join(&self.source.subpath)
        }
    }
}

/// Writes entries under a root. Refuses names that escape it and never writes through a symlink: a file or
/// folder is only created inside a folder this writer made itself.
pub(crate) struct SafeTree {
    root: PathBuf,
    origin: String,
    dirs: HashSet<String>,
    taken: HashSet<String>,
    limits: Limits,
    files: usize,
    bytes: u64,
}

impl SafeTree {
    pub(crate) fn new(root: PathBuf, origin: String, limits: Limits) -> Result<Self, SourceError> {
        fs_err::create_dir_all(&root)?;
        let mut dirs = HashSet::new();
        dirs.insert(String::new());
        Ok(Self {
            root,
            origin,
            dirs,
            taken: HashSet::new(),
            limits,
            files: 0,
            bytes: 0,
        })
    }

    fn unsafe_entry(&self, name: &str, reason: &str) -> SourceError {
        SourceError::UnsafeEntry {
            origin: self.origin.clone(),
            name: name.escape_debug().to_string(),
            reason: reason.to_owned(),
        }
    }

    /// Whether a directory entry names the root itself (`./`, as `tar -C DIR .` writes first): nothing to make.
    pub(crate) fn names_root(name: &str) -> bool {
        !name.is_empty() && !name.starts_with('/') && name.split('/').all(|p| p.is_empty() || p == ".")
    }

    /// Checks a member name and returns it normalised (`a/b/c`), or an error if it could escape.
    pub(crate) fn check_name(&self, name: &str) -> Result<String, SourceError> {
        if name.starts_with('/') {
            return Err(self.unsafe_entry(name, "absolute path"));
        }
        let mut parts = Vec::new();
        for part in name.split('/') {
            match part {
                "" | "." => continue,
                ".." => return Err(self.unsafe_entry(name, "`..` would leave the root")),
                p if p.contains('\0') || p.contains('\\') => {
                    return Err(self.unsafe_entry(name, "NUL or backslash in a name"))
                }
                p if p.eq_ignore_ascii_case(".git") => {
                    return Err(self.unsafe_entry(name, "`.git` inside the tree"))
                }
                p => parts.push(p),
            }
        }
        if parts.is_empty() {
            return Err(self.unsafe_entry(name, "empty name"));
        }
        Ok(parts.join("/"))
    }

    fn count(&mut self, size: u64, name: &str) -> Result<(), SourceError> {
        self.files += 1;
        if self.files > self.limits.max_files {
            return Err(SourceError::TooLarge {
                what: "the number of files".to_owned(),
                limit: self.limits.max_files.to_string(),
                hint: LIMIT_HINT,
            });
        }
        self.add_bytes(size, name)
    }

    fn add_bytes(&mut self, size: u64, name: &str) -> Result<(), SourceError> {
        self.bytes += size;
        if size > self.limits.max_file_bytes {
            return Err(SourceError::TooLarge {
                what: format!("file `{}` ({size} bytes)", name.escape_debug()),
                limit: format!("{} bytes per file", self.limits.max_file_bytes),
                hint: LIMIT_HINT,
            });
        }
        if self.bytes > self.limits.max_total_bytes {
            return Err(SourceError::TooLarge {
                what: "the total size".to_owned(),
                limit: format!("{} bytes", self.limits.max_total_bytes),
                hint: LIMIT_HINT,
            });
        }
        Ok(())
    }

    /// Creates the folders leading to `rel` (already checked) and returns its full path.
    fn prepare(&mut self, rel: &str) -> Result<PathBuf, SourceError> {
        if !self.taken.insert(rel.to_owned()) {
            return Err(self.unsafe_entry(rel, "duplicate entry"));
        }
        let mut current = String::new();
        let components: Vec<&str> = rel.split('/').collect();
        for part in &components[..components.len() - 1] {
            if !current.is_empty() {
                current.push('/');
            }
            current.push_str(part);
            if !self.dirs.contains(&current) {
                if self.taken.contains(&current) {
                    return Err(self.unsafe_entry(rel, "a parent is a file or symlink"));
                }
                let path = self.root.join(&current);
                fs_err::create_dir(&path).map_err(|e| SourceError::from_write(e, path.clone()))?;
                self.dirs.insert(current.clone());
                self.taken.insert(current.clone());
            }
        }
        Ok(self.root.join(rel))
    }

    pub(crate) fn dir(&mut self, name: &str) -> Result<(), SourceError> {
        let rel = self.check_name(name)?;
        if self.dirs.contains(&rel) {
            return Ok(());
        }
        let path = self.prepare(&rel)?;
        fs_err::create_dir(&path).map_err(|e| SourceError::from_write(e, path.clone()))?;
        self.dirs.insert(rel);
        Ok(())
    }

    /// Writes a regular file from a reader, enforcing the byte bounds while copying.
    pub(crate) fn file(
        &mut self,
        name: &str,
        declared_size: u64,
        executable: bool,
        reader: &mut dyn std::io::Read,
    ) -> Result<(), SourceError> {
        let rel = self.check_name(name)?;
        self.count(declared_size, &rel)?;
        let path = self.prepare(&rel)?;
        let mode = if executable { 0o755 } else { 0o644 };
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc_o_nofollow())
            .open(&path)
            .map_err(|e| SourceError::from_write(e, path.clone()))?;
        // Never trust the declared size: copy at most one byte past the per-file bound.
        let mut limited = std::io::Read::take(&mut *reader, self.limits.max_file_bytes + 1);
        let copied =
            std::io::copy(&mut limited, &mut out).map_err(|e| SourceError::from_write(e, path.clone()))?;
        if copied > declared_size {
            self.add_bytes(0, &rel)?;
            self.add_bytes(copied - declared_size, &rel)?;
        }
        if copied > self.limits.max_file_bytes {
            return Err(SourceError::TooLarge {
                what: format!("file `{}`", rel.escape_debug()),
                limit: format!("{} bytes per file", self.limits.max_file_bytes),
                hint: LIMIT_HINT,
            });
        }
        out.flush()
            .map_err(|e| SourceError::from_write(e, path.clone()))?;
        Ok(())
    }

    /// Creates a symlink as a symlink. The target is stored verbatim and never followed here.
    pub(crate) fn symlink(&mut self, name: &str, target: &str) -> Result<(), SourceError> {
        let rel = self.check_name(name)?;
        self.count(target.len() as u64, &rel)?;
        if target.is_empty() || target.contains('\0') {
            return Err(self.unsafe_entry(&rel, "empty symlink target"));
        }
        let path = self.prepare(&rel)?;
        std::os::unix::fs::symlink(target, &path).map_err(|e| SourceError::from_write(e, path.clone()))?;
        Ok(())
    }
}

const fn libc_o_nofollow() -> i32 {
    0o400000
}

/// Moves a finished staging folder into place atomically; if another import won the race, keeps theirs.
pub(crate) fn publish(tmp: &Path, dest: &Path) -> Result<(), SourceError> {
    if let Some(parent) = dest.parent() {
        fs_err::create_dir_all(parent)?;
    }
    match std::fs::rename(tmp, dest) {
        Ok(()) => Ok(()),
        Err(_) if dest.is_dir() => {
            let _ = fs_err::remove_dir_all(tmp);
            Ok(())
        }
        Err(e) => Err(SourceError::from_write(e, dest.to_path_buf())),
    }
}

pub(crate) fn staging_dir(options: &ImportOptions) -> Result<tempfile::TempDir, SourceError> {
    let base = options.data_dir.join("tmp");
    fs_err::create_dir_all(&base)?;
    Ok(tempfile::Builder::new().prefix("stage-").tempdir_in(&base)?)
}

/// Snapshots a local folder: regular files copied, symlinks kept as symlinks, nothing followed.
pub(crate) fn import_folder(
    path: &Path,
    spec: &SourceSpec,
    options: &ImportOptions,
) -> Result<StagedSource, SourceError> {
    let abs = fs_err::canonicalize(path)?;
    // Fast path: the same content was staged before (the cache is keyed by the digest of its own content).
    // Cached copies are published whole by a rename, so the folder named by a digest holds that content.
    if let Ok(digested) = digest_tree(&abs) {
        let cached = options
            .data_dir
            .join("sources")
            .join("folder")
            .join(&digested.0[7..]);
        if cached.is_dir() {
            let source = crate::describe(
                SourceKind::Folder,
                spec,
                abs.display().to_string(),
                PinInfo::by_content(),
                String::new(),
                digested,
            );
            return Ok(StagedSource {
                signature: None,
                source,
                root: cached,
                skipped: Vec::new(),
            });
        }
    }
    let tmp = staging_dir(options)?;
    let stage_root = tmp.path().join("tree");
    let mut tree = SafeTree::new(stage_root.clone(), abs.display().to_string(), options.limits)?;
    let mut skipped = Vec::new();
    let mut stack = vec![(abs.clone(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let mut entries: Vec<_> = fs_err::read_dir(&dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                skipped.push((
                    format!("{rel}/{}", name.to_string_lossy()),
                    "name is not UTF-8".to_owned(),
                ));
                continue;
            };
            let child_rel = if rel.is_empty() {
                name.to_owned()
            } else {
                format!("{rel}/{name}")
            };
            if name == ".git" {
                skipped.push((child_rel, "git metadata".to_owned()));
                continue;
            }
            let meta = fs_err::symlink_metadata(entry.path())?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                let target = fs_err::read_link(entry.path())?;
                tree.symlink(&child_rel, &target.to_string_lossy())?;
            } else if ft.is_dir() {
                tree.dir(&child_rel)?;
                stack.push((entry.path(), child_rel));
            } else if ft.is_file() {
                let mut file = fs_err::File::open(entry.path())?;
                let exec = meta.permissions().mode() & 0o111 != 0;
                tree.file(&child_rel, meta.len(), exec, &mut file)?;
            } else {
                skipped.push((child_rel, "not a regular file, folder or symlink".to_owned()));
            }
        }
    }
    let source = make_source(
        SourceKind::Folder,
        spec,
        abs.display().to_string(),
        PinInfo::by_content(),
        String::new(),
        &stage_root,
    )?;
    let dest = options
        .data_dir
        .join("sources")
        .join("folder")
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

/// A SHA-256 over every entry's path, type and content, and the sorted list of paths.
pub(crate) fn digest_tree(root: &Path) -> Result<(String, Vec<String>), SourceError> {
    let mut entries = Vec::new();
    collect(root, "", &mut entries)?;
    entries.sort();
    let mut hasher = Sha256::new();
    let mut files = Vec::with_capacity(entries.len());
    for rel in entries {
        let path = root.join(&rel);
        let meta = fs_err::symlink_metadata(&path)?;
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        if meta.file_type().is_symlink() {
            hasher.update(b"l");
            hasher.update(fs_err::read_link(&path)?.as_os_str().as_encoded_bytes());
        } else {
            hasher.update(if meta.permissions().mode() & 0o111 != 0 {
                b"x"
            } else {
                b"f"
            });
            let mut file = fs_err::File::open(&path)?;
            std::io::copy(&mut file, &mut hasher)?;
        }
        hasher.update([0]);
        files.push(rel);
    }
    Ok((format!("sha256:{}", hex(&hasher.finalize())), files))
}

fn collect(dir: &Path, rel: &str, out: &mut Vec<String>) -> Result<(), SourceError> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let ft = entry.file_type()?;
        if ft.is_dir() {
            collect(&entry.path(), &child, out)?;
        } else {
            out.push(child);
        }
    }
    Ok(())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn short_hash(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes())[..8])
}

/// Folders under `root` that hold a `SKILL.md`, relative to `root` ("" for the root itself), sorted. Does not
/// descend into `node_modules`, `.git` or through symlinks.
pub fn discover_skills(root: &Path) -> Result<Vec<String>, SourceError> {
    let mut found = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        for entry in fs_err::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let ft = entry.file_type()?;
            if ft.is_file() && name == "SKILL.md" {
                found.push(rel.clone());
            } else if ft.is_dir() && !matches!(name.as_str(), "node_modules" | ".git") {
                let child = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                stack.push((entry.path(), child));
            }
        }
    }
    found.sort();
    Ok(found)
}
