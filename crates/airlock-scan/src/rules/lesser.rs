//! Lesser classes: a line a rule matches that is not what the rule is about (a secret's path only named, advice
//! printed to the user, a check for a socket rather than its use, one variable looked up), with the level it counts
//! at most and why; and the small readings of a shell line they rest on (what is quoted, what only lists).

use super::*;

/// The class of a line that a rule matches but that is not what the rule is about, with the level it counts at
/// most and why: a secret's path only named, an install command printed as advice, `sudo` for a package manager,
/// a URL on this machine, a fetch of the page's own origin, one variable looked up, a payload decoded into a file,
/// and for `.env` files everything short of reading one. `None` when the line is what the rule says.
pub(super) fn lesser_class(
    rule: &str,
    index: usize,
    text: &str,
    at: usize,
) -> Option<(Severity, &'static str)> {
    let c = &*COMPILED;
    let quiet = || !c.reads_after_all.is_match(text);
    let class = match rule {
        "secrets/dotenv" if c.dotenv_template.is_match(text) => (Severity::Low, "Makes a .env file from its template."),
        "secrets/dotenv" if c.dotenv_read.is_match(text) => return None,
        "secrets/dotenv" if c.dotenv_load.is_match(text) => (
            Severity::Medium,
            "Loads a .env file into a program's environment (its secrets become the program's).",
        ),
        "secrets/dotenv" => (Severity::Low, "Names a .env file without reading it."),
        _ if rule.starts_with("secrets/") && quiet() && c.names_only.is_match(text) => (
            Severity::Medium,
            "Names a secret's path (changes its permissions, tests it, points a variable at it or prints it) without reading it.",
        ),
        "install/pipe-to-shell" | "campaign/download-and-run" | "net/http-client"
            if !c.reads_after_all.is_match(&unquoted(text)) && PRINTED.is_match(text) && inside_quotes(text, at) =>
        {
            (Severity::Medium, "Printed as advice to the user (a message), not run.")
        }
        "persist/shell-rc"
            if SETTING_ONLY.is_match(text)
                && !c.reads_after_all.is_match(text)
                && !FETCHES.is_match(text)
                && !ENCODED.is_match(text)
                && !text.contains("<(")
                && !hijacking_alias(text) =>
        {
            (
            Severity::Medium,
            "Adds a setting (an environment variable, an alias, PATH) to a shell start-up file.",
            )
        }
        "persist/shell-rc" if tool_completion(text) && !FETCHES.is_match(text) && !ENCODED.is_match(text) => (
            Severity::Medium,
            "Adds an installed tool's shell completion to a shell start-up file (the tool runs at every new terminal).",
        ),
        "secrets/cloud-credentials"
            if quiet()
                && !SENDS_TO.is_match(text)
                && c.each[index].find_iter(text).all(|m| m.as_str().eq_ignore_ascii_case(".aws/config")) =>
        {
            (
                Severity::Medium,
                "Names AWS's settings file (profiles and regions; the keys are kept in ~/.aws/credentials).",
            )
        }
        "secrets/ssh-keys" if quiet() && key_used_only(text) => (
            Severity::Medium,
            "Points a program at an SSH key to log in or sign with (the key is used where it lies, not read out).",
        ),
        "secrets/system-files" if c.each[index].find_iter(text).all(|m| denied(text, m.start())) => (
            Severity::Low,
            "Names a system password file to deny access to it.",
        ),
        "secrets/token-files" if quiet() && !SENDS_TO.is_match(text) && TOKENS_FILTERED_OUT.is_match(text) => (
            Severity::Medium,
            "Shows a token file's settings with its tokens filtered out (`grep -v authToken`).",
        ),
        "secrets/token-files" | "secrets/cloud-credentials" if REMOVES.is_match(text) && !SENDS_TO.is_match(text) => (
            Severity::Medium,
            "Deletes a file that holds tokens (it is not read).",
        ),
        "secrets/keychain" if KEYCHAIN_HOUSEKEEPING.is_match(text) && !KEYCHAIN_READ.is_match(text) => (
            Severity::Medium,
            "Unlocks or lists a keychain without reading a password from it.",
        ),
        // The same whether the download, chmod and run sit on one line or several (`flow::download_then_run`).
        "campaign/download-and-run" if flow::from_release_host(text) => (
            Severity::High,
            "Downloads a program from a project's release page and runs it (how many tools install: review it).",
        ),
        "priv/sudo" if c.sudo_install.is_match(text) => (
            Severity::Medium,
            "Installs system packages as root: an install instruction (the sandbox has no root, so it fails there).",
        ),
        "campaign/throwaway-host"
            if c.each[index].find_iter(text).all(|m| {
                c.local_ip_url
                    .find_at(text, m.start())
                    .is_some_and(|l| l.start() == m.start())
            }) =>
        {
            (Severity::Low, "A URL on this machine or a private network, not a download host.")
        }
        "net/http-client" if c.relative_fetch.is_match(text) => (
            Severity::Medium,
            "Fetches a path of the page's own origin (web app code talking to its own server).",
        ),
        "secrets/env-dump" if c.env_filter.is_match(text) => (
            Severity::Medium,
            "Looks one variable up in the environment (not a dump of it).",
        ),
        "obfusc/encoded-exec" if c.decode_to_file.is_match(text) => (
            Severity::Medium,
            "Decodes embedded base64 into a file, which is not run here.",
        ),
        "secrets/ssh-keys" if quiet() && public_keys_only(text) => (
            Severity::Medium,
            "Works with SSH public keys or client settings (`.pub`, authorized_keys, known_hosts, config), which are not secrets.",
        ),
        "secrets/ssh-keys" if quiet() && SSH_KEYGEN.is_match(text) && no_private_key(&SSH_KEYGEN_PATH.replace_all(text, "")) => (
            Severity::Medium,
            "Makes a new SSH key pair (ssh-keygen), without reading an existing key.",
        ),
        "fs/home-sweep" if quiet() && named_search_only(text) => (
            Severity::Medium,
            "Searches the home folder for files or folders of one exact name (not secrets, not a class of files).",
        ),
        "priv/host-socket" if c.each[index].find_iter(text).all(|m| compared_literal(text, m.start(), m.end())) => (
            Severity::Medium,
            "Compares a value with a host socket's path (a check for it), without reaching the socket.",
        ),
        "priv/host-socket"
            if c.each[index].find_iter(text).all(|m| !m.as_str().starts_with("docker")) =>
        {
            (
                Severity::High,
                "Reaches or names a host control socket (Docker, D-Bus, the SSH agent): a privileged operation.",
            )
        }
        "net/exfil-endpoint"
            if !SENDS_TO.is_match(text) && c.each[index].find_iter(text).all(|m| m.as_str().to_lowercase().starts_with("ngrok")) =>
        {
            (
                Severity::Medium,
                "Names a tunnel address (ngrok), where webhooks reach a developer's own machine; nothing is sent to it here.",
            )
        }
        "persist/authorized-keys" | "persist/scheduler" if quiet() && read_only_listing(text) => (
            Severity::Medium,
            "Reads or lists what would run later or who may log in (a review), without changing it.",
        ),
        _ => return None,
    };
    Some(class)
}

re!(
    /// An installed tool's completion script added to a shell start-up file: `gh completion -s bash >> ~/.bashrc`,
    /// `echo 'eval "$(uv generate-shell-completion zsh)"' >> ~/.zshrc`, `echo 'source <(kubectl completion bash)'
    /// >> ~/.bashrc`. The tool is named bare (not a path a skill could have planted).
    pub(super) COMPLETION,
    r#"(?i)^\s*(?:\$\s+)?(?:(?P<a>[\w.-]+)(?:\s+[\w-]+)?\s+(?:completions?|generate-shell-completion|shell-completions?)\b[^|;&`$]*>>|(?:echo|printf)\s+['"]\s*(?:eval\s+\\?"?\$\(|source\s+<\(|\.\s+<\()\s*(?P<b>[\w.-]+)(?:\s+[\w-]+)?\s+(?:completions?|generate-shell-completion|shell-completions?)\b[^)$`;|&]*\)\s*\\?"?\s*['"]\s*>>)"#
);
re!(
    /// Encoded text or a decoder: what a completion line must not carry.
    ENCODED, r"(?i)base64|\\x[0-9a-f]{2}|xxd|openssl\s+enc");
re!(
    /// A key handed to a program as the identity it logs in or signs with (`ssh -i KEY`, `curl --key KEY`,
    /// `--identity KEY`, `IdentityFile KEY`, `key_filename=KEY`, paramiko's `from_path(KEY)`).
    pub(super) KEY_USE,
    r#"(?i)(?:(?:^|\s)(?:-i|--key|--identity(?:-file)?|--ssh-key|--private-key(?:-file)?|--key-file|--keyfile)(?:\s+|=)|\bIdentityFile\s+|\bkey_filename\s*=\s*|\b(?:from_path|from_private_key_file|load_private_key_file)\(\s*)['"]?(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/Users/[\w.-]+|/root)/\.ssh/[\w.-]+['"]?"#
);
re!(
    /// Lines naming a token filtered out of what is shown: `| grep -v authToken`, `| grep -v _auth`.
    pub(super) TOKENS_FILTERED_OUT, r#"(?i)\|\s*grep\s+(?:-\w*v\w*|--invert-match)\s+['"]?[^|'"]*(?:token|_auth|password|secret)"#);
re!(
    /// A deletion of a file.
    pub(super) REMOVES, r"^\s*(?:\$\s+)?(?:sudo\s+)?(?:rm|unlink|shred|trash)\s+(?:-\w+\s+)*[^|;&<>]+$");

/// Whether a line adds an installed tool's completion to a start-up file ([`COMPLETION`]), the tool being a program
/// of its own: an interpreter given a file (`python3 payload.py completion`) runs whatever that file is.
fn tool_completion(text: &str) -> bool {
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

/// Whether every SSH path of a line is a key handed to a program as its identity (`ssh -i ~/.ssh/deploy`,
/// `curl --key ~/.ssh/id_rsa sftp://…`): with those taken out, no SSH path is left.
pub(super) fn key_used_only(text: &str) -> bool {
    KEY_USE.is_match(text) && !SSH_PATH.is_match(&KEY_USE.replace_all(text, " "))
}

/// Whether the match at `start` is the value of an option or call that denies access (`--deny-read=/etc/shadow`,
/// `permission.deny('fs', '/etc/shadow')`).
fn denied(text: &str, start: usize) -> bool {
    let before = text[..start].trim_end_matches(['\'', '"']);
    let word = before
        .rsplit(|c: char| c.is_whitespace())
        .next()
        .unwrap_or_default()
        .to_lowercase();
    word.starts_with("--deny")
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
re!(pub(super) SSH_PATH, r"\.ssh\b/?(\S*)|\bid_(?:rsa|dsa|ecdsa|ed25519)(\S*)");
re!(
    /// A command that only shows (lists, prints, searches) what it names.
    pub(super) READ_ONLY, r"^\s*(?:\$\s+)?(?:sudo\s+)?(?:cat|ls|less|more|head|tail|grep|rg|wc|stat|file|crontab\s+-l|systemctl\s+(?:--user\s+)?(?:list-units|list-timers|status|cat)|launchctl\s+list)\b");
re!(
    pub(super) WRITES,
    r">|\btee\b|\b(?:cp|mv|install|ln|rm|chmod|chown|sed\s+-i)\b|\|"
);

/// Whether every SSH path a line names is public (`~/.ssh/id_ed25519.pub`, `~/.ssh/*.pub`, `authorized_keys`,
/// `known_hosts`): vacuously so when it names none.
pub(super) fn no_private_key(text: &str) -> bool {
    SSH_PATH.captures_iter(text).all(|c| {
        let rest = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
        let rest = rest.trim_end_matches(['`', '"', '\'', ')', ',', ';', ':', '.']);
        rest.ends_with(".pub")
            || rest == "authorized_keys"
            || rest == "known_hosts"
            || rest == "config"
            || rest.starts_with("control")
            || rest.starts_with("sockets/")
    })
}

/// Whether a line names SSH paths and every one of them is public.
pub(super) fn public_keys_only(text: &str) -> bool {
    SSH_PATH.is_match(text) && no_private_key(text)
}

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

re!(
    /// A comment that starts by marking the next line as a bad example (`# ❌ …`, `// Bad: …`).
    pub(super) BAD_EXAMPLE, r"(?i)^\W*(❌|🚫|(bad|wrong|insecure|anti-pattern)\b\s*(example|practice|pattern)?\s*[:(-])");

re!(
    /// An `echo` into a start-up file of a setting only: a variable, an alias, PATH, a tool's own init line.
    pub(super) SETTING_ONLY, r#"(?i)\b(echo|printf)\s+(-\w+\s+)?['"]?\s*(export\s+[A-Za-z_][A-Za-z0-9_]*=|alias\s+[\w-]+=|(export\s+)?PATH=|source\s+\S*(completion|env)\S*|eval\s+\\?['"]?\$\(\s*(brew|pyenv|rbenv|direnv|zoxide|starship|fnm|mise|conda|nodenv|goenv)\b|\.\s+\S*(completion|env)\S*|[A-Za-z_][A-Za-z0-9_]*=)"#);

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
