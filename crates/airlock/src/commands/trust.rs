//! `airlock trust`, `airlock trusted` and `airlock untrust`: saved trust decisions.

use std::path::PathBuf;

use clap::Args;

use airlock_store::Store;
use airlock_types::policy::PolicyDoc;

use super::scan::SourceArgs;
use crate::exit;
use crate::settings::{data_dir, escape, field};

#[derive(Debug, Args)]
pub struct TrustArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// The policy to allow it (docs/policy.md); the skill's own declaration when not given, else nothing at all.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Trust the repository instead of this commit: its skills, at any commit, get at most this policy.
    #[arg(long)]
    pub repository: bool,
    /// Trust who signed this skill instead (its commit's SSH or OpenPGP key, or its Sigstore bundles' identity or
    /// key): every skill they sign, in any repository, gets this policy, until `airlock untrust` removes the decision.
    #[arg(long, conflicts_with = "repository")]
    pub signer: bool,
    /// Why, for whoever reads the decision later.
    #[arg(long)]
    pub note: Option<String>,
}

#[derive(Debug, Args)]
pub struct TrustedArgs {
    /// Where the store is.
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UntrustArgs {
    /// The decision's id (or a unique prefix of it).
    pub id: String,
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

pub fn trust(args: &TrustArgs) -> anyhow::Result<u8> {
    let settings = args.source.import_settings()?;
    let imported = airlock_run::import(&settings.parse(&args.source.source)?, &settings)?;
    let report = imported.scan()?;
    let store = Store::open(&settings.data_dir)?;
    let policy = match &args.policy {
        Some(path) => {
            let shown = path.display().to_string();
            let text = fs_err::read_to_string(path)?;
            airlock_scan::policy::parse_toml(&text, &shown)
                .map_err(|e| super::net::UsageError(format!("the policy is not valid: {e}")))?
        }
        None => report
            .declared_policy
            .as_ref()
            .map(|d| d.policy.clone())
            .unwrap_or_else(PolicyDoc::default),
    };
    let signer = match args.signer {
        true => Some(imported.signer().ok_or_else(|| {
            super::net::UsageError(
                "--signer: no signature holds over this skill (an SSH or OpenPGP commit signature, with --allowed-signers or \
                 --keyring for OpenPGP, or Sigstore bundles that together cover every file): there is no signer to trust"
                    .into(),
            )
        })?),
        false => None,
    };
    let decision = airlock_run::trust::trust(
        &store,
        &imported.staged.source,
        &imported.staged.scan_root(),
        &report,
        policy,
        match (&signer, args.repository) {
            (Some(key), _) => airlock_run::trust::Trusting::Signer(key),
            (None, true) => airlock_run::trust::Trusting::Repository,
            (None, false) => airlock_run::trust::Trusting::Commit,
        },
        args.note.clone(),
    )?;
    if args.source.json {
        outln!("{}", serde_json::to_string_pretty(&decision)?);
        return Ok(exit::OK);
    }
    match &decision.commit {
        Some(commit) => outln!(
            "trusted {} at {} ({}) with its policy: decision {}",
            escape(&decision.repo),
            escape(commit),
            if decision.subpath.is_empty() {
                "the repository's root".to_owned()
            } else {
                field(&decision.subpath)
            },
            decision.id
        ),
        None if decision.kind == "signer" => outln!(
            "skills signed by {} get this policy: decision {}",
            airlock_run::trust::signer_words(decision.repo.trim_start_matches("signer:")),
            decision.id
        ),
        None => outln!(
            "skills from {} get at most this policy: decision {}",
            escape(&decision.repo),
            decision.id
        ),
    }
    outln!("{}", policy_text(&decision.policy));
    outln!(
        "{}",
        if decision.commit.is_some() {
            "Runs of this commit use it with no flag; a later commit is shown with what changed and gets nothing from it."
        } else if decision.kind == "signer" {
            "Runs of any skill this signer signs use it with no flag; an unsigned skill, or one signed by another, gets nothing from it."
        } else {
            "Runs of this repository's skills use it with no flag."
        }
    );
    Ok(exit::OK)
}

/// A policy in a few lines.
fn policy_text(p: &PolicyDoc) -> String {
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            field(&v.join(", "))
        }
    };
    let r = &p.resources;
    format!(
        "  network: {}; presets: {}; writable: {}\n  resources: timeout {}, memory {}, disk {}, pids {}, cpus {}; installs: {}",
        list(&p.network.allow),
        list(&p.network.presets),
        list(&p.filesystem.writable),
        field(r.timeout.as_deref().unwrap_or("default")),
        field(r.memory.as_deref().unwrap_or("default")),
        field(r.disk.as_deref().unwrap_or("default")),
        r.pids.map_or("default".into(), |n| n.to_string()),
        r.cpus.map_or("default".into(), |n| n.to_string()),
        p.install.packages.map_or("default".into(), |b| b.to_string()),
    )
}

pub fn trusted(args: &TrustedArgs) -> anyhow::Result<u8> {
    let store = Store::open_shared(&data_dir(args.data_dir.as_ref())?)?;
    let decisions = store.trust_decisions(None)?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&decisions)?);
        return Ok(exit::OK);
    }
    outln!(
        "{:<14} {:<10} {:<14} {:<26} SOURCE",
        "DECISION",
        "KIND",
        "COMMIT",
        "SINCE"
    );
    for d in &decisions {
        outln!(
            "{:<14} {:<10} {:<14} {:<26} {}{}",
            d.id,
            d.kind,
            d.commit.as_deref().map_or("-", |c| c.get(..12).unwrap_or(c)),
            d.created_at.get(..19).unwrap_or(&d.created_at),
            field(&d.repo),
            if d.subpath.is_empty() {
                String::new()
            } else {
                format!(" ({})", field(&d.subpath))
            }
        );
    }
    Ok(exit::OK)
}

pub fn untrust(args: &UntrustArgs) -> anyhow::Result<u8> {
    let store = Store::open_shared(&data_dir(args.data_dir.as_ref())?)?;
    let id = store.remove_trust(&args.id)?;
    outln!("removed trust decision {id}");
    Ok(exit::OK)
}
