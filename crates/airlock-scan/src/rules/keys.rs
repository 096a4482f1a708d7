//! What a line does with SSH keys and the client's files: a key handed to a program as its identity, public keys
//! only, the client's settings, a public key copied to the user's own server, another account's `authorized_keys`.

use super::*;

re!(
    /// A key handed to a program as the identity it logs in or signs with (`ssh -i KEY`, `curl --key KEY`,
    /// `--identity KEY`, `IdentityFile KEY`, `key_filename=KEY`, paramiko's `from_path(KEY)`).
    pub(super) KEY_USE,
    r#"(?i)(?:\bssh-add(?:\s+-{1,2}[\w-]+(?:\s+\d+[smhdw]?\b)?)*\s+|(?:^|\s)(?:-i|--key|--identity(?:-file)?|--ssh-key|--private-key(?:-file)?|--key-file|--keyfile)(?:\s+|=)|\bIdentityFile\s+|\bkey_filename\s*=\s*|\bidentity_?file['"]?\s*[:=]\s*|\b(?:from_path|from_private_key_file|load_private_key_file)\(\s*)['"]?(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]+|(?:[A-Za-z]:)?/Users/[\w.-]+|/root)/\.ssh/[\w.-]+['"]?"#
);

/// Whether every SSH path of a line is a key handed to a program as its identity (`ssh -i ~/.ssh/deploy`,
/// `curl --key ~/.ssh/id_rsa sftp://…`): with those taken out, no SSH path is left.
pub(super) fn key_used_only(text: &str) -> bool {
    KEY_USE.is_match(text) && !SSH_PATH.is_match(&KEY_USE.replace_all(text, " "))
}

re!(pub(super) SSH_PATH, r"\.ssh\b/?(\S*)|\bid_(?:rsa|dsa|ecdsa|ed25519)(\S*)");

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

re!(
    /// A path under `~/.ssh/` and the file it names.
    pub(super) SSH_FILE, r"\.ssh/([\w.-]*)");

/// Whether every SSH path of a line is the client's settings file (`~/.ssh/config`: host names, not keys).
pub(super) fn only_ssh_config(text: &str) -> bool {
    let mut files = SSH_FILE.captures_iter(text).map(|c| c[1].to_owned()).peekable();
    files.peek().is_some()
        && files.all(|f| {
            f == "config"
                || f == "config.d"
                || f.strip_prefix("config.")
                    .is_some_and(|e| matches!(e, "bak" | "orig" | "backup" | "old" | "new" | "tmp" | "d"))
        })
        && !text.contains("id_")
}

re!(
    /// Another account's `authorized_keys`, named by its home (`~deploy/.ssh/authorized_keys`).
    pub(super) OTHER_ACCOUNT_KEYS,
    r"~[a-z_][\w-]*/\.ssh/authorized_keys\b"
);

re!(
    /// A public key written out in full (`ssh-ed25519 AAAA…`).
    pub(super) LITERAL_KEY,
    r"\b(ssh-(rsa|ed25519|dss)|ecdsa-sha2-\S+)\s+AAAA"
);

/// Whether every SSH path of a line names a public key (`~/.ssh/id_ed25519.pub`).
pub(super) fn only_public_keys(text: &str) -> bool {
    let mut paths = SSH_PATH.captures_iter(text).peekable();
    paths.peek().is_some()
        && paths.all(|c| {
            c.get(1).or_else(|| c.get(2)).is_some_and(|rest| {
                rest.as_str()
                    .trim_end_matches(['"', '\'', '`', ')', ',', '.', ';'])
                    .ends_with(".pub")
            })
        })
}

re!(
    /// An SSH connection-sharing socket's path (`ControlPath ~/.ssh/cm-%r@%h:%p`, `-o ControlPath=~/.ssh/sockets/%C`).
    pub(super) CONTROL_PATH, r"(?i)\bControlPath\s*[=\s]\s*['\x22]?(~|\$HOME)/\.ssh/[\w.%@:/-]*");

re!(
    /// A public key piped to the user's server and appended to its `authorized_keys` (`cat ~/.ssh/id_ed25519.pub |
    /// ssh "$HOST" 'cat >> ~/.ssh/authorized_keys'`), or `ssh-copy-id -i KEY.pub`.
    pub(super) COPY_ID, r#"\.pub['"]?\s*\|\s*ssh\s+[^|]*>>\s*['"]?~?/?\.ssh/authorized_keys|\bssh-copy-id\b"#);

/// Whether a line sends the user's public key to their server's `authorized_keys` and names no other file under
/// `.ssh` (a private key piped the same way stays what it is).
pub(super) fn copies_public_key(text: &str) -> bool {
    COPY_ID.is_match(text)
        && !SENDS_TO.is_match(text)
        && SSH_FILE.captures_iter(text).all(|c| {
            let name = c[1].trim_end_matches(['"', '\'', '`', ')', ',', ';']);
            name.is_empty() || name.ends_with(".pub") || name == "authorized_keys"
        })
}
