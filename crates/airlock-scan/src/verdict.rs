//! From findings to the blunt verdict: classification, risk level and recommended run mode.

use airlock_types::{Classification, Finding, FindingContext, RiskLevel, RunMode, Severity, SkillSource};

use crate::text::visible;

/// Counts gathered while scanning, per file, that are not findings themselves.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    files: std::collections::BTreeMap<String, FileFacts>,
}

#[derive(Debug, Clone, Default)]
struct FileFacts {
    script: bool,
    exec_sites: usize,
    commands: usize,
    shell_blocks: usize,
}

/// Totals for one skill folder.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals {
    pub scripts: usize,
    pub exec_sites: usize,
    pub commands: usize,
    pub shell_blocks: usize,
}

impl Facts {
    fn entry(&mut self, file: &str) -> &mut FileFacts {
        self.files.entry(file.to_owned()).or_default()
    }

    /// Adds another set of facts (from a parallel worker) to this one.
    pub fn merge(&mut self, other: Facts) {
        for (file, f) in other.files {
            let e = self.entry(&file);
            e.script |= f.script;
            e.exec_sites += f.exec_sites;
            e.commands += f.commands;
            e.shell_blocks += f.shell_blocks;
        }
    }

    pub fn script(&mut self, file: &str) {
        self.entry(file).script = true;
    }

    pub fn add(&mut self, file: &str, exec_sites: usize, commands: usize) {
        let e = self.entry(file);
        e.exec_sites += exec_sites;
        e.commands += commands;
    }

    pub fn shell_block(&mut self, file: &str) {
        self.entry(file).shell_blocks += 1;
    }

    /// Totals for the files under each of `dirs` at once, as [`Facts::for_dir`] gives them one by one: each file is
    /// added to every one of `dirs` it is under, found by walking up its path.
    pub fn for_dirs(&self, dirs: &[String]) -> Vec<Totals> {
        let index: std::collections::HashMap<&str, usize> =
            dirs.iter().enumerate().map(|(i, d)| (d.as_str(), i)).collect();
        let mut totals = vec![Totals::default(); dirs.len()];
        for (file, f) in &self.files {
            let mut at = file.as_str();
            while let Some((parent, _)) = at.rsplit_once('/') {
                if let Some(&i) = index.get(parent) {
                    totals[i].add(f);
                }
                at = parent;
            }
            if let Some(&i) = index.get("") {
                totals[i].add(f);
            }
        }
        totals
    }

    /// Totals for files under `dir` ("" for everything).
    pub fn for_dir(&self, dir: &str) -> Totals {
        let prefix = format!("{dir}/");
        self.files
            .iter()
            .filter(|(file, _)| dir.is_empty() || file.starts_with(&prefix))
            .map(|(_, f)| f)
            .fold(Totals::default(), |mut t, f| {
                t.add(f);
                t
            })
    }
}

impl Totals {
    fn add(&mut self, f: &FileFacts) {
        self.scripts += usize::from(f.script);
        self.exec_sites += f.exec_sites;
        self.commands += f.commands;
        self.shell_blocks += f.shell_blocks;
    }
}

const MANUAL_REVIEW_RULES: [&str; 7] = [
    "file/binary",
    "obfusc/encoded-exec",
    "prompt/hidden-text",
    "skill-md/missing",
    "skill-md/frontmatter-missing",
    "skill-md/frontmatter-invalid",
    "file/skipped",
];

const EXEC_CATEGORIES: [&str; 5] = ["exec/", "net/http", "install/", "priv/", "destruct/"];

/// The verdict for a set of findings.
pub fn judge<'a>(
    findings: impl Iterator<Item = &'a Finding>,
    totals: &Totals,
) -> (RiskLevel, Classification, RunMode) {
    let mut risk = RiskLevel::Low;
    let mut manual = false;
    let mut heavy_code = 0;
    let mut any_exec = false;
    for f in findings {
        risk = risk.max(RiskLevel::from_severity(f.severity));
        if MANUAL_REVIEW_RULES.contains(&f.rule.as_str()) && f.severity >= Severity::Medium {
            manual = true;
        }
        let exec_like = EXEC_CATEGORIES.iter().any(|c| f.rule.starts_with(c));
        if exec_like && f.severity >= Severity::Medium {
            any_exec = true;
            if f.severity >= Severity::High && f.context == FindingContext::Code {
                heavy_code += 1;
            }
        }
    }
    let classification = if manual || risk == RiskLevel::Block {
        Classification::NeedsManualReview
    } else if totals.exec_sites >= 8 || totals.commands >= 40 || heavy_code >= 3 {
        Classification::ExecHeavy
    } else if totals.scripts > 0 || totals.shell_blocks > 0 || any_exec {
        Classification::PromptWithShellHelpers
    } else {
        Classification::PromptOnly
    };
    let mode = if risk == RiskLevel::Block {
        RunMode::Inspect
    } else {
        RunMode::Sandbox
    };
    (risk, classification, mode)
}

/// Blunt sentences for the top of a report, most important first.
pub fn headline(
    risk: RiskLevel,
    classification: Classification,
    mode: RunMode,
    findings: &[Finding],
    source: &SkillSource,
) -> Vec<String> {
    let verdict = match risk {
        RiskLevel::Low => "Low risk",
        RiskLevel::Medium => "Medium risk",
        RiskLevel::High => "High risk",
        RiskLevel::Block => "Blocked",
    };
    let advice = match mode {
        RunMode::Inspect => "do not run it; inspect only",
        RunMode::DryRun => "dry run recommended",
        RunMode::Sandbox => "try it in a sandbox run (network off)",
    };
    let mut lines = vec![format!("{verdict}: {}, {advice}.", classification.label())];
    for f in findings.iter().filter(|f| f.severity >= Severity::Medium).take(3) {
        let place = if f.line > 0 {
            format!("{}:{}", f.file, f.line)
        } else {
            f.file.clone()
        };
        lines.push(format!(
            "{} ({})",
            f.message.trim_end_matches('.'),
            visible(&place, 120)
        ));
    }
    if findings.iter().all(|f| f.severity < Severity::Medium) {
        lines.push("No executable helpers or risky instructions found.".to_owned());
    }
    if let (false, Some(commit)) = (source.pinned, &source.commit) {
        let from = source.requested_ref.as_deref().unwrap_or("HEAD");
        let mut pin = format!(
            "Moving ref `{}` resolved to commit {}",
            visible(from, 80),
            commit.short()
        );
        if let Some(url) = &source.pinned_url {
            pin.push_str(&format!("; pin it next time with {}", visible(url, 200)));
        }
        lines.push(pin);
    }
    lines
}
