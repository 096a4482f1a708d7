//! How a server is set up (`ServerConfig`), the addresses browsers may reach it at (`PublicUrl`), and what it
//! writes in its data folder at start (the bundled example skill).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How a server is set up.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    pub data_dir: PathBuf,
    /// Runs executing at once; the rest wait in the queue.
    pub max_concurrent_runs: usize,
    pub retention: Duration,
    /// The bearer token every API call needs; `None` only on a loopback address.
    pub token: Option<String>,
    /// Folders whose skills (and `file://` repositories) the server may import; none by default.
    pub allow_local: Vec<PathBuf>,
    /// Hosts (`HOST[:PORT]`, `*.domain`) a run may ask to reach; none by default.
    pub allow_net: Vec<String>,
    /// The operator's egress settings every run gets: upstream proxy, trusted names, mirrors.
    pub network: airlock_egress::Policy,
    /// Extra CAs for the egress proxy and the sandbox's bundle.
    pub egress_ca: Vec<std::path::PathBuf>,
    pub github_base: String,
    /// The executable that starts each sandbox (tests name the built helper).
    pub helper: Option<PathBuf>,
    /// The operator's policy (`--policy FILE`): the most any run gets, whatever the skill declares.
    pub policy: Option<airlock_types::policy::SourcedPolicy>,
    /// Where the store's rows live: a `postgres://` URL, or the data folder's SQLite when `None`.
    pub database: Option<String>,
    /// Where content files and uploaded archives go: a folder every API server of a deployment shares, or an
    /// `s3://bucket/prefix`; the data folder when `None`.
    pub object_store: Option<String>,
    /// The runner tokens file: when given, runs go to the queue for runner machines (`airlock runner`) instead of
    /// this server's own sandboxes.
    pub runner_tokens: Option<PathBuf>,
    /// How long a runner's lease on a run lasts without a renewal.
    pub lease: Duration,
    /// Where browsers reach the server besides loopback and its own address (`--public-url`); a request sent to
    /// any other name is refused (DNS rebinding).
    pub public_urls: Vec<PublicUrl>,
    /// The key scans and runs are signed with (`--signing-key`), the same for every server of a deployment; else
    /// the data folder's own.
    pub signing_key: Option<PathBuf>,
    /// What skills' signatures are checked with at import (a Sigstore trust root, keys, an identity, an OpenPGP
    /// keyring), as `scan` takes them.
    pub signatures: airlock_run::signatures::SignatureSettings,
    /// Where imports and git targets may be fetched from: public addresses, and the internal hosts and ranges the
    /// operator allows (`--allow-import`), through the operator's upstream proxy.
    pub fetch_guard: airlock_source::FetchGuard,
}

impl ServerConfig {
    /// The store, in the configured database.
    pub fn store(&self) -> Result<airlock_store::Store, airlock_store::StoreError> {
        let store = airlock_store::Store::connect(&self.data_dir, self.database.as_deref())?;
        match &self.object_store {
            Some(location) => store.with_objects(location),
            None => Ok(store),
        }
    }

    /// Where content files and uploads live, without opening the database.
    pub fn objects(&self) -> Result<airlock_store::objects::Objects, airlock_store::StoreError> {
        match &self.object_store {
            Some(location) => airlock_store::objects::Objects::open(location),
            None => Ok(airlock_store::objects::Objects::Folder(
                self.data_dir.join("objects"),
            )),
        }
    }

    /// Where this server keeps local copies of uploaded archives fetched from a bucket.
    pub fn upload_cache(&self) -> PathBuf {
        self.data_dir.join("cache").join("uploads")
    }

    /// Whether runs go to runner machines rather than this server's own workers.
    pub fn dispatches(&self) -> bool {
        self.runner_tokens.is_some()
    }

    pub fn new(addr: SocketAddr, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            addr,
            data_dir: data_dir.into(),
            max_concurrent_runs: std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            retention: Duration::from_secs(24 * 3600),
            token: None,
            allow_local: Vec::new(),
            allow_net: Vec::new(),
            network: airlock_egress::Policy::default(),
            egress_ca: Vec::new(),
            github_base: "https://github.com".into(),
            helper: None,
            policy: None,
            database: None,
            object_store: None,
            runner_tokens: None,
            lease: Duration::from_secs(30),
            public_urls: Vec::new(),
            signing_key: None,
            signatures: Default::default(),
            fetch_guard: airlock_source::FetchGuard::default(),
        }
    }
}

/// A URL the server is reached at besides loopback and its own address (`--public-url`): behind a reverse proxy,
/// or under a DNS name on a team's network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl {
    /// The host, lower case, without port or trailing dot.
    pub host: String,
    /// Whether browsers reach it over TLS (session cookies are then `Secure`).
    pub https: bool,
}

impl PublicUrl {
    /// Parses `https://airlock.example.com[:port][/]`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad =
            |why: &str| format!("invalid --public-url `{text}`: {why} (expected http[s]://HOST[:PORT])");
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            _ => return Err(bad("the scheme is not http or https")),
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(bad("a user name has no place in it"));
        }
        let host = host_of(authority).ok_or_else(|| bad("no valid host"))?;
        Ok(Self { host, https })
    }
}

/// The host part of a `Host` header or URL authority (`name`, `name:port`, `1.2.3.4:80`, `[::1]:80`), lower case
/// and without a trailing dot; `None` when it is not a plausible host.
pub(crate) fn host_of(authority: &str) -> Option<String> {
    let authority = authority.trim();
    let host = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.strip_prefix(':').is_some_and(is_port)) {
            return None;
        }
        inside
    } else {
        match authority.rsplit_once(':') {
            Some((h, port)) if is_port(port) => h,
            Some(_) => return None,
            None => authority,
        }
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let ok = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':' | b'_'));
    ok.then_some(host)
}

fn is_port(s: &str) -> bool {
    !s.is_empty() && s.len() <= 5 && s.bytes().all(|b| b.is_ascii_digit())
}

/// The bundled example skill, ready to click through from the home page.
const EXAMPLE: &[(&str, &str)] = &[
    (
        "SKILL.md",
        include_str!("../../../examples/skills/add-footer/SKILL.md"),
    ),
    (
        "scripts/add_footer.py",
        include_str!("../../../examples/skills/add-footer/scripts/add_footer.py"),
    ),
];

/// Where the bundled example is written in the data folder (and allowed to be imported from).
pub fn example_dir(data_dir: &std::path::Path) -> PathBuf {
    data_dir.join("examples").join("add-footer")
}

pub(crate) fn write_example(data_dir: &std::path::Path) -> std::io::Result<PathBuf> {
    let dir = example_dir(data_dir);
    for (path, text) in EXAMPLE {
        let p = dir.join(path);
        if let Some(parent) = p.parent() {
            fs_err::create_dir_all(parent)?;
        }
        fs_err::write(&p, text)?;
    }
    Ok(dir)
}
