//! The policy a run runs under: the skill's declaration (when the user accepts it), the operator's cap and the
//! user's own flags, merged so that deny wins and the stricter limit applies; and, after the run, what it did beyond
//! the declaration.

use std::time::Duration;

use airlock_egress::{EgressConfig, Rule};
use airlock_scan::policy::{allowed, covers};
use airlock_types::policy::{
    parse_duration, parse_size, Beyond, EffectivePolicy, PolicyDoc, PolicyPart, SourcedPolicy,
};
use airlock_types::{NetDecision, SkillRun};

use crate::environment::EnvOptions;
use crate::RunError;

/// What the caller says about policies for a run.
#[derive(Debug, Clone, Default)]
pub struct PolicyOptions {
    /// The operator's cap (`--policy FILE`, the server's configuration).
    pub operator: Option<SourcedPolicy>,
    /// Apply the skill's declared policy (`--accept-policy`, a trust decision, `scan --runtime`).
    pub accept: bool,
    /// The limits the user gave explicitly (`timeout`, `memory`, `disk`, `pids`, `cpus`); the others are defaults
    /// an accepted declaration may replace.
    pub given: Vec<&'static str>,
}

/// Merges the declaration, the operator's cap and the flags into the run's limits, network and install settings,
/// and says where each part came from.
pub fn apply(
    declared: Option<&SourcedPolicy>,
    options: &PolicyOptions,
    limits: &mut airlock_sandbox::Limits,
    egress: &mut Option<EgressConfig>,
    env: &mut EnvOptions,
) -> Result<EffectivePolicy, RunError> {
    let mut out = EffectivePolicy {
        declared: declared.cloned(),
        accepted: options.accept && declared.is_some(),
        operator: options.operator.clone(),
        ..EffectivePolicy::default()
    };
    let skill = declared.filter(|_| options.accept);
    let from_skill = |d: &SourcedPolicy| format!("{} ({})", d.source.role, d.source.origin);
    let from_operator = |o: &SourcedPolicy| format!("operator ({})", o.source.file);
    let op = options.operator.as_ref();

    // Resources: the flag or the default, replaced by an accepted declaration where the user gave no flag, then
    // capped by the operator.
    let size = |v: &Option<String>| v.as_deref().and_then(|s| parse_size(s).ok());
    let time = |v: &Option<String>| v.as_deref().and_then(|s| parse_duration(s).ok());
    let mut parts = Vec::new();
    macro_rules! limit {
        ($key:literal, $field:expr, $get:expr, $show:expr) => {{
            let mut from = if options.given.contains(&$key) {
                format!("flag --{}", $key)
            } else {
                "default".to_owned()
            };
            if let Some(d) = skill {
                if let Some(v) = $get(&d.policy) {
                    if !options.given.contains(&$key) {
                        $field = v;
                        from = from_skill(d);
                    }
                }
            }
            if let Some(o) = op {
                if let Some(max) = $get(&o.policy) {
                    if $field > max {
                        if from.starts_with("skill") {
                            out.refused.push(format!(
                                "resources.{}: the skill asks for {}, the operator allows at most {}",
                                $key,
                                $show(&$field),
                                $show(&max)
                            ));
                        }
                        $field = max;
                        from = from_operator(o);
                    }
                }
            }
            parts.push(PolicyPart {
                key: format!("resources.{}", $key),
                value: $show(&$field),
                from,
            });
        }};
    }
    let secs = |d: &Duration| format!("{}s", d.as_secs());
    let mib = |b: &u64| format!("{}M", b >> 20);
    let num = |n: &u64| n.to_string();
    let cpus = |n: &u32| n.to_string();
    limit!(
        "timeout",
        limits.timeout,
        |p: &PolicyDoc| time(&p.resources.timeout),
        secs
    );
    limit!(
        "memory",
        limits.memory_bytes,
        |p: &PolicyDoc| size(&p.resources.memory),
        mib
    );
    limit!(
        "disk",
        limits.disk_bytes,
        |p: &PolicyDoc| size(&p.resources.disk),
        mib
    );
    limit!("pids", limits.pids, |p: &PolicyDoc| p.resources.pids, num);
    limit!("cpus", limits.cpus, |p: &PolicyDoc| p.resources.cpus, cpus);

    // Network: the user's rules, plus an accepted declaration's; the operator's allow list caps every rule (when it
    // has one) and its deny list always applies.
    let rule = |text: &str| Rule::parse(text).map_err(|e| RunError::Usage(e.to_string()));
    if skill.is_some_and(|d| !d.policy.network.allow.is_empty() || !d.policy.network.presets.is_empty())
        || op.is_some_and(|o| !o.policy.network.deny.is_empty())
    {
        egress.get_or_insert_with(EgressConfig::default);
    }
    if let Some(cfg) = egress.as_mut() {
        let user: Vec<String> = cfg.policy.allow.iter().map(|r| r.text.clone()).collect();
        for text in user {
            parts.push(PolicyPart {
                key: "network.allow".into(),
                value: text,
                from: "flags".into(),
            });
        }
        if let Some(d) = skill {
            for r in allowed(&d.policy.network).allow {
                parts.push(PolicyPart {
                    key: "network.allow".into(),
                    value: r.text.clone(),
                    from: from_skill(d),
                });
                cfg.policy.allow.push(r);
            }
            for text in &d.policy.network.deny {
                cfg.policy.deny.push(rule(text)?);
                parts.push(PolicyPart {
                    key: "network.deny".into(),
                    value: text.clone(),
                    from: from_skill(d),
                });
            }
        }
        if let Some(o) = op {
            let cap = allowed(&o.policy.network).allow;
            if !cap.is_empty() {
                let before = std::mem::take(&mut cfg.policy.allow);
                for r in before {
                    if cap.iter().any(|c| r.within(c)) {
                        cfg.policy.allow.push(r);
                    } else {
                        out.refused.push(format!(
                            "network.allow {}: outside what the operator allows ({})",
                            r.text,
                            o.policy.network.allow.join(", ")
                        ));
                        parts.retain(|p| !(p.key == "network.allow" && p.value == r.text));
                    }
                }
            }
            for text in &o.policy.network.deny {
                cfg.policy.deny.push(rule(text)?);
                parts.push(PolicyPart {
                    key: "network.deny".into(),
                    value: text.clone(),
                    from: from_operator(o),
                });
            }
        }
    }

    // Installs: off when the operator or an accepted declaration says so.
    let mut install_from = if env.install {
        "default"
    } else {
        "flag --no-install"
    }
    .to_owned();
    if let Some(d) = skill.filter(|d| d.policy.install.packages == Some(false)) {
        env.install = false;
        install_from = from_skill(d);
    }
    if let Some(o) = op.filter(|o| o.policy.install.packages == Some(false)) {
        if env.install {
            if skill.is_some_and(|d| d.policy.install.packages == Some(true)) {
                out.refused
                    .push("install.packages: the skill installs packages, the operator allows none".into());
            }
            env.install = false;
            install_from = from_operator(o);
        }
    }
    // Registries: those both the accepted declaration and the operator name (either alone when only one does).
    let named = |p: &SourcedPolicy| Some(p.policy.install.registries.clone()).filter(|r| !r.is_empty());
    let registries = match (skill.and_then(named), op.and_then(named)) {
        (Some(s), Some(o)) => Some(s.into_iter().filter(|r| o.contains(r)).collect::<Vec<_>>()),
        (s, o) => s.or(o),
    };
    if let Some(r) = &registries {
        parts.push(PolicyPart {
            key: "install.registries".into(),
            value: if r.is_empty() { "none".into() } else { r.join(", ") },
            from: match (op.filter(|o| named(o).is_some()), skill) {
                (Some(o), _) => from_operator(o),
                (None, Some(d)) => from_skill(d),
                (None, None) => String::new(),
            },
        });
    }
    env.registries = registries;
    parts.push(PolicyPart {
        key: "install.packages".into(),
        value: env.install.to_string(),
        from: install_from,
    });

    // Writable paths: the declaration's, within the operator's when it names any.
    if let Some(d) = skill {
        for w in &d.policy.filesystem.writable {
            let path = airlock_scan::policy::writable_path(w).map_err(RunError::Usage)?;
            let allowed = op.is_none_or(|o| {
                o.policy.filesystem.writable.is_empty()
                    || o.policy.filesystem.writable.iter().any(|cap| {
                        airlock_scan::policy::writable_path(cap)
                            .is_ok_and(|c| path == c || path.starts_with(&format!("{c}/")))
                    })
            });
            if allowed {
                parts.push(PolicyPart {
                    key: "filesystem.writable".into(),
                    value: path,
                    from: from_skill(d),
                });
            } else {
                out.refused.push(format!(
                    "filesystem.writable {w}: outside what the operator allows"
                ));
            }
        }
    }
    out.parts = parts;
    Ok(out)
}

/// What the run did beyond its declared policy: hosts it tried that the declaration does not allow, writes outside
/// the workspace, `/tmp`, the home folder's caches and the declared paths, a limit it hit, installs when the
/// declaration says it installs nothing. Empty when nothing was declared.
pub fn beyond(declared: Option<&SourcedPolicy>, run: &SkillRun) -> Vec<Beyond> {
    beyond_of(
        declared,
        &Seen {
            network: &run.network,
            files_written: &run.files_written,
            limit_hit: run.limit_hit,
            reason: run.status_reason.as_deref(),
            installs: &run.installs,
        },
    )
}

/// [`beyond`] for a sandbox record of `airlock exec`.
pub fn beyond_record(declared: Option<&SourcedPolicy>, record: &airlock_types::RunRecord) -> Vec<Beyond> {
    let installs = crate::verdict::installs(&record.timeline, &record.files_written);
    beyond_of(
        declared,
        &Seen {
            network: &record.network,
            files_written: &record.files_written,
            limit_hit: record.limit_hit,
            reason: None,
            installs: &installs,
        },
    )
}

/// What a run did, as far as its policy is concerned.
struct Seen<'a> {
    network: &'a [airlock_types::NetAttempt],
    files_written: &'a [airlock_types::FileAccess],
    limit_hit: Option<airlock_types::LimitKind>,
    reason: Option<&'a str>,
    installs: &'a [airlock_types::Install],
}

fn beyond_of(declared: Option<&SourcedPolicy>, run: &Seen<'_>) -> Vec<Beyond> {
    let Some(d) = declared else {
        return Vec::new();
    };
    let policy = &d.policy;
    let mut out = Vec::new();
    let rules = allowed(&policy.network);
    let mut seen = std::collections::BTreeSet::new();
    for n in run
        .network
        .iter()
        .filter(|n| n.decision != NetDecision::Local && n.protocol != "unix")
    {
        let host = n.host.clone().unwrap_or_else(|| {
            airlock_egress::split_host_port(&n.destination)
                .map(|(h, _)| h.to_owned())
                .unwrap_or_else(|_| n.destination.clone())
        });
        if !covers(&rules, &host, n.port) && seen.insert((host.clone(), n.port)) {
            out.push(Beyond {
                kind: "network".into(),
                what: n.port.map_or(host.clone(), |p| format!("{host}:{p}")),
                evidence: format!(
                    "{} at {} ms: {} ({})",
                    n.protocol,
                    n.t_ms,
                    airlock_types::wire_name(&n.decision),
                    n.reason
                ),
            });
        }
    }
    let mut writable: Vec<String> = vec![
        crate::WORKSPACE.to_owned(),
        "/tmp".into(),
        "/dev/shm".into(),
        "/dev/null".into(),
        "/dev/tty".into(),
        "/dev/stdout".into(),
        "/dev/stderr".into(),
        "/dev/fd".into(),
        "/proc/self/fd".into(),
        "/home/sandbox/.cache".into(),
    ];
    writable.extend(
        policy
            .filesystem
            .writable
            .iter()
            .filter_map(|w| airlock_scan::policy::writable_path(w).ok()),
    );
    let mut paths = std::collections::BTreeSet::new();
    for f in run.files_written {
        let path = f.resolved.as_deref().unwrap_or(&f.path);
        let inside = writable
            .iter()
            .any(|w| path == w || path.starts_with(&format!("{w}/")));
        if !inside && path.starts_with('/') && paths.insert(path.to_owned()) {
            out.push(Beyond {
                kind: "write".into(),
                what: path.to_owned(),
                evidence: format!("written by pid {} at {} ms", f.pid, f.t_ms),
            });
        }
    }
    if let Some(hit) = run.limit_hit {
        out.push(Beyond {
            kind: "limit".into(),
            what: airlock_types::wire_name(&hit),
            evidence: run
                .reason
                .map_or_else(|| "the run hit the limit".into(), str::to_owned),
        });
    }
    if policy.install.packages == Some(false) {
        for i in run.installs {
            out.push(Beyond {
                kind: "install".into(),
                what: i.manager.clone(),
                evidence: i.argv.join(" "),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_types::policy::PolicySource;

    fn sourced(role: &str, toml: &str) -> SourcedPolicy {
        SourcedPolicy {
            source: PolicySource {
                role: role.into(),
                origin: if role == "skill" {
                    "airlock.toml".into()
                } else {
                    "operator.toml".into()
                },
                file: format!("{role}.toml"),
                line: 1,
            },
            policy: airlock_scan::policy::parse_toml(toml, "t.toml").unwrap(),
        }
    }

    #[test]
    fn deny_wins_and_the_stricter_limit_applies() {
        let skill = sourced(
            "skill",
            "[network]\nallow = [\"api.github.com:443\", \"evil.example\"]\n[resources]\ntimeout = \"10m\"\nmemory = \"256M\"\n",
        );
        let operator = sourced(
            "operator",
            "[network]\nallow = [\"*.github.com\"]\ndeny = [\"10.0.0.0/8\"]\n[resources]\ntimeout = \"2m\"\n[install]\npackages = false\n",
        );
        let options = PolicyOptions {
            operator: Some(operator),
            accept: true,
            given: vec![],
        };
        let mut limits = airlock_sandbox::Limits::default();
        let mut egress = None;
        let mut env = EnvOptions::default();
        let eff = apply(Some(&skill), &options, &mut limits, &mut egress, &mut env).unwrap();
        assert_eq!(limits.timeout, Duration::from_secs(120));
        assert_eq!(limits.memory_bytes, 256 << 20);
        assert!(!env.install);
        let policy = &egress.unwrap().policy;
        assert!(policy.check_name("api.github.com", 443).allowed);
        assert!(!policy.check_name("evil.example", 443).allowed);
        assert!(
            eff.refused.iter().any(|r| r.contains("evil.example")),
            "{:?}",
            eff.refused
        );
        assert!(
            eff.refused.iter().any(|r| r.contains("resources.timeout")),
            "{:?}",
            eff.refused
        );
        let part = |k: &str| eff.parts.iter().find(|p| p.key == k).unwrap().clone();
        assert_eq!(part("resources.timeout").from, "operator (operator.toml)");
        assert_eq!(part("resources.memory").from, "skill (airlock.toml)");
        assert_eq!(part("network.deny").value, "10.0.0.0/8");
    }

    #[test]
    fn installs_use_only_the_registries_both_name() {
        let skill = sourced("skill", "[install]\nregistries = [\"pypi\", \"npm\"]\n");
        let operator = sourced("operator", "[install]\nregistries = [\"pypi\"]\n");
        let options = PolicyOptions {
            operator: Some(operator),
            accept: true,
            given: vec![],
        };
        let mut env = EnvOptions::default();
        let eff = apply(
            Some(&skill),
            &options,
            &mut airlock_sandbox::Limits::default(),
            &mut None,
            &mut env,
        )
        .unwrap();
        assert_eq!(env.registries.as_deref(), Some(&["pypi".to_owned()][..]));
        let part = eff.parts.iter().find(|p| p.key == "install.registries").unwrap();
        assert_eq!(
            (part.value.as_str(), part.from.as_str()),
            ("pypi", "operator (operator.toml)")
        );
    }

    #[test]
    fn a_flag_the_user_gave_wins_over_the_declaration_and_nothing_applies_unaccepted() {
        let skill = sourced(
            "skill",
            "[network]\nallow = [\"api.github.com\"]\n[resources]\ntimeout = \"10m\"\n",
        );
        let mut limits = airlock_sandbox::Limits {
            timeout: Duration::from_secs(5),
            ..Default::default()
        };
        let mut egress = None;
        let mut env = EnvOptions::default();
        let options = PolicyOptions {
            operator: None,
            accept: true,
            given: vec!["timeout"],
        };
        apply(Some(&skill), &options, &mut limits, &mut egress, &mut env).unwrap();
        assert_eq!(limits.timeout, Duration::from_secs(5));
        let mut egress = None;
        let eff = apply(
            Some(&skill),
            &PolicyOptions::default(),
            &mut limits,
            &mut egress,
            &mut env,
        )
        .unwrap();
        assert!(egress.is_none());
        assert!(!eff.accepted);
    }

    #[test]
    fn rules_within_rules() {
        let r = |t: &str| Rule::parse(t).unwrap();
        assert!(r("api.github.com:443").within(&r("*.github.com")));
        assert!(!r("github.com").within(&r("*.github.com")));
        assert!(r("*.api.github.com").within(&r("*.github.com")));
        assert!(!r("api.github.com").within(&r("api.github.com:443")));
        assert!(r("10.1.0.0/16").within(&r("10.0.0.0/8")));
        assert!(!r("*").within(&r("*.github.com")));
    }
}
