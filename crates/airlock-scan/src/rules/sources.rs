//! Where a shipped manifest takes packages from, read by its sections: an index of the skill's own choosing in a
//! `pyproject.toml` or a `Pipfile`, a crate patched or fetched from a git host in a `Cargo.toml`, a Go module
//! replaced by another in a `go.mod`, a requirement installed from an address in a `requirements.txt`. Each is an
//! `install/custom-source`: `high` for a host of the skill's choosing, `medium` for a vendor's documented index or a
//! fork on a public code host, `low` for the public registry itself.

use super::signs::{only_indexes, FORGE_HOSTS, KNOWN_INDEX, PUBLIC_REGISTRY};
use super::*;

re!(
    /// A public code host, the host ending there (`https://github.com.example.net/` is another host).
    FORGE,
    &format!(r"(?i)(?:https?://|ssh://git@|git@)(?:www\.)?{FORGE_HOSTS}[/:]")
);
re!(
    /// An inline table's or a key's git source in a `Cargo.toml` (`serde = { git = "https://…" }`, `git = "…"`).
    CARGO_GIT, r#"\bgit\s*=\s*["']([^"']+)["']"#);
re!(
    /// A requirement installed from an address (PEP 508's `name @ https://…`, or `git+https://…` alone).
    DIRECT_REQUIREMENT,
    r"(?i)^\s*(?:-e\s+|--editable\s+)?(?:[a-z0-9_.\[\], -]+@\s*)?(?:git\+)?(?:https?|ssh)://\S+"
);

/// Adds an `install/custom-source` for every place `file`, a package manifest, takes packages from other than the
/// public registries.
pub(super) fn manifest_sources(file: &str, text: &str, out: &mut Vec<Finding>) {
    let name = file.rsplit('/').next().unwrap_or(file);
    let found: Vec<(usize, Severity, &str)> = match name {
        "pyproject.toml" => {
            let mut found = index_sources(name, text);
            found.extend(project_direct_sources(text));
            found
        }
        "Pipfile" => index_sources(name, text),
        "Cargo.toml" => cargo_sources(text),
        "go.mod" | "go.work" => go_replacements(text),
        _ if name.starts_with("requirements") && name.ends_with(".txt") => direct_requirements(text),
        // A part of one kept under another name (`assets/backports.toml`, `templates/Pipfile.tpl`), known by its
        // sections.
        _ => match sectioned(text)
            .map(|(_, section, _)| section)
            .find(|s| s.starts_with("patch.") || s == "replace" || s == "source" || s.starts_with("tool."))
        {
            Some(s) if s.starts_with("patch.") || s == "replace" => cargo_sources(text),
            Some(s) if s == "source" => index_sources("Pipfile", text),
            Some(_) => index_sources("pyproject.toml", text),
            None => Vec::new(),
        },
    };
    for (i, severity, message) in found {
        let line = text.lines().nth(i).unwrap_or_default();
        out.push(Finding {
            rule: "install/custom-source".to_owned(),
            severity,
            file: file.to_owned(),
            line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            evidence: visible(line.trim(), 160),
            message: message.to_owned(),
            context: FindingContext::Code,
        });
    }
}

/// Each line's section (`tool.poetry.source`, `source`, `patch.crates-io`) beside its trimmed text.
fn sectioned(text: &str) -> impl Iterator<Item = (usize, String, &str)> {
    let mut section = String::new();
    text.lines().enumerate().filter_map(move |(i, line)| {
        let t = line.trim();
        if t.starts_with('[') && !t.contains('=') {
            section = t.trim_matches(['[', ']']).trim().to_owned();
            return None;
        }
        Some((i, section.clone(), t))
    })
}

/// The indexes of a `pyproject.toml` (`url` of `[[tool.poetry.source]]`, `[[tool.uv.index]]`, `[[tool.pdm.source]]`;
/// `index-url` and `extra-index-url` of `[tool.uv]`) or a `Pipfile` (`url` of `[[source]]`), read as the same source
/// written on a command line is (`lesser`).
fn index_sources(name: &str, text: &str) -> Vec<(usize, Severity, &'static str)> {
    sectioned(text)
        .filter(|(_, section, t)| {
            let Some((key, value)) = t.split_once('=') else {
                return false;
            };
            let key = key.trim();
            value.trim_start().trim_start_matches(['"', '\'']).starts_with("http")
                && match name {
                    "Pipfile" => section == "source" && key == "url",
                    _ => {
                        matches!(
                            section.as_str(),
                            "tool.poetry.source" | "tool.uv.index" | "tool.pdm.source"
                        ) && key == "url"
                            || matches!(section.as_str(), "tool.uv" | "tool.uv.pip")
                                && matches!(key, "index-url" | "extra-index-url")
                    }
                }
        })
        .map(|(i, _, t)| {
            let (severity, message) = if only_indexes(&PUBLIC_REGISTRY, t) {
                (
                    Severity::Low,
                    "Names the public registry itself as the project's index: where packages come from anyway.",
                )
            } else if only_indexes(&KNOWN_INDEX, t) {
                (Severity::Medium, "Sends the project's installs to a vendor's own documented package index (PyTorch's `download.pytorch.org/whl/…`, NVIDIA's `pypi.nvidia.com`).")
            } else {
                (Severity::High, "Sends the project's installs to a package index of its own (a `pyproject.toml` or `Pipfile` source): every `poetry install`, `uv sync` or `pipenv install` takes packages from there, code no public registry has seen.")
            };
            (i, severity, message)
        })
        .collect()
}

re!(
    /// A dependency of a `pyproject.toml` given by address: PEP 508's `"pkg @ https://…"` in a list, or uv's
    /// `[tool.uv.sources]` entry `pkg = { url = "…" }` / `{ git = "…" }`.
    PROJECT_DIRECT,
    r#"(?i)["'][A-Za-z0-9_.\[\], -]+@\s*(?:git\+)?(?:https?|ssh)://[^"']+["']|(?:^|[\s{,])(?:url|git)\s*=\s*["'](?:git\+)?(?:https?|ssh)://[^"']+["']"#
);

/// A `pyproject.toml`'s dependencies given by address (a PEP 508 `@ https://…` in `[project]`'s lists, uv's
/// `[tool.uv.sources]` `url` or `git`), read as a requirements file's are.
fn project_direct_sources(text: &str) -> Vec<(usize, Severity, &'static str)> {
    sectioned(text)
        .filter(|(_, section, t)| {
            let dependency_section = section == "project"
                || section == "project.optional-dependencies"
                || section == "dependency-groups"
                || section == "tool.uv.sources"
                || section == "tool.uv";
            dependency_section && PROJECT_DIRECT.is_match(t)
        })
        .map(|(i, _, t)| {
            let (severity, message) = by_address(
                t,
                [
                    "Takes a dependency from a file of the public registry, by its address.",
                    "Takes a dependency from a repository on a public code host or a vendor's documented index, not from the registry.",
                    "Takes a dependency from an address of its own (`pkg @ https://…`, a `[tool.uv.sources]` url): a file no registry has seen, installed with the project under the package's name.",
                ],
            );
            (i, severity, message)
        })
        .collect()
}

/// How much a dependency taken from an address on `line` counts, with the message of its class (`messages`: the
/// public registry's own file, `low`; a public code host's repository or a vendor's documented index, `medium`; an
/// address of the skill's own, `high`).
fn by_address(line: &str, messages: [&'static str; 3]) -> (Severity, &'static str) {
    if only_indexes(&PUBLIC_REGISTRY, line) {
        (Severity::Low, messages[0])
    } else if FORGE.is_match(line) || only_indexes(&KNOWN_INDEX, line) {
        (Severity::Medium, messages[1])
    } else {
        (Severity::High, messages[2])
    }
}

/// A `Cargo.toml`'s crates from git (a dependency, or a `[patch.…]` or `[replace]` entry that builds another
/// crate's code in place of the one named).
fn cargo_sources(text: &str) -> Vec<(usize, Severity, &'static str)> {
    sectioned(text)
        .filter_map(|(i, section, t)| {
            let url = CARGO_GIT.captures(t)?.get(1)?.as_str();
            let patch = section.starts_with("patch") || section == "replace";
            let severity = if FORGE.is_match(url) {
                Severity::Medium
            } else {
                Severity::High
            };
            let message = match (patch, severity) {
                (true, Severity::Medium) => "Builds a crate from a fork on a public code host in place of the one the project names (`[patch]`): every build compiles that code instead.",
                (true, _) => "Builds a crate from a git host of its own in place of the one the project names (`[patch]`): every build compiles code no registry has seen, under a trusted crate's name.",
                (false, Severity::Medium) => "Takes a crate from a git repository on a public code host instead of crates.io.",
                (false, _) => "Takes a crate from a git host of its own instead of crates.io: code no registry has seen, compiled (and its build script run) on every build.",
            };
            Some((i, severity, message))
        })
        .collect()
}

/// A `go.mod`'s `replace` directives that put another module (not a local folder) in place of the one required.
fn go_replacements(text: &str) -> Vec<(usize, Severity, &'static str)> {
    let mut in_block = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.split("//").next().unwrap_or_default().trim();
        let directive = if in_block {
            if t == ")" {
                in_block = false;
                continue;
            }
            t
        } else if let Some(rest) = t.strip_prefix("replace") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        let Some((from, to)) = directive.split_once("=>") else {
            continue;
        };
        let target = to.split_whitespace().next().unwrap_or_default();
        let module = |s: &str| s.split_whitespace().next().unwrap_or_default().to_owned();
        if target.is_empty() || target.starts_with(['.', '/']) || module(from) == target {
            continue;
        }
        let host = format!("https://{target}");
        let (severity, message) = if FORGE.is_match(&host) {
            (Severity::Medium, "Builds another module from a public code host in place of the one the project requires (`replace … => …`): a fork, compiled instead on every build.")
        } else {
            (Severity::High, "Builds a module from a host of its own in place of the one the project requires (`replace … => …`): every build compiles that code under a trusted module's name.")
        };
        out.push((i, severity, message));
    }
    out
}

/// A `requirements.txt`'s requirements installed from an address rather than an index (`pkg @ https://…/x.whl`,
/// `git+https://…`); the index options are read line by line elsewhere.
fn direct_requirements(text: &str) -> Vec<(usize, Severity, &'static str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| DIRECT_REQUIREMENT.is_match(l))
        .map(|(i, l)| {
            let (severity, message) = by_address(
                l,
                [
                    "Installs a file of the public registry by its address: what the registry serves anyway.",
                    "Installs a requirement from a repository on a public code host or a vendor's documented index, not from the registry.",
                    "Installs a requirement from an address of its own (`pkg @ https://…`): a file no registry has seen, installed with the project's requirements.",
                ],
            );
            (i, severity, message)
        })
        .collect()
}
