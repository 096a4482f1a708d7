//! `airlock serve`: the control API on a local address.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::exec::parse_duration;
use crate::exit;
use crate::settings::{data_dir, escape};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen. Any address but loopback needs a token.
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub addr: SocketAddr,
    /// Where sources, runs and artifacts are kept (the same folder the CLI uses).
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Runs executing at once; more wait in the queue (default: the number of cores).
    #[arg(long)]
    pub max_concurrent_runs: Option<usize>,
    /// How long runs and reports are kept.
    #[arg(long, default_value = "24h", value_parser = parse_duration, env = "AIRLOCK_RETENTION")]
    pub retention: Duration,
    /// A file holding the token API calls must present (`Authorization: Bearer TOKEN`). Binding to a non-loopback
    /// address without one generates a token into the data folder and prints it once.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// A folder whose skills (and `file://` repositories) may be imported by path; none by default.
    #[arg(long, value_name = "DIR")]
    pub allow_local: Vec<PathBuf>,
    /// A host a run may ask to reach (HOST[:PORT], `*.domain`); none by default.
    #[arg(long, value_name = "HOST[:PORT]")]
    pub allow_net: Vec<String>,
    /// A host (`git.corp.example`, `*.corp.example`) or range (`10.1.0.0/16`) on this machine's own networks that
    /// imports and git targets may be fetched from. Without it, a URL whose host is or resolves to a loopback,
    /// private, link-local or unique-local address is refused, on the first request and on every redirect.
    #[arg(long, value_name = "HOST|CIDR")]
    pub allow_import: Vec<String>,
    #[command(flatten)]
    pub net: super::net::OperatorNetArgs,
    /// Keep the store's rows in PostgreSQL (`postgres://user@host/db`) instead of the data folder's SQLite; content
    /// files stay in the data folder unless `--object-store` says otherwise.
    #[arg(long, value_name = "URL", env = "AIRLOCK_DATABASE")]
    pub database: Option<String>,
    /// Send runs to runner machines (`airlock runner`) instead of running them here: a file with one runner token
    /// a line. Deleting a line revokes that runner at once; no restart needed.
    #[arg(long, value_name = "FILE", env = "AIRLOCK_RUNNER_TOKENS")]
    pub runner_tokens: Option<PathBuf>,
    /// Where the runs' content files (records, artifacts) and uploaded archives go instead of the data folder: a
    /// folder every API server of a deployment shares, or an S3-compatible bucket (`s3://bucket/prefix`, with the
    /// usual `AWS_*` variables; `AWS_ENDPOINT` and `AWS_ALLOW_HTTP=true` for a server of your own).
    #[arg(long, value_name = "DIR|s3://BUCKET/PREFIX", env = "AIRLOCK_OBJECT_STORE")]
    pub object_store: Option<String>,
    /// How long a runner's lease on a run lasts without a renewal; a run whose runner stops renewing fails as
    /// `runner lost` (it is never run twice).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub lease: Duration,
    /// The operator's policy (docs/policy.md): the most any run gets, whatever its skill declares.
    #[arg(long, value_name = "FILE", env = "AIRLOCK_POLICY")]
    pub policy: Option<PathBuf>,
    /// A URL browsers and clients reach this server at besides loopback and its own address (behind a reverse
    /// proxy, or under a name on your network), such as `https://airlock.example.com`. Requests sent to any other
    /// name are refused, so that a web page whose name points at this machine cannot use the server (DNS
    /// rebinding). With `https`, session cookies are `Secure`.
    #[arg(long, value_name = "URL", env = "AIRLOCK_PUBLIC_URL", value_delimiter = ',')]
    pub public_url: Vec<String>,
    /// Base URL for GitHub sources.
    #[arg(long, env = "AIRLOCK_GITHUB_BASE", default_value = "https://github.com")]
    pub github_base: String,
    /// The ed25519 key (a file of 64 hex digits, mode 0600) scans and runs are signed with, instead of the data
    /// folder's own: give every server of a deployment the same one, so one public key verifies them all.
    #[arg(long, value_name = "FILE", env = "AIRLOCK_SIGNING_KEY")]
    pub signing_key: Option<PathBuf>,
    #[command(flatten)]
    pub signatures: super::scan::SignatureArgs,
}

pub fn serve(args: &ServeArgs) -> anyhow::Result<u8> {
    let data = data_dir(args.data_dir.as_ref())?;
    fs_err::create_dir_all(&data)?;
    let mut config = airlock_server::ServerConfig::new(args.addr, &data);
    if let Some(n) = args.max_concurrent_runs {
        anyhow::ensure!(n > 0, "--max-concurrent-runs must be at least 1");
        config.max_concurrent_runs = n;
    }
    config.retention = args.retention;
    config.allow_local = args.allow_local.clone();
    config.allow_net = args.allow_net.clone();
    config.network = args.net.base_policy()?;
    config.fetch_guard = airlock_source::FetchGuard::new(&config.network, &args.allow_import)
        .map_err(|e| super::net::UsageError(format!("--allow-import: {e}")))?;
    config.egress_ca = args.net.egress_ca.clone();
    if args.database.is_some() && args.object_store.is_none() {
        // Rows in a database others share, content in a folder only this server reads: every run submitted
        // through another server would fail on a record it cannot find. Refused at start, not half-working.
        return Err(super::net::UsageError(
            "--database without --object-store: the rows would be shared but the content files (records, \
             artifacts, uploads) would stay in this server's data folder, where other servers cannot read them. Add \
             --object-store DIR|s3://BUCKET/PREFIX, the same for every server of the deployment (for one server, a \
             folder of its own is enough)"
                .into(),
        )
        .into());
    }
    config.database = args.database.clone();
    config.object_store = args.object_store.clone();
    if let Some(location) = &config.object_store {
        airlock_store::objects::Objects::open(location)?;
    }
    config.lease = args.lease;
    if let Some(file) = &args.runner_tokens {
        let tokens =
            airlock_server::dispatch::read_runner_tokens(file).context("read the runner tokens file")?;
        anyhow::ensure!(
            tokens
                .iter()
                .all(|t| t.len() >= airlock_server::dispatch::MIN_TOKEN),
            "every runner token is at least {} characters",
            airlock_server::dispatch::MIN_TOKEN
        );
        anyhow::ensure!(
            args.lease >= Duration::from_secs(1),
            "--lease must be at least 1s"
        );
        config.runner_tokens = Some(file.clone());
    }
    config.policy = args
        .policy
        .as_deref()
        .map(super::net::operator_policy)
        .transpose()?;
    config.github_base = args.github_base.clone();
    if let Some(file) = &args.signing_key {
        // Checked now: a server that cannot sign would fail every signed answer later.
        let keys = airlock_attest::Keys::load(file)
            .map_err(|e| super::net::UsageError(format!("--signing-key: {e}")))?;
        eprintln!("signing with key {} ({})", keys.key_id(), keys.public_hex());
        config.signing_key = Some(file.clone());
    }
    config.signatures = args.signatures.settings()?;
    config.public_urls = args
        .public_url
        .iter()
        .map(|u| airlock_server::PublicUrl::parse(u))
        .collect::<Result<_, _>>()
        .map_err(super::net::UsageError)?;
    config.token = match &args.token_file {
        Some(file) => Some(
            fs_err::read_to_string(file)
                .context("read the token file")?
                .trim()
                .to_owned(),
        )
        .filter(|t| !t.is_empty()),
        None if !args.addr.ip().is_loopback() => Some(generated_token(&data)?),
        None => None,
    };
    if let Some(t) = &config.token {
        anyhow::ensure!(
            t.len() >= 16
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
            "the token must be at least 16 letters, digits, `-`, `_` or `.`"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        airlock_server::serve(
            config,
            |addr| {
                eprintln!(
                    "airlock serve: listening on http://{addr} (API under /api/, description at /api/openapi.json); \
                     data in {}",
                    escape(&data.display().to_string())
                );
            },
            shutdown,
        )
        .await
    })?;
    Ok(exit::OK)
}

/// The token in `DATA/server-token`, made (readable by its owner only) and printed the first time.
fn generated_token(data: &std::path::Path) -> anyhow::Result<String> {
    let path = data.join("server-token");
    if let Ok(existing) = fs_err::read_to_string(&path) {
        return Ok(existing.trim().to_owned());
    }
    let token = airlock_sandbox::random_hex(32);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(&path)
        .with_context(|| format!("create {}", path.display()))?;
    std::io::Write::write_all(&mut file, token.as_bytes())?;
    eprintln!(
        "airlock serve: generated an API token in {} (shown once): {token}",
        escape(&path.display().to_string())
    );
    Ok(token)
}
