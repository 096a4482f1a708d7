//! What a run amounts to: package installs recognised in its timeline, and the verdict sentences that join what
//! the scan said with what the run did.

use airlock_scan::plan;
use airlock_types::{ChangeKind, Install, RunMode, RunStatus, ScanReport, SkillRun};

/// Package installs in the timeline. A shell that only passes a command line on is not counted (its child is).
/// Package installs a run made: each executed program parsed with its arguments (`pip3 --quiet install`, `python3 -m
/// pip install`, `npm i`, ...), plus `curl ... | sh`; and, when no install command was seen, writes under
/// `site-packages` or `node_modules` (an install by other means).
pub fn installs(
    timeline: &[airlock_types::ExecEvent],
    written: &[airlock_types::FileAccess],
) -> Vec<Install> {
    let mut found = exec_installs(timeline);
    if found.is_empty() {
        for (marker, manager) in [("/site-packages/", "pip"), ("/node_modules/", "npm")] {
            if let Some(w) = written.iter().find(|w| w.path.contains(marker)) {
                found.push(Install {
                    manager: manager.into(),
                    argv: vec![format!("(no install command seen: files written under {marker})")],
                    pid: w.pid,
                    t_ms: w.t_ms,
                    exit_code: None,
                });
            }
        }
    }
    found
}

fn exec_installs(timeline: &[airlock_types::ExecEvent]) -> Vec<Install> {
    let shells = ["sh", "bash", "dash", "zsh"];
    let mut installers = std::collections::HashSet::new();
    let mut found: Vec<Install> = Vec::new();
    for e in timeline {
        // A process started by an install (pip running its own helpers) is part of that install.
        if installers.contains(&e.ppid) {
            installers.insert(e.pid);
            continue;
        }
        let piped = plan::install_manager(&e.argv.join(" ")).filter(|m| *m == "curl-pipe-shell");
        let Some(manager) = airlock_types::observe::install_manager(&e.path, &e.argv).or(piped) else {
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
pub fn verdict(report: &ScanReport, run: &SkillRun) -> Vec<String> {
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
            airlock_types::observe::credential_like(&f.path)
                || f.resolved
                    .as_deref()
                    .is_some_and(airlock_types::observe::credential_like)
        })
        .map(|f| match &f.resolved {
            Some(r) => format!("{} (a link to {r})", f.path),
            None => f.path.clone(),
        })
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
    if run.dropped.total() > 0 {
        let d = &run.dropped;
        out.push(format!(
            "The run made more events than the record keeps: {} exec(s), {} read(s), {} write(s) and {} network \
             attempt(s) were not kept (credential reads, hook and out-of-workspace writes, remote attempts and installs \
             always are).",
            d.timeline, d.files_read, d.files_written, d.network
        ));
    }
    out.push(format!(
        "It ran {} program(s) and ended {} (exit {}).",
        run.timeline.len(),
        airlock_types::wire_name(&run.status),
        run.exit_code.map_or("none".into(), |c| c.to_string())
    ));
    out
}
