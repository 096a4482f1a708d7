//! What a markdown code block is when its label does not say: a shell transcript under another name, or data.

use crate::code::Grammar;

/// A code block whose language has no grammar here but whose lines are commands: a shell of another name
/// (`console`, `zsh`, `fish`, `powershell`, `cmd`), a block with no language or labelled as text. What a block is
/// labelled costs a hostile skill nothing, so a block of commands is read as commands whatever its label says; only
/// data formats (JSON, YAML, TOML, XML, CSV, diffs) are left as data.
pub(super) fn guess_shell(lang: &str, text: &str) -> Option<Grammar> {
    let lang = lang.to_ascii_lowercase();
    let data = [
        "json", "jsonc", "json5", "yaml", "yml", "toml", "xml", "html", "css", "csv", "tsv", "diff", "patch",
        "markdown", "md", "ini", "sql", "graphql", "svg", "mermaid", "dot", "latex", "tex", "http",
    ];
    if data.contains(&lang.as_str()) {
        return None;
    }
    let shells = [
        "console",
        "terminal",
        "shell-session",
        "sh-session",
        "shellsession",
        "zsh",
        "fish",
        "ksh",
        "csh",
        "tcsh",
        "powershell",
        "ps1",
        "pwsh",
        "ps",
        "cmd",
        "bat",
        "batch",
        "dos",
        "command",
        "commands",
        "cli",
    ];
    let first = text.lines().find(|l| !l.trim().is_empty())?.trim_start();
    let first = first
        .trim_start_matches("$ ")
        .trim_start_matches("% ")
        .trim_start_matches("> ")
        .trim_start_matches("PS> ");
    // A program named by its path is that program (`/bin/bash -c …`, `/usr/bin/env python3`).
    let word = first.split_whitespace().next()?.to_ascii_lowercase();
    let word = match word.rsplit_once('/') {
        Some((dir, name))
            if dir.starts_with("/usr") || dir.starts_with("/bin") || dir.starts_with("/opt") =>
        {
            name.to_owned()
        }
        _ => word,
    };
    let known = [
        "curl",
        "wget",
        "pip",
        "pip3",
        "npm",
        "npx",
        "yarn",
        "pnpm",
        "python",
        "python3",
        "node",
        "bash",
        "sh",
        "zsh",
        "git",
        "cd",
        "ls",
        "cat",
        "echo",
        "export",
        "sudo",
        "apt",
        "apt-get",
        "brew",
        "cargo",
        "make",
        "chmod",
        "rm",
        "mkdir",
        "iwr",
        "iex",
        "invoke-webrequest",
        "invoke-expression",
        "powershell",
        "pwsh",
        "7z",
        "unzip",
        "tar",
        "open",
        "osascript",
        "uv",
        "uvx",
        "go",
        "docker",
        "source",
        "eval",
        "nc",
        "ncat",
        "base64",
        "xattr",
        "start-process",
        "set",
        "cp",
        "mv",
        "scp",
        "rsync",
        "crontab",
        "launchctl",
    ];
    (shells.contains(&lang.as_str()) || known.contains(&word.as_str()) || text.trim_start().starts_with("$ "))
        .then_some(Grammar::Shell)
}

/// Removes `$ ` prompts from a shell transcript so the parser sees commands.
pub(super) fn strip_prompts(text: &str) -> String {
    text.lines()
        .map(|l| l.strip_prefix("$ ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}
