//! A fenced shell block split into the commands a terminal would run: a compound command (`if ... fi`, a loop, a
//! `case`, a function, a here-document, a line continued with `\`, `&&` or `|`) is one command, not one per line;
//! and a block whose commands share state (a variable set for later lines, `cd`, `$!`, a function) is one script.

/// One command of a block: the line it starts on (from 0, within the block) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unit {
    pub line: usize,
    pub last: usize,
    pub text: String,
}

/// What carries over from one line to the next while a command is open.
#[derive(Default)]
struct Open {
    quote: Option<char>,
    /// Open `if`/loops/`case`/braces.
    depth: i32,
    parens: i32,
    /// The here-document terminators still to come, in order.
    heredocs: Vec<String>,
    /// The line ended with an operator that needs another command (`&&`, `||`, `|`) or a `\`.
    continued: bool,
}

impl Open {
    fn closed(&self) -> bool {
        self.quote.is_none()
            && self.depth <= 0
            && self.parens <= 0
            && self.heredocs.is_empty()
            && !self.continued
    }
}

const OPENERS: &[&str] = &["if", "for", "while", "until", "case", "select"];
const CLOSERS: &[&str] = &["fi", "done", "esac"];
/// Words after which the next word starts a command.
const LEADING: &[&str] = &["then", "do", "else", "elif", "!", "time", "{", "("];

/// Ends the word being read: a keyword at a command's start opens or closes a compound command.
fn finish_word(word: &mut String, command_position: &mut bool, open: &mut Open) {
    if word.is_empty() {
        return;
    }
    let w = std::mem::take(word);
    if *command_position {
        if OPENERS.contains(&w.as_str()) || w == "{" {
            open.depth += 1;
        } else if CLOSERS.contains(&w.as_str()) || w == "}" {
            open.depth = (open.depth - 1).max(0);
        }
        // After an assignment before the command (`A=1 make`), the command comes next.
        *command_position = LEADING.contains(&w.as_str())
            || OPENERS.contains(&w.as_str()) && w != "case"
            || w.contains('=') && !w.starts_with('=');
    } else if w == "{" {
        // `name() {` or `function name {`: a function's body.
        open.depth += 1;
    }
}

/// Reads one line of code (not a here-document's body) into `open`.
fn scan_line(line: &str, open: &mut Open) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut word = String::new();
    let mut command_position = open.quote.is_none();
    let mut last_operator = false;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = open.quote {
            if c == '\\' && q == '"' {
                i += 2;
                continue;
            }
            if c == q {
                open.quote = None;
            }
            word.push(c);
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                if i + 1 == chars.len() {
                    finish_word(&mut word, &mut command_position, open);
                    open.continued = true;
                    return;
                }
                word.push(c);
                if let Some(n) = chars.get(i + 1) {
                    word.push(*n);
                }
                i += 2;
                last_operator = false;
                continue;
            }
            '\'' | '"' | '`' => {
                open.quote = Some(c);
                word.push(c);
            }
            '#' if word.is_empty() => {
                break;
            }
            ' ' | '\t' => finish_word(&mut word, &mut command_position, open),
            ';' | '&' | '|' => {
                finish_word(&mut word, &mut command_position, open);
                command_position = true;
                last_operator = c != ';'
                    && !(c == '&'
                        && chars.get(i + 1) != Some(&'&')
                        && chars.get(i.wrapping_sub(1)) != Some(&'&'));
                i += 1;
                continue;
            }
            '(' => {
                if word.ends_with('$') || word.is_empty() || word.ends_with('<') || word.ends_with('>') {
                    open.parens += 1;
                }
                if word.is_empty() {
                    command_position = true;
                } else {
                    word.push(c);
                }
            }
            ')' => {
                if open.parens > 0 {
                    open.parens -= 1;
                } else if word.is_empty() || !word.contains('(') {
                    // A `case` pattern's `)`: the command comes after it.
                    finish_word(&mut word, &mut command_position, open);
                    command_position = true;
                    i += 1;
                    continue;
                }
                word.push(c);
            }
            '<' if chars.get(i + 1) == Some(&'<') && chars.get(i + 2) != Some(&'<') => {
                finish_word(&mut word, &mut command_position, open);
                let mut j = i + 2;
                if chars.get(j) == Some(&'-') {
                    j += 1;
                }
                while chars.get(j).is_some_and(|c| *c == ' ') {
                    j += 1;
                }
                let rest: String = chars[j..].iter().collect();
                let marker: String = rest
                    .trim_start_matches(['\'', '"'])
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                    .collect();
                if !marker.is_empty() {
                    open.heredocs.push(marker.clone());
                    let quoted = usize::from(rest.starts_with(['\'', '"'])) * 2;
                    i = j + marker.chars().count() + quoted;
                    last_operator = false;
                    continue;
                }
                word.push_str("<<");
                i += 2;
                continue;
            }
            _ => word.push(c),
        }
        if !c.is_whitespace() {
            last_operator = false;
        }
        i += 1;
    }
    finish_word(&mut word, &mut command_position, open);
    open.continued = last_operator;
}

/// Splits the text of a fenced block into commands. `prompts`: only lines after a `$ ` prompt are commands (a
/// `console` block whose other lines are output).
pub(super) fn units(text: &str, prompts: bool) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut current: Option<Unit> = None;
    let mut open = Open::default();
    for (n, raw) in text.lines().enumerate() {
        let mut line = raw.trim_end();
        if let Some(unit) = current.as_mut() {
            // Inside a here-document: its body is data, to its terminator.
            if let Some(marker) = open.heredocs.first() {
                let end = line.trim() == marker;
                unit.text.push('\n');
                unit.text.push_str(line);
                unit.last = n;
                if end {
                    open.heredocs.remove(0);
                    if open.closed() {
                        out.extend(current.take());
                        open = Open::default();
                    }
                }
                continue;
            }
            let joined_by_backslash = unit.text.ends_with('\\');
            if joined_by_backslash {
                unit.text.pop();
                unit.text.truncate(unit.text.trim_end().len());
                unit.text.push(' ');
                unit.text.push_str(line.trim_start());
            } else {
                unit.text.push('\n');
                unit.text.push_str(line);
            }
            unit.last = n;
        } else {
            let trimmed = line.trim_start();
            let after_prompt = trimmed
                .strip_prefix("$ ")
                .or_else(|| (trimmed == "$").then_some(""));
            if prompts {
                match after_prompt {
                    Some(rest) => line = rest,
                    None => continue,
                }
            } else {
                line = after_prompt.unwrap_or(trimmed);
            }
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            current = Some(Unit {
                line: n,
                last: n,
                text: line.to_owned(),
            });
        }
        scan_line(line, &mut open);
        if open.closed() {
            out.extend(current.take());
            open = Open::default();
        }
    }
    out.extend(current);
    for unit in &mut out {
        unit.text = unit.text.trim_end().to_owned();
    }
    out
}

/// Whether the commands of a block depend on one another: a variable set for later lines, a `cd` or `pushd`, a
/// sourced file, a function defined, `$!` of a command started before, shell options set.
pub(super) fn shares_state(units: &[Unit]) -> bool {
    units.len() > 1
        && units.iter().any(|u| {
            // `SESSION=claude-python  # a comment`: what the comment says is not part of the assignment.
            let t = without_comment(u.text.trim_start());
            let t = t.as_str();
            let first = t.split_whitespace().next().unwrap_or_default();
            let assignment_only = t
                .split_whitespace()
                .all(|w| w.contains('=') && !w.starts_with(['-', '=']))
                || first.split_once('=').is_some_and(|(name, _)| {
                    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                }) && t.contains("=$(");
            assignment_only
                || matches!(
                    first,
                    "cd" | "pushd"
                        | "source"
                        | "."
                        | "export"
                        | "set"
                        | "trap"
                        | "alias"
                        | "read"
                        | "function"
                        | "shopt"
                        | "local"
                        | "declare"
                )
                || t.contains("$!")
                || t.contains("() {")
                || t.contains("(){")
        })
}

re!(
    /// A line that runs a command only when a test holds: `[ -f "$X" ] && bash "$X"`, `[[ -d x ]] && cd x`.
    GUARDED, r#"^(\s*)(\[\[\s[^\n]*?\s\]\]|\[\s[^\]\n]*\s\])\s*&&\s*([^\n]+)$"#);

/// The command with each `TEST && COMMAND` line written as `if TEST; then COMMAND; fi`, which is what its author
/// means: a test that does not hold skips the command, it is not a failure (the `&&` form exits 1 then). Only a
/// line with one command after the test (no `||`, `&&`, `;` or `&` in it) is rewritten. Whether any was.
pub(super) fn guard_tests(command: &str) -> (String, bool) {
    let mut changed = false;
    let lines: Vec<String> = command
        .lines()
        .map(|line| match GUARDED.captures(line) {
            Some(c)
                if !c[3].contains("||")
                    && !c[3].contains("&&")
                    && !c[3].contains(';')
                    && !c[3].trim_end().ends_with('&') =>
            {
                changed = true;
                format!("{}if {}; then {}; fi", &c[1], &c[2], c[3].trim_end())
            }
            _ => line.to_owned(),
        })
        .collect();
    (lines.join("\n"), changed)
}

re!(
    /// A one-line command whose last part is a search (`pip freeze | grep -E "pytest|ruff"`, `grep -n TODO src/x`).
    SEARCH_LAST, r#"(^|\|)\s*(grep|egrep|fgrep|rg|ag)\s[^|]*$"#);

re!(QUOTED_TEXT, r#""[^"]*"|'[^']*'"#);

/// The command written so that a search that finds nothing (exit 1: an answer, "none") is not a failure, while an
/// error (exit 2) still is: `{ CMD; } || [ $? -eq 1 ]`. Only a one-line command that ends in a search, with no `&&`,
/// `||`, `;` or `&` of its own. Whether it was rewritten.
pub(super) fn search_may_find_nothing(command: &str) -> (String, bool) {
    let code = without_comment(command.trim());
    // What is quoted is a pattern or a name (`grep -E "a|b"`), not the shell's.
    let bare = QUOTED_TEXT.replace_all(&code, "Q");
    if command.trim().contains('\n')
        || bare.contains("&&")
        || bare.contains("||")
        || bare.contains(';')
        || bare.trim_end().ends_with('&')
        || !SEARCH_LAST.is_match(&bare)
    {
        return (command.to_owned(), false);
    }
    (format!("{{ {}; }} || [ $? -eq 1 ]", code.trim()), true)
}

re!(
    /// A listing of a name pattern with its errors thrown away (`ls LICENSE* 2>/dev/null`): a check whether any such
    /// file is there, where "none" is GNU `ls`'s exit 2.
    LISTING_PROBE, r#"^\s*ls\s+(-\w+\s+)*[^\s|;&<>]*[*?][^\s|;&<>]*(\s+[^\s|;&<>]*[*?][^\s|;&<>]*)*\s+2>\s*/dev/null\s*$"#);

/// A listing that may find nothing (`ls LICENSE* 2>/dev/null`), written so that "none" is an answer:
/// `{ CMD; } || [ $? -eq 2 ]`. Whether it was rewritten.
pub(super) fn listing_may_find_nothing(command: &str) -> (String, bool) {
    let code = without_comment(command.trim());
    if command.trim().contains('\n') || !LISTING_PROBE.is_match(&code) {
        return (command.to_owned(), false);
    }
    (format!("{{ {}; }} || [ $? -eq 2 ]", code.trim()), true)
}

/// A command as the shell runs it, to tell two copies of one apart from two commands: each line without its
/// comment, its words joined by single spaces.
pub(super) fn as_run(command: &str) -> String {
    command
        .lines()
        .map(|l| {
            without_comment(l)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line without its trailing comment (a `#` that starts a word, outside quotes).
fn without_comment(line: &str) -> String {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (at, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && prev.is_whitespace() => return line[..at].trim_end().to_owned(),
            None => {}
        }
        prev = c;
    }
    line.to_owned()
}

/// A command that starts a server or watcher that runs until stopped (a dev server, `http.server`, `--watch`),
/// and so never finishes in a plain run, unless the block sends it to the background.
pub(super) fn server(code: &str) -> Option<String> {
    code.lines().find_map(|line| {
        let l = line.trim();
        if l.ends_with('&') {
            return None;
        }
        SERVER.find(l).map(|m| {
            format!(
                "a server that runs until it is stopped (`{}`): a plain run would only reach its time limit",
                m.as_str().trim()
            )
        })
    })
}

re!(
    SERVER,
    r"(?x)
    \b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|preview|watch)\b
    | \b(?:npx\s+)?(?:vite|next|nuxt|astro|wrangler|remix|ng)\s+(?:dev|serve|start)\b
    | \bpython3?\s+-m\s+http\.server\b
    | \b(?:uvicorn|gunicorn|hypercorn)\s+\S
    | \b(?:flask|streamlit|gradio)\s+run\b
    | \bjupyter\s+(?:lab|notebook)\b
    | \bhugo\s+server\b
    | \bdocker\s+compose\s+up\b(?:[^-\n]|-[^d\n])*$
    | \s--watch\b
    | \btail\s+-f\b
    | \b(?:python3?|node|uv\s+run\s+python3?|bun|deno\s+run)\s+(?:-\S+\s+)*\S*(?:server|serve|api|app)\S*\.(?:py|js|mjs|ts)\b[^\n]*\s--(?:port|listen)[\s=]\d+"
);

/// Variables every sandbox run has, and the shell's own.
const KNOWN_VARIABLES: &[&str] = &[
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "TERM",
    "TMPDIR",
    "PWD",
    "OLDPWD",
    "SKILL_DIR",
    "AIRLOCK_SANDBOX",
    "HOSTNAME",
    "RANDOM",
    "SECONDS",
    "LINENO",
    "BASH_SOURCE",
    "PIPESTATUS",
    "REPLY",
    "IFS",
    "PYTHONPATH",
    "NODE_PATH",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "NO_PROXY",
    "PPID",
    "UID",
    "EUID",
    "GROUPS",
    "BASHPID",
    "BASH",
    "BASH_VERSION",
    "BASH_REMATCH",
    "SHLVL",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "FUNCNAME",
    "OPTARG",
    "OPTIND",
    "COLUMNS",
    "LINES",
    "PS1",
    "PS4",
    "EPOCHSECONDS",
];

re!(VARIABLE_USE, r"\$\{?([A-Za-z_][A-Za-z0-9_]*)|\$([!1-9])");
re!(
    VARIABLE_SET,
    r"(?:^|[\s;&|(])(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b|\bread\s+(?:-\w+\s+)*([A-Za-z_][A-Za-z0-9_]*)"
);

/// A fragment: a command that uses a variable nothing in it sets and no sandbox has (`kill $VIEWER_PID`, where an
/// earlier block started the viewer; `$1` outside a script; `$!` with nothing started in the background).
pub(super) fn unset_variable(code: &str) -> Option<String> {
    let set: Vec<&str> = VARIABLE_SET
        .captures_iter(code)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)))
        .map(|m| m.as_str())
        .collect();
    let mut quote_single = false;
    let mut unquoted = String::with_capacity(code.len());
    for c in code.chars() {
        if c == '\'' {
            quote_single = !quote_single;
        } else if !quote_single {
            unquoted.push(c);
        }
    }
    VARIABLE_USE.captures_iter(&unquoted).find_map(|c| {
        if let Some(special) = c.get(2) {
            let ok = special.as_str() == "!" && code.contains('&');
            return (!ok).then(|| {
                format!(
                    "a fragment: it uses ${}, which only a longer script would set",
                    special.as_str()
                )
            });
        }
        let name = c.get(1)?.as_str();
        // `${NAME:-default}` has its own default.
        let after = &unquoted[c.get(0)?.end()..];
        if after.starts_with(":-") || after.starts_with(":=") || after.starts_with('-') && c.get(0)?.as_str().contains('{') {
            return None;
        }
        let known = KNOWN_VARIABLES.contains(&name) || set.contains(&name);
        (!known).then(|| format!("it uses ${name}, which nothing before it sets in the sandbox (a fragment of a longer script, or a value to provide)"))
    })
}

/// The lines of a command that are code (a here-document's body left out): where placeholders are looked for.
pub(super) fn code_lines(text: &str) -> String {
    let mut out = String::new();
    let mut pending: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(marker) = pending.first() {
            if line.trim() == marker {
                pending.remove(0);
            }
            continue;
        }
        let mut open = Open::default();
        scan_line(line, &mut open);
        pending = open.heredocs;
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_search_that_finds_nothing_is_an_answer() {
        let (c, changed) = super::listing_may_find_nothing("ls LICENSE* 2>/dev/null");
        assert!(changed);
        assert_eq!(c, "{ ls LICENSE* 2>/dev/null; } || [ $? -eq 2 ]");
        for kept in [
            "ls LICENSE*",
            "ls -la 2>/dev/null",
            "ls x* 2>/dev/null | wc -l",
            "ls x* 2>/dev/null && rm x*",
        ] {
            assert_eq!(
                super::listing_may_find_nothing(kept),
                (kept.to_owned(), false),
                "{kept}"
            );
        }
        let (c, changed) = super::search_may_find_nothing("pip freeze | grep -E \"(pytest|ruff)\"");
        assert!(changed);
        assert_eq!(c, "{ pip freeze | grep -E \"(pytest|ruff)\"; } || [ $? -eq 1 ]");
        for kept in [
            "grep -q x f && echo y",
            "ls | head",
            "grep a f\ngrep b f",
            "grep x f; echo done",
        ] {
            assert_eq!(
                super::search_may_find_nothing(kept),
                (kept.to_owned(), false),
                "{kept}"
            );
        }
    }

    use super::*;

    fn texts(block: &str) -> Vec<String> {
        units(block, false).into_iter().map(|u| u.text).collect()
    }

    #[test]
    fn compound_commands_are_one_command() {
        let block = "# set up\nif [ -f x ]; then\n  echo yes\nelse\n  echo no\nfi\nfor f in *.md; do\n  wc -l \"$f\"\ndone\nls";
        assert_eq!(
            texts(block),
            [
                "if [ -f x ]; then\n  echo yes\nelse\n  echo no\nfi",
                "for f in *.md; do\n  wc -l \"$f\"\ndone",
                "ls"
            ]
        );
        assert_eq!(
            texts("cat > a.txt <<'EOF'\nif this is data\n$ not a prompt\nEOF\necho done"),
            [
                "cat > a.txt <<'EOF'\nif this is data\n$ not a prompt\nEOF",
                "echo done"
            ]
        );
        assert_eq!(
            texts("make build &&\n  make test\nls |\n  wc -l"),
            ["make build &&\n  make test", "ls |\n  wc -l"]
        );
        assert_eq!(
            texts("python3 x.py \\\n  --in a \\\n  --out b\nls"),
            ["python3 x.py --in a --out b", "ls"]
        );
        assert_eq!(
            texts("case \"$1\" in\n  start) run ;;\n  *) echo no ;;\nesac\necho after"),
            [
                "case \"$1\" in\n  start) run ;;\n  *) echo no ;;\nesac",
                "echo after"
            ]
        );
        assert_eq!(
            texts("greet() {\n  echo hi\n}\ngreet"),
            ["greet() {\n  echo hi\n}", "greet"]
        );
        assert_eq!(texts("echo 'a\nb'\nls"), ["echo 'a\nb'", "ls"]);
        assert_eq!(
            texts("x=$(ls |\n  wc -l)\necho $x"),
            ["x=$(ls |\n  wc -l)", "echo $x"]
        );
        assert_eq!(
            texts("if true; then echo a; fi\nls # done\necho if"),
            ["if true; then echo a; fi", "ls # done", "echo if"]
        );
        assert_eq!(texts("sleep 1 &\necho started"), ["sleep 1 &", "echo started"]);
    }

    #[test]
    fn console_blocks_run_only_what_follows_a_prompt() {
        let block = "$ ls\nREADME.md  src\n$ echo hi\nhi";
        assert_eq!(
            units(block, true).into_iter().map(|u| u.text).collect::<Vec<_>>(),
            ["ls", "echo hi"]
        );
    }

    #[test]
    fn blocks_that_share_state_are_one_script() {
        assert!(shares_state(&units(
            "python3 -m http.server 8000 &\nVIEWER_PID=$!\ncurl localhost:8000\nkill $VIEWER_PID",
            false
        )));
        assert!(shares_state(&units("cd my-app\nnpm test", false)));
        assert!(shares_state(&units("OUT=$(mktemp -d)\nls $OUT", false)));
        assert!(!shares_state(&units("ls\necho hi", false)));
        assert!(!shares_state(&units("FOO=1 make build\nmake test", false)));
    }

    #[test]
    fn fragments_use_what_they_do_not_set() {
        for cmd in [
            "kill $VIEWER_PID 2>/dev/null",
            "cat \"$1\"",
            "wait $!",
            "curl -H \"x: $API_KEY\" localhost",
        ] {
            assert!(unset_variable(cmd).is_some(), "{cmd}");
        }
        for cmd in [
            "echo $HOME",
            "kill -9 $PPID; exit 0",
            "ls $SKILL_DIR/scripts",
            "X=1; echo $X",
            "for f in *.md; do wc -l $f; done",
            "echo ${NAME:-world}",
            "sleep 5 &\nwait $!",
            "awk '{print $1}' data.txt",
            "OUT=$(mktemp -d)\nls $OUT",
        ] {
            assert_eq!(unset_variable(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn servers_are_not_waited_for() {
        for cmd in [
            "npm run dev",
            "python3 -m http.server 8000",
            "streamlit run app.py",
            "npx wrangler dev",
            "pnpm dev",
            "tsc --watch",
        ] {
            assert!(server(cmd).is_some(), "{cmd}");
        }
        for cmd in [
            "npm run build",
            "python3 -m http.server 8000 &",
            "npm test",
            "devtool run",
            "wrangler deploy",
        ] {
            assert_eq!(server(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn a_here_document_body_is_not_code() {
        assert_eq!(
            code_lines("cat > x.html <<EOF\n<title>{name}</title>\nEOF\necho <file>"),
            "cat > x.html <<EOF\necho <file>\n"
        );
    }

    #[test]
    fn assignments_with_a_comment_make_one_script_of_the_block() {
        let block = "SOCKET_DIR=${TMPDIR:-/tmp}/s  # well-known dir\nmkdir -p \"$SOCKET_DIR\"\nSESSION=py   # a name\necho \"$SESSION\"\n";
        assert!(shares_state(&units(block, false)));
        assert_eq!(without_comment("X='a # b' # note"), "X='a # b'");
    }

    #[test]
    fn a_test_then_a_command_skips_the_command_when_the_test_does_not_hold() {
        let (c, changed) = guard_tests("X=1\n[ -f \"$X\" ] && bash \"$X\" --root .\n[[ -d out ]] && ls out");
        assert!(changed);
        assert_eq!(
            c,
            "X=1\nif [ -f \"$X\" ]; then bash \"$X\" --root .; fi\nif [[ -d out ]]; then ls out; fi"
        );
        // A chain with more after it is left as written.
        assert!(!guard_tests("[ -f x ] && a || b").1);
        assert!(!guard_tests("[ -f x ] && a; b").1);
        assert!(!guard_tests("echo [ x ] && y").1);
    }
}
