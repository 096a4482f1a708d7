//! Classifiers for what a run did, shared by the recorder (which always keeps the events that matter for the
//! verdict) and the verdict itself: credential-like paths, start-up and hook files, package installs.

/// Whether a path looks like a secret or credential store.
pub fn credential_like(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    const PARTS: &[&str] = &[
        "/.ssh/",
        "/.aws/",
        "/.gnupg/",
        "/.docker/config.json",
        "/.kube/config",
        "/.config/gh/",
        "/.config/gcloud/",
        "/.azure/",
        "/etc/shadow",
        "/.password-store/",
        "/Cookies",
        "/Login Data",
        "/.mozilla/",
    ];
    const NAMES: &[&str] = &[
        ".netrc",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        "id_rsa",
        "id_ed25519",
        "id_ecdsa",
        "credentials",
        "credentials.json",
        ".pgpass",
    ];
    name == ".env"
        || name.starts_with(".env.")
        || NAMES.contains(&name)
        || name.ends_with(".pem") && name.contains("key")
        || PARTS.iter().any(|p| path.contains(p))
}

/// Whether writing this path makes something run later: shell start-up files, git hooks and attributes,
/// scheduled jobs, service units, autostart entries, CI workflows, pytest's `conftest.py`, editors' start-up files and plugins.
pub fn startup_or_hook(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    const NAMES: &[&str] = &[
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".zlogin",
        ".gitattributes",
        ".gitmodules",
        ".envrc",
        "crontab",
        // pytest runs it on every test run; Vim and Emacs at every start.
        "conftest.py",
        ".vimrc",
        ".emacs",
    ];
    const PARTS: &[&str] = &[
        "/.git/hooks/",
        "/.husky/",
        "/.githooks/",
        "/.config/autostart/",
        "/.config/systemd/",
        "/etc/systemd/",
        "/etc/cron",
        "/var/spool/cron",
        "/LaunchAgents/",
        "/.github/workflows/",
        "/.claude/settings",
        "/.config/fish/config.fish",
        "/.config/fish/conf.d/",
        "/.config/nvim/plugin/",
        "/.config/nvim/after/",
        "/.config/nvim/init.",
        "/.vim/plugin/",
        "/.emacs.d/init.el",
    ];
    NAMES.contains(&name) || PARTS.iter().any(|p| path.contains(p))
}

/// The package manager a program run installs with, from the executed program and its arguments (not a pattern
/// on a command line): `pip`/`pip3`/`python -m pip` with `install` among its arguments, `uv pip install`,
/// `uv add`, `npm install|i|add|ci`, `yarn add|install`, `pnpm add|install|i`, `cargo install`, `gem install`,
/// `apt`/`apt-get install`, `go install|get`, `npx` (fetches and runs a package).
pub fn install_manager(path: &str, argv: &[String]) -> Option<&'static str> {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_owned();
    let prog = base(path);
    // Words after the program, with options (and an option's glued value) left out.
    let words: Vec<&str> = argv
        .iter()
        .skip(1)
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let has = |w: &[&str]| words.iter().any(|a| w.contains(a));
    let first = |w: &[&str]| words.first().is_some_and(|a| w.contains(a));
    let python = prog.starts_with("python");
    if prog.starts_with("pip") && has(&["install"]) {
        return Some("pip");
    }
    if python {
        let m = argv.iter().position(|a| a == "-m")?;
        let module = argv.get(m + 1)?;
        let rest: Vec<&str> = argv[m + 2..]
            .iter()
            .map(String::as_str)
            .filter(|a| !a.starts_with('-'))
            .collect();
        return (module.starts_with("pip") && rest.contains(&"install")).then_some("pip");
    }
    match prog.as_str() {
        "uv" if first(&["pip"]) && has(&["install"]) || first(&["add", "tool"]) => Some("uv"),
        "npm" if first(&["install", "i", "add", "ci"]) => Some("npm"),
        "npx" => Some("npm"),
        "yarn" if first(&["add", "install"]) || words.is_empty() => Some("yarn"),
        "pnpm" if first(&["add", "install", "i"]) => Some("pnpm"),
        "cargo" if first(&["install"]) => Some("cargo"),
        "gem" if first(&["install"]) => Some("gem"),
        "apt" | "apt-get" | "aptitude" if has(&["install"]) => Some("apt"),
        "go" if first(&["install", "get"]) => Some("go"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn installs_are_recognised_by_program_and_arguments() {
        for (path, line, want) in [
            ("/usr/bin/pip3", "pip3 --quiet install requests", Some("pip")),
            ("/usr/bin/python3", "python3 -m pip install x", Some("pip")),
            (
                "/usr/bin/python3",
                "python3 -m pip --disable-pip-version-check install x",
                Some("pip"),
            ),
            ("/usr/bin/python3", "python3 -m http.server", None),
            ("/usr/bin/python3", "python3 install.py", None),
            ("/usr/bin/npm", "npm i left-pad", Some("npm")),
            ("/usr/bin/npm", "npm test", None),
            ("/usr/bin/uv", "uv pip install x", Some("uv")),
            ("/usr/bin/cargo", "cargo build", None),
            ("/usr/bin/gem", "gem install rails", Some("gem")),
            ("/usr/bin/go", "go install x@latest", Some("go")),
            ("/usr/bin/apt-get", "apt-get -y install curl", Some("apt")),
            ("/usr/bin/grep", "grep install README.md", None),
        ] {
            assert_eq!(install_manager(path, &argv(line)), want, "{line}");
        }
    }

    #[test]
    fn credentials_and_hooks_are_told_from_ordinary_files() {
        assert!(credential_like("/workspace/.env"));
        assert!(credential_like("/home/sandbox/.ssh/id_rsa"));
        assert!(!credential_like("/workspace/src/env.js"));
        assert!(!credential_like("/workspace/.envelope"));
        assert!(startup_or_hook("/workspace/.git/hooks/pre-commit"));
        assert!(startup_or_hook("/workspace/.husky/pre-commit"));
        assert!(startup_or_hook("/home/sandbox/.bashrc"));
        assert!(!startup_or_hook("/workspace/src/App.jsx"));
        assert!(startup_or_hook("/workspace/tests/conftest.py"));
        assert!(startup_or_hook("/home/sandbox/.config/nvim/plugin/lsp.lua"));
        assert!(!startup_or_hook("/workspace/nvim/lua/lsp.lua"));
    }
}
