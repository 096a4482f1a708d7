//! `airlock scan`, `airlock validate` and `airlock list`.

use std::path::PathBuf;

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

/// Imports and scans.
pub fn run_scan(args: &SourceArgs) -> anyhow::Result<ScanReport> {
    Ok(imported(args)?.scan()?)
}

pub fn scan(args: &ScanArgs) -> anyhow::Result<u8> {
    if args.source.json && args.format != Format::Text && args.format != Format::Json {
        anyhow::bail!("--json and --format sarif ask for two formats: give one of them");
    }
    let report = run_scan(&args.source)?;
    if report.inventory.files.is_empty() {
        eprintln!(
            "{} is empty: there is nothing to scan",
            escape(&report.source.input)
        );
        return Ok(exit::EMPTY);
    }
    let format = if args.source.json {
        Format::Json
    } else {
        args.format
    };
    match format {
        Format::Text => print!("{}", render::text(&report, color_stdout(), args.verbose)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Sarif => println!("{}", serde_json::to_string_pretty(&render::sarif(&report))?),
    }
    Ok(match args.fail_on {
        Some(level) if report.risk_level >= level => exit::POLICY,
        _ => exit::OK,
    })
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
        println!(
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
        println!("✗ Not a skill: no SKILL.md in {}", escape(&shown));
    } else {
        let name = meta.name.as_deref().unwrap_or("(no name)");
        if valid {
            println!("✓ Valid skill: {}", escape(name));
        } else {
            println!("✗ Invalid skill: {}", escape(name));
        }
        println!(
            "  description: {}",
            escape(meta.description.as_deref().unwrap_or("(none)"))
        );
        println!("  path: {}", escape(&shown));
        println!("  scripts: {} file(s)", scripts.len());
        println!("  references: {} file(s)", references.len());
        println!("  assets: {} file(s)", assets.len());
        if !scripts.is_empty() {
            println!("  script names:");
            for s in &scripts {
                println!("    - {}", escape(s));
            }
        }
        for f in &meta.findings {
            println!(
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
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "source": staged.source, "scripts": scripts }))?
        );
    } else if scripts.is_empty() {
        println!("No scripts: this skill is prompt-only.");
    } else {
        for s in &scripts {
            println!(
                "{}\t{}",
                escape(s["path"].as_str().unwrap_or_default()),
                s["language"].as_str().unwrap_or("unknown")
            );
        }
    }
    Ok(exit::OK)
}
