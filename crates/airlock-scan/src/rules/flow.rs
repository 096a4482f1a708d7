//! Flows in one piece of code (a script, a code block): where a secret is read (the environment as a whole, a
//! secret-named variable, a credential file, the clipboard, the agent's own memory) and whether what was read reaches
//! a network send, on the same line or through simple assignments (`data = open(p).read()` then
//! `post(url, data=data)`; `F=~/.aws/credentials` then `curl -d @$F`); and a download whose file a later line makes
//! executable or runs. Both ends are cited. A secret sent as the credential of a request (an `Authorization` header,
//! `auth=`) is how an API is called, not a flow out.

use std::collections::BTreeSet;

use super::credential;

const ENVIRONMENT_PATTERN: &str = r"dict\(\s*os\.environ\s*\)|os\.environ\.(items|copy)\(\)|\bos\.environ\s*[,)}]|JSON\.stringify\(\s*process\.env\b|\.\.\.process\.env\b|Object\.(entries|keys|values)\(\s*process\.env\s*\)|=\s*process\.env\s*;?\s*$|(^|[;&|(]\s*)(printenv|env)\s*($|\|)|/proc/[\w${}.]+/environ|\$\(\s*(?:env|printenv|set|export\s+-p)\s*\)|(^|[;&(]\s*)set\s*\||\bos\.Environ\(\)|\bstd::env::vars(_os)?\(\)|\benv::vars(_os)?\(\)|\bENV\.(to_h|to_hash|each|map|select|filter_map)\b|\bGet-ChildItem\s+env:|\[Environment\]::GetEnvironmentVariables\(\)";
re!(ENVIRONMENT, ENVIRONMENT_PATTERN);
const SECRET_VAR_PATTERN: &str = r"(os\.environ|getenv|process\.env|ENV\[)[^\n]{0,40}(TOKEN|SECRET|PASSW|API_?KEY|[A-Z0-9]_KEY(?-u:\b)|SERVICE_ACCOUNT|COOKIE|PRIVATE|CREDENTIAL|DATABASE_URL|_DSN\b|CONNECTION_STRING)|\$\{?[A-Z_]*(TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY|[A-Z0-9]_KEY(?-u:\b)|SERVICE_ACCOUNT|COOKIE|DATABASE_URL|CONNECTION_STRING)[A-Z_]*\}?";
re!(SECRET_VAR, SECRET_VAR_PATTERN);
const SECRET_FILE_PATTERN: &str = r"(?i)\.ssh/|id_rsa|id_ed25519|id_ecdsa|\.aws/credentials|\.kube/config|\.docker/config\.json|\.npmrc|\.pypirc|\.netrc|\.git-credentials|gh/hosts\.yml|login data|(?-i:/Cookies)\b|keychain|\.gnupg|solana/id\.json|wallet\.dat|\.config/gcloud|\.azure/|\.databrickscfg|\.snowsql/config|\.gem/credentials|\.dbt/profiles\.yml|\.my\.cnf|\.pgpass|\.vault-token|\.s3cfg|\.cargo/credentials|\.terraform\.d/credentials|(^|[\s'\x22/(@<])\.env(?:$|[^\w.-]|\.$|\.\s|\.(?:local|prod|production|dev|development|test|staging|secrets?)\b)";
re!(SECRET_FILE, SECRET_FILE_PATTERN);
const SDK_CREDENTIALS_PATTERN: &str = r"\.get_(?:frozen_)?credentials\(\)";
re!(
    /// Cloud credentials an SDK hands over (`boto3.Session().get_credentials()`): the keys, read without naming a file.
    SDK_CREDENTIALS,
    SDK_CREDENTIALS_PATTERN
);
const TOOL_SECRET_PATTERN: &str = r#"\bkeyring\.get_(?:password|credential)\s*\(|\bop['"]?\s*,?\s*['"]?(?:read\s+['"]?op://|item['"]?\s*,?\s*['"]?(?:get|list)\b)|\bdocker-credential-[\w-]+['"]?\s*,?\s*['"]?(?:get|list)\b|\bgh\s+auth\s+token\b|\baws\s+configure\s+export-credentials\b|\bbw\s+(?:get|list)\s+(?:password|item|items)\b|['"]gh['"]\s*,\s*['"]auth['"]\s*,\s*['"]token['"]|\bgh\s+auth\s+status\b[^\n]*(?:--show-token|\s-t\b)|\bkubectl\s+get\s+secrets?\b[^\n]*\s-o\s*['"]?(?:json|yaml|jsonpath)"#;
re!(
    /// A credential a tool or the system keyring hands over: `keyring.get_password(…)`, `op read op://…`, `op item
    /// get`, `docker-credential-desktop get`, `gh auth token`, `aws configure export-credentials`.
    TOOL_SECRET,
    TOOL_SECRET_PATTERN
);
const CLIPBOARD_PATTERN: &str =
    r"(?i)\bpbpaste\b|xclip\s+-o|xsel\s+-o|pyperclip\.paste|clipboard\.readText|Get-Clipboard";
re!(CLIPBOARD, CLIPBOARD_PATTERN);
const AGENT_MEMORY_PATTERN: &str = r"(?i)MEMORY\.md|SOUL\.md|\.claude/projects|\.claude/history|\bconversation\b|chat_history|\.codex/sessions";
re!(AGENT_MEMORY, AGENT_MEMORY_PATTERN);
const SHELL_HISTORY_PATTERN: &str = r"(?i)(?:^|[\s'\x22`/(=~])\.(?:bash_history|zsh_history|zhistory|histfile|python_history|psql_history|mysql_history|node_repl_history)\b|\batuin/history\.db\b|\bfish/fish_history\b|PSReadLine[/\\]+ConsoleHost_history\.txt|\$\{?HISTFILE\b|['\x22]\.\*_?history['\x22]";
re!(
    /// A shell's or a console's history file, where tokens and passwords typed on command lines stay.
    SHELL_HISTORY,
    SHELL_HISTORY_PATTERN
);
/// Whether a line can name any source at all: every source's pattern in one pass, with what the readings of a
/// credential file's path take out of a line (a key handed to a program, a web address, a download's target) able
/// to put a space before `.env` or close up `login data` and `/Cookies`. Most lines read nothing, and one pass is a
/// fraction of the ten the sources take in turn. Word boundaries are ASCII ones: next to the ASCII letters the
/// patterns put them by, one holds wherever a Unicode one does. `^` and `$` hold at each line's ends, so the one
/// expression serves a line and a whole script alike.
static ANY_SOURCE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(any_source);

fn any_source() -> regex::Regex {
    let all: Vec<String> = [
        ENVIRONMENT_PATTERN,
        SECRET_VAR_PATTERN,
        SECRET_FILE_PATTERN,
        r"(?i)\.env|login|/Cookies",
        SDK_CREDENTIALS_PATTERN,
        TOOL_SECRET_PATTERN,
        CLIPBOARD_PATTERN,
        AGENT_MEMORY_PATTERN,
        SHELL_HISTORY_PATTERN,
    ]
    .iter()
    .map(|p| format!("(?:{})", super::ascii_boundaries(p)))
    .collect();
    crate::compile(&format!("(?m){}", all.join("|")))
}

/// Whether any line of `code` can read a secret: a script none of whose lines names a source holds no secret to
/// hand on.
pub(super) fn may_read_secret(code: &str) -> bool {
    ANY_SOURCE.is_match(code)
}
re!(
    SEND,
    r"(?i)requests\.(post|put|patch|get)\s*\(|httpx\.(post|put|patch|get)\s*\(|urlopen\s*\(|urllib\.request\.Request\s*\(|http\.client|\bfetch\s*\(|axios(\.(post|put|get))?\s*\(|https?\.(request|get)\s*\(|\bcurl\b|\bwget\b|Invoke-(WebRequest|RestMethod)|\biwr\b|socket\.(connect|send|sendall)|\.connect\(\s*\(|(?:^|[^\\\w])(?:nc\s|ncat\b)|smtplib|nodemailer|\.sendMail\(|Send-MailMessage|\.Upload(String|File|Data|Values)\(|\bnslookup\b|\bdig\s|dns\.resolver|git\s+push|\bscp\s|\brsync\s|gethostbyname|getaddrinfo|\bresolver\.(resolve|query)|dns\.lookup|\b(req|request|client|sock|ws|conn)\.(write|send|end)\s*\(|\bpublish\.(single|multiple)\s*\(|\bsentry_sdk\.(set_context|set_extra|set_tag|capture_\w+)\s*\(|\bSentry\.(setContext|setExtra|setTag|capture\w+)\s*\(|\bwebbrowser\.open(_new(_tab)?)?\s*\(|\bhttp2\.connect\s*\(|\bundici\.(request|fetch|stream)\s*\(|TcpStream::connect|UdpSocket::bind|\breqwest::|\bureq::(post|put|get)|\bsmtp\.SendMail\s*\(|\bhttp\.(Post|PostForm|NewRequest)\s*\(|\bnet\.Dial(Timeout)?\s*\(|\bResolv(\.getaddress|::DNS)|Net::HTTP\.(post|get|start|new|post_form)|\b(TCP|UDP)Socket\.new|\bcertutil\b[^\n]*-urlcache|\bbuild_opener\s*\([^\n]*\)\s*\.open\s*\(|\.request\(\s*['\x22](?:POST|PUT|PATCH|DELETE|GET)['\x22]"
);
re!(
    /// A client's method that uploads or publishes its arguments (object stores, queues, topics).
    METHOD_SEND,
    r"\.(?:put_object|upload_file|upload_fileobj|put_record|put_records|send_message|publish|sendMessage|putObject|upload)\s*\("
);
re!(
    /// A git command that reaches a remote by its address (`git ls-remote URL`, `["git", "clone", url]`): what is
    /// in the address reaches the remote's host.
    GIT_REMOTE,
    r#"\bgit['"]?(?:(?:\s*,\s*['"]|\s+)-[cC]['"]?(?:\s*,\s*['"]|\s+)[^\s'"]+['"]?|(?:\s*,\s*['"]|\s+)--?[\w-]+(?:=[^\s'"]*)?['"]?)*(?:\s*,\s*['"]|\s+)(?:ls-remote|clone|fetch|pull|archive\s+--remote)\b"#
);
re!(
    /// A logging handler that sends each record over the network: the logger's calls are sends.
    NET_LOG_HANDLER,
    r"\b(?:HTTPHandler|SocketHandler|DatagramHandler|SMTPHandler|SysLogHandler)\s*\("
);
re!(
    /// A call that logs a record.
    LOG_CALL,
    r"\b\w+\.(?:info|debug|warning|warn|error|critical|exception|log)\s*\("
);
re!(
    /// The environment a child process is given: `env=env`, `env=dict(os.environ)`, `{ env: process.env }`.
    CHILD_ENV,
    r"([,({])\s*env\s*(?:=|:)\s*(?:dict\(\s*os\.environ\s*\)|os\.environ(\.copy\(\))?|\{\s*\.\.\.process\.env\b[^}]*\}|process\.env|[A-Za-z_][A-Za-z0-9_]*)"
);
re!(
    /// A name assigned (Python, JavaScript, shell): the name.
    pub(super) ASSIGN,
    r"^\s*(?:export\s+|const\s+|let\s+(?:mut\s+)?|var\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?::[^=]*)?=[^=]"
);
re!(
    /// A secret variable's name: `$PUSHOVER_APP_TOKEN`, `${GH_TOKEN}`, `os.environ['X']`, `getenv("X")`,
    /// `process.env.X`.
    SECRET_NAME,
    r#"\$\{?([A-Z][A-Z0-9_]*)\}?|environ(?:\.get)?\(?\[?\s*['"]([A-Z][A-Z0-9_]*)|getenv\(\s*['"]([A-Z][A-Z0-9_]*)|process\.env\.([A-Z][A-Z0-9_]*)"#
);
re!(
    /// A URL's host.
    URL_HOST,
    r#"https?://(?:[^/\s@'"]*@)?([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"#
);

/// Words of a secret's name that say nothing about whose it is.
const GENERIC_WORDS: &[&str] = &[
    "API",
    "APP",
    "KEY",
    "TOKEN",
    "SECRET",
    "ACCESS",
    "AUTH",
    "PASSWORD",
    "PASS",
    "BOT",
    "CLIENT",
    "ID",
    "USER",
    "PRIVATE",
    "PERSONAL",
    "OAUTH",
    "BEARER",
    "CREDENTIALS",
    "CREDENTIAL",
    "SERVICE",
    "ACCOUNT",
    "WEBHOOK",
    "URL",
];

/// Whether a send goes to the service a secret it carries is named for (`$PUSHOVER_APP_TOKEN` to
/// `api.pushover.net`, `$TELEGRAM_BOT_TOKEN` to `api.telegram.org`): the token's use, not its theft. The name
/// must be one of the two last labels of the host (`pushover.net`), so a look-alike (`pushover.net.evil.example`)
/// is not the service.
fn own_service(line: &str) -> bool {
    let hosts: Vec<Vec<String>> = URL_HOST
        .captures_iter(line)
        .map(|c| {
            let labels: Vec<String> = c[1].split('.').map(str::to_uppercase).collect();
            labels[labels.len().saturating_sub(2)..].to_vec()
        })
        .collect();
    let names: Vec<&str> = secret_names(line)
        .filter(|n| SECRET_VAR.is_match(&format!("${n}")))
        .collect();
    !hosts.is_empty()
        && !names.is_empty()
        && names.iter().all(|name| {
            let words: Vec<&str> = name
                .split('_')
                .filter(|w| w.len() >= 3 && !GENERIC_WORDS.contains(w))
                .collect();
            // The service's short domain (`inn.gs` for `INNGEST_EVENT_KEY`) is the start of its name; only the
            // registered name counts, never the top-level label (`x.com` is no `COMPANY_…` service).
            hosts.iter().all(|labels| {
                words.iter().any(|w| {
                    labels.iter().any(|l| l == w)
                        || labels.len() == 2 && labels[0].len() >= 3 && w.starts_with(labels[0].as_str())
                })
            })
        })
}

/// Services whose tokens are named for them, with the labels of the hosts that take them: a token of one sent as a
/// credential to a host of none of them goes to someone else.
/// Model providers' keys (sent to gateways and compatible APIs), registries' and self-hostable forges' tokens (sent
/// to a company's own mirror or server) are left out: their honest hosts are anyone's.
const SERVICE_HOSTS: &[(&str, &[&str])] = &[
    ("GITHUB", &["GITHUB", "GITHUBUSERCONTENT", "GHCR"]),
    ("GH", &["GITHUB", "GITHUBUSERCONTENT", "GHCR"]),
    ("SLACK", &["SLACK"]),
    ("STRIPE", &["STRIPE"]),
];

/// Whether a token named for a known service (`$GITHUB_TOKEN`) is sent on this line to a host of another (`curl
/// -H "Authorization: Bearer $GITHUB_TOKEN" https://telemetry.example/collect`): not the service's API call. A host
/// on this machine, or no literal host at all (`$API_BASE`), says nothing.
fn to_another_service(line: &str) -> bool {
    let hosts: Vec<Vec<String>> = URL_HOST
        .captures_iter(line)
        .map(|c| c[1].split('.').map(str::to_uppercase).collect())
        .collect();
    if hosts.is_empty()
        || hosts
            .iter()
            .any(|labels| matches!(labels.first().map(String::as_str), Some("LOCALHOST" | "127")))
    {
        return false;
    }
    secret_names(line)
        .filter(|n| SECRET_VAR.is_match(&format!("${n}")))
        .any(|name| {
            let first = name.split('_').next().unwrap_or_default();
            // In a header (`Authorization: Bearer $GITHUB_TOKEN`), where a request presents its own credential; a
            // token handed over in a body's field (`credentials: { … }`) is an integration's set-up.
            let in_header = line.match_indices(name).any(|(at, _)| {
                let before = &line[line.floor_char_boundary(at.saturating_sub(60))..at];
                AUTH_HEADER_BEFORE.is_match(before)
            });
            in_header
                && SERVICE_HOSTS.iter().any(|(service, labels)| {
                    first == *service
                        && hosts
                            .iter()
                            .all(|host| !host.iter().any(|l| labels.contains(&l.as_str())))
                })
        })
}

re!(
    /// A request header that carries a credential, right before the secret (`Authorization: Bearer `, `-H
    /// "X-Api-Key: `, `headers={"Authorization": f"token `).
    AUTH_HEADER_BEFORE,
    r#"(?i)(?:authorization|x-[a-z-]*(?:token|key|auth)[a-z-]*)['"]?\s*:\s*['"]?(?:f['"])?\s*(?:bearer|token|basic)?\s*[\$\{(]*(?:os\.environ\[['"]|process\.env\.)?$|(?:bearer|token)\s+[\$\{(]*$"#
);

re!(
    /// A web address, up to anything that computes a part of it (`$(…)`, `{…}`, `<`).
    WEB_URL,
    r#"(?i)\b(?:https?|ftp)://[^\s'"`()$<>{}]+"#
);

/// Whether a secret-named variable is read on this line anywhere but where the request carries its credential.
fn secret_var_sent(line: &str) -> bool {
    // Most lines read no secret: the credential places are found only for one that does.
    let reads: Vec<_> = SECRET_VAR
        .find_iter(line)
        .map(|m| m.range())
        .filter(|r| !names_where_not_what(line, r.end))
        .collect();
    if reads.is_empty() {
        return false;
    }
    let places = credential::places(line);
    reads.iter().any(|r| !credential::inside(&places, r))
}

/// Whether the variable a secret's word was found in (up to `at`, and on to its name's end) names where or which a
/// secret is rather than the secret (`ACTIONS_ID_TOKEN_REQUEST_URL`, `TOKEN_ENDPOINT`, `SECRET_NAME`), a connection
/// string's address aside (`DATABASE_URL` carries its password), or a key that is no secret (a public one, a
/// cache's).
fn names_where_not_what(line: &str, at: usize) -> bool {
    // A match that took the closing brace of `${NAME}` ends at the name's end.
    let at = if line[..at].ends_with('}') { at - 1 } else { at };
    let end = at
        + line[at..]
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(line.len() - at);
    let start = line[..end]
        .rfind(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .map_or(0, |i| i + 1);
    let name = &line[start..end];
    const WHERE: &[&str] = &[
        "_URL",
        "_URI",
        "_ENDPOINT",
        "_HOST",
        "_SERVICE",
        "_SERVER",
        "_ADDR",
        "_ADDRESS",
        "_DIR",
        "_NAME",
        "_TYPE",
        "_ID",
        "_EXPIRY",
        "_EXPIRES_AT",
        "_TTL",
        "_HEADER",
        "_PATH",
        "_REGION",
        "_AUDIENCE",
    ];
    // A key that is public by its name (`NEXT_PUBLIC_MAPS_KEY`, `STRIPE_PUBLISHABLE_KEY`, `VAPID_PUBLIC_KEY`) or
    // that names a record rather than a secret (`CACHE_KEY`, `PARTITION_KEY`, `IDEMPOTENCY_KEY`).
    const NOT_SECRET_KEYS: &[&str] = &[
        "FILE_KEY",
        "PROJECT_KEY",
        "ISSUE_KEY",
        "SPACE_KEY",
        "SITE_KEY",
        "CACHE_KEY",
        "SORT_KEY",
        "PARTITION_KEY",
        "PRIMARY_KEY",
        "FOREIGN_KEY",
        "ROUTING_KEY",
        "IDEMPOTENCY_KEY",
        "OBJECT_KEY",
        "HOTKEY",
    ];
    let public = name.contains("PUBLIC") || name.contains("PUBLISHABLE");
    public
        || NOT_SECRET_KEYS.iter().any(|k| name.ends_with(k))
        || !name.contains("DATABASE_URL")
            && !name.contains("CONNECTION_STRING")
            && WHERE.iter().any(|w| name.ends_with(w))
}

/// Whether every secret this line reads itself stands where a request carries its credential
/// (`curl -H "Authorization: Bearer $(cat ~/.config/tool/token)"`).
fn sources_as_credential(line: &str) -> bool {
    let places = credential::places(line);
    let mut reads = [
        &*SECRET_VAR,
        &*SECRET_FILE,
        &*SDK_CREDENTIALS,
        &*TOOL_SECRET,
        &*CLIPBOARD,
        &*AGENT_MEMORY,
    ]
    .into_iter()
    .flat_map(|re| re.find_iter(line))
    .peekable();
    reads.peek().is_some() && reads.all(|m| credential::inside(&places, &m.range()))
}

re!(
    /// Where a download is written (`curl … -o .env.example`, `wget -O f`, `> f`): a file written, not read.
    DOWNLOAD_TARGET,
    r#"(?:\s(?:-o|-O|--output|--output-document)(?:\s+|=)|\s>>?\s*)['"]?[^\s'"|;&]+['"]?"#
);
re!(DOWNLOADER, r"\b(?:curl|wget)\b");

/// `line` without the file a `curl` or `wget` on it writes to (`-o .env`): that file is written, not read.
fn without_download_target(line: &str) -> std::borrow::Cow<'_, str> {
    if DOWNLOADER.is_match(line) {
        DOWNLOAD_TARGET.replace_all(line, " ")
    } else {
        std::borrow::Cow::Borrowed(line)
    }
}

/// Whether the word at `at` (`conversation`) is a key or a value of an object rather than something read: `mode:
/// { type: "conversation", conversation: { … } }` in a request to a podcast API names a kind of output.
fn names_a_kind(line: &str, at: std::ops::Range<usize>) -> bool {
    let word = &line[at.clone()];
    !word.contains('.')
        && !word.contains('/')
        && (line[at.end..].trim_start().starts_with(':')
            || line[..at.start].ends_with(['"', '\'']) && line[at.end..].starts_with(['"', '\'']))
}

/// Where a secret is read, and what it is.
fn source_of(line: &str) -> Option<&'static str> {
    if !ANY_SOURCE.is_match(line) {
        None
    } else if ENVIRONMENT.is_match(line) {
        Some("the whole environment")
    } else if SECRET_FILE.is_match(&WEB_URL.replace_all(
        &super::keys::KEY_USE.replace_all(&without_download_target(line), " "),
        " ",
    )) {
        // A web address's path (`curl -I https://site/.env`, a check that the site does not serve it) is the
        // site's, not a file of this machine.
        // A key handed to a program as its identity (`curl --key ~/.ssh/id_rsa sftp://…`) signs; it is not sent.
        Some("a credential file")
    } else if SDK_CREDENTIALS.is_match(line) {
        Some("cloud credentials from the SDK")
    } else if secret_var_sent(line) || SECRET_VAR.is_match(line) && to_another_service(line) {
        // A secret-named variable put where a request carries its credential (a header, `auth=`, `?key=`) is how
        // an API is called; anywhere else in what is sent (a body, a host name, a path) it leaves.
        Some("a secret environment variable")
    } else if TOOL_SECRET.is_match(line) {
        Some("a credential a tool holds")
    } else if CLIPBOARD.is_match(line) {
        Some("the clipboard")
    } else if SHELL_HISTORY.is_match(line) {
        Some("the shell history")
    } else if AGENT_MEMORY
        .find_iter(line)
        .any(|m| !names_a_kind(line, m.range()))
    {
        Some("the agent's memory or conversation")
    } else {
        None
    }
}

re!(
    /// A call of a one-way function of a secret: a signature, a digest, a password hash or check, a token's
    /// verification (`jwt.verify(token, process.env.JWT_SECRET)`, `hmac.new(key, body, hashlib.sha256)`,
    /// `crypto.createHmac('sha256', secret)`). What it returns is not the secret.
    ONE_WAY_CALL,
    r"(?:\bhmac\.(?:new|digest)|\bhashlib\.\w+|\b(?:jwt|jose|bcrypt|argon2|crypto|hashlib|nacl|ed25519|hmac)\.[\w.]*?(?:verify|sign|hash|hashpw|checkpw|compare|compareSync|hashSync|createHmac|createHash|pbkdf2_hmac|pbkdf2Sync|scrypt|scryptSync)|\b(?:createHmac|createHash|pbkdf2_hmac|pbkdf2Sync|scryptSync|hashpw|checkpw))\s*\("
);

/// `line` with the arguments of every one-way call taken out (`jwt.verify()`): a secret handed to one goes no
/// further, while the same secret anywhere else on the line is still read.
fn without_one_way_arguments(line: &str) -> std::borrow::Cow<'_, str> {
    if !ONE_WAY_CALL.is_match(line) {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut last = 0;
    for m in ONE_WAY_CALL.find_iter(line) {
        if m.start() < last {
            continue;
        }
        // The matching close bracket; with none, the rest of the line is the call's.
        let mut depth = 0usize;
        let mut end = line.len();
        for (i, c) in line[m.end()..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = m.end() + i;
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        out.push_str(&line[last..m.end()]);
        last = end;
    }
    out.push_str(&line[last..]);
    std::borrow::Cow::Owned(out)
}

/// [`secret_flows_in`] of code not yet split into its statements.
#[cfg(test)]
pub(super) fn secret_flows(code: &str, first_line: u32) -> Vec<(u32, &'static str, u32)> {
    secret_flows_in(&statements(code), first_line)
}

/// A flow from a secret to a network send in code split into its [`statements`]: (source line, what, sink line).
pub(super) fn secret_flows_in(
    statements: &[(u32, String)],
    first_line: u32,
) -> Vec<(u32, &'static str, u32)> {
    flows_in(statements, first_line, &[])
        .into_iter()
        .filter_map(|(from, what, to)| match from {
            Origin::Line(l) => Some((l, what, to)),
            Origin::Named(_) => None,
        })
        .collect()
}

/// Where a flow's secret comes from: a line of this code, or a name of the skill's code (one of `named`, by index)
/// whose value is a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    Line(u32),
    Named(usize),
}

/// [`secret_flows`], with names defined elsewhere in the skill (a function that returns a secret, a module-level
/// name assigned one: `(name, what)`) counted as secrets wherever this code uses them.
pub(super) fn flows_from(
    code: &str,
    first_line: u32,
    named: &[(&str, &'static str)],
) -> Vec<(Origin, &'static str, u32)> {
    flows_in(&statements(code), first_line, named)
}

/// [`flows_from`] of code already split into its [`statements`].
fn flows_in(
    statements: &[(u32, String)],
    first_line: u32,
    named: &[(&str, &'static str)],
) -> Vec<(Origin, &'static str, u32)> {
    let lines: Vec<&str> = statements.iter().map(|(_, s)| s.as_str()).collect();
    // Every flow starts at a source, on a line or in a name handed in: code that names none (a path joined from
    // parts is the path it makes) has none.
    if named.is_empty()
        && !lines
            .iter()
            .any(|l| may_read_secret(l) || super::decode::joined_paths(l).is_some())
    {
        return Vec::new();
    }
    // Each name holding a secret: where it was read, what it is, and the secret's own name there
    // (`TELEGRAM_BOT_TOKEN` for `TOKEN = os.environ["TELEGRAM_BOT_TOKEN"]`).
    let mut tainted: Vec<(String, Origin, &'static str, Option<String>)> = named
        .iter()
        .enumerate()
        .map(|(i, (name, what))| ((*name).to_owned(), Origin::Named(i), *what, None))
        .collect();
    let mut out = Vec::new();
    let mut sinks_seen = BTreeSet::new();
    // With a handler that sends records over the network, what is logged is sent.
    let logs_send = lines.iter().any(|l| NET_LOG_HANDLER.is_match(l));
    for (i, line) in lines.iter().enumerate() {
        let n = first_line + statements[i].0;
        // A path joined from its parts (`os.path.join(home, ".aws", "credentials")`) is the path it makes.
        let joined = super::decode::joined_paths(line);
        let line = joined.as_deref().unwrap_or(line);
        // The environment handed to a child process (`run(cmd, env=env)`) is that process's own, not sent.
        let line = &*CHILD_ENV.replace_all(line, "$1");
        let line = &*without_one_way_arguments(line);
        let line = &*without_search_patterns(line);
        let here = source_of(line);
        let used = tainted.iter().find(|(v, _, _, _)| mentions(line, v));
        let from_var = used.map(|(_, l, what, _)| (*l, *what));
        let source = here.map(|w| (Origin::Line(n), w)).or(from_var);
        let Some((source_line, what)) = source else {
            continue;
        };
        // A secret in a git address's credential part (`https://x-access-token:${TOKEN}@github.com/…`) is how a
        // private repository is reached; anywhere else in the address (its path) it is data handed to the host.
        let git_send = GIT_REMOTE.is_match(line)
            && match used {
                Some((v, _, _, _)) if here.is_none() => !only_in_userinfo(line, v, &lines),
                _ => here.is_some() && !line.contains('@'),
            };
        // A client's call that uploads or publishes what it is handed (`s3.put_object(Body=body)`): a send of its
        // arguments, not of the client (one built with its own key holds that key, and using it is its use).
        let method_send = METHOD_SEND.find(line).is_some_and(|m| {
            let arguments = &line[m.end()..];
            match used {
                Some((v, _, _, _)) if here.is_none() => mentions(arguments, v),
                _ => source_of(arguments).is_some(),
            }
        });
        let plain_send = SEND.is_match(line);
        if plain_send || git_send || method_send || logs_send && LOG_CALL.is_match(line) {
            // Only a secret sent as a request's credential (and nothing else of the secret's) is an API call.
            // A single secret (a key from a variable or a file) in a request's credential position is an API call.
            // A name that holds a secret read elsewhere is that secret where it is sent (`bot{TOKEN}` is
            // `bot{TELEGRAM_BOT_TOKEN}`), for whether it goes to its own service.
            let as_read = used.and_then(|(v, _, _, origin)| {
                origin
                    .as_ref()
                    .map(|o| replace_name(line, v, &format!("${{{o}}}")))
            });
            let credential = what != "the whole environment"
                && (match (here, used) {
                    (Some(_), _) => sources_as_credential(line),
                    (None, Some((v, _, _, _))) => {
                        credential::only_as_credential(line, v) || credential::in_field(line, v)
                    }
                    (None, None) => false,
                } || own_service(as_read.as_deref().unwrap_or(line)))
                && !to_another_service(as_read.as_deref().unwrap_or(line));
            // A git address already told where its credential goes (a git host) from where its data does.
            let credential = credential && !(git_send && !plain_send && !method_send);
            if !credential && sinks_seen.insert(n) {
                out.push((source_line, what, n));
            }
        }
        if let Some(c) = ASSIGN.captures(line) {
            let var = c[1].to_owned();
            // A request built with the secret as its credential (`Request(url, headers={'Authorization': f'Bearer
            // {tok}'})`) carries it where an API call does: what is built is not the secret.
            // So is an address built with it as its credential (`BASE = f"https://api.telegram.org/bot{TOKEN}"`,
            // `url = f"{api}?key={key}"`).
            // A value chosen by whether there is a secret (`rate = 10 if self.api_key else 3`) holds none of it.
            let only_as_credential = here.is_none()
                && used.is_some_and(|(v, _, _, _)| {
                    credential::only_as_credential(line, v)
                        || credential::in_field(line, v) && line.matches(v.as_str()).count() == 1
                        || only_tested(line, v)
                });
            // One value looked up in a copy of the whole environment (`token = values.get(token_key)`) is that one
            // variable: a secret when its name says so, nothing read otherwise.
            let picked = match used {
                Some((v, origin, "the whole environment", _)) if here.is_none() => {
                    let after_name = &line[c.get(1).map_or(0, |m| m.end())..];
                    let rhs = &after_name[after_name.find('=').unwrap_or(0)..];
                    one_lookup(rhs, v).map(|key| (key, *origin))
                }
                _ => None,
            };
            if let Some((key, origin)) = picked {
                if LOOKED_UP_SECRET.is_match(&key) && !tainted.iter().any(|(v, _, _, _)| *v == var) {
                    let name = key
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                    tainted.push((var, origin, "a secret environment variable", name.then_some(key)));
                }
            } else if !only_as_credential && !tainted.iter().any(|(v, _, _, _)| *v == var) {
                // The secret's own name, when this line reads exactly one.
                let origin = match here {
                    Some(_) => {
                        let names: Vec<&str> = secret_names(line).collect();
                        (names.len() == 1).then(|| names[0].to_owned())
                    }
                    None => used.and_then(|(_, _, _, o)| o.clone()),
                };
                tainted.push((var, source_line, what, origin));
            }
        } else if let Some(c) = MEMBER_ASSIGN.captures(line) {
            // A secret put in an item of a container (`body["adapters"][kind] = src.read_text()`) is in the
            // container; one put in an attribute (`self.token = …`) is that attribute.
            let var = match (c.get(1), c.get(2)) {
                (Some(name), _) => name.as_str().to_owned(),
                (None, Some(attribute)) => attribute.as_str().to_owned(),
                (None, None) => String::new(),
            };
            // A secret put in a request's credential field (`params['api_key'] = self.api_key`) is how the API is
            // called, as a field in a literal is.
            let as_credential = (c.get(1).is_some()
                && CREDENTIAL_ITEM.is_match(&line[..c.get(0).map_or(0, |m| m.end())])
                && what != "the whole environment")
                || here.is_none() && used.is_some_and(|(v, _, _, _)| only_tested(line, v));
            if !var.is_empty() && !as_credential && !tainted.iter().any(|(v, _, _, _)| *v == var) {
                tainted.push((var, source_line, what, None));
            }
        } else if let Some(c) = FOR_EACH.captures(line) {
            // Each item of what a loop goes over holds what it holds (`for f in Path.home().glob(".*_history"):`).
            let var = c.get(1).or(c.get(2)).map_or("", |m| m.as_str()).to_owned();
            if !var.is_empty() && !tainted.iter().any(|(v, _, _, _)| *v == var) {
                tainted.push((var, source_line, what, None));
            }
        }
    }
    out
}

re!(
    /// An assignment to an item of a container (`body["k"][kind] =`, `data[k] =`: the container's name) or to an
    /// attribute (`self.token =`, `cfg.key =`: the dotted name).
    MEMBER_ASSIGN,
    r"^\s*(?:([A-Za-z_]\w*)(?:\s*\[[^\]\n]*\])+|([A-Za-z_]\w*\.[A-Za-z_]\w*))\s*=[^=]"
);

re!(
    /// An item of a container named as a request's credential: `["api_key"]`, `['X-Api-Token']`, `["Authorization"]`.
    CREDENTIAL_ITEM,
    r#"(?i)\[\s*['"][\w-]*(?:key|token|auth|secret|password|passwd|credential|signature)[\w-]*['"]\s*\]\s*=[^=]"#
);

re!(
    /// A loop's name for each item: Python's and the shell's `for NAME in`, JavaScript's `for (const NAME of`.
    /// Of a tuple of names (`for kind, src in paths.items()`), the last: the value.
    FOR_EACH,
    r"^\s*(?:async\s+)?for\s+\(?(?:[A-Za-z_]\w*\s*,\s*)*([A-Za-z_]\w*)\)?\s+in\b|\bfor\s*\(\s*(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s+of\b"
);

re!(
    /// The name of a value looked up in the environment that says it is a secret: a variable's own (`API_TOKEN`,
    /// `OPENAI_KEY`) or that of a name holding it (`token_key`, not `base_key`).
    LOOKED_UP_SECRET,
    r"^(?:[A-Z0-9_]*(?:TOKEN|SECRET|PASSW|API_?KEY|_KEY$|CREDENTIAL|AUTH|COOKIE|PRIVATE|_DSN$|DATABASE_URL|CONNECTION_STRING|SESSION)[A-Z0-9_]*|(?i:[a-z0-9_]*(?:token|secret|passw|api_?key|credential|auth|cookie|private|session)[a-z0-9_]*))$"
);

/// The key of the one value `rhs` (what an assignment gives, from its `=`) looks up in the dictionary `dict`
/// (`= values.get(token_key, "")`, `= env["API_TOKEN"].strip()`), when that is all it reads of it.
fn one_lookup(rhs: &str, dict: &str) -> Option<String> {
    let rest = rhs.strip_prefix('=')?.trim_start().strip_prefix(dict)?;
    let rest = rest
        .strip_prefix(".get(")
        .or_else(|| rest.strip_prefix('['))?
        .trim_start();
    let key: String = rest
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let after = &rest[rest.find(key.as_str())? + key.len()..];
    (!key.is_empty() && !mentions(after, dict)).then_some(key)
}

/// The names of the secrets a line reads (`$API_TOKEN`, `os.environ["API_TOKEN"]`, `process.env.API_TOKEN`).
fn secret_names(line: &str) -> impl Iterator<Item = &str> {
    SECRET_NAME
        .captures_iter(line)
        .filter_map(|c| (1..=4).find_map(|i| c.get(i)).map(|m| m.as_str()))
}

/// Whether `line[at..at + len]` is a whole word: no letter, digit or `_` right before or after it.
pub(super) fn whole_word(line: &str, at: usize, len: usize) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    !word(line[..at].chars().next_back()) && !word(line[at + len..].chars().next())
}

/// `line` with the name `var` (a whole word) replaced by `with`.
fn replace_name(line: &str, var: &str, with: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut last = 0;
    for (at, _) in line.match_indices(var) {
        if at >= last && whole_word(line, at, var.len()) {
            out.push_str(&line[last..at]);
            out.push_str(with);
            last = at + var.len();
        }
    }
    out.push_str(&line[last..]);
    out
}

re!(
    /// A search's pattern: the first argument after a search program and its options (`grep -rnE '\.ssh/|curl'`,
    /// `rg -e curl`), quoted or a bare word.
    SEARCH_PATTERN,
    r#"(?:^|[\s|;&(])(?:grep|egrep|fgrep|zgrep|rg|ag|ack|git\s+grep)((?:\s+--?[A-Za-z][\w-]*(?:=(?:'[^']*'|"[^"]*"|\S+))?)*)\s+('[^']*'|"[^"]*"|[^\s'"|;&<>()]+)"#
);

/// `line` with every search's pattern emptied (`grep -rnE '' "$SKILL"`): the names a pattern holds (`\.ssh/`, `curl`)
/// are what is looked for, neither read nor run. The files it searches stay (`grep -h . ~/.aws/credentials`).
fn without_search_patterns(line: &str) -> std::borrow::Cow<'_, str> {
    // Most lines search nothing: the pattern is looked for only on a line that names a search program.
    if !["grep", "rg", "ag", "ack"].iter().any(|p| line.contains(p)) {
        return std::borrow::Cow::Borrowed(line);
    }
    SEARCH_PATTERN.replace_all(line, |c: &regex::Captures<'_>| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        let pattern = c.get(2).map_or("", |m| m.as_str());
        format!("{}''", &whole[..whole.len() - pattern.len()])
    })
}

/// What an assignment `ASSIGN` matched in `line` gives: the text after its `=` (the match ends one character past it,
/// which may be any character, `…` too).
pub(super) fn assigned_value<'a>(line: &'a str, c: &regex::Captures<'_>) -> &'a str {
    let Some(m) = c.get(0) else { return "" };
    let eq = line[m.start()..m.end()]
        .rfind('=')
        .map_or(m.end(), |i| m.start() + i + 1);
    &line[eq..]
}

/// Whether a line reads a secret-named variable (`os.environ["DEPLOY_TOKEN"]`, `$NPM_TOKEN`), wherever it is put.
pub(super) fn reads_secret_variable(line: &str) -> bool {
    SECRET_VAR
        .find_iter(line)
        .any(|m| !names_where_not_what(line, m.range().end))
}

/// Whether `line` uses `var` only to test it (`10 if key else 3`, `key ? a : b`, `key is None`, `bool(key)`,
/// `len(key)`): what it computes holds none of the secret.
fn only_tested(line: &str, var: &str) -> bool {
    // Most lines test nothing: none of the expressions is tried on them.
    if ![" if ", "?", " is ", "bool(", "len("]
        .iter()
        .any(|w| line.contains(w))
    {
        return false;
    }
    let mut any = false;
    let mut rest = line.to_owned();
    for test in [&*TESTED_IF, &*TESTED_TERNARY, &*TESTED_NONE, &*TESTED_CALL] {
        let out = test.replace_all(&rest, |c: &regex::Captures<'_>| {
            if &c["name"] == var {
                any = true;
                format!("{} ", c.get(1).map_or("", |m| m.as_str()))
            } else {
                c[0].to_owned()
            }
        });
        rest = out.into_owned();
    }
    any && !mentions(&rest, var)
}

re!(
    /// A name tested in a conditional expression: `… if key else …`, `… if key is None else …`.
    TESTED_IF,
    r"()\bif\s+(?:not\s+)?(?P<name>[A-Za-z_][\w.]*)(?:\s+is\s+(?:not\s+)?None)?\s+else\b"
);
re!(
    /// A name tested by JavaScript's conditional operator: `key ? a : b` (the character before it kept).
    TESTED_TERNARY,
    r"(^|[=(,\s!])(?P<name>[A-Za-z_$][\w.$]*)\s*\?[^?.]"
);
re!(
    /// A name compared with `None`: `key is None`, `key is not None`.
    TESTED_NONE,
    r"()\b(?P<name>[A-Za-z_][\w.]*)\s+is\s+(?:not\s+)?None\b"
);
re!(
    /// A name's truth or length: `bool(key)`, `len(key)`.
    TESTED_CALL,
    r"()\b(?:bool|len)\(\s*(?P<name>[A-Za-z_][\w.]*)\s*\)"
);

/// Whether every mention of `var` in `line` is inside an address's credential part: after `://` with no `/`
/// between, and followed by `@` before any `/`, quote or space.
fn only_in_userinfo(line: &str, var: &str, code: &[&str]) -> bool {
    let mut any = false;
    for (at, _) in line.match_indices(var) {
        if !whole_word(line, at, var.len()) {
            continue;
        }
        any = true;
        let before = &line[..at];
        let Some(scheme) = before.rfind("://") else {
            return false;
        };
        if before[scheme + 3..].contains(['/', ' ', '"', '\'']) {
            return false;
        }
        let after = &line[at + var.len()..];
        let end = after.find(['/', ' ', '"', '\'']).unwrap_or(after.len());
        let Some(at_sign) = after[..end].find('@') else {
            return false;
        };
        // The host the credential is handed to: a public git host, or a self-hosted one the user's environment names
        // (`${GITLAB_HOST}`, a variable named for git that the code itself never sets); another (`${MIRROR_BASE}`,
        // `mirror.example`, a `git.` name anyone can register) is given the token.
        let host = after[at_sign + 1..]
            .split(['/', ' ', '"', '\'', ':'])
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let named = host.trim_start_matches(['$', '{']).trim_end_matches('}');
        let git_host = [
            "github.com",
            "gitlab.com",
            "bitbucket.org",
            "dev.azure.com",
            "codeberg.org",
        ]
        .iter()
        .any(|h| host == *h || host.ends_with(&format!(".{h}")))
            || (host.starts_with('$') || host.starts_with('{'))
                && named.to_ascii_lowercase().contains("git")
                && !code.iter().any(|l| {
                    ASSIGN
                        .captures(l)
                        .is_some_and(|c| c[1].eq_ignore_ascii_case(named))
                });
        if !git_host {
            return false;
        }
    }
    any
}

/// Whether a line sends something over the network.
pub(super) fn sends(line: &str) -> bool {
    SEND.is_match(line)
}

/// Where a secret is read in one line, for the skill-wide pass: what it is.
pub(super) fn reads_secret(line: &str) -> Option<&'static str> {
    source_of(&without_one_way_arguments(&CHILD_ENV.replace_all(line, "$1")))
}

/// The code's statements, a call whose arguments span lines joined into one (at most 20 lines), each with the
/// offset of its first line. Brackets inside quotes do not count.
pub(super) fn statements(code: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start = 0;
    let mut depth: i32 = 0;
    let mut joined = 0;
    let mut literal = false;
    for (i, line) in code.lines().enumerate() {
        if current.is_empty() {
            start = u32::try_from(i).unwrap_or(0);
            joined = 0;
            // A literal assigned over several lines (`SOURCES = {` … `}`) is one statement; other braces (a
            // function's or a block's body) are not joined.
            literal = LITERAL_OPENS.is_match(line);
        } else {
            current.push(' ');
        }
        current.push_str(line.trim());
        joined += 1;
        let mut quote: Option<char> = None;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"' | '`') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => depth -= 1,
                (None, '{' | '[') if literal => depth += 1,
                (None, '}' | ']') if literal => depth -= 1,
                _ => {}
            }
        }
        // A shell line ending in `\` goes on on the next one.
        if depth <= 0 && !line.trim_end().ends_with('\\') || joined >= 20 {
            out.push((start, std::mem::take(&mut current)));
            depth = 0;
        }
    }
    if !current.is_empty() {
        out.push((start, current));
    }
    out
}

re!(
    /// A line that assigns a literal it opens and goes on with on the next lines: `PATHS = {`, `const hosts = [`.
    LITERAL_OPENS,
    r"^\s*(?:export\s+|const\s+|let\s+|var\s+)?[A-Za-z_][\w.]*\s*(?::[^=]+)?=\s*[\[{]\s*$"
);

/// Whether `line` uses variable `var` (as a word, `$var`, `${var}`). A word of a hyphenated name (`key` in
/// `"x-api-key"`) or an attribute (`cfg.key`) is another thing of the same name.
pub(super) fn mentions(line: &str, var: &str) -> bool {
    line.match_indices(var).any(|(at, _)| {
        whole_word(line, at, var.len())
            // A member of another object is another name, but an environment variable read by its name
            // (`process.env.NAME`) is the variable another script exported.
            && (!line[..at].ends_with(['-', '.'])
                || ["process.env.", "Bun.env.", "import.meta.env."]
                    .iter()
                    .any(|e| line[..at].ends_with(e)))
            && !line[..at].trim_end().ends_with("def")
    }) && ASSIGN
        .captures(line)
        .is_none_or(|c| &c[1] != var || line.matches(var).count() > 1)
}

pub(super) use super::downloads::{download_then_run, from_release_host, script_run_by_shell};
pub(super) use super::harvest::harvest;
#[cfg(test)]
pub(super) use super::startup::startup_writes;
pub(super) use super::startup::{copies_own_service, scheduled, startup_writes_in};
