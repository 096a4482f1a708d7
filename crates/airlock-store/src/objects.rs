//! Where content files (records, reports, artifacts) and uploaded archives live: a folder (the data folder's
//! `objects/`, or a folder the servers of a deployment share) or an S3-compatible bucket (the `object_store`
//! crate), each named by its SHA-256. The store's callers are blocking threads, so a bucket's calls run on a small
//! runtime of this module's own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::StreamExt as _;
use object_store::path::Path as Key;
use object_store::ObjectStore;

use crate::{Result, StoreError};

/// A bucket and the prefix airlock's files go under.
pub struct Bucket {
    store: Box<dyn ObjectStore>,
    prefix: String,
}

/// Where content files live.
#[derive(Clone)]
pub enum Objects {
    /// `DIR/ab/<sha256>` files; uploads in `DIR/../uploads/`.
    Folder(PathBuf),
    /// `PREFIX/objects/ab/<sha256>` and `PREFIX/uploads/<sha256>.tar.gz` keys.
    Bucket(Arc<Bucket>),
}

fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RT: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("airlock-objects")
            .enable_all()
            .build()
            .ok()
    })
    .as_ref()
    .ok_or_else(|| StoreError::Objects("could not start the object store's runtime".into()))
}

fn err(e: object_store::Error) -> StoreError {
    match e {
        object_store::Error::NotFound { path, .. } => StoreError::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{path}: not found"),
        )),
        e => StoreError::Objects(e.to_string()),
    }
}

/// A SHA-256 as a file name: hex digits only.
fn clean(sha: &str) -> String {
    sha.chars().filter(char::is_ascii_hexdigit).collect()
}

impl Objects {
    /// The objects named by `location`: a `s3://bucket/prefix` URL (credentials, region and endpoint from the
    /// usual `AWS_*` variables; `AWS_ENDPOINT` and `AWS_ALLOW_HTTP=true` for an S3-compatible server), a
    /// `file://` URL or a folder path. A bucket's client is made once per process.
    pub fn open(location: &str) -> Result<Self> {
        if let Some(path) = location.strip_prefix("file://") {
            return Ok(Self::Folder(PathBuf::from(path).join("objects")));
        }
        if !location.starts_with("s3://") {
            if location.contains("://") {
                return Err(StoreError::Objects(format!(
                    "unsupported object store `{location}`: give a folder, a file:// URL or an s3:// URL"
                )));
            }
            return Ok(Self::Folder(PathBuf::from(location).join("objects")));
        }
        static BUCKETS: Mutex<Option<HashMap<String, Arc<Bucket>>>> = Mutex::new(None);
        let mut buckets = BUCKETS
            .lock()
            .map_err(|_| StoreError::Objects("poisoned".into()))?;
        let buckets = buckets.get_or_insert_with(HashMap::new);
        if let Some(b) = buckets.get(location) {
            return Ok(Self::Bucket(b.clone()));
        }
        let url = url::Url::parse(location).map_err(|e| StoreError::Objects(format!("{location}: {e}")))?;
        let store = object_store::aws::AmazonS3Builder::from_env()
            .with_url(location)
            .build()
            .map_err(err)?;
        let bucket = Arc::new(Bucket {
            store: Box::new(store),
            prefix: url.path().trim_matches('/').to_owned(),
        });
        buckets.insert(location.to_owned(), bucket.clone());
        Ok(Self::Bucket(bucket))
    }

    fn key(bucket: &Bucket, rel: &str) -> Key {
        if bucket.prefix.is_empty() {
            Key::from(rel)
        } else {
            Key::from(format!("{}/{rel}", bucket.prefix))
        }
    }

    /// A content file's place under `objects/`: `<first two hex digits>/<sha256>`.
    fn shard(sha: &str) -> String {
        let sha = clean(sha);
        format!("{}/{sha}", sha.get(..2).unwrap_or("00"))
    }

    fn object_rel(sha: &str) -> String {
        format!("objects/{}", Self::shard(sha))
    }

    /// An uploaded archive's name under `uploads/`.
    fn upload_name(sha: &str) -> String {
        format!("{}.tar.gz", clean(sha))
    }

    /// The file of an object in a folder (`None` for a bucket).
    pub fn path(&self, sha: &str) -> Option<PathBuf> {
        match self {
            Self::Folder(dir) => Some(dir.join(Self::shard(sha))),
            Self::Bucket(_) => None,
        }
    }

    /// Writes bytes under their SHA-256 (nothing when they are there already).
    pub fn put(&self, sha: &str, bytes: &[u8]) -> Result<()> {
        match self {
            Self::Folder(_) => {
                let path = self.path(sha).unwrap_or_default();
                write_new(&path, bytes)
            }
            Self::Bucket(b) => {
                let key = Self::key(b, &Self::object_rel(sha));
                runtime()?.block_on(async {
                    if b.store.head(&key).await.is_ok() {
                        return Ok(());
                    }
                    b.store
                        .put(&key, bytes.to_vec().into())
                        .await
                        .map(drop)
                        .map_err(err)
                })
            }
        }
    }

    pub fn get(&self, sha: &str) -> Result<Vec<u8>> {
        match self {
            Self::Folder(_) => Ok(fs_err::read(self.path(sha).unwrap_or_default())?),
            Self::Bucket(b) => get(b, &Self::key(b, &Self::object_rel(sha))),
        }
    }

    pub fn has(&self, sha: &str) -> Result<bool> {
        match self {
            Self::Folder(_) => Ok(self.path(sha).is_some_and(|p| p.is_file())),
            Self::Bucket(b) => {
                let key = Self::key(b, &Self::object_rel(sha));
                match runtime()?.block_on(b.store.head(&key)) {
                    Ok(_) => Ok(true),
                    Err(object_store::Error::NotFound { .. }) => Ok(false),
                    Err(e) => Err(err(e)),
                }
            }
        }
    }

    /// Deletes the objects not in `live`, except those modified after `keep_after` (seconds since the epoch) when
    /// given: (count, bytes).
    pub fn sweep(
        &self,
        live: &std::collections::HashSet<String>,
        keep_after: Option<i64>,
    ) -> Result<(usize, u64)> {
        let (mut n, mut bytes) = (0, 0);
        match self {
            Self::Folder(objects) => {
                let Ok(dirs) = fs_err::read_dir(objects) else {
                    return Ok((0, 0));
                };
                for dir in dirs {
                    let dir = dir?;
                    if !dir.file_type()?.is_dir() {
                        continue;
                    }
                    for f in fs_err::read_dir(dir.path())? {
                        let f = f?;
                        let name = f.file_name().to_string_lossy().into_owned();
                        if live.contains(&name) {
                            continue;
                        }
                        let meta = f.metadata()?;
                        let modified = meta
                            .modified()
                            .ok()
                            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
                        if keep_after.is_some_and(|k| modified > k) {
                            continue;
                        }
                        fs_err::remove_file(f.path())?;
                        n += 1;
                        bytes += meta.len();
                    }
                }
            }
            Self::Bucket(b) => {
                let prefix = Self::key(b, "objects");
                let metas: Vec<object_store::ObjectMeta> = runtime()?.block_on(async {
                    let mut out = Vec::new();
                    let mut list = b.store.list(Some(&prefix));
                    while let Some(meta) = list.next().await {
                        out.push(meta.map_err(err)?);
                    }
                    Ok::<_, StoreError>(out)
                })?;
                for meta in metas {
                    let name = meta.location.filename().unwrap_or_default().to_owned();
                    if live.contains(&name) || keep_after.is_some_and(|k| meta.last_modified.timestamp() > k)
                    {
                        continue;
                    }
                    runtime()?.block_on(b.store.delete(&meta.location)).map_err(err)?;
                    n += 1;
                    bytes += meta.size;
                }
            }
        }
        Ok((n, bytes))
    }

    /// Keeps an uploaded archive (named by its SHA-256).
    pub fn put_upload(&self, sha: &str, bytes: &[u8]) -> Result<()> {
        match self {
            Self::Folder(_) => write_new(&self.upload_path(sha).unwrap_or_default(), bytes),
            Self::Bucket(b) => {
                let key = Self::key(b, &format!("uploads/{}", Self::upload_name(sha)));
                runtime()?
                    .block_on(b.store.put(&key, bytes.to_vec().into()))
                    .map(drop)
                    .map_err(err)
            }
        }
    }

    /// An uploaded archive as a local file: in the folder, or fetched from the bucket into `cache` once.
    pub fn upload_file(&self, sha: &str, cache: &Path) -> Result<Option<PathBuf>> {
        match self {
            Self::Folder(_) => Ok(self.upload_path(sha).filter(|p| p.is_file())),
            Self::Bucket(b) => {
                let local = cache.join(Self::upload_name(sha));
                if local.is_file() {
                    return Ok(Some(local));
                }
                let key = Self::key(b, &format!("uploads/{}", Self::upload_name(sha)));
                match get(b, &key) {
                    Ok(bytes) => {
                        write_new(&local, &bytes)?;
                        Ok(Some(local))
                    }
                    Err(StoreError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(e),
                }
            }
        }
    }

    fn upload_path(&self, sha: &str) -> Option<PathBuf> {
        match self {
            Self::Folder(objects) => Some(
                objects
                    .parent()
                    .unwrap_or(objects)
                    .join("uploads")
                    .join(Self::upload_name(sha)),
            ),
            Self::Bucket(_) => None,
        }
    }
}

fn get(b: &Bucket, key: &Key) -> Result<Vec<u8>> {
    runtime()?.block_on(async {
        let got = b.store.get(key).await.map_err(err)?;
        Ok(got.bytes().await.map_err(err)?.to_vec())
    })
}

/// Writes a file by a temporary name, synced and renamed (nothing when it exists).
fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.exists() {
        return Ok(());
    }
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    fs_err::create_dir_all(&dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| StoreError::Io(e.error))?;
    Ok(())
}
