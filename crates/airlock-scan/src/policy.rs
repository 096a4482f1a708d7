//! A skill's declared policy: read from `airlock.toml` beside SKILL.md or from SKILL.md's
//! `metadata.security_policy`, checked against the schema (unknown keys and bad values are errors that name the
//! key and line), and compared with what the code seems to need.

use std::path::Path;

use airlock_types::policy::{parse_duration, parse_size, PolicyDoc, PolicySource, SourcedPolicy};
use airlock_types::{Finding, FindingContext, Severity};

/// The file a skill may declare its policy in, beside SKILL.md.
pub const POLICY_FILE: &str = "airlock.toml";

/// A policy that does not parse or breaks the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PolicyError {
    pub file: String,
    pub line: u32,
    pub message: String,
}

/// Parses a TOML policy (`airlock.toml`, an operator's `--policy FILE`). `file` names it in errors.
pub fn parse_toml(text: &str, file: &str) -> Result<PolicyDoc, PolicyError> {
    let doc: PolicyDoc = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(0, |s| line_at(text, s.start));
        PolicyError {
            file: file.to_owned(),
            line,
            message: e.message().trim().to_owned(),
        }
    })?;
    check(&doc).map_err(|(key, message)| PolicyError {
        file: file.to_owned(),
        line: key_line(text, 1, &key),
        message,
    })?;
    Ok(doc)
}

/// Parses a JSON policy (a `--json-io` request's `policy`).
pub fn parse_json(value: &serde_json::Value) -> Result<PolicyDoc, String> {
    let doc: PolicyDoc = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    check(&doc).map_err(|(key, message)| format!("`{key}`: {message}"))?;
    Ok(doc)
}

/// Parses SKILL.md's `metadata.security_policy`: `frontmatter` is the YAML between the `---` lines, which start on
/// line 2 of the file.
fn parse_frontmatter(frontmatter: &str, file: &str) -> Result<Option<(PolicyDoc, u32)>, PolicyError> {
    let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(frontmatter) else {
        // SKILL.md's own validation reports YAML that does not parse.
        return Ok(None);
    };
    let Some(policy) = value.get("metadata").and_then(|m| m.get("security_policy")) else {
        return Ok(None);
    };
    let start = frontmatter
        .lines()
        .position(|l| l.trim_start().starts_with("security_policy:"))
        .map_or(1, |i| u32::try_from(i).unwrap_or(0) + 2);
    let err = |key: &str, message: String| PolicyError {
        file: file.to_owned(),
        line: key_line(frontmatter, 2, key).max(start),
        message,
    };
    let doc: PolicyDoc = serde_yaml::from_value(policy.clone()).map_err(|e| {
        let message = e.to_string();
        let key = message
            .split("unknown field `")
            .nth(1)
            .and_then(|r| r.split('`').next())
            .unwrap_or_default()
            .to_owned();
        err(&key, message)
    })?;
    check(&doc).map_err(|(key, message)| err(&key, message))?;
    Ok(Some((doc, start)))
}

/// The policy declared by the skill in `dir` (relative to `tree_root`): `airlock.toml` or SKILL.md's
/// `metadata.security_policy`; both at once is an error.
pub fn declared(tree_root: &Path, dir: &str) -> Result<Option<SourcedPolicy>, PolicyError> {
    let rel = |name: &str| {
        if dir.is_empty() {
            name.to_owned()
        } else {
            format!("{dir}/{name}")
        }
    };
    let mut found = Vec::new();
    let toml_path = tree_root.join(rel(POLICY_FILE));
    if toml_path.is_file() {
        let text = fs_err::read_to_string(&toml_path).map_err(|e| PolicyError {
            file: rel(POLICY_FILE),
            line: 0,
            message: e.to_string(),
        })?;
        found.push(SourcedPolicy {
            source: PolicySource {
                role: "skill".into(),
                origin: POLICY_FILE.into(),
                file: rel(POLICY_FILE),
                line: 1,
            },
            policy: parse_toml(&text, &rel(POLICY_FILE))?,
        });
    }
    if let Ok(text) = fs_err::read_to_string(tree_root.join(rel("SKILL.md"))) {
        if let Some((yaml, _, _)) = crate::skillmd::split_frontmatter(&text) {
            if let Some((policy, line)) = parse_frontmatter(yaml, &rel("SKILL.md"))? {
                found.push(SourcedPolicy {
                    source: PolicySource {
                        role: "skill".into(),
                        origin: "SKILL.md metadata.security_policy".into(),
                        file: rel("SKILL.md"),
                        line,
                    },
                    policy,
                });
            }
        }
    }
    if found.len() > 1 {
        return Err(PolicyError {
            file: rel(POLICY_FILE),
            line: 1,
            message: "the policy is declared twice (airlock.toml and SKILL.md's metadata.security_policy); keep one"
                .into(),
        });
    }
    Ok(found.pop())
}

/// Checks the values the schema cannot: network rules, presets, paths, durations, sizes, registries. The error
/// names the key.
pub fn check(doc: &PolicyDoc) -> Result<(), (String, String)> {
    for (key, rules) in [("allow", &doc.network.allow), ("deny", &doc.network.deny)] {
        for r in rules {
            airlock_egress::Rule::parse(r).map_err(|e| (key.to_owned(), e.to_string()))?;
        }
    }
    for p in &doc.network.presets {
        if !matches!(p.as_str(), "none" | "package-registries" | "model-api") {
            return Err((
                "presets".into(),
                format!("unknown preset `{p}` (known: none, package-registries, model-api)"),
            ));
        }
    }
    for w in &doc.filesystem.writable {
        writable_path(w).map_err(|m| ("writable".to_owned(), m))?;
    }
    let r = &doc.resources;
    if let Some(t) = &r.timeout {
        parse_duration(t).map_err(|m| ("timeout".to_owned(), m))?;
    }
    for (key, v) in [("memory", &r.memory), ("disk", &r.disk)] {
        if let Some(v) = v {
            parse_size(v).map_err(|m| (key.to_owned(), m))?;
        }
    }
    if r.pids == Some(0) || r.cpus == Some(0) {
        return Err(("resources".into(), "`pids` and `cpus` must be at least 1".into()));
    }
    for reg in &doc.install.registries {
        if !matches!(reg.as_str(), "pypi" | "npm") {
            return Err((
                "registries".into(),
                format!("unknown registry `{reg}` (known: pypi, npm)"),
            ));
        }
    }
    Ok(())
}

/// A writable path as the sandbox sees it: absolute, or under the home folder (`~/`), with no `..`, and not a
/// kernel file system.
pub fn writable_path(text: &str) -> Result<String, String> {
    let path = match text.strip_prefix("~/") {
        Some(rest) => format!("/home/sandbox/{rest}"),
        None => text.to_owned(),
    };
    if !path.starts_with('/') || path.split('/').any(|c| c == "..") || path.contains('\0') {
        return Err(format!(
            "`{text}` must be an absolute path (or ~/...) without `..`"
        ));
    }
    let path = path.trim_end_matches('/').to_owned();
    for fixed in ["/proc", "/sys", "/dev", "/skill", "/env"] {
        if path.is_empty() || path == fixed || path.starts_with(&format!("{fixed}/")) {
            return Err(format!("`{text}` cannot be made writable"));
        }
    }
    Ok(path)
}

/// The destinations a network declaration allows, its rules and then its presets', as the egress proxy parses them
/// (a declaration is checked when it is read, so nothing here fails).
pub fn allowed(network: &airlock_types::policy::NetworkPolicy) -> airlock_egress::Policy {
    let mut policy = airlock_egress::Policy {
        allow: network
            .allow
            .iter()
            .filter_map(|r| airlock_egress::Rule::parse(r).ok())
            .collect(),
        ..Default::default()
    };
    for p in &network.presets {
        let _ = policy.add_preset(p);
    }
    policy
}

/// Whether an allow policy covers a host (and port, 443 when none): the same matching as the egress proxy.
pub fn covers(policy: &airlock_egress::Policy, host: &str, port: Option<u16>) -> bool {
    let port = port.unwrap_or(443);
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => policy.check_ip(ip, port).allowed,
        Err(_) => policy.check_name(host, port).allowed,
    }
}

/// Findings that compare a declaration with the code: hosts the code reaches that the policy does not declare,
/// network the code never seems to use, a policy that does not parse.
pub fn findings(declared: &Result<Option<SourcedPolicy>, PolicyError>, found: &[Finding]) -> Vec<Finding> {
    let mut out = Vec::new();
    let decl = match declared {
        Ok(Some(d)) => d,
        Ok(None) => return out,
        Err(e) => {
            out.push(Finding {
                rule: "policy/invalid".into(),
                severity: Severity::Medium,
                file: e.file.clone(),
                line: e.line,
                evidence: crate::text::visible(&e.message, 160),
                message: format!(
                    "The declared policy is not valid ({}); runs refuse it until it is fixed.",
                    crate::text::visible(&e.message, 200)
                ),
                context: FindingContext::Metadata,
            });
            return out;
        }
    };
    let policy = &decl.policy;
    let rules = allowed(&policy.network);
    let url =
        regex::Regex::new(r"(?i)\b(?:https?|wss?)://([a-z0-9.-]+\.[a-z]{2,}|\d+\.\d+\.\d+\.\d+)(?::(\d+))?")
            .ok();
    let mut reaches_network = false;
    let mut named = std::collections::BTreeSet::new();
    for f in found.iter().filter(|f| {
        f.rule.starts_with("net/") && matches!(f.context, FindingContext::Code | FindingContext::Instruction)
    }) {
        reaches_network = true;
        let Some(re) = &url else { break };
        for c in re.captures_iter(&f.evidence) {
            let host = c[1].to_ascii_lowercase();
            let port = c.get(2).and_then(|p| p.as_str().parse().ok());
            if !covers(&rules, &host, port) && named.insert((host.clone(), f.file.clone(), f.line)) {
                out.push(Finding {
                    rule: "policy/undeclared-host".into(),
                    severity: Severity::Medium,
                    file: f.file.clone(),
                    line: f.line,
                    evidence: f.evidence.clone(),
                    message: format!(
                        "This reaches {host}, which the declared policy ({}) does not allow; a run under the \
                         policy refuses it.",
                        decl.source.origin
                    ),
                    context: f.context,
                });
            }
        }
    }
    // Installs the code runs while the declaration says it installs nothing.
    if policy.install.packages == Some(false) {
        for f in found.iter().filter(|f| {
            matches!(f.rule.as_str(), "install/package" | "install/pipe-to-shell")
                && matches!(f.context, FindingContext::Code | FindingContext::Instruction)
        }) {
            out.push(Finding {
                rule: "policy/undeclared-install".into(),
                severity: Severity::Medium,
                file: f.file.clone(),
                line: f.line,
                evidence: f.evidence.clone(),
                message: format!(
                    "This installs packages, and the declared policy ({}) says the skill installs none.",
                    decl.source.origin
                ),
                context: f.context,
            });
        }
    }
    // Writes outside the workspace that the declaration does not name.
    let write = regex::Regex::new(r#"(?:>>?|\btee(?:\s+-a)?|\bmkdir(?:\s+-p)?|\btouch|\b(?:cp|mv|install)\s+\S+)\s*['"]?(/[A-Za-z0-9._/-]+)"#)
        .ok();
    let writable: Vec<String> = policy
        .filesystem
        .writable
        .iter()
        .filter_map(|w| writable_path(w).ok())
        .collect();
    let allowed_write = |path: &str| {
        ["/tmp", "/dev/null", "/dev/stdout", "/dev/stderr", "/workspace"]
            .iter()
            .map(|p| (*p).to_owned())
            .chain(writable.iter().cloned())
            .any(|w| path == w || path.starts_with(&format!("{w}/")))
    };
    for f in found.iter().filter(|f| {
        f.rule == "fs/outside-workspace"
            && matches!(f.context, FindingContext::Code | FindingContext::Instruction)
    }) {
        let Some(re) = &write else { break };
        if let Some(path) = re
            .captures_iter(&f.evidence)
            .filter_map(|c| c.get(1).map(|m| m.as_str().to_owned()))
            .find(|p| !allowed_write(p))
        {
            out.push(Finding {
                rule: "policy/undeclared-write".into(),
                severity: Severity::Medium,
                file: f.file.clone(),
                line: f.line,
                evidence: f.evidence.clone(),
                message: format!(
                    "This writes {path}, outside the workspace and the paths the declared policy ({}) names.",
                    decl.source.origin
                ),
                context: f.context,
            });
        }
    }
    if !reaches_network && !policy.network.allow.is_empty() {
        out.push(Finding {
            rule: "policy/unused-network".into(),
            severity: Severity::Low,
            file: decl.source.file.clone(),
            line: decl.source.line,
            evidence: crate::text::visible(&policy.network.allow.join(", "), 160),
            message:
                "The policy asks for network that no code or instruction in the skill seems to use; ask for \
                      what it needs."
                    .into(),
            context: FindingContext::Metadata,
        });
    }
    out
}

fn line_at(text: &str, offset: usize) -> u32 {
    u32::try_from(text.get(..offset).unwrap_or(text).matches('\n').count() + 1).unwrap_or(0)
}

/// The line of the first `key` (as `key =` or `key:`) in `text`, counting the text's first line as `first`.
fn key_line(text: &str, first: u32, key: &str) -> u32 {
    if key.is_empty() {
        return first;
    }
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches('[').trim_start_matches('"');
            t.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with(['=', ':', ']', '"', '.']))
        })
        .map_or(first, |i| first + u32::try_from(i).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_good_policy_parses_from_toml_and_from_skill_md() {
        let doc = parse_toml(
            "[network]\nallow = [\"api.github.com:443\", \"*.example.org\"]\n[resources]\ntimeout = \"2m\"\nmemory = \"1G\"\n\
             [filesystem]\nwritable = [\"~/.cache/tool\"]\n[install]\npackages = true\nregistries = [\"pypi\"]\n",
            "airlock.toml",
        )
        .unwrap();
        assert_eq!(doc.network.allow.len(), 2);
        assert_eq!(doc.resources.timeout.as_deref(), Some("2m"));
        let yaml = "name: x\ndescription: y\nmetadata:\n  security_policy:\n    network:\n      allow: [api.github.com]\n";
        let (doc, line) = parse_frontmatter(yaml, "SKILL.md").unwrap().unwrap();
        assert_eq!(doc.network.allow, ["api.github.com"]);
        assert_eq!(line, 5);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key_and_line() {
        let e = parse_toml("[network]\nallow = []\nalow = [\"x.com\"]\n", "airlock.toml").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("unknown field `alow`"), "{e}");
        let e = parse_toml("[resources]\ntimeout = \"soon\"\n", "airlock.toml").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("not a duration"), "{e}");
        let e = parse_toml("[network]\nallow = [\"bad host!\"]\n", "a.toml").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let e = parse_toml("[filesystem]\nwritable = [\"../up\"]\n", "a.toml").unwrap_err();
        assert!(e.message.contains("absolute"), "{e}");
        let e = parse_toml("[filesystem]\nwritable = [\"/proc/self\"]\n", "a.toml").unwrap_err();
        assert!(e.message.contains("cannot be made writable"), "{e}");
        let yaml = "name: x\nmetadata:\n  security_policy:\n    network:\n      allow: []\n    resource:\n      pids: 3\n";
        let e = parse_frontmatter(yaml, "SKILL.md").unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.contains("unknown field `resource`"), "{e}");
    }

    #[test]
    fn code_that_needs_more_than_declared_is_flagged() {
        let decl = Ok(Some(SourcedPolicy {
            source: PolicySource {
                role: "skill".into(),
                origin: "airlock.toml".into(),
                file: "airlock.toml".into(),
                line: 1,
            },
            policy: parse_toml(
                "[install]\npackages = false\n[filesystem]\nwritable = [\"/var/cache/tool\"]\n",
                "airlock.toml",
            )
            .unwrap(),
        }));
        let finding = |rule: &str, evidence: &str| Finding {
            rule: rule.into(),
            severity: Severity::Medium,
            file: "scripts/go.sh".into(),
            line: 3,
            evidence: evidence.into(),
            message: String::new(),
            context: FindingContext::Code,
        };
        let found = [
            finding("install/package", "pip install requests"),
            finding("fs/outside-workspace", "echo x > /etc/cron.d/job"),
            finding("fs/outside-workspace", "echo x > /var/cache/tool/state"),
            finding("fs/outside-workspace", "cat /etc/hosts"),
        ];
        let rules: Vec<String> = findings(&decl, &found).into_iter().map(|f| f.rule).collect();
        assert_eq!(rules, ["policy/undeclared-install", "policy/undeclared-write"]);
    }

    #[test]
    fn rules_cover_hosts_as_the_proxy_matches_them() {
        let rules = allowed(&airlock_types::policy::NetworkPolicy {
            allow: vec!["*.github.com:443".to_owned(), "10.0.0.0/8".to_owned()],
            ..Default::default()
        });
        assert!(covers(&rules, "api.github.com", None));
        assert!(!covers(&rules, "github.com", None));
        assert!(!covers(&rules, "api.github.com", Some(80)));
        assert!(covers(&rules, "10.1.2.3", Some(80)));
    }
}
