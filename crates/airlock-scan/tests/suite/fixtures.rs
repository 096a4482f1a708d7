//! Scores the scanner against the fixture skills in `fixtures/skills`, each with its expected level (and
//! classification) in an `EXPECTED` file.

use std::path::{Path, PathBuf};

use airlock_scan::{scan, ScanInput};
use airlock_types::{FindingContext, RiskLevel, ScanReport, Severity, SkillSource, SourceKind};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/skills")
}

pub(super) fn scan_fixture(dir: &Path) -> ScanReport {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let source = SkillSource {
        id: name.clone(),
        kind: SourceKind::Folder,
        input: dir.display().to_string(),
        repo_url: dir.display().to_string(),
        commit: None,
        requested_ref: None,
        pinned: true,
        pinned_url: None,
        subpath: name.clone(),
        digest: "sha256:0".into(),
        detected_files: vec![],
        created_at: "2026-01-01T00:00:00Z".into(),
    };
    let root = dir.parent().unwrap();
    scan(&ScanInput {
        source,
        tree_root: root,
        subpath: &name,
        folder_name: Some(name.clone()),
        skipped: &[],
    })
    .unwrap()
}

#[test]
fn fixture_levels_match_expectations() {
    let mut dirs: Vec<_> = fs_err::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 25,
        "the fixture set needs at least 25 skills, has {}",
        dirs.len()
    );
    let mut wrong = Vec::new();
    for dir in &dirs {
        let expected = fs_err::read_to_string(dir.join("EXPECTED")).unwrap();
        let mut lines = expected.lines();
        let level: RiskLevel = lines.next().unwrap().parse().unwrap();
        let class = lines.next().map(str::to_owned);
        let report = scan_fixture(dir);
        let got_class = report.classification.as_str().to_owned();
        if report.risk_level != level || class.as_ref().is_some_and(|c| *c != got_class) {
            let top: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.severity > Severity::Info)
                .map(|f| format!("{} {} {}:{}", f.severity, f.rule, f.file, f.line))
                .collect();
            wrong.push(format!(
                "{}: expected {level} {class:?}, got {} {got_class}; {top:?}",
                dir.file_name().unwrap().to_string_lossy(),
                report.risk_level
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} fixtures scored wrong:\n{}",
        wrong.len(),
        dirs.len(),
        wrong.join("\n")
    );
}

#[test]
fn benign_skills_that_talk_about_danger_stay_below_high() {
    for name in ["code-review-checklist", "security-audit-guide", "format-json"] {
        let report = scan_fixture(&fixtures_dir().join(name));
        assert!(
            report.risk_level < RiskLevel::High,
            "{name} scored {}",
            report.risk_level
        );
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.context == FindingContext::Prose || f.context == FindingContext::Comment),
            "{name}: the mentions should still be reported as info"
        );
    }
}

#[test]
fn every_finding_cites_a_real_file_and_line() {
    for entry in fs_err::read_dir(fixtures_dir()).unwrap() {
        let dir = entry.unwrap().path();
        let report = scan_fixture(&dir);
        for f in &report.findings {
            let path = dir.parent().unwrap().join(&f.file);
            if f.rule == "skill-md/missing" {
                continue;
            }
            assert!(
                path.symlink_metadata().is_ok(),
                "{}: {} cites missing file {}",
                dir.display(),
                f.rule,
                f.file
            );
            if f.line > 0 {
                let text = String::from_utf8_lossy(&fs_err::read(&path).unwrap()).into_owned();
                assert!(
                    (f.line as usize) <= text.lines().count(),
                    "{}: {} cites line {} of {} which has {} lines",
                    dir.display(),
                    f.rule,
                    f.line,
                    f.file,
                    text.lines().count()
                );
            }
        }
    }
}
