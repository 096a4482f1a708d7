//! Detonation: the skill's runnable parts (the commands its instructions run, every script it ships) run sealed
//! with planted secrets (canaries: tokens in the environment, an SSH key, cloud and git credentials, a project
//! `.env`, an agent's login) and a sinkhole network (every name resolves to a catcher on this machine, every TCP
//! connect ends there, TLS is opened with a certificate only this run trusts). What touched a canary and what would
//! have left becomes findings of the report, each citing the file and line it came from, with the bytes as
//! evidence. Nothing leaves the machine: the install phase is skipped (an environment installed before is reused).

mod canaries;
mod findings;

use std::path::{Path, PathBuf};
use std::time::Duration;

use airlock_types::{FileKind, Finding, PlanStep, RunMode, ScanReport};

pub use canaries::{secret_variables, Canaries};
pub use findings::findings;

use crate::{ImportSettings, Invocation, OnEvent, RunError, RunRequest};

/// Where the stand-ins for missing Python modules are, inside the sandbox (last on Python's path).
const STAND_INS_DIR: &str = "/etc/airlock/python-stand-ins";
/// The stand-ins, loaded at Python's start-up as `sitecustomize`.
const STAND_INS: &str = include_str!("stand_ins.py");

/// The remote a detonation's project has (a project without one is what a skill checks to find a sandbox).
pub(crate) const DECOY_ORIGIN: &str = "https://github.com/acme-labs/webapp.git";

/// The time a detonation gets by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most scripts a detonation adds to the plan.
const MAX_SCRIPTS: usize = 16;

/// How a detonation runs.
#[derive(Debug, Clone)]
pub struct DetonateOptions {
    pub timeout: Duration,
    /// The executable that starts the sandbox, as for a run.
    pub helper: Option<PathBuf>,
    pub source_name: Option<String>,
    pub run_id: Option<String>,
    pub retention: Duration,
}

impl Default for DetonateOptions {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            helper: None,
            source_name: None,
            run_id: None,
            retention: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// What a detonation found.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Detonation {
    /// The stored run (see `airlock show`), when anything ran.
    pub run_id: Option<String>,
    pub status: String,
    /// Steps run, of which scripts added by the detonation.
    pub steps: usize,
    pub duration_ms: u64,
    pub findings: Vec<Finding>,
    /// One sentence for the report's headline.
    pub summary: String,
    /// The static report the run was based on (none when nothing ran).
    #[serde(skip)]
    pub report: Option<ScanReport>,
}

impl Detonation {
    /// The report with this detonation's evidence: judged again, dated now (so a store keeps it as the source's
    /// latest report).
    pub fn judged(&self, report: &ScanReport) -> ScanReport {
        let mut report = report.clone();
        airlock_scan::add_evidence(&mut report, self.findings.clone(), self.summary.clone());
        report.created_at = airlock_types::now_rfc3339();
        report
    }
}

/// Runs the skill's runnable parts sealed with canaries and a sinkhole network; the findings say what touched a
/// canary and what would have left. A skill with nothing to run gives no finding and says so.
pub fn detonate(
    source: &airlock_source::SourceSpec,
    settings: &ImportSettings,
    store: &mut airlock_store::Store,
    options: &DetonateOptions,
    on_event: &OnEvent,
) -> Result<Detonation, RunError> {
    // The secret variables the skill names get canaries of their own.
    let named = match crate::import(source, settings) {
        Ok(imported) => named_variables(&imported.staged.scan_root()),
        Err(_) => Vec::new(),
    };
    let canaries = Canaries::plant(&named);
    let mut limits = airlock_sandbox::Limits {
        timeout: options.timeout,
        ..airlock_sandbox::Limits::default()
    };
    limits.memory_bytes = limits.memory_bytes.max(1 << 30);
    let request = RunRequest {
        source: source.clone(),
        mode: RunMode::Sandbox,
        target: "blank".into(),
        invocation: Invocation::Plan,
        force: true,
        limits,
        egress: None,
        retention: options.retention,
        run_id: options.run_id.clone(),
        cancel: None,
        helper: options.helper.clone(),
        environment: crate::environment::EnvOptions {
            cached_only: true,
            ..Default::default()
        },
        host_opt: false,
        policy: crate::policy::PolicyOptions::default(),
        source_name: options.source_name.clone(),
        detonation: Some(canaries.clone()),
    };
    let outcome = match crate::execute(&request, settings, store, on_event) {
        Ok(o) => o,
        Err(RunError::NothingToRun { message, .. }) => {
            return Ok(Detonation {
                run_id: None,
                status: "nothing to run".into(),
                steps: 0,
                duration_ms: 0,
                findings: Vec::new(),
                summary: format!("Not detonated: nothing to run ({})", first_sentence(&message)),
                report: None,
            })
        }
        Err(e) => return Err(e),
    };
    let record = &outcome.record;
    let mut findings = findings(record, &canaries, &outcome.report, store);
    shown_as_attacks(&mut findings, &outcome.report);
    let steps = record.steps.len();
    let status = airlock_types::wire_name(&record.status);
    let worst = findings.iter().map(|f| f.severity).max();
    let summary = match worst {
        None => format!(
            "Detonated in the sandbox with planted secrets and a sinkhole network ({steps} step(s), {status}, run \
             {}): it touched no planted secret and sent nothing out.",
            record.run_id
        ),
        Some(_) => format!(
            "Detonated in the sandbox with planted secrets and a sinkhole network ({steps} step(s), {status}, run \
             {}): {}.",
            record.run_id,
            findings
                .iter()
                .map(|f| f.rule.trim_start_matches("detonation/").replace('-', " "))
                .fold(Vec::<String>::new(), |mut v, r| {
                    if !v.contains(&r) {
                        v.push(r);
                    }
                    v
                })
                .join(", ")
        ),
    };
    Ok(Detonation {
        run_id: Some(record.run_id.clone()),
        status,
        steps,
        duration_ms: record.duration_ms,
        findings,
        summary,
        report: Some(outcome.report.clone()),
    })
}

/// What a command its skill shows as an attack did (the scan counted that line one step less: `Shown as an attack
/// (after …)`) counts one step less too, and says so: a security guide's examples are not the guide's acts.
fn shown_as_attacks(findings: &mut [Finding], report: &ScanReport) {
    let shown: Vec<(&str, u32)> = report
        .findings
        .iter()
        .filter(|f| f.message.starts_with("Shown as an attack"))
        .map(|f| (f.file.as_str(), f.line))
        .collect();
    for f in findings.iter_mut() {
        if shown.contains(&(f.file.as_str(), f.line)) {
            f.severity = match f.severity {
                airlock_types::Severity::Critical => airlock_types::Severity::High,
                airlock_types::Severity::High => airlock_types::Severity::Medium,
                other => other,
            };
            f.message = format!(
                "{} (a command the skill shows as an attack, run by the detonation)",
                f.message
            );
        }
    }
}

/// The secret variables named in a skill's text files (up to 40).
fn named_variables(root: &Path) -> Vec<String> {
    let mut text = String::new();
    let mut stack = vec![root.to_path_buf()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && e.file_name() != ".git" {
                stack.push(e.path());
            } else if kind.is_file() && files < 500 {
                files += 1;
                if let Ok(bytes) = fs_err::read(e.path()) {
                    if bytes.len() <= 512 * 1024 && !bytes.contains(&0) {
                        text.push_str(&String::from_utf8_lossy(&bytes));
                        text.push('\n');
                    }
                }
            }
        }
    }
    secret_variables(&text)
}

fn first_sentence(text: &str) -> &str {
    text.split(". ").next().unwrap_or(text).trim_end_matches('.')
}

/// Adds every script of the skill the plan does not run to the plan, and runs the scripts the plan would only
/// list (helpers, scripts that want arguments): a detonation runs whatever can run.
pub(crate) fn widen(plan: &mut airlock_types::Plan, skill_root: &Path, report: &ScanReport) {
    for step in &mut plan.steps {
        if step.kind == "script" {
            if let Some(why) = step.example.take() {
                step.note = Some(format!("run by the detonation, which runs every script ({why})"));
            }
        } else if step
            .example
            .as_deref()
            .is_some_and(|why| why.starts_with(airlock_scan::plan::SHOWN_AS_AN_ATTACK))
        {
            // A label costs a hostile skill nothing: what it shows as an attack runs too, and what that does
            // counts one step less (as the scan counts it).
            let why = step.example.take().unwrap_or_default();
            step.note = Some(format!(
                "run by the detonation, which runs what a skill shows as an attack ({why})"
            ));
        }
    }
    let sub = &report.source.subpath;
    let prefix = if sub.is_empty() {
        String::new()
    } else {
        format!("{sub}/")
    };
    let scripts: Vec<&str> = report
        .inventory
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Script)
        .filter_map(|f| f.path.strip_prefix(&prefix))
        .collect();
    let mut added = 0;
    for rel in scripts {
        let file = format!("{prefix}{rel}");
        if added >= MAX_SCRIPTS || plan.steps.iter().any(|s| s.file == file && s.kind == "script") {
            continue;
        }
        let Ok(bytes) = fs_err::read(skill_root.join(rel)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        plan.steps.push(PlanStep {
            kind: "script".into(),
            command: rel.to_owned(),
            interpreter: airlock_scan::plan::interpreter(rel, &text),
            file,
            line: 0,
            findings: Vec::new(),
            example: None,
            note: Some("run by the detonation with no arguments".into()),
            shown_arguments: None,
        });
        added += 1;
    }
}

/// The run's sandbox settings for a detonation: the canaries in the environment and the home folder, and the
/// sinkhole (its certificate authority written to `scratch` for the sandbox to trust).
pub(crate) fn configure(
    canaries: &Canaries,
    config: &mut airlock_sandbox::Config,
    scratch: &Path,
) -> Result<airlock_egress::EgressConfig, RunError> {
    for (k, v) in &canaries.env {
        config.env.retain(|(name, _)| name != k);
        config.env.push((k.clone(), v.clone()));
    }
    for (path, content) in &canaries.home {
        config
            .files
            .push((path.clone(), airlock_egress::FileContent::Text(content.clone())));
    }
    // Python modules the skill imports but the sandbox lacks are stood in for (the install phase is skipped), so a
    // script goes past its imports to what it does; the HTTP clients' stand-ins send for real, to the sinkhole.
    config.files.push((
        Path::new(STAND_INS_DIR).join("sitecustomize.py"),
        airlock_egress::FileContent::Text(STAND_INS.to_owned()),
    ));
    let path = match config.env.iter().find(|(k, _)| k == "PYTHONPATH") {
        Some((_, v)) => format!("{v}:{STAND_INS_DIR}"),
        None => STAND_INS_DIR.to_owned(),
    };
    config.env.retain(|(k, _)| k != "PYTHONPATH");
    config.env.push(("PYTHONPATH".into(), path));
    let sink = airlock_egress::Sinkhole::new(canaries.needles(), &canaries.marker)
        .map_err(|e| RunError::Usage(format!("cannot set up the sinkhole: {e}")))?;
    let ca = scratch.join("sinkhole-ca.pem");
    fs_err::write(&ca, sink.ca_pem())?;
    Ok(airlock_egress::EgressConfig {
        extra_ca: vec![ca],
        sinkhole: Some(std::sync::Arc::new(sink)),
        ..Default::default()
    })
}
