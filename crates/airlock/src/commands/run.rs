//! `airlock run`: import, scan, then inspect, plan or run a skill against a disposable target, and store the record.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};

use airlock_sandbox::{Config, Mount};
use airlock_scan::plan;
use airlock_source::{ImportOptions, SourceSpec};
use airlock_store::Store;
use airlock_types::{
    Artifact, ChangeKind, Install, RiskLevel, RunMode, RunStatus, ScanReport, SkillRun, StepResult,
    TargetInfo, SCHEMA_VERSION,
};

use super::exec::{parse_duration, LimitArgs};
use super::net::{NetArgs, UsageError};
use super::scan::SourceArgs;
use crate::exit;
use crate::settings::{data_dir, escape};

/// The bundled sample project: a small React app.
const BLANK: &[(&str, &str)] = &[
    ("package.json", include_str!("../../assets/blank/package.json")),
    ("README.md", include_str!("../../assets/blank/README.md")),
    ("index.html", include_str!("../../assets/blank/index.html")),
    (".gitignore", include_str!("../../assets/blank/.gitignore")),
    ("src/main.jsx", include_str!("../../assets/blank/src/main.jsx")),
    ("src/App.jsx", include_str!("../../assets/blank/src/App.jsx")),
    ("src/todos.js", include_str!("../../assets/blank/src/todos.js")),
    (
        "src/todos.test.js",
        include_str!("../../assets/blank/src/todos.test.js"),
    ),
];

/// Where the skill and the target appear inside the sandbox.
const SKILL_DIR: &str = "/skill";
const WORKSPACE: &str = "/workspace";

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
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub net: NetArgs,
    /// How long runs and their files are kept (e.g. 24h, 30m).
    #[arg(long, env = "AIRLOCK_RETENTION", default_value = "24h", value_parser = parse_duration)]
    pub retention: Duration,
    /// Arguments for `--script`.
    #[arg(last = true)]
    pub args: Vec<String>,
}

fn new_run_id() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "r{:04}{:02}{:02}-{:02}{:02}{:02}-{}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        airlock_sandbox::random_hex(4)
    )
}

pub fn run(args: &RunArgs) -> anyhow::Result<u8> {
    let data = data_dir(args.source.data_dir.as_ref())?;
    let mut store = Store::open(&data).context("open the store")?;
    // The background sweep: every run first deletes what has expired.
    let _ = store.gc(airlock_store::now_unix());
    // Caches another airlock may be using right now are never that old: the sweep here keeps a day at least.
    let _ = store.sweep_caches(args.retention.max(Duration::from_secs(24 * 3600)));
    let expires = airlock_store::now_unix() + i64::try_from(args.retention.as_secs()).unwrap_or(i64::MAX / 2);
    let egress = args.net.egress()?;
    let (staged, folder_name) = super::scan::import(&args.source)?;
    let report = airlock_scan::scan(&airlock_scan::ScanInput {
        source: staged.source.clone(),
        tree_root: &staged.root,
        subpath: &staged.source.subpath,
        folder_name,
        skipped: &staged.skipped,
    })
    .context("scan failed")?;
    let source_id = store.save_source(&staged.source, expires)?;
    let report_id = store.save_report(&source_id, &report, expires)?;
    let started = std::time::Instant::now();
    let mut record = SkillRun {
        schema_version: SCHEMA_VERSION,
        run_id: new_run_id(),
        source: staged.source.clone(),
        mode: match args.mode {
            Mode::Inspect => RunMode::Inspect,
            Mode::DryRun => RunMode::DryRun,
            Mode::Sandbox => RunMode::Sandbox,
        },
        target: None,
        status: RunStatus::Succeeded,
        status_reason: None,
        exit_code: None,
        started_at: airlock_types::now_rfc3339(),
        finished_at: None,
        risk_level: report.risk_level,
        classification: report.classification,
        findings: report.findings.len(),
        command: Vec::new(),
        limits: None,
        limit_hit: None,
        network_allowed: false,
        timeline: Vec::new(),
        files_read: Vec::new(),
        files_written: Vec::new(),
        changes: Vec::new(),
        patch_skipped: Vec::new(),
        network: Vec::new(),
        installs: Vec::new(),
        plan: None,
        steps: Vec::new(),
        stdout: String::new(),
        stderr: String::new(),
        stdout_truncated: false,
        stderr_truncated: false,
        artifacts: Vec::new(),
        verdict: Vec::new(),
        duration_ms: 0,
    };
    let skill_root = staged.scan_root();
    let plan = plan::plan(&staged.root, &staged.source.subpath, &report).context("plan the skill")?;
    // A skill the scan blocks is refused (and that refusal recorded) before the invocation is looked at.
    let refuse = report.risk_level == RiskLevel::Block && !args.force;
    if args.mode == Mode::Sandbox && !refuse {
        check_invocation(args, &plan, &skill_root)?;
    }
    record.plan = Some(plan);
    let target = if args.mode == Mode::Sandbox {
        Some(prepare_target(&args.target, &args.source, &data)?)
    } else {
        None
    };
    record.target = target.as_ref().map(|t| t.info.clone());
    store.begin_run(&record, &source_id, &report_id, expires)?;
    let outcome = match args.mode {
        Mode::Inspect | Mode::DryRun => Ok(()),
        Mode::Sandbox if refuse => {
            record.status = RunStatus::Refused;
            record.status_reason = Some(
                "the scan says block: this skill goes for secrets, credentials or the host; rerun with --force to run \
                 it in the sandbox anyway"
                    .into(),
            );
            Ok(())
        }
        Mode::Sandbox => match &target {
            Some(t) => sandbox_run(args, &report, &skill_root, t, egress, &store, &mut record),
            None => Ok(()),
        },
    };
    if let Err(e) = outcome {
        record.status = RunStatus::Failed;
        record.status_reason = Some(format!("{e:#}"));
    }
    record.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    record.verdict = verdict(&report, &record);
    store_artifacts(&store, &skill_root, &staged.source.subpath, &report, &mut record)?;
    record.finished_at = Some(airlock_types::now_rfc3339());
    store.finish_run(&record)?;
    if args.source.json {
        println!("{}", serde_json::to_string_pretty(&record)?);
    } else {
        print!("{}", render_summary(&record, &report));
    }
    Ok(match record.status {
        RunStatus::Succeeded => exit::OK,
        RunStatus::Refused => exit::POLICY,
        _ => exit::RUN_FAILED,
    })
}

struct Target {
    info: TargetInfo,
    /// The snapshot (never the user's folder).
    root: PathBuf,
}

fn prepare_target(target: &str, source: &SourceArgs, data: &Path) -> anyhow::Result<Target> {
    let mut options = ImportOptions::new(data);
    options.github_base = source.github_base.clone();
    options.limits.max_files = source.max_files;
    options.limits.max_total_bytes = source.max_bytes;
    let (kind, spec) = if target == "blank" {
        let dir = data.join("targets").join("blank-v1");
        if !dir.join("package.json").exists() {
            let tmp = data
                .join("targets")
                .join(format!("blank-v1.tmp{}", std::process::id()));
            for (path, text) in BLANK {
                let p = tmp.join(path);
                if let Some(parent) = p.parent() {
                    fs_err::create_dir_all(parent)?;
                }
                fs_err::write(&p, text)?;
            }
            let _ = fs_err::remove_dir_all(&dir);
            fs_err::rename(&tmp, &dir)?;
        }
        ("blank", SourceSpec::Folder(dir))
    } else {
        let spec = SourceSpec::parse_with_github_base(target, &source.github_base)
            .map_err(|e| UsageError(format!("--target {}: {e}", escape(target))))?;
        match &spec {
            SourceSpec::Folder(_) => ("path", spec),
            SourceSpec::GitHub(_) | SourceSpec::Git { .. } => ("git", spec),
            SourceSpec::Archive(_) => {
                return Err(UsageError(
                    "--target takes `blank`, a folder or a git URL, not an archive".into(),
                )
                .into())
            }
        }
    };
    let staged = airlock_source::import(&spec, &options)
        .with_context(|| format!("cannot snapshot the target {}", escape(target)))?;
    Ok(Target {
        info: TargetInfo {
            kind: kind.into(),
            input: if kind == "blank" {
                "blank".into()
            } else {
                staged.source.input.clone()
            },
            commit: staged.source.commit.as_ref().map(ToString::to_string),
            digest: staged.source.digest.clone(),
        },
        root: staged.scan_root(),
    })
}

/// Copies a tree (files and folders only; links are recreated as links, never followed).
fn copy_tree(from: &Path, to: &Path, owner: Option<u32>) -> std::io::Result<()> {
    fs_err::create_dir_all(to)?;
    fs_err::set_permissions(to, std::fs::Permissions::from_mode(0o755))?;
    if let Some(uid) = owner {
        std::os::unix::fs::lchown(to, Some(uid), Some(uid))?;
    }
    for entry in fs_err::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let meta = fs_err::symlink_metadata(&src)?;
        if meta.is_dir() {
            copy_tree(&src, &dst, owner)?;
            continue;
        }
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(fs_err::read_link(&src)?, &dst)?;
        } else if meta.is_file() {
            fs_err::copy(&src, &dst)?;
            fs_err::set_permissions(&dst, std::fs::Permissions::from_mode(meta.mode() & 0o755 | 0o644))?;
        } else {
            continue;
        }
        if let Some(uid) = owner {
            std::os::unix::fs::lchown(&dst, Some(uid), Some(uid))?;
        }
    }
    Ok(())
}

/// Refuses, before anything is stored, a sandbox run that cannot start: a `--script` outside the skill or missing,
/// or nothing to run at all.
fn check_invocation(args: &RunArgs, plan: &airlock_types::Plan, skill_root: &Path) -> Result<(), UsageError> {
    if let Some(script) = &args.script {
        let rel = script.trim_start_matches("./");
        if rel.is_empty() || rel.split('/').any(|c| c == ".." || c.is_empty()) || rel.starts_with('/') {
            return Err(UsageError(format!(
                "--script {}: give a path inside the skill",
                escape(script)
            )));
        }
        let meta = fs_err::symlink_metadata(skill_root.join(rel))
            .map_err(|_| UsageError(format!("--script {}: no such file in the skill", escape(script))))?;
        if !meta.is_file() {
            return Err(UsageError(format!(
                "--script {}: not a regular file",
                escape(script)
            )));
        }
    } else if let Some(agent) = &args.agent {
        if !AGENTS.iter().any(|(name, _)| name == agent) && split_words(agent)?.is_empty() {
            return Err(UsageError("--agent: empty command".into()));
        }
    } else if plan.steps.is_empty() {
        return Err(UsageError(
            "the skill asks for no command to run (it is instructions for an agent): give --agent to try it with \
             one, --script to run a file of it, or --mode dry-run to see what an agent would receive"
                .into(),
        ));
    }
    Ok(())
}

/// An agent CLI preset: its command, where it looks for skills, and the model host it needs.
struct AgentPreset {
    template: &'static str,
    skills_dir: &'static str,
    host: &'static str,
    key_var: &'static str,
    header: &'static str,
    bearer: bool,
    base_url_var: &'static str,
    base_url: &'static str,
}

const AGENTS: &[(&str, AgentPreset)] = &[
    (
        "claude",
        AgentPreset {
            template: "claude -p {task}",
            skills_dir: ".claude/skills",
            host: "api.anthropic.com",
            key_var: "ANTHROPIC_API_KEY",
            header: "x-api-key",
            bearer: false,
            base_url_var: "ANTHROPIC_BASE_URL",
            base_url: "http://api.anthropic.com",
        },
    ),
    (
        "codex",
        AgentPreset {
            template: "codex exec {task}",
            skills_dir: ".codex/skills",
            host: "api.openai.com",
            key_var: "OPENAI_API_KEY",
            header: "authorization",
            bearer: true,
            base_url_var: "OPENAI_BASE_URL",
            base_url: "http://api.openai.com/v1",
        },
    ),
];

/// Splits a command template into words (single and double quotes group; no other shell syntax).
fn split_words(text: &str) -> Result<Vec<String>, UsageError> {
    let (mut out, mut cur, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() {
        return Err(UsageError(format!(
            "--agent: unclosed quote in `{}`",
            escape(text)
        )));
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

fn sandbox_run(
    args: &RunArgs,
    report: &ScanReport,
    skill_root: &Path,
    target: &Target,
    mut egress: Option<airlock_egress::EgressConfig>,
    store: &Store,
    record: &mut SkillRun,
) -> anyhow::Result<()> {
    let skill_name = record
        .plan
        .as_ref()
        .and_then(|p| p.skill_name.clone())
        .or_else(|| skill_root.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| airlock_scan::skillmd::valid_name(n))
        .unwrap_or_else(|| "skill".into());
    // Root runs map the sandbox user to a dedicated uid: give it a copy it may read and write, in a folder it can
    // reach (the data folder may sit under a home it cannot enter). Ordinary users mount the staged copies.
    let scratch = tempfile::Builder::new().prefix("airlock-run-").tempdir()?;
    fs_err::set_permissions(scratch.path(), std::fs::Permissions::from_mode(0o755))?;
    let (skill_dir, target_dir) = if nix::unistd::geteuid().is_root() {
        let owner = Some(airlock_sandbox::ROOT_MODE_HOST_UID);
        copy_tree(skill_root, &scratch.path().join("skill"), None)?;
        copy_tree(&target.root, &scratch.path().join("target"), owner)?;
        (scratch.path().join("skill"), scratch.path().join("target"))
    } else {
        (skill_root.to_path_buf(), target.root.clone())
    };
    let mut config = Config::new(Vec::new());
    config.mounts.push(Mount::Rw {
        host: target_dir.clone(),
        sandbox: WORKSPACE.into(),
    });
    config.mounts.push(Mount::Ro {
        host: skill_dir.clone(),
        sandbox: SKILL_DIR.into(),
    });
    config.workdir = Some(WORKSPACE.into());
    config.env.push(("SKILL_DIR".into(), SKILL_DIR.into()));
    config.limits = args.limits.limits(Duration::from_secs(60));
    config.keep_changes = Some(scratch.path().join("changes"));
    let mut step_commands = Vec::new();
    config.command = if let Some(script) = &args.script {
        let rel = script.trim_start_matches("./");
        let full = skill_root.join(rel);
        let text = String::from_utf8_lossy(&fs_err::read(&full)?).into_owned();
        let mut command: Vec<String> = plan::interpreter(rel, &text)
            .map(|i| i.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        command.push(format!("{SKILL_DIR}/{rel}"));
        command.extend(args.args.iter().cloned());
        command
    } else if let Some(agent) = &args.agent {
        let preset = AGENTS.iter().find(|(name, _)| name == agent).map(|(_, p)| p);
        let template = preset.map_or(agent.as_str(), |p| p.template);
        let skills_dir = preset.map_or(".claude/skills", |p| p.skills_dir);
        let installed = format!("{WORKSPACE}/{skills_dir}/{skill_name}");
        config.mounts.push(Mount::Ro {
            host: skill_dir.clone(),
            sandbox: installed.clone().into(),
        });
        if let Some(p) = preset {
            // Reach the model: its host allowed, its key added by the proxy from airlock's own environment.
            let mut e = egress.take().unwrap_or_default();
            e.policy.add_preset("model-api")?;
            if let Ok(key) = std::env::var(p.key_var) {
                e.secrets.push(airlock_egress::Secret {
                    host: p.host.into(),
                    header: p.header.into(),
                    value: if p.bearer { format!("Bearer {key}") } else { key },
                });
                config.env.push((p.base_url_var.into(), p.base_url.into()));
            }
            egress = Some(e);
        }
        let words = split_words(template)?;
        if words.is_empty() {
            return Err(UsageError("--agent: empty command".into()).into());
        }
        words
            .iter()
            .map(|w| {
                w.replace("{task}", &args.task)
                    .replace("{skill_dir}", &installed)
                    .replace("{skill_name}", &skill_name)
            })
            .collect()
    } else {
        // The plan, step by step, in one sandbox so that each step sees what the ones before it did.
        let steps = record.plan.as_ref().map(|p| p.steps.clone()).unwrap_or_default();
        let mut script = String::from("cd /workspace\n");
        for (i, step) in steps.iter().enumerate() {
            let command = if step.kind == "script" {
                let rel = step
                    .file
                    .strip_prefix(&format!("{}/", report.source.subpath))
                    .unwrap_or(&step.file);
                match &step.interpreter {
                    Some(interp) => format!("{interp} {SKILL_DIR}/{}", shell_quote(rel)),
                    None => format!("{SKILL_DIR}/{}", shell_quote(rel)),
                }
            } else {
                step.command.clone()
            };
            step_commands.push((i, command.clone(), step.file.clone(), step.line));
            script.push_str(&format!(
                "echo '::airlock-step {i}::'\n( {command}\n)\necho \"::airlock-step {i} exit=$?::\"\n"
            ));
        }
        vec!["/bin/bash".into(), "-c".into(), script]
    };
    config.egress = egress;
    record.command = config.command.clone();
    let result = airlock_sandbox::run(&config, None)?;
    let out = result.stdout.clone();
    record.steps = step_commands
        .into_iter()
        .map(|(index, command, file, line)| StepResult {
            exit_code: out
                .lines()
                .find_map(|l| l.strip_prefix(&format!("::airlock-step {index} exit=")))
                .and_then(|rest| rest.trim_end_matches("::").parse().ok()),
            index,
            command,
            file,
            line,
        })
        .collect();
    record.status = result.status;
    record.exit_code = result.exit_code;
    record.limits = Some(result.limits.clone());
    record.limit_hit = result.limit_hit;
    record.network_allowed = result.network_allowed;
    record.installs = installs(&result.timeline);
    record.timeline = result.timeline;
    record.files_read = result.files_read;
    record.files_written = result.files_written;
    record.network = result.network;
    record.stdout = result.stdout;
    record.stderr = result.stderr;
    record.stdout_truncated = result.stdout_truncated;
    record.stderr_truncated = result.stderr_truncated;
    record.changes = result
        .changes
        .into_iter()
        .filter(|c| c.mount == WORKSPACE)
        .collect();
    // The patch, and each changed file, content-addressed.
    let kept = scratch.path().join("changes").join("0");
    let (patch, skipped) = crate::patch::unified(&target.root, &kept, &record.changes)?;
    record.patch_skipped = skipped;
    if !patch.is_empty() {
        let (sha, size) = store.put_bytes(patch.as_bytes())?;
        record.artifacts.push(Artifact {
            id: format!("{}-patch", record.run_id),
            kind: "patch".into(),
            path: "changes.patch".into(),
            sha256: sha,
            size,
            summary: format!("{} changed file(s) as a unified diff", record.changes.len()),
        });
    }
    for (i, c) in record.changes.iter().enumerate() {
        if c.kind == ChangeKind::Deleted {
            continue;
        }
        let path = kept.join(&c.path);
        if let Ok((sha, size)) = store.put_file(&path) {
            record.artifacts.push(Artifact {
                id: format!("{}-change-{i}", record.run_id),
                kind: "change".into(),
                path: c.path.clone(),
                sha256: sha,
                size,
                summary: format!("{:?} {}", c.kind, c.file_type).to_lowercase(),
            });
        }
    }
    Ok(())
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Package installs in the timeline. A shell that only passes a command line on is not counted (its child is).
fn installs(timeline: &[airlock_types::ExecEvent]) -> Vec<Install> {
    let shells = ["sh", "bash", "dash", "zsh"];
    let mut installers = std::collections::HashSet::new();
    let mut found: Vec<Install> = Vec::new();
    for e in timeline {
        // A process started by an install (pip running its own helpers) is part of that install.
        if installers.contains(&e.ppid) {
            installers.insert(e.pid);
            continue;
        }
        let Some(manager) = plan::install_manager(&e.argv.join(" ")) else {
            continue;
        };
        // The same process exec'ing an install again is one install: a PATH search trying the next folder, or
        // `env` starting the interpreter of `#!/usr/bin/env node`. The later exec is the one that ran.
        if let Some(last) = found.iter_mut().rev().find(|i| i.pid == e.pid) {
            last.exit_code = e.exit_code;
            continue;
        }
        let prog = e.path.rsplit('/').next().unwrap_or_default();
        // A shell passing a command line on is not the install (its child is), except `curl ... | sh`.
        if shells.contains(&prog) != (manager == "curl-pipe-shell") {
            continue;
        }
        installers.insert(e.pid);
        found.push(Install {
            manager: manager.into(),
            argv: e.argv.clone(),
            pid: e.pid,
            t_ms: e.t_ms,
            exit_code: e.exit_code,
        });
    }
    found
}

/// Joins what the scan said with what was observed.
fn verdict(report: &ScanReport, run: &SkillRun) -> Vec<String> {
    let mut out = vec![format!(
        "The scan rated this skill {} ({}) with {} finding(s).",
        report.risk_level,
        airlock_types::wire_name(&report.classification),
        report.findings.len()
    )];
    match run.mode {
        RunMode::Inspect => out.push("Nothing was executed (inspect).".into()),
        RunMode::DryRun => out.push(format!(
            "Nothing was executed (dry run); the skill asks for {} command(s).",
            run.plan.as_ref().map_or(0, |p| p.steps.len())
        )),
        RunMode::Sandbox => {}
    }
    if run.status == RunStatus::Refused {
        out.push("The run was refused because the scan says block.".into());
        return out;
    }
    if run.mode != RunMode::Sandbox {
        return out;
    }
    let warned = |words: &[&str]| {
        report.findings.iter().any(|f| {
            words.iter().any(|w| f.rule.contains(w)) && f.severity >= airlock_types::Severity::Medium
        })
    };
    // Name lookups in a run without network reach nothing (no host is known): counted apart.
    let blind_lookup = |n: &&airlock_types::NetAttempt| n.protocol == "dns" && n.host.is_none();
    let lookups = run.network.iter().filter(blind_lookup).count();
    let remote: Vec<_> = run
        .network
        .iter()
        .filter(|n| n.decision != airlock_types::NetDecision::Local && !blind_lookup(n))
        .collect();
    let mut hosts: Vec<String> = remote
        .iter()
        .map(|n| n.host.clone().unwrap_or_else(|| n.destination.clone()))
        .collect();
    hosts.sort();
    hosts.dedup();
    let denied = remote
        .iter()
        .filter(|n| n.decision == airlock_types::NetDecision::Denied)
        .count();
    let net_warned = warned(&["net", "curl", "download", "exfil", "http", "fetch", "url"]);
    if !hosts.is_empty() {
        out.push(format!(
            "{}the run tried {} destination(s) ({}): {} attempt(s) allowed, {} denied.",
            if net_warned {
                "The scan warned about network use; "
            } else {
                "The scan did not flag network use, but "
            },
            hosts.len(),
            hosts.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            remote.len() - denied,
            denied
        ));
    } else if lookups > 0 {
        out.push(format!(
            "{}the run tried {lookups} name lookup(s); with no network, nothing answered and no connection was made.",
            if net_warned { "The scan warned about network use; " } else { "The scan did not flag network use, but " }
        ));
    } else if net_warned {
        out.push("The scan warned about network use; the run made no network attempt.".into());
    }
    if !run.installs.is_empty() {
        out.push(format!(
            "It tried {} package install(s): {}.",
            run.installs.len(),
            run.installs
                .iter()
                .map(|i| i.manager.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let secrets: Vec<_> = run
        .files_read
        .iter()
        .chain(&run.files_written)
        .filter(|f| {
            [
                ".ssh",
                ".aws",
                ".env",
                ".netrc",
                ".git-credentials",
                "id_rsa",
                "shadow",
            ]
            .iter()
            .any(|s| f.path.contains(s))
        })
        .map(|f| f.path.clone())
        .collect();
    if !secrets.is_empty() {
        out.push(format!(
            "It tried to open credential-like paths ({}); the sandbox holds none of the host's.",
            secrets.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let (a, m, d) = run.changes.iter().fold((0, 0, 0), |(a, m, d), c| match c.kind {
        ChangeKind::Added => (a + 1, m, d),
        ChangeKind::Modified => (a, m + 1, d),
        ChangeKind::Deleted => (a, m, d + 1),
    });
    if a + m + d > 0 {
        out.push(format!(
            "It changed {} file(s) in the target copy ({a} added, {m} modified, {d} deleted); your project is untouched.",
            a + m + d
        ));
    } else {
        out.push("It changed no file in the target.".into());
    }
    if let Some(limit) = run.limit_hit {
        out.push(format!("It hit the {} limit.", airlock_types::wire_name(&limit)));
    }
    out.push(format!(
        "It ran {} program(s) and ended {} (exit {}).",
        run.timeline.len(),
        airlock_types::wire_name(&run.status),
        run.exit_code.map_or("none".into(), |c| c.to_string())
    ));
    out
}

/// Stores the record's outputs, the report and the skill's files (for a bundle), content-addressed.
fn store_artifacts(
    store: &Store,
    skill_root: &Path,
    subpath: &str,
    report: &ScanReport,
    record: &mut SkillRun,
) -> anyhow::Result<()> {
    let mut added = Vec::new();
    let mut add = |kind: &str, path: &str, (sha256, size): (String, u64), summary: String| {
        added.push(Artifact {
            id: format!(
                "{}-{kind}-{}",
                record.run_id,
                record.artifacts.len() + added.len()
            ),
            kind: kind.into(),
            path: path.into(),
            sha256,
            size,
            summary,
        });
    };
    let report_json = serde_json::to_vec_pretty(report)?;
    add(
        "report",
        "report.json",
        store.put_bytes(&report_json)?,
        format!("risk {}", report.risk_level),
    );
    for (kind, text, what) in [
        ("stdout", &record.stdout, "output"),
        ("stderr", &record.stderr, "errors"),
    ] {
        if !text.is_empty() {
            let summary = format!("{} bytes of {what}", text.len());
            add(
                kind,
                &format!("{kind}.txt"),
                store.put_bytes(text.as_bytes())?,
                summary,
            );
        }
    }
    let from = if subpath.is_empty() {
        String::new()
    } else {
        format!(", from {subpath}")
    };
    for f in &report.source.detected_files {
        let path = skill_root.join(f);
        let Ok(meta) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_file() {
            let mode = if meta.mode() & 0o111 != 0 { "755" } else { "644" };
            add(
                "skill-file",
                f,
                store.put_file(&path)?,
                format!("mode {mode}{from}"),
            );
        }
    }
    record.artifacts.append(&mut added);
    Ok(())
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
    if run.mode == RunMode::DryRun {
        if let Some(plan) = &run.plan {
            out.push_str("\nContext an agent would receive:\n");
            for c in &plan.context {
                out.push_str(&format!("  {} ({} bytes)\n", escape(&c.path), c.bytes));
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
                    "  {}:{}  [{}] {}{}\n",
                    escape(&s.file),
                    s.line,
                    s.kind,
                    escape(&s.command),
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
            out.push_str(&format!(
                "  {}:{}  {}  -> {}\n",
                escape(&step.file),
                step.line,
                escape(&step.command),
                step.exit_code
                    .map_or("did not finish".into(), |c| format!("exit {c}"))
            ));
        }
    }
    if run.mode == RunMode::Sandbox && run.status != RunStatus::Refused {
        out.push_str(&format!(
            "\nSee `airlock show {0} --timeline|--files|--diff|--net`; export with `airlock export {0} --patch FILE`.\n",
            run.run_id
        ));
    }
    out
}
