//! `airlock runner`: a runner machine of a team deployment. It claims runs from the API servers over HTTP (long
//! poll) with a runner token, runs each in this machine's sealed runner, renews its lease while it runs, streams
//! the run's events, uploads its artifacts and hands back the record. It holds no database or object-store
//! credentials: the token lets it claim runs and report on the runs it holds, nothing else.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use airlock_types::RunMode;
use airlock_worker::http::{HttpQueue, RunnerSetup};

use crate::exit;
use crate::settings::{data_dir, escape};

#[derive(Debug, Args)]
pub struct RunnerArgs {
    /// An API server to claim runs from; repeat it (or separate with commas) to fail over between servers.
    #[arg(
        long = "server",
        value_name = "URL",
        env = "AIRLOCK_SERVER",
        value_delimiter = ',',
        required = true
    )]
    pub servers: Vec<String>,
    /// A file holding this runner's token (a line of the servers' `--runner-tokens` file).
    #[arg(long, value_name = "FILE", env = "AIRLOCK_RUNNER_TOKEN_FILE")]
    pub token_file: PathBuf,
    /// Where this runner keeps its caches and a run's files while it runs.
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Runs carried out at once.
    #[arg(long, default_value_t = 1)]
    pub slots: usize,
    /// The name shown on the runs this runner holds (default: the host's name).
    #[arg(long)]
    pub name: Option<String>,
    /// A host (`git.corp.example`, `*.corp.example`) or range (`10.1.0.0/16`) on this machine's own networks that
    /// git targets may be fetched from. Without it, a URL whose host is or resolves to a loopback, private,
    /// link-local or unique-local address is refused, on the first request and on every redirect.
    #[arg(long, value_name = "HOST|CIDR")]
    pub allow_import: Vec<String>,
    #[command(flatten)]
    pub net: super::net::OperatorNetArgs,
    /// Base URL for GitHub sources.
    #[arg(long, env = "AIRLOCK_GITHUB_BASE", default_value = "https://github.com")]
    pub github_base: String,
}

pub fn runner(args: &RunnerArgs) -> anyhow::Result<u8> {
    let data = data_dir(args.data_dir.as_ref())?;
    fs_err::create_dir_all(&data)?;
    anyhow::ensure!(args.slots > 0, "--slots must be at least 1");
    let mut servers = Vec::new();
    for s in &args.servers {
        anyhow::ensure!(
            s.starts_with("http://") || s.starts_with("https://"),
            "--server takes an http:// or https:// URL"
        );
        servers.push(s.trim_end_matches('/').to_owned());
    }
    let token = fs_err::read_to_string(&args.token_file)
        .context("reading --token-file")?
        .trim()
        .to_owned();
    anyhow::ensure!(!token.is_empty(), "the token file is empty");
    let name = match &args.name {
        Some(n) => n.clone(),
        None => nix::unistd::gethostname()
            .ok()
            .and_then(|h| h.into_string().ok())
            .unwrap_or_else(|| "runner".into()),
    };
    // What this machine can enforce decides what it is sent: without every layer, no sandbox runs.
    let doctor = airlock_sandbox::doctor(None);
    let mut modes = vec![
        airlock_types::wire_name(&RunMode::Inspect),
        airlock_types::wire_name(&RunMode::DryRun),
    ];
    if doctor.ready {
        modes.push(airlock_types::wire_name(&RunMode::Sandbox));
    } else {
        let missing: Vec<String> = doctor
            .checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.layer.clone())
            .collect();
        eprintln!(
            "airlock runner: this machine cannot enforce {}; it takes inspect and dry-run runs only (see `airlock doctor`)",
            missing.join(", ")
        );
    }
    let mut settings = airlock_run::ImportSettings::new(&data);
    settings.github_base = args.github_base.clone();
    let network = args.net.base_policy()?;
    settings.guard = Some(
        airlock_source::FetchGuard::new(&network, &args.allow_import)
            .map_err(|e| super::net::UsageError(format!("--allow-import: {e}")))?,
    );
    let queue = Arc::new(HttpQueue::new(
        servers,
        token,
        RunnerSetup {
            name,
            modes,
            data,
            settings,
            network,
            egress_ca: args.net.egress_ca.clone(),
        },
    ));
    let draining = Arc::new(AtomicBool::new(false));
    let refused = Arc::new(AtomicBool::new(false));
    let drain = draining.clone();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
            return;
        };
        rt.block_on(async {
            let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        });
        eprintln!("airlock runner: stopping: no more claims; the runs in hand are finished first");
        drain.store(true, Ordering::Relaxed);
    });
    eprintln!(
        "airlock runner {}: claiming {} run(s) at once ({}) from {}",
        escape(&queue.setup().name),
        args.slots,
        queue.setup().modes.join(", "),
        queue.servers().join(", ")
    );
    let slots: Vec<_> = (0..args.slots)
        .map(|_| {
            let (queue, draining, refused) = (queue.clone(), draining.clone(), refused.clone());
            std::thread::spawn(move || airlock_worker::slot(&*queue, &draining, &refused))
        })
        .collect();
    for s in slots {
        let _ = s.join();
    }
    if refused.load(Ordering::Relaxed) {
        eprintln!("airlock runner: the server refused this runner's token (revoked, or not in its --runner-tokens file)");
        return Ok(exit::AIRLOCK);
    }
    Ok(exit::OK)
}
