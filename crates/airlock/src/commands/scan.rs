//! `airlock scan`, `airlock validate` and `airlock list`.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use serde_json::json;

use airlock_scan::{inventory, render, skillmd};
use airlock_source::StagedSource;
use airlock_types::{FileKind, RiskLevel, ScanReport};

use crate::exit;
use crate::settings::{color_stdout, data_dir, escape};

/// Where a skill comes from and how to fetch it.
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// A GitHub URL (repo, /tree/, /blob/, /commit/), another git URL, a folder, or a .zip/.tar.gz/.skill archive.
    pub source: String,
    /// Base URL for GitHub sources (for GitHub Enterprise, or a local mirror).
    #[arg(long, env = "AIRLOCK_GITHUB_BASE", default_value = "https://github.com")]
    pub github_base: String,
    /// Where clones, staged sources and runs are kept.
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Most files an import may hold.
    #[arg(long, default_value_t = 20_000)]
    pub max_files: usize,
    /// Most bytes an import may hold, in total (also bounds the clone).
    #[arg(long, default_value_t = 200 * 1024 * 1024)]
    pub max_bytes: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// A Sigstore bundle kept apart from the skill (over its archive, or a file of it); repeatable.
    #[arg(long, value_name = "FILE")]
    pub signature: Vec<PathBuf>,
    #[command(flatten)]
    pub signatures: SignatureArgs,
}

/// What skills' signatures are checked with (docs/attestations.md). The Sigstore bundles a skill carries
/// (`FILE.sigstore.json`, `model.sig`) are checked with or without these.
#[derive(Debug, Args)]
#[command(next_help_heading = "Signatures")]
pub struct SignatureArgs {
    /// A PEM public key that keyed Sigstore bundles (and model-signing manifests) are checked with; repeatable.
    #[arg(long, value_name = "FILE")]
    pub sigstore_key: Vec<PathBuf>,
    /// The certificate identity (an email or a URI) a keyless Sigstore signature must carry.
    #[arg(long, value_name = "IDENTITY", requires = "issuer")]
    pub identity: Option<String>,
    /// The OIDC issuer that must have vouched for that identity (`https://accounts.google.com`, ...).
    #[arg(long, value_name = "URL", requires = "identity")]
    pub issuer: Option<String>,
    /// A Sigstore trust root (`trusted_root.json`) in place of the public-good one shipped with airlock.
    #[arg(long, value_name = "FILE")]
    pub trust_root: Option<PathBuf>,
    /// OpenPGP public keys (armored, as `gpg --export --armor` writes them) a commit's OpenPGP signature is
    /// checked with.
    #[arg(long, value_name = "FILE")]
    pub keyring: Option<PathBuf>,
    /// An OpenSSH allowed-signers file (as git's `gpg.ssh.allowedSignersFile`): the skill's commit must carry an SSH
    /// signature by one of its signers, valid at the commit's time; the report says who signed, or why not.
    #[arg(long, value_name = "FILE")]
    pub allowed_signers: Option<PathBuf>,
}

impl SignatureArgs {
    /// Whether any is given.
    pub fn given(&self) -> bool {
        !self.sigstore_key.is_empty()
            || self.identity.is_some()
            || self.trust_root.is_some()
            || self.keyring.is_some()
            || self.allowed_signers.is_some()
    }

    /// The settings these give, each file read and checked now (a trust root, key, keyring or allowed-signers file
    /// that cannot be read is the caller's mistake, said before anything is imported).
    pub fn settings(&self) -> anyhow::Result<airlock_run::signatures::SignatureSettings> {
        let read =
            |p: &PathBuf, what: &str| fs_err::read_to_string(p).with_context(|| format!("reading {what}"));
        let usage = |what: &str, e: String| super::net::UsageError(format!("{what}: {e}"));
        let s = airlock_run::signatures::SignatureSettings {
            trust_root: self
                .trust_root
                .as_ref()
                .map(|p| read(p, "--trust-root"))
                .transpose()?,
            sigstore_keys: self
                .sigstore_key
                .iter()
                .map(|p| read(p, "--sigstore-key"))
                .collect::<anyhow::Result<_>>()?,
            identity: self.identity.clone().zip(self.issuer.clone()),
            keyring: match &self.keyring {
                Some(p) => Some(
                    airlock_attest::openpgp::Keyring::parse(&read(p, "--keyring")?)
                        .map_err(|e| usage("--keyring", e))?,
                ),
                None => None,
            },
            allowed_signers: match &self.allowed_signers {
                Some(p) => Some(
                    airlock_attest::signers::AllowedSigners::parse(&read(p, "--allowed-signers")?)
                        .map_err(|e| usage("--allowed-signers", e))?,
                ),
                None => None,
            },
            bundles: Vec::new(),
        };
        airlock_attest::sigstore::SigstoreTrust::new(
            s.trust_root.as_deref(),
            &s.sigstore_keys,
            s.identity.clone(),
        )
        .map_err(|e| usage("signatures", e))?;
        Ok(s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Sarif,
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit with code 1 when the risk level reaches this level.
    #[arg(long, value_parser = parse_level)]
    pub fail_on: Option<RiskLevel>,
    /// Also show informational findings (mentions in prose and comments).
    #[arg(long, short)]
    pub verbose: bool,
    /// Also run the skill (its plan, else each of its scripts) in the sandbox under its declared policy, and report
    /// each thing it did beyond the declaration as a finding; exits 1 when anything went beyond.
    #[arg(long)]
    pub runtime: bool,
    /// The operator's policy for `--runtime` (docs/policy.md): the most the skill gets, whatever it declares.
    #[arg(long, value_name = "FILE", env = "AIRLOCK_POLICY", requires = "runtime")]
    pub policy: Option<PathBuf>,
    /// Also detonate the skill: run what it can run (its commands, every script) sealed, with planted secrets and
    /// a sinkhole network, and report what touched a secret and what would have left as findings.
    #[arg(long)]
    pub detonate: bool,
    /// Write a signed statement of the scan (in-toto v1 in a DSSE envelope, signed with this data folder's key):
    /// the skill's digest and commit, the level, the classification and the digest of the findings.
    #[arg(long, value_name = "FILE")]
    pub attest: Option<PathBuf>,
    /// Time the detonation may take, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, requires = "detonate")]
    pub detonate_timeout: u64,
    #[command(flatten)]
    pub server: super::remote::ServerArgs,
}

fn parse_level(text: &str) -> Result<RiskLevel, String> {
    text.parse()
}

impl SourceArgs {
    /// The import settings these arguments give.
    pub fn import_settings(&self) -> anyhow::Result<airlock_run::ImportSettings> {
        let mut settings = airlock_run::ImportSettings::new(data_dir(self.data_dir.as_ref())?);
        settings.github_base = self.github_base.clone();
        settings.max_files = self.max_files;
        settings.max_bytes = self.max_bytes;
        settings.signatures = if self.signatures.given() {
            self.signatures.settings()?
        } else {
            Default::default()
        };
        settings.signatures.bundles = self
            .signature
            .iter()
            .map(|p| {
                let text = fs_err::read_to_string(p).context("reading --signature")?;
                Ok((p.display().to_string(), text))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(settings)
    }
}

/// Imports the source named by the arguments.
fn imported(args: &SourceArgs) -> anyhow::Result<airlock_run::Imported> {
    let settings = args.import_settings()?;
    Ok(airlock_run::import(&settings.parse(&args.source)?, &settings)?)
}

/// Imports the source named by the arguments: the staged tree and the name its folder had.
pub fn import(args: &SourceArgs) -> anyhow::Result<(StagedSource, Option<String>)> {
    let imported = imported(args)?;
    Ok((imported.staged, imported.folder_name))
}

pub fn scan(args: &ScanArgs) -> anyhow::Result<u8> {
    if args.source.json && args.format != Format::Text && args.format != Format::Json {
        anyhow::bail!("--json and --format sarif ask for two formats: give one of them");
    }
    if let Some(remote) = args.server.remote()? {
        return scan_remote(args, &remote);
    }
    let imported = imported(&args.source)?;
    // What the saved trust decisions say about it (a store that cannot be opened only means no decisions).
    let mut report = match airlock_store::Store::open_shared(&args.source.import_settings()?.data_dir) {
        Ok(store) => imported.scan_trusted(&store)?.0,
        Err(_) => imported.scan()?,
    };
    if args.detonate && !report.inventory.files.is_empty() {
        detonate(args, &mut report)?;
    }
    if let Some(t) = &report.trust {
        report.headline.push(t.note.clone());
        if let Some(c) = &t.changes {
            for (what, list) in [
                ("file added", &c.files_added),
                ("file changed", &c.files_changed),
                ("file removed", &c.files_removed),
                ("new finding", &c.findings_new),
                ("finding gone", &c.findings_gone),
            ] {
                for item in list.iter().take(10) {
                    report
                        .headline
                        .push(format!("  since the trusted commit, {what}: {item}"));
                }
            }
        }
    }
    if report.inventory.files.is_empty() {
        eprintln!(
            "{} is empty: there is nothing to scan",
            escape(&report.source.input)
        );
        return Ok(exit::EMPTY);
    }
    let mut beyond = 0;
    let mut checked: Option<RunsChecked> = None;
    if args.runtime {
        let (found, runs) = runtime(args, &report)?;
        beyond = found.len();
        checked = Some(runs.clone());
        if !args.source.json && args.format == Format::Text {
            for (id, status) in &runs {
                eprintln!("runtime check: run {id} {status} (see `airlock show {id}`)");
            }
        }
        report.headline.push(if beyond == 0 {
            format!(
                "Run in the sandbox under its declared policy ({} run(s)), it stayed within it.",
                runs.len()
            )
        } else {
            format!(
                "Run in the sandbox under its declared policy, it went beyond it {beyond} time(s): see the runtime \
                 findings."
            )
        });
        report.findings.splice(0..0, found);
    }
    if let Some(file) = &args.attest {
        let data = args.source.import_settings()?.data_dir;
        let keys = airlock_attest::Keys::load_or_create(&data)?;
        // One envelope a line (an in-toto bundle): the scan, and with --runtime its verification summary.
        let mut bundle = keys.sign(&airlock_attest::scan_statement(&report))?;
        if let Some(runs) = &checked {
            let store = airlock_store::Store::open(&data)?;
            let mut inputs = Vec::new();
            for (id, _) in runs {
                if let Ok((_, Some(record))) = store.run(id) {
                    inputs.push((id.clone(), airlock_attest::record_digest(&record)));
                }
            }
            let policy = match &args.policy {
                Some(file) => (
                    format!("file:{}", file.display()),
                    Some(airlock_attest::sha256(&fs_err::read(file)?)),
                ),
                None => ("urn:airlock:policy:declared".to_owned(), None),
            };
            let vsa =
                airlock_attest::verification_summary(&report, beyond == 0, (&policy.0, policy.1), &inputs);
            // Each envelope ends its line.
            bundle.extend(keys.sign(&vsa)?);
        }
        fs_err::write(file, bundle)?;
        super::verify::signed(file, &keys);
    }
    let format = if args.source.json {
        Format::Json
    } else {
        args.format
    };
    match format {
        Format::Text => out!("{}", render::text(&report, color_stdout(), args.verbose)),
        Format::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        Format::Sarif => outln!("{}", serde_json::to_string_pretty(&render::sarif(&report))?),
    }
    Ok(match args.fail_on {
        Some(level) if report.risk_level >= level => exit::POLICY,
        _ if beyond > 0 => exit::POLICY,
        _ => exit::OK,
    })
}

/// `scan --server`: the server imports (an upload, for a local folder), pins and scans; the report prints as a
/// local one does.
fn scan_remote(args: &ScanArgs, remote: &super::remote::Remote) -> anyhow::Result<u8> {
    if args.runtime
        || args.detonate
        || args.attest.is_some()
        || args.source.signatures.given()
        || !args.source.signature.is_empty()
    {
        anyhow::bail!(
            "--runtime, --detonate, --attest and the signature flags work on this machine; they do \
             not go through --server (the server checks signatures with its operator's settings)"
        );
    }
    let source = remote.source(&args.source.source)?;
    let view: airlock_protocol::SourceView =
        remote.post("/api/sources", &airlock_protocol::NewSource { url: source })?;
    let id = view.id;
    let format = if args.source.json {
        Format::Json
    } else {
        args.format
    };
    let report: ScanReport = remote.get(&format!("/api/sources/{id}/report"))?;
    match format {
        Format::Text => out!("{}", render::text(&report, color_stdout(), args.verbose)),
        Format::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        Format::Sarif => outln!(
            "{}",
            // SARIF is a document of its own format, passed on as it is.
            serde_json::to_string_pretty(
                &remote.get::<serde_json::Value>(&format!("/api/sources/{id}/report?format=sarif"))?
            )?
        ),
    }
    Ok(match args.fail_on {
        Some(level) if report.risk_level >= level => exit::POLICY,
        _ => exit::OK,
    })
}

/// `scan --detonate`: the detonation's findings join the report, which is judged again.
fn detonate(args: &ScanArgs, report: &mut ScanReport) -> anyhow::Result<()> {
    let settings = args.source.import_settings()?;
    let mut store = airlock_store::Store::open(&settings.data_dir)?;
    let options = airlock_run::detonate::DetonateOptions {
        timeout: std::time::Duration::from_secs(args.detonate_timeout.clamp(1, 600)),
        ..Default::default()
    };
    let quiet: airlock_run::OnEvent = std::sync::Arc::new(|_| {});
    let found = airlock_run::detonate::detonate(
        &settings.parse(&args.source.source)?,
        &settings,
        &mut store,
        &options,
        &quiet,
    )?;
    airlock_scan::add_evidence(report, found.findings, found.summary);
    Ok(())
}

/// Each run `scan --runtime` made: its id and status.
type RunsChecked = Vec<(String, String)>;

/// `scan --runtime`: runs the skill's plan (or, when it has none, each of its scripts with no arguments) in the
/// sandbox under its declared policy (the empty policy when it declares none), within the operator's; returns a
/// finding for each thing a run did beyond the declaration, and each run's id and status.
fn runtime(
    args: &ScanArgs,
    report: &ScanReport,
) -> anyhow::Result<(Vec<airlock_types::Finding>, RunsChecked)> {
    use airlock_run::{Invocation, RunError, RunRequest};
    use airlock_types::policy::{PolicySource, SourcedPolicy};
    let settings = args.source.import_settings()?;
    let mut store = airlock_store::Store::open(&settings.data_dir)?;
    let operator = args
        .policy
        .as_deref()
        .map(super::net::operator_policy)
        .transpose()?;
    let declared = report.declared_policy.clone().unwrap_or_else(|| SourcedPolicy {
        source: PolicySource {
            role: "skill".into(),
            origin: "no declared policy (nothing allowed)".into(),
            file: "SKILL.md".into(),
            line: 1,
        },
        policy: Default::default(),
    });
    let source = settings.parse(&args.source.source)?;
    let request = |invocation| RunRequest {
        source: source.clone(),
        mode: airlock_types::RunMode::Sandbox,
        target: "blank".into(),
        invocation,
        force: false,
        limits: super::exec::LimitArgs::default().limits(std::time::Duration::from_secs(60)),
        egress: None,
        retention: std::time::Duration::from_secs(24 * 3600),
        run_id: None,
        cancel: None,
        helper: None,
        host_opt: false,
        environment: Default::default(),
        source_name: None,
        detonation: None,
        policy: airlock_run::policy::PolicyOptions {
            operator: operator.clone(),
            accept: true,
            given: Vec::new(),
        },
    };
    let quiet: airlock_run::OnEvent = std::sync::Arc::new(|_| {});
    let mut records = Vec::new();
    match airlock_run::execute_with_policy(
        &request(Invocation::Plan),
        &settings,
        &mut store,
        &quiet,
        &declared,
    ) {
        Ok(o) => records.push(o.record),
        Err(RunError::NothingToRun { .. }) => {
            let skill_dir = &report.source.subpath;
            let scripts: Vec<String> = report
                .inventory
                .files
                .iter()
                .filter(|f| f.kind == FileKind::Script)
                .filter_map(|f| {
                    if skill_dir.is_empty() {
                        Some(f.path.clone())
                    } else {
                        f.path.strip_prefix(&format!("{skill_dir}/")).map(str::to_owned)
                    }
                })
                .take(8)
                .collect();
            if scripts.is_empty() {
                anyhow::bail!(
                    "the skill has no command and no script to run: --runtime has nothing to check"
                );
            }
            for path in scripts {
                let invocation = Invocation::Script {
                    path,
                    args: Vec::new(),
                };
                let o = airlock_run::execute_with_policy(
                    &request(invocation),
                    &settings,
                    &mut store,
                    &quiet,
                    &declared,
                )?;
                records.push(o.record);
            }
        }
        Err(e) => return Err(e.into()),
    }
    let mut found = Vec::new();
    for r in &records {
        for b in r.policy.iter().flat_map(|p| &p.beyond) {
            found.push(airlock_types::Finding {
                rule: format!("runtime/{}", b.kind),
                severity: if b.kind == "limit" {
                    airlock_types::Severity::Medium
                } else {
                    airlock_types::Severity::High
                },
                file: declared.source.file.clone(),
                line: declared.source.line,
                evidence: airlock_types::display::line(&format!("{} {}: {}", b.kind, b.what, b.evidence)),
                message: format!(
                    "Run {} in the sandbox did this beyond the policy it declares ({}).",
                    r.run_id, declared.source.origin
                ),
                context: airlock_types::FindingContext::Code,
            });
        }
    }
    let runs = records
        .iter()
        .map(|r| (r.run_id.clone(), airlock_types::wire_name(&r.status)))
        .collect();
    Ok((found, runs))
}

pub fn validate(args: &SourceArgs) -> anyhow::Result<u8> {
    let (staged, folder_name) = import(args)?;
    let root = staged.scan_root();
    let sub = &staged.source.subpath;
    let inv = inventory::build(&staged.root, sub)?;
    let meta = skillmd::validate(&staged.root, sub, folder_name.as_deref())?;
    let missing = !root.join("SKILL.md").is_file();
    let under = |dir: &str| {
        let prefix = if sub.is_empty() {
            format!("{dir}/")
        } else {
            format!("{sub}/{dir}/")
        };
        inv.files
            .iter()
            .filter(|f| f.path.starts_with(&prefix))
            .map(|f| f.path[prefix.len()..].to_owned())
            .collect::<Vec<_>>()
    };
    let (scripts, references, assets) = (under("scripts"), under("references"), under("assets"));
    let valid = !missing && meta.valid;
    // Where the user's skill is, as they named it (never airlock's staged copy).
    let shown = if sub.is_empty() {
        staged.source.input.clone()
    } else {
        format!("{} ({sub})", staged.source.input)
    };
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "valid": valid,
                "name": meta.name,
                "description": meta.description,
                "path": shown,
                "source": staged.source,
                "scripts": scripts,
                "references": references,
                "assets": assets,
                "findings": meta.findings,
            }))?
        );
    } else if missing {
        outln!("✗ Not a skill: no SKILL.md in {}", escape(&shown));
    } else {
        let name = meta.name.as_deref().unwrap_or("(no name)");
        if valid {
            outln!("✓ Valid skill: {}", escape(name));
        } else {
            outln!("✗ Invalid skill: {}", escape(name));
        }
        outln!(
            "  description: {}",
            escape(meta.description.as_deref().unwrap_or("(none)"))
        );
        outln!("  path: {}", escape(&shown));
        outln!("  scripts: {} file(s)", scripts.len());
        outln!("  references: {} file(s)", references.len());
        outln!("  assets: {} file(s)", assets.len());
        if !scripts.is_empty() {
            outln!("  script names:");
            for s in &scripts {
                outln!("    - {}", escape(s));
            }
        }
        for f in &meta.findings {
            outln!(
                "  {} {} (SKILL.md:{}): {}",
                f.severity.as_str().to_uppercase(),
                f.rule,
                f.line,
                escape(&f.message)
            );
        }
    }
    Ok(if valid { exit::OK } else { exit::POLICY })
}

pub fn list(args: &SourceArgs) -> anyhow::Result<u8> {
    let (staged, _) = import(args)?;
    let sub = &staged.source.subpath;
    let inv = inventory::build(&staged.root, sub)?;
    let scripts: Vec<_> = inv
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Script)
        .map(|f| {
            let rel = if sub.is_empty() {
                f.path.clone()
            } else {
                f.path[sub.len() + 1..].to_owned()
            };
            json!({ "path": rel, "language": f.language, "size": f.size })
        })
        .collect();
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "source": staged.source, "scripts": scripts }))?
        );
    } else if scripts.is_empty() {
        outln!("No scripts: this skill is prompt-only.");
    } else {
        for s in &scripts {
            outln!(
                "{}\t{}",
                escape(s["path"].as_str().unwrap_or_default()),
                s["language"].as_str().unwrap_or("unknown")
            );
        }
    }
    Ok(exit::OK)
}
