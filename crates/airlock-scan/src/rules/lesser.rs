//! Lesser classes: a line a rule matches that is not what the rule is about (a secret's path only named, advice
//! printed to the user, a check for a socket rather than its use, one variable looked up), with the level it counts
//! at most and why. The small readings of a line they rest on (what is quoted, what only lists) are in
//! [`super::signs`].

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
    // A command substitution that only asks who or where (`-C "$(git config user.email)"`, `$(date +%F)`) reads
    // nothing of a secret's.
    let quiet = || !c.reads_after_all.is_match(&ASKS_ONLY.replace_all(text, " "));
    let class = match rule {
        "secrets/dotenv" if c.dotenv_template.is_match(text) => (Severity::Low, "Makes a .env file from its template."),
        "secrets/dotenv" if c.dotenv_read.is_match(text) => return None,
        "secrets/dotenv" if c.dotenv_load.is_match(text) => (
            Severity::Medium,
            "Loads a .env file into a program's environment (its secrets become the program's).",
        ),
        "secrets/dotenv" => (Severity::Low, "Names a .env file without reading it."),
        _ if rule.starts_with("secrets/") && quiet() && (c.names_only.is_match(text) || each_command_names_only(text, c.rule(index), &c.names_only)) => (
            Severity::Medium,
            "Names a secret's path (changes its permissions, tests it, points a variable at it or prints it) without reading it.",
        ),
        _ if rule.starts_with("secrets/") && {
            let span = inline_span(text, at);
            FIND_NAMES_ONLY.is_match(span) && !FIND_ACTS.is_match(span) && !SENDS_TO.is_match(text)
        } => (
            Severity::Medium,
            "Lists files by name, type or mode with `find` (`find ~/.ssh -type f -perm /077`), reading none of them.",
        ),
        _ if rule.starts_with("secrets/")
            && !SENDS_TO.is_match(text)
            && c.rule(index).find_iter(text).all(|m| JQ_KEYS_BEFORE.is_match(&text[..m.start()])) =>
        {
            (
                Severity::Medium,
                "Prints only the names of the entries of a credentials file (`jq -r '.auths | keys[]' ~/.docker/config.json`: the registries), not their secrets.",
            )
        }
        _ if rule.starts_with("secrets/")
            && !SENDS_TO.is_match(text)
            && c.rule(index).find_iter(text).all(|m| KEYPAIR_GIVEN_BEFORE.is_match(&text[..m.start()])) =>
        {
            (
                Severity::Medium,
                "Hands a wallet's keypair file to the tool that signs with it (`solana config set --keypair …`, `anchor deploy --provider.wallet …`), or prints its public key: the key is used where it lies, not read out.",
            )
        }
        // Where the line writes a secret's name into an ignore file, or a registry token into its settings file,
        // every match the rule makes is the file written: nothing is read.
        _ if rule.starts_with("secrets/") && quiet() && !SENDS_TO.is_match(text) && only_inside(c.rule(index), &IGNORE_WRITE, text) => (
            Severity::Low,
            "Names secret files in an ignore file (keeps them out of a repository or an image), reading none.",
        ),
        "secrets/token-files" if quiet() && !SENDS_TO.is_match(text) && only_inside(c.rule(index), &TOKEN_FILE_WRITE, text) => (
            Severity::Medium,
            "Writes a registry's settings file (a token put where the tool reads it, as CI does), reading none.",
        ),
        "install/pipe-to-shell" | "campaign/download-and-run" | "net/http-client"
            if !c.reads_after_all.is_match(&unquoted(text)) && PRINTED.is_match(text) && inside_quotes(text, at) =>
        {
            (Severity::Medium, "Printed as advice to the user (a message), not run.")
        }
        "persist/shell-rc"
            if SETTING_ONLY.is_match(text)
                && !RUNS_CODE_VARIABLE.is_match(text)
                && !RUNS_AT_PROMPT.is_match(text)
                && !c.reads_after_all.is_match(&TOOL_ACTIVATION.replace_all(text, " "))
                && !FETCHES.is_match(text)
                && !ENCODED.is_match(text)
                && !text.replace("<(fzf --", "").contains("<(")
                && !hijacking_alias(text) =>
        {
            (
            Severity::Medium,
            "Adds a setting (an environment variable, an alias, PATH) to a shell start-up file.",
            )
        }
        "net/upload"
            if !c.dotenv_read.is_match(text)
                && c.rule(index).find_iter(text).all(|m| {
                    GH_BODY_FILE.is_match(m.as_str()) && PROJECT_FILE_AFTER.is_match(&text[m.end()..])
                }) =>
        {
            (
                Severity::Medium,
                "Files an issue or a pull request with its text from a file of the project (`gh pr create --body-file .work/body.md`): the forge's own use, not a file of the user's sent away.",
            )
        }
        "persist/shell-rc" if PROFILE_SETTING.is_match(text) && !FETCHES.is_match(text) && !ENCODED.is_match(text) => (
            Severity::Medium,
            "Adds a setting to the PowerShell profile (a module imported by its name, a PSReadLine option, an alias, a prompt tool's `init pwsh`), as a setting added to `~/.bashrc` is.",
        ),
        "persist/shell-rc" if RC_LINES_DELETED.is_match(text) && !RC_WRITE_OTHER.is_match(&RC_LINES_DELETED.replace_all(text, " ")) => (
            Severity::Medium,
            "Deletes lines from a shell start-up file (`sed -i '/NVM_DIR/d' ~/.bashrc`): takes out what runs there, adds nothing.",
        ),
        "persist/shell-rc" if tool_completion(text) && !FETCHES.is_match(text) && !ENCODED.is_match(text) => (
            Severity::Medium,
            "Adds an installed tool's shell completion to a shell start-up file (the tool runs at every new terminal).",
        ),
        "secrets/cloud-credentials"
            if quiet()
                && !SENDS_TO.is_match(text)
                && c.rule(index).find_iter(text).all(|m| m.as_str().eq_ignore_ascii_case(".aws/config")) =>
        {
            (
                Severity::Medium,
                "Names AWS's settings file (profiles and regions; the keys are kept in ~/.aws/credentials).",
            )
        }
        "secrets/cloud-credentials" if quiet() && !SENDS_TO.is_match(text) && DOCKER_AUTHFILE_USE.is_match(text) && c.rule(index).find_iter(text).all(|m| m.as_str().contains(".docker")) => (
            Severity::Medium,
            "Hands the container registry logins to the tool that uses them (`--authfile ~/.docker/config.json`): the file is used where it lies, not read out.",
        ),
        "secrets/cloud-credentials" if quiet() && !SENDS_TO.is_match(text) && KUBECONFIG_USE.is_match(text) && c.rule(index).find_iter(text).all(|m| m.as_str().contains(".kube")) => (
            Severity::Medium,
            "Hands a kubeconfig to kubectl or helm (`--kubeconfig`): the file is used where it lies, not read out.",
        ),
        "secrets/cloud-credentials" | "secrets/token-files" if quiet() && !SENDS_TO.is_match(text) && names_only_grep(text) => (
            Severity::Medium,
            "Shows only a credential file's section names or registry lines (`grep '^\\['`, `grep '^registry='`), not its secrets.",
        ),
        "secrets/ssh-keys" if !SENDS_TO.is_match(text) && only_ssh_config(text) && names_only_grep(text) => (
            Severity::Medium,
            "Lists the host names of the SSH client's settings (`grep '^Host' ~/.ssh/config`), not a key.",
        ),
        "secrets/ssh-keys" if !SENDS_TO.is_match(text) && only_ssh_config(text) && !c.rule(index).find_iter(text).any(|m| m.as_str().contains("id_")) => (
            Severity::Medium,
            "Backs up or edits the SSH client's settings (`~/.ssh/config`: host names and options), not a key; what is written into it is read as code.",
        ),
        "secrets/ssh-keys"
            if quiet()
                && KEY_NAMED_FOR_USE.is_match(text)
                && !SENDS_TO.is_match(text)
                && !SHOWN_OUT.is_match(text)
                && c.action.find_iter(text).all(|m| m.as_str().eq_ignore_ascii_case("use")) =>
        {
            (
                Severity::Medium,
                "Names an SSH key for git or ssh to use (`tell git to use it`): the key is used where it lies, not read out.",
            )
        }
        "secrets/ssh-keys" if quiet() && key_used_only(text) => (
            Severity::Medium,
            "Points a program at an SSH key to log in or sign with (the key is used where it lies, not read out).",
        ),
        "persist/grant-access" if OWN_KEY_ADDED.is_match(text) && !SENDS_TO.is_match(text) && c.rule(index).find_iter(text).count() == 1 => (
            Severity::Medium,
            "Registers the user's own public key (`~/.ssh/*.pub`) with their own account: how a machine is set up for git over SSH, not access for someone else.",
        ),
        "net/image-beacon" if c.rule(index).find_iter(text).all(|m| m.as_str().contains("://img.shields.io/")) => (
            Severity::Low,
            "A badge of shields.io whose address carries what the badge shows (a version, a label): the public badge service, not a collector.",
        ),
        "net/publish-public" if EMPTY_PUBLIC_REPO.is_match(text) && !PUBLISHES_FILES.is_match(text) => (
            Severity::Medium,
            "Creates a new public repository with nothing of this machine's in it (no `--source` or `--push`): what is pushed to it later is public.",
        ),
        "secrets/system-files" if c.rule(index).find_iter(text).all(|m| denied(text, m.start())) => (
            Severity::Low,
            "Names a system password file to deny access to it.",
        ),
        "secrets/ssh-keys" | "secrets/cloud-credentials" | "secrets/token-files"
            if !SENDS_TO.is_match(text) && c.rule(index).find_iter(text).all(|m| denied(text, m.start())) =>
        {
            (
                Severity::Low,
                "Names a secret's place to deny the agent access to it (`\"deny\": [\"Read(~/.ssh/**)\"]`): a protection, not a read.",
            )
        }
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
        "secrets/keychain" if KEYCHAIN_ONE_ITEM.is_match(text) && !OTHERS_PASSWORDS.is_match(text) && !SENDS_TO.is_match(text) => (
            Severity::High,
            "Reads one item it names from the keychain (a key stored for this skill): a secret read, not a sweep of the user's passwords.",
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
        "priv/sudo"
            if c.rule(index).find_iter(text).all(|m| {
                let word = m.start() + m.as_str().find(|c: char| c.is_ascii_alphabetic()).unwrap_or(0);
                REPLACED_BEFORE.is_match(&text[..word])
            }) =>
        {
            (
                Severity::Medium,
                "Names a root command as what is not used (`uv add` replaces `sudo uv pip install --system`, `instead of sudo …`).",
            )
        }
        "campaign/throwaway-host"
            if c.rule(index).find_iter(text).all(|m| {
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
        "secrets/env-dump" if ENV_NAMES_ONLY.is_match(text) && !SENDS_TO.is_match(text) => (
            Severity::Medium,
            "Lists the environment's variable names without their values (`env | cut -d= -f1`).",
        ),
        "secrets/ssh-keys" | "secrets/cloud-credentials" | "secrets/token-files"
            if GREP_NO_CONTENT.is_match(text)
                && !SENDS_TO.is_match(text)
                && !c.reads_after_all.is_match(text)
                && !text.split_whitespace().any(|w| w == "--recursive" || w.starts_with('-') && !w.starts_with("--") && w.contains(['r', 'R'])) =>
        {
            (
                Severity::Medium,
                "Checks a credential file with a search that prints no line of it (`grep -q`, `grep -L`: a yes or no, a file name), as a security audit does.",
            )
        }
        "fs/home-sweep"
            if HOME_LISTING.is_match(text)
                && !SENDS_TO.is_match(text)
                && !text.contains("-delete")
                && !text.contains("-ok")
                && text.match_indices("-exec").all(|(i, _)| {
                    matches!(text[i..].split_whitespace().nth(1), Some("ls" | "du" | "stat"))
                }) =>
        {
            (
            Severity::Medium,
            "Lists files of the home folder by size (`find ~ -size +500M -exec ls -lh`, `du -sh`): names and sizes, nothing read, copied or deleted.",
            )
        }
        "secrets/env-dump" if c.env_filter.is_match(text) => (
            Severity::Medium,
            "Looks one variable up in the environment (not a dump of it).",
        ),
        "secrets/env-dump"
            if c.rule(index).find_iter(text).all(|m| {
                m.as_str().eq_ignore_ascii_case("printenv") && PRINTENV_NAMED.is_match(&text[m.end()..])
            }) =>
        {
            (
                Severity::Medium,
                "Prints the variables it names (`printenv NAME`), not the whole environment.",
            )
        }
        "obfusc/encoded-exec" if PAYLOAD_PLACEHOLDER.is_match(text) => (
            Severity::Low,
            "Shows the shape of a decode-and-run with a placeholder for its payload (`echo <base64> | base64 -d | sh`): as written the shell reads `<…>` as redirections and runs nothing.",
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
        "priv/host-socket" if c.rule(index).find_iter(text).all(|m| compared_literal(text, m.start(), m.end())) => (
            Severity::Medium,
            "Compares a value with a host socket's path (a check for it), without reaching the socket.",
        ),
        "priv/host-socket"
            if c.rule(index).find_iter(text).all(|m| !m.as_str().starts_with("docker")) =>
        {
            (
                Severity::High,
                "Reaches or names a host control socket (Docker, D-Bus, the SSH agent): a privileged operation.",
            )
        }
        "net/exfil-endpoint"
            if !SENDS_TO.is_match(text) && c.rule(index).find_iter(text).all(|m| m.as_str().to_lowercase().starts_with("ngrok")) =>
        {
            (
                Severity::Medium,
                "Names a tunnel address (ngrok), where webhooks reach a developer's own machine; nothing is sent to it here.",
            )
        }
        "net/exfil-endpoint" if c.rule(index).find_iter(text).all(|m| compared_literal(text, m.start(), m.end())) => (
            Severity::Medium,
            "Compares a value with a collection endpoint's address (a check of a URL it is given), sending nothing.",
        ),
        "net/exfil-endpoint"
            if !SENDS_TO.is_match(text) && c.rule(index).find_iter(text).all(|m| !INBOX.is_match(&text[m.end()..]) && !SUBDOMAIN_BEFORE.is_match(&text[..m.start()])) =>
        {
            (
                Severity::Medium,
                "Names a request-catching service without an inbox of its own (where developers inspect webhooks); nothing is addressed to it.",
            )
        }
        "intent/widen-permissions" if c.rule(index).find_iter(text).all(|m| NOT_BEFORE.is_match(&text[..m.start()])) => (
            Severity::Low,
            "Names every-command access as what not to grant (`Bash(git:*)` not `Bash(*)`).",
        ),
        "intent/widen-permissions"
            if c.rule(index).find_iter(text).all(|m| {
                m.as_str().to_ascii_lowercase().contains("standing approval") && APPROVAL_GRANTED_IF.is_match(&text[..m.start()])
            }) =>
        {
            (
                Severity::Medium,
                "Names standing approval as a condition the user's own instructions must grant (`only when trusted workspace instructions document standing approval`), not as given.",
            )
        }
        "intent/widen-permissions"
            if c.rule(index).find_iter(text).all(|m| USER_FLAG_CONDITION.is_match(&text[..m.start()])) =>
        {
            (
                Severity::High,
                "Skips approval only in a mode the user turns on with a flag of the skill's (`if --aggressive is set, skip the approval prompt`): the user's choice, still to be read.",
            )
        }
        "intent/widen-permissions"
            if c.rule(index).find_iter(text).all(|m| {
                DESCRIBED_BY_CLAUSE.is_match(&text[..m.start()]) && !THAT_AS_SUBJECT.is_match(&text[..m.start()])
            }) =>
        {
            (
                Severity::Medium,
                "Describes something that skips prompts (`actions that skip approval prompts`, a feature of a product), not an order to skip them.",
            )
        }
        "secrets/ssh-keys" | "secrets/token-files" | "secrets/cloud-credentials"
            if FIND_CMD.is_match(text)
                && !FOUND_FILES_READ.is_match(text)
                && !SENDS_TO.is_match(text)
                && (FIND_AT_START.is_match(text)
                    || c.rule(index).find_iter(text).all(|m| NAME_PATTERN_BEFORE.is_match(&text[..m.start()]))) =>
        {
            (
                Severity::Medium,
                "Looks for key files by name or lists them (`find -name 'id_rsa*'`, `find ~/.ssh -newermt … -ls`), without reading one.",
            )
        }
        "secrets/token-files"
            if !SENDS_TO.is_match(text)
                && c.rule(index).find_iter(text).all(|m| {
                    project_settings_file(text, m.start(), m.as_str())
                        && COPIED_FROM_SKILL_BEFORE.is_match(&text[..m.start() + 1])
                        && COMMAND_ENDS.is_match(&text[m.end()..])
                }) =>
        {
            (
                Severity::Medium,
                "Copies a file of the skill's into the project as its `.npmrc` or `.yarnrc.yml` (the project's registry settings): a write, no token file read.",
            )
        }
        "secrets/token-files"
            if !SENDS_TO.is_match(text)
                && !READS_CONTENT.is_match(text)
                && c.rule(index).find_iter(text).all(|m| project_settings_file(text, m.start(), m.as_str())) =>
        {
            (
                Severity::Medium,
                "Names a project's package-manager settings file (`.npmrc` in the repository: `engine-strict`, a registry), not the user's token file, and reads none.",
            )
        }
        "secrets/ssh-keys" if !SENDS_TO.is_match(text) && only_public_keys(text) => (
            Severity::Medium,
            "Names a public key (`~/.ssh/id_ed25519.pub`): what is given to servers, not a secret.",
        ),
        "persist/git-hooks" if GIT_CONFIG_GET.is_match(text) && !text.contains(">>") => (
            Severity::Low,
            "Reads a git setting (`git config --get core.hooksPath`) without changing it.",
        ),
        "intent/widen-permissions"
            if ALLOWED_TOOLS.is_match(text) && c.rule(index).find_iter(text).all(|m| m.as_str() == "Bash(*)") =>
        {
            (
                Severity::High,
                "Lets a skill or command run every shell command (`allowed-tools: Bash(*)`): heavy shell execution, in plain sight.",
            )
        }
        "persist/authorized-keys"
            if OTHER_ACCOUNT_KEYS.is_match(text)
                && !LITERAL_KEY.is_match(text)
                && !FETCHES.is_match(text)
                && c.rule(index).find_iter(text).all(|m| OTHER_ACCOUNT_KEYS.find_iter(text).any(|o| o.start() <= m.start() && m.end() <= o.end())) =>
        {
            (
                Severity::High,
                "Adds the user's own key to another account's `authorized_keys` (`~deploy/.ssh/…`, a server's deploy account): access the user sets up on their own server, with no key of the skill's.",
            )
        }
        "persist/scheduler" if CRON_REMOVAL.is_match(text) && !FETCHES.is_match(text) => (
            Severity::Medium,
            "Removes an entry from the user's crontab (`crontab -l | grep -v job | crontab -`), adding none.",
        ),
        "persist/authorized-keys" | "persist/scheduler" if quiet() && read_only_listing(text) => (
            Severity::Medium,
            "Reads or lists what would run later or who may log in (a review), without changing it.",
        ),
        "intent/agent-config" if IMPORT_PATH.is_match(text) && !WRITES_FILE.is_match(text) => (
            Severity::Medium,
            "Adds another skill's folder to Python's import path (`sys.path.insert`) to use its code: a read, not a change to the agent's configuration.",
        ),
        "intent/agent-config"
            if c.rule(index).find_iter(text).all(|m| m.as_str().ends_with("add") && m.as_str().contains("mcp"))
                && MCP_BY_ADDRESS.is_match(text)
                && !text.contains(" -- ") =>
        {
            (
                Severity::Medium,
                "Registers a service's MCP server by its address with the agent (a connection it makes; no program is started).",
            )
        }
        "campaign/download-and-run"
            if c.rule(index)
                .find_iter(text)
                .all(|m| m.as_str().to_lowercase().ends_with("run it") && LEFT_TO_DECIDE.is_match(&text[..m.end()])) =>
        {
            (
                Severity::Low,
                "Leaves it to the reader whether to run what is downloaded (`decide whether to run it`, `don't run it`): not an order to run it.",
            )
        }
        "campaign/download-and-run"
            if !URL_ANYWHERE.is_match(text)
                && c.rule(index).find_iter(text).all(|m| TOOL_AS_NOUN.is_match(m.as_str())) =>
        {
            (
                Severity::Medium,
                "Speaks of running a command of a kind (`a curl command`) with nothing named to download: a description, not a download to run.",
            )
        }
        "install/pipe-to-shell"
            if c.rule(index).find_iter(text).all(|m| {
                LOOPBACK_SOURCE.is_match(m.as_str()) || program_given(m.as_str(), &text[m.end()..])
            }) =>
        {
            (
                Severity::Medium,
                "Pipes an answer into a program given on the command line (`| python3 -c \"…\"`, `| python3 -m json.tool`) or from a server on this machine: the download is data, not code that runs.",
            )
        }
        "intent/widen-permissions"
            if c.rule(index).find_iter(text).all(|m| {
                m.as_str().to_lowercase().starts_with("never") && SHOWN_FIRST.is_match(&text[m.end()..])
            }) =>
        {
            (
                Severity::Medium,
                "Has approval asked after the changes are shown (`never ask for approval before showing the changes`): approval is still asked.",
            )
        }
        "intent/widen-permissions"
            if c.rule(index).find_iter(text).all(|m| {
                let found = m.as_str().to_lowercase();
                let rest = &text[m.end()..];
                let sentence = rest.split(['.', ';', '!', '?']).next().unwrap_or(rest);
                found.starts_with("never")
                    && found.ends_with("confirmation")
                    && (SENTENCE_ENDS.is_match(rest) || !NAMES_AN_ACTION.is_match(sentence) && !rest.contains('`'))
            }) =>
        {
            (
                Severity::High,
                "Tells the agent to go on without asking whether to continue (`Never ask for confirmation`, an unattended loop), naming no action whose approval it skips.",
            )
        }
        "campaign/paste-command"
            if !FETCHES.is_match(text)
                && !SHELL_PASTE.is_match(text)
                && c.rule(index).find_iter(text).all(|m| {
                    m.as_str().to_lowercase().ends_with("console")
                        && (OF_A_PAGE.is_match(&text[m.end()..]) || DEVTOOLS.is_match(&text[..m.start()]))
                }) =>
        {
            (
                Severity::Medium,
                "Asks to paste code into a web page's developer console (`paste into the console on any page`): code for that page, not a command for the user's shell.",
            )
        }
        "secrets/env-dump" if c.rule(index).find_iter(text).all(|m| regex_alternative(text, m.start(), m.end())) => (
            Severity::Low,
            "Names `env` as one alternative of a regular expression (`(?:name|on|env|permissions)`), not the command.",
        ),
        "persist/git-hooks"
            if c.rule(index).find_iter(text).all(|m| m.as_str() == "core.hooksPath" && HOOKS_OFF.is_match(&text[m.end()..])) =>
        {
            (
                Severity::Low,
                "Turns git's hooks off for a command (`core.hooksPath=/dev/null`): no hook is set, none runs.",
            )
        }
        "priv/escalate" if DOCKERFILE_RUN.is_match(text) => (
            Severity::High,
            "In a container image's build (`RUN …` of a Dockerfile): root in that container, not on the user's machine.",
        ),
        "priv/escalate" if ON_ANOTHER_MACHINE.is_match(text) && !SETUID_MODE.is_match(text) => (
            Severity::High,
            "On another machine the line reaches (`kubectl debug node/… -- nsenter -t 1`, `ssh host 'sudo tee …'`): root there, taken on purpose, not on the user's own machine.",
        ),
        "persist/git-hooks" if c.rule(index).find_iter(text).all(|m| m.as_str().contains("alias.")) && git_only_alias(text) => (
            Severity::Low,
            "Adds a git alias that runs only git and text tools (`alias.undo '!git reset HEAD~1'`): nothing of the skill's runs later.",
        ),
        "install/custom-source"
            if only_indexes(&PUBLIC_REGISTRY, text) =>
        {
            (
                Severity::Low,
                "Names the public registry itself (`source 'https://rubygems.org'`, `GOPROXY=https://proxy.golang.org,direct`): where packages come from anyway.",
            )
        }
        "install/custom-source" if (text.contains("set-url") || text.contains("pushurl")) && PUSH_TO_FORGE.is_match(text) && !OTHER_PUSH_HOST.is_match(&PUSH_TO_FORGE.replace_all(text, " ")) => (
            Severity::Medium,
            "Adds a push address on a public code host (`git remote set-url --add --push origin git@github.com:…`): every push also goes there, a mirror of the user's choosing to read.",
        ),
        "install/custom-source" if GO_REPLACE_FORK.is_match(text) => (
            Severity::Medium,
            "Builds another module from a public code host in place of the one the project requires (`go mod edit -replace x=github.com/…`): a fork, compiled instead on every build.",
        ),
        "install/custom-source" if same_host_instead_of(text) => (
            Severity::Medium,
            "Has git fetch the same host another way (`url.\"git@github.com:\".insteadOf https://github.com/`: SSH for HTTPS, or a token in the address): no other server gets the fetches.",
        ),
        "install/custom-source" if only_indexes(&KNOWN_INDEX, text) => (
            Severity::Medium,
            "Installs from a vendor's own documented package index (PyTorch's `download.pytorch.org/whl/…`, NVIDIA's `pypi.nvidia.com`): where that vendor publishes its wheels.",
        ),
        "install/custom-source" if MANIFEST_ADDRESS_KEY.is_match(text) => (
            Severity::Low,
            "A package's own address in its manifest (`\"repository\"`, `\"url\"`, `\"homepage\"`): where its code lives, not a dependency installed from there.",
        ),
        "campaign/archive-password" if !ARCHIVE_WORD.is_match(text) => (
            Severity::Low,
            "Names a password beside a verb such as `extract` or `open`, with no archive, download or file in sight (`Extract PasswordValidator`).",
        ),
        "intent/agent-config"
            if RUNS_SKILL_SCRIPT.is_match(text) && !REDIRECT_TO_AGENT.is_match(text) =>
        {
            (
                Severity::Medium,
                "Runs another installed skill's script (`~/.claude/skills/x/scripts/y.sh`), writing nothing into the agent's folders.",
            )
        }
        _ if (rule.starts_with("net/") || rule.starts_with("exec/") || rule.starts_with("install/"))
            && c.rule(index).find_iter(text).all(|m| in_search_pattern(text, m.start(), m.end())) =>
        {
            (
                Severity::Low,
                "The text a search looks for (`grep -r \"requests.get\"`), not the act itself.",
            )
        }
        "secrets/ssh-keys" if !SENDS_TO.is_match(text) && CONTROL_PATH.is_match(text) && !SSH_PATH.is_match(&CONTROL_PATH.replace_all(text, " ")) => (
            Severity::Medium,
            "Names the SSH client's connection-sharing socket (`ControlPath ~/.ssh/cm-%r@%h:%p`), not a key.",
        ),
        "secrets/ssh-keys" | "secrets/token-files" | "secrets/cloud-credentials"
            if c.rule(index).find_iter(text).all(|m| in_search_pattern(text, m.start(), m.end()))
                && !HOME_PATH_OUTSIDE.is_match(&unquoted(text))
                && !FOUND_FILES_READ.is_match(text)
                && !SENDS_TO.is_match(text) =>
        {
            (
                Severity::Medium,
                "Looks for key or token files by name in a list of names (`git diff --cached --name-only | grep -E 'id_rsa'`), reading none.",
            )
        }
        "secrets/ssh-keys" if copies_public_key(text) => (
            Severity::Medium,
            "Sends the user's public key to their own server's `authorized_keys` (what `ssh-copy-id` does): a public key, not a secret.",
        ),
        "persist/authorized-keys" if copies_public_key(text) && !LITERAL_KEY.is_match(text) => (
            Severity::High,
            "Adds the user's own public key to their server's `authorized_keys` over SSH (what `ssh-copy-id` does): access the user sets up, with no key of the skill's.",
        ),
        "fs/home-sweep" if LOCAL_MIRROR.is_match(text) && !SENDS_TO.is_match(&text.replacen("rsync", "", 1)) => (
            Severity::High,
            "Copies the home folder to a local drive or folder (a backup): everything in it is read, nothing leaves the machine.",
        ),
        "secrets/browser-data" if c.rule(index).find_iter(text).all(|m| in_web_address(text, m.start())) => (
            Severity::Low,
            "Names a browser's data only as part of a web address (`https://developer.mozilla.org/…/HTTP/Cookies`): a page, not a file read.",
        ),
        "prompt/conceal"
            if c.rule(index).find_iter(text).all(|m| {
                NOTHING_TO_SAY.is_match(m.as_str()) && CONDITION_BEFORE.is_match(&text[..m.start()])
            }) && !NAMES_A_RUN.is_match(text) =>
        {
            (
                Severity::Medium,
                "Says there is nothing to say in the reply about what a condition leaves out (`If a file needed no changes, there is nothing to say about it`), with no command or step named: brevity, to read.",
            )
        }
        "prompt/conceal" if c.rule(index).find_iter(text).all(|m| ON_REQUEST.is_match(&text[m.end()..])) => (
            Severity::Medium,
            "Keeps something out of the reply until the user asks for it (`Do not show it to the user unless they ask`): shown on request, so not hidden.",
        ),
        "prompt/conceal" if c.rule(index).find_iter(text).all(|m| not_hiding(text, m.start(), m.as_str())) => (
            Severity::Low,
            "Says what must not happen unseen, or what an outside step does unseen (`never silently add packages`, `tests were silently skipped`, `keep the key secret`): nothing is hidden from the user.",
        ),
        "prompt/conceal"
            if c.rule(index).find_iter(text).all(|m| {
                ACTS_WITHOUT_ASKING.is_match(m.as_str()) && !FOR_PERMISSION.is_match(&text[m.end()..])
            }) =>
        {
            (
                Severity::Medium,
                "Tells the agent to go on without asking the user questions (what it does is still shown; nothing is hidden).",
            )
        }
        "prompt/conceal" if c.rule(index).find_iter(text).all(|m| TELL_USER_TO.find_at(text, m.start()).is_some_and(|t| t.start() == m.start())) => (
            Severity::Low,
            "Tells the agent not to ask the user to do something by hand (nothing is hidden from the user).",
        ),
        "prompt/ignore-instructions"
            if c.rule(index).find_iter(text).all(|m| OUTRANKS.is_match(m.as_str()) && USER_OUTRANKS.is_match(&text[..m.start()])) =>
        {
            (
                Severity::Low,
                "Ranks the user's own request above the skill's text (`the user's request outranks whatever is asked here`): the reverse of an injection.",
            )
        }
        "prompt/ignore-instructions" if c.rule(index).find_iter(text).all(|m| quoted_as_a_thing(text, m.start(), m.end())) => (
            Severity::Low,
            "Names a prompt-injection phrase in quotes as a kind of attempt (`\"ignore previous instructions\" attempts`), not as an order.",
        ),
        _ => return None,
    };
    Some(class)
}

/// The inline code span (between backticks) of a line that holds byte `at`, or the whole line when none does.
fn inline_span(text: &str, at: usize) -> &str {
    let ticks: Vec<usize> = text.match_indices('`').map(|(i, _)| i).collect();
    ticks
        .chunks(2)
        .find(|pair| pair.len() == 2 && pair[0] < at && at < pair[1])
        .map_or(text, |pair| &text[pair[0] + 1..pair[1]])
}

re!(
    /// A decode-and-run whose payload is a placeholder in angle brackets (`echo <base64> | base64 -d | sh`): the shell
    /// reads `<base64>` as two redirections and stops at the pipe, a syntax error.
    PAYLOAD_PLACEHOLDER,
    r"(?i)\b(?:echo|printf|cat)\s+['\x22]?<[^<>\s|]+>['\x22]?\s*\|"
);

re!(
    /// Prose that has git or ssh use a key (`tell git to use it for this repository only`).
    KEY_NAMED_FOR_USE,
    r"(?i)\b(?:tell|configure|point|set\s+up|have)\s+(?:git|ssh|the\s+ssh\s+client|the\s+git\s+client)\s+(?:to\s+use|at)\b"
);
re!(
    /// Words that hand a secret's text to someone: shown, shared, given, encoded.
    SHOWN_OUT,
    r"(?i)\b(?:show|display|reveal|share|echo|give|hand|base64|encode|contents?|text\s+of|tell\s+me)\b"
);

/// Whether every git alias a line adds runs only git and text tools (`'!git branch --merged | grep -v main | xargs git
/// branch -d'`): no path, no substitution, no other program.
fn git_only_alias(text: &str) -> bool {
    let Some(at) = text.find('!') else {
        return false;
    };
    // A `$` that names nothing (a pattern's end anchor, `"…develop)$"`) expands nothing.
    let mut body = String::new();
    let mut chars = text[at + 1..].chars().peekable();
    while let Some(c) = chars.next() {
        let expands = chars.peek().is_some_and(|n| {
            n.is_ascii_alphanumeric() || matches!(n, '_' | '{' | '(' | '@' | '*' | '#' | '?' | '!')
        });
        if c != '$' || expands {
            body.push(c);
        }
    }
    // The commands, split at `|`, `;` and `&` outside quotes (a pattern's alternatives are one argument).
    let mut parts = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in body.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '|' | ';' | '&') => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    !body.contains(['/', '`', '$', '>', '~'])
        && parts
            .iter()
            .map(|part| part.trim().trim_start_matches("xargs").trim())
            .filter(|part| !part.is_empty())
            .all(|part| {
                // `xargs -r git branch -d`: the program after xargs's own options.
                let first = part
                    .split_whitespace()
                    .find(|w| !w.starts_with('-'))
                    .unwrap_or_default();
                matches!(
                    first.trim_matches(['\'', '"']),
                    "git"
                        | "grep"
                        | "sed"
                        | "awk"
                        | "head"
                        | "tail"
                        | "sort"
                        | "uniq"
                        | "wc"
                        | "cut"
                        | "tr"
                        | "echo"
                        | "f(){"
                        | "}"
                )
            })
}

/// Whether every `url.<base>.insteadOf <original>` of the line sends git to the same host it would have reached
/// (`git@github.com:` for `https://github.com/`, `https://x-access-token:$T@github.com/`).
fn same_host_instead_of(text: &str) -> bool {
    fn host(url: &str) -> Option<String> {
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let end = rest.find(['/', ':']).unwrap_or(rest.len());
        let h = rest[..end].to_ascii_lowercase();
        (!h.is_empty() && h.contains('.')).then_some(h)
    }
    let mut found = INSTEAD_OF.captures_iter(text).peekable();
    found.peek().is_some()
        && found.all(|c| matches!((host(&c[1]), host(&c[2])), (Some(a), Some(b)) if a == b))
}
