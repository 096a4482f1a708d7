//! One inventory entry's scan: its text read by its kind (SKILL.md with its front matter, markdown, code, data a
//! script loads, an agent's hooks file), adding findings and facts.

use super::*;

/// Scans one inventory entry's content, adding findings and facts.
pub fn scan_file(
    entry: &InventoryEntry,
    abs: &Path,
    findings: &mut Vec<Finding>,
    facts: &mut Facts,
) -> Result<Option<Script>, ScanError> {
    let mut script = None;
    if matches!(entry.kind, FileKind::Binary | FileKind::Symlink) {
        return Ok(None);
    }
    if entry.kind == FileKind::Script {
        facts.script(&entry.path);
    }
    let mut file = fs_err::File::open(abs)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut file, MAX_ANALYSED_BYTES),
        &mut bytes,
    )?;
    if entry.kind == FileKind::Asset && bytes.contains(&0) {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&bytes);
    let start = findings.len();
    let grammar = entry.language.as_deref().and_then(Grammar::for_language);
    let mut scan = FileScan::new(&entry.path, entry.kind, findings);
    scan.grammar_exec = entry.kind == FileKind::Script && grammar.is_some();
    // Templates and examples are code to copy into a project, not programs the skill runs.
    scan.example = entry.path.split('/').any(|c| {
        matches!(
            c,
            "templates" | "template" | "examples" | "example" | "boilerplate"
        )
    }) || is_example_name(&entry.path);
    // A file its tool loads and runs by its name alone wherever it is put (`conftest.py` at every pytest session,
    // `build.rs` at every build, `.envrc` on entering the folder) runs once copied: not discounted as a template.
    let name = entry.path.rsplit('/').next().unwrap_or_default();
    scan.example = scan.example
        && !matches!(
            name,
            "conftest.py" | "sitecustomize.py" | "usercustomize.py" | "build.rs" | ".envrc"
        )
        && !name.ends_with(".pth");
    scan.ordered_doc =
        entry.kind == FileKind::Markdown && entry.language.as_deref() == Some(crate::follow::ORDERED_DOC);
    scan.hidden_characters(&text);
    match entry.kind {
        // Data a script of the skill loads and runs commands beside: its values as the commands they may be.
        FileKind::Other if entry.language.as_deref() == Some(LOADED_DATA) => {
            scan.code(None, &crate::follow::values_as_commands(&text), 1, facts);
        }
        FileKind::SkillMd => match split_frontmatter(&text) {
            Some((yaml, body, body_line)) => {
                scan.lines(2, yaml, Place::Comment);
                // The description is text every agent reads before the skill's body: read as its prose is.
                if let Some((line, description)) = description_of(yaml) {
                    scan.markdown(&description, line, facts);
                }
                // What the runtime metadata has the agent's runtime install is run as surely as a script.
                let installs = crate::skillmd::install_commands(yaml);
                if !installs.trim().is_empty() {
                    let before = scan.out.len();
                    scan.code(None, &installs, 2, facts);
                    for f in &mut scan.out[before..] {
                        f.message = format!(
                            "{} (an install entry of the OpenClaw metadata, which the agent's runtime runs before the skill: shown as the command it amounts to)",
                            f.message.trim_end_matches('.')
                        );
                    }
                }
                scan.markdown(body, body_line, facts);
            }
            None => scan.markdown(&text, 1, facts),
        },
        FileKind::Markdown => scan.markdown(&text, 1, facts),
        FileKind::Script => {
            let code = scan.code(grammar, &text, 1, facts);
            if let Some(g) = grammar {
                script = Some(Script {
                    path: entry.path.clone(),
                    grammar: g,
                    code,
                });
            }
        }
        FileKind::PackageManifest => {
            let g = if entry.path.ends_with("setup.py") {
                Some(Grammar::Python)
            } else {
                None
            };
            scan.code(g, &text, 1, facts);
            super::sources::manifest_sources(&entry.path, &text, scan.out);
        }
        FileKind::Workflow | FileKind::AgentHookConfig => {
            let before = scan.out.len();
            scan.code(None, &text, 1, facts);
            // A plugin's hooks that run only its own shipped files run what is reviewed with it, in plain sight
            // (as a service file the skill ships, copied into place): `high`, not the hidden command `critical` is
            // for. A hook that fetches or pipes anything stays `critical`.
            let why = if entry.kind != FileKind::AgentHookConfig {
                None
            } else if hooks_only_print(&text) {
                Some("Registers commands the agent runs automatically, each only printing a short fixed label (`echo project-hook`) or a placeholder path (`/abs/path/to/script.sh`): nothing that does anything is registered.")
            } else if hooks_run_own_files(&text) {
                Some("Registers commands the agent runs automatically, each a file of the plugin's own (`${CLAUDE_PLUGIN_ROOT}/…`): reviewed with it, run on every matching event.")
            } else if scan.example
                && HOOK_COMMAND.is_match(&text)
                && HOOK_COMMAND
                    .captures_iter(&text)
                    .all(|c| !HOOK_FETCHES.is_match(&c[1]))
            {
                // A hooks file under `templates/` is one to install, as every template is code to write: one step
                // less. What installs it (a copy into `~/.claude/settings.json`) is found where it stands.
                Some("A hooks file under templates/ or examples/ (commands the agent would run automatically once it is installed): a template, counted one step less; what installs it counts where it stands.")
            } else {
                None
            };
            if let Some(why) = why {
                for f in scan.out[before..]
                    .iter_mut()
                    .filter(|f| f.rule == "hooks/auto-command")
                {
                    f.severity = f.severity.min(Severity::High);
                    f.message = why.to_owned();
                }
            }
        }
        // A text file of no known kind (`prewarm.cfg`, `default.conf`, `hook.tpl`, a file with no extension) is read
        // as code: what it holds is what a script that sources, copies or loads it runs, and its name is free.
        // A prompt's configuration with custom modules (Starship): each module's `command` runs at every prompt, so
        // its values are read as the commands they are.
        FileKind::Other if entry.path.ends_with(".toml") && text.contains("[custom.") => {
            scan.code(None, &crate::follow::values_as_commands(&text), 1, facts);
        }
        FileKind::Other => {
            scan.code(None, &text, 1, facts);
            super::sources::manifest_sources(&entry.path, &text, scan.out);
        }
        FileKind::Asset => {
            scan.lines(1, &text, Place::Comment);
            // A manifest's part kept as an asset (`assets/backports.toml`, appended to a `Cargo.toml`).
            super::sources::manifest_sources(&entry.path, &text, scan.out);
        }
        FileKind::Binary | FileKind::Symlink => {}
    }
    combine::within_file(&entry.path, &mut findings[start..])
        .into_iter()
        .for_each(|f| findings.push(f));
    Ok(script)
}

/// Whether a hooks file registers a command and each one it registers passes `ok`, none fetching, piping or
/// evaluating anything.
fn every_hook_command(text: &str, ok: impl Fn(&str) -> bool) -> bool {
    let mut commands = HOOK_COMMAND.captures_iter(text).peekable();
    commands.peek().is_some() && commands.all(|c| ok(&c[1]) && !HOOK_RISKY.is_match(&c[1]))
}

/// Whether every command a hooks file registers runs a file of the plugin's own (`python3
/// "${CLAUDE_PLUGIN_ROOT}/tools/check.py"`) or a script of the project's own hooks folder
/// (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh`, which a skill copies there and is scanned where it ships), and
/// nothing fetched, piped or evaluated.
pub(super) fn hooks_run_own_files(text: &str) -> bool {
    every_hook_command(text, |c| {
        c.contains("${CLAUDE_PLUGIN_ROOT}")
            || c.contains("$CLAUDE_PLUGIN_ROOT")
            || PROJECT_HOOK_SCRIPT.is_match(c)
    })
}

re!(
    /// A command that is one script of the project's hooks folder, perhaps after its interpreter
    /// (`"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh`, `python3 "${CLAUDE_PROJECT_DIR}/.claude/hooks/x.py"`).
    PROJECT_HOOK_SCRIPT,
    r#"^\s*(?:(?:bash|sh|python3?|node|uv\s+run)\s+)?(?:\\?")?\$\{?CLAUDE_PROJECT_DIR\}?(?:\\?")?/\.claude/hooks/[\w.-]+(?:\\?")?\s*$"#
);

/// Whether every command a hooks file registers only prints a short fixed label (`echo project-hook`, `true`) or is a
/// placeholder path (`/abs/path/to/script.sh`), and no hook hands text to the model (`"type": "prompt"`).
pub(super) fn hooks_only_print(text: &str) -> bool {
    !HOOK_PROMPT.is_match(text)
        && every_hook_command(text, |c| {
            PRINTS_ONLY.is_match(c) || PLACEHOLDER_COMMAND.is_match(c)
        })
}

re!(
    /// A command that is a placeholder path alone (`/abs/path/to/script.sh`): a sample of the form, nothing to run.
    PLACEHOLDER_COMMAND, r"^\s*/?(?:[\w.-]+/)*path/to/[\w./-]*\s*$");
re!(
    /// A hook whose text goes to the model rather than to a shell.
    HOOK_PROMPT, r#""type"\s*:\s*"(?:prompt|agent)""#);
re!(
    /// A command that prints a short fixed label (at most three plain words) and does nothing else. What a
    /// session-start hook prints goes into the agent's context, so a sentence printed is not this.
    PRINTS_ONLY, r#"^\s*(?:(?:echo|printf)(?:\s+-[a-zA-Z]+)*(?:\s+'?[\w.-]+(?:\s+[\w.-]+){0,2}'?)?|true|:|exit\s+\d+)\s*$"#);
re!(
    /// What in a hook's command fetches, decodes or evaluates (a pipe between local programs is not this).
    HOOK_FETCHES, r"(?i)\b(curl|wget|nc|ncat|eval|base64|xxd|openssl)\b|https?://|/dev/tcp|\$\(");
re!(
    /// A hooks file's command value (`"command": "python3 \"${CLAUDE_PLUGIN_ROOT}/t.py\""`).
    HOOK_COMMAND, r#""command"\s*:\s*"((?:[^"\\]|\\.)*)""#);
re!(
    /// What in a hook's command fetches, evaluates, pipes or chains.
    HOOK_RISKY, r"(?i)\b(curl|wget|nc|eval|base64|bash\s+-c|sh\s+-c)\b|https?://|\||;|&&|`|\$\(");
