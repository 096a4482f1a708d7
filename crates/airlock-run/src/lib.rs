//! One airlock run as a library: what `airlock run`, `airlock serve` and every other face call.
//!
//! A [`RunRequest`] names a skill source, a [`RunMode`], a target and what to run ([`Invocation`]). [`execute`]
//! imports and scans the skill, saves the source and its report in the [`Store`], plans the commands, snapshots the
//! target ([`target`]), runs the sealed sandbox, collects the changes into a patch ([`patch`]), builds the verdict
//! ([`verdict`]), stores the artifacts and the finished [`SkillRun`]. While it works it reports [`RunEvent`]s: one
//! per phase and, during the sandbox phase, every exec, exit, file opened and network attempt as the recorder sees
//! it, so a caller can show a run live.

pub mod bundle;
pub mod declared;
pub mod detonate;
pub mod environment;
mod invoke;
pub mod patch;
pub mod policy;
mod repository;
pub mod request;
pub mod signatures;
pub mod target;
pub mod trust;
pub mod verdict;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use airlock_scan::plan;
use airlock_source::{ImportOptions, SourceSpec, StagedSource};
use airlock_store::Store;
use airlock_types::{
    Artifact, LiveEvent, RiskLevel, RunMode, RunStatus, ScanReport, SkillRun, SCHEMA_VERSION,
};

pub use invoke::{split_words, AGENTS};

/// Where the skill and the target appear inside the sandbox.
pub const SKILL_DIR: &str = "/skill";
pub const WORKSPACE: &str = "/workspace";

/// Why a run could not be carried out. A skill that runs and fails is not an error: see the record's status.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The request itself is wrong (a bad `--script`, an empty agent command, a bad target): the caller's mistake.
    #[error("{0}")]
    Usage(String),
    /// A plain run of a skill with nothing to run: prompt-only, not a skill, empty, or only examples.
    #[error("{message}")]
    NothingToRun { kind: Nothing, message: String },
    #[error("cannot import {input}: {error}")]
    Import {
        input: String,
        error: airlock_source::SourceError,
    },
    #[error("scan failed: {0}")]
    Scan(#[from] airlock_scan::ScanError),
    #[error(transparent)]
    Store(#[from] airlock_store::StoreError),
    #[error(transparent)]
    Sandbox(#[from] airlock_sandbox::SandboxError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// What signatures are checked with cannot be read (a trust root, a key, a keyring).
    #[error("cannot check the skill's signatures: {0}")]
    Signatures(String),
}

/// Why a plain run has nothing to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nothing {
    /// A skill of instructions only, or whose commands are all examples to adapt.
    NoCommand,
    /// A folder without SKILL.md.
    NotASkill,
    /// A folder with no file at all.
    Empty,
}

/// How imports are fetched and bounded.
#[derive(Debug, Clone)]
pub struct ImportSettings {
    /// Clones, staged sources, targets and the store live here.
    pub data_dir: PathBuf,
    pub github_base: String,
    pub max_files: usize,
    pub max_bytes: u64,
    /// Where network fetches may go (a shared server's guard); `None` for anywhere this machine reaches.
    pub guard: Option<airlock_source::FetchGuard>,
    /// The key stored runs are signed with, when the operator gives one; else the data folder's.
    pub signing_key: Option<PathBuf>,
    /// What a skill's signatures (Sigstore bundles, an OpenPGP commit signature) are checked with.
    pub signatures: signatures::SignatureSettings,
}

impl ImportSettings {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            github_base: "https://github.com".into(),
            max_files: 20_000,
            max_bytes: 200 * 1024 * 1024,
            guard: None,
            signing_key: None,
            signatures: Default::default(),
        }
    }

    fn options(&self) -> ImportOptions {
        let mut options = ImportOptions::new(&self.data_dir);
        options.github_base = self.github_base.clone();
        options.limits.max_files = self.max_files;
        options.limits.max_total_bytes = self.max_bytes;
        options.limits.max_file_bytes = options.limits.max_file_bytes.min(self.max_bytes);
        options.guard = self.guard.clone();
        options
    }

    /// Parses a source as these settings read it (GitHub URLs against `github_base`).
    pub fn parse(&self, input: &str) -> Result<SourceSpec, RunError> {
        SourceSpec::parse_with_github_base(input, &self.github_base).map_err(|error| RunError::Import {
            input: airlock_types::display::line(input),
            error,
        })
    }
}

/// A skill imported and staged, with the name its folder had where it came from.
pub struct Imported {
    pub staged: StagedSource,
    pub folder_name: Option<String>,
    /// The archive the skill came in, for a signature over the archive.
    pub archive: Option<PathBuf>,
    /// What its signatures are checked with.
    pub signatures: signatures::SignatureSettings,
    /// Its Sigstore bundles, checked once.
    checked: std::sync::OnceLock<Vec<airlock_attest::sigstore::BundleCheck>>,
}

impl Imported {
    /// Calls the source `name` in what the scan and the run record say (its input and repository).
    pub fn rename(&mut self, name: &str) {
        self.staged.source.input = name.to_owned();
        self.staged.source.repo_url = name.to_owned();
    }

    /// Scans the staged skill; its signatures (the Sigstore bundles it carries or the user gives, its commit's
    /// OpenPGP signature when a keyring is given) join the report as findings.
    pub fn scan(&self) -> Result<ScanReport, RunError> {
        let mut report = airlock_scan::scan(&airlock_scan::ScanInput {
            source: self.staged.source.clone(),
            tree_root: &self.staged.root,
            subpath: &self.staged.source.subpath,
            folder_name: self.folder_name.clone(),
            skipped: &self.staged.skipped,
        })?;
        let mut found = signatures::sigstore_findings(self.sigstore_checks(&report)?, &report);
        let commit = self.staged.source.commit.as_ref().map(ToString::to_string);
        if let Some(allowed) = &self.signatures.allowed_signers {
            let ssh = signatures::ssh_finding(
                commit.as_deref(),
                self.staged.signature.as_ref(),
                allowed,
                &report,
            );
            // An OpenPGP signature is the keyring's to check, when one is given.
            if !(ssh.rule == "signature/openpgp" && self.signatures.keyring.is_some()) {
                found.push(ssh);
            }
        }
        if let (Some(keyring), Some(sig), Some(commit)) =
            (&self.signatures.keyring, &self.staged.signature, &commit)
        {
            found.extend(signatures::openpgp_finding(commit, sig, keyring, &report));
        }
        if !found.is_empty() {
            let note = found
                .iter()
                .filter(|f| f.severity >= airlock_types::Severity::High)
                .map(|f| f.message.clone())
                .next()
                .unwrap_or_else(|| found[0].message.clone());
            airlock_scan::add_evidence(&mut report, found, note);
        }
        Ok(report)
    }

    /// The skill's Sigstore bundles, each checked (once).
    fn sigstore_checks(
        &self,
        report: &ScanReport,
    ) -> Result<&[airlock_attest::sigstore::BundleCheck], RunError> {
        if let Some(done) = self.checked.get() {
            return Ok(done);
        }
        let checks = signatures::sigstore_checks(
            &self.staged.scan_root(),
            report,
            self.archive.as_deref(),
            &self.signatures,
        )
        .map_err(RunError::Signatures)?;
        Ok(self.checked.get_or_init(|| checks))
    }

    /// Scans the staged skill with what the saved trust decisions say about it in `trust`; also the status and the
    /// decision it names, when there is one.
    /// Who signed the skill, as a trust decision names a signer, once it has been scanned: the key of its commit's
    /// SSH signature (or OpenPGP signature, with a keyring given) when it holds over the commit; else the signer of
    /// its Sigstore bundles when every one holds and together they cover every file.
    pub fn signer(&self) -> Option<String> {
        if let Some(sig) = &self.staged.signature {
            if let Some(key) = airlock_attest::signers::signing_key(&sig.armored, &sig.signed) {
                return Some(key);
            }
            if let Some(keyring) = &self.signatures.keyring {
                if let Some(fp) =
                    airlock_attest::openpgp::signing_key(&sig.armored, &sig.signed, sig.time, keyring)
                {
                    return Some(format!("openpgp:{fp}"));
                }
            }
        }
        use airlock_attest::sigstore::BundleOutcome;
        let checks = self.checked.get()?;
        let mut signer = None;
        let mut uncovered: Option<std::collections::BTreeSet<&String>> = None;
        for check in checks {
            let BundleOutcome::Verified {
                signer: s,
                not_covered,
                ..
            } = &check.outcome
            else {
                return None;
            };
            if signer.get_or_insert(s) != &s {
                return None;
            }
            let these: std::collections::BTreeSet<&String> = not_covered.iter().collect();
            uncovered = Some(match uncovered {
                None => these,
                Some(before) => before.intersection(&these).copied().collect(),
            });
        }
        match uncovered {
            Some(u) if u.is_empty() => signer.map(|s| format!("sigstore:{}", s.id())),
            _ => None,
        }
    }

    pub fn scan_trusted(
        &self,
        store: &Store,
    ) -> Result<
        (
            ScanReport,
            Option<(
                airlock_types::policy::TrustStatus,
                airlock_types::policy::TrustDecision,
            )>,
        ),
        RunError,
    > {
        let mut report = self.scan()?;
        let trusted = trust::status(
            store,
            &self.staged.source,
            &self.staged.scan_root(),
            &report,
            self.signer().as_deref(),
        )?;
        report.trust = trusted.as_ref().map(|(s, _)| s.clone());
        Ok((report, trusted))
    }
}

/// Imports a source (safely staged, pinned to a commit).
pub fn import(spec: &SourceSpec, settings: &ImportSettings) -> Result<Imported, RunError> {
    let staged = airlock_source::import(spec, &settings.options()).map_err(|error| RunError::Import {
        input: spec.display_input(),
        error,
    })?;
    let folder_name = folder_name(spec, &staged);
    let archive = match spec {
        SourceSpec::Archive(path) => Some(path.clone()),
        _ => None,
    };
    Ok(Imported {
        staged,
        folder_name,
        archive,
        signatures: settings.signatures.clone(),
        checked: Default::default(),
    })
}

/// The name the skill's folder has where it came from.
fn folder_name(spec: &SourceSpec, staged: &StagedSource) -> Option<String> {
    let sub = &staged.source.subpath;
    if let Some(last) = sub.rsplit('/').next().filter(|s| !s.is_empty()) {
        return Some(last.to_owned());
    }
    match spec {
        SourceSpec::GitHub(t) => Some(t.repo.clone()),
        SourceSpec::Git { url, .. } => url
            .expose()
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .map(|n| n.trim_end_matches(".git").to_owned()),
        SourceSpec::Folder(_) => PathBuf::from(&staged.source.repo_url)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
        SourceSpec::Archive(p) => p.file_name().map(|n| {
            let n = n.to_string_lossy();
            ["tar.gz", "tgz", "zip", "skill", "tar"]
                .iter()
                .find_map(|ext| n.strip_suffix(&format!(".{ext}")))
                .unwrap_or(&n)
                .to_owned()
        }),
    }
}

/// What a sandbox run executes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Invocation {
    /// The commands the skill asks for (its plan), step by step in one sandbox.
    Plan,
    /// One of the skill's scripts (a path inside the skill) with its interpreter.
    Script { path: String, args: Vec<String> },
    /// An agent CLI (`claude`, `codex`, or a command template) with the skill installed where it looks.
    Agent { agent: String, task: String },
}

/// One run, as asked for.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub source: SourceSpec,
    pub mode: RunMode,
    /// `blank` (the bundled sample app), a folder or a git URL; always snapshotted.
    pub target: String,
    pub invocation: Invocation,
    /// Run even when the scan says `block`.
    pub force: bool,
    pub limits: airlock_sandbox::Limits,
    pub egress: Option<airlock_egress::EgressConfig>,
    /// How long the run and its files are kept.
    pub retention: Duration,
    /// The run's id, when the caller gave it one in advance (else a new one).
    pub run_id: Option<String>,
    /// Set from another thread to cancel the run.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The executable that starts the sandbox (one that calls `airlock_sandbox::maybe_run_child`); the running
    /// program's helper when `None`.
    pub helper: Option<PathBuf>,
    /// Whether and how the skill's environment is installed before a sandbox run.
    pub environment: environment::EnvOptions,
    /// Make the host's `/opt` visible read-only in the sandbox.
    pub host_opt: bool,
    /// The operator's cap and whether the skill's declared policy is applied.
    pub policy: policy::PolicyOptions,
    /// What the source is called in the report and the record when its spec is the caller's own detail (a server
    /// names an uploaded archive `upload:<sha256>`, not the path where it keeps it).
    pub source_name: Option<String>,
    /// A detonation ([`detonate`]): these canaries planted, the network a sinkhole, every script run.
    pub detonation: Option<detonate::Canaries>,
}

/// The phases of a run, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Importing,
    Scanned,
    Snapshotting,
    /// The skill's environment: a cached layer reused, or the sealed install phase.
    Installing,
    Running,
    Collecting,
    Stored,
}

/// Progress of a run, reported while it happens.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    /// A phase began (or, for `scanned` and `stored`, finished).
    Phase {
        phase: Phase,
        /// Milliseconds since the run started.
        t_ms: u64,
        message: String,
    },
    /// What the recorder saw inside the sandbox.
    Sandbox { event: LiveEvent },
}

/// Where a run reports its progress: called from the run's thread for phases and from the recorder's and the
/// egress proxy's threads for sandbox events, so it must be quick.
pub type OnEvent = Arc<dyn Fn(RunEvent) + Send + Sync>;

/// What a finished run produced: the stored record and the scan it was based on.
pub struct Outcome {
    pub record: SkillRun,
    pub report: ScanReport,
}

/// A new run id: the time and random hex, sortable.
pub fn new_run_id() -> String {
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

fn expiry(retention: Duration) -> i64 {
    airlock_store::now_unix().saturating_add(i64::try_from(retention.as_secs()).unwrap_or(i64::MAX / 2))
}

/// Carries out one run and stores it, reporting progress to `on_event`.
pub fn execute(
    request: &RunRequest,
    settings: &ImportSettings,
    store: &mut Store,
    on_event: &OnEvent,
) -> Result<Outcome, RunError> {
    execute_inner(request, settings, store, on_event, None)
}

/// [`execute`] under a declaration the caller gives (`scan --runtime` checks a skill that declares nothing against
/// the empty policy) instead of the one the skill declares.
pub fn execute_with_policy(
    request: &RunRequest,
    settings: &ImportSettings,
    store: &mut Store,
    on_event: &OnEvent,
    declared: &airlock_types::policy::SourcedPolicy,
) -> Result<Outcome, RunError> {
    execute_inner(request, settings, store, on_event, Some(declared))
}

fn execute_inner(
    request: &RunRequest,
    settings: &ImportSettings,
    store: &mut Store,
    on_event: &OnEvent,
    given: Option<&airlock_types::policy::SourcedPolicy>,
) -> Result<Outcome, RunError> {
    let t0 = Instant::now();
    let phase = |phase: Phase, message: String| {
        on_event(RunEvent::Phase {
            phase,
            t_ms: u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX),
            message,
        });
    };
    let expires = expiry(request.retention);
    phase(Phase::Importing, request.source.display_input());
    let mut imported = import(&request.source, settings)?;
    if let Some(name) = &request.source_name {
        imported.rename(name);
    }
    let (report, trusted) = imported.scan_trusted(store)?;
    let staged = &imported.staged;
    phase(
        Phase::Scanned,
        format!(
            "risk {} ({}), {}",
            report.risk_level,
            airlock_types::wire_name(&report.classification),
            airlock_types::display::count(report.findings.len(), "finding")
        ),
    );
    // The policy: the skill's declaration (refused when it is not valid and the user asked for it), the operator's
    // cap, the flags.
    let skill_dir_rel = &staged.source.subpath;
    // A trust decision for this commit grants its policy; a repository's caps what its skills get (unless the
    // operator gave a cap). A decision for another commit does not apply: the report and verdict say so.
    let mut request_policy = request.policy.clone();
    let trusted_policy = match &trusted {
        Some((status, d)) if status.applies => {
            let sourced = airlock_types::policy::SourcedPolicy {
                source: airlock_types::policy::PolicySource {
                    role: "trust".into(),
                    origin: format!("decision {}", d.id),
                    file: format!("trust decision {}", d.id),
                    line: 0,
                },
                policy: d.policy.clone(),
            };
            if d.kind == "commit" {
                Some(sourced)
            } else {
                if request_policy.operator.is_none() {
                    request_policy.operator = Some(sourced);
                }
                None
            }
        }
        _ => None,
    };
    let declared = if let Some(d) = given {
        Some(d.clone())
    } else if let Some(t) = trusted_policy {
        request_policy.accept = true;
        Some(t)
    } else if request.policy.accept {
        airlock_scan::policy::declared(&staged.root, skill_dir_rel)
            .map_err(|e| RunError::Usage(format!("the skill's declared policy is not valid: {e}")))?
    } else {
        report.declared_policy.clone()
    };
    let mut adjusted = request.clone();
    adjusted.policy = request_policy;
    let effective = policy::apply(
        declared.as_ref(),
        &adjusted.policy,
        &mut adjusted.limits,
        &mut adjusted.egress,
        &mut adjusted.environment,
    )?;
    let request = &adjusted;
    let source_id = store.save_source(&staged.source, expires)?;
    let report_id = store.save_report(&source_id, &report, expires)?;
    let mut record = new_record(request, &report);
    let skill_root = staged.scan_root();
    let mut plan = plan::plan(&staged.root, &staged.source.subpath, &report)
        .map_err(|e| RunError::Usage(format!("cannot plan the skill: {e}")))?;
    // A skill the scan blocks is refused (and that refusal recorded) before the invocation is looked at.
    let refuse = report.risk_level == RiskLevel::Block && !request.force;
    // A dry run resolves its steps against the same target a sandbox run would use, so it shows exactly what would
    // run (an input the target lacks makes a step an example in both).
    let target = if matches!(request.mode, RunMode::Sandbox | RunMode::DryRun) {
        phase(Phase::Snapshotting, request.target.clone());
        let t = target::prepare(&request.target, settings)?;
        if let Some(canaries) = &request.detonation {
            fs_err::write(t.root.join(".env"), &canaries.project_env)?;
        }
        Some(t)
    } else {
        None
    };
    let uv_with = declared::apply(&mut plan, &skill_root, request.environment.install);
    if let Some(t) = &target {
        let network = request
            .egress
            .as_ref()
            .is_some_and(airlock_egress::EgressConfig::is_open);
        invoke::resolve_steps(
            &mut plan,
            &skill_root,
            &t.root,
            network || request.detonation.is_some(),
        );
    }
    if request.detonation.is_some() {
        detonate::widen(&mut plan, &skill_root, &report);
    }
    if request.mode == RunMode::Sandbox && !refuse {
        invoke::check(
            &request.invocation,
            &plan,
            &skill_root,
            &report,
            &request.source.display_input(),
        )?;
    }
    record.plan = Some(plan);
    record.target = target.as_ref().map(|t| t.info.clone());
    store.begin_run(&record, &source_id, &report_id, expires)?;
    let outcome = match (request.mode, &target) {
        (RunMode::Sandbox, _) if refuse => {
            record.status = RunStatus::Refused;
            record.status_reason = Some(
                "the scan says block: this skill goes for secrets, credentials or the host; rerun with --force to run \
                 it in the sandbox anyway"
                    .into(),
            );
            Ok(())
        }
        (RunMode::Sandbox, Some(t)) => {
            let mut needs = environment::needs(
                &skill_root,
                &report,
                record.plan.as_ref().unwrap_or(&airlock_types::Plan::default()),
            );
            needs.add_python(uv_with);
            phase(
                Phase::Installing,
                if needs.missing_programs.is_empty() {
                    String::new()
                } else {
                    needs
                        .missing_programs
                        .iter()
                        .map(|p| match needs.outside_sandbox.get(p) {
                            Some(at) => format!("needs {p}: at {at}, outside the sandbox"),
                            None => format!("needs {p}: not on this machine"),
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                },
            );
            let prepared = environment::prepare(
                &skill_root,
                &needs,
                &request.environment,
                request.egress.as_ref(),
                &settings.data_dir,
                request.helper.clone(),
                on_event,
            );
            match prepared {
                Ok((env, layer)) => {
                    record.environment = Some(env);
                    phase(Phase::Running, "sealed sandbox".into());
                    invoke::sandbox_run(
                        request,
                        &report,
                        &skill_root,
                        t,
                        layer.as_ref().map(environment::Layer::path),
                        store,
                        &mut record,
                        on_event,
                    )
                }
                Err(e) => Err(e),
            }
        }
        _ => Ok(()),
    };
    phase(Phase::Collecting, String::new());
    if let Err(e) = outcome {
        record.status = RunStatus::Failed;
        record.status_reason = Some(e.to_string());
    }
    record.duration_ms = u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
    if record.status_reason.is_none() {
        record.status_reason = verdict::failure_cause(&record);
    }
    if declared.is_some() || request.policy.operator.is_some() {
        let mut effective = effective;
        effective.beyond = policy::beyond(declared.as_ref(), &record);
        record.policy = Some(effective);
    }
    record.observed = verdict::observe(&report, &record);
    record.verdict = verdict::verdict(&report, &record);
    store_artifacts(store, &skill_root, &staged.source.subpath, &report, &mut record)?;
    record.finished_at = Some(airlock_types::now_rfc3339());
    store.finish_run(&record)?;
    sign_record(settings, store, &record);
    phase(Phase::Stored, airlock_types::wire_name(&record.status));
    Ok(Outcome { record, report })
}

/// Signs what the run did as its record is stored, with the data folder's key: a record edited afterwards no longer
/// holds against it. A run is not failed for a key it could not use (`export --attestation` then signs the record
/// as it is, and says so).
fn sign_record(settings: &ImportSettings, store: &Store, record: &SkillRun) {
    let signed = airlock_attest::Keys::open(&settings.data_dir, settings.signing_key.as_deref())
        .and_then(|keys| keys.sign(&airlock_attest::run_statement(record)));
    let kept = match signed {
        Ok(envelope) => store
            .set_run_attestation(&record.run_id, &envelope)
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = kept {
        tracing::warn!("the run {} was stored unsigned: {e}", record.run_id);
    }
}

fn new_record(request: &RunRequest, report: &ScanReport) -> SkillRun {
    SkillRun {
        schema_version: SCHEMA_VERSION,
        run_id: request.run_id.clone().unwrap_or_else(new_run_id),
        source: report.source.clone(),
        mode: request.mode,
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
        review: Vec::new(),
        observed: airlock_types::Observed::default(),
        environment: None,
        policy: None,
        max_rss_bytes: 0,
        cpu_ms: 0,
        network: Vec::new(),
        installs: Vec::new(),
        plan: None,
        steps: Vec::new(),
        stdout: String::new(),
        stderr: String::new(),
        stdout_truncated: false,
        stderr_truncated: false,
        artifacts: Vec::new(),
        dropped: airlock_types::DroppedEvents::default(),
        verdict: Vec::new(),
        duration_ms: 0,
    }
}

/// Stores the record's outputs, the report and the skill's files (for a bundle), content-addressed.
fn store_artifacts(
    store: &Store,
    skill_root: &Path,
    subpath: &str,
    report: &ScanReport,
    record: &mut SkillRun,
) -> Result<(), RunError> {
    use std::os::unix::fs::MetadataExt;
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
    let report_json = serde_json::to_vec_pretty(report).map_err(airlock_store::StoreError::from)?;
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
