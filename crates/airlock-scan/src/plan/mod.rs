//! Dry-run planning: the exact context an agent would receive (SKILL.md's body and the files it references) and the
//! commands the skill asks for (fenced shell lines, shipped scripts with their interpreters, package installs), each
//! tied to its file and line and to the scan's findings there. Nothing is executed.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use airlock_types::{ContextFile, FileKind, Plan, PlanStep, ScanReport};

use crate::markdown::{segments, Segment};
use crate::{skillmd, ScanError};

mod placeholders;
mod scripts;
mod shell;

use placeholders::*;
pub use placeholders::{
    placeholder, skill_dir_placeholders, target_placeholders, SHOWN_AS_AN_ATTACK, TARGET_DIR,
};

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Context files larger than this are listed without their text.
const CONTEXT_TEXT_LIMIT: u64 = 256 * 1024;

re!(
    INSTALL,
    r"(?x)
    \b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip|pipx|uv\s+tool)\s+install\b
    | \buv\s+add\b
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
        if !prog.ends_with("/env") {
            return Some(prog.rsplit('/').next()?.to_owned());
        }
        // `env -S deno run --allow-read` splits the rest into the command with its options.
        let mut rest = parts.skip_while(|w| w.starts_with('-') && !matches!(*w, "-S" | "--split-string"));
        let word = rest.next()?;
        if matches!(word, "-S" | "--split-string") {
            let command: Vec<&str> = rest.collect();
            return (!command.is_empty()).then(|| command.join(" "));
        }
        return Some(word.to_owned());
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
                shown_arguments: None,
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
            // A script's usage line whose only placeholders are optional arguments (`bash scripts/check.sh
            // [WORKSPACE_ROOT]`) runs as it stands without them.
            let (command, optional) = match without_optional(&command) {
                Some((bare, dropped))
                    if scripts_named(&shell::code_lines(&bare), &report.inventory.files, &prefix)
                        .is_some() =>
                {
                    (bare, Some(dropped))
                }
                _ => (command, None),
            };
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
                    .into_iter()
                    .chain(optional.map(|d| {
                        format!("run without its optional arguments ({}), as its usage allows", d.join(" "))
                    }))
                    .reduce(|a, b| format!("{a}; {b}"))
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
                shown_arguments: None,
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
                shown_arguments: None,
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
            if let Some(why) = scripts::material(rel).or_else(|| scripts::hook(rel)) {
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
                         {rel} -- {args}"
                    ));
                } else {
                    step.command = format!("{} {args}", step.command);
                    step.note = Some(format!(
                        "with the arguments the instructions show at {skill_md}:{at}"
                    ));
                }
                step.shown_arguments = Some(args);
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

/// Programs that wait for a person at a terminal: an editor, a pager, a monitor.
const INTERACTIVE: &[&str] = &[
    "vim", "vi", "nvim", "nano", "emacs", "less", "more", "top", "htop", "man", "tmux", "screen",
];

/// Why a command is not run because it starts a program that waits for a person at a terminal (`vim notes.md`),
/// which nothing answers in a sandbox.
fn interactive(command: &str) -> Option<String> {
    let code = shell::code_lines(command);
    if let Some(line) = code.lines().find(|l| ASKS_AT_TERMINAL.is_match(l)) {
        return Some(format!(
            "`{}` asks a person at the terminal (the shell's `read`): nothing answers it in a sandbox",
            line.trim()
        ));
    }
    if let Some(m) = WAITS_FOR_INPUT.find(&code) {
        return Some(format!(
            "`{}` waits for a person's input: nothing answers it in a sandbox",
            m.as_str().trim()
        ));
    }
    code.lines().find_map(|line| {
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
    /// An option that has a program wait for a person (`--wait-for-input`, `--interactive`), not one that turns
    /// that off (`--no-interactive`, `--non-interactive`).
    WAITS_FOR_INPUT,
    r"(?:^|\s)--(?:wait-for-(?:input|user|enter|keypress|answer)|interactive)(?:[\s=]|$)"
);

re!(
    /// The shell's `read` asking a person at the terminal: with a prompt (`-p`) or hiding what is typed (`-s`), and
    /// nothing fed to it (a loop over a file's lines, `while read -r l; do … done < f`, reads no person).
    ASKS_AT_TERMINAL,
    r"(?:^|[;&(]\s*|\bthen\s+|\bdo\s+)read\s+(?:-[a-zA-Z]+\s+(?:'[^']*'\s+|\x22[^\x22]*\x22\s+)?)*?-[a-zA-Z]*[ps][a-zA-Z]*\b[^<|\n]*$"
);

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
mod tests;
