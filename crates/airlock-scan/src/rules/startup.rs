//! Writes to files that run later: a shell start-up file, a git hook, a launch agent or user service, a crontab
//! installed from a file, PowerShell's profile, a desktop session's login scripts. Named on one line, maybe in
//! pieces, and written on the same or a later one; settings written there (as a line, or through a name that holds
//! settings only) are the rc rule's lesser class.

#[cfg(test)]
use super::flow::statements;
use super::flow::{mentions, ASSIGN};

/// Start-up files of the scheduler kind: a launch agent, a user service, a cron table, an autostart entry.
const SCHEDULER_FILES: &str = r"LaunchAgents|LaunchDaemons|systemd/user|/etc/cron|\bautostart\b";

re!(SCHEDULED, &format!("(?i){SCHEDULER_FILES}"));

/// Whether the line that names a start-up file names one of the scheduler kind (installed in plain sight, as daemon
/// and sync tools do: `high`, as `persist/scheduler` is).
pub(super) fn scheduled(line: &str) -> bool {
    SCHEDULED.is_match(line)
}

re!(
    OWN_SERVICE_COPY,
    r"^\s*(\$\s+)?(sudo\s+)?(cp|install|ln)\s+(-[\w-]+\s+)*(\./)?[\w.-]+(/[\w.-]+)*\.(plist|service|timer)\b"
);

/// Whether a line copies a launch agent or a user service file of the skill's own (a relative path) into place.
pub(super) fn copies_own_service(line: &str) -> bool {
    OWN_SERVICE_COPY.is_match(line)
}

re!(
    STARTUP,
    &format!(
        r"(?i)(^|[/~'\x22\s(])\.(bashrc|zshrc|bash_profile|bash_login|bash_aliases|bash_completion|zprofile|zshenv|zlogin|profile)\b|\.\$\(basename\s+['\x22]?\$\{{?SHELL\}}?['\x22]?\)rc|\.git/hooks/|{SCHEDULER_FILES}|Startup\\|\.config/fish/(config|conf\.d/)|\.pth['\x22]|\b(sitecustomize|usercustomize)\.py\b|\.ipython/profile_\w+/startup|\.(claude|codex|cursor|gemini|\*)/skills/\*|PowerShell[\\/]+(Microsoft\.\w+_)?profile\.ps1\b|plasma-workspace[\\/]+(env|shutdown)\b|\.config/autostart-scripts\b|(^|[/~'\x22\s(])\.(xprofile|xsessionrc|xinitrc)\b|\bstarship\.toml\b|\.config/nvim/(init\.(lua|vim)|lua/plugins/|plugin/)|\.(vscode|cursor|windsurf|vscode-server)/extensions\b"
    )
);
re!(
    WRITE,
    r#"(?i)\bopen\([^)\n]*['"][aw]\+?['"]|\bopen\(.*,\s*['"][aw]\+?b?['"]\s*\)|>>\s*['"]?\$|>\s*['"]?\$[^\n]*\.pth['"]|\btee\s+-a\b|\.open\(\s*['"][aw]|write_text\(|write_bytes\(|writeFile(Sync)?\(|appendFile(Sync)?\(|\.write\(|copyfile\(|shutil\.copy|\bcurl\b[^\n|]*\s(-o|--output)(\s|=)|\bwget\b[^\n|]*\s(-O|--output-document)(\s|=)|\b(Add-Content|Set-Content|Out-File)\b"#
);
re!(
    /// `crontab FILE` run as a command (at a command's start), or from an argument list: a file installed as the
    /// user's crontab. The word in a sentence (`"(crontab read failed)"`) is not the command.
    CRONTAB_FROM_FILE,
    r#"\[\s*['"]crontab['"]\s*,\s*[^'"\s\-\]][^\]]*\]|(?:^\s*|[;&|]\s*|\bsudo\s+|\b(?:then|do|else)\s+)crontab\s+[^-\s|;&][^\s|;&]*"#
);
re!(
    /// Two string literals next to each other in a list (`'.b', 'ash'`), to read joined.
    LIST_PIECES, r#"(['"])([^'"\n]*)['"]\s*,\s*(['"])([^'"\n]*)(['"])"#);
re!(
    /// A path in the user's home (or where zsh reads its start-up files).
    HOME_MARK, r"~/|\$HOME\b|\$\{HOME\}|/home/|/root/|ZDOTDIR|homedir|Path\.home|expanduser");
re!(
    /// A copy of a file (`cp`, `mv`, `install`, `ln -s`), the target last.
    COPY, r"^\s*(?:sudo\s+)?(?:cp|mv|install|ln|Copy-Item|Move-Item)\s");
re!(PATH_JOIN, r#"['"]\s*\)?\s*/\s*\(?\s*['"]|['"]\s*\+\s*['"]"#);

/// The names `statements` assign a value that is settings only: every line of its text a variable set, an alias, a
/// PATH, a PowerShell option (`export QT_SCALE_FACTOR=1.5`, `Set-PSReadLineOption -PredictionSource History`), in a
/// parenthesised string, a here-string (`$s = @'` … `'@`) or one literal.
fn settings_valued(statements: &[(u32, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < statements.len() {
        let raw = statements[i].1.trim_start().trim_start_matches('$');
        i += 1;
        let Some(c) = ASSIGN.captures(raw) else { continue };
        let name = c[1].to_owned();
        let rhs = super::flow::assigned_value(raw, &c).trim();
        // A PowerShell here-string: its lines up to the closing `'@`.
        let text = if rhs == "@'" || rhs == "@\"" {
            let mut body = Vec::new();
            while i < statements.len() && !statements[i].1.trim_start().starts_with(['\'', '"']) {
                body.push(statements[i].1.clone());
                i += 1;
            }
            i += 1;
            body.join("\n")
        } else {
            // The literals of the value, their escaped line breaks made lines.
            let parts: Vec<String> = STRING_PART
                .captures_iter(rhs)
                .filter_map(|c| c.get(1).or(c.get(2)).map(|m| m.as_str().replace("\\n", "\n")))
                .collect();
            if parts.is_empty()
                || !rhs
                    .trim_start_matches(|c: char| c == '(' || c == 'f' || c == 'r' || c.is_whitespace())
                    .starts_with(['"', '\''])
            {
                continue;
            }
            parts.concat()
        };
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let setting = |l: &str| {
            // A hash literal's `;` (`-Colors @{ Command = 'Cyan'; … }`) separates its entries, not commands.
            let l = &*PS_HASH.replace_all(l, "@{}");
            !l.contains([';', '|', '&', '`'])
                && (super::signs::SETTING_ONLY.is_match(&format!("echo '{l}'")) || PS_SETTING.is_match(l))
        };
        if !lines.is_empty()
            && lines.iter().all(|l| setting(l))
            && !super::signs::FETCHES.is_match(&text)
            && !super::signs::RUNS_CODE_VARIABLE.is_match(&text)
        {
            out.push(name);
        }
    }
    out
}

/// Whether a write puts only a settings-valued name in the file (`Add-Content -Path $p -Value $settings`,
/// `f.write(lines)`, `(env / "x.sh").write_text(lines)`): no other name of the line is what is written.
fn writes_only_settings(raw: &str, settings: &[String]) -> bool {
    settings.iter().any(|n| {
        mentions(raw, n)
            && (raw.contains(&format!("-Value ${n}"))
                || raw.contains(&format!("write({n})"))
                || raw.contains(&format!("write_text({n})"))
                || raw.contains(&format!("writelines({n})")))
    })
}

re!(
    /// A PowerShell hash literal of plain entries (`@{ Command = 'Cyan'; String = 'Green' }`).
    PS_HASH, r"@\{[\w\s=';\x22.-]*\}");
re!(
    /// A file opened in a `with` statement, and its handle's name.
    OPENED_AS, r"\bwith\s+open\s*\([^\n]*\)\s+as\s+([A-Za-z_]\w*)\s*:");
re!(
    /// A string literal's text (`"…"`, `'…'`, an f-string's too).
    STRING_PART, r#""([^"\n]*)"|'([^'\n]*)'"#);
re!(
    /// A PowerShell setting: an option of PSReadLine, a key handler, an alias, a module by name.
    PS_SETTING,
    r"(?i)^(Set-PSReadLineOption|Set-PSReadLineKeyHandler|Set-Alias\s+[\w-]+\s+[\w.-]+$|Import-Module\s+[\w.-]+$)"
);

/// [`startup_writes_in`] of code not yet split into its statements.
#[cfg(test)]
pub(super) fn startup_writes(code: &str, first_line: u32) -> Vec<(u32, u32)> {
    startup_writes_in(&statements(code), first_line)
}

/// Writes to a file that runs later (a shell start-up file, a git hook, a launch agent, a user service, a crontab),
/// in code split into its [`statements`]: named on one line, maybe in pieces (`Path.home() / (".zsh" + "rc")`), and
/// written on the same or a later line: (naming line, writing line).
pub(super) fn startup_writes_in(statements: &[(u32, String)], first_line: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut named: Vec<(String, u32)> = Vec::new();
    // Names assigned text that is settings only (`lines = ("export QT_SCALE_FACTOR=1.5\n" …)`, a PowerShell
    // here-string of `Set-PSReadLineOption` lines): written to a start-up file, they are the rc rule's lesser class.
    // Read only once a start-up file is named (most code names none).
    let settings_names = std::cell::OnceCell::new();
    let settings = || settings_names.get_or_init(|| settings_valued(statements));
    for (offset, raw) in statements {
        let n = first_line + offset;
        // Pieces of a path joined as the program would join them.
        let line = PATH_JOIN.replace_all(raw, "/").into_owned();
        let line = line.replace("//", "/");
        if CRONTAB_FROM_FILE.is_match(raw) && !raw.contains("crontab -l") {
            out.push((n, n));
            continue;
        }
        // Names in pieces of a list (`['.b', 'ash', 'rc'].join('')`) read joined, on the lines that join.
        let joined = || {
            let mut joined = line.clone();
            for _ in 0..4 {
                joined = LIST_PIECES.replace_all(&joined, "$1$2$4$5").into_owned();
            }
            joined
        };
        let here = STARTUP.is_match(&line)
            || STARTUP.is_match(&line.replace('/', ""))
            || line.contains("join(") && STARTUP.is_match(&joined());
        let through = named.iter().find(|(v, _)| mentions(&line, v)).map(|(_, l)| *l);
        let source = if here { Some(n) } else { through };
        let Some(source) = source else { continue };
        // A setting written to a start-up file (`echo 'export PATH=…' >> "$RC"`) is the rc rule's lesser class.
        let setting_only = (super::signs::SETTING_ONLY.is_match(raw)
            && !super::signs::RUNS_AT_PROMPT.is_match(raw)
            && !super::signs::FETCHES.is_match(raw))
            || writes_only_settings(raw, settings());
        // A copy into it (`cp qol.py "$dest/00-qol.py"`): the start-up file or folder is the last word.
        let copied_into = COPY.is_match(raw)
            && raw.split_whitespace().last().is_some_and(|last| {
                let last = last.trim_matches(['"', '\'']);
                // A backup of a start-up file (`~/.bashrc.bak`) does not run.
                let backup = [".bak", ".orig", ".backup", ".old", ".save", "~"]
                    .iter()
                    .any(|b| last.ends_with(b));
                // A hook copied into a repository is `persist/git-hook`'s (`high`, in plain sight); a start-up file
                // copied into a project (`cp templates/.zshrc "$PROJECT/.zshrc"`) is a template, not the user's.
                let hook = last.contains(".git/hooks/");
                let home = |text: &str| HOME_MARK.is_match(text);
                let named_home = named.iter().any(|(v, at)| {
                    mentions(last, v)
                        && statements
                            .iter()
                            .find(|(o, _)| first_line + o == *at)
                            .is_some_and(|(_, text)| home(text))
                });
                !backup && !hook && (STARTUP.is_match(last) && home(last) || named_home)
            });
        // A file opened to append (`with open(rc, "a") as fh:`) whose every write after it is a settings-valued name
        // (`fh.write(lines)`) takes settings only.
        let opened_for_settings = OPENED_AS.captures(raw).is_some_and(|c| {
            let handle = &c[1];
            let writes: Vec<&String> = statements
                .iter()
                .filter(|(o, s)| *o > *offset && mentions(s, handle) && s.contains(".write"))
                .map(|(_, s)| s)
                .collect();
            !writes.is_empty() && writes.iter().all(|s| writes_only_settings(s, settings()))
        });
        if (WRITE.is_match(&line) || copied_into) && !setting_only && !opened_for_settings {
            out.push((source, n));
        }
        // PowerShell's variables are assigned with their `$` (`$target = Join-Path $docs 'PowerShell\…profile.ps1'`).
        if let Some(c) = ASSIGN.captures(raw.trim_start().trim_start_matches('$')) {
            named.push((c[1].to_owned(), source));
        }
        // A loop variable over names of start-up files (`for name in (".zsh" + "rc", …)`).
        if let Some(var) = raw
            .trim_start()
            .strip_prefix("for ")
            .and_then(|r| r.split_whitespace().next())
        {
            named.push((var.trim_end_matches(',').to_owned(), source));
        }
    }
    out
}
