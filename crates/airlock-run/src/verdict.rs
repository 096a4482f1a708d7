//! What a run amounts to: package installs recognised in its timeline, and the verdict sentences that join what
//! the scan said with what the run did.

use airlock_scan::plan;
use airlock_types::observe::{credential_like, startup_or_hook};
use airlock_types::{
    ChangeKind, FileAccess, Install, NetDecision, Observed, RiskLevel, RunMode, RunStatus, ScanReport,
    SkillRun,
};

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

/// How many names a reason lists before it says how many more there are.
const NAMED: usize = 5;

/// Every name of a list the user must act on (the files to review before applying a patch), up to a bound far
/// beyond what a reader skims.
fn every_name(list: &[String]) -> String {
    const ALL: usize = 100;
    let mut out = list.iter().take(ALL).cloned().collect::<Vec<_>>().join(", ");
    if list.len() > ALL {
        out.push_str(&format!(
            " and {} more (`airlock show RUN` lists them all)",
            list.len() - ALL
        ));
    }
    out
}

fn names(list: &[String]) -> String {
    let mut out = list.iter().take(NAMED).cloned().collect::<Vec<_>>().join(", ");
    if list.len() > NAMED {
        out.push_str(&format!(" and {} more", list.len() - NAMED));
    }
    out
}

/// A file access as named in the verdict: what it reached when that differs from what was asked for.
fn shown(f: &FileAccess) -> String {
    match &f.resolved {
        Some(r) => format!("{} (a link to {r})", f.path),
        None => f.path.clone(),
    }
}

fn judged(f: &FileAccess) -> &str {
    f.resolved.as_deref().unwrap_or(&f.path)
}

/// Whether an access reached a secret of the user's. The skill's own files and the environment the install phase
/// made hold none (a package's `credentials` module is code); a link is judged by the file it reached.
fn secret_access(f: &FileAccess) -> bool {
    let provided =
        |p: &str| p.starts_with("/skill/") || p.starts_with("/env/") || p.starts_with("/node_modules/");
    let secret = |p: &str| credential_like(p) && !provided(p);
    secret(judged(f)) || secret(&f.path) && !provided(judged(f))
}

/// Whether an access is the system's npm reading its own settings (`.npmrc` in the home folder or the project, as
/// every `npm`/`npx` does on start): the package manager's doing, not the skill's. The process must be the
/// system's own npm (its files are outside anything a skill can write), and the file read, not written.
fn package_manager_config(
    f: &FileAccess,
    timeline: &[airlock_types::ExecEvent],
    written: &[FileAccess],
) -> bool {
    const NPM: &[&str] = &[
        "/usr/bin/npm",
        "/usr/bin/npx",
        "/usr/lib/node_modules/npm/",
        "/usr/share/nodejs/npm/",
        "/usr/local/lib/node_modules/npm/",
    ];
    let npmrc = judged(f).rsplit('/').next() == Some(".npmrc") && f.path.rsplit('/').next() == Some(".npmrc");
    let read_only = !written.iter().any(|w| w.path == f.path);
    let by_npm = timeline
        .iter()
        .rfind(|e| e.pid == f.pid && e.t_ms <= f.t_ms)
        .is_some_and(|e| {
            e.argv.iter().take(2).any(|a| {
                NPM.iter().any(|n| {
                    if n.ends_with('/') {
                        a.starts_with(n)
                    } else {
                        a == n
                    }
                })
            })
        });
    npmrc && read_only && by_npm
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// What the run did that matters for its risk, from the record alone, and the level that earns: reading a secret
/// or writing a start-up or hook file is `high`, and either together with the other or with a remote network
/// attempt is `block` (the shape of credential theft); installs, remote attempts, running files the run wrote,
/// changes to review and dropped events are `medium`, and a program the run downloaded and ran is `high`.
pub fn observe(report: &ScanReport, run: &SkillRun) -> Observed {
    let mut o = Observed {
        level: RiskLevel::Low,
        overall: report.risk_level,
        ..Observed::default()
    };
    if run.mode != RunMode::Sandbox {
        return o;
    }
    for f in run.files_read.iter().chain(&run.files_written) {
        if secret_access(f) && !package_manager_config(f, &run.timeline, &run.files_written) {
            push_unique(&mut o.secrets_read, shown(f));
        }
    }
    // Start-up and hook files outside the project, or in its `.git` folder, act at once; those in the project
    // act once the patch is applied, and are named for review (`run.review`).
    let in_project = |p: &str| {
        p.strip_prefix("/workspace/")
            .is_some_and(|rel| crate::patch::refused(rel).is_none_or(|r| !r.contains(".git")))
    };
    for f in &run.files_written {
        let reached = judged(f);
        if (startup_or_hook(reached) || startup_or_hook(&f.path)) && !in_project(reached) {
            push_unique(&mut o.persistence_writes, shown(f));
        }
    }
    o.installs = run.installs.iter().map(|i| i.manager.clone()).collect();
    o.installs.dedup();
    // An agent run's own model host: the agent's requests, not the skill's.
    let agent_host = crate::invoke::AGENTS
        .iter()
        .find(|(_, p)| p.template.split_whitespace().next() == run.command.first().map(String::as_str))
        .map(|(_, p)| p.host);
    for n in &run.network {
        // Name lookups in a run without network reach nothing (no host is known).
        if n.decision == NetDecision::Local || n.protocol == "dns" && n.host.is_none() {
            continue;
        }
        let host = n.host.clone().unwrap_or_else(|| n.destination.clone());
        if n.decision == NetDecision::Allowed && agent_host == Some(host.as_str()) {
            push_unique(&mut o.agent_model, host);
            continue;
        }
        match n.decision {
            // A detonation's sinkhole took it: in a real run it would have gone out.
            NetDecision::Allowed | NetDecision::Sinkholed => push_unique(&mut o.network_allowed, host),
            _ => push_unique(&mut o.network_denied, host),
        }
    }
    let written: std::collections::HashSet<&str> = run
        .files_written
        .iter()
        .flat_map(|f| [f.path.as_str(), judged(f)])
        .collect();
    for e in &run.timeline {
        let path = absolute(&e.cwd, &e.path);
        if written.contains(path.as_str()) {
            push_unique(&mut o.executed_written, path);
        }
    }
    o.review = run
        .review
        .iter()
        .map(|r| format!("{} ({})", r.path, r.reason))
        .collect();
    o.dropped = run.dropped.total();

    let mut level = RiskLevel::Low;
    let mut raise = |to: RiskLevel, reason: String, reasons: &mut Vec<String>| {
        level = level.max(to);
        reasons.push(format!("{}: {reason}", to.as_str()));
    };
    let remote: Vec<String> = o
        .network_allowed
        .iter()
        .chain(&o.network_denied)
        .cloned()
        .collect();
    let mut reasons = Vec::new();
    if !o.secrets_read.is_empty() {
        raise(
            RiskLevel::High,
            format!("it opened credential-like paths: {}", names(&o.secrets_read)),
            &mut reasons,
        );
    }
    if !o.persistence_writes.is_empty() {
        raise(
            RiskLevel::High,
            format!(
                "it wrote files that run later (start-up files, hooks, scheduled jobs): {}",
                names(&o.persistence_writes)
            ),
            &mut reasons,
        );
    }
    if !o.secrets_read.is_empty() {
        let and = if !o.persistence_writes.is_empty() {
            Some("wrote files that run later".to_owned())
        } else if !remote.is_empty() {
            Some(format!("tried to reach {}", names(&remote)))
        } else if !o.review.is_empty() {
            Some(format!(
                "left changes that run later in the patch: {}",
                every_name(&o.review)
            ))
        } else {
            None
        };
        if let Some(and) = and {
            raise(
                RiskLevel::Block,
                format!("it read secrets and {and}"),
                &mut reasons,
            );
        }
    }
    if !o.executed_written.is_empty() {
        if remote.is_empty() {
            raise(
                RiskLevel::Medium,
                format!("it ran files it had written: {}", names(&o.executed_written)),
                &mut reasons,
            );
        } else {
            raise(
                RiskLevel::High,
                format!(
                    "it ran files it had written ({}) in a run that reached out to {}",
                    names(&o.executed_written),
                    names(&remote)
                ),
                &mut reasons,
            );
        }
    }
    if !o.network_allowed.is_empty() {
        raise(
            RiskLevel::Medium,
            format!("allowed network attempts to {}", names(&o.network_allowed)),
            &mut reasons,
        );
    }
    if !o.network_denied.is_empty() {
        raise(
            RiskLevel::Medium,
            format!("denied network attempts to {}", names(&o.network_denied)),
            &mut reasons,
        );
    }
    if !o.installs.is_empty() {
        raise(
            RiskLevel::Medium,
            format!("it installed packages with {}", names(&o.installs)),
            &mut reasons,
        );
    }
    if !o.review.is_empty() {
        raise(
            RiskLevel::Medium,
            format!("its changes act on git or run later: {}", every_name(&o.review)),
            &mut reasons,
        );
    }
    if o.dropped > 0 {
        raise(
            RiskLevel::Medium,
            format!(
                "{} not kept, so the record is not complete",
                airlock_types::display::count(o.dropped as usize, "event")
            ),
            &mut reasons,
        );
    }
    o.level = level;
    o.overall = report.risk_level.max(level);
    o.reasons = reasons;
    o
}

/// `path` as an absolute path, lexically joined to `cwd` when relative (how an exec of `./tool.sh` is recorded).
fn absolute(cwd: &str, path: &str) -> String {
    if path.starts_with('/') {
        return path.to_owned();
    }
    let mut parts: Vec<&str> = cwd.split('/').filter(|p| !p.is_empty()).collect();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Joins what the scan said with what was observed.
pub fn verdict(report: &ScanReport, run: &SkillRun) -> Vec<String> {
    let mut out = vec![format!(
        "The scan rated this skill {} ({}) with {}.",
        report.risk_level,
        airlock_types::wire_name(&report.classification),
        airlock_types::display::count(report.findings.len(), "finding")
    )];
    match run.mode {
        RunMode::Inspect => out.push("Nothing was executed (inspect).".into()),
        RunMode::DryRun => out.push(format!(
            "Nothing was executed (dry run); the skill asks for {}.",
            airlock_types::display::count(run.plan.as_ref().map_or(0, |p| p.steps.len()), "command")
        )),
        RunMode::Sandbox => {}
    }
    if run.status == RunStatus::Refused {
        out.push("The run was refused because the scan says block.".into());
        return out;
    }
    if let Some(t) = &report.trust {
        out.push(t.note.clone());
    }
    if let Some(p) = &run.policy {
        if let Some(d) = &p.declared {
            let beyond: Vec<String> = p
                .beyond
                .iter()
                .take(4)
                .map(|b| format!("{} {}", b.kind, b.what))
                .collect();
            out.push(match (beyond.is_empty(), run.mode) {
                (_, m) if m != RunMode::Sandbox => format!(
                    "It declares a policy in {}{}.",
                    d.source.origin,
                    if p.accepted { ", applied" } else { "" }
                ),
                (true, _) => format!(
                    "It stayed within the policy it declares in {}{}.",
                    d.source.origin,
                    if p.accepted {
                        " (applied)"
                    } else {
                        " (not applied: --accept-policy applies it)"
                    }
                ),
                (false, _) => format!(
                    "It went beyond the policy it declares in {}: {}{}.",
                    d.source.origin,
                    beyond.join(", "),
                    if p.beyond.len() > 4 {
                        format!(" and {} more", p.beyond.len() - 4)
                    } else {
                        String::new()
                    }
                ),
            });
        }
        if !p.refused.is_empty() {
            out.push(format!(
                "The operator's policy did not grant: {}.",
                p.refused.join("; ")
            ));
        }
    }
    if let Some(env) = &run.environment {
        for p in &env.missing_programs {
            out.push(format!("It needs {p}: {}.", env.missing_why(p)));
        }
        match env.status.as_str() {
            "installed" => out.push(format!(
                "Its environment was installed in a sealed phase with network to the package registries only: {}.",
                names(&env.installed)
            )),
            "reused" => out.push(format!(
                "Its environment ({}) was reused from the cache.",
                names(&env.installed)
            )),
            s if s.starts_with("incomplete") => out.push(format!("Its environment is {s}.")),
            _ => {}
        }
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
    // The agent's own requests to its model are the agent's: said apart, not counted as the skill's.
    let agents_own = |n: &&airlock_types::NetAttempt| {
        n.decision == airlock_types::NetDecision::Allowed
            && n.host
                .as_ref()
                .is_some_and(|h| run.observed.agent_model.contains(h))
    };
    if !run.observed.agent_model.is_empty() {
        out.push(format!(
            "The agent talked to its model at {} ({}, its own, not the skill's).",
            names(&run.observed.agent_model),
            airlock_types::display::count(run.network.iter().filter(agents_own).count(), "request")
        ));
    }
    let remote: Vec<_> = run
        .network
        .iter()
        .filter(|n| n.decision != airlock_types::NetDecision::Local && !blind_lookup(n) && !agents_own(n))
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
    let sinkholed = remote
        .iter()
        .filter(|n| n.decision == airlock_types::NetDecision::Sinkholed)
        .count();
    let net_warned = warned(&["net", "curl", "download", "exfil", "http", "fetch", "url"]);
    if sinkholed > 0 {
        out.push(format!(
            "A detonation: the run tried {} ({}); the sinkhole on this machine took {}, nothing left it.",
            airlock_types::display::count(hosts.len(), "destination"),
            hosts.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            if sinkholed == 1 {
                "the attempt".to_owned()
            } else {
                format!("all {sinkholed} attempts")
            },
        ));
    } else if !hosts.is_empty() {
        out.push(format!(
            "{}the run tried {} ({}): {} allowed, {} denied.",
            if net_warned {
                "The scan warned about network use; "
            } else {
                "The scan did not flag network use, but "
            },
            airlock_types::display::count(hosts.len(), "destination"),
            hosts.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            airlock_types::display::count(remote.len() - denied, "attempt"),
            denied
        ));
    } else if lookups > 0 {
        out.push(format!(
            "{}the run tried {}; with no network, nothing answered and no connection was made.",
            if net_warned {
                "The scan warned about network use; "
            } else {
                "The scan did not flag network use, but "
            },
            airlock_types::display::count(lookups, "name lookup")
        ));
    } else if net_warned {
        out.push("The scan warned about network use; the run made no network attempt.".into());
    }
    if !run.installs.is_empty() {
        out.push(format!(
            "It tried {}: {}.",
            airlock_types::display::count(run.installs.len(), "package install"),
            run.installs
                .iter()
                .map(|i| i.manager.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let o = &run.observed;
    if !o.secrets_read.is_empty() {
        out.push(format!(
            "It tried to open credential-like paths ({}); the sandbox holds none of the host's.",
            names(&o.secrets_read)
        ));
    }
    if !o.persistence_writes.is_empty() {
        out.push(format!(
            "It wrote files that make something run later: {}.",
            names(&o.persistence_writes)
        ));
    }
    if !o.executed_written.is_empty() {
        out.push(format!(
            "It ran files it had written: {}.",
            names(&o.executed_written)
        ));
    }
    if !run.review.is_empty() {
        let listed: Vec<String> = run
            .review
            .iter()
            .map(|r| format!("{} ({})", r.path, r.reason))
            .collect();
        out.push(format!(
            "Review carefully before applying the patch: {}.",
            names(&listed)
        ));
    }
    if !run.patch_skipped.is_empty() {
        let listed: Vec<String> = run
            .patch_skipped
            .iter()
            .map(|s| format!("{} ({})", s.path, s.reason))
            .collect();
        out.push(format!("Left out of the patch: {}.", names(&listed)));
    }
    let (a, m, d) = run.changes.iter().fold((0, 0, 0), |(a, m, d), c| match c.kind {
        ChangeKind::Added => (a + 1, m, d),
        ChangeKind::Modified => (a, m + 1, d),
        ChangeKind::Deleted => (a, m, d + 1),
    });
    if a + m + d > 0 {
        out.push(format!(
            "It changed {} in the target copy ({a} added, {m} modified, {d} deleted); your project is untouched.",
            airlock_types::display::count(a + m + d, "file")
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
            "The run made more events than the record keeps: {}, {}, {} and {} were not kept (credential \
             reads, hook and out-of-workspace writes, remote attempts and installs always are).",
            airlock_types::display::count(d.timeline as usize, "program start"),
            airlock_types::display::count(d.files_read as usize, "read"),
            airlock_types::display::count(d.files_written as usize, "write"),
            airlock_types::display::count(d.network as usize, "network attempt")
        ));
    }
    if o.level > RiskLevel::Low {
        let why = o
            .reasons
            .iter()
            .find_map(|r| r.strip_prefix(&format!("{}: ", o.level)))
            .unwrap_or_default();
        out.push(format!(
            "What the run did is rated {} ({why}){}; together with the scan, {}.",
            o.level,
            if o.level > report.risk_level {
                format!(", above the scan's {}", report.risk_level)
            } else {
                String::new()
            },
            o.overall
        ));
    }
    // airlock's own `bash -c STEP` around each plan step is not one of the skill's programs.
    let wrapper = |e: &&airlock_types::ExecEvent| {
        e.argv.len() == 3
            && e.argv[0] == "/bin/bash"
            && e.argv[1] == "-c"
            && run.steps.iter().any(|s| s.command == e.argv[2])
    };
    let shells = run.timeline.iter().filter(wrapper).count();
    let own = run.timeline.len() - shells;
    let ran = match (own, shells) {
        (0, 0) => "no program".to_owned(),
        (0, 1) => "no program but the shell of its step".to_owned(),
        (0, _) => "no program but the shells of its steps".to_owned(),
        (n, _) => airlock_types::display::count(n, "program"),
    };
    out.push(format!(
        "It ran {} and ended {} ({}).",
        ran,
        airlock_types::wire_name(&run.status),
        run.exit_code
            .map_or("with no exit code of its own".into(), |c| format!("exit {c}"))
    ));
    out
}

/// The end of a run's output where a failure's cause is read: its last 4 KiB, from a character's start.
/// Words of a program's output about the network: a refused or failed connection, a name not resolved, a proxy.
static NETWORK_WORDS: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)connect|network|resolv|ENOTFOUND|EAI_AGAIN|proxy|socket|unreachable|timed? ?out|\bhost\b|fetch failed|urlopen|\bHTTPS?\b|\bSSL\b|\bTLS\b|\bDNS\b|registry",
    )
    .ok()
});

/// Words of an error that is not the network's: a program's own complaint.
static OTHER_ERROR: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?i)error|exception|traceback|not found|no such|invalid|usage:|missing").ok()
});

fn last_4k(output: &str) -> &str {
    let start = output.len().saturating_sub(4096);
    (start..=output.len())
        .find(|&i| output.is_char_boundary(i))
        .map_or(output, |i| &output[i..])
}

/// A program or library a skill's own script says it lacks and how to install (`Error: cloc is not installed` then
/// `Install with: apt-get install cloc`; `google-genai library not installed` then `pip install google-genai`), that
/// this machine does not have either: (the program, the line that said so).
/// Whether `word` stands in `line` as a word of its own (not part of `qpdf-tools` or `libqpdf`).
fn word_in(line: &str, word: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
    !word.is_empty()
        && line.match_indices(word).any(|(at, _)| {
            !part(line[..at].chars().next_back()) && !part(line[at + word.len()..].chars().next())
        })
}

fn reported_missing(run: &SkillRun) -> Option<(String, String)> {
    static MISSING: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?m)^.*?\b([a-z][a-z0-9._+-]{1,30})(?: \(([a-z][a-z0-9._+-]{1,30})\))?(?: (?:library|module|package|tool|cli|command|binary))? (?:is |was )?not (?:installed|found)\b.*$",
        )
            .ok()
    });
    let text = format!("{}\n{}", last_4k(&run.stdout), last_4k(&run.stderr));
    // A program the environment found missing (the skill's prose asks for it), named on a line of the output that
    // says it is missing (`[MISSING] qpdf — install with: brew install qpdf`).
    let declared = run.environment.as_ref().and_then(|env| {
        env.missing_programs.iter().find_map(|program| {
            let said = text.lines().find(|l| {
                let lower = l.to_lowercase();
                word_in(l, program)
                    && ["missing", "not found", "not installed", "install "]
                        .iter()
                        .any(|w| lower.contains(w))
            })?;
            Some((
                program.clone(),
                airlock_types::display::line(said.trim())
                    .chars()
                    .take(120)
                    .collect(),
            ))
        })
    });
    if declared.is_some() {
        return declared;
    }
    MISSING.as_ref()?.captures_iter(&text).find_map(|c| {
        // A program named with its command (`ripgrep (rg) not found`): the command is what is missing; the
        // install advice may name either.
        let program = c.get(2).map_or(&c[1], |m| m.as_str()).to_owned();
        let advised = [&c[1], program.as_str()].iter().any(|name| {
            regex::Regex::new(&format!(r"(?i)\binstall\b[^\n]*\b{}\b", regex::escape(name)))
                .is_ok_and(|re| re.is_match(&text))
        });
        (advised && !crate::environment::on_this_machine(&program)).then(|| {
            (
                program,
                airlock_types::display::line(c[0].trim())
                    .chars()
                    .take(120)
                    .collect(),
            )
        })
    })
}

/// Why a sandbox run did not succeed, in a sentence, when it is recognisable: the failing step, then the likely
/// cause read from the end of its errors (a command or module not found, permission denied, no network) or from the
/// limit it hit.
/// What the step at `at` (a position in `run.steps`) printed on its own: (stdout, stderr), cut between the previous
/// step's ends and its own, on character boundaries; `None` when the record does not say where its output ends.
pub fn step_streams(run: &SkillRun, at: usize) -> Option<(String, String)> {
    let step = run.steps.get(at)?;
    step.stdout_end?;
    let before = at.checked_sub(1).map(|p| &run.steps[p]);
    let slice = |text: &str, from: u64, to: u64| -> String {
        let bytes = text.as_bytes();
        let to = usize::try_from(to).unwrap_or(usize::MAX).min(bytes.len());
        let from = usize::try_from(from).unwrap_or(usize::MAX).min(to);
        String::from_utf8_lossy(&bytes[from..to]).into_owned()
    };
    Some((
        slice(
            &run.stdout,
            before.and_then(|b| b.stdout_end).unwrap_or(0),
            step.stdout_end.unwrap_or(0),
        ),
        slice(
            &run.stderr,
            before.and_then(|b| b.stderr_end).unwrap_or(0),
            step.stderr_end.unwrap_or(0),
        ),
    ))
}

pub fn failure_cause(run: &SkillRun) -> Option<String> {
    if run.mode != RunMode::Sandbox || matches!(run.status, RunStatus::Succeeded | RunStatus::Refused) {
        return None;
    }
    // The step that failed; with a limit hit and none failed, the one the limit stopped (the first that did not
    // finish), not the run's first command.
    let step = run
        .steps
        .iter()
        .find(|s| s.exit_code != Some(0) && (s.exit_code.is_some() || s.signal.is_some()))
        .or_else(|| {
            run.limit_hit.and_then(|_| {
                run.steps
                    .iter()
                    .find(|s| s.exit_code.is_none() && s.signal.is_none())
            })
        });
    let code = step.and_then(|s| s.exit_code).or(run.exit_code);
    let tail = last_4k(&run.stderr);
    // What the failing step itself printed (both streams), when the record says where its output ends.
    let step_output = step
        .and_then(|s| run.steps.iter().position(|p| p.index == s.index))
        .and_then(|i| step_streams(run, i))
        .map_or_else(
            || format!("{}{}", run.stderr, run.stdout),
            |(out, err)| err + &out,
        );
    let step_output = step_output.as_str();
    let grab = |re: &str| -> Option<String> {
        regex::Regex::new(re)
            .ok()?
            .captures_iter(tail)
            .last()
            .and_then(|c| c.get(1))
            .map(|m| m.as_str().to_owned())
    };
    // The skill's own program, when its package could not be installed: the install is the cause.
    let own_not_installed = |program: &str| {
        run.environment
            .as_ref()
            .is_some_and(|e| e.failed.iter().any(|f| f == crate::environment::OWN_PACKAGE))
            && run.plan.as_ref().is_some_and(|p| {
                p.steps.iter().any(|s| {
                    s.note
                        .as_deref()
                        .is_some_and(|n| n == airlock_scan::plan::OWN_PROGRAM_NOTE)
                        && s.command.split_whitespace().next() == Some(program)
                })
            })
    };
    // The install phase that did not finish: a module missing after it is missing because of it.
    let install_cut = run
        .environment
        .as_ref()
        // Cut by a limit (its time, memory or disk: a package manager stopped by a signal), not a package that
        // does not exist.
        .filter(|e| {
            e.status.contains("timed_out") || e.errors_tail.iter().any(|l| l.contains("was stopped by"))
        })
        .and_then(|e| e.status.strip_prefix("incomplete: "))
        .map(|why| {
            format!(
                ": the install of the skill's dependencies did not finish ({why}; see Environment; raise the install \
                 phase's limits with --install-timeout, --install-memory, --install-disk)"
            )
        });
    let not_found = |program: &str| {
        if own_not_installed(program) {
            format!(
                "`{program}` is the skill's own program, and its package could not be installed (the environment \
                 says why)"
            )
        } else {
            format!("command not found: `{program}` is not on this machine or not in the sandbox")
        }
    };
    let cause = if let Some(limit) = run.limit_hit {
        match limit {
            // A program that waited on names nothing answers (the network is off) waits until the limit.
            airlock_types::LimitKind::Timeout if run.network.iter().any(|n| n.decision == airlock_types::NetDecision::Denied) => {
                "it reached the time limit while it waited on the network, which is off for this run (allow hosts \
                 with --allow-net, or raise the limit with --timeout)"
                    .to_owned()
            }
            airlock_types::LimitKind::Timeout => {
                "it reached the time limit (raise it with --timeout)".to_owned()
            }
            airlock_types::LimitKind::Memory => {
                "it ran out of memory (raise the limit with --memory)".to_owned()
            }
            other => format!("it hit the {} limit", airlock_types::wire_name(&other)),
        }
    } else if let Some(module) = grab(r"ModuleNotFoundError: No module named '([^']+)'") {
        // A package of the skill's repository that holds the skill's folder (`science_skills.common` for a
        // skill at `science_skills/clinvar`): the skill is imported without it.
        let top = module.split('.').next().unwrap_or_default();
        let folders: Vec<&str> = run.source.subpath.split('/').filter(|c| !c.is_empty()).collect();
        let holder = folders.len() > 1 && folders[..folders.len() - 1].contains(&top);
        match &install_cut {
            _ if holder => format!(
                "the skill's code imports `{module}`, a package of its repository that holds the skill's folder \
                 (`{top}/`): only the skill's own folder is imported, so the package is not part of it"
            ),
            Some(why) => format!("the Python module `{module}` is not installed{why}"),
            None => format!(
                "the Python module `{module}` is not installed in the sandbox (your own packages live in your home \
                 folder, which the sandbox never sees)"
            ),
        }
    } else if let Some(program) = grab(r"spawn(?:Sync)? ([^\s/]+) ENOENT").or_else(|| {
        tail.contains("_execute_child")
            .then(|| grab(r"FileNotFoundError: \[Errno 2\] No such file or directory: '([^'/]+)'"))
            .flatten()
    }) {
        format!("command not found: `{program}` (a program the skill starts) is not on this machine or not in the sandbox")
    } else if let Some(file) = grab(r"FileNotFoundError: \[Errno 2\] No such file or directory: '([^']+)'") {
        if beside_the_skill(&file) {
            format!(
                "the skill's code looks for `{file}` beside its own folder (the skill is at `/skill`): its repository \
                 keeps that outside the skill (another skill's folder, a shared one), which is not part of the skill"
            )
        } else {
            format!(
                "a file it expected is missing: `{file}` (give it with the target or the script's arguments)"
            )
        }
    } else if let Some(file) = grab(r"Cannot find module '(/[^']+)'")
        .or_else(|| grab(r"cannot stat '([^']+)': No such file or directory"))
        .or_else(|| grab(r"can't open file '([^']+)': \[Errno 2\] No such file or directory"))
    {
        format!("a file it expected is missing: `{file}` (give it with the target or the script's arguments)")
    } else if let Some(module) = grab(r"Cannot find (?:module|package) '(\.\.?/[^']+)'") {
        format!(
            "the skill's code loads `{module}`, a file by a path relative to it that the skill does not have (its \
             repository may keep it beside the skill's folder, which is not part of the skill)"
        )
    } else if let Some(module) = grab(r"Cannot find (?:module|package) '([^']+)'") {
        match &install_cut {
            Some(why) => format!("the Node module `{module}` is not installed{why}"),
            None => format!("the Node module `{module}` is not installed in the sandbox"),
        }
    } else if let Some(what) =
        grab(r"(?m)^(uvx?(?: [a-z-]+)?): (?:not available|`[^`]+`.*? is not installed) in this sandbox")
    {
        format!(
            "`{what}` could not do its part in the sandbox: airlock installs what a skill declares before the run, \
             and nothing is downloaded while it runs (its message is below)"
        )
    } else if let Some(cmd) = grab(r"(?m)(?:^|: )([^\s:]+): (?:command )?not found\s*$") {
        not_found(&cmd)
    } else if let Some(path) = (code == Some(127))
        .then(|| grab(r"(?m)(?:^|: )([^\s:]+): No such file or directory\s*$"))
        .flatten()
    {
        format!("command not found: `{path}` does not exist where the command ran")
    } else if let Some((program, said)) = (code == Some(127)
        && step
            .and_then(|s| s.command.split_whitespace().next())
            .is_some_and(|p| crate::invoke::INTERPRETERS.contains(&p.rsplit('/').next().unwrap_or(p))))
    .then(|| reported_missing(run))
    .flatten()
    {
        // An interpreter is there: the 127 is the script's own, for a program it says it lacks.
        format!(
            "the skill needs `{program}`, which is not on this machine or not in the sandbox (its script says: \"{said}\")"
        )
    } else if code == Some(127) {
        // The step's first program: a shell builtin (`cd`, `echo`) is never the one missing.
        const BUILTINS: &[&str] = &[
            "cd", "echo", "export", "set", "source", ".", "printf", "test", "[", "if", "for",
        ];
        let program = step
            .map_or(run.command.first().map(String::as_str), |s| {
                s.command.split_whitespace().next()
            })
            .filter(|p| !BUILTINS.contains(p));
        match program {
            Some(p) => not_found(p),
            None => {
                "command not found: a program the step starts is not on this machine or not in the sandbox"
                    .to_owned()
            }
        }
    } else if let Some((program, said)) = reported_missing(run) {
        format!(
            "the skill needs `{program}`, which is not on this machine or not in the sandbox (its script says: \"{said}\")"
        )
    } else if let Some(path) = grab(r"[`‘'\x22]?(/skill/[^\s`’'\x22:]*)[`’'\x22]?:? ?Read-only file system")
        .or_else(|| grab(r"Read-only file system: '(/skill/[^']*)'"))
    {
        format!(
            "it writes into its own folder (`{path}`), which a run keeps read-only: what runs is the code that was \
             scanned (the skill's instructions or a script's options may name another place to write)"
        )
    } else if code == Some(126) || tail.contains("Permission denied") {
        "permission denied".to_owned()
    } else if run
        .network
        .iter()
        .any(|n| n.decision == airlock_types::NetDecision::Denied)
        // A refused attempt is this step's cause when its own output speaks of the network or of no other error:
        // another step (a background one, a later one) may have made it.
        && (NETWORK_WORDS.as_ref().is_some_and(|w| w.is_match(step_output))
            || !OTHER_ERROR.as_ref().is_some_and(|w| w.is_match(step_output)))
        || [
            "Temporary failure in name resolution",
            "Name or service not known",
            "Could not resolve host",
            "getaddrinfo ENOTFOUND",
            "getaddrinfo EAI_AGAIN",
            "Network is unreachable",
        ]
        .iter()
        .any(|p| tail.contains(p))
    {
        "it needed the network, which is off for this run (allow hosts with --allow-net)".to_owned()
    } else {
        String::new()
    };
    let what = match step {
        Some(s) => format!(
            "step {}:{} ({}) {}",
            s.file,
            s.line,
            s.command,
            match (s.exit_code, s.signal) {
                (Some(c), _) => format!("exited {c}"),
                (None, Some(sig)) => format!("was killed by signal {sig}"),
                _ => "did not finish".into(),
            }
        ),
        None => format!(
            "the command{} {}",
            run.command.first().map_or(String::new(), |c| format!(" `{c}`")),
            run.exit_code
                .map_or("did not finish".into(), |c| format!("exited {c}"))
        ),
    };
    Some(if cause.is_empty() {
        what
    } else {
        format!("{what}: {cause}")
    })
}

/// Whether a missing absolute path lies beside the skill's folder rather than in it or on the system
/// (`/github/scripts/tool` from `/skill/../github/…`, where a skill reaches into a sibling of its repository): its
/// first part is none of the sandbox's own folders.
fn beside_the_skill(file: &str) -> bool {
    const OWN: &[&str] = &[
        "skill",
        "workspace",
        "env",
        "home",
        "tmp",
        "usr",
        "bin",
        "sbin",
        "lib",
        "lib64",
        "etc",
        "proc",
        "dev",
        "sys",
        "opt",
        "var",
        "run",
        "srv",
        "mnt",
        "media",
        "root",
        "boot",
        "out",
        "nix",
        "snap",
    ];
    let Some(rest) = file.strip_prefix('/') else {
        return false;
    };
    let mut parts = rest.split('/');
    let first = parts.next().unwrap_or_default();
    !first.is_empty() && !first.starts_with('.') && parts.next().is_some() && !OWN.contains(&first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name lookup the sandbox's missing network left unanswered.
    fn denied_lookup() -> Vec<airlock_types::NetAttempt> {
        serde_json::from_value(serde_json::json!([{
            "t_ms": 1, "pid": 9, "protocol": "dns", "destination": "127.0.0.1:53", "host": null, "port": 53,
            "decision": "denied", "rule": null, "reason": "a name lookup", "bytes_up": 0, "bytes_down": 0,
        }]))
        .unwrap()
    }

    /// A failed sandbox run with this stderr and nothing else.
    fn failed_run(stderr: &str) -> SkillRun {
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": "r1", "mode": "sandbox", "target": null,
            "source": {"id": "s1", "kind": "git", "input": "https://example.test/s", "repo_url": "https://example.test/s",
                "commit": "0123456789abcdef0123456789abcdef01234567", "requested_ref": null, "pinned": true,
                "pinned_url": null, "subpath": "", "digest": "sha256:1",
                "detected_files": [], "created_at": "2026-11-23T10:00:00Z"},
            "status": "failed", "status_reason": null, "exit_code": 1, "started_at": "2026-11-23T10:00:00Z",
            "finished_at": "2026-11-23T10:01:00Z", "risk_level": "low", "classification": "prompt-only", "findings": 0,
            "command": [], "limits": null, "limit_hit": null, "network_allowed": false, "timeline": [], "files_read": [],
            "files_written": [], "changes": [], "patch_skipped": [], "review": [], "network": [], "installs": [],
            "plan": null, "steps": [], "stdout": "", "stdout_truncated": false, "stderr_truncated": false,
            "stderr": stderr,
            "duration_ms": 5, "artifacts": [], "verdict": [],
        }))
        .unwrap()
    }

    /// A script run by its interpreter that exits 127 for a program it says it lacks: that program is the cause, not
    /// the interpreter.
    #[test]
    fn a_script_that_lacks_a_program_names_it_not_its_interpreter() {
        let mut run = failed_run(
            "find-paths: zzgrep-tool (zzg) not found. Install via 'brew install zzgrep-tool' or equivalent.\n",
        );
        run.exit_code = Some(127);
        run.steps = serde_json::from_value(serde_json::json!([{
            "index": 0, "command": "bash /skill/scripts/find-paths.sh -d .", "file": "scripts/find-paths.sh",
            "line": 0, "exit_code": 127, "signal": null, "stdout_end": 0, "stderr_end": 90
        }]))
        .unwrap();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(cause.contains("the skill needs `zzg`"), "{cause}");
        assert!(!cause.contains("`bash`"), "{cause}");
    }

    /// A module missing after an install that did not finish is missing because of the install, and says so.
    /// A skill that writes into its own folder is told the folder is read-only, and why; a step that failed
    /// quietly after a name lookup nothing answered needed the network.
    #[test]
    fn a_write_into_the_skill_and_a_quiet_lookup_are_named() {
        let run = failed_run("mkdir: cannot create directory ‘/skill/.deps’: Read-only file system\n");
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("it writes into its own folder (`/skill/.deps`), which a run keeps read-only"),
            "{cause}"
        );
        let run = failed_run("OSError: [Errno 30] Read-only file system: '/skill/cache/x.json'\n");
        assert!(failure_cause(&run)
            .unwrap_or_default()
            .contains("`/skill/cache/x.json`"));
        // A write elsewhere is not the skill's folder.
        let run = failed_run("touch: cannot touch '/usr/x': Read-only file system\n");
        assert!(!failure_cause(&run).unwrap_or_default().contains("its own folder"));
        let run = failed_run(
            "Error: Cannot find module '../../../scripts/lib/doc-frontmatter.cjs'\nRequire stack:\n",
        );
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("a file by a path relative to it that the skill does not have"),
            "{cause}"
        );
        // A file of a sibling of the skill's folder (`/skill/../github/…`) is outside the skill, and said so; a
        // missing file in the project is one to give.
        let run = failed_run(
            "FileNotFoundError: [Errno 2] No such file or directory: '/github/scripts/gh-with-env-token'\n",
        );
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(cause.contains("beside its own folder"), "{cause}");
        let run =
            failed_run("FileNotFoundError: [Errno 2] No such file or directory: '/workspace/data/in.csv'\n");
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(cause.contains("a file it expected is missing"), "{cause}");
        // A file the step copies, a project file a script loads, a package of the repository around the skill.
        let run = failed_run("cp: cannot stat '.env.local.example.json': No such file or directory\n");
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("a file it expected is missing: `.env.local.example.json`"),
            "{cause}"
        );
        let run = failed_run("Error: Cannot find module '/workspace/.orchestrator/check.cjs'\n");
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("a file it expected is missing: `/workspace/.orchestrator/check.cjs`"),
            "{cause}"
        );
        let mut run = failed_run("ModuleNotFoundError: No module named 'science_skills'\n");
        run.source.subpath = "science_skills/clinvar_database".to_owned();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("a package of its repository that holds the skill's folder (`science_skills/`)"),
            "{cause}"
        );
        run.source.subpath = "clinvar_database".to_owned();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(cause.contains("is not installed in the sandbox"), "{cause}");
        // A refused lookup made elsewhere is not the cause of a step that failed with an error of its own.
        let mut run = failed_run("npm error Missing script: \"remove\"\n");
        run.network = denied_lookup();
        assert!(!failure_cause(&run).unwrap_or_default().contains("network"));
        let mut run = failed_run("Deploying...\n");
        assert!(!failure_cause(&run).unwrap_or_default().contains("network"));
        run.network = denied_lookup();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("it needed the network, which is off for this run"),
            "{cause}"
        );
    }

    /// A run the time limit stopped names the step it stopped (not the run's first command), and says it waited on
    /// the network when nothing answered its name lookups.
    #[test]
    fn a_timed_out_run_names_the_step_the_limit_stopped() {
        let mut run = failed_run("");
        run.status = RunStatus::TimedOut;
        run.exit_code = None;
        run.limit_hit = Some(airlock_types::LimitKind::Timeout);
        run.command = vec!["npm --version".into(), "npm install".into()];
        let step =
            |index: usize, command: &str, line: u32, exit_code: Option<i32>| airlock_types::StepResult {
                index,
                command: command.into(),
                file: "SKILL.md".into(),
                line,
                exit_code,
                signal: None,
                stdout_end: None,
                stderr_end: None,
            };
        run.steps = vec![
            step(0, "npm --version", 8, Some(0)),
            step(1, "npm install", 9, None),
        ];
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.starts_with("step SKILL.md:9 (npm install) did not finish"),
            "{cause}"
        );
        assert!(
            cause.contains("it reached the time limit (raise it with --timeout)"),
            "{cause}"
        );
        run.network = denied_lookup();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("while it waited on the network, which is off for this run"),
            "{cause}"
        );
    }

    /// A program the skill's own script says it lacks, with the install it advises, is named; a file "not found"
    /// or a program this machine has is not.
    #[test]
    fn a_program_the_script_says_it_lacks_is_named() {
        let mut run = failed_run("");
        run.stdout = "Error: cloc-airlock-test is not installed\nInstall with: brew install cloc-airlock-test (macOS) or apt-get install cloc-airlock-test (Linux)\n".to_owned();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(
            cause.contains("the skill needs `cloc-airlock-test`, which is not on this machine")
                && cause.contains("Error: cloc-airlock-test is not installed"),
            "{cause}"
        );
        run.stdout = "Error: genai-airlock-test library not installed.\nInstall with: pip install genai-airlock-test\n".to_owned();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(cause.contains("the skill needs `genai-airlock-test`"), "{cause}");
        for (stdout, why) in [
            (
                "Error: config not found\nRun install first.\n",
                "no install advised for it",
            ),
            (
                "Error: sh not found\nInstall with: apt-get install sh\n",
                "this machine has it",
            ),
        ] {
            run.stdout = stdout.to_owned();
            assert!(
                !failure_cause(&run)
                    .unwrap_or_default()
                    .contains("the skill needs"),
                "{why}"
            );
        }
        // A program the environment found missing, named by a check of the skill's own as missing.
        run.environment = Some(airlock_types::Environment {
            missing_programs: vec!["qpdf".to_owned()],
            ..Default::default()
        });
        run.stdout = "[MISSING] qpdf — install with: brew install qpdf\n[OK] pikepdf 10.1\nSome dependencies are missing.\n".to_owned();
        let cause = failure_cause(&run).unwrap_or_default();
        assert!(cause.contains("the skill needs `qpdf`"), "{cause}");
        run.stdout = "[OK] qpdf-tools found\nError: config missing\n".to_owned();
        assert!(!failure_cause(&run)
            .unwrap_or_default()
            .contains("the skill needs `qpdf`"));
    }

    #[test]
    fn a_module_missing_after_a_cut_install_names_the_install() {
        let mut run =
            failed_run("Error: Cannot find module 'jsdom'\nRequire stack:\n- /skill/lib/dom-setup.js\n");
        let plain = failure_cause(&run).unwrap_or_default();
        assert!(
            plain.contains("the Node module `jsdom` is not installed in the sandbox"),
            "{plain}"
        );
        run.environment = Some(airlock_types::Environment {
            status: "incomplete: timed_out".into(),
            ..Default::default()
        });
        let cut = failure_cause(&run).unwrap_or_default();
        assert!(
            cut.contains(
                "`jsdom` is not installed: the install of the skill's dependencies did not finish (timed_out"
            ),
            "{cut}"
        );
    }

    #[test]
    fn the_skills_files_and_its_environment_are_not_secrets() {
        let access = |path: &str, resolved: Option<&str>| FileAccess {
            path: path.into(),
            resolved: resolved.map(str::to_owned),
            pid: 1,
            t_ms: 0,
        };
        assert!(!secret_access(&access(
            "/env/python/anthropic/lib/credentials",
            None
        )));
        assert!(!secret_access(&access("/skill/.env", None)));
        assert!(secret_access(&access("/workspace/.env", None)));
        assert!(secret_access(&access("/home/sandbox/.aws/credentials", None)));
        // A link in the skill that reaches a secret is a secret read.
        assert!(secret_access(&access(
            "/skill/notes",
            Some("/home/sandbox/.ssh/id_rsa")
        )));
    }

    #[test]
    fn npm_reading_its_own_settings_is_not_the_skills_doing() {
        let access = |path: &str, pid: i32| FileAccess {
            path: path.into(),
            resolved: None,
            pid,
            t_ms: 10,
        };
        let exec = |pid: i32, argv: &[&str]| airlock_types::ExecEvent {
            t_ms: 5,
            pid,
            ppid: 1,
            path: argv[0].into(),
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            argv_bytes: None,
            cwd: "/workspace".into(),
            exit_code: None,
        };
        let timeline = vec![
            exec(7, &["node", "/usr/bin/npx", "-y", "@mermaid-js/mermaid-cli"]),
            exec(8, &["node", "/skill/scripts/npx-cli.js"]),
        ];
        let npmrc = |pid| access("/home/sandbox/.npmrc", pid);
        assert!(package_manager_config(&npmrc(7), &timeline, &[]));
        // A script named like npm, or npm reading another secret, or npm writing the file: the skill's doing.
        assert!(!package_manager_config(&npmrc(8), &timeline, &[]));
        assert!(!package_manager_config(
            &access("/home/sandbox/.aws/credentials", 7),
            &timeline,
            &[]
        ));
        assert!(!package_manager_config(&npmrc(7), &timeline, &[npmrc(7)]));
    }
}
