//! The small readings of a line that [`super::lesser`] rests on: what is quoted, what only lists or names, what a
//! key or a path is used for, each a regular expression or a predicate over one line.

use super::*;

re!(
    /// An installed tool's completion script added to a shell start-up file: `gh completion -s bash >> ~/.bashrc`,
    /// `echo 'eval "$(uv generate-shell-completion zsh)"' >> ~/.zshrc`, `echo 'source <(kubectl completion bash)'
    /// >> ~/.bashrc`. The tool is named bare (not a path a skill could have planted).
    pub(super) COMPLETION,
    r#"(?i)^\s*(?:\$\s+)?(?:(?P<a>[\w.-]+)(?:\s+[\w-]+)?\s+(?:completions?|generate-shell-completion|shell-completions?)\b[^|;&`$]*>>|(?:echo|printf)\s+['"]\s*(?:eval\s+\\?"?\$\(|source\s+<\(|\.\s+<\()\s*(?P<b>[\w.-]+)(?:\s+[\w-]+)?\s+(?:completions?|generate-shell-completion|shell-completions?)\b[^)$`;|&]*\)\s*\\?"?\s*['"]\s*>>)"#
);
re!(
    /// Encoded text or a decoder: what a completion line must not carry.
    pub(super) ENCODED, r"(?i)base64|\\x[0-9a-f]{2}|xxd|openssl\s+enc");
re!(
    /// Lines naming a token filtered out of what is shown: `| grep -v authToken`, `| grep -v _auth`.
    pub(super) TOKENS_FILTERED_OUT, r#"(?i)\|\s*grep\s+(?:-\w*v\w*|--invert-match)\s+['"]?[^|'"]*(?:token|_auth|password|secret)"#);
re!(
    /// A deletion of a file.
    pub(super) REMOVES, r"^\s*(?:\$\s+)?(?:sudo\s+)?(?:rm|unlink|shred|trash)\s+(?:-\w+\s+)*[^|;&<>]+$");

/// Whether every command of a line that names the secret (the commands of its inline code, or of the line, split at
/// `&&`, `||` and `;`) only names it (`3. Fix permissions: \`chmod 700 ~/.ssh && chmod 600 ~/.ssh/id_ed25519\``):
/// one command that does more (`&& cat ~/.ssh/id_ed25519`) keeps the finding.
pub(super) fn each_command_names_only(text: &str, secret: &Regex, names_only: &Regex) -> bool {
    let spans: Vec<&str> = if text.contains('`') {
        text.split('`').skip(1).step_by(2).collect()
    } else {
        vec![text]
    };
    let mut uses = spans
        .iter()
        .flat_map(|s| {
            s.split("&&")
                .flat_map(|p| p.split("||"))
                .flat_map(|p| p.split(';'))
        })
        .filter(|command| secret.is_match(command))
        .peekable();
    // A loop's list of secrets is only named when its body is on the same line, each command of it only naming
    // them too (`for k in ~/.ssh/id_*; do stat -c '%a' "$k"; done`); a body on the lines below may read them.
    let one_line_loop = |command: &str| !command.trim_start().starts_with("for ") || text.contains("done");
    uses.peek().is_some() && uses.all(|command| names_only.is_match(command) && one_line_loop(command))
}

/// Whether a line adds an installed tool's completion to a start-up file ([`COMPLETION`]), the tool being a program
/// of its own: an interpreter given a file (`python3 payload.py completion`) runs whatever that file is.
pub(super) fn tool_completion(text: &str) -> bool {
    const INTERPRETERS: &[&str] = &[
        "sh", "bash", "zsh", "dash", "fish", "python", "python3", "node", "deno", "bun", "perl", "ruby",
        "php", "env", "eval", "exec", "source",
    ];
    COMPLETION.captures(text).is_some_and(|c| {
        c.name("a")
            .or_else(|| c.name("b"))
            .is_some_and(|tool| !INTERPRETERS.contains(&tool.as_str().to_ascii_lowercase().as_str()))
    })
}

re!(
    /// A deny rule of an AppArmor profile (`deny /etc/shadow r,`, `audit deny /root/** rw,`): a path and the access
    /// it is refused.
    pub(super) APPARMOR_DENY,
    r"^\s*(?:audit\s+)?deny\s+\S+\s+[rwaxmlkiuxPUC]+\s*,\s*(?:#.*)?$"
);

re!(
    /// An agent's permission rule for a path put on its deny list.
    AGENT_DENY, r#"(?i)\bRead\([^)\n]*\)[^\n]*\b(permissions\.deny|["']deny["']|deny\s+list|denylist)\b|\b(permissions\.deny|["']deny["']\s*:)[^\n]*\bRead\("#);
re!(
    /// An allow list on the same line: a rule there grants access.
    AGENT_ALLOW, r#"(?i)\bpermissions\.allow\b|["']allow["']\s*:|\ballow\s+list\b"#);
re!(
    /// `gh repo create … --public`: a repository made on the host, empty unless it is given local files.
    pub(super) EMPTY_PUBLIC_REPO, r"\bgh\s+repo\s+create\b");
re!(
    /// What puts local files in it: a source folder, a push, a gist of files, a repository made public, a later push.
    pub(super) PUBLISHES_FILES, r"(?i)\s(--source|-s|--push)\b|\bgist\b|--visibility|\bgit\s+push\b");

/// Whether the match at `start` is the value of an option or call that denies access (`--deny-read=/etc/shadow`,
/// `permission.deny('fs', '/etc/shadow')`, an AppArmor `deny` rule).
pub(super) fn denied(text: &str, start: usize) -> bool {
    if APPARMOR_DENY.is_match(text) {
        return true;
    }
    let before = text[..start].trim_end_matches(['\'', '"']);
    let word = before
        .rsplit(|c: char| c.is_whitespace())
        .next()
        .unwrap_or_default()
        .to_lowercase();
    // An agent's permission rules listed to deny (`"deny": ["Read(~/.ssh/**)"]`, "add … to `permissions.deny`").
    let agent_deny = AGENT_DENY.is_match(text) && !AGENT_ALLOW.is_match(text);
    agent_deny
        || word.starts_with("--deny")
        || word.starts_with("--no-read")
        || before.trim_end().to_lowercase().ends_with("deny('fs',")
        || before.trim_end().to_lowercase().ends_with("deny(\"fs\",")
}

re!(
    /// `ssh-keygen` making a key (its `-f` path is the new key's, not one read).
    pub(super) SSH_KEYGEN, r"\bssh-keygen\b");
re!(pub(super) SSH_KEYGEN_PATH, r"-f\s+\S+");
re!(
    /// A word that names a secret (a variable filtered out of the environment by it is one).
    pub(super) SECRET_WORD, r"(?i)token|secret|passw|key|auth|cred|session|cookie|aws|gh_|github|openai|anthropic|npm|pypi|private");
re!(
    /// A line that only prints names into an ignore file (`printf '%s\n' id_rsa .pypirc >> .gitignore`, `for p in
    /// id_rsa .pypirc; do echo "$p" >> .gitignore; done`): the whole line.
    pub(super) IGNORE_WRITE,
    r#"^\s*(for\s[^;|<]*;\s*do\s+)?(echo|printf)\s[^|<]*(>>?|\btee\s+(-a\s+)?)\s*['"]?[\w./$~{}-]*\.(git|docker|npm|prettier|eslint)ignore\b['"]?[^|<]*$"#
);
re!(
    /// The file a line writes when it is a registry's settings file (`> ~/.npmrc`, `cat > .npmrc << 'EOF'`,
    /// `tee -a ~/.pypirc`).
    pub(super) TOKEN_FILE_WRITE,
    r#"(>>?|\btee\s+(-a\s+)?)\s*['"]?[\w./$~{}-]*\.(npmrc|pypirc|netrc)\b['"]?"#
);

/// Whether every match of `rule` in `text` lies inside a match of `inside`.
pub(super) fn only_inside(rule: &Regex, inside: &Regex, text: &str) -> bool {
    let spans: Vec<_> = inside.find_iter(text).map(|m| m.range()).collect();
    !spans.is_empty()
        && rule
            .find_iter(text)
            .all(|m| spans.iter().any(|s| s.start <= m.start() && m.end() <= s.end))
}

re!(
    /// `gh ssh-key add` of a public key in the user's own `~/.ssh` (the onboarding GitHub documents).
    pub(super) OWN_KEY_ADDED,
    r#"\bgh\s+ssh-key\s+add\s+['"]?(~|\$HOME|\$\{HOME\})/\.ssh/[\w.-]+\.pub\b"#
);
re!(
    /// A command or call that sends something somewhere.
    pub(super) SENDS_TO, r"(?i)\b(curl|wget|nc|ncat|scp|rsync|requests\.\w+|httpx\.\w+|fetch|axios|urlopen|post|put|send|upload|submit|exfiltrate)\b");
re!(
    /// `find HOME -name X` (or `-iname`), with every name it looks for.
    pub(super) FIND_NAMES, r#"-i?name\s+(?:"([^"]*)"|'([^']*)'|(\S+))"#);
re!(
    /// A name that holds or leads to secrets, data or keys.
    pub(super) SECRET_NAME, r"(?i)ssh|id_|key|pem|p12|pfx|env|cred|secret|token|pass|wallet|cookie|login|keychain|gnupg|aws|kube|docker|npmrc|pypirc|netrc|history|mail|\.db$|sqlite|\.json$");

re!(
    /// A program that packs, copies or prints what a search finds.
    pub(super) PACKS, r"\b(tar|zip|cat|xargs|base64|cp|rsync|exec)\b");

/// Whether a search of the home folder looks only for exact names (`find ~ -name node_modules`), none of them a
/// pattern (`*.pdf`) or a name that holds secrets or data, and hands what it finds to nothing that sends or packs it.
pub(super) fn named_search_only(text: &str) -> bool {
    let names: Vec<String> = FIND_NAMES
        .captures_iter(text)
        .filter_map(|c| c.get(1).or(c.get(2)).or(c.get(3)).map(|m| m.as_str().to_owned()))
        .collect();
    !names.is_empty()
        && text.trim_start().starts_with("find ")
        && names
            .iter()
            .all(|n| !n.is_empty() && !n.contains(['*', '?', '[']) && !SECRET_NAME.is_match(n))
        && !SENDS_TO.is_match(text)
        && !PACKS.is_match(&text[text.find(" -").unwrap_or(0)..])
}

/// Whether the match `start..end` is (inside) a string literal compared with something (`"/var/run/docker.sock" in
/// v`, `x == '/run/docker.sock'`, `.includes("/var/run/docker.sock")`): a check for the thing, not a use of it.
pub(super) fn compared_literal(text: &str, start: usize, end: usize) -> bool {
    let before = &text[..start];
    let after = &text[end..];
    let Some(open) = before.rfind(['\'', '"']) else {
        return false;
    };
    let quote = text.as_bytes()[open] as char;
    let Some(close) = after.find(quote) else {
        return false;
    };
    let lead = before[..open].trim_end();
    let trail = after[close + 1..].trim_start();
    lead.ends_with("==")
        || lead.ends_with("!=")
        || lead.ends_with(" in")
        || lead.ends_with(".includes(")
        || lead.ends_with(".contains(")
        || lead.ends_with(".startswith(")
        || lead.ends_with(".endswith(")
        || trail.starts_with("in ")
        || trail.starts_with("not in ")
        || trail.starts_with("==")
        || trail.starts_with("!=")
}
re!(
    /// A command that only shows (lists, prints, searches) what it names.
    pub(super) READ_ONLY, r"^\s*(?:\$\s+)?(?:sudo\s+)?(?:cat|ls|less|more|head|tail|grep|rg|wc|stat|file|crontab\s+-l|systemctl\s+(?:--user\s+)?(?:list-units|list-timers|status|cat)|launchctl\s+list|ssh-keygen\s+-[a-zA-Z]*l)\b");
re!(
    pub(super) WRITES,
    r">|\btee\b|\b(?:cp|mv|install|ln|rm|chmod|chown|sed\s+-i)\b|\|"
);

/// Whether a line only reads or lists (no write, no pipe into another program).
pub(super) fn read_only_listing(text: &str) -> bool {
    let code = unquoted(text)
        .replace("2>/dev/null", "")
        .replace(">/dev/null", "");
    READ_ONLY.is_match(text) && !WRITES.is_match(&code)
}

re!(
    /// A line that prints a message (`echo "…"`, `error "…"`, `console.log('…')`).
    pub(super) PRINTED, r#"^\s*(echo(\s+-[neE]+)?|printf|error|warn|warning|die|fail|info|log|print|console\.(log|error|warn|info)|logger\.\w+)\s*\(?\s*f?["']"#);

/// Whether byte `at` of a line is inside a quoted string (by counting the quotes before it).
pub(super) fn inside_quotes(text: &str, at: usize) -> bool {
    let before = &text[..at];
    before.matches('"').count() % 2 == 1 || before.matches('\'').count() % 2 == 1
}

/// The line with the inside of each quoted string blanked, so what is left is what the shell would do.
pub(super) fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => out.push(' '),
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

/// The environment file a toolchain's installer has shells source (`. "$HOME/.cargo/env"`): a known tool's
/// folder, not any file named `env`.
const TOOL_ENV: &str = r#"['"]?\S*?/\.(cargo|deno|bun|elan|ghcup|nix-profile|sdkman|volta|rye|pixi|wasmtime|fly|local/bin)/env\b(?:['"\\]|\s|$|;)"#;

/// Version managers and prompts whose start-up line a shell file gets (`eval "$(mise activate bash)"`).
const VERSION_MANAGERS: &str =
    "brew|pyenv|rbenv|direnv|zoxide|starship|fnm|mise|conda|nodenv|goenv|asdf|nvm|sdkman|rvm|volta";

re!(
    /// An `echo` into a start-up file of a setting only: a variable, an alias, PATH, a tool's own init line.
    pub(super) SETTING_ONLY, &format!(r#"(?i)\b(echo|printf)\s+(-\w+\s+)?['"]?\s*(export\s+[A-Za-z_][A-Za-z0-9_]*=|alias\s+[\w-]+=|(export\s+)?PATH=|source\s+\S*completion\S*|source\s+{TOOL_ENV}|eval\s+\\?['"]?\$?\(\s*(?:[\w~./${{}}-]*/)?({VERSION_MANAGERS})\b|(?:source|\.)\s+\\?['"]?[^\s'"]*/({VERSION_MANAGERS})[\w-]*\.(?:sh|bash|zsh)\b|({VERSION_MANAGERS})\s+(activate|init|hook|env)\b[^|'"]*\|\s*source\b|export\s+\{{[A-Za-z_][A-Za-z0-9_]*\}}=|\[\[?\s+-[sfer]\s+\\?"?(?:\$\{{?[A-Z_]+\}}?|~|\$HOME)/[^\s"]*\\?"?\s+\]\]?\s+&&\s+(?:\\?\.|source)\s+\\?"?(?:\$\{{?[A-Z_]+\}}?|~|\$HOME)/[^\s"]*(?:{VERSION_MANAGERS}|bash_completion)[\w-]*(?:\.(?:sh|bash|zsh))?\\?"?\s*['"]?\s*>>|\[\[?\s+-[sfer]\s+\\?"?(?:~|\$HOME)/(\.[\w.-]+\.local)\\?"?\s+\]\]?\s+&&\s+(?:\\?\.|source)\s+\\?"?(?:~|\$HOME)/\.[\w.-]+\.local\\?"?\s*['"]?\s*>>|autoload\s+-U\s+(compinit|bashcompinit)\b|(?:un)?setopt\s+[A-Za-z_]+(?:\s+[A-Za-z_]+)*\s*['"]?\s*(?:>>|$)|(source|\.)\s+<\(\s*fzf\s+--(zsh|bash|fish)\s*\)|eval\s+\\?['"]?\$\(\s*fzf\s+--(zsh|bash)\s*\)|conda\s+activate\s+[\w.-]+\s*['"]?\s*>|(source|\.)\s+['"]?(~|\$HOME)/[\w.-]+/[\w.-]+\.zsh-theme\b|\.\s+\S*completion\S*|\.\s+{TOOL_ENV}|[A-Za-z_][A-Za-z0-9_]*=)"#));

re!(
    /// A line that appends a here-document to a file: `cat >> ~/.zshrc <<'RC'`, `tee -a "$P" <<EOF`, with its
    /// terminator.
    APPEND_HEREDOC,
    r#"(?:>>\s*\S+.*<<-?\s*['"]?(\w+)['"]?|<<-?\s*['"]?(\w+)['"]?.*>>\s*\S+|\btee\s+(?:-\w*a\w*|--append)\b.*<<-?\s*['"]?(\w+)['"]?)\s*$"#
);
re!(
    /// A version manager's script sourced when it is there (nvm's `[ -s "$NVM_DIR/nvm.sh" ] && \. "$NVM_DIR/nvm.sh"`,
    /// its completion too).
    GUARDED_SOURCE,
    &format!(r#"^\[\[?\s+-[sfer]\s+"?[^\s"]+"?\s+\]\]?\s+&&\s+(?:\\?\.|source)\s+"?[^\s"]*(?:{VERSION_MANAGERS}|bash_completion)[\w-]*(?:\.(?:sh|bash|zsh))?"?(?:\s+#.*)?$"#)
);

/// The lines (0-based, of `code`) that append a here-document holding settings only to a file: each of its lines
/// an `export`, an alias, PATH, a completion or a version manager's start-up line, with nothing fetched, decoded,
/// run at the prompt or substituted but a version manager's own start-up code.
pub(super) fn settings_heredocs(code: &str) -> Vec<u32> {
    if !code.contains("<<") {
        return Vec::new();
    }
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = APPEND_HEREDOC.captures(line) else {
            continue;
        };
        let Some(tag) = (1..=3).find_map(|g| c.get(g)).map(|m| m.as_str()) else {
            continue;
        };
        let Some(len) = lines[i + 1..].iter().position(|l| l.trim() == tag) else {
            continue;
        };
        let body: Vec<&str> = lines[i + 1..i + 1 + len]
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let whole = body.join("\n");
        let settings = !body.is_empty()
            && body.iter().all(|l| {
                SETTING_ONLY.is_match(&format!("echo '{l}'")) && !l.contains([';', '|', '&', '`'])
                    || GUARDED_SOURCE.is_match(l)
            })
            && !FETCHES.is_match(&whole)
            && !RUNS_CODE_VARIABLE.is_match(&whole)
            && !ENCODED.is_match(&whole)
            && !RUNS_AT_PROMPT.is_match(&whole)
            && !FZF_INTEGRATION.replace_all(&whole, " ").contains("<(")
            && !hijacking_alias(&whole)
            && !TOOL_ACTIVATION.replace_all(&whole, " ").contains("$(");
        if settings {
            out.push(u32::try_from(i).unwrap_or(u32::MAX));
        }
    }
    out
}

re!(
    /// A `jq` filter that ends in the names of entries (`| keys[]`, `| length`, `| has("x")`) right before the file
    /// it reads.
    pub(super) JQ_KEYS_BEFORE,
    r#"\bjq\s+(?:-\w+\s+)*'[^']*\|\s*(?:keys(?:_unsorted)?(?:\[\])?|length|has\([^)']*\)|type)\s*'\s+["']?(?:\$HOME|\$\{HOME\}|~)?/?$"#
);
re!(
    /// An option that hands a wallet's keypair file to the program that signs with it, or `solana-keygen pubkey`,
    /// right before the file's path.
    pub(super) KEYPAIR_GIVEN_BEFORE,
    r#"(?:\s(?:--keypair|--provider\.wallet|--fee-payer|--upgrade-authority|--authority|--wallet|-k)(?:\s+|=)|\bsolana-keygen\s+pubkey\s+)["']?(?:\$HOME|\$\{HOME\}|~)?/?$"#
);
re!(
    /// A command that runs on another machine the line reaches: a Kubernetes node or pod, an SSH host, a guest VM.
    pub(super) ON_ANOTHER_MACHINE,
    r"\bkubectl\s+(?:debug|exec|run)\b|\bvagrant\s+ssh\b|\bssh\s+(?:-\S+\s+)*['\x22]?[\w.@$-]+['\x22]?\s+['\x22]"
);
re!(
    /// A setuid mode set (`chmod u+s`, `chmod 4755`, `install -m 4755`): a way back to root, wherever it is.
    pub(super) SETUID_MODE,
    r#"\bchmod\s+[ugoa]*\+s\b|(?:\bchmod|\s-m)\s*['"]?0?[4-7][0-7][0-7][0-7]\b"#
);
re!(
    /// A vendor's own documented package index (PyTorch, NVIDIA, PyG, OpenMMLab, JAX's releases) or the public
    /// registries themselves, the host ending there (not `download.pytorch.org.example.net`).
    pub(super) KNOWN_INDEX,
    r"(?i)https?://(?:download\.pytorch\.org|pypi\.nvidia\.com|pypi\.ngc\.nvidia\.com|data\.pyg\.org|download\.openmmlab\.com|storage\.googleapis\.com/jax-releases|pypi\.org|files\.pythonhosted\.org|registry\.npmjs\.org|rubygems\.org|proxy\.golang\.org|index\.crates\.io|github\.com/rust-lang/crates\.io-index|repo\.anaconda\.com|conda\.anaconda\.org)(?:/[^\s'\x22,]*)?(?:[\s'\x22,;)\]]|$)"
);
re!(
    /// The public registries themselves (PyPI, npm, RubyGems, the Go module proxy, crates.io, Anaconda's channels),
    /// the host ending there (`https://pypi.org.example.net/`, `https://registry.yarnpkg.com@npm.example.net` are other
    /// hosts).
    pub(super) PUBLIC_REGISTRY,
    r"(?i)https?://(?:pypi\.org|pypi\.python\.org|files\.pythonhosted\.org|registry\.npmjs\.org|registry\.yarnpkg\.com|rubygems\.org|proxy\.golang\.org|index\.crates\.io|github\.com/rust-lang/crates\.io-index|repo\.anaconda\.com|conda\.anaconda\.org)(?:/[^\s'\x22,]*)?(?:[\s'\x22,;)\]]|$)"
);
re!(
    /// git's `url.<base>.insteadOf <original>`: fetches of the original go to the base.
    pub(super) INSTEAD_OF,
    r#"\burl\.['"]?([^\s'"]+?)['"]?\.insteadOf\s+['"]?([^\s'"]+)"#
);
re!(
    /// Any other address on a line about an index.
    pub(super) OTHER_INDEX, r"(?i)https?://|git\+|github:|git://");

/// Whether a line about an index names addresses and every one of them is one `known` names (the public registries,
/// a vendor's documented index).
pub(super) fn only_indexes(known: &Regex, text: &str) -> bool {
    known.is_match(text) && !OTHER_INDEX.is_match(&known.replace_all(text, " "))
}
re!(
    /// A variable that makes a program run code of its own choosing (`BASH_ENV`, `PERL5OPT`, `NODE_OPTIONS`,
    /// `LD_PRELOAD`, `PYTHONSTARTUP`, `GIT_SSH_COMMAND`): not a setting.
    pub(super) RUNS_CODE_VARIABLE,
    r"\b(?:BASH_ENV|ENV|PERL5OPT|PERL5LIB|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|LD_PRELOAD|LD_LIBRARY_PATH|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH|RUBYOPT|GIT_SSH_COMMAND|GIT_ASKPASS|SSH_ASKPASS|SUDO_ASKPASS|PROMPT_COMMAND|ZDOTDIR)="
);
re!(
    /// A Dockerfile's build step (`RUN …`), what it runs is in the image being built.
    pub(super) DOCKERFILE_RUN, r"^\s*RUN\s");
re!(
    /// A manifest's key for the package's own address (`"url": "git+https://…"` of `repository`).
    pub(super) MANIFEST_ADDRESS_KEY, r#"^\s*"(?:url|repository|homepage|bugs|funding|source)"\s*:"#);
re!(
    /// A line that is one `find` alone (in backticks or a list item too), piping, redirecting or chaining nothing.
    pub(super) FIND_NAMES_ONLY,
    r"^[\s>*\x60-]*(?:\d+\.\s+)?(?:sudo\s+)?find\s+[^|;&<>$\x60]*\x60?\s*$"
);
re!(
    /// What in a `find` acts on the files it finds (runs a program on them, prints them to a file, deletes them).
    pub(super) FIND_ACTS,
    r"\s-(?:exec|execdir|ok|okdir|fprint0?|fprintf|fls|delete)\b"
);

re!(
    /// A command substitution that only asks who or where: the user's name or address from git, the date, the host,
    /// the folder.
    pub(super) ASKS_ONLY,
    r"\$\(\s*(?:git\s+config\s+(?:--global\s+|--get\s+)*user\.(?:email|name)|date(?:\s+[+\w%:-]+)*|whoami|hostname(?:\s+-\w+)?|uname(?:\s+-\w+)*|id\s+-un?|pwd|basename\s+[^()$`;|&]*|dirname\s+[^()$`;|&]*)\s*\)"
);
re!(
    /// Words that read or show a file's content.
    pub(super) READS_CONTENT,
    r"(?i)\b(cat|reads?|open|print|show|dump|copy|cp|include|contents?|base64|grep|paste|extract)\b"
);

/// Whether the match at `start` names a project's package-manager settings file (`.npmrc`, `.yarnrc.yml`) by itself:
/// no folder before it (the user's `~/.npmrc` is where tokens live).
pub(super) fn project_settings_file(text: &str, start: usize, found: &str) -> bool {
    let name = found.trim_start_matches(|c: char| !c.is_ascii_alphanumeric() && c != '.');
    matches!(name, ".npmrc" | ".yarnrc" | ".yarnrc.yml" | ".pnpmrc")
        && !text[..start].ends_with(['/', '~', '\\', '$', '}'])
        && !text.contains("~/.npmrc")
        && !text.contains("HOME/.npmrc")
}

re!(
    /// A copy whose source is a relative path of the skill's (not the home folder, not an absolute path), up to the
    /// destination's start: `cp assets/npmrc `.
    pub(super) COPIED_FROM_SKILL_BEFORE,
    r#"(?:^|[;&|\x60]\s*)(?:\$\s+)?(?:cp|install)\s+(?:-\S+\s+)*['"]?[\w.][\w./-]*['"]?\s+['"]?\.?$"#
);
re!(
    /// The end of a command right after a match: nothing more, a separator or a closing quote.
    pub(super) COMMAND_ENDS, r#"^['"\x60]?\s*(?:$|[;&|\x60])"#);
re!(
    /// The crontab read, an entry filtered out and the rest written back, nothing added:
    /// `crontab -l | grep -v 'report.sh' | crontab -`.
    pub(super) CRON_REMOVAL,
    r"^[\s>*\x60$-]*(?:\d+\.\s+)?(?:[\w\s:]*?`)?crontab\s+-l(?:\s+2>\s*/dev/null)?\s*\|\s*(?:grep\s+-v|sed\s+['\x22]?/[^/]*/d)\b[^|;&]*\|\s*crontab\s+-\s*`?\s*$"
);

/// Whether a line defines an alias that takes over a command people trust (`alias sudo=…`, `alias ssh=…`).
pub(super) fn hijacking_alias(text: &str) -> bool {
    const TRUSTED: &[&str] = &[
        "sudo", "su", "ssh", "scp", "git", "cd", "ls", "cat", "curl", "wget", "python", "python3", "pip",
        "pip3", "npm", "npx", "node", "bash", "sh", "zsh", "login", "passwd", "gpg", "security", "op", "aws",
        "gh", "docker", "kubectl",
    ];
    text.split("alias ").skip(1).any(|rest| {
        let name = rest.split('=').next().unwrap_or_default().trim();
        TRUSTED.contains(&name)
    })
}

re!(
    pub(super) PLACEHOLDER_PATH,
    r"(?i)https?://[^\s'\x22]*/(YOUR[/_-]|<[^>\s]*>|\{[^}\s]*\}|X{3,}|\.\.\.)"
);

re!(
    /// What follows "the console" when it is a web page's (`… console on any page`, `… console of your browser`).
    pub(super) OF_A_PAGE,
    r"(?i)^\s*(on|of|in|for)\s+(any|the|a|your|this|each|every)?\s*(web\s*)?(page|tab|site|browser|devtools|dev\s+tools|chrome|firefox|safari)\b"
);

re!(
    /// The browser's developer tools named before "the console" (`Open DevTools and paste it into the console`).
    pub(super) DEVTOOLS,
    r"(?i)\b(devtools|dev\s+tools|developer\s+tools|web\s+inspector|inspect\s+element)\b"
);

re!(
    /// A shell's command on a line about pasting (`| sh`, `iex`, PowerShell, a command substitution).
    pub(super) SHELL_PASTE,
    r"(?i)\|\s*(ba|z)?sh\b|\biex\b|powershell|\$\(|\bsudo\b|\bchmod\b"
);

re!(
    /// Something that fetches from the network.
    pub(super) FETCHES, r"(?i)\b(curl|wget|nc|ncat|iwr|fetch)\b|https?://|/dev/tcp");

re!(
    pub(super) KEYCHAIN_HOUSEKEEPING,
    r"(?i)\bsecurity\s+(unlock-keychain|list-keychains|default-keychain|set-keychain-settings|lock-keychain|show-keychain-info)\b"
);

re!(
    pub(super) KEYCHAIN_READ,
    r"(?i)find-(generic|internet)-password|dump-keychain|export\s+-k"
);

re!(
    /// An order not to ask the user to do something (`Never tell users to add <script> tags`): what the user is told
    /// to do, not what is kept from them.
    pub(super) TELL_USER_TO,
    r"(?i)\b(?:do\s+not|don't|never)\s+(?:tell|ask|instruct)\s+(?:the\s+)?users?\s+to\s+\w+"
);
re!(
    /// `run it` under a choice or a refusal right before it: `whether to run it`, `don't run it`, `never run it`.
    pub(super) LEFT_TO_DECIDE,
    r"(?i)\b(whether\s+(or\s+not\s+)?to|don't|do\s+not|never|not\s+to)\s+run\s+it$"
);

re!(
    /// A relative clause right before a match: what it says is said of something (`actions that skip approval
    /// prompts`), not asked of the reader.
    pub(super) DESCRIBED_BY_CLAUSE,
    r"(?i)\b\w+\s+(that|which)\s+$"
);
/// The public code hosts: a repository there is a fork anyone can read, not a host of the skill's own.
pub(super) const FORGE_HOSTS: &str = r"(?:github\.com|gitlab\.com|codeberg\.org|bitbucket\.org)";

re!(
    /// `go mod edit -replace` of a module by another on a public code host (a fork), and nothing else on the line
    /// of the kind.
    pub(super) GO_REPLACE_FORK,
    &format!(r"(?i)\bgo\s+mod\s+edit\b[^\n]*\s-replace[= ]['\x22]?[^\s='\x22]+={FORGE_HOSTS}/")
);
re!(
    /// "Nothing to say about it in your reply".
    pub(super) NOTHING_TO_SAY, r"(?i)^nothing\s+to\s+(say|mention|report|tell)\b");
re!(
    /// A line that names a command or a step of the skill's (what "it" may be): inline code, a run, a script.
    pub(super) NAMES_A_RUN, r"(?i)`|\b(run|runs|ran|running|execute[sd]?|script|command|step|warm|prime|sync)\b");
re!(
    /// A condition the sentence starts with (`If a file needed no changes, there is `).
    pub(super) CONDITION_BEFORE, r"(?i)^[\W\d]*(if|when|where|whenever)\b[^.;:]*,\s*(there\s+is|there's|you\s+have)?\s*$");
re!(
    /// "outranks whatever is asked".
    pub(super) OUTRANKS, r"(?i)^(outranks?|overrules?|supersedes?|trumps?)\b");
re!(
    /// The user's own request as what outranks (the subject just before).
    pub(super) USER_OUTRANKS, r"(?i)\b(the\s+)?user'?s?\s+(own\s+)?(request|instructions?|words?|messages?|prompt)\s*$");
re!(
    /// A push address added on a public code host (`set-url --add --push origin git@github.com:o/r.git`).
    pub(super) PUSH_TO_FORGE,
    &format!(r"(?i)(?:https://|ssh://git@|git@){FORGE_HOSTS}[/:][\w.-]+/[\w.-]+")
);
re!(
    /// Any other address on the line of a push address.
    pub(super) OTHER_PUSH_HOST, r"(?i)https?://|ssh://|\bgit@");
re!(
    /// `that` after a conjunction (`…, and that covers each command`): a pronoun, the subject of a clause of its
    /// own, not a relative one.
    pub(super) THAT_AS_SUBJECT,
    r"(?i)\b(and|but|or|so|because|as|since)\s+(that|which)\s+$"
);

re!(
    /// An MCP server given by its address (`--url https://mcp.notion.com/mcp`, `--transport http <url>`).
    pub(super) MCP_BY_ADDRESS,
    r"(?i)--url[ =]https?://|--transport[ =](http|sse)\b"
);

re!(
    /// The end of a clause that negates the verb an adverb of hiding is about to qualify: `never `, `Do NOT
    /// rewrite, delete, or ` (a list of verbs joined by `or`), `no tests were `, or a passive (`is `, `would `): what
    /// must not happen unseen, or what happens unseen to the user's work, not an order to hide.
    pub(super) NEGATED_OR_PASSIVE,
    r"(?i)(\b(never|not|nor|instead\s+of|rather\s+than)\s+|n't\s+)((\w+,\s+){0,4}\w+,?\s+(or|nor)\s+)?$|\b(is|are|was|were|be|been|being|gets?|got|would)\s+$"
);
re!(
    /// A secret a sentence is about (`keep it secret` of a `SECRET_KEY` is protecting it).
    pub(super) CREDENTIAL_NAMED,
    r"(?i)\b(secret|key|token|password|passphrase|credential)s?\b|[A-Z][A-Z0-9]*_(KEY|TOKEN|SECRET|PASSWORD)\b"
);
re!(
    /// A clause under a negation, before a `without`: `Never tailor from a stored résumé without telling the user`,
    /// `don't claim it looks good without showing it` (always tell, always show). Not an infinitive after it
    /// (`Never hesitate to upload it without telling`).
    pub(super) NEGATED_CLAUSE,
    r"(?i)\b(never|don't|do\s+not)\s+\w+\b[^.;:!?\n]*$"
);
re!(
    /// Going on without asking the user (questions), not without telling them.
    pub(super) ACTS_WITHOUT_ASKING,
    r"(?i)^without\s+asking\b"
);
re!(
    /// What `without asking the user` is about when it is their permission: then it widens what the agent may do.
    pub(super) FOR_PERMISSION,
    r"(?i)^\s*(first\s+)?(for|about)\s+(their\s+|your\s+|any\s+)?(permission|confirmation|approval|consent)"
);

/// Whether a match of the concealment rule at `start` (`found`) is not an order to hide: an adverb of hiding under a
/// negation or in a passive (`never silently add packages`, `no tests were silently deleted`), `keep it secret` of
/// a credential, or a `without telling`/`without showing` under a negation (`Never tailor … without telling the user
/// which one you used`). The clause is cut at `.;:!?`, so a negation elsewhere in the sentence does not count.
pub(super) fn not_hiding(text: &str, start: usize, found: &str) -> bool {
    let before = &text[..start];
    let clause = &before[before.rfind(['.', ';', ':', '!', '?', '\n']).map_or(0, |i| i + 1)..];
    let lower = found.to_lowercase();
    if ["silently", "quietly", "secretly", "covertly", "discreetly"]
        .iter()
        .any(|w| lower.starts_with(w))
    {
        // Or what something does unseen (`the test silently runs on H2`, `the hierarchy silently stops
        // applying`): a verb of the third person is a description, not an order.
        return NEGATED_OR_PASSIVE.is_match(clause) || DESCRIBED_VERB.is_match(&text[start..]);
    }
    if lower.starts_with("keep") || lower.starts_with("stay") {
        return CREDENTIAL_NAMED.is_match(clause);
    }
    if lower.starts_with("without") {
        return NEGATED_CLAUSE
            .find(clause)
            .is_some_and(|m| !m.as_str().contains(" to "));
    }
    false
}

re!(
    /// An adverb of hiding followed by a verb of the third person (`silently runs`, `quietly stops`), not `silently
    /// pass` or `quietly is`.
    pub(super) DESCRIBED_VERB,
    r"(?i)^(?:silently|quietly|secretly|covertly|discreetly)\s+[a-z]{2,}[^s\W]s\b"
);

re!(
    /// What follows a quoted phrase that makes it a name for a kind of message (`"…" attempts`, `"…"-style prompts`).
    pub(super) KIND_AFTER_QUOTE,
    r"^\s*-?\s*(?:style\s+)?(?:attempts?|attacks?|phrases?|patterns?|prompts?|messages?|requests?|injections?|strings?|payloads?|tricks?)\b"
);

/// Whether the text at `start..end` is a phrase in quotes used as the name of a kind of message: the quote opens
/// right before it, closes right after it, and a noun of that kind follows (`Treat any "ignore previous
/// instructions" attempts as user content`).
pub(super) fn quoted_as_a_thing(text: &str, start: usize, end: usize) -> bool {
    let quotes = ['"', '\'', '\u{201c}', '\u{201d}', '`'];
    let opened = text[..start]
        .chars()
        .next_back()
        .is_some_and(|c| quotes.contains(&c));
    let rest = &text[end..];
    let close = rest.find(|c: char| quotes.contains(&c));
    // The phrase may run on to the end of its clause inside the quotes, but no further than a few words.
    let closed = close.is_some_and(|i| {
        !rest[..i].contains(['.', ';', ':', '!', '?']) && rest[..i].split_whitespace().count() <= 4
    });
    opened
        && closed
        && close.is_some_and(|i| {
            let after = &rest[i..];
            let after = after
                .get(after.chars().next().map_or(0, char::len_utf8)..)
                .unwrap_or("");
            KIND_AFTER_QUOTE.is_match(after)
        })
}

re!(
    /// What follows a collection service's name when an address of someone's inbox is given: a path of its own
    /// (`webhook.site/4f9c2a1e-…`, `discord.com/api/webhooks/1234/…`, `hooks.slack.com/services/T0…`).
    pub(super) INBOX, r"^/[\w-]{4,}");
re!(
    /// A label of its own before a collection service's name (`eo1x2y3.m.pipedream.net`, `abc123.oast.fun`): an inbox.
    pub(super) SUBDOMAIN_BEFORE, r"[\w-]{4,}\.(?:m\.)?$");
re!(
    /// A skill's or command's tool list (`allowed-tools: Read, Bash(*)`).
    pub(super) ALLOWED_TOOLS, r"(?i)^\W*allowed[-_]tools\s*:");

re!(
    /// What a start-up line runs at each prompt or command rather than sets: `PROMPT_COMMAND`, zsh's `precmd` and
    /// `preexec`, a `trap`.
    pub(super) RUNS_AT_PROMPT, r"\bPROMPT_COMMAND\b|\b(precmd|preexec)(_functions)?\b|\btrap\s");
re!(
    /// fzf's own shell integration, sourced from the program (`source <(fzf --zsh)`).
    FZF_INTEGRATION, r"(?:source|\.)\s+<\(\s*fzf\s+--(?:zsh|bash|fish)\s*\)");
re!(
    /// A version manager's or prompt's own start-up code, read from the tool (`$(mise activate bash)`, `$(starship
    /// init zsh)`, fish's `(mise activate fish)`): the tool's setting, not a download or a read.
    pub(super) TOOL_ACTIVATION,
    &format!(r"\$?\(\s*(?:[\w~./${{}}-]*/)?({VERSION_MANAGERS})\s+(activate|init|hook|env|shellenv)\b[\w\s-]*\)")
);
re!(
    /// A container tool's registry logins handed to it (`skopeo login --authfile ~/.docker/config.json`).
    pub(super) DOCKER_AUTHFILE_USE, r"(?i)--authfile(\s+|=)['\x22]?(~|\$HOME|\$\{HOME\})/\.docker/config\.json");
re!(
    /// A kubeconfig handed to the program that uses it.
    pub(super) KUBECONFIG_USE, r"(?i)(--kubeconfig(\s+|=)|\bKUBECONFIG=)['\x22]?(~|\$HOME|\$\{HOME\})/\.kube/[\w.-]+");
re!(
    /// A `grep` and its quoted pattern.
    pub(super) GREP_PATTERN, r#"\bgrep\s+(-[A-Za-z]+\s+)*(?:'([^']*)'|"([^"]*)")"#);
re!(
    /// One alternative of a pattern that picks only section headers or registry lines (`^\[`, `^registry=`,
    /// `^@[^:]+:registry=`, `^\[profile`).
    pub(super) NAMES_ONLY_ALTERNATIVE, r"^\^\s*(\\\[|\[\\\[|\[profile|registry\b|@[^|]*:registry\b|region\b|Host\b|current-context\b|(cluster|context|namespace|server|name|user(name)?)s?:)[^|]*$");

re!(
    /// `sed -i` with only line deletions (`'/NVM_DIR/d'`, a managed block's range `'/# >>> x/,/# <<< x/d'`), on the
    /// files after it.
    pub(super) RC_LINES_DELETED,
    r#"\bsed\s+-i(?:\.\w+|\s+(?:''|"")|\S*)?\s+(?:(?:-e\s+)?['"]/[^/'"\n]*/(?:,\s*/[^/'"\n]*/)?d['"]\s+)+(?:['"]?[~$][^\s;&|]*\s*)+"#
);
re!(
    /// Any other way a line writes a file: a redirection, `tee`, a copy, a move, a link, another `sed -i`.
    pub(super) RC_WRITE_OTHER,
    r"(>>?|\btee\b|\b(cp|mv|ln|install)\s|\bsed\s+-i)"
);

re!(
    /// Python's import path changed to reach a folder (`sys.path.insert(0, …)`).
    pub(super) IMPORT_PATH,
    r"\bsys\.path\.(insert|append)\("
);
re!(
    /// A write to a file on the same line (`open(p, 'w')`, `>>`, `write_text`).
    pub(super) WRITES_FILE,
    r#"['"][aw]\+?['"]|>>|\bwrite(_text|_bytes|File(Sync)?)?\(|\btee\b"#
);
re!(
    /// Approval as a condition that the user's own instructions must meet, right before `standing approval`:
    /// `only when trusted workspace instructions document`, `if the user has granted`; or approval right after a
    /// condition (`if standing approval … is unavailable, do not send`).
    pub(super) APPROVAL_GRANTED_IF,
    r"(?i)\b(only\s+(when|if)|unless)\b[^.;:!?]{0,80}\b(user|owner|operator|trusted|workspace)\b[^.;:!?]{0,40}\b(grants?|granted|documents?|documented|gives?|gave|given|provides?|provided|records?|recorded)\s+$|(?:^|[:;,.]\s*|\b)(if|when|unless|whether)\s+(the\s+|a\s+|no\s+|there\s+is\s+(no\s+)?)?$"
);
re!(
    /// A condition on a flag of the skill's own that the user passes, right before what it governs (`**If
    /// `--aggressive` flag is set:** Skip the approval prompt`, `` `--yes` (optional): if present, skip approval
    /// prompts``).
    pub(super) USER_FLAG_CONDITION,
    r"(?i)(?:\b(?:if|when|only\s+(?:if|when))\s+(?:the\s+)?`?--[a-z][\w-]*`?\s+(?:flag\s+|option\s+)?(?:is\s+)?(?:set|present|given|passed|used|specified)|`?--[a-z][\w-]*`?\*{0,2}\s*(?:\(optional\))?\s*:\s*if\s+(?:present|set|given|passed))[\s*:,]*$"
);

/// Whether the match at `at` lies inside a web address (`https://developer.mozilla.org/en-US/docs/Web/HTTP/Cookies`).
pub(super) fn in_web_address(text: &str, at: usize) -> bool {
    let start = text[..at]
        .rfind(|c: char| c.is_whitespace() || "'\"`()<>[]".contains(c))
        .map_or(0, |i| i + 1);
    let word = &text[start..at];
    let path = word
        .strip_prefix("https://")
        .or_else(|| word.strip_prefix("http://"));
    path.is_some_and(|p| p.contains('/'))
}

re!(
    /// The environment's names without their values: `env | cut -d= -f1`, `env | sed 's/=.*//'`, `env | awk -F=
    /// '{print $1}'`, `compgen -e` alone.
    pub(super) ENV_NAMES_ONLY,
    r#"(?:^|[;&|(]\s*)(?:env|printenv)\s*\|\s*(?:cut\s+-d\s*['"]?=['"]?\s+-f\s*1\b|sed\s+(?:-E\s+)?['"]s/=\.\*//|awk\s+-F\s*['"]?=['"]?\s+['"]\{\s*print\s+\$1\s*\}['"])"#
);
re!(
    /// Just before a command a sentence names as what is not used: `replaces `, `instead of `, `rather than `,
    /// `not `, `avoid ` (a backtick or a quote may open the command).
    pub(super) REPLACED_BEFORE,
    r"(?i)\b(replaces|replacing|replaced|instead\s+of|rather\s+than|not|never|avoid|avoids|without)\s+[\x60'\x22]?$"
);
re!(
    /// A setting added to the PowerShell profile and nothing else on the line: a module imported by its bare name, a
    /// PSReadLine option, an alias to a bare command, or a prompt tool's own start-up line (`oh-my-posh init pwsh …
    /// | Invoke-Expression`, `starship init powershell`, `zoxide init powershell`).
    pub(super) PROFILE_SETTING,
    r#"(?i)^\s*Add-Content\s+(?:-Path\s+)?['"]?\$PROFILE(?:\.\w+)?['"]?\s+(?:-Value\s+)?(?:'|")(?:Import-Module\s+[\w.-]+|Set-PSReadLineOption(?:\s+-\w+(?:\s+[\w.-]+)?)+|Set-Alias\s+[\w-]+\s+[\w.-]+|(?:&\s*)?\(?\s*(?:oh-my-posh|starship|zoxide)\s+init\s+(?:pwsh|powershell)\b[^'"|;&$`(]*(?:--config\s+"?\$env:\w+\\[\w.-]+"?\s*)?(?:\|\s*(?:Invoke-Expression|iex|Out-String\s*\|\s*Invoke-Expression))?\s*\)?)(?:'|")\s*$"#
);
re!(
    /// `gh issue|pr create|comment|edit … --body-file` or `-F`: a body read from a file.
    pub(super) GH_BODY_FILE, r"\bgh\s+(?:issue|pr)\s+(?:create|comment|edit)\b[^\n]*(?:--body-file|\s-F)$");
re!(
    /// A file of the project or a temporary one right after an option (`=.work/body.md`, ` PR.md`,
    /// ` /tmp/issue-body.md`), or the option named alone in inline code (`` `gh pr create --body-file` ``); not a file of
    /// the home folder, another absolute path or a name's value.
    pub(super) PROJECT_FILE_AFTER, r#"^(?:(?:=|\s+)['"]?(?:/tmp/|\$\{?TMPDIR\}?/)?[\w.<][\w./<>-]*['"]?(?:\s|$)|\s*`)"#);
re!(
    /// An act named in the rest of a sentence: what an approval would be asked for.
    pub(super) NAMES_AN_ACTION,
    r"(?i)\b(run|running|execut\w*|install\w*|delet\w*|remov\w*|push\w*|send\w*|upload\w*|download\w*|writ\w*|modif\w*|commit\w*|deploy\w*|chang\w*|creat\w*|overwrit\w*|edit\w*|curl|wget|sudo|rm|script|commands?|shell|tools?|files?|access\w*|credential\w*|keys?|tokens?|secrets?|https?://)\b"
);
re!(
    /// The end of a sentence or a list item right after a match: nothing more is said of it.
    pub(super) SENTENCE_ENDS,
    r"^[\s*_\x60]*([.!;]\s*)?$"
);
re!(
    /// What follows `printenv` when it is given the names of variables to print and the command ends there
    /// (`printenv VISUAL_REMOTE HOME`, `` `printenv PATH` ``); words of a sentence (`printenv and send it`) are not names.
    pub(super) PRINTENV_NAMED,
    r"^[ \t]+[A-Z_][A-Z0-9_]*([ \t]+[A-Z_][A-Z0-9_]*)*[ \t]*($|[;&|)>\x60'\x22<])"
);
re!(
    /// A search that prints no line of what it reads: a yes or no (`grep -q`), file names (`grep -l`, `grep -L`) or a
    /// count (`grep -c`).
    pub(super) GREP_NO_CONTENT,
    r"(?:^|[;&|(!]\s*|\bif\s+)(?:sudo\s+)?grep\s+(?:-[a-zA-Z&&[^rR]]*[qlLc][a-zA-Z&&[^rR]]*|--(?:quiet|silent|files-with(?:out)?-matches|count))\s[^|;&<>\n]*?(?:\s2>\s*/dev/null)?(?:\s*(?:&&|\|\|)\s*(?:echo|printf)\b[^|;&<>\n]*)?\s*$"
);
re!(
    /// A listing of the home folder by size or name that reads, copies and deletes nothing: `find ~ … -size +500M
    /// [-exec ls|du …]`, `du -sh ~/…`.
    pub(super) HOME_LISTING,
    r"^\s*(?:sudo\s+)?(?:find\s+(?:~|\$HOME)/?\S*\s[^|;&<>\n]*?(?:-size\s+\+?\d+[kMG]?\b|-type\s+d\s+-name\s+['\x22]?[\w.-]+['\x22]?\s)[^|;&<>\n]*|du\s+-[a-zA-Z]+\s+(?:(?:~|\$HOME)\S*\s*)+)(?:\s*2>\s*/dev/null)?(?:\s*\|\s*(?:sort|head|tail)\b[^|;&<>\n]*)*\s*$"
);
re!(
    /// A negation right before what it governs: `… not Bash(*)`, `not wildcards (Bash(*))`.
    pub(super) NOT_BEFORE,
    r"(?i)\bnot(\s+[a-z]+){0,2}[\s(`]*$"
);
re!(
    /// A `find` command, on its own or whose output a name holds (`KEYS=$(find …)`).
    pub(super) FIND_CMD,
    r"(?:^|[;&|(]\s*)(?:\$\s+)?(?:sudo\s+)?find\s"
);
re!(
    /// A line that is a `find` and nothing before it.
    pub(super) FIND_AT_START,
    r"^\s*(?:\$\s+)?(?:sudo\s+)?find\s"
);
re!(
    /// Reading a git setting: `git config --get core.hooksPath`, `git config --global --get-all …`, `--list`.
    pub(super) GIT_CONFIG_GET,
    r"^\s*(?:\$\s+)?git\s+config\s+(?:--(?:global|local|system|show-origin)\s+)*(?:--get(?:-all|-regexp)?|--list|-l)\b[^;&|]*$"
);

re!(
    /// A secret's name as the pattern of a `-name` test: `-name "id_rsa*"`, `-iname '*.pem'`.
    pub(super) NAME_PATTERN_BEFORE,
    r#"-i?name\s+['"]?\*?$"#
);
re!(
    /// What reads or moves the files found: `-exec`, `xargs`, a pipe into a reader, an archive or a sender.
    pub(super) FOUND_FILES_READ,
    r"-exec|-ok\b|\bxargs\b|\|\s*(while|cat|tar|zip|base64|curl|nc|scp|python3?|node)\b|-print0"
);
re!(
    /// One keychain item read by the service name it was stored under (`security find-generic-password -s
    /// "xai-api" -w`).
    pub(super) KEYCHAIN_ONE_ITEM,
    r#"(?i)\bsecurity['"]?\s*,?\s*['"]?find-generic-password\b[^\n|;]*?['"]?-s['"]?\s*,?\s*['"]?[\w${]|\bsecret-tool['"]?\s*,?\s*['"]?lookup['"]?\s*,?\s*['"]?\w+['"]?\s*,?\s*['"]?[\w${]"#
);
re!(
    /// What makes a keychain read someone else's passwords: a browser's or a wallet's storage, the login keychain, a
    /// dump.
    pub(super) OTHERS_PASSWORDS,
    r"(?i)safe\s+storage|chrom|brave|\bedge\b|opera|vivaldi|firefox|safari|login\.keychain|wallet|metamask|exodus|electrum|icloud|dump-keychain|find-internet-password"
);

/// Whether a line only greps a credential file for section names or registry lines, every alternative of the
/// pattern being one, with nothing secret in it (`grep '^\[' ~/.aws/credentials`, `grep -E '^registry=' ~/.npmrc`).
pub(super) fn names_only_grep(text: &str) -> bool {
    GREP_PATTERN.captures(text).is_some_and(|c| {
        let pattern = c.get(2).or_else(|| c.get(3)).map_or("", |m| m.as_str());
        !pattern.is_empty()
            && !super::SECRET_WORD.is_match(pattern)
            && !pattern.contains("_auth")
            && pattern.split('|').all(|alt| NAMES_ONLY_ALTERNATIVE.is_match(alt))
    })
}

re!(
    /// A downloader named as a kind of command (`a curl command`, `the fetch call`), not used.
    pub(super) TOOL_AS_NOUN,
    r"(?i)^(download|curl|wget|fetch)\s+(commands?|requests?|calls?|examples?|snippets?|invocations?|lines?)\b"
);
re!(pub(super) URL_ANYWHERE, r"(?i)\b(https?|ftp)://|\bwww\.|`[^`]+`");
re!(
    /// A download from this machine (`curl -s http://127.0.0.1:3456/v1/models | …`).
    pub(super) LOOPBACK_SOURCE,
    r"(?i)^(curl|wget)\b[^|]*\b(https?://)?(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(/|\s|['\x22]|$)"
);
re!(
    /// An interpreter after a pipe given its program on the command line or a module to run.
    pub(super) PROGRAM_GIVEN,
    r"(?i)\|\s*(python3?|node|perl|ruby)\s+(-c|-e|-m\s+json\.tool|-m\s+json\b)"
);
re!(
    /// What runs what it reads: a program given on the command line may still run its input.
    pub(super) RUNS_INPUT,
    r"(?i)\b(exec|eval|compile|Function|runpy|subprocess|system)\b|\bimport\s*\("
);

/// Whether the pipe of a download at `matched` hands it to an interpreter given its own program on the line
/// (`| python3 -c "import json,sys; …"`, `| python3 -m json.tool`) that does not run what it reads; a program
/// whose quote is not closed on the line is not seen whole, so it does not count.
pub(super) fn program_given(matched: &str, after: &str) -> bool {
    let whole = format!("{matched}{after}");
    PROGRAM_GIVEN.find(&whole).is_some_and(|p| {
        let program = &whole[p.end()..];
        // A program in quotes of its own ends where they close (`python3 -c '…')/healthz"` inside an address).
        let rest = program.trim_start();
        let quoted = rest
            .chars()
            .next()
            .filter(|q| matches!(q, '\'' | '"'))
            .and_then(|q| rest[1..].find(q).map(|i| &rest[..i + 2]));
        let balanced = quoted.is_some()
            || program.matches('"').count() % 2 == 0 && program.matches('\'').count() % 2 == 0;
        (balanced || p.as_str().contains("json")) && !RUNS_INPUT.is_match(quoted.unwrap_or(program))
    })
}

re!(
    /// What is shown before approval is asked: the changes, a diff, a plan.
    pub(super) SHOWN_FIRST,
    r"(?i)^[^.;!?\n]{0,20}?\bbefore\s+(showing|presenting|displaying|listing|explaining|describing|summari[sz]ing)\s+(\w+\s+){0,3}(changes?|diffs?|plans?|proposals?|previews?|summary|edits?|fixes|findings)\b"
);
re!(
    /// What a password opens: an archive, a download, a file.
    pub(super) ARCHIVE_WORD,
    r"(?i)\b(zip|rar|7z|7-zip|archives?|tar|gz|tgz|unzip|unrar|unpack|decompress|extractall|(?-i:setpassword)|packages?|download(s|ed)?|installers?|bundles?|files?|folders?|attachments?|payloads?)\b|\s-[pP]\s?\S"
);
re!(
    /// A line that runs a script of another installed skill (`~/.claude/skills/x/scripts/y.sh --flag`).
    pub(super) RUNS_SKILL_SCRIPT,
    r"^\s*(\$\s+)?(bash\s+|sh\s+|python3?\s+|node\s+)?(~|\$HOME|\$\{HOME\})/\.(claude|codex|cursor|gemini)/skills/[\w.-]+/[\w./-]+\s"
);
re!(
    /// A redirect into the agent's folders, or a copy through `tee`.
    pub(super) REDIRECT_TO_AGENT,
    r"(?i)>\s*['\x22]?(~|\$HOME|\$\{HOME\})?/?[\w./-]*\.(claude|codex|cursor|gemini)/|\btee\b"
);

re!(
    /// A search program up to the opening quote of its pattern: `grep -rn "`, `rg -e '`, `git grep "`.
    pub(super) SEARCH_OPEN,
    r#"\b(?:grep|egrep|fgrep|rg|ag|git\s+grep)\b(?:\s+-{1,2}[\w-]+(?:=\S+)?)*\s+(?:-e\s+)?(["'])$"#
);

re!(
    /// What follows `core.hooksPath` when it points at nothing (`=/dev/null`, `={os.devnull}`, ` NUL`) and the
    /// line ends the value there.
    pub(super) HOOKS_OFF,
    r#"^\s*[=\s]\s*['"]?(?:/dev/null|\{os\.devnull\}|NUL)['"]?(?:[\s,)\]]|$)"#
);

/// Whether the bare word the text at `start..end` holds is one alternative of a regular expression's group: between
/// `|`s with a word on each side, in a quoted string that opens a group (`(?:` or `(`) before it
/// (`r"(?:name|on|env|permissions)"`). A shell pipe has commands, not a group, around it.
pub(super) fn regex_alternative(text: &str, start: usize, end: usize) -> bool {
    let found = &text[start..end];
    let Some(at) = found.find(|c: char| c.is_alphanumeric()) else {
        return false;
    };
    let word_len = found[at..]
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(found.len() - at);
    let (from, to) = (start + at, start + at + word_len);
    let before = &text[..from];
    let after = &text[to..];
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let Some(open) = before.rfind(['"', '\'']) else {
        return false;
    };
    before.ends_with('|')
        && word(before[..before.len() - 1].chars().next_back())
        && (after.starts_with('|') && word(after[1..].chars().next()) || after.starts_with(')'))
        && !before[open + 1..].contains([' ', ';', '&'])
        && before[open + 1..].contains('(')
}

/// Whether bytes `start..end` of a line lie inside the quoted pattern of a search (`grep -r "requests.get" src/`).
pub(super) fn in_search_pattern(text: &str, start: usize, end: usize) -> bool {
    let Some(open) = text[..start].rfind(['"', '\'']) else {
        return false;
    };
    let Some(c) = SEARCH_OPEN.captures(&text[..=open]) else {
        return false;
    };
    let quote = c[1].chars().next().unwrap_or('"');
    !text[open + 1..start].contains(quote) && text[end..].contains(quote)
}

re!(
    /// A home path left once quoted text is taken out: what a command reads or writes, not what it searches for.
    pub(super) HOME_PATH_OUTSIDE, r"(~|\$HOME|\$\{HOME\}|/home/|/Users/|/root)/|\.ssh/|\.aws/|\.kube/");

re!(
    /// A copy of the home folder to a local drive or folder (`rsync -a ~/ /Volumes/Backup/home/`, `tar czf
    /// /mnt/backup/home.tgz ~`): a destination under a mount point, no host.
    pub(super) LOCAL_MIRROR, r#"^\s*(zip|tar)\b[^|;&@]*\s['"]?(/Volumes/|/mnt/|/media/|/backup)[^\s'"]*(\$\([^)]*\))?[^\s'"]*['"]?\s+(~|\$HOME)[^\s|;&]*\s*$|^\s*(rsync|cp|tar)\b[^|;&@]*\s['"]?(/Volumes/|/mnt/|/media/|/backup)[^\s:'"]*['"]?\s*$|^\s*(rsync|cp)\b[^|;&@]*\s(~/?|\$HOME/?)\s+['"]?(/Volumes/|/mnt/|/media/|/backup)"#);

re!(
    /// What is held back only until asked: `… unless they ask`, `… unless the user asks for it`.
    pub(super) ON_REQUEST, r"(?i)^\W{0,3}(\w+\W+){0,3}?unless\s+(they|the\s+user|you\s+are|asked|requested)\b");
