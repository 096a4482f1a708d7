//! `airlock exec` and `airlock doctor`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use airlock_sandbox::{Config, Limits, Mount};

use crate::exit;
use crate::settings::escape;

/// The resource limits shared by `airlock exec` and `airlock run`.
#[derive(Debug, Clone, Default, Args)]
pub struct LimitArgs {
    /// Wall-clock limit, e.g. 30s, 2m (default: 30s for exec, 60s for run).
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Memory limit (address space), e.g. 512M [default: 512M].
    #[arg(long, value_parser = parse_size)]
    pub memory: Option<u64>,
    /// Disk limit for everything the run writes, e.g. 256M [default: 256M].
    #[arg(long, value_parser = parse_size)]
    pub disk: Option<u64>,
    /// Most processes [default: 256].
    #[arg(long)]
    pub pids: Option<u64>,
    /// CPUs the command may use [default: 1].
    #[arg(long)]
    pub cpus: Option<u32>,
}

impl LimitArgs {
    pub fn limits(&self, default_timeout: Duration) -> Limits {
        Limits {
            timeout: self.timeout.unwrap_or(default_timeout),
            memory_bytes: self.memory.unwrap_or(512 << 20),
            disk_bytes: self.disk.unwrap_or(256 << 20),
            pids: self.pids.unwrap_or(256),
            cpus: self.cpus.unwrap_or(1),
            open_files: 1024,
        }
    }
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Mount a host folder read-only: HOST[:SANDBOX_PATH] (same path inside by default).
    #[arg(long, value_name = "PATH")]
    pub ro: Vec<String>,
    /// Mount a host folder copy-on-write: HOST[:SANDBOX_PATH]. The host folder is never written.
    #[arg(long, value_name = "PATH")]
    pub rw: Vec<String>,
    /// Working directory inside the sandbox.
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    #[command(flatten)]
    pub net: super::net::NetArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Set an environment variable inside (nothing from the host is passed).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Append one JSON line describing the run to this file.
    #[arg(long, value_name = "FILE.jsonl")]
    pub audit: Option<PathBuf>,
    /// Print the run record as JSON on stdout (the command's output is inside it).
    #[arg(long)]
    pub json: bool,
    /// Do not record file opens (execs, connects and exits are still recorded).
    #[arg(long)]
    pub no_record_files: bool,
    /// Make the host's /opt visible read-only (software installed there); hidden by default.
    #[arg(long)]
    pub host_opt: bool,
    /// Read the request as one JSON object on stdin and print the result and the record as one JSON object on
    /// stdout (see docs/json-io.md); no other flag or command is taken.
    #[arg(long, conflicts_with_all = ["ro", "rw", "workdir", "env", "json", "audit", "no_record_files", "host_opt", "command"])]
    pub json_io: bool,
    /// With --json-io: keep answering, one JSON request per line on stdin and one answer per line on stdout, until
    /// stdin closes (each request still gets a sandbox of its own).
    #[arg(long, requires = "json_io")]
    pub serve: bool,
    /// The command and its arguments.
    #[arg(last = true, required_unless_present = "json_io")]
    pub command: Vec<String>,
}

pub use airlock_types::policy::{parse_duration, parse_size};

fn mount_arg(text: &str) -> (PathBuf, PathBuf) {
    match text.split_once(':') {
        Some((host, sandbox)) => (PathBuf::from(host), PathBuf::from(sandbox)),
        None => {
            let abs = std::path::absolute(text).unwrap_or_else(|_| PathBuf::from(text));
            (PathBuf::from(text), abs)
        }
    }
}

/// `airlock exec` with a command (`--json-io` is `json_io::json_io`'s, chosen by `main`).
pub fn exec(args: &ExecArgs) -> anyhow::Result<u8> {
    let record = sandbox_record(args)?;
    report(args, &record)
}

/// Runs the command as the arguments say and returns its record.
fn sandbox_record(args: &ExecArgs) -> anyhow::Result<airlock_types::RunRecord> {
    let config = build_config(
        &args.sealed()?,
        args.limits.limits(Duration::from_secs(30)),
        args.net.egress()?,
    )?;
    Ok(airlock_sandbox::run(&config, None)?)
}

/// One sealed command, however it was asked for (`exec`'s flags, a `--json-io` request).
pub(super) struct Sealed {
    pub command: Vec<String>,
    /// Host folders: `HOST[:SANDBOX_PATH]`.
    pub ro: Vec<String>,
    pub rw: Vec<String>,
    pub workdir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub record_files: bool,
    pub host_opt: bool,
}

impl ExecArgs {
    fn sealed(&self) -> anyhow::Result<Sealed> {
        let env = self
            .env
            .iter()
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .with_context(|| format!("--env {kv}: use K=V"))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Sealed {
            command: self.command.clone(),
            ro: self.ro.clone(),
            rw: self.rw.clone(),
            workdir: self.workdir.clone(),
            env,
            record_files: !self.no_record_files,
            host_opt: self.host_opt,
        })
    }
}

/// The sandbox's configuration for a sealed command, with these limits and this egress.
pub(super) fn build_config(
    sealed: &Sealed,
    limits: Limits,
    egress: Option<airlock_egress::EgressConfig>,
) -> anyhow::Result<Config> {
    let mut config = Config::new(sealed.command.clone());
    config.egress = egress;
    for ro in &sealed.ro {
        let (host, sandbox) = mount_arg(ro);
        config.mounts.push(Mount::Ro { host, sandbox });
    }
    for rw in &sealed.rw {
        let (host, sandbox) = mount_arg(rw);
        config.mounts.push(Mount::Rw { host, sandbox });
    }
    config.workdir = sealed.workdir.clone();
    config.env.extend(sealed.env.iter().cloned());
    config.limits = limits;
    config.record_files = sealed.record_files;
    config.host_opt = sealed.host_opt;
    Ok(config)
}

/// Writes the audit line and prints the record or the output and a summary.
fn report(args: &ExecArgs, record: &airlock_types::RunRecord) -> anyhow::Result<u8> {
    if let Some(path) = &args.audit {
        let line = json!({
            "ts": record.started_at,
            "command": record.command,
            "exit_code": record.exit_code,
            "duration_ms": record.duration_ms,
            "request_id": record.request_id,
            "network_allowed": record.network_allowed,
            "memory_limit_mb": record.limits.memory_bytes >> 20,
            "timed_out": record.timed_out,
            "status": record.status,
            "limit_hit": record.limit_hit,
            "limits": record.limits,
            "execs": record.timeline.len(),
            "files_read": record.files_read.len(),
            "files_written": record.files_written.len(),
            "network_attempts": record.network.len(),
        });
        let mut file = fs_err::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(file, "{line}")?;
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(record)?);
    } else {
        out!("{}", escape(&record.stdout));
        eprint!("{}", escape(&record.stderr));
        eprintln!(
            "airlock: {} ({}) in {} ms; {} exec(s), {} file(s) read, {} written, {} network attempt(s){}",
            airlock_types::wire_name(&record.status),
            match (record.exit_code, record.signal) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(s)) => format!("killed by signal {s}"),
                (None, None) if record.status == airlock_types::RunStatus::TimedOut =>
                    "stopped at the time limit".to_owned(),
                (None, None) => "no exit code".to_owned(),
            },
            record.duration_ms,
            record.timeline.len(),
            record.files_read.len(),
            record.files_written.len(),
            record.network.len(),
            record
                .limit_hit
                .map_or(String::new(), |l| format!("; limit hit: {l:?}")),
        );
    }
    Ok(exit::of_command(record.status, record.exit_code, record.signal))
}

pub fn doctor(json: bool) -> anyhow::Result<u8> {
    let report = airlock_sandbox::doctor(None);
    if json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for c in &report.checks {
            outln!(
                "{} {}: {}",
                if c.ok { "ok  " } else { "MISSING" },
                c.layer,
                escape(&c.detail)
            );
            if !c.ok {
                if let Some(fix) = &c.fix {
                    outln!("       fix: {fix}");
                }
            }
        }
        // Where allowed traffic would leave: direct, or through the proxy in airlock's environment.
        match airlock_egress::Upstream::from_env() {
            Ok(None) => {
                outln!("ok   egress: direct (no HTTPS_PROXY or HTTP_PROXY in airlock's environment)")
            }
            Ok(Some(up)) => {
                let show = |p: &Option<airlock_egress::ProxyAddr>| {
                    p.as_ref().map_or("direct".to_owned(), |p| escape(&p.to_string()))
                };
                outln!(
                    "ok   egress: through the upstream proxy (HTTPS and other TCP: {}; plain HTTP: {}), NO_PROXY honoured",
                    show(&up.https),
                    show(&up.http)
                );
            }
            Err(e) => outln!("MISSING egress: {}", escape(&e)),
        }
        // The key statements are signed with (`scan --attest`, `export --attestation`).
        if let Ok(data) = crate::settings::data_dir(None) {
            if airlock_attest::Keys::path(&data).is_file() {
                match airlock_attest::Keys::load_or_create(&data) {
                    Ok(k) => outln!("ok   signing key: {} (public key {})", k.key_id(), k.public_hex()),
                    Err(e) => outln!("MISSING signing key: {}", escape(&e.to_string())),
                }
            } else {
                outln!(
                    "ok   signing key: none yet (made on first use in {})",
                    escape(&data.display().to_string())
                );
            }
        }
        outln!(
            "{}",
            if report.ready {
                "ready: airlock exec can run here"
            } else {
                "not ready: see the fixes above"
            }
        );
    }
    Ok(if report.ready { exit::OK } else { exit::POLICY })
}
