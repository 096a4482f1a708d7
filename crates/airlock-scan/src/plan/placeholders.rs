//! The placeholders of a command copied from documentation: the skill's folder and the project as agents fill them
//! in (`{baseDir}`, `~/.claude/skills/NAME/`, `<project-root>`, `$REPO`), and the ones that make a command an
//! example to adapt (`<file>`, `[options]`, `YOUR_API_KEY`), with the programs that wait for a terminal.

use super::*;

/// The names agents give the skill's own folder in the commands they are shown (`{baseDir}` and the like): they
/// fill it in, so the plan does too, with the sandbox's `$SKILL_DIR`.
pub(super) const SKILL_DIR_PLACEHOLDERS: &[&str] = &[
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
    pub(super) SKILL_FOLDER_PLACEHOLDER,
    r"(?i)(?:<[\w-]*skill[\w-]*>|\{[\w-]*skill[\w-]*\})/"
);

re!(
    /// The skill's folder named bare at a path's start, as a word of its own (`SKILL_DIR/scripts/x.py`, not
    /// `$SKILL_DIR/` or `MY_SKILL_DIR/`).
    BARE_SKILL_DIR,
    r#"(^|[\s'"=(])(?:SKILL_DIR|SKILL_ROOT|SKILL_PATH|BASE_DIR|skill_dir)/"#
);

/// Where a run puts the target, the project a skill works on.
pub const TARGET_DIR: &str = "/workspace";

re!(
    /// A placeholder that stands for the project the skill works on (`<project-root>`, `<path-to-repo>`,
    /// `{repo_path}`, `/path/to/project`), with what follows it (the end of a word).
    pub(super) PROJECT_PLACEHOLDER,
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
    pub(super) PROJECT_VARIABLE,
    r"\$(?:\{((?:REPO|PROJECT|WORKSPACE|GIT)_(?:ROOT|DIR|PATH)|REPO|PROJECTROOT|WORKSPACE)\}|((?:REPO|PROJECT|WORKSPACE|GIT)_(?:ROOT|DIR|PATH)|REPO|PROJECTROOT|WORKSPACE)(?-u:\b))"
);

/// Whether a command sets a variable itself (`NAME=…`, `export NAME=…`, `read NAME`, `for NAME in`).
pub(super) fn sets_variable(command: &str, name: &str) -> bool {
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
        replace_pattern(replaced, &root, "$$SKILL_DIR$1")
    };
    let replaced = SKILL_FOLDER_PLACEHOLDER
        .replace_all(&replaced, "$$SKILL_DIR/")
        .into_owned();
    // The name written bare as a path's start (`python3 SKILL_DIR/scripts/x.py`), as instructions write what the
    // agent fills in.
    let replaced = BARE_SKILL_DIR
        .replace_all(&replaced, "$1$$SKILL_DIR/")
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
        replace_pattern(replaced, &own, "$1$$SKILL_DIR/$2")
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
        agent_dirs(),
        regex::escape(skill_name)
    );
    let replaced = replace_pattern(replaced, &installed, "$$SKILL_DIR$1");
    // The same folder in the project (`cd .pi/skills/NAME`, `.claude/skills/NAME/run.sh`), where an agent installs
    // a project's skills: the name must end there (`NAME-other` is another skill).
    let relative = format!(
        r#"(^|[\s'"=(]|\./)(?:{})/skills/{}(/|$|[\s'";&|)])"#,
        agent_dirs(),
        regex::escape(skill_name)
    );
    replace_pattern(replaced, &relative, "$1$$SKILL_DIR$2")
}

/// `text` with every match of `pattern` replaced by `with`; a pattern that does not compile changes nothing.
fn replace_pattern(text: String, pattern: &str, with: &str) -> String {
    match Regex::new(pattern) {
        Ok(re) => re.replace_all(&text, with).into_owned(),
        Err(_) => text,
    }
}

/// [`AGENT_DIRS`] as alternatives of a regular expression.
fn agent_dirs() -> String {
    AGENT_DIRS
        .iter()
        .map(|a| regex::escape(a))
        .collect::<Vec<_>>()
        .join("|")
}

/// Why a command its block's label shows as an attack is not a step: the start of its `example` reason.
pub const SHOWN_AS_AN_ATTACK: &str = "an example shown as an attack or as what not to do";

re!(
    /// `python -m unittest` of a test file in the skill's folder (`python3 -m unittest $SKILL_DIR/tests/test_x.py`).
    pub(super) UNITTEST_IN_SKILL,
    r"(?m)^(\s*)(python3?\s+-m\s+unittest(?:\s+-\w+)*)\s+\$SKILL_DIR/(\S+\.py)"
);

/// The folders agents keep their skills in, in the home folder or a project.
pub(super) const AGENT_DIRS: &[&str] = &[
    ".agent",
    ".claude",
    ".codex",
    ".agents",
    ".cursor",
    ".gemini",
    ".pi",
    ".opencode",
    ".config/opencode",
    ".config/goose",
    ".copilot",
    ".github",
    ".kiro",
    ".qwen",
    ".windsurf",
    ".factory",
    ".openclaw",
];

pub(super) static PLACEHOLDER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        <[\p{L}_][\w\ .-]*>                        # <file>, <input.pdf>, <ルート issue 番号>
        | <[A-Za-z_][\w.-]*(?:\|[\w.-]+)+>          # <file|directory|->: a choice to make
        | <[A-Za-z_][\w.-]*(?:\[[^\]<>\n]*\])+[\w.-]*>  # <file.jsonl[.gz|.zst]>: a part that may be left out
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
    if let Some(value) = metavar_value(&unquoted) {
        return Some(value);
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
        .filter(|c| !c.get(6).is_some_and(|rest| rest.as_str().contains("</")))
        .and_then(|c| (1..=5).find_map(|i| c.get(i)))
        .map(|m| m.as_str().to_owned())
}

re!(
    /// An option with a word in capitals as its value (`--profile PROFILE`, `-o FILE`).
    OPTION_CAPS_VALUE,
    r"(?:^|\s)--?([A-Za-z][\w-]*)[\s=]([A-Z][A-Z0-9_]*)(?:\s|$)"
);

/// The names usage lines give an option's value (argparse's metavars and their like), standing for what the user
/// fills in.
const METAVARS: &[&str] = &[
    "FILE", "PATH", "DIR", "URL", "NAME", "ID", "NUM", "COUNT", "QUERY", "TEXT", "VALUE", "KEY", "TOKEN",
    "OUTPUT", "INPUT", "HOST", "USER", "EMAIL", "DATE", "MESSAGE", "TITLE", "PROFILE", "PROJECT", "REPO",
    "BRANCH", "TAG",
];

/// The value of an option that is its own name in capitals (`--profile PROFILE`, `--output-dir OUTPUT_DIR`, as
/// argparse prints a usage line) or a usage line's name for a value (`--config FILE`), not a value of its own
/// (`--method GET`, `--level DEBUG`).
fn metavar_value(command: &str) -> Option<String> {
    OPTION_CAPS_VALUE.captures_iter(command).find_map(|c| {
        let own = c[1].to_uppercase().replace('-', "_");
        let value = &c[2];
        (value == own || METAVARS.contains(&value)).then(|| value.to_owned())
    })
}

re!(
    /// An optional argument of a usage line, as a word of its own: `[WORKSPACE_ROOT]`, `[--project=<path>]`,
    /// `[--limit N]` (not a shell test, `[ -f x ]`, which has a space after its bracket).
    OPTIONAL_ARGUMENT,
    r"(?m)[ \t]+\[(?:[A-Za-z_][\w-]*(?:…|\.\.\.)?|--?[A-Za-z][^\]\n]*)\](?:[ \t]|$)"
);

/// The command with its optional arguments left out, and those arguments, when it has some and nothing else in it
/// is a placeholder (`bash scripts/check.sh [WORKSPACE_ROOT]` runs as `bash scripts/check.sh`).
pub(super) fn without_optional(command: &str) -> Option<(String, Vec<String>)> {
    if command.lines().filter(|l| !l.trim().is_empty()).count() != 1 {
        return None;
    }
    let mut dropped = Vec::new();
    let mut bare = command.to_owned();
    while let Some(m) = OPTIONAL_ARGUMENT.find(&bare) {
        dropped.push(format!("`{}`", m.as_str().trim()));
        let keep = if m.as_str().ends_with([' ', '\t']) {
            " "
        } else {
            ""
        };
        bare.replace_range(m.range(), keep);
    }
    let bare = bare.trim_end().to_owned();
    (!dropped.is_empty() && placeholder(&bare).is_none()).then_some((bare, dropped))
}

re!(
    /// A line that is one placeholder in angle brackets, or a list item that is one (`- <what changed>`): with a
    /// space and no attribute (`<brief description>`), or in letters beyond ASCII (`<変更内容の要約>`).
    pub(super) PLACEHOLDER_LINE,
    r#"(?m)^[ \t]*(?:[-*][ \t]+)?<(?:[\p{L}_][^<>="\n]*[ \t][^<>="\n]*|[^<>="\n]*[^\x00-\x7F][^<>="\n]*)>[ \t]*$"#
);

re!(
    /// A quoted argument that is one placeholder, whole: `"<change>"`, `'<spec-name>'`.
    pub(super) WHOLE_QUOTED_PLACEHOLDER, r#"\s['"](<[A-Za-z_][\w.-]*>|\{[a-z][a-z0-9]*_[a-z0-9_]*\})['"](?:\s|$)"#);

re!(
    /// An option's quoted value with a name in braces in it: the option and the name (`-m "x: {batch_summary}"`).
    pub(super) BRACED_IN_OPTION, r#"\s(--?[\w-]+[ =])['"][^'"]*?(\{[a-z_][a-z0-9_]{2,}\})"#);

/// A placeholder inside a quoted argument: one that starts an address or path, follows `://`, or is named as one.
pub(super) static QUOTED_PLACEHOLDER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?x)
        ['"] (<[A-Za-z_][\w.-]*> | \{[A-Za-z_]\w*\}) [/:]       # "<baseUrl>/api", '{host}:8080'
        | :// (<[A-Za-z_][\w.-]*> | \{[A-Za-z_]\w*\})           # "https://<host>/x"
        | ['"][^'"\s<>]*/ (<[A-Za-z_][\w.-]*>)                   # ".codex/runs/<timestamp>-<name>": a path's part
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
pub(super) fn detached(part: &str) -> bool {
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
