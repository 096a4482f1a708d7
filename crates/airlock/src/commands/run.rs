//! `airlock run`: the arguments and the printed summary; the run itself is `airlock_run::execute`.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};

use airlock_protocol::RunSpec;
use airlock_run::RunEvent;
use airlock_store::Store;
use airlock_types::{RunMode, RunStatus, ScanReport, SkillRun};

use super::exec::{parse_duration, LimitArgs};
use super::net::NetArgs;
use super::scan::SourceArgs;
use crate::exit;
use crate::settings::{escape, field};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// The scan only: nothing executes.
    Inspect,
    /// The context an agent would get and the commands the skill asks for: nothing executes.
    DryRun,
    /// Run in the sealed sandbox against a disposable target.
    Sandbox,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// What to do with the skill.
    #[arg(long, value_enum, default_value_t = Mode::Sandbox)]
    pub mode: Mode,
    /// The project to work on: `blank` (a bundled React sample), a folder or a git URL. Always a snapshot copy.
    #[arg(long, default_value = "blank")]
    pub target: String,
    /// Run one of the skill's scripts (path inside the skill), with the arguments after `--`.
    #[arg(long, value_name = "PATH_IN_SKILL", conflicts_with = "agent")]
    pub script: Option<String>,
    /// Run an agent CLI with the skill installed where it looks for skills: `claude`, `codex`, or a command
    /// template with {task}, {skill_dir} and {skill_name}.
    #[arg(long, value_name = "NAME|TEMPLATE")]
    pub agent: Option<String>,
    /// The prompt for `--agent`.
    #[arg(long, default_value = "Use the installed skill on this project.")]
    pub task: String,
    /// Run even when the scan says `block`.
    #[arg(long)]
    pub force: bool,
    /// Do not install what the skill needs (its requirements files and imported Python packages) before the run.
    #[arg(long)]
    pub no_install: bool,
    /// Make the host's /opt visible read-only in the sandbox (software installed there); hidden by default.
    #[arg(long)]
    pub host_opt: bool,
    /// The Python package index the install phase uses (a mirror), instead of PyPI; its host is allowed for the
    /// install phase only.
    #[arg(long, value_name = "URL", env = "AIRLOCK_PIP_INDEX_URL")]
    pub pip_index_url: Option<String>,
    /// The npm registry the install phase uses (a mirror), instead of registry.npmjs.org; its host is allowed for
    /// the install phase only.
    #[arg(long, value_name = "URL", env = "AIRLOCK_NPM_REGISTRY")]
    pub npm_registry: Option<String>,
    /// Time the install phase may take, e.g. 10m [default: 5m].
    #[arg(long, value_name = "DURATION", value_parser = super::exec::parse_duration)]
    pub install_timeout: Option<Duration>,
    /// Memory the install phase may use, e.g. 4G (a large dependency set: torch, chromadb) [default: 1G].
    #[arg(long, value_name = "SIZE", value_parser = super::exec::parse_size)]
    pub install_memory: Option<u64>,
    /// Disk the install phase may write, e.g. 8G [default: 2G].
    #[arg(long, value_name = "SIZE", value_parser = super::exec::parse_size)]
    pub install_disk: Option<u64>,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub net: NetArgs,
    /// How long runs and their files are kept (e.g. 24h, 30m).
    #[arg(long, env = "AIRLOCK_RETENTION", default_value = "24h", value_parser = parse_duration)]
    pub retention: Duration,
    /// The operator's policy (docs/policy.md): the most any skill gets, whatever it declares; deny wins and the
    /// stricter limit applies.
    #[arg(long, value_name = "FILE", env = "AIRLOCK_POLICY")]
    pub policy: Option<std::path::PathBuf>,
    /// Apply the policy the skill declares (`airlock.toml` or SKILL.md's `metadata.security_policy`): its network
    /// rules and resources, within `--policy` and under the limits given as flags.
    #[arg(long)]
    pub accept_policy: bool,
    #[command(flatten)]
    pub server: super::remote::ServerArgs,
    /// Arguments for `--script`.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// The run as every face asks for it: the same whether it runs here or on a server.
pub fn spec(args: &RunArgs, source: &str) -> RunSpec {
    let limits = &args.limits;
    let mib = |bytes: u64| bytes.div_ceil(1 << 20);
    RunSpec {
        source: source.to_owned(),
        mode: match args.mode {
            Mode::Inspect => RunMode::Inspect,
            Mode::DryRun => RunMode::DryRun,
            Mode::Sandbox => RunMode::Sandbox,
        },
        target: args.target.clone(),
        script: args.script.clone(),
        args: args.args.clone(),
        agent: args.agent.clone(),
        task: args.agent.as_ref().map(|_| args.task.clone()),
        // Whole seconds, at least one.
        timeout_secs: limits.timeout.map(|t| t.as_millis().div_ceil(1000).max(1) as u64),
        memory_mb: limits.memory.map(mib),
        disk_mb: limits.disk.map(mib),
        pids: limits.pids,
        cpus: limits.cpus,
        allow_net: args.net.allow_net.clone(),
        force: args.force,
        accept_policy: args.accept_policy,
        install: !args.no_install,
    }
}

pub fn run(args: &RunArgs) -> anyhow::Result<u8> {
    if let Some(remote) = args.server.remote()? {
        return run_remote(args, &remote);
    }
    let settings = args.source.import_settings()?;
    let mut store = Store::open(&settings.data_dir).context("open the store")?;
    // The background sweep: every run first deletes what has expired.
    let _ = store.gc(airlock_store::now_unix());
    // Caches another airlock may be using right now are never that old: the sweep here keeps a day at least.
    let _ = store.sweep_caches(args.retention.max(Duration::from_secs(24 * 3600)));
    let ctx = airlock_run::request::Context {
        allow_net: None,
        // Every network flag but the hosts, which the request carries.
        egress: args.net.egress()?,
        retention: args.retention,
        helper: None,
        policy: args
            .policy
            .as_deref()
            .map(super::net::operator_policy)
            .transpose()?,
        host_opt: args.host_opt,
        pip_index_url: args.pip_index_url.clone(),
        npm_registry: args.npm_registry.clone(),
        install_limits: {
            let d = airlock_run::environment::InstallLimits::default();
            airlock_run::environment::InstallLimits {
                timeout: args.install_timeout.unwrap_or(d.timeout),
                memory_bytes: args.install_memory.unwrap_or(d.memory_bytes),
                disk_bytes: args.install_disk.unwrap_or(d.disk_bytes),
            }
        },
        bounded: false,
    };
    let parse = |input: &str| -> anyhow::Result<airlock_source::SourceSpec> { Ok(settings.parse(input)?) };
    let request = airlock_run::request::build(&spec(args, &args.source.source), &ctx, None, None, &parse)?;
    // Phases on a terminal's stderr, so a long run shows where it is; the record is printed at the end.
    let progress = std::io::stderr().is_terminal() && !args.source.json;
    let on_event: airlock_run::OnEvent = std::sync::Arc::new(move |event: RunEvent| {
        if let (true, RunEvent::Phase { phase, message, .. }) = (progress, event) {
            eprintln!("  {:<12} {}", airlock_types::wire_name(&phase), escape(&message));
        }
    });
    let outcome = airlock_run::execute(&request, &settings, &mut store, &on_event)?;
    if args.source.json {
        outln!("{}", serde_json::to_string_pretty(&outcome.record)?);
    } else {
        out!("{}", render_summary(&outcome.record, &outcome.report));
    }
    Ok(run_exit_code(&outcome.record))
}

/// `run --server`: the server imports (an upload, for a local folder), scans, queues and runs; its phases are shown as
/// they happen and the record prints as a local run's does.
fn run_remote(args: &RunArgs, remote: &super::remote::Remote) -> anyhow::Result<u8> {
    let source = remote.source(&args.source.source)?;
    let body = new_run(args, &source)?;
    let view: airlock_protocol::SourceView =
        remote.post("/api/sources", &airlock_protocol::NewSource { url: source })?;
    let report: ScanReport = remote.get(&format!("/api/sources/{}/report", view.id))?;
    let queued: airlock_protocol::RunView = remote.post("/api/runs", &body)?;
    let id = queued.run_id;
    let progress = std::io::stderr().is_terminal() && !args.source.json;
    if progress {
        if let Some(place) = queued.position {
            eprintln!("  queued       place {place}");
        }
    }
    let followed = remote.follow(&id, &|phase, message| {
        if progress {
            eprintln!("  {phase:<12} {}", escape(message));
        }
    })?;
    let record = match followed {
        super::remote::Followed::Record(record) => *record,
        super::remote::Followed::Ended(view) => {
            // No record to print: what the server knows, in the same two forms, and the exit code of a failed run.
            if args.source.json {
                outln!("{}", serde_json::to_string_pretty(&view)?);
            } else {
                out!("{}", render_lost(&id, &report, &view));
            }
            return Ok(exit::of_command(RunStatus::Failed, None, None));
        }
    };
    if args.source.json {
        outln!("{}", serde_json::to_string_pretty(&record)?);
    } else {
        out!("{}", render_summary(&record, &report));
    }
    Ok(run_exit_code(&record))
}

/// A run that ended without a record (its runner was lost mid-run), as the server tells it.
fn render_lost(id: &str, report: &ScanReport, view: &airlock_protocol::RunView) -> String {
    let mut out = format!(
        "run {}  {}  status {}\n",
        field(id),
        escape(&report.source.input),
        field(&view.status)
    );
    out.push_str(&format!(
        "  it ended without a record: {}{}\n",
        view.message
            .as_deref()
            .map_or_else(|| "no reason given".into(), field),
        view.runner
            .as_deref()
            .map_or(String::new(), |r| format!(" (runner {})", field(r)))
    ));
    out.push_str(
        "  Nothing it did was kept: no changes, no output. Submit it again; `airlock show RUN --server ...` shows \
         the same.\n",
    );
    out
}

/// The run's exit code: the first failing step's own code (or 128 + its signal), 124 for the time limit, 1 for a
/// run the scan blocked; see [`exit`].
fn run_exit_code(run: &SkillRun) -> u8 {
    let failing = run
        .steps
        .iter()
        .find(|s| s.exit_code != Some(0) && (s.exit_code.is_some() || s.signal.is_some()));
    match failing {
        Some(step) if run.status != RunStatus::TimedOut => {
            exit::of_command(RunStatus::Failed, step.exit_code, step.signal)
        }
        _ => exit::of_command(run.status, run.exit_code, None),
    }
}

/// When the install phase was refused a registry for resolving to a private address (a network that points the
/// registries' names at an internal mirror), every host of those registries, so one rerun can name them all
/// (pip fetches from two hosts; the refusal names the first it reached).
fn registry_hosts_to_trust(env: &airlock_types::Environment) -> Option<String> {
    let private = env.refusals().iter().any(|r| r.contains("--trust-name"));
    if !private {
        return None;
    }
    let npm = env.requirements.iter().any(|r| r.starts_with("npm:"));
    let pip = !env.modules.is_empty() || env.requirements.iter().any(|r| !r.starts_with("npm:"));
    let mut hosts = Vec::new();
    if pip {
        hosts.extend(["pypi.org", "files.pythonhosted.org"]);
    }
    if npm {
        hosts.push("registry.npmjs.org");
    }
    (!hosts.is_empty()).then(|| hosts.join(","))
}

/// Lines of output shown on screen, from the end.
const SHOWN_LINES: usize = 12;

/// What the run printed, on screen: for a failed step, the end of that step's own stdout and stderr; for a run
/// that succeeded, the end of its output; the whole of it is one `export --output` away.
fn output_section(run: &SkillRun) -> String {
    let tail = |text: &str, n: usize| -> Vec<String> {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|l| field(l))
            .collect()
    };
    let mut out = String::new();
    let failing = run
        .steps
        .iter()
        .position(|s| s.exit_code != Some(0) && (s.exit_code.is_some() || s.signal.is_some()));
    let own = failing.and_then(|i| {
        airlock_run::verdict::step_streams(run, i).map(|(out, err)| {
            let step = &run.steps[i];
            (
                out,
                err,
                format!("the failed step ({}:{})", field(&step.file), step.line),
            )
        })
    });
    let (stdout, stderr, what) =
        own.unwrap_or_else(|| (run.stdout.clone(), run.stderr.clone(), "the run".to_owned()));
    let failed = run.status != RunStatus::Succeeded;
    let err = tail(&stderr, if failed { SHOWN_LINES } else { 4 });
    let outp = tail(&stdout, if failed { SHOWN_LINES / 2 } else { SHOWN_LINES });
    // A run that succeeded shows its errors only when it printed nothing else (tools that report on stderr).
    let show_errors = !err.is_empty() && (failed || outp.is_empty());
    if !outp.is_empty() {
        out.push_str(&format!("\nWhat {what} printed (last lines):\n"));
        for l in outp {
            out.push_str(&format!("  > {l}\n"));
        }
    }
    if show_errors {
        out.push_str(&format!("\nWhat {what} wrote to stderr (last lines):\n"));
        for l in err {
            out.push_str(&format!("  | {l}\n"));
        }
    }
    out
}

/// A command for the summary: one line as it is, a longer script with its later lines indented under the first.
fn command_text(command: &str) -> String {
    let mut lines = command.lines();
    let mut out = field(lines.next().unwrap_or_default());
    for l in lines {
        out.push_str("\n        | ");
        out.push_str(&field(l));
    }
    out
}

fn render_summary(run: &SkillRun, report: &ScanReport) -> String {
    let mut out = format!(
        "run {}  {}  mode {}  status {}\n",
        run.run_id,
        escape(&report.source.input),
        airlock_types::wire_name(&run.mode),
        airlock_types::wire_name(&run.status),
    );
    if let Some(reason) = &run.status_reason {
        out.push_str(&format!("  {}\n", escape(reason)));
    }
    for v in &run.verdict {
        out.push_str(&format!("- {}\n", escape(v)));
    }
    if let Some(env) = &run.environment {
        if env.status != "nothing to install" || !env.missing_programs.is_empty() {
            out.push_str(&format!(
                "\nEnvironment: {}{}\n",
                field(&env.status),
                if env.cached {
                    String::new()
                } else if env.duration_ms > 0 {
                    format!(" in {:.1} s", env.duration_ms as f64 / 1000.0)
                } else {
                    String::new()
                }
            ));
            if !env.installed.is_empty() {
                out.push_str(&format!("  installed: {}\n", field(&env.installed.join(", "))));
            }
            if !env.failed.is_empty() {
                out.push_str(&format!(
                    "  could not install: {}\n",
                    field(&env.failed.join(", "))
                ));
                for l in &env.errors_tail {
                    out.push_str(&format!("  | {}\n", field(l)));
                }
                for r in env.refusals().into_iter().take(4) {
                    out.push_str(&format!("  network refused: {}\n", field(r)));
                }
                if let Some(all) = registry_hosts_to_trust(env) {
                    out.push_str(&format!(
                        "  to trust every registry host this install uses at once: \
                         --trust-name {all}\n"
                    ));
                }
            }
            for p in &env.missing_programs {
                out.push_str(&format!("  needs {}: {}\n", field(p), field(&env.missing_why(p))));
            }
        }
    }
    if let Some(p) = &run.policy {
        if p.accepted || p.operator.is_some() {
            out.push_str("\nPolicy:\n");
            for part in &p.parts {
                out.push_str(&format!(
                    "  {:<20} {:<28} {}\n",
                    part.key,
                    field(&part.value),
                    field(&part.from)
                ));
            }
        }
        for r in &p.refused {
            out.push_str(&format!("  not granted: {}\n", field(r)));
        }
        for b in &p.beyond {
            out.push_str(&format!(
                "  beyond the declared policy: {} {} ({})\n",
                b.kind,
                field(&b.what),
                field(&b.evidence)
            ));
        }
    }
    if run.mode == RunMode::Inspect || run.status == RunStatus::Refused {
        out.push('\n');
        out.push_str(&airlock_scan::render::text(
            report,
            crate::settings::color_stdout(),
            false,
        ));
    }
    if run.mode == RunMode::DryRun {
        if let Some(plan) = &run.plan {
            out.push_str("\nContext an agent would receive:\n");
            for c in &plan.context {
                out.push_str(&format!("  {} ({} bytes)\n", escape(&c.path), c.bytes));
            }
            if let Some(body) = plan.context.first().and_then(|c| c.text.as_deref()) {
                out.push_str("\nSKILL.md's body, as an agent reads it:\n");
                for l in body.lines() {
                    out.push_str(&format!("  | {}\n", field(l)));
                }
            }
            if !plan.allowed_tools.is_empty() {
                out.push_str(&format!(
                    "  allowed-tools: {}\n",
                    escape(&plan.allowed_tools.join(", "))
                ));
            }
            out.push_str("\nCommands the skill asks for:\n");
            for s in &plan.steps {
                out.push_str(&format!(
                    "  {}:{}  [{}] {}{}{}{}\n",
                    escape(&s.file),
                    s.line,
                    s.kind,
                    command_text(&s.command),
                    s.note
                        .as_ref()
                        .map_or(String::new(), |n| format!("  ({})", field(n))),
                    s.example
                        .as_ref()
                        .map_or(String::new(), |e| format!("  (not run: {})", field(e))),
                    if s.findings.is_empty() {
                        String::new()
                    } else {
                        format!("  <- {}", s.findings.join(", "))
                    }
                ));
            }
        }
    }
    if !run.steps.is_empty() {
        out.push_str("\nSteps:\n");
        for step in &run.steps {
            let missing = run.environment.as_ref().and_then(|env| {
                let program = step.command.split_whitespace().next()?;
                let p = env.missing_programs.iter().find(|p| p.as_str() == program)?;
                Some((p, env.missing_why(p)))
            });
            out.push_str(&format!(
                "  {}:{}  {}  -> {}{}\n",
                escape(&step.file),
                step.line,
                command_text(&step.command),
                step.exit_code
                    .map_or("did not finish".into(), |c| format!("exit {c}")),
                missing.map_or(String::new(), |(p, why)| format!(
                    "  (needs {}: {})",
                    field(p),
                    field(&why)
                ))
            ));
        }
    }
    // The plan's steps that were listed and not run, each with why: a skipped step is never silent.
    let planned_run = run.mode == RunMode::Sandbox && (!run.steps.is_empty() || run.command.is_empty());
    if let Some(plan) = run.plan.as_ref().filter(|_| planned_run) {
        let skipped: Vec<_> = plan.steps.iter().filter(|s| s.example.is_some()).collect();
        if !skipped.is_empty() {
            out.push_str("\nNot run (listed, with why):\n");
            for s in skipped {
                let at = match s.line {
                    0 => escape(&s.file),
                    n => format!("{}:{n}", escape(&s.file)),
                };
                out.push_str(&format!(
                    "  {at}  {}  ({})\n",
                    command_text(&s.command),
                    field(s.example.as_deref().unwrap_or_default())
                ));
            }
        }
    }
    if run.mode == RunMode::Sandbox && run.status != RunStatus::Refused {
        out.push_str(&output_section(run));
    }
    if run.mode == RunMode::Sandbox && run.status != RunStatus::Refused {
        out.push_str(&format!(
            "\nSee `airlock show {0} --timeline|--files|--diff|--net|--findings`; the whole output with \
             `airlock export {0} --output`; the changes with `airlock export {0} --patch FILE`, then `git apply FILE` \
             in your project.\n",
            run.run_id
        ));
    }
    out
}

/// What `POST /api/runs` takes, from `run`'s arguments: the same request a local run is built from.
fn new_run(args: &RunArgs, source: &str) -> anyhow::Result<airlock_protocol::RunSpec> {
    if args.target != "blank" && std::path::Path::new(&args.target).exists() {
        anyhow::bail!(
            "--server runs against the bundled sample or a git URL the server can reach, not a local folder"
        );
    }
    Ok(spec(args, source))
}
