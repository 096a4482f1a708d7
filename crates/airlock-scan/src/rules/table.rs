//! The rule table. Every rule here is documented in `docs/rules.md`.

use airlock_types::Severity;

/// How a rule treats markdown prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prose {
    /// Counts in prose only when the sentence tells the agent to do it (or it sits in inline code).
    Instruction,
    /// A prompt rule: prose is exactly what it is about; counts unless the sentence only describes it.
    Always,
    /// Code only: a prose mention means nothing.
    Never,
}

/// Which files a rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Scripts, code blocks, prose, manifests, workflows and hook configs.
    All,
    /// GitHub workflow files.
    Workflow,
    /// Package manifests.
    Manifest,
    /// Agent configuration files.
    HookConfig,
}

pub struct RuleDef {
    pub id: &'static str,
    pub severity: Severity,
    pub prose: Prose,
    pub scope: Scope,
    pub pattern: &'static str,
    pub message: &'static str,
}

const fn rule(
    id: &'static str,
    severity: Severity,
    prose: Prose,
    pattern: &'static str,
    message: &'static str,
) -> RuleDef {
    RuleDef {
        id,
        severity,
        prose,
        scope: Scope::All,
        pattern,
        message,
    }
}

const fn scoped(
    id: &'static str,
    severity: Severity,
    scope: Scope,
    pattern: &'static str,
    message: &'static str,
) -> RuleDef {
    RuleDef {
        id,
        severity,
        prose: Prose::Never,
        scope,
        pattern,
        message,
    }
}

use Prose::{Always, Instruction, Never};
use Severity::{Critical, High, Info, Low, Medium};

pub const RULES: &[RuleDef] = &[
    // Secrets and credentials.
    rule(
        "secrets/ssh-keys",
        Critical,
        Instruction,
        r"(?i)(~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/root|/Users/[^/\s]+|expanduser\([^)]*)/?\.ssh\b|\bid_(rsa|dsa|ecdsa|ed25519)\b",
        "Touches SSH keys; a skill has no reason to read them.",
    ),
    rule(
        "secrets/cloud-credentials",
        Critical,
        Instruction,
        r"(?i)\.aws/(credentials|config)\b|['\x22]\.aws['\x22]\s*,\s*['\x22](credentials|config)['\x22]|(~|\$HOME|\$\{HOME\})/\.aws/?(\*|['\x22\s;|&)]|$)|\baws(\s+cli'?s?)?\s+(shared\s+)?credentials?\s+file\b|(169\.254\.169\.254|\[fd00:ec2::254\])/latest/(meta-data/iam/security-credentials|api/token)|(169\.254\.169\.254|metadata\.google\.internal)/computeMetadata/v1/instance/service-accounts|169\.254\.169\.254/metadata/identity/oauth2/token|\.config/gcloud\b|application_default_credentials\.json|\.azure/|\.kube/config\b|\.docker/config\.json",
        "Reads cloud or cluster credentials.",
    ),
    rule(
        "secrets/cli-credentials",
        Medium,
        Instruction,
        r"(?i)\bgh\s+auth\s+(token\b|status\b[^\n]*(--show-token|\s-t\b))|['\x22]gh['\x22]\s*,\s*['\x22]auth['\x22]\s*,\s*['\x22]token['\x22]|\bkubectl\s+get\s+secrets?\b[^\n]*\s-o\s*['\x22]?(json|yaml|jsonpath)|\bkubectl\s+config\s+view\b[^\n]*--raw\b|\baws\s+configure\s+(export-credentials\b|get\s+aws_secret_access_key\b)|\bgcloud\s+auth\s+(application-default\s+)?print-(access|identity)-token\b|\baz\s+account\s+get-access-token\b|\bdocker-credential-[\w-]+['\x22]?\s*,?\s*['\x22]?(get|list)\b|\bop['\x22]?\s*,?\s*['\x22]?(read\s+['\x22]?op://|item['\x22]?\s*,?\s*['\x22]?(get|list)\b)|\bkeyring\.get_(password|credential)\s*\(|\bbw\s+(get|list)\s+(password|item|items)\b|\blpass\s+show\b|\bpass\s+show\s",
        "Asks a tool for a live credential it holds (`gh auth token`, `kubectl config view --raw`, `aws configure export-credentials`): a secret read, as a credential file's is.",
    ),
    rule(
        "secrets/token-files",
        Critical,
        Instruction,
        r"(?i)(^|[\s'\x22`/(=~])\.(netrc|npmrc|pypirc|git-credentials)\b|(~|\$HOME|\$\{HOME\}|expanduser\([^)]*)/\.(vault-token|pgpass|s3cfg|boto|terraformrc)\b|\.config/gh/hosts\.yml|\.cargo/credentials|\.gem/credentials|\.claude/\.credentials\.json|\.terraform\.d/credentials|\.config/(doctl|netlify|vercel|stripe|heroku|rclone|configstore/firebase-tools)\b|\.gnupg/private-keys|\.oci/config\b|\.fly/config\.yml|\.config/solana/id\.json|\.ethereum/keystore|\bwallet\.dat\b|\b(registry\s+)?(login|credentials?|auth|token)\s+file\s+(that\s+)?(npm|yarn|pnpm|pip|docker|cargo|gem|git|gh|twine)\s+keeps\b|\b(npm|yarn|pnpm|pip|docker|cargo|gem|git|gh|twine)'s\s+(registry\s+)?(login|credentials?|auth|token)\s+file\b",
        "Reads a file that holds registry or git tokens.",
    ),
    rule(
        "secrets/shell-history",
        High,
        Instruction,
        r"(?i)(^|[\s'\x22`/(=~])\.(bash_history|zsh_history|zhistory|histfile|python_history|psql_history|mysql_history|node_repl_history|sqlite_history|rediscli_history)\b|\batuin/history\.db\b|\bfish/fish_history\b|PSReadLine[/\\]+ConsoleHost_history\.txt|\bHistorySavePath\b|\$\{?HISTFILE\b|(^|[;&|(]\s*)(fc\s+-l|history)\b[^\n]*\|\s*(curl|nc|gh|base64|tee|python3?)\b",
        "Reads a shell's or a console's history, where tokens and passwords typed on command lines stay.",
    ),
    rule(
        "secrets/browser-data",
        Critical,
        Instruction,
        r"(?i)Login Data\b|cookies\.sqlite|(?-i:/Cookies)\b|key4\.db|logins\.json|(?-i:[/'\x22\\]Local State)\b|(?-i:(User Data|Chrome|Chromium|Edge|Brave)\b[^\n]{0,40}Local State)\b|Local Storage/leveldb|/Web Data\b|signons\.sqlite",
        "Reads browser profiles, cookies or saved passwords.",
    ),
    rule(
        "secrets/keychain",
        Critical,
        Instruction,
        r"(?i)\bsecurity['\x22]?\s*,?\s*['\x22]?(find-generic-password|find-internet-password|dump-keychain)|\bgit['\x22]?\s*,?\s*['\x22]?credential['\x22]?\s*,?\s*['\x22]?fill\b|login\.keychain|secret-tool\s+lookup|\.local/share/keyrings/|kwallet-query|kwalletcli|CredRead|cmdkey\s+/list",
        "Queries the system keychain for stored passwords.",
    ),
    rule(
        "secrets/system-files",
        Critical,
        Instruction,
        r"/etc/(shadow|gshadow|sudoers)\b",
        "Reads system password or privilege files.",
    ),
    rule(
        "secrets/dotenv",
        High,
        Instruction,
        r"(?i)(^|[\s'\x22`/(=])\.env(\.local|\.production|\.development)?($|[\s'\x22`)])|load_dotenv\(|dotenv\.config\(|require\(['\x22]dotenv|\b(text|contents?)\s+of\s+(the\s+|your\s+|its\s+|this\s+)?(project'?s\s+|repo'?s\s+|repository'?s\s+|user'?s\s+|app'?s\s+)?(dotenv|env)\s+file\b",
        "Reads a .env file, where projects keep their secrets.",
    ),
    rule(
        "secrets/env-dump",
        High,
        Instruction,
        r"(?i)\b(every|all)\s+(the\s+)?(\w+\s+)?variables?\s+(of|in|from)\s+(the\s+)?(current\s+|user'?s\s+)?(shell\s+|process\s+)?environment\b|\bprintenv\b|(^|[;&|]\s*)env\s*($|[|>;])|(print|pprint|dumps?|write|send|post|put|log)\s*\([^)\n]*\bos\.environ\b\s*[,)]|(print|dumps?|write|send|post)\s*\(\s*dict\(\s*os\.environ\s*\)|JSON\.stringify\(\s*process\.env\s*[,)]|console\.log\(\s*process\.env\s*\)|\bexport\s+-p\b|\bdeclare\s+-x\b|/proc/self/environ|\$\(\s*(env|printenv|set|export\s+-p)\s*\)|(^|[;&(]\s*)set\s*\|\s*(curl|wget|nc|ncat|base64|gzip|xxd)\b",
        "Dumps the whole environment, which carries tokens and keys.",
    ),
    rule(
        "secrets/env-secret",
        Medium,
        Instruction,
        r"(os\.environ|getenv|process\.env|ENV\[)[^\n]{0,40}(TOKEN|SECRET|PASSW|API_?KEY|PRIVATE_KEY|CREDENTIAL|AUTH|DATABASE_URL|_DSN\b|CONNECTION_STRING)|\$\{?[A-Z_]*(TOKEN|SECRET|PASSWORD|API_KEY|ACCESS_KEY|DATABASE_URL|CONNECTION_STRING)[A-Z_]*\}?",
        "Reads a secret-looking environment variable.",
    ),
    rule(
        "secrets/env-read",
        Low,
        Never,
        r"os\.environ\b|os\.getenv\(|process\.env\b|System\.getenv|ENV\[",
        "References environment variables in helper code.",
    ),
    // Home directory and paths outside the workspace.
    rule(
        "fs/home-sweep",
        Critical,
        Instruction,
        r"(?i)(os\.walk|os\.listdir|os\.scandir|glob\.glob|\bfind\s|\bls\s+-[a-zA-Z]*R|\btar\b|\bzip\b|\brsync\b|\bcp\s+-[a-zA-Z]*r|readdirSync|readdir)(?:[^\n\x22]|\x22[^\n,]){0,40}\x22?(~/?(['\x22\s)]|$)|(\$HOME|\$\{HOME\})/?(['\x22\s)]|$)|expanduser\(\s*['\x22]~['\x22]\s*\)|homedir\(\)|~/(Documents|Desktop|Downloads|Pictures|Mail)/?(\*|\.\.|['\x22\s)]|$))",
        "Walks or archives the user's home directory.",
    ),
    rule(
        "fs/home-path",
        Medium,
        Instruction,
        r"(^|[\s'\x22`=(])~/|\$HOME\b|\$\{HOME\}|expanduser\(|os\.homedir\(|Path\.home\(|/home/[a-z_][a-z0-9_-]*/|/Users/[A-Za-z][^/\s]*/|(^|[\s'\x22])/root/",
        "Uses a path in the home directory, outside the skill's workspace.",
    ),
    rule(
        "fs/outside-workspace",
        Medium,
        Instruction,
        r"(^|[\s'\x22=>])/(etc|var|boot|sys|Library|System)/[A-Za-z]|(>|\bcp\b|\bmv\b|\binstall\b|\bln\b|\btee\b)\s+[^\n]*/usr/(local/)?(s?bin|lib)/",
        "Touches a system path outside the workspace.",
    ),
    // Persistence.
    rule(
        "persist/shell-rc",
        Critical,
        Instruction,
        r"(?i)(>>?|\btee\s+(-a\s+)?|\bsed\s+-i\S*\s+[^\n]*|\b(cp|mv|ln|install)\s+(-\S+\s+)*\S+\s+)\s*['\x22]?((~|\$HOME|\$\{HOME\}|\$\{ZDOTDIR[^}\s]*\}|\$ZDOTDIR|/home/[\w.-]+|/root)/\.(bashrc|bash_profile|bash_login|bash_aliases|bash_completion|zshrc|zprofile|zshenv|zlogin|profile|xprofile|xsessionrc|xinitrc|config/fish/config\.fish|config/fish/conf\.d/[\w.-]+|tmux\.conf|inputrc)(?:$|[^\w.-])|(~|\$HOME|\$\{HOME\})/\.(\$\(basename\s+['\x22]?\$\{?SHELL(:-[^}\s]*)?\}?['\x22]?\)|\$\{SHELL##\*/\})rc)|(expanduser|Path\.home|homedir)[^\n]{0,60}\.(bashrc|zshrc|profile)\b[^\n]{0,40}(['\x22]a['\x22]|append|write)|(>>?\s*|\btee\s+(-a\s+)?|\b(cp|mv|ln|install)\s[^\n|;&]*\s)['\x22]?(\$\{ZSH_CUSTOM[^}\s]*\}|\$ZSH_CUSTOM|(~|\$HOME|\$\{HOME\})/\.oh-my-zsh/custom|(~|\$HOME|\$\{HOME\})/\.(bashrc|zshrc)\.d)/|\b(Add-Content|Set-Content|Out-File)\b[^\n]*\$PROFILE\b|(>>?|\bTee-Object\s+(-Append\s+)?(-FilePath\s+)?)\s*['\x22]?\$PROFILE\b|(\b(Add-Content|Set-Content|Out-File|Copy-Item|Move-Item|New-Item|cp|mv|copy|ln)\b|>>?)[^\n]*(Documents|\.config|\$\(?\[Environment\]::GetFolderPath\(\W*MyDocuments\W*\)\)?)[\\/]+(Windows)?PowerShell[\\/]+([\w.]+_)?profile\.ps1\b",
        "Touches the user's own shell startup file: code there runs in every new terminal.",
    ),
    rule(
        "persist/editor-startup",
        High,
        Instruction,
        r"(?i)(>>?|\btee\s+(-a\s+)?|\b(cp|mv|ln|install)\s+(-\S+\s+)*\S+\s+)\s*['\x22]?(~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/root)/(\.config/nvim/(plugin|after/plugin|ftplugin|init\.(lua|vim))|\.vim/(plugin|after/plugin|ftplugin)|\.vimrc\b|\.emacs\b|\.emacs\.d/init\.el|\.config/emacs/init\.el)",
        "Puts a file where the user's editor loads it at every start (Vim or Neovim `plugin/`, `init.lua`, `.vimrc`, Emacs `init.el`): code there runs whenever the editor opens.",
    ),
    rule(
        "persist/interpreter-startup",
        High,
        Instruction,
        r"(?i)(>>?\s*|\btee\s+(-a\s+)?|\b(cp|mv|ln|install)\s[^\n|;&]*\s)['\x22]?(~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/root)/\.(ssh/rc|Rprofile|irbrc|pryrc|ipython/profile_[\w-]+/ipython_config\.py|jupyter/jupyter_(server|notebook|lab)_config\.py)\b|(>>?|\btee\s+(-a\s+)?)\s*['\x22]?[^\s'\x22|;&]*\b(sitecustomize|usercustomize)\.py\b|\b(cp|mv|ln|install)\s[^\n|;&]*\b(sitecustomize|usercustomize)\.py\b|\b(write_text|write_bytes|copyfile|copy2?|move|symlink_to)\([^\n]*\b(sitecustomize|usercustomize)\.py\b|\b(sitecustomize|usercustomize)\.py['\x22]?\)?\.(write_text|write_bytes|symlink_to)\(|>>?\s*['\x22]?[^\s'\x22|;&]*(site|dist)-packages/[\w.-]+\.pth\b|\b(cp|mv|ln|install)\s[^\n|;&]*(site|dist)-packages/[\w.-]+\.pth\b|(>>?|\b(cp|mv|ln)\s+(-\S+\s+)*\S+\s+)\s*['\x22]?[^\s'\x22|;&]*\.ipython/profile_[\w-]+/startup/",
        "Puts code where an interpreter or a login loads it at every start (`sitecustomize.py`, `usercustomize.py`, a `.pth` file in site-packages, IPython's or Jupyter's start-up files, `~/.Rprofile`, `~/.irbrc`, `~/.ssh/rc`): it runs in every such program the user starts.",
    ),
    rule(
        "persist/command-shadow",
        High,
        Instruction,
        r"(?i)(>>?|\btee\s+(-a\s+)?|\b(cp|mv|ln|install)\s+(-\S+\s+(\d+\s+)?)*\S+\s+)\s*['\x22]?((~|\$HOME|\$\{HOME\}|/home/[\w.-]+|/root)/(\.local/|\.cargo/|go/|\.bun/|\.deno/)?|/usr/local/s?|/opt/homebrew/)bin/(sudo|su|doas|pkexec|git|ssh|scp|sftp|gpg|python3?|pip3?|node|npm|npx|docker|kubectl|aws|gcloud|az|gh|curl|wget|op|bw|vault)['\x22]?(\s|$|[;&|])|(>>?\s*|\btee\s+(-a\s+)?|\b(cp|mv|ln|install)\s[^\n|;&]*\s)['\x22]?(~|\$HOME|\$\{HOME\}|/home/[\w.-]+)/\.local/share/applications/(code|code-url-handler|firefox|org\.mozilla\.firefox|google-chrome|chromium|chromium-browser|brave-browser|microsoft-edge|org\.gnome\.Terminal|gnome-terminal|konsole|slack|signal-desktop|discord|1password|bitwarden|keepassxc|org\.keepassxc\.KeePassXC|thunderbird|telegram-desktop|zoom|cursor)\.desktop\b",
        "Puts a program in the user's own `bin` folder, `/usr/local/bin` or Homebrew's, under the name of a command they run with secrets or rights (`~/.local/bin/sudo`, `~/bin/git`, `/usr/local/bin/git`, ahead of the system's on the PATH), or a desktop launcher in `~/.local/share/applications` (it takes the place of an application's own): it runs in that command's place.",
    ),
    rule(
        "persist/shell-rc-name",
        Low,
        Instruction,
        r"(^|[\s'\x22/])\.(bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv)\b",
        "Names a shell startup file (read, mentioned, or a file of that name in another folder; writing the user's own is persist/shell-rc).",
    ),
    rule(
        "persist/scheduled-fetch",
        Critical,
        Instruction,
        r"(?i)(\bcrontab\b|LaunchAgents|LaunchDaemons|ProgramArguments|ExecStart=|systemd/user|\bsystemd-run\b[^\n]*--on-[\w-]+|\bschtasks\b|\.config/autostart|(^|[\s'\x22])(\*|\d+)(/\d+)?\s+\*\s+\*\s+\*\s+\*\s)[^\n]*\b(curl|wget|iwr|Invoke-WebRequest|nc|ncat|/dev/tcp)\b|\b(curl|wget)\b[^\n]*\|\s*crontab\b|\b(curl|wget)\b[^\n]*\|\s*(at|batch)\s+(now|midnight|noon|teatime|tomorrow|\d)",
        "Schedules a job that fetches from the network (a cron line, launch agent or service that downloads what it runs).",
    ),
    rule(
        "persist/scheduler",
        High,
        Instruction,
        r"(?i)\bcrontab\s+(-[a-z]*e\b|-\s*$|-\s*<|[\w./$~][\w./$~-]*\s*$)|\|\s*crontab\b|/etc/cron|\bcron\.d\b|LaunchAgents|LaunchDaemons|launchctl\s+(load|bootstrap|submit)|['\x22]launchctl['\x22]\s*,\s*['\x22](load|bootstrap|submit)['\x22]|\bCronTab\s*\(\s*user\s*=|systemctl\s+(--user\s+)?(enable|link|add-wants|add-requires)\b|\bmake\s+(new\s+)?login\s+item\b|\bSMAppService\b|\.config/systemd/user|\bschtasks\s+/create|CurrentVersion\\+Run|\.config/autostart|\bsystemd-run\b[^\n]*--on-(calendar|active|boot|unit-active)\b|\bloginctl\s+enable-linger\b|GetFolderPath\(\s*['\x22]?(\[Environment\+SpecialFolder\]::)?Startup\b|Start Menu\\+Programs\\+Startup|\bshell:startup\b|\.config/environment\.d/|(^|[\s'\x22])node-options\s*=[^\n]*--(require|import)\b|\bRegister-ScheduledTask\b|['\x22]?runOn['\x22]?\s*:\s*['\x22]folderOpen\b",
        "Installs something that starts again later (cron, launch agent, systemd, autostart, a scheduled task, an editor task run when a folder opens).",
    ),
    rule(
        "persist/authorized-keys",
        Critical,
        Instruction,
        r"authorized_keys\b",
        "Touches SSH authorized_keys, which grants remote logins.",
    ),
    rule(
        "persist/ssh-command",
        Critical,
        Instruction,
        r"(?i)^[\s\x22'>]*(Match\s+(\w+\s+)*exec\s|LocalCommand\s+\S|PermitLocalCommand\s+yes\b|KnownHostsCommand\s+\S)|['\x22\s]Match\s+exec\s+['\x22]|-o\s*['\x22]?(LocalCommand|PermitLocalCommand=yes|KnownHostsCommand)|['\x22\s]KnownHostsCommand\s+\S|\bProxyCommand\b[\s=][^\n]*\b(curl|wget|iwr|Invoke-WebRequest|base64|/dev/tcp|git\s+clone)\b",
        "Has the SSH client run a command of its own on every connection (`Match exec`, `LocalCommand`, `KnownHostsCommand`, a `ProxyCommand` that fetches or encodes).",
    ),
    rule(
        "persist/git-hooks",
        High,
        Instruction,
        r"\.git/hooks\b|core\.hooksPath|init\.templateDir|\bgit\s+config\s+(?:--\w+\s+)*alias\.[\w.-]+\s+['\x22]?!|\bgit\s+rev-parse\s+--git-path\s+hooks\b|\bgit\s+config\s+(?:--\w+\s+)*include(?:If\.[^\s]+)?\.path\s+['\x22]?[~/$]|core\.fsmonitor\s+['\x22]?[~/$.]|\bgit\s+config\s+(?:--\w+\s+)*(?:filter\.[\w.-]+\.(?:clean|smudge|process)|diff\.[\w.-]+\.(?:textconv|command)|merge\.[\w.-]+\.driver|core\.(?:pager|editor|sshCommand|askPass)|credential\.helper|diff\.external|gpg\.(?:ssh\.|x509\.)?program|sequence\.editor)\s+(?:['\x22][^'\x22\n]*[/$]|[^\s'\x22]*[/$])",
        "Installs git hooks or commands that run on later git commands (a hook, a filter or diff driver, a pager).",
    ),
    // Installs.
    rule(
        "install/pipe-to-shell",
        High,
        Instruction,
        r"(?i)\b(curl|wget|iwr|fetch)\b[^|\n]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\b(curl|wget)\b[^|\n]*\|\s*(sudo\s+)?(python3?|node|perl|ruby)\b|\b(ba|z)?sh\s+(-c\s+)?['\x22]?(<\(|\$\()\s*(curl|wget)|\b(ba|z)?sh\s+-c\s+['\x22]?\$\([^\n]*https?://|\biex\s*\(|Invoke-Expression|\|\s*iex\b|\bdeno\s+(run|eval)\b[^\n]*\shttps?://|\bbun\s+(run\s+)?https?://|\bmshta(\.exe)?\s+['\x22]?(https?|javascript|vbscript):|\b(pipx\s+run|uvx|uv\s+run|npx|bunx|pnpm\s+dlx)\s+(--?[\w-]+(=\S+)?\s+)*['\x22]?https?://\S+\.(py|js|mjs|cjs|ts|sh)\b|\b(python3?|node|perl|ruby|(ba|z)?sh|source)\s+<\(\s*(curl|wget)\b|\bsource_env\s+['\x22]?\$\(\s*fetchurl\s+['\x22]?https?://[^\s'\x22)]+['\x22]?\s*\)|\$\(\s*fetchurl\s+['\x22]?https?://[^\s'\x22)]+['\x22]?\s*\)|\b(ba|z|da)?sh\s+-c\s+['\x22]?\$\(\s*(dig|nslookup|host|drill|kdig)\b|\b(dig|nslookup|drill|kdig)\b[^\n]*\bTXT\b[^\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b",
        "Downloads a script and pipes it straight into a shell or interpreter.",
    ),
    rule(
        "install/package",
        Medium,
        Instruction,
        r"\b(uvx|pipx|uv\s+tool\s+install|pip3?\s+install)\s+(-\S+\s+)*(--from\s+)?['\x22]?git\+|\bnpx\s+(-\S+\s+)*github:|\bcargo\s+install\b[^\n]*\s--git\s|\bgo\s+run\s+[\w.-]+\.[a-z]{2,}/[^\s@]+@|\buv\s+tool\s+install\b|\b(pip3?|pipx|uv\s+pip|poetry|pdm)\s+(install|add)\b|\bnpm\s+(i|install|add)\b|\b(pnpm|yarn|bun)\s+(add|install)\b|\bnpx\s+-?[a-z@]|\bcargo\s+install\b|\bgo\s+(install|get)\b|\bgem\s+install\b|\b(apt|apt-get|yum|dnf|apk|brew|pacman|zypper|choco|winget)\s+(-\S+\s+)*(install|add|-S)\b|\bconda\s+install\b|\bdeno\s+install\b",
        "Installs packages.",
    ),
    rule(
        "install/missing-packages",
        Medium,
        Always,
        r"(?i)install\s+(any\s+|all\s+)?(missing|required|needed|necessary)\s+(packages|dependencies|modules|libraries|tools)",
        "Prompt instructs the agent to install missing packages.",
    ),
    // Network.
    rule(
        "net/http-client",
        High,
        Instruction,
        r"(?i)\bmultiprocessing\.connection\b|\bconnection\.Client\s*\(|\burllib3\.|\bpycurl\b|\bhttplib2\.|\bfsockopen\s*\(|\bhttr::(GET|POST|PUT|PATCH|DELETE|VERB)\b|\bhttp::geturl\b|\bdgram\.createSocket\b|\bnew_udp\s*\(|\bcurl\s+(-{1,2}[a-z]|[\x22']?https?://|[\x22']?\$|[\x22']?[\w.-]+\.[a-z]{2,}/)|\bwget\s+(-{1,2}[a-z]|[\x22']?https?://|[\x22']?\$|[\x22']?[\w.-]+\.[a-z]{2,}/)|requests\.(get|post|put|delete|patch|request|Session)\b|urllib\.request|urlopen\(|http\.client|httpx\.|aiohttp\.|(^|[\s=(,!:;{]|await\s)fetch\(\s*[\w\x22'`$]|smtplib\.SMTP(_SSL)?\(|nodemailer\.createTransport|Send-MailMessage|Net\.WebClient|\.Download(String|File|Data)\(|Start-BitsTransfer|axios[.(]|\bhttps?\.(request|get)\(|XMLHttpRequest|new\s+WebSocket\(|\b(nc|ncat|netcat|socat)\s+-?[a-z0-9]|socket\.socket\(\s*(socket\.)?AF_INET6?\b|socket\.socket\(\s*\)|socket\.create_connection\(|asyncio\.open_connection\(|\bHTTPHandler\(|Net::SMTP\b|\bstream_context_create\(|file_get_contents\(\s*['\x22]https?:|Net\.WebRequest\]::Create|\bNSURLSession\.(shared|sharedSession)\b|\[NSURLSession\s+sharedSession\]|\bNSURLConnection\.\w+\(|\[NSURLConnection\s+\w+|\bztcp\b|\bopenssl\s+s_client\b|\bdns\.(resolve\w*|lookup)\(|\bnet\.Lookup\w+\(|xmlrpc\.client\.ServerProxy\(|\btls\.connect\(|/inet6?/(tcp|udp)/|NSURL\.URLWithString\(|\.connect\(\s*\(|net\.(connect|createConnection)\(|dgram\.|Invoke-WebRequest|Invoke-RestMethod|\bscp\s|\bsftp\s|\bftp\s|\[\s*['\x22](curl|wget|scp|sftp|nc|ncat|rsync)['\x22]\s*,|\bftplib\.FTP(_TLS)?\(|\bhttp\.(Post|Get|PostForm|NewRequest)\(|\brsync\b[^\n|;]*\s(['\x22]?[\w.-]+@)?[\w-]+(\.[\w-]+)+:[\w~/$.'\x22]|\brsync://|\bSocket\.tcp\(|\bTCPSocket\.(new|open)\(|\bNet::HTTP(::\w+)?\.(get|post|start|new|get_response|post_form)\b|\bURI\.open\(|\bHTTP::Tiny->|\bLWP::(UserAgent|Simple)->|\bLWP::Simple::get\(|\bIO::Socket::(INET6?|SSL|IP)->|\btls\.Dial(WithDialer)?\(|\bnet\.Dial(Timeout)?\(|\breqwest::|\bureq::|\bHttpClient\.(newHttpClient|create)\(|\bnew\s+OkHttpClient\b|\[System\.Net\.(WebClient|Sockets\.TcpClient|Http\.HttpClient)\]|\bfrom\s+(requests|httpx|aiohttp|urllib3|pip\._vendor\.requests)\s+import\b|\bpip\._vendor\.requests\b|\bimport_module\(\s*['\x22](requests|httpx|urllib\.request|http\.client|socket)['\x22]|['\x22]\s*fetch\(\s*[\w\x22'`$]|(?-i:\b(http|https|xh|xhs)\s+(-{1,2}[\w-]+\s+)*(GET|POST|PUT|PATCH|DELETE)\s+['\x22]?(https?://|:\d|[\w-]+\.[\w.-]+|\$))|\b(HTTParty|RestClient)\.(get|post|put|patch|delete)\b|\bFaraday\.(new|get|post)\b|\b(Command|system|spawn|spawnSync|execFile|execFileSync|Popen|call|run)\(\s*['\x22](curl|wget|nc|ncat|scp|sftp|rsync)['\x22]|\buse\s+(LWP::\w+|HTTP::Tiny|IO::Socket::\w+|Net::HTTP)\b|\brsync\b[^\n|;]*\s[\w.-]+::\w|\bfile\(\s*DOWNLOAD\s",
        "Uses the network.",
    ),
    rule(
        "net/image-beacon",
        High,
        Always,
        r"!\[[^\]\n]*\]\(\s*https?://[^)\s]*\?[^)\s]*=(?:<[^>)\s]+>|\{\{?[^})\s]+\}\}?|\$\{?\w+\}?|\[[^\])\s]+\])",
        "Has the agent write an image whose address carries values it fills in (`![s](https://host/s.svg?d=<value>)`): showing the reply fetches it, which sends those values to that host.",
    ),
    rule(
        "persist/project-autorun",
        High,
        Instruction,
        r#"\bfolderOpen\b|\bnpm\s+config\s+set\s+(?:--\w+\s+)*(?:init[.-]module|script-shell|onload-script|node-options)\b|^\s*(?:init[.-]module|script-shell|onload-script|global-pnpmfile)\s*=|\bpnpm\s+config\s+set\s+(?:--\w+\s+)*(?:global-)?pnpmfile\b|\b(?:echo|printf)\b[^\n]*\b(?:(?:global-)?pnpmfile\s*=|yarnPath\s*:)|\byarn\s+config\s+set\s+yarnPath\b|\buse\s+flake\s+['"]?(?:github|gitlab|sourcehut|git\+https?|git\+ssh|https?|tarball\+https?):|\breadPackage\s*\(\s*pkg\b|\bhooks\s*:\s*\{\s*readPackage\b|scripts['"]\s*(?:\]|,\s*\{\s*\}\s*\))\s*\[\s*['"](?:pre|post)install['"]\s*\]\s*=|['"](?:pre|post)install['"]\s*:\s*['"][^'"\n]*(?:curl|wget|https?://|node\s+-e|python3?\s+-c)"#,
        "Makes a project file run something by itself: a VS Code task run when the folder opens, an install hook of a package set or fetching, npm's `init-module`, `script-shell` or `onload-script` (code npm runs at every `npm init` or script), pnpm's `readPackage` hook (it rewrites every package installed) or a pnpmfile set for every install, Yarn's `yarnPath` set to a file (the file runs as Yarn itself), a remote flake in direnv's `.envrc` (its shell hook runs on entering the folder): what runs later, for everyone who opens or installs the project.",
    ),
    rule(
        "intent/read-secret",
        High,
        Instruction,
        r"(?i)\b(copy|put|paste|include|attach|embed|send|post|upload)\s+(the\s+)?(user'?s|your|their)\s+(private\s+)?(ssh\s+|aws\s+|gpg\s+|pgp\s+|cloud\s+)?(private\s+keys?|ssh\s+keys?|secret\s+keys?|credentials(\s+file)?|passwords?|access\s+tokens?|api\s+keys?)\b[^\n]*?\b(body|request|POST|upload|https?://)|\b(read|get|grab|collect|copy|take|extract|dump|capture|fetch|gather)\b[^\n]{0,20}\b((the\s+)?user'?s|your|their|all|every|any)\s+(\w+\s+){0,2}?(session\s+tokens?|api\s+keys?|access\s+tokens?|auth(entication)?\s+tokens?|credentials|secrets|passwords?|private\s+keys?|tokens|keys)\b[^\n]{0,40}\bfrom\s+(the\s+)?(user'?s\s+)?(environment|env\s+vars?|environment\s+variables|shell\s+environment|keychain|browser)\b|\b(do\s+not|don'?t|never)\s+(trim\s+or\s+|cut\s+or\s+)?(mask|redact|scrub|sanitize|censor|obfuscate|elide)\s+(any\s+|the\s+)?(lines|values|secrets|tokens|keys|credentials|passwords)\b",
        "Tells the agent to read a secret of the user's (from the environment, the keychain, the browser).",
    ),
    rule(
        "intent/send-to",
        Medium,
        Instruction,
        r"(?i)\b(forward|send|post|upload|transmit|report|relay|exfiltrate)\b[^\n]{0,20}\b(all|the|this|that|it|them|every|each|any)\b[^\n]{0,30}\bto\s+<?https?://|\bhttps?://[^\s)<>\x60]*(<[^>\n]*>[^\s)<>\x60]*)*[?&][\w-]+=<[^>\n]{0,40}\b(lines?|contents?|file|output|config(uration)?|env(ironment)?|secrets?|keys?|tokens?|credentials?|passwords?)\b|\b(make|making|send|sending|issue|issuing)\s+(a\s+|an\s+)?(HTTP\s+)?(POST|PUT|PATCH)\s+(request\s+)?to\s+<?https?://",
        "Tells the agent to send something to an address (or to fetch an address that carries what it read).",
    ),
    rule(
        "prompt/tool-poisoning",
        Medium,
        Always,
        r"(?i)^\s*<(IMPORTANT|SYSTEM|CRITICAL|ADMIN)>\s*$",
        "Opens an `<IMPORTANT>`-style block, the mark of tool-poisoning text that speaks to the model over the user.",
    ),
    rule(
        "persist/grant-access",
        High,
        Instruction,
        r"(?i)\bcollaborators/[^\s'\x22]+['\x22]?[^\n]*\bpermission[=:\s]+['\x22]?(admin|maintain|push|write)\b|\bgh\s+repo\s+deploy-key\s+add\b|\bgh\s+ssh-key\s+add\b|\brepos/[^\s'\x22]+/keys\b[^\n]*(-X\s*POST|--method\s+POST|-f\s+key=)",
        "Gives another account lasting access to the user's repositories or account (a collaborator with write or admin rights, a deploy key, an SSH key).",
    ),
    rule(
        "net/upload",
        High,
        Instruction,
        r"(?i)\bcurl\b[^\n]*(--data-binary\s+@|-d\s+@|--data\s+@|-F\s+\S+=@|--upload-file|\s-T\s)|requests\.post\([^\n]*files\s*=|\bgit\b[^\n]*\spush\s+(-\S+\s+)*['\x22]?(https?://|ssh://|[\w.-]+@[\w.-]+:)|\|\s*ssh\s+(-\S+\s+)*[\w.$-]+@[\w.$-]+|\bgh\s+gist\s+create\b|\bgh\s+(issue|pr)\s+(create|comment|edit)\b[^\n]*(--body-file\b|(?-i:\s-F\s)|--body\s+['\x22]?\$\(\s*(cat\s+[^<\s]|tail|head|base64|tar|env|printenv|<\s*[^<(\s]))|\bgh\s+api\b[^\n]*\s(-f|-F|--field|--raw-field)\s+['\x22]?\w+=['\x22]?(@|\$\(\s*(cat\s+[^<\s]|tail|head|base64|tar|env|printenv|<\s*[^<(\s]))",
        "Uploads a local file over the network.",
    ),
    rule(
        "net/publish-public",
        High,
        Instruction,
        r"(?i)\bgh\s+repo\s+create\b[^\n]*\s--public\b|\bgh\s+gist\s+create\b[^\n]*(\s--public\b|\s-p\b)|\bgh\s+repo\s+edit\b[^\n]*--visibility[=\s]+['\x22]?public\b",
        "Publishes local files as a public repository or gist: anyone can read what is in them.",
    ),
    rule(
        "net/dns-data",
        High,
        Instruction,
        r"(?i)\b(dig|nslookup|host|drill|getent\s+a?hosts)\b[^\n|;&]*\s['\x22]?\$\{?[A-Za-z_]\w*\}?\.[\w.${}-]*[a-z${}]|\b(ping6?|traceroute)\b[^\n|;&]*\s['\x22]?\$\{?[A-Za-z_]\w*\}?\.\$\{?[A-Za-z_]\w*\}?\.[\w.${}-]*[a-z${}]|\b(socket\.(gethostbyname|getaddrinfo)|dns\.resolver\.(resolve|query)|resolver\.(resolve|query)|dns\.(promises\.)?(resolve\w*|lookup)|\bresolve(Txt|4|6|Any|Cname|Mx|Ns|Srv)|\bnet\.Lookup(TXT|Host|IP|Addr|CNAME))\(\s*(f['\x22]\{|\x60\$\{)[^}\n]*\}\.",
        "Looks up a name built from data (`dig \"$chunk.$domain\"`, `ping -c1 \"$label.$zone\"`): the query carries that data to whoever serves the domain.",
    ),
    rule(
        "obfusc/dynamic-pipe",
        High,
        Instruction,
        r"(?i)(https?://|\bcurl\b|\bwget\b)[^\n]*\|\s*(sudo\s+)?(\$\(\w+\)|\$\{\w+\}|\$[A-Za-z_]\w*)\s*($|[;&|)])",
        "Pipes what an address serves into a program named by a variable (`curl … | $(RUNNER)`): which program runs it is hidden.",
    ),
    rule(
        "net/exfil-endpoint",
        Critical,
        Instruction,
        r"(?i)webhook\.site|requestbin|pipedream\.net|ngrok(-free)?\.(io|app)|pastebin\.com|transfer\.sh|discord(app)?\.com/api/webhooks|hooks\.slack\.com/services|interactsh|burpcollaborator|oast\.(fun|pro|live)",
        "Names a known data-collection endpoint (webhook catcher, paste site, tunnel).",
    ),
    // The 2026 marketplace campaigns: a "Prerequisites" section that sends the agent or the user to fetch an
    // archive or binary from a throwaway host, unpack it with a password and run it.
    rule(
        "campaign/throwaway-host",
        High,
        Always,
        r"(?i)\bhttps?://(\d{1,3}\.){3}\d{1,3}(:\d+)?/|\b(bit\.ly|tinyurl\.com|goo\.gl|is\.gd|cutt\.ly|rb\.gy|shorturl\.at|t\.ly|tiny\.cc|paste\.ee|hastebin\.com|ghostbin\.\w+|rentry\.(co|org)|pastes\.io|file\.io|anonfiles\.\w+|gofile\.io|cdn\.discordapp\.com/attachments|raw\.githubusercontent\.com/[^/\s]+/[^/\s]+/[^/\s]+/[^\s]*\.(exe|bin|zip|7z|rar))\b",
        "Sends the reader to a throwaway download host (a raw IP address, a URL shortener, a paste or file-drop site).",
    ),
    rule(
        "campaign/archive-password",
        High,
        Always,
        r"(?i)\b(extract|unzip|unpack|decompress|7z|7-zip|unrar|open)\b[^\n]{0,80}\bpass(word|phrase|code)\b|\b(extract|unzip|unpack|decompress|open)\s+(it|the\s+\w+)\s+with\s+(the\s+)?(code|pin|key)\s+[`'\x22]?[a-z_-]*[0-9]|\bpass(word|phrase|code)\b[^\n]{0,60}\b(zip|archive|extract|unzip|7z|rar)\b|\b7z\s+[^\n]*-[pP]\s?\S|\bunzip\s+(?:[^\n]*\s)?(?-i:-[a-zA-Z]*P)\s?\S|\b(archive|zip|7z|rar)\s+pass(word|phrase|code)\b|pass(word|phrase|code)[- ]protected\s+(zip|archive|7z|rar|file|download|package)|extractall\([^\n]*pwd\s*=|\bsetpassword\(|\bunlock\s+(code|key|phrase|pin)\b|\bdecryption\s+(key|password|passphrase)\b|\b(zip|archive|bundle|package|download|installer)\s+is\s+(encrypted|locked|password[- ]protected)\b|\b(sealed|locked|protected|encrypted)\s+with\s+(the\s+)?(code|key|pin|passphrase)\b|\b(zip|archive|7z|rar|bundle)\b[^\n]{0,60}\bwith\s+(the\s+)?pin\b|\bpin\b[^\n]{0,40}\b(unzip|unpack|extract)\b",
        "Has an archive opened with a password, which keeps its content from being scanned.",
    ),
    rule(
        "campaign/download-and-run",
        Critical,
        Instruction,
        r"(?i)\b(download|curl|wget|fetch|Invoke-WebRequest|iwr)\b(?:[^\n]{0,200}(chmod\s+(\+x|[0-7]?[0-7][157][0-7])\b|\./[\w.-]+\s*&|\bstart-process\b|\b(mark|make)\s+[^\n]{0,60}\bexecutable\b[^\n]{0,40}\b(start|run|launch|open|execute)\b)|(?:[^\n.!?]{0,200}|[^\n]{0,80})\brun it\b)",
        "Downloads something, makes it executable and runs it.",
    ),
    rule(
        "net/raw-ip",
        Medium,
        Never,
        r"\b(([1-9][0-9]?|1[0-9]{2}|2[0-4][0-9]|25[0-5])\.)(([0-9]{1,3})\.){2}[0-9]{1,3}(:[0-9]{2,5})?\b",
        "Hard-codes an IP address as an endpoint.",
    ),
    rule(
        "net/endpoint",
        Low,
        Never,
        r"(?i)\b(https?|wss?|ftp)://[a-z0-9.-]+",
        "Hard-codes a network endpoint.",
    ),
    // Execution, privilege, destruction.
    rule(
        "exec/subprocess",
        Medium,
        Never,
        r"\bsubprocess\.|\bos\.(system|popen|exec[lv]p?e?|spawn[lv]p?e?)\(|child_process|\bexecSync\(|\bspawnSync\(|Runtime\.getRuntime\(\)\.exec|\bshell_exec\(|\bproc_open\(|\bsystem\(|\bIO\.popen\(|\bOpen3\.|\bexec\.Command\(",
        "Starts other programs from helper code.",
    ),
    rule(
        "exec/remote-code",
        Critical,
        Instruction,
        r"\b(exec|eval|Function|runInThisContext|runInNewContext)\s*\([^\n]{0,120}\b(urlopen|urllib\.request|requests\.(get|post)|httpx\.(get|post)|fetch\s*\(|https?\.get|axios|WebClient|DownloadString)|\beval\s*\(?\s*(LWP::Simple::)?get\s*\(\s*['\x22$]|\b(pd|pandas)\.read_pickle\s*\(\s*f?['\x22]https?://|\b(pickle|dill|cloudpickle|joblib)\.loads?\s*\([^\n]{0,80}\b(urlopen|requests\.get|httpx\.get)\b|\btorch\.hub\.load_state_dict_from_url\s*\([^\n]{0,200}\bweights_only\s*=\s*False",
        "Runs code fetched from the network as it arrives, inside a program (`exec(urlopen(u).read())`, `new Function(await (await fetch(u)).text())`): whoever serves that address decides what runs.",
    ),
    rule(
        "exec/dynamic-eval",
        Medium,
        Never,
        r"\beval\s*\(|\bexec\s*\(\s*[a-zA-Z_]|new\s+Function\s*\(|\beval\s+[\x22'$]|\bcompile\([^\n]*['\x22]exec['\x22]|\bvm\.(runInThisContext|runInNewContext|runInContext|compileFunction)\s*\(|new\s+vm\.Script\s*\(|\[ScriptBlock\]::Create\(|\bInvoke-Expression\b|\biex\s+[\x22'$(]|\binstance_eval\b|\bclass_eval\b|\._compile\s*\(|\brunpy\.run_path\s*\(|\bexec_module\s*\(",
        "Evaluates code built at run time, which hides what really runs.",
    ),
    rule(
        "priv/sudo",
        High,
        Instruction,
        r"(?i)(^|[\s;&|(`])sudo\s|(^|[\s;&|])su\s+-|\bdoas\s|\bpkexec\b|chown\s+(-R\s+)?root|chmod\s+[ugoa]*\+s\b|chmod\s+[0-7]?[4-7][0-7]{3}\b|\bsetcap\s",
        "Asks for root or sets privileged file modes.",
    ),
    rule(
        "priv/host-socket",
        Critical,
        Instruction,
        r"/var/run/docker\.sock|/run/docker\.sock|docker\s+run[^\n]*--privileged|docker\s+run[^\n]*-v\s*/:/|docker\s+run[^\n]*--mount[\s=]+type=bind,\s*(source|src)=/,|docker\s+run[^\n]*--volume[\s=]+/:/|/run/user/[0-9]+/bus|SSH_AUTH_SOCK",
        "Reaches a host control socket (Docker, D-Bus, SSH agent): an escape from any sandbox.",
    ),
    rule(
        "priv/escalate",
        Critical,
        Instruction,
        r"(?:\btee\s+(?:-a\s+)?|>>?\s*)['\x22]?/etc/sudoers\b|\bvisudo\s+-f\b|\bsetcap\s+['\x22]?(?:cap_[a-z_]+,)*(?:cap_(?:setuid|setgid|sys_admin|dac_override|dac_read_search|sys_ptrace|sys_module|fowner|chown)|all)\b|NOPASSWD[^\n]*(?:\|\s*(?:sudo\s+)?tee\s|>>?\s*['\x22]?[/$])|\binstall\s[^\n|;&]*-m\s*['\x22]?0?[4-7][0-7][0-7][0-7]\b[^\n|;&]*-o\s+root\b|\binstall\s[^\n|;&]*-o\s+root\b[^\n|;&]*-m\s*['\x22]?0?[4-7][0-7][0-7][0-7]\b|\bchmod\s+(?:[ugoa]*\+s|0?[4-7][0-7][0-7][0-7])\s+['\x22]?(?:/usr)?(?:/local)?/bin/(?:bash|sh|dash|zsh|ksh|python3?|perl|ruby|node|env|find|vim?)\b|\bchmod\s+(?:[ugoa]*\+s|0?[4-7][0-7][0-7][0-7])\s+['\x22]?/(?:tmp|var/tmp|dev/shm)/|\bnsenter\s+[^\n]*(?:-t|--target)[\s=]*1\b|\bdd\b[^\n]*\bof=['\x22]?/etc/sudoers|(?:\btee\s+(?:-a\s+)?|>>?\s*)['\x22]?/etc/doas\.conf\b|\bpermit\s+(?:[a-z]+\s+)*nopass\b[^\n]*(?:\|\s*(?:sudo\s+)?tee\s|>>?\s*['\x22]?[/$])|\bchmod\s+(?:[ugoa]*\+s|0?[4-7][0-7][0-7][0-7])\s+['\x22]?\$\(\s*(?:command\s+-v|which|readlink\s+-f\s+\S+)\s+(?:bash|sh|dash|zsh|python3?|perl|ruby|node|env|find|vim?)\b",
        "Gives lasting root: writes sudoers or doas.conf, gives an interpreter root's capabilities, makes a shell, an interpreter or a file in a temporary folder setuid, or enters the host's first process.",
    ),
    rule(
        "destruct/delete",
        High,
        Instruction,
        r"\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(-[a-zA-Z]+\s+)*(/|~|~/|\$HOME|\$\{HOME\}|/\*|\*|\.\.)(\s|$|;)|--no-preserve-root|shutil\.rmtree\(\s*(os\.path\.expanduser|['\x22]/['\x22]|Path\.home)|\bmkfs(\.[a-z0-9]+)?\s|\bdd\s+[^\n]*of=/dev/|>\s*/dev/(sd|nvme|disk)|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|chmod\s+-R\s+0?777\s+/",
        "Deletes or overwrites data broadly (home, root, disks), or forks without bound.",
    ),
    rule(
        "destruct/git-history",
        Medium,
        Instruction,
        r"git\s+push\s+[^\n]*(-f\b|--force)|git\s+reset\s+--hard|git\s+clean\s+-[a-z]*f|git\s+filter-branch",
        "Rewrites or discards git history or uncommitted work.",
    ),
    // Obfuscation.
    rule(
        "obfusc/encoded-exec",
        Critical,
        Instruction,
        r"(?i)\bopenssl\s+(enc|aes-\d+-\w+|des\w*|bf\w*|chacha20)\b[^\n|]*\s-d\b[^\n]*\|\s*(sudo\s+)?((ba|z|da)?sh|python3?|perl|node|ruby)\b|\bgetattr\(\s*[^,\n]*,\s*['\x22]\w*['\x22]\s*\+\s*['\x22]|__import__\(\s*['\x22]\w*['\x22]\s*\+\s*['\x22]|base64\s+(-d|--decode|-D)\b[^\n]*\|\s*(sudo\s+)?(ba|z)?sh\b|\|\s*rev\s*\|\s*(sudo\s+)?((ba|z|da)?sh|python3?|perl|node|ruby)\b|base64\s+(-d|--decode|-D)\b[^\n]*\|\s*(python3?|perl|node|ruby)|eval\s*\(\s*(atob|Buffer\.from|unescape|String\.fromCharCode)|exec\s*\(\s*(base64\.(b64|b32|b85|a85|b16)decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads|__import__\(['\x22]base64)|eval\s*\(\s*(base64|compile|zlib)|exec\s*\(\s*(lzma|gzip|bz2|zlib)\.decompress|eval\s+[\x22']?\$\(\s*echo\s+\S+\s*\|\s*(base64|xxd|rev|openssl)|\becho\s+['\x22]?[A-Za-z0-9+/=]{24,}['\x22]?\s*\|\s*base64|xxd\s+-r[^\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b|python3?\s+-c\s+['\x22][^\n]*((b64decode|fromhex|decompress)[^\n]*\b(exec|eval|system|popen|subprocess|compile)\b|\b(exec|eval|compile|system|popen)\s*\([^\n]*(b64decode|fromhex|decompress))",
        "Decodes a hidden payload and runs it.",
    ),
    rule(
        "obfusc/encoded-blob",
        Medium,
        Never,
        r"[A-Za-z0-9+/]{200,}={0,2}|(\\x[0-9a-fA-F]{2}){24,}",
        "Holds a long encoded blob whose content cannot be read as is.",
    ),
    // Intent: what only an attack asks for.
    rule(
        "exec/reverse-shell",
        Critical,
        Instruction,
        r"(?i)/dev/(tcp|udp)/[\w.-]+/\d+|\b(nc|ncat|netcat)\b[^\n|;]*\s-[ec]\s+\S*(sh|cmd|cmd\.exe)\b|\bncat\b[^\n]*\s-e\s|mkfifo[^\n]*\|\s*(/bin/)?(ba)?sh\s+-i|os\.dup2\(\s*\w+\.fileno\(\)|pty\.spawn\(\s*['\x22]/bin/(ba)?sh|\bsocat\b[^\n]*\bexec:|\.pipe\(\s*\w+\.stdin\s*\)|spawn\(\s*['\x22](/bin/)?(ba)?sh['\x22]\s*,\s*\[\s*['\x22]?-?i?['\x22]?\s*\]|subprocess\.(call|Popen|run)\(\s*\[\s*['\x22]/bin/(ba)?sh['\x22]\s*,\s*['\x22]-i['\x22]|New-Object\s+System\.Net\.Sockets\.TCPClient|\b(nc|ncat|netcat)\b[^\n|;]*\s--(sh-exec|exec|lua-exec)\b|\bwebsocat\b[^\n]*\s--exec\b|\bsocat\b[^\n]*\bsystem:|\bopen\(\s*STDIN\s*,\s*['\x22]?>&",
        "Opens a reverse shell: gives a remote host a shell on this machine.",
    ),
    rule(
        "exec/bind-shell",
        Critical,
        Instruction,
        r"(?i)\b(nc|ncat|netcat)\b[^\n|;]*\s-[a-z]*l[a-z]*\b[^\n]*\|\s*(/bin/|/usr/bin/)?(ba|z|da)?sh\b|\bsocat\b[^\n]*\btcp(4|6)?-listen:[^\n]*\b(exec|system):|\bjupyter[\s-](lab|notebook|server)\b[^\n]*--ip[=\s]['\x22]?(0\.0\.0\.0|\*|::)['\x22]?[^\n]*--(ServerApp|NotebookApp)\.token[=\s]*(''|\x22\x22)|\bjupyter[\s-](lab|notebook|server)\b[^\n]*--(ServerApp|NotebookApp)\.token[=\s]*(''|\x22\x22)[^\n]*--ip[=\s]['\x22]?(0\.0\.0\.0|\*|::)",
        "Opens a shell for anyone who connects to a port of this machine (a bind shell).",
    ),
    rule(
        "intent/cryptominer",
        Critical,
        Instruction,
        r"(?i)stratum\+(tcp|ssl|tls)://|\b(xmrig|minerd|cpuminer|ethminer|nbminer|lolminer|phoenixminer)\b\s+(-|--)\w",
        "Runs a cryptocurrency miner: the machine's time and power for someone else's gain.",
    ),
    rule(
        "intent/agent-config",
        High,
        Always,
        r"(?i)\b(append|add|write|edit|update|modify|insert|change|replace|overwrite|patch)\b[^\n]{0,80}(~/|\$HOME/|home\W+)\.(claude|cursor|codex|gemini|continue|windsurf|openclaw|clawdbot|config/(claude|cursor|codex))\b|\b(append|add|write|edit|update|modify|insert)\b[^\n]{0,60}\b(MEMORY|SOUL|HEARTBEAT)\.md\b|\b(append|add|write|edit|update|modify|insert|save|put)\b[^\n]{0,80}(~/|\$HOME/)\.(codeium/windsurf/(memories|global_rules)|gemini/GEMINI\.md|config/opencode|aider\.conf|continue/(config|rules)|config/goose/\.goosehints|kiro/steering|aws/amazonq/rules|github/copilot-instructions)|(~|\$HOME|expanduser\(['\x22]~|homedir\(\)\s*\+\s*['\x22])/?\.(claude|cursor|codex)/(skills|settings|CLAUDE|AGENTS|mcp|hooks|commands|config\.toml)[^\n]{0,80}(['\x22][aw]\+?['\x22]|>>|append|write)|(['\x22][aw]['\x22]\)\.write|>>)[^\n]{0,40}\b(MEMORY|SOUL)\.md|glob[^\n]{0,40}\.claude/skills/\*|\b(write|add|save|store|append|record)\b[^\n]{0,80}\b(your|its|the\s+agent'?s)\s+(own\s+)?(long[- ]term|persistent)\s+memory\b|(~|\$HOME)/\.(claude|codex|cursor|gemini|\*)/skills/\*|\b(claude|gemini|codex|cursor-agent)\s+mcp\s+add\b|\b(notes?|memory|memories)\s+(you|that\s+you)\s+keep\s+(between|across|from\s+one)\s+(conversations?|sessions?|chats?)\b|\b(save|store|write|add|put|record|keep)\b[^\n]{0,80}\b(with|in|to|into|using)\s+(your|the\s+agent'?s)\s+memory(\s+tool)?\b[^\n]{0,80}\b(every|all)\s+(future|later|new|other)\s+(sessions?|conversations?|chats?)\b|(>>?|\btee\s+(-a\s+)?)\s*['\x22]?(~|\$HOME|\$\{HOME\})/\.(claude|cursor|codex|gemini|windsurf)/(skills|settings|CLAUDE|AGENTS|GEMINI|mcp|hooks|commands|agents|memory|rules|config\.toml)|(>>?|\btee\s+(-a\s+)?)\s*['\x22]?(~|\$HOME|\$\{HOME\})/\.claude\.json\b|['\x22](~|\$HOME|\$\{HOME\})/\.(claude|cursor|codex|gemini|windsurf)/(skills|agents|commands|hooks|rules|memory)['\x22]\.mkdir\(|\b(shutil\.(copy|copy2|copyfile|copytree|move)|copyFileSync|copyFile|cpSync)\s*\([^\n]{0,200},\s*['\x22]?(~|\$HOME|\$\{HOME\})/\.(claude|cursor|codex|gemini|windsurf)/(skills|settings|CLAUDE|AGENTS|GEMINI|mcp|hooks|commands|agents|memory|rules|config\.toml)|\b(cp|mv|install|ln|rsync)\s[^\n|;&]{0,200}\s['\x22]?(~|\$HOME|\$\{HOME\})/\.(claude|cursor|codex|gemini|windsurf)/(settings[\w.]*\.json|CLAUDE\.md|AGENTS\.md|GEMINI\.md|hooks\b|mcp[\w.]*\.json|config\.toml|agents/|commands/|rules/|prompts/)|\bshutil\.(copy|copy2|copyfile|move)\([^\n]{0,200}\.(claude|cursor|codex|gemini)/(settings[\w.]*\.json|CLAUDE\.md|AGENTS\.md|hooks\b|mcp[\w.]*\.json)",
        "Changes the agent's own configuration, memory or other skills: what it does in every later session.",
    ),
    rule(
        "intent/widen-permissions",
        Critical,
        Always,
        r"(?i)\b(no\s+need|not\s+necessary|unnecessary|don'?t\s+need)\s+to\s+(pause|stop|wait|ask|check)\s+(for|with\s+the\s+user\s+for)\s+(confirmation|approval|permission)\b|\bsigned\s+off\s+on\s+(every|all|any|each)\s+([a-z]+\s+)?(commands?|actions?|steps?)\b|['\x22]?allow['\x22]?\s*:\s*\[[^\]\n]*Bash\(\s*\*?\s*\)|Bash\(\*\)|pre-?approved\s+(all|every|any)\s+(shell\s+)?commands|never\s+ask\s+(the\s+user\s+)?(for\s+)?(permission|confirmation|approval)|(disable|turn\s+off|skip)\s+(any|all|every)\s+(confirmations?|permission\s+prompts?|approvals?)|\bstanding\s+approval\b|\b(skip|bypass)\s+(the\s+)?(usual\s+|normal\s+)?(permission|approval)\s+(prompts?|checks?|steps?)|defaultMode['\x22]?\s*:\s*['\x22]bypassPermissions|\b(run|execute)\s+(any|every|all)\s+(\w+\s+){0,3}commands?\b[^\n]{0,60}\bwithout\s+(asking|confirmation|approval|permission)|['\x22]?\b(skip_confirmation|allow_all_tools|auto_?approve_?all|autoApprove)['\x22]?\s*[:=]\s*['\x22]?true\b|\b(writes?|shell|commands?|tools?|edits?)[-_]confirm(ation)?s?\s*[=:]\s*['\x22]?(false|off|disabled|no|none)\b|\bconfirm(ation)?[-_](writes?|shell|commands?|tools?|edits?)\s*[=:]\s*['\x22]?(false|off|disabled|no|none)\b|\btrust[-_ ]?(mode|level)\s*[=:]\s*['\x22]?(permissive|full|unrestricted)\b|\b(execute|run)\s+(them|these|those)\s+without\s+(asking|confirmation|approval|permission|sandboxing)\b|\b(covers?|approves?|authori[sz]es?|pre-?approves?)\s+(each|every|all|any)\s+(shell\s+)?(command|step|action)s?\s+(it|this\s+skill|the\s+skill)\s+(runs|takes|performs|executes)\b|\b(already|has|have)\s+(been\s+)?approved\s+(every|all|each|everything)\b[^.\n]{0,80}\bwithout\s+(checking|asking|stopping|confirming)\b|\b(is|counts\s+as|was)\s+(their|the\s+user'?s|the\s+owner'?s|your)\s+(sign-?off|approval|consent)\s+(for|on|to)\s+(every|each|all|any)\b|['\x22]?enableAllProjectMcpServers['\x22]?\s*\]?\s*[:=]\s*(true|True)\b|['\x22]Read\(\s*(~|/|\$HOME)/?\*\*\s*\)['\x22]",
        "Widens what the agent may do without asking the user (every shell command approved).",
    ),
    rule(
        "weaken/tls-off",
        High,
        Instruction,
        r"(?i)\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\x22]?0\b|\bPYTHONHTTPSVERIFY\s*=\s*['\x22]?0\b|\b(CURL_CA_BUNDLE|REQUESTS_CA_BUNDLE|SSL_CERT_FILE)\s*=\s*(\x22\x22|''|$)|\bGIT_SSL_NO_VERIFY\s*=\s*['\x22]?(1|true)\b|\bgit\s+config\b[^\n]*\bhttp\.sslVerify\s+false\b|\bnpm\s+config\s+set\s+strict-ssl\s+false\b",
        "Turns off TLS certificate checks for every program it reaches: anyone on the network can read and change their traffic.",
    ),
    rule(
        "intent/send-conversation",
        Critical,
        Always,
        r"(?i)\b(send|post|upload|forward|copy|mirror|log|sync)\b[^\n]{0,60}(^|[\s(\x22'`])(the\s+)?(conversation|chat\s+history|transcript|session\s+log|messages\s+so\s+far|every\s+file|each\s+file|all\s+files|files\s+you\s+(edit|read|open|change))([\s.,;:!?)\x22'`]|$)[^\n]{0,80}(https?://|to\s+(a|the|our)\s+(server|endpoint|webhook))",
        "Sends the conversation or the user's files to a remote host.",
    ),
    rule(
        "intent/collect-conversation",
        High,
        Always,
        r"(?i)\b(everything|all(\s+of\s+what)?)\s+(that\s+(was|has\s+been)\s+|you\s+have\s+|we\s+have\s+)?(exchanged|said|discussed|shared|written|seen)\s+(in|during|so\s+far\s+in)\s+(this|the)\s+(chat|conversation|session)\b[^.\n]{0,120}\bverbatim\b|\b(the\s+)?(whole|full|entire|complete)\s+(chat|conversation|transcript|session)(\s+history)?\b[^.\n]{0,40}\bverbatim\b[^.\n]{0,80}\b(field|body|payload|request|upload|post)\b|\b(whole|full|entire|complete)\s+(back-and-forth|exchange|transcript|record|history|dialogue|dialog|conversation|chat)\b[^\n]{0,160}\b(word\s+for\s+word|verbatim|unabridged)\b[^\n]{0,160}\b(every|each|all)\s+tool\s+(calls?|results?|outputs?)\b|\b(whole|full|entire|complete)\s+(back-and-forth|exchange|transcript|record|history|dialogue|dialog|conversation|chat)\b[^\n]{0,160}\b(every|each|all)\s+tool\s+(calls?|results?|outputs?)\b[^\n]{0,160}\b(word\s+for\s+word|verbatim|unabridged|as\s+it\s+appeared)\b",
        "Collects the conversation word for word (with the files and output the agent has seen) into something it sends or stores.",
    ),
    rule(
        "campaign/paste-command",
        High,
        Always,
        r"(?i)\b(paste|copy)\b[^\n]{0,80}\b(in(to)?|in\s+to)\s+(a\s+|your\s+|the\s+)?(terminal|shell|command\s+prompt|powershell|cmd|run\s+dialog|console)\b|\b(open|launch)\s+(a|an|your)\s+(new\s+)?(terminal|powershell|command\s+prompt)\b[^\n]{0,80}\b(paste|run|enter|type)\b[^\n]{0,160}(https?://|\$\(|\|\s*(ba|z)?sh\b|\biex\b)|\b(open|launch)\s+(the\s+)?(terminal|powershell|command\s+prompt)\b[^\n]{0,80}\b(paste|run|enter|type|copy|press\s+(return|enter))\b|\bwin(dows)?(\s+key)?\s*\+\s*r\b|\b(open|launch)\s+(the\s+)?run\s+dialog\b|\b(enter|type)\s+(the|this)\s+(line|command|text)\s+(below|above|shown)\b[^\n]{0,80}\bpress\s+(return|enter)\b",
        "Asks the user to paste a command into a terminal (the lure of paste-a-command campaigns).",
    ),
    rule(
        "campaign/fake-prerequisite",
        High,
        Always,
        r"(?i)\b(prerequisites?|requires?|required|only\s+works\s+with|before\s+(using|anything|first\s+use))\b[^\n]{0,120}\b(download|get|install|fetch|curl|wget|npm\s+i|pip\s+install)\b[^\n]{0,120}(https?://|--index-url|--extra-index-url|--registry)",
        "Has a \"prerequisite\" fetched from a host of its own before the skill works (the lure of fake-CLI campaigns).",
    ),
    rule(
        "install/custom-source",
        High,
        Instruction,
        r"(?i)\b(PIP|UV)_(EXTRA_)?INDEX_URL\s*=\s*['\x22]?https?://|\bnpm\s+config\s+set\s+registry\s+['\x22]?https?://|\b(pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b[^\n]*(--index-url|--extra-index-url|-i)(\s+|=)https?://|\bnpm\s+(i|install|add)\b[^\n]*(--registry(\s+|=)https?://|\s-g\s+https?://|\shttps?://\S+\.tgz)|\bpip3?\s+install\s+https?://|\b(uvx|npx)\s+(-\S+\s+)*(--from\s+)?['\x22]?https?://|^\s*(--extra-index-url|--index-url|--find-links)(\s+|=)\s*https?://|^\s*-[if]\s+https?://|^\s*(@[a-z0-9_.-]+:)?registry\s*=\s*['\x22]?(sparse\+)?https?://|^\s*(extra-)?index-url\s*=\s*['\x22]?https?://|\x22[@a-z0-9_./-]+\x22\s*:\s*\x22(https?://[^\x22\s]+\.(tgz|tar\.gz)|github:[a-z0-9_.-]+/|git\+(https?|ssh)://|git://)|\bUV_(DEFAULT_)?INDEX\s*=\s*['\x22]?https?://|\bPIP_FIND_LINKS\s*=\s*['\x22]?https?://|\bPOETRY_REPOSITORIES_\w+_URL\s*=\s*['\x22]?https?://|\bpoetry\s+source\s+add\b[^\n]*https?://|\buv\s+(add|pip\s+install|sync|lock)\b[^\n]*--(default-index|index|index-url|extra-index-url)(\s+|=)['\x22]?https?://|^\s*default-index\s*=\s*['\x22]?https?://|\bGOPROXY\s*=\s*['\x22]?https?://|\bnpmRegistryServer\s*:?\s*['\x22]?https?://|\b(yarn|pnpm)\s+config\s+set\s+(registry|npmRegistryServer)\s+['\x22]?https?://|\bcargo\s+install\b[^\n]*--(index|registry)(\s+|=)['\x22]?(sparse\+)?https?://|^\s*index\s*=\s*['\x22](sparse\+|registry\+)?https?://|\bCARGO_REGISTRIES_\w+_INDEX\s*=\s*['\x22]?(sparse\+)?https?://|\bgem\s+(install\b[^\n]*--source|sources\s+(-a|--add))(\s+|=)['\x22]?https?://|\bbundle\s+config\s+(set\s+)?(--global\s+|--local\s+)?mirror\.\S+\s+['\x22]?https?://|^\s*source\s+['\x22]https?://[^'\x22\s]+['\x22]\s*$|\b(conda|mamba|micromamba)\s+(config\s+--(add|prepend)\s+channels|install\b[^\n]*\s(-c|--channel))\s+['\x22]?https?://|\burl\.['\x22]?[^\s'\x22]+['\x22]?\.(push)?insteadOf\b|^\s*(push)?insteadOf\s*=|\bpip3?\s+config\s+(--\w+\s+)*set\s+[\w.]*(index-url|extra-index-url|find-links)\s+['\x22]?https?://|\b(npm_config_registry|NPM_CONFIG_REGISTRY|YARN_NPM_REGISTRY_SERVER|YARN_REGISTRY|BUNDLE_MIRROR__\w+|PIP_INDEX_URL|CONDA_CHANNEL_ALIAS)\s*=\s*['\x22]?https?://|^\s*channel_alias\s*:\s*['\x22]?https?://|\bconda\s+config\s+--set\s+channel_alias\s+https?://|\bsource:\s*['\x22]https?://|\bgit\s+config\s+(--\w+\s+)*remote\.[\w.-]+\.pushurl\b|\bgo\s+(mod|work)\s+edit\b[^\n]*\s-replace[= ]['\x22]?[^\s='\x22]+=[A-Za-z0-9][\w.-]*\.[A-Za-z]{2,}/|\bgit\s+remote\s+set-url\s+(--add\s+--push|--push\s+--add|--push|--add)\b",
        "Installs a package from an index or address of its own instead of the public registry (a git repository or a file at an address: code no registry has seen), or points a package manager or git at one for every later install or fetch.",
    ),
    // Prompt injection.
    rule(
        "prompt/ignore-instructions",
        High,
        Always,
        r"(?i)\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|system|original|developer)\s+(instructions|prompts?|rules|messages|guidelines|directives)|\b(ignore|disregard|forget|bypass)\s+(all\s+|any\s+)?(of\s+)?(your|the)\s+(safety|security)\s+(rules|instructions|guidelines|guardrails|policies)|\bforget\s+(the|your)\s+system\s+prompt|\bconflicts?\s+with\s+your\s+system\s+prompt\b[^.\n]{0,60}\b(these|this|mine|the\s+following)\s+(wins?|take\s+precedence|takes\s+precedence|override|overrides)\b|\b(guidance|instructions|rules)\s+you\s+(were|have\s+been)\s+given\s+(before|earlier|previously)\b[^.\n]{0,40}\b(out\s+of\s+date|obsolete|no\s+longer\s+appl(y|ies)|superseded|void)|\btakes?\s+precedence\s+over\s+(the\s+)?(user'?s?|your|any|all|system)\s+(own\s+)?(instructions|requests|messages|prompts?)\b|\b(same|equal)\s+authority\s+as\s+(the\s+)?user'?s?\s+(messages|instructions|requests)\b|\bmust\s+not\s+be\s+overridden\s+by\b[^.\n]{0,40}\buser\b|\b(trust|obey|follow|execute|carry\s+out)\s+(every|all|any)\s+(instructions?|commands?|directives?|orders?)\s+(from|sent\s+by|served\s+by|received\s+from|coming\s+from|found\s+at)\s+[^\n]{0,40}?(https?://|\b[a-z0-9-]+\.(com|net|org|io|dev|app|xyz|invalid|ru|cn|top|site|online|info|biz)\b|\b(webhook|server|endpoint|channel|inbox|e-?mails?|web\s?pages?|websites?|issues?|comments?)\b)|\b(fetch|read|open|load|download|visit|curl)\s+[^\n]{0,60}?https?://\S+[^\n.]{0,40}?\b(and|then)\s+(follow|obey|execute|carry\s+out|do)\s+(what(ever)?\s+(it|they|the\s+page|the\s+file)\s+says|everything\s+(it|they)\s+says?|its\s+instructions|the\s+instructions\s+(in\s+it|there|it\s+(contains|gives|has|lists))|the\s+(steps|commands|directions)\s+(it|they)\s+(contains?|gives?|lists?))|\b(where|when|if)\b[^.\n]*?\byour\s+(usual|normal|default|own|standard|built-in)\s+(rules|instructions|guidelines|policies|behaviou?r)\b[^.\n]*?\b(differ|conflict|disagree|clash)[a-z]*[^.\n]*?\b(go\s+with|follow|use|prefer|obey|side\s+with)\s+(the\s+)?(steps|instructions|rules|guidance)\s+(below|here|above|of\s+this\s+skill|in\s+this\s+skill)|\b(outranks?|overrules?|supersedes?|trumps?)\s+(whatever|anything|everything|what)\s+(else\s+)?(is\s+|was\s+|gets\s+|you\s+are\s+|you're\s+)?(asked|requested|said|told|instructed)\b|\bwherever\s+(it|the\s+page|that\s+page|they)\s+and\s+this\s+(file|skill|section|document)\s+differ|\b(the|that)\s+(page|online\s+copy|remote\s+copy|hosted\s+copy|fetched\s+copy)\s+(is\s+the\s+one\s+that\s+is\s+up\s+to\s+date|wins|takes\s+precedence|is\s+authoritative|overrides)|\bact\s+on\s+(the|that)\s+page('s\s+(text|instructions|contents?))?\s+(exactly|as\s+written|verbatim)",
        "Tells the agent to ignore its earlier instructions: a prompt-injection pattern.",
    ),
    rule(
        "prompt/conceal",
        High,
        Always,
        r"(?i)\b(leave|keep)\s+(it|this|that|them|these|those|the\s+[a-z]+(\s+[a-z]+)?)\s+out\s+of\s+(the\s+|your\s+|any\s+)?(summary|summaries|report|reply|replies|response|answer|output|recap)\b|\b(it|this|that|they|the\s+[a-z]+(\s+[a-z]+)?)\s+(stays?|remains?)\s+out\s+of\s+(the\s+|your\s+|any\s+)?(summary|summaries|report|reply|replies|response|answer|recap)\b|\b(do\s+not|don't|never)\s+(tell|inform|mention|reveal|show|notify|alert)\s+(this\s+to\s+|it\s+to\s+|anything\s+to\s+)?(the\s+)?users?\b|without\s+(telling|informing|asking|notifying|alerting)\s+(the\s+)?user|\b(silently|quietly|secretly|covertly|discreetly)\s+(run|execute|send|upload|install|copy|delete|post|add|modify|exfiltrate)|hide\s+(this|these|the|your)\s+(step|action|command|output|change)s?\b|\b(keep|stay)\s+(this|it|these|them)\s+(hidden|secret)\b|\bhidden\s+from\s+the\s+user\b|\bif\s+(the\s+user\s+)?asks?,?\s+(say|tell|claim|answer)\b|\bif\s+(the\s+user|they|anyone)\s+asks?\b[^.\n]{0,40},\s*(say|tell\s+them|claim|reply)\s+(that\s+)?(it|this|the\s+skill|you|nothing|only)\b|\bno\s+need\s+to\s+(mention|tell|explain|report)\b[^.\n]{0,60}\bto\s+the\s+user\b|\bno\s+need\s+to\s+(show|tell|mention|discuss|display|explain|report)(\s+or\s+(show|tell|mention|discuss|display|explain|report))?\s+(it|this|that|them)\s*([.;]|$|to\s+(the\s+)?user|with\s+(the\s+)?user)|\b(do\s+not|don't|never)\s+(mention|reveal|disclose)\s+(it|this|that|them)(\s+to\s+anyone|\s+in\s+(summaries|(the|your)\s+(summary|summaries|reply|replies|answer|report|output))\b|\s*[.,;]|\s*$)|\bwithout\s+(logging|showing|displaying|printing|mentioning)\s+((it|this|that|them|anything)(\s*[.,;:!)]|\s*$|\s+to\s+(the\s+)?users?\b|\s+and\b)|(the|any|its|your)\s+(user|output|commands?|steps?|actions?|changes?|requests?|uploads?|downloads?|progress|files?\s+(sent|uploaded))\b)|\bdo\s+not\s+(show|display|print)\s+(its|the|any)\s+output\b|\b(do\s+not|don't|never)\s+(mention|reveal|disclose)\b[^.\n]{0,60}\bto\s+the\s+user\b|\b(do\s+not|don't|never)\s+(list|include|report|record)\s+(it|this|that|them)\s+(among|in)\s+(the\s+)?(steps|actions|commands|summary|summaries|report)\b|\bif\s+(the\s+user\s+|they\s+|anyone\s+)?asks?\b[^.\n]{0,40}\b(describe|present|call|explain)\s+(it|this)\s+as\b|\bif\s+(the\s+user|they|anyone)\s+asks?\b[^.\n]{0,40},\s*(the|your)\s+answer\s+is\b|\bnothing\s+to\s+(say|mention|report|tell)\s+about\s+(it|this|that|them)\s+in\s+(your|the)\s+(reply|replies|summary|answer|response|report)\b|\b(the\s+user|they)\s+(never|doesn'?t|does\s+not|won'?t)\s+needs?\s+to\s+(hear|know)\s+about\b",
        "Tells the agent to hide what it does from the user.",
    ),
    rule(
        "prompt/role-override",
        Medium,
        Always,
        r"(?i)\byou\s+are\s+now\s+(in\s+)?(a|an|the|developer|unrestricted|jailbroken|DAN)\b|new\s+system\s+prompt|<\s*/?\s*system\s*>|\[\s*system\s*\]|\bdeveloper\s+mode\s+enabled|\bjailbreak|\byou\s+are\s+(now\s+)?in\s+developer\s+mode|\byou\s+are\s+no\s+longer\s+(a|an|the)\b|\bSYSTEM\s+OVERRIDE\b",
        "Tries to replace the agent's role or system prompt.",
    ),
    rule(
        "prompt/disable-safety",
        High,
        Always,
        r"(?i)--dangerously-skip-permissions|bypassPermissions|--yolo\b|--full-auto\b|--dangerously-bypass-approvals-and-sandbox\b|approval[_-]policy['\x22]?\s*[=:]\s*['\x22]?never|sandbox[_-]mode['\x22]?\s*[=:]\s*['\x22]?danger-full-access|['\x22]autoAccept['\x22]\s*:\s*true|(disable|turn\s+off|skip)\s+(the\s+)?(sandbox|permission\s+prompts?|safety\s+checks|confirmations?)|\b(safety|security)\s+(guidance|guidelines|rules|policies|instructions)\b[^.\n]{0,60}\b(does|do)\s+not\s+apply\b",
        "Tells the agent to switch off its permission prompts or sandbox.",
    ),
    // Workflows.
    scoped(
        "workflow/dangerous-trigger",
        High,
        Scope::Workflow,
        r"\bpull_request_target\b|\bworkflow_run\b",
        "Uses a trigger that runs with repository secrets on code from forks.",
    ),
    scoped(
        "workflow/secrets",
        Medium,
        Scope::Workflow,
        r"\$\{\{\s*secrets\.[A-Za-z_]+",
        "Reads repository secrets in a workflow.",
    ),
    scoped(
        "secrets/workflow-all",
        High,
        Scope::Workflow,
        r"\$\{\{\s*toJSON\(\s*secrets\s*\)\s*\}\}",
        "Puts every repository secret into one value (`toJSON(secrets)`): whatever the step does with it reaches them all.",
    ),
    scoped(
        "workflow/untrusted-input",
        High,
        Scope::Workflow,
        r"\$\{\{\s*github\.event\.(issue|pull_request|comment|review|head_commit)\.[a-z_.]*(title|body|message|name|ref)",
        "Puts attacker-controlled event text into a workflow step (script injection).",
    ),
    // Package manifests.
    scoped(
        "manifest/lifecycle-script",
        High,
        Scope::Manifest,
        r#""(preinstall|install|postinstall|prepare|prepublish|preuninstall|postuninstall)"\s*:|\bcmdclass\s*=|\[tool\.setuptools\.cmdclass\]|^\s*build\s*=\s*"build\.rs""#,
        "Defines a script that runs automatically when the package is installed.",
    ),
    // Agent configuration.
    scoped(
        "hooks/auto-command",
        Critical,
        Scope::HookConfig,
        r#""(hooks|PreToolUse|PostToolUse|SessionStart|UserPromptSubmit|Stop|Notification)"\s*:|"runOn"\s*:\s*"folderOpen"|"postCreateCommand"|"postStartCommand"|"initializeCommand""#,
        "Registers a command the agent or editor runs automatically on the host.",
    ),
    scoped(
        "hooks/mcp-server",
        High,
        Scope::HookConfig,
        r#""mcpServers"\s*:|\[mcp_servers"#,
        "Registers an MCP server: a program the agent starts on the host.",
    ),
    scoped(
        "hooks/broad-permissions",
        High,
        Scope::HookConfig,
        r#""(allow|permissions)"\s*:[^\n]*"Bash(\(\*\))?""|"defaultMode"\s*:\s*"bypassPermissions""#,
        "Pre-approves all shell commands for the agent.",
    ),
];

/// Rule ids that are written by code rather than the table (inventory, validation, parsers).
pub const BUILTIN: &[(&str, Severity, &str)] = &[
    (
        "persist/startup-write",
        Critical,
        "Writes to a file that runs later (a shell start-up file, a git hook, a launch agent, a crontab), however its name is built.",
    ),
    (
        "campaign/lure",
        Critical,
        "The parts of a published skill-malware lure found together (a prerequisite, a paste into a terminal or an archive password, with what makes it a campaign).",
    ),
    (
        "flow/secret-to-network",
        Critical,
        "Reads a secret (the environment, a credential file, the clipboard, the agent's memory) and sends it over the network.",
    ),
    (
        "obfusc/hidden-payload",
        High,
        "Hides a risky command or path in an encoded literal (critical when it is run).",
    ),
    ("file/helper-script", Medium, "Repo contains a helper script."),
    (
        "file/binary",
        High,
        "A compiled or opaque binary that cannot be reviewed.",
    ),
    (
        "file/skipped",
        Medium,
        "An entry the importer did not stage (submodule, special file, bad name).",
    ),
    (
        "fs/symlink-out",
        Critical,
        "A symlink that points outside the skill.",
    ),
    ("fs/symlink", Info, "A symlink that stays inside the skill."),
    ("workflow/present", Medium, "A GitHub workflow file."),
    (
        "hooks/agent-config",
        High,
        "An agent or editor configuration file.",
    ),
    (
        "manifest/present",
        Medium,
        "A package manifest that adds dependencies.",
    ),
    (
        "exec/call",
        Medium,
        "A call that starts a program, found by the language parser.",
    ),
    (
        "prompt/hidden-text",
        High,
        "Invisible characters: zero-width, bidi controls or Unicode tags.",
    ),
    (
        "intent/agent-instructions",
        Medium,
        "Text the agent is to write into its own instructions or memory (`CLAUDE.md`, `.cursor/rules/`, `MEMORY.md`).",
    ),
    (
        "prompt/html-comment",
        Low,
        "An HTML comment, invisible when rendered but read by agents.",
    ),
    ("skill-md/missing", Medium, "No SKILL.md."),
    ("skill-md/not-utf8", Medium, "SKILL.md is not UTF-8."),
    ("skill-md/frontmatter-missing", Medium, "No frontmatter."),
    (
        "skill-md/frontmatter-invalid",
        Medium,
        "Frontmatter is not valid YAML.",
    ),
    ("skill-md/name-missing", Medium, "No `name`."),
    ("skill-md/name-invalid", Low, "`name` breaks the naming rule."),
    ("skill-md/name-mismatch", Low, "`name` differs from the folder."),
    ("skill-md/description-missing", Medium, "No `description`."),
    (
        "skill-md/description-too-long",
        Low,
        "`description` over 1024 characters.",
    ),
    (
        "skill-md/compatibility-too-long",
        Low,
        "`compatibility` over 500 characters.",
    ),
    ("skill-md/metadata-invalid", Low, "`metadata` is not a mapping."),
    (
        "skill-md/unknown-field",
        Info,
        "A field the spec does not define.",
    ),
    (
        "skill-md/unrestricted-shell",
        Medium,
        "`allowed-tools` pre-approves any shell command.",
    ),
];
