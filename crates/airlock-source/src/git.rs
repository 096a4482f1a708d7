//! Git sources: a bare clone into the data directory, then the tree of one commit written out object by object.
//!
//! No checkout happens, so nothing in the repository (hooks, `.gitattributes` filters, LFS, submodules) can run
//! or redirect anything. Configuration is isolated from the user's git config.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use airlock_types::{CommitSha, SourceKind};

use crate::spec::{clean_subpath, redact, GitHubTarget, RedactedUrl};
use crate::stage::{publish, short_hash, staging_dir, SafeTree, StagedSource};
use crate::{make_source, ImportOptions, PinInfo, SourceError, SourceSpec};

fn fetch_err(url: &str, err: impl std::fmt::Display) -> SourceError {
    let mut reason = err.to_string();
    // A transport error often hides the first cause: the host's name does not resolve (offline, no DNS).
    if let Some(host) = host_of(url) {
        if std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), 443)).is_err() {
            reason = format!("the name {host} does not resolve (is this machine offline?); {reason}");
        }
    }
    SourceError::Fetch {
        url: redact(url),
        reason,
    }
}

/// The host of a network git URL (`https://host/...`, `ssh://user@host/...`, `user@host:path`); `None` for a local
/// path or `file://`.
fn host_of(url: &str) -> Option<String> {
    let rest = match url.split_once("://") {
        Some(("file", _)) => return None,
        Some((_, rest)) => rest,
        None if url.contains('@') && url.contains(':') => url,
        None => return None,
    };
    let authority = rest.split('/').next()?;
    let host = authority.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_owned())
}

/// The clone URL for a GitHub repository under the configured base.
fn github_clone_url(base: &str, target: &GitHubTarget) -> String {
    let base = base.trim_end_matches('/');
    let plain = format!("{base}/{}/{}", target.owner, target.repo);
    if let Some(dir) = base
        .strip_prefix("file://")
        .or_else(|| (!base.contains("://")).then_some(base))
    {
        let dir = Path::new(dir).join(&target.owner);
        if !dir.join(&target.repo).exists() && dir.join(format!("{}.git", target.repo)).exists() {
            return format!("{plain}.git");
        }
    }
    plain
}

/// The browsable URL of a pinned folder, under the same base as the input.
fn github_pinned_url(base: &str, target: &GitHubTarget, sha: &CommitSha, subpath: &str) -> String {
    let base = base.trim_end_matches('/');
    let web = if base.starts_with("http://") || base.starts_with("https://") {
        base
    } else {
        "https://github.com"
    };
    let mut url = format!("{web}/{}/{}/tree/{sha}", target.owner, target.repo);
    if !subpath.is_empty() {
        url.push('/');
        url.push_str(subpath);
    }
    url
}

pub(crate) fn import_github(
    target: &GitHubTarget,
    spec: &SourceSpec,
    options: &ImportOptions,
) -> Result<StagedSource, SourceError> {
    let url = github_clone_url(&options.github_base, target);
    let repo = clone(&url, options)?;
    let (commit, requested_ref, rest_path) = match &target.rest {
        None => head_commit(&repo, &url)?,
        Some(rest) => split_ref_and_path(&repo, &url, rest)?,
    };
    let mut subpath = clean_subpath(&spec.display_input(), &rest_path)?;
    if target.file {
        // A /blob/ URL names a file: the skill is the folder that holds it.
        subpath = subpath
            .rsplit_once('/')
            .map(|(dir, _)| dir.to_owned())
            .unwrap_or_default();
    }
    let pinned = requested_ref.is_none();
    let pinned_url = Some(github_pinned_url(&options.github_base, target, &commit, &subpath));
    finish(
        &repo,
        &url,
        SourceKind::Github,
        spec,
        commit,
        requested_ref,
        pinned,
        pinned_url,
        subpath,
        options,
    )
}

pub(crate) fn import_git(
    url: &RedactedUrl,
    reference: Option<&str>,
    subpath: &str,
    spec: &SourceSpec,
    options: &ImportOptions,
) -> Result<StagedSource, SourceError> {
    let raw = url.expose();
    let repo = clone(raw, options)?;
    let (commit, requested_ref) = match reference {
        None => {
            let (c, r, _) = head_commit(&repo, raw)?;
            (c, r)
        }
        Some(r) => {
            let commit = resolve(&repo, r).ok_or_else(|| SourceError::UnknownRef {
                url: redact(raw),
                reference: r.to_owned(),
            })?;
            let moving = !CommitSha::looks_like_sha(r);
            (commit, moving.then(|| r.to_owned()))
        }
    };
    let pinned = requested_ref.is_none();
    let pinned_url = format!(
        "{}#{commit}{}",
        redact(raw),
        if subpath.is_empty() {
            String::new()
        } else {
            format!(":{subpath}")
        }
    );
    finish(
        &repo,
        raw,
        SourceKind::Git,
        spec,
        commit,
        requested_ref,
        pinned,
        // The same URL at the commit (`#<sha>[:<path>]`, the form the importer reads back).
        Some(pinned_url),
        subpath.to_owned(),
        options,
    )
}

#[expect(clippy::too_many_arguments, reason = "one private call site per source kind")]
fn finish(
    repo: &gix::Repository,
    url: &str,
    kind: SourceKind,
    spec: &SourceSpec,
    commit: CommitSha,
    requested_ref: Option<String>,
    pinned: bool,
    pinned_url: Option<String>,
    subpath: String,
    options: &ImportOptions,
) -> Result<StagedSource, SourceError> {
    // A skill imported by its folder is staged alone (its links into the rest of the commit copied in): the limits
    // count the skill, not the collection around it.
    let folder = if subpath.is_empty() {
        String::new()
    } else {
        format!("-{}", short_hash(&subpath))
    };
    let dest = options
        .data_dir
        .join("sources")
        .join("git")
        .join(format!("{}-{commit}{folder}", short_hash(url)));
    let mut skipped = Vec::new();
    if !dest.join(".airlock-complete").exists() {
        let tmp = staging_dir(options)?;
        let stage_root = tmp.path().join("tree");
        write_commit_tree(repo, url, &commit, &subpath, &stage_root, options, &mut skipped)?;
        fs_err::write(
            tmp.path().join("skipped.json"),
            serde_json::to_vec(&skipped).unwrap_or_default(),
        )?;
        if dest.exists() {
            fs_err::remove_dir_all(&dest)?;
        }
        publish(&stage_root, &dest)?;
        fs_err::write(dest.join(".airlock-complete"), commit.as_str())?;
    }
    if !subpath.is_empty() && !dest.join(&subpath).is_dir() {
        return Err(SourceError::MissingSubpath {
            subpath,
            commit: commit.to_string(),
        });
    }
    let staged_tree = dest.clone();
    let signature = commit_signature(repo, &commit);
    let source = make_source(
        kind,
        spec,
        redact(url),
        PinInfo {
            commit: Some(commit),
            requested_ref,
            pinned,
            pinned_url,
        },
        subpath,
        &staged_tree,
    )?;
    Ok(StagedSource {
        source,
        root: dest,
        skipped,
        signature,
    })
}

/// The signature of a commit, if it is signed: what it signs is the commit object without its signature header.
fn commit_signature(repo: &gix::Repository, commit: &CommitSha) -> Option<crate::stage::CommitSignature> {
    let id = gix::ObjectId::from_hex(commit.as_str().as_bytes()).ok()?;
    let object = repo.find_object(id).ok()?.try_into_commit().ok()?;
    let time = object.time().ok()?.seconds;
    let (armored, signed) = object.signature().ok()??;
    Some(crate::stage::CommitSignature {
        armored: armored.to_string(),
        signed: gix::bstr::BString::from(signed).to_vec(),
        time,
    })
}

/// Clones `url` bare into a fresh folder of the data directory, bounded in size, replacing an older clone.
fn clone(url: &str, options: &ImportOptions) -> Result<gix::Repository, SourceError> {
    let cache = options.data_dir.join("git").join(short_hash(url));
    let tmp = staging_dir(options)?;
    let dir = tmp.path().join("repo.git");
    let interrupt = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = spawn_size_watcher(
        dir.clone(),
        options.limits.max_total_bytes,
        interrupt.clone(),
        done.clone(),
    );
    let guarded = match &options.guard {
        Some(_) if !crate::guard::is_http(url) && !url.starts_with("file://") => {
            return Err(SourceError::Refused {
                url: redact(url),
                reason: "this server fetches git repositories over HTTPS only".into(),
            })
        }
        Some(guard) if crate::guard::is_http(url) => Some(guard.start()?),
        _ => None,
    };
    let proxy = guarded
        .as_ref()
        .map(|g| reqwest::Proxy::all(&g.url))
        .transpose()
        .map_err(|e| fetch_err(url, e))?;
    let result = (|| {
        let mut prepare = gix::clone::PrepareFetch::new(
            url,
            &dir,
            gix::create::Kind::Bare,
            gix::create::Options::default(),
            gix::open::Options::isolated(),
        )
        .map_err(|e| fetch_err(url, e))?
        .configure_remote(|remote| {
            remote.with_refspecs(
                ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
                gix::remote::Direction::Fetch,
            )
        });
        if let Some(proxy) = proxy {
            prepare = prepare.configure_connection(move |connection| {
                connection.set_transport_options(Box::new(through_proxy(proxy.clone())));
                Ok(())
            });
        }
        let (repo, _outcome) = prepare
            .fetch_only(gix::progress::Discard, &interrupt)
            .map_err(|e| fetch_err(url, e))?;
        Ok::<_, SourceError>(repo)
    })();
    done.store(true, Ordering::SeqCst);
    let refused = guarded.and_then(crate::guard::Guarded::finish);
    let exceeded = watcher.join().unwrap_or(false);
    if exceeded {
        return Err(SourceError::TooLarge {
            what: format!("the repository {}", redact(url)),
            limit: format!("{} bytes", options.limits.max_total_bytes),
            hint: "the clone was stopped; point at a smaller repository or raise --max-bytes",
        });
    }
    let repo = match (result, refused) {
        (Err(_), Some(reason)) => {
            return Err(SourceError::Refused {
                url: redact(url),
                reason,
            })
        }
        (result, _) => result?,
    };
    drop(repo);
    if cache.exists() {
        fs_err::remove_dir_all(&cache)?;
    }
    publish(&dir, &cache)?;
    gix::open_opts(&cache, gix::open::Options::isolated()).map_err(|e| fetch_err(url, e))
}

/// HTTP transport options that send every request of a clone, redirects included, through `proxy`.
fn through_proxy(proxy: reqwest::Proxy) -> gix::protocol::transport::client::blocking_io::http::Options {
    use gix::protocol::transport::client::blocking_io::http;
    let backend = http::reqwest::Options {
        // `proxy` also turns off the proxies of the environment: nothing bypasses the guard.
        configure_client: Some(Box::new(move |builder| Ok(builder.proxy(proxy.clone())))),
        configure_request: None,
    };
    http::Options {
        backend: Some(Arc::new(std::sync::Mutex::new(backend))),
        ..http::Options::default()
    }
}

/// Watches the size of a folder while a clone fills it, and interrupts the clone past `limit` bytes.
fn spawn_size_watcher(
    dir: PathBuf,
    limit: u64,
    interrupt: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        while !done.load(Ordering::SeqCst) {
            if dir_size(&dir) > limit {
                interrupt.store(true, Ordering::SeqCst);
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    })
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(ft) if ft.is_dir() => dir_size(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

fn resolve(repo: &gix::Repository, reference: &str) -> Option<CommitSha> {
    let mut candidates = vec![
        format!("refs/heads/{reference}"),
        format!("refs/tags/{reference}"),
    ];
    if CommitSha::looks_like_sha(reference) || reference == "HEAD" {
        candidates.push(reference.to_owned());
    }
    candidates.into_iter().find_map(|spec| {
        let id = repo
            .rev_parse_single(format!("{spec}^{{commit}}").as_str())
            .ok()?;
        CommitSha::parse(&id.to_string()).ok()
    })
}

fn head_commit(
    repo: &gix::Repository,
    url: &str,
) -> Result<(CommitSha, Option<String>, String), SourceError> {
    let commit = repo
        .head_commit()
        .map_err(|e| fetch_err(url, format!("the repository has no default branch: {e}")))?;
    let sha = CommitSha::parse(&commit.id.to_string()).map_err(|e| fetch_err(url, e))?;
    let name = repo
        .head_name()
        .ok()
        .flatten()
        .map(|n| n.shorten().to_string())
        .unwrap_or_else(|| "HEAD".to_owned());
    Ok((sha, Some(name), String::new()))
}

/// Splits `main/skills/x` (or `feature/y/skills/x`) into a ref that exists and the path after it.
fn split_ref_and_path(
    repo: &gix::Repository,
    url: &str,
    rest: &str,
) -> Result<(CommitSha, Option<String>, String), SourceError> {
    let parts: Vec<&str> = rest.split('/').collect();
    for n in (1..=parts.len()).rev() {
        let reference = parts[..n].join("/");
        if let Some(commit) = resolve(repo, &reference) {
            let moving = !CommitSha::looks_like_sha(&reference);
            return Ok((commit, moving.then_some(reference), parts[n..].join("/")));
        }
    }
    Err(SourceError::UnknownRef {
        url: redact(url),
        reference: parts.first().copied().unwrap_or_default().to_owned(),
    })
}

/// The object `oid` written at `rel`, read once its size is known to be within the per-file limit.
fn read_blob<'r>(
    repo: &'r gix::Repository,
    url: &str,
    oid: gix::ObjectId,
    rel: &str,
    options: &ImportOptions,
) -> Result<gix::Object<'r>, SourceError> {
    let header = repo.find_header(oid).map_err(|e| fetch_err(url, e))?;
    if header.size() > options.limits.max_file_bytes {
        return Err(SourceError::TooLarge {
            what: format!("file `{}` ({} bytes)", rel.escape_debug(), header.size()),
            limit: format!("{} bytes per file", options.limits.max_file_bytes),
            hint: "point at the skill's folder, or raise --max-bytes if you trust the size",
        });
    }
    repo.find_object(oid).map_err(|e| fetch_err(url, e))
}

/// What a symlink at `rel` with `target` reaches inside the commit's tree, following links up to eight deep: the
/// entry's mode, object and path. `None` when it is absolute, leaves the repository, or reaches nothing.
fn in_repository(
    repo: &gix::Repository,
    root: &gix::Tree<'_>,
    rel: &str,
    target: &str,
) -> Option<(gix::object::tree::EntryMode, gix::ObjectId, String)> {
    let mut at: Vec<String> = rel.split('/').map(str::to_owned).collect();
    at.pop();
    let mut target = target.to_owned();
    for _ in 0..8 {
        if target.starts_with('/') || target.is_empty() {
            return None;
        }
        let mut path = at.clone();
        for part in target.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    path.pop()?;
                }
                p => path.push(p.to_owned()),
            }
        }
        if path.is_empty() {
            return None;
        }
        let joined = path.join("/");
        let entry = root.lookup_entry_by_path(&joined).ok()??;
        let mode = entry.mode();
        let id = entry.object_id();
        if !mode.is_link() {
            return (!mode.is_commit()).then_some((mode, id, joined));
        }
        let object = repo.find_object(id).ok()?;
        target = String::from_utf8_lossy(&object.data).into_owned();
        path.pop();
        at = path;
    }
    None
}

/// Writes the whole tree of `commit` under `root`, reading objects directly.
/// Writes the commit's tree, or only its folder `subpath` (at the same path) when that is a folder of the commit.
fn write_commit_tree(
    repo: &gix::Repository,
    url: &str,
    commit: &CommitSha,
    subpath: &str,
    root: &Path,
    options: &ImportOptions,
    skipped: &mut Vec<(String, String)>,
) -> Result<(), SourceError> {
    let id = gix::ObjectId::from_hex(commit.as_str().as_bytes()).map_err(|e| fetch_err(url, e))?;
    let tree_id = repo
        .find_commit(id)
        .and_then(|c| c.tree_id().map(|t| t.detach()))
        .map_err(|e| fetch_err(url, e))?;
    let mut out = SafeTree::new(root.to_path_buf(), redact(url), options.limits)?;
    let root_tree = repo.find_tree(tree_id).map_err(|e| fetch_err(url, e))?;
    let folder = if subpath.is_empty() {
        None
    } else {
        root_tree
            .lookup_entry_by_path(subpath)
            .ok()
            .flatten()
            .filter(|e| e.mode().is_tree())
            .map(|e| e.object_id())
    };
    let mut stack = match folder {
        Some(folder) => {
            let mut at = String::new();
            for part in subpath.split('/') {
                if !at.is_empty() {
                    at.push('/');
                }
                at.push_str(part);
                out.dir(&at)?;
            }
            vec![(folder, subpath.to_owned())]
        }
        None => vec![(tree_id, String::new())],
    };
    while let Some((tid, prefix)) = stack.pop() {
        let tree = repo.find_tree(tid).map_err(|e| fetch_err(url, e))?;
        let decoded = tree.decode().map_err(|e| fetch_err(url, e))?;
        let entries: Vec<(gix::object::tree::EntryMode, String, gix::ObjectId)> = decoded
            .entries
            .iter()
            .map(|e| (e.mode, e.filename.to_string(), e.oid.to_owned()))
            .collect();
        for (mode, name, oid) in entries {
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            if name.contains('\u{fffd}') {
                skipped.push((rel, "name is not valid UTF-8".to_owned()));
                continue;
            }
            if mode.is_tree() {
                out.dir(&rel)?;
                stack.push((oid, rel));
            } else if mode.is_commit() {
                skipped.push((rel, "submodule (not fetched)".to_owned()));
            } else {
                let object = read_blob(repo, url, oid, &rel, options)?;
                if mode.is_link() {
                    let target = String::from_utf8_lossy(&object.data).into_owned();
                    // A link to another path of the same commit (a plugin's shared scripts linked into each of its
                    // skills) is written as a copy of what it points to, so a skill imported by its folder is whole
                    // and every byte of it is scanned; a link out of the repository stays a link, never followed.
                    match in_repository(repo, &root_tree, &rel, &target) {
                        Some((linked_mode, linked, path)) if linked_mode.is_tree() => {
                            // A link to a folder that holds the link itself would copy without end.
                            if rel == path || rel.starts_with(&format!("{path}/")) {
                                out.symlink(&rel, &target)?;
                            } else {
                                out.dir(&rel)?;
                                stack.push((linked, rel));
                            }
                        }
                        Some((linked_mode, linked, _)) => {
                            let blob = read_blob(repo, url, linked, &rel, options)?;
                            let data: &[u8] = &blob.data;
                            out.file(&rel, data.len() as u64, linked_mode.is_executable(), &mut &*data)?;
                        }
                        None => out.symlink(&rel, &target)?,
                    }
                } else {
                    let data: &[u8] = &object.data;
                    out.file(&rel, data.len() as u64, mode.is_executable(), &mut &*data)?;
                }
            }
        }
    }
    Ok(())
}
