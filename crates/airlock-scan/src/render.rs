//! Printing a report: readable text (blunt headline first, every finding with `file:line`) and SARIF 2.1.0.

use std::fmt::Write as _;

use serde_json::{json, Value};

use airlock_types::{FileKind, FindingContext, RiskLevel, ScanReport, Severity};

use crate::rules::table::{BUILTIN, RULES};
use crate::text::visible;

/// Whether to colour the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    Never,
    Always,
}

fn paint(color: Color, code: &str, text: &str) -> String {
    match color {
        Color::Never => text.to_owned(),
        Color::Always => format!("\x1b[{code}m{text}\x1b[0m"),
    }
}

fn severity_color(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "1;31",
        Severity::High => "31",
        Severity::Medium => "33",
        Severity::Low => "36",
        Severity::Info => "2",
    }
}

/// The report as text. Info findings are left out unless `verbose`.
pub fn text(report: &ScanReport, color: Color, verbose: bool) -> String {
    let mut out = String::new();
    let level_color = match report.risk_level {
        RiskLevel::Low => "32",
        RiskLevel::Medium => "33",
        RiskLevel::High => "31",
        RiskLevel::Block => "1;31",
    };
    let level = format!("{} RISK", report.risk_level.as_str().to_uppercase());
    let level = if report.risk_level == RiskLevel::Block {
        "BLOCK".to_owned()
    } else {
        level
    };
    let _ = writeln!(
        out,
        "{}  {}",
        paint(color, level_color, &level),
        report.classification.label()
    );
    for line in &report.headline {
        let _ = writeln!(out, "  {}", visible(line, 300));
    }
    out.push('\n');
    let src = &report.source;
    let _ = writeln!(out, "source    {}", visible(&src.input, 200));
    match &src.commit {
        Some(c) if src.pinned => {
            let _ = writeln!(out, "commit    {c} (pinned)");
        }
        Some(c) => {
            let _ = writeln!(
                out,
                "commit    {c} (resolved from `{}`)",
                visible(src.requested_ref.as_deref().unwrap_or("HEAD"), 80)
            );
        }
        None => {
            let _ = writeln!(out, "digest    {}", src.digest);
        }
    }
    if let Some(url) = &src.pinned_url {
        let _ = writeln!(out, "pin       {}", visible(url, 200));
    }
    let inv = &report.inventory;
    let mut kinds = Vec::new();
    for (kind, label) in [
        (FileKind::SkillMd, "SKILL.md"),
        (FileKind::Script, "scripts"),
        (FileKind::Markdown, "references"),
        (FileKind::Asset, "assets"),
        (FileKind::Workflow, "workflows"),
        (FileKind::AgentHookConfig, "agent configs"),
        (FileKind::PackageManifest, "manifests"),
        (FileKind::Binary, "binaries"),
        (FileKind::Symlink, "symlinks"),
        (FileKind::Other, "other"),
    ] {
        let n = inv.count(kind);
        if n > 0 {
            kinds.push(format!("{n} {label}"));
        }
    }
    let _ = writeln!(
        out,
        "files     {} ({} bytes): {}",
        inv.files.len(),
        inv.total_bytes,
        kinds.join(", ")
    );
    if report.skills.len() > 1 || report.skills.first().is_some_and(|s| !s.path.is_empty()) {
        let _ = writeln!(out, "skills    {}", report.skills.len());
        for s in &report.skills {
            let _ = writeln!(
                out,
                "  {:<7} {:<26} {}  {}",
                s.risk_level.as_str(),
                s.classification.as_str(),
                visible(if s.path.is_empty() { "." } else { &s.path }, 80),
                visible(s.name.as_deref().unwrap_or("(no name)"), 64)
            );
        }
    }
    let _ = writeln!(out, "mode      {} recommended", report.recommended_mode);
    let shown: Vec<_> = report
        .findings
        .iter()
        .filter(|f| verbose || f.severity > Severity::Info)
        .collect();
    let hidden = report.findings.len() - shown.len();
    out.push('\n');
    if shown.is_empty() {
        let _ = writeln!(out, "No findings.");
    } else {
        let _ = writeln!(out, "Findings ({}):", shown.len());
    }
    for f in shown {
        let place = if f.line > 0 {
            format!("{}:{}", f.file, f.line)
        } else {
            f.file.clone()
        };
        let sev = format!("{:<8}", f.severity.as_str().to_uppercase());
        // The kind of evidence and where it stands, after the place: `intent, in the instructions`.
        let _ = writeln!(
            out,
            "  {} {:<28} {}  ({}, {})",
            paint(color, severity_color(f.severity), &sev),
            f.rule,
            visible(&place, 160),
            f.kind().as_str(),
            f.standing().as_str()
        );
        if !f.evidence.is_empty() && f.context != FindingContext::File {
            let _ = writeln!(
                out,
                "           {}",
                paint(color, "2", &visible(&f.evidence, 160))
            );
        }
        let _ = writeln!(out, "           {}", visible(&f.message, 300));
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "\n{hidden} informational finding(s) not shown (mentions in prose, comments); use --verbose."
        );
    }
    out
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// The report as a SARIF 2.1.0 log.
pub fn sarif(report: &ScanReport) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| (r.id, r.severity, r.message))
        .chain(BUILTIN.iter().copied())
        .map(|(id, severity, message)| {
            json!({
                "id": id,
                "shortDescription": { "text": message },
                "helpUri": format!("https://github.com/airlock-dev/airlock/blob/main/docs/rules.md#{}", id.replace('/', "")),
                "defaultConfiguration": { "level": sarif_level(severity) },
                "properties": { "severity": severity.as_str() }
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "ruleId": f.rule,
                "level": sarif_level(f.severity),
                "message": { "text": format!("{} Evidence: {}", f.message, f.evidence) },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": f.file, "uriBaseId": "SRCROOT" },
                        "region": { "startLine": f.line.max(1) }
                    }
                }],
                "properties": { "severity": f.severity.as_str(), "context": f.context }
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "airlock",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/airlock-dev/airlock",
                "rules": rules
            }},
            "versionControlProvenance": report.source.commit.as_ref().map(|c| vec![json!({
                "repositoryUri": report.source.repo_url,
                "revisionId": c.as_str()
            })]).unwrap_or_default(),
            "results": results,
            "properties": {
                "risk_level": report.risk_level,
                "classification": report.classification,
                "recommended_mode": report.recommended_mode
            }
        }]
    })
}
