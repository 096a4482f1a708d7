//! Static triage of a skill.
//!
//! [`scan`] walks a staged skill folder and produces a [`ScanReport`](airlock_types::ScanReport): the
//! [`inventory`] sorts files by kind, [`skillmd`] validates each SKILL.md against the Agent Skills spec, and the
//! [`rules`] engine looks for risky behaviour. Files are first split into segments by a real parser ([`markdown`]
//! with pulldown-cmark separates code blocks, prose, inline code and HTML comments; [`code`] uses tree-sitter to
//! tell comments from code and to find the calls that start programs), so that prose that only *describes* a
//! danger counts for little while code that does it counts in full. [`verdict`] turns findings into the
//! classification, risk level and recommended mode, and [`render`] prints text and SARIF.

use regex::Regex;

/// Compiles a constant pattern; a typo in one is a bug caught by the first test that reaches it.
#[expect(clippy::expect_used, reason = "constant patterns, each covered by the tests")]
pub(crate) fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a constant pattern compiles")
}

/// A constant pattern, compiled on first use (every module's patterns, declared before them).
macro_rules! re {
    ($(#[$meta:meta])* $vis:vis $name:ident, $pattern:expr $(,)?) => {
        $(#[$meta])*
        $vis static $name: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| $crate::compile($pattern));
    };
}

pub mod code;
pub mod follow;
pub mod inventory;
pub mod markdown;
pub mod plan;
pub mod policy;
pub mod render;
pub mod rules;
pub mod skillmd;
pub mod text;
pub mod verdict;

use std::path::Path;

use rayon::prelude::*;

use airlock_types::{
    Finding, FindingContext, ScanReport, Severity, SkillSource, SkillSummary, SCHEMA_VERSION,
};

/// Why a scan could not run at all (a bad skill gives findings, not errors).
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What to scan: a staged tree and the folder in it the user pointed at.
pub struct ScanInput<'a> {
    pub source: SkillSource,
    /// Root of the staged tree; file paths in findings are relative to it.
    pub tree_root: &'a Path,
    /// Folder (relative to `tree_root`) to scan.
    pub subpath: &'a str,
    /// Name the skill folder has where it came from (the repository name for a repository root).
    pub folder_name: Option<String>,
    /// Entries the importer left out, each with its reason.
    pub skipped: &'a [(String, String)],
}

/// Scans every skill under the input's folder (or the folder itself when it is not a skill at all).
pub fn scan(input: &ScanInput<'_>) -> Result<ScanReport, ScanError> {
    let scan_root = if input.subpath.is_empty() {
        input.tree_root.to_path_buf()
    } else {
        input.tree_root.join(input.subpath)
    };
    // The rules compile while the files are listed.
    let (inventory, ()) = rayon::join(
        || inventory::build(input.tree_root, input.subpath),
        rules::prepare,
    );
    let mut inventory = inventory?;
    // A file the skill's commands run is code, whatever its name says.
    let mut run_as_code = Vec::new();
    // Each file's place in the inventory, found once (a thousand skills each run a script).
    let index: std::collections::HashMap<String, usize> = inventory
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.clone(), i))
        .collect();
    let runs = follow::executed(&inventory, input.tree_root);
    let mut seen = std::collections::HashSet::new();
    for run in runs
        .iter()
        .filter(|r| r.language != follow::ORDERED_DOC && seen.insert(r.file.as_str()))
    {
        let Some(entry) = index.get(&run.file).map(|&i| &mut inventory.files[i]) else {
            continue;
        };
        if matches!(
            entry.kind,
            airlock_types::FileKind::Markdown
                | airlock_types::FileKind::Asset
                | airlock_types::FileKind::Other
        ) {
            let named = if entry.kind == airlock_types::FileKind::Other {
                "a file"
            } else {
                "a file named as data or documentation"
            };
            run_as_code.push(Finding {
                rule: "file/run-as-code".to_owned(),
                severity: if entry.kind == airlock_types::FileKind::Other {
                    Severity::Low
                } else {
                    Severity::Medium
                },
                file: run.file.clone(),
                line: 0,
                evidence: text::visible(&format!("{}:{}", run.by, run.line), 160),
                message: format!(
                    "{}:{} runs {named} with `{}`; it is scanned as {} code.",
                    text::visible(&run.by, 120),
                    run.line,
                    run.runner,
                    run.language
                ),
                context: FindingContext::File,
            });
            entry.kind = airlock_types::FileKind::Script;
            entry.language = Some(run.language.to_owned());
        }
    }
    // A markdown file whose commands the instructions order run (and that no command runs as a script): its code
    // blocks count as the instructions' own.
    for run in runs.iter().filter(|r| r.language == follow::ORDERED_DOC) {
        if let Some(entry) = index.get(&run.file).map(|&i| &mut inventory.files[i]) {
            if entry.kind == airlock_types::FileKind::Markdown {
                entry.language = Some(follow::ORDERED_DOC.to_owned());
            }
        }
    }
    // Data a script loads and runs commands beside is read as the commands it may hold.
    for loaded in follow::loaded_and_run(&inventory, input.tree_root) {
        let Some(entry) = index.get(&loaded.file).map(|&i| &mut inventory.files[i]) else {
            continue;
        };
        // Read as code (what it holds is what the script runs), its values as the commands they may be.
        entry.kind = airlock_types::FileKind::Other;
        entry.language = Some(rules::LOADED_DATA.to_owned());
        run_as_code.push(Finding {
            rule: "file/run-as-code".to_owned(),
            severity: Severity::Low,
            file: loaded.file.clone(),
            line: 0,
            evidence: text::visible(&loaded.by, 160),
            message: format!(
                "{} loads this file and runs commands or code: its values are scanned as commands.",
                text::visible(&loaded.by, 120)
            ),
            context: FindingContext::File,
        });
    }
    // Files are independent: scan them on every core, then merge in inventory order.
    type PerFile = (Vec<Finding>, verdict::Facts, Option<rules::Script>);
    let per_file: Vec<Result<PerFile, ScanError>> = inventory
        .files
        .par_iter()
        .map(|entry| {
            let mut found = inventory::file_findings(entry, input.tree_root, &scan_root);
            let mut facts = verdict::Facts::default();
            let script = rules::scan_file(entry, &input.tree_root.join(&entry.path), &mut found, &mut facts)?;
            Ok((found, facts, script))
        })
        .collect();
    let mut findings = run_as_code;
    let mut facts = verdict::Facts::default();
    let mut scripts = Vec::new();
    for result in per_file {
        let (found, file_facts, script) = result?;
        findings.extend(found);
        facts.merge(file_facts);
        scripts.extend(script);
    }
    for (path, reason) in input.skipped {
        findings.push(Finding {
            rule: "file/skipped".to_owned(),
            severity: Severity::Medium,
            file: path.clone(),
            line: 0,
            evidence: text::visible(path, 160),
            message: format!("This entry was not imported ({reason}); review it by hand."),
            context: FindingContext::File,
        });
    }

    let mut skill_dirs = discover(&inventory);
    if skill_dirs.is_empty() {
        findings.push(Finding {
            rule: "skill-md/missing".to_owned(),
            severity: Severity::Medium,
            file: if input.subpath.is_empty() {
                "SKILL.md".to_owned()
            } else {
                format!("{}/SKILL.md", input.subpath)
            },
            line: 0,
            evidence: String::new(),
            message:
                "No SKILL.md was found, so this is not an Agent Skill; everything here needs manual review."
                    .to_owned(),
            context: FindingContext::File,
        });
        skill_dirs.push(input.subpath.to_owned());
    }
    // Each skill's SKILL.md on any core, kept in folder order.
    let skills = skill_dirs
        .par_iter()
        .map(|dir| {
            let folder_name = if dir == input.subpath {
                input.folder_name.clone()
            } else {
                dir.rsplit('/').next().map(str::to_owned)
            };
            skillmd::validate(input.tree_root, dir, folder_name.as_deref()).map(|meta| (dir.clone(), meta))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for (_, meta) in &skills {
        findings.extend(meta.findings.iter().cloned());
    }
    // The policy of the skill that runs: the folder pointed at, else the first skill found.
    let policy_dir = skill_dirs
        .iter()
        .find(|d| d.as_str() == input.subpath)
        .or(skill_dirs.first())
        .cloned()
        .unwrap_or_default();
    findings.extend(flows_across_files(scripts, &skill_dirs, &findings));
    let hidden = rules::hidden_runs(&runs, &findings);
    findings.extend(hidden);
    let declared = policy::declared(input.tree_root, &policy_dir);
    let policy_findings = policy::findings(&declared, &findings);
    findings.extend(policy_findings);
    rules::finish(&mut findings);

    // Each finding's skill, found once (the deepest skill folder its file is under).
    let folders = SkillFolders::new(&skill_dirs);
    let mut by_skill: Vec<Vec<&Finding>> = vec![Vec::new(); skill_dirs.len()];
    for f in &findings {
        if let Some(i) = folders.owner(&f.file) {
            by_skill[i].push(f);
        }
    }
    let totals = facts.for_dirs(&skill_dirs);
    let summaries: Vec<SkillSummary> = skills
        .iter()
        .map(|(dir, meta)| {
            let at = folders.index(dir);
            let own: &[&Finding] = at.map_or(&[], |i| &by_skill[i]);
            let (risk_level, classification, recommended_mode) = verdict::judge(
                own.iter().copied(),
                &at.map_or_else(|| facts.for_dir(dir), |i| totals[i]),
            );
            SkillSummary {
                path: dir.clone(),
                name: meta.name.clone(),
                description: meta.description.clone(),
                valid: meta.valid,
                risk_level,
                classification,
                recommended_mode,
                finding_count: own.len(),
            }
        })
        .collect();
    let (risk_level, classification, recommended_mode) =
        verdict::judge(findings.iter(), &facts.for_dir(input.subpath));
    let headline = verdict::headline(
        risk_level,
        classification,
        recommended_mode,
        &findings,
        &input.source,
    );
    Ok(ScanReport {
        schema_version: SCHEMA_VERSION,
        risk_level,
        classification,
        recommended_mode,
        headline,
        source: input.source.clone(),
        skills: summaries,
        inventory,
        findings,
        declared_policy: declared.ok().flatten(),
        trust: None,
        created_at: input.source.created_at.clone(),
    })
}

/// Adds evidence found after the scan (a detonation's) to a report: the level, the classification and the
/// recommended mode follow the worst of it, as do the summaries of the skills it cites, and the headline is written
/// again with `note` after it.
pub fn add_evidence(report: &mut ScanReport, found: Vec<Finding>, note: String) {
    use airlock_types::{Classification, RiskLevel, RunMode};
    let raise = |level: &mut RiskLevel, class: &mut Classification, mode: &mut RunMode, f: &Finding| {
        *level = (*level).max(RiskLevel::from_severity(f.severity));
        if *level == RiskLevel::Block {
            *class = Classification::NeedsManualReview;
            *mode = RunMode::Inspect;
        }
    };
    let dirs: Vec<String> = report.skills.iter().map(|s| s.path.clone()).collect();
    let folders = SkillFolders::new(&dirs);
    for f in &found {
        raise(
            &mut report.risk_level,
            &mut report.classification,
            &mut report.recommended_mode,
            f,
        );
        if let Some(s) = folders.owner(&f.file).map(|i| &mut report.skills[i]) {
            raise(
                &mut s.risk_level,
                &mut s.classification,
                &mut s.recommended_mode,
                f,
            );
            s.finding_count += 1;
        }
    }
    report.findings.extend(found);
    report.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
            .then(a.rule.cmp(&b.rule))
    });
    report.headline = verdict::headline(
        report.risk_level,
        report.classification,
        report.recommended_mode,
        &report.findings,
        &report.source,
    );
    report.headline.push(note);
}

fn discover(inventory: &airlock_types::Inventory) -> Vec<String> {
    let mut dirs: Vec<String> = inventory
        .files
        .iter()
        .filter(|f| f.kind == airlock_types::FileKind::SkillMd)
        .map(|f| {
            f.path
                .rsplit_once('/')
                .map(|(d, _)| d.to_owned())
                .unwrap_or_default()
        })
        .collect();
    dirs.sort();
    dirs
}

/// The skill folders of a scan, to find the skill a file belongs to by walking up its path (not by comparing it with
/// every folder).
struct SkillFolders<'a> {
    index: std::collections::HashMap<&'a str, usize>,
}

impl<'a> SkillFolders<'a> {
    fn new(dirs: &'a [String]) -> Self {
        Self {
            index: dirs.iter().enumerate().map(|(i, d)| (d.as_str(), i)).collect(),
        }
    }

    fn index(&self, dir: &str) -> Option<usize> {
        self.index.get(dir).copied()
    }

    /// The skill `path` belongs to: the deepest skill folder it is (or is under).
    fn owner(&self, path: &str) -> Option<usize> {
        let mut at = path;
        loop {
            if let Some(&i) = self.index.get(at) {
                return Some(i);
            }
            if at.is_empty() {
                return None;
            }
            at = at.rsplit_once('/').map_or("", |(parent, _)| parent);
        }
    }
}

/// Secrets that one script reads and hands out by name (a function's return, a module-level name) and another, or
/// the same one through the function, sends: followed within each skill folder, never from one skill to another. A
/// send the single-file rule already reported is not reported twice.
fn flows_across_files(scripts: Vec<rules::Script>, skill_dirs: &[String], found: &[Finding]) -> Vec<Finding> {
    let mut by_skill: std::collections::BTreeMap<usize, Vec<rules::Script>> =
        std::collections::BTreeMap::new();
    let folders = SkillFolders::new(skill_dirs);
    for script in scripts {
        // The deepest skill folder the script is under.
        if let Some(dir) = folders.owner(&script.path) {
            by_skill.entry(dir).or_default().push(script);
        }
    }
    // Skills are independent: each on any core, merged in folder order.
    let groups: Vec<&Vec<rules::Script>> = by_skill.values().collect();
    let flows: Vec<Vec<Finding>> = groups
        .par_iter()
        .map(|group| rules::cross_file_flows(group))
        .collect();
    flows
        .into_iter()
        .flatten()
        .filter(|f| {
            !found
                .iter()
                .any(|g| g.rule == f.rule && g.file == f.file && g.line == f.line)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_skill_is_the_deepest_skill_folder_above_it() {
        let dirs: Vec<String> = ["", "a", "a/b", "c", "cc"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let folders = SkillFolders::new(&dirs);
        for (file, owner) in [
            ("SKILL.md", ""),
            ("x/y.py", ""),
            ("a/SKILL.md", "a"),
            ("a/b/s.sh", "a/b"),
            ("a/bb/s.sh", "a"),
            ("c/d/e.md", "c"),
            ("cc/f", "cc"),
            ("ccc/g", ""),
        ] {
            assert_eq!(
                folders.owner(file).map(|i| dirs[i].as_str()),
                Some(owner),
                "{file}"
            );
        }
        let none: Vec<String> = vec!["a".into()];
        assert_eq!(SkillFolders::new(&none).owner("b/x"), None);
    }

    #[test]
    fn totals_for_every_folder_at_once_are_those_for_each() {
        let mut facts = verdict::Facts::default();
        for (file, sites) in [("a/s.py", 2), ("a/b/t.py", 3), ("c/u.sh", 1), ("v.py", 5)] {
            facts.script(file);
            facts.add(file, sites, 1);
        }
        let dirs: Vec<String> = ["", "a", "a/b", "c", "d"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        for (dir, t) in dirs.iter().zip(facts.for_dirs(&dirs)) {
            let one = facts.for_dir(dir);
            assert_eq!(
                (t.scripts, t.exec_sites, t.commands, t.shell_blocks),
                (one.scripts, one.exec_sites, one.commands, one.shell_blocks),
                "{dir}"
            );
        }
    }
}
