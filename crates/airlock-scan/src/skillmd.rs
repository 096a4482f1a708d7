//! SKILL.md validation against the Agent Skills specification.
//!
//! Frontmatter fields: `name` (1 to 64 characters, lowercase letters, digits and hyphens, no leading, trailing or
//! doubled hyphen, equal to the folder name), `description` (1 to 1024 characters), and optional `license`,
//! `allowed-tools`, `metadata` and `compatibility` (up to 500 characters). Problems become findings.

use std::path::Path;

use airlock_types::{Finding, FindingContext, Severity};

use crate::text::visible;
use crate::ScanError;

const KNOWN_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "allowed-tools",
    "metadata",
    "compatibility",
];

/// What a SKILL.md says about itself.
#[derive(Debug, Clone, Default)]
pub struct SkillMeta {
    pub name: Option<String>,
    pub description: Option<String>,
    pub license: Option<String>,
    pub allowed_tools: Vec<String>,
    /// The markdown after the frontmatter.
    pub body: String,
    /// 1-based line where the body starts.
    pub body_line: u32,
    /// False when any finding of severity medium or more was raised by validation.
    pub valid: bool,
    pub findings: Vec<Finding>,
}

/// Splits `---\n...\n---\n` frontmatter from a document; returns (yaml, body, body's first line).
pub fn split_frontmatter(text: &str) -> Option<(&str, &str, u32)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            let lines = u32::try_from(yaml.lines().count()).unwrap_or(0) + 3;
            return Some((yaml, body, lines));
        }
        offset += line.len();
    }
    None
}

/// Whether `name` follows the spec's naming rule.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// Reads and validates `dir/SKILL.md` (dir relative to `tree_root`).
pub fn validate(tree_root: &Path, dir: &str, folder_name: Option<&str>) -> Result<SkillMeta, ScanError> {
    let file = if dir.is_empty() {
        "SKILL.md".to_owned()
    } else {
        format!("{dir}/SKILL.md")
    };
    let path = tree_root.join(&file);
    let mut meta = SkillMeta {
        valid: true,
        ..SkillMeta::default()
    };
    let finding = |rule: &str, severity: Severity, line: u32, evidence: &str, message: String| Finding {
        rule: rule.to_owned(),
        severity,
        file: file.clone(),
        line,
        evidence: visible(evidence, 160),
        message,
        context: FindingContext::Metadata,
    };
    if !path.is_file() {
        return Ok(meta);
    }
    let bytes = fs_err::read(&path)?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            meta.findings.push(finding(
                "skill-md/not-utf8",
                Severity::Medium,
                0,
                "",
                format!(
                    "SKILL.md is not valid UTF-8 (at byte {}); agents may read it differently.",
                    e.utf8_error().valid_up_to()
                ),
            ));
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    let Some((yaml, body, body_line)) = split_frontmatter(&text) else {
        meta.findings.push(finding(
            "skill-md/frontmatter-missing",
            Severity::Medium,
            1,
            text.lines().next().unwrap_or_default(),
            "SKILL.md has no `---` frontmatter with `name` and `description`, so agents cannot load it as a skill."
                .to_owned(),
        ));
        meta.body = text.clone();
        meta.body_line = 1;
        meta.valid = false;
        return Ok(meta);
    };
    meta.body = body.to_owned();
    meta.body_line = body_line;
    let value: serde_yaml::Value = match serde_yaml::from_str(yaml) {
        Ok(v) => v,
        Err(e) => {
            let line = e
                .location()
                .map_or(2, |l| u32::try_from(l.line()).unwrap_or(0) + 1);
            let bad_line = yaml
                .lines()
                .nth(line.saturating_sub(2) as usize)
                .unwrap_or_default();
            meta.findings.push(finding(
                "skill-md/frontmatter-invalid",
                Severity::Medium,
                line,
                bad_line,
                format!(
                    "The frontmatter is not valid YAML ({}); agents will reject or misread this skill.",
                    first_line(&e.to_string())
                ),
            ));
            meta.valid = false;
            return Ok(meta);
        }
    };
    let Some(map) = value.as_mapping() else {
        meta.findings.push(finding(
            "skill-md/frontmatter-invalid",
            Severity::Medium,
            2,
            yaml.lines().next().unwrap_or_default(),
            "The frontmatter is not a mapping of fields.".to_owned(),
        ));
        meta.valid = false;
        return Ok(meta);
    };
    let line_of = |key: &str| -> u32 {
        yaml.lines()
            .position(|l| l.starts_with(&format!("{key}:")))
            .map_or(2, |i| u32::try_from(i).unwrap_or(0) + 2)
    };
    for (key, _) in map {
        let key = key.as_str().unwrap_or("?");
        if !KNOWN_FIELDS.contains(&key) {
            meta.findings.push(finding(
                "skill-md/unknown-field",
                Severity::Info,
                line_of(key),
                key,
                format!(
                    "`{}` is not a field of the Agent Skills spec; agents ignore it.",
                    visible(key, 40)
                ),
            ));
        }
    }
    match map.get("name") {
        Some(serde_yaml::Value::String(name)) => {
            meta.name = Some(name.clone());
            if !valid_name(name) {
                meta.findings.push(finding(
                    "skill-md/name-invalid",
                    Severity::Low,
                    line_of("name"),
                    name,
                    "`name` must be 1 to 64 lowercase letters, digits or single hyphens, not starting or ending with a hyphen.".to_owned(),
                ));
            }
            if let Some(folder) = folder_name {
                if folder != name {
                    meta.findings.push(finding(
                        "skill-md/name-mismatch",
                        Severity::Low,
                        line_of("name"),
                        name,
                        format!("`name` does not match the skill's folder `{}`; the spec requires them to be equal.", visible(folder, 64)),
                    ));
                }
            }
        }
        Some(_) => meta.findings.push(finding(
            "skill-md/name-invalid",
            Severity::Medium,
            line_of("name"),
            "name",
            "`name` must be a string.".to_owned(),
        )),
        None => meta.findings.push(finding(
            "skill-md/name-missing",
            Severity::Medium,
            1,
            "",
            "The frontmatter has no `name`; agents cannot register this skill.".to_owned(),
        )),
    }
    match map.get("description") {
        Some(serde_yaml::Value::String(description)) => {
            meta.description = Some(description.clone());
            let chars = description.chars().count();
            if description.trim().is_empty() {
                meta.findings.push(finding(
                    "skill-md/description-missing",
                    Severity::Medium,
                    line_of("description"),
                    "",
                    "`description` is empty: it must say what the skill does and when to use it.".to_owned(),
                ));
            } else if chars > 1024 {
                meta.findings.push(finding(
                    "skill-md/description-too-long",
                    Severity::Low,
                    line_of("description"),
                    description,
                    format!("`description` has {chars} characters; the spec allows 1024."),
                ));
            }
        }
        Some(_) => meta.findings.push(finding(
            "skill-md/description-missing",
            Severity::Medium,
            line_of("description"),
            "description",
            "`description` must be a string.".to_owned(),
        )),
        None => meta.findings.push(finding(
            "skill-md/description-missing",
            Severity::Medium,
            1,
            "",
            "The frontmatter has no `description`; agents use it to decide when to load the skill."
                .to_owned(),
        )),
    }
    if let Some(license) = map.get("license").and_then(|v| v.as_str()) {
        meta.license = Some(license.to_owned());
    }
    if let Some(compat) = map.get("compatibility").and_then(|v| v.as_str()) {
        if compat.chars().count() > 500 {
            meta.findings.push(finding(
                "skill-md/compatibility-too-long",
                Severity::Low,
                line_of("compatibility"),
                compat,
                "`compatibility` is longer than the 500 characters the spec allows.".to_owned(),
            ));
        }
    }
    if let Some(metadata) = map.get("metadata") {
        if !metadata.is_mapping() {
            meta.findings.push(finding(
                "skill-md/metadata-invalid",
                Severity::Low,
                line_of("metadata"),
                "metadata",
                "`metadata` must be a mapping of keys to values.".to_owned(),
            ));
        }
    }
    match map.get("allowed-tools") {
        Some(serde_yaml::Value::String(tools)) => meta.allowed_tools = split_tools(tools),
        Some(serde_yaml::Value::Sequence(seq)) => {
            meta.allowed_tools = seq.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
        }
        _ => {}
    }
    if let Some(tool) = meta
        .allowed_tools
        .iter()
        .find(|t| *t == "Bash" || *t == "Bash(*)" || t.starts_with("Bash(*"))
    {
        meta.findings.push(finding(
            "skill-md/unrestricted-shell",
            Severity::Medium,
            line_of("allowed-tools"),
            tool,
            "`allowed-tools` pre-approves any shell command for this skill, so the agent would not ask before running them.".to_owned(),
        ));
    }
    meta.valid = !meta.findings.iter().any(|f| f.severity >= Severity::Medium);
    Ok(meta)
}

/// The names a skill's OpenClaw runtime metadata goes by under `metadata` (the older two are still read).
const RUNTIME_KEYS: [&str; 3] = ["openclaw", "clawdbot", "clawdis"];

/// What one install entry of a frontmatter's OpenClaw runtime metadata has the agent's runtime do before the skill
/// runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeInstall {
    /// `kind: download`: fetch `url` (unpack it when an archive) and put `bin` on the PATH.
    Download {
        url: String,
        file: String,
        bin: String,
        archive: bool,
    },
    /// `kind: node`: an npm package, installed globally.
    Node(String),
    /// `kind: uv`: a Python tool, installed with `uv tool install`.
    Uv(String),
    /// `kind: go`: a module, installed with `go install`.
    Go(String),
    /// `kind: brew`: a formula, or a cask.
    Brew { name: String, cask: bool },
}

impl RuntimeInstall {
    /// The shell command that does what the runtime does with the entry.
    pub fn command(&self) -> String {
        match self {
            Self::Download {
                url,
                file,
                bin,
                archive: true,
            } => {
                format!("curl -fsSL -o {file} {url} && tar -xf {file} && chmod +x {bin} && ./{bin}")
            }
            Self::Download { url, bin, .. } => {
                format!("curl -fsSL -o {bin} {url} && chmod +x {bin} && ./{bin}")
            }
            Self::Node(package) => format!("npm install -g {package}"),
            Self::Uv(package) => format!("uv tool install {package}"),
            Self::Go(module) => format!("go install {module}"),
            Self::Brew { name, cask: false } => format!("brew install {name}"),
            Self::Brew { name, cask: true } => format!("brew install --cask {name}"),
        }
    }
}

/// The install entries of a frontmatter's OpenClaw runtime metadata (`metadata.openclaw.install`, also written as
/// one JSON string), each with the 0-based line of `yaml` that holds its URL or package.
pub fn runtime_installs(yaml: &str) -> Vec<(usize, RuntimeInstall)> {
    // Most frontmatter has none: only one that names the metadata and an install is parsed.
    if !(yaml.contains("install") && RUNTIME_KEYS.iter().any(|k| yaml.contains(k))) {
        return Vec::new();
    }
    let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(yaml) else {
        return Vec::new();
    };
    let metadata = match value.get("metadata") {
        Some(serde_yaml::Value::String(json)) => serde_yaml::from_str(json).ok(),
        Some(m) => Some(m.clone()),
        None => None,
    };
    let Some(metadata) = metadata else {
        return Vec::new();
    };
    let text = |v: &serde_yaml::Value, key: &str| -> Option<String> {
        let s = v.get(key)?.as_str()?;
        // One line of printable text: what the entry says, bounded, with nothing that could start another line.
        let s: String = s.chars().filter(|c| !c.is_control()).take(300).collect();
        (!s.trim().is_empty()).then(|| s.trim().to_owned())
    };
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = Vec::new();
    let mut from = 0;
    for key in RUNTIME_KEYS {
        let Some(serde_yaml::Value::Sequence(entries)) = metadata.get(key).and_then(|m| m.get("install"))
        else {
            continue;
        };
        for entry in entries {
            let bin = entry
                .get("bins")
                .and_then(|b| b.as_sequence())
                .and_then(|b| b.first())
                .and_then(|b| b.as_str())
                .map(file_name);
            let (named, install) = if let Some(url) = text(entry, "url") {
                let file = file_name(url.rsplit('/').next().unwrap_or_default());
                let archive = entry.get("archive").is_some()
                    || [".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".7z"]
                        .iter()
                        .any(|e| file.ends_with(e));
                let bin = bin.unwrap_or_else(|| file.clone());
                (
                    url.clone(),
                    RuntimeInstall::Download {
                        url,
                        file,
                        bin,
                        archive,
                    },
                )
            } else if let Some(package) = text(entry, "package") {
                let install = if text(entry, "kind").as_deref() == Some("uv") {
                    RuntimeInstall::Uv(package.clone())
                } else {
                    RuntimeInstall::Node(package.clone())
                };
                (package, install)
            } else if let Some(module) = text(entry, "module") {
                (module.clone(), RuntimeInstall::Go(module))
            } else if let Some(name) = text(entry, "formula") {
                (name.clone(), RuntimeInstall::Brew { name, cask: false })
            } else if let Some(name) = text(entry, "cask") {
                (name.clone(), RuntimeInstall::Brew { name, cask: true })
            } else {
                continue;
            };
            // The entry's line: the first line from the last entry's on that holds what it names.
            let at = (from..lines.len())
                .find(|&i| lines[i].contains(named.as_str()))
                .or_else(|| lines.iter().position(|l| l.contains("install")))
                .unwrap_or(0);
            from = at;
            out.push((at, install));
        }
    }
    out
}

/// [`runtime_installs`] as the shell commands they amount to, each at its entry's line of `yaml` (entries of one
/// line joined with ` ; `); every other line is empty, so the text's lines are the frontmatter's. Nothing here is
/// run: the rules read the commands as code, as the same entry written out in the body would be.
pub fn install_commands(yaml: &str) -> String {
    let mut out: Vec<String> = vec![String::new(); yaml.lines().count()];
    for (at, install) in runtime_installs(yaml) {
        let Some(line) = out.get_mut(at) else { continue };
        if !line.is_empty() {
            line.push_str(" ; ");
        }
        line.push_str(&install.command());
    }
    out.join("\n")
}

/// A file name as a command may carry it: letters, digits, `.`, `_` and `-` only.
fn file_name(name: &str) -> String {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(80)
        .collect();
    if name.trim_matches('.').is_empty() {
        "download".to_owned()
    } else {
        name
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The tools of an `allowed-tools` string: separated by spaces or commas, except inside a tool's parentheses
/// (`Bash(python3 scripts/x.py:*)` is one tool).
fn split_tools(tools: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0usize);
    for c in tools.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ' ' | ',' if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_tools_keep_their_arguments_together() {
        assert_eq!(
            split_tools("Bash(python3 scripts/add_footer.py:*) Read, Write"),
            ["Bash(python3 scripts/add_footer.py:*)", "Read", "Write"]
        );
    }

    #[test]
    fn openclaw_install_entries_are_the_commands_they_stand_for() {
        let yaml = "name: t\nmetadata:\n  openclaw:\n    install:\n      - kind: download\n        url: http://10.0.0.9/t.tar.gz\n        archive: tar.gz\n        bins: [todo]\n      - kind: node\n        package: todoist-cli\n";
        let lines: Vec<String> = install_commands(yaml).lines().map(str::to_owned).collect();
        assert_eq!(lines.len(), yaml.lines().count());
        assert_eq!(
            lines[5],
            "curl -fsSL -o t.tar.gz http://10.0.0.9/t.tar.gz && tar -xf t.tar.gz && chmod +x todo && ./todo"
        );
        assert_eq!(lines[9], "npm install -g todoist-cli");
        // The same as one JSON string, under an older name.
        let json = "name: t\nmetadata: '{\"clawdbot\": {\"install\": [{\"kind\": \"brew\", \"formula\": \"jq\"}]}}'\n";
        assert_eq!(install_commands(json).lines().nth(1), Some("brew install jq"));
        assert!(install_commands("name: t\nmetadata:\n  author: x\n")
            .trim()
            .is_empty());
    }

    #[test]
    fn names_follow_the_spec() {
        assert!(valid_name("pdf-tools"));
        assert!(valid_name("a1"));
        assert!(!valid_name("PDF"));
        assert!(!valid_name("-x"));
        assert!(!valid_name("a--b"));
        assert!(!valid_name(&"a".repeat(65)));
    }

    #[test]
    fn frontmatter_split_reports_body_line() {
        let (yaml, body, line) = split_frontmatter("---\nname: x\ndescription: y\n---\n# Title\n").unwrap();
        assert_eq!(yaml, "name: x\ndescription: y\n");
        assert_eq!(body, "# Title\n");
        assert_eq!(line, 5);
        assert!(split_frontmatter("# no frontmatter").is_none());
    }
}
