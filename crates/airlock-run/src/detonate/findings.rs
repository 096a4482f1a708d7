//! A detonation's findings, from its run's record: what touched a canary and what would have left, each cited at
//! the file and line it came from.

use std::collections::HashMap;

use airlock_types::{Finding, FindingContext, NetDecision, ScanReport, Severity, SkillRun};

use super::Canaries;
use crate::SKILL_DIR;

/// The findings a detonation's record gives.
pub fn findings(
    record: &SkillRun,
    canaries: &Canaries,
    report: &ScanReport,
    store: &airlock_store::Store,
) -> Vec<Finding> {
    let cite = Citer::new(record, report, store);
    let mut out: Vec<Finding> = Vec::new();
    let mut push = |f: Finding| {
        if !out.iter().any(|o| o.rule == f.rule && o.evidence == f.evidence) {
            out.push(f);
        }
    };
    let skill_pid = |pid: i32| pid > 0 && cite.is_skill(pid);
    for n in &record.network {
        // UDP is not carried: what tried it would have sent datagrams out.
        if n.protocol == "udp" && n.decision == NetDecision::Denied && skill_pid(n.pid) {
            let (file, line) = cite.at(n.pid, &[], NETWORK_CALLS);
            push(Finding {
                rule: "detonation/network".into(),
                severity: Severity::High,
                file,
                line,
                evidence: airlock_types::display::line(&format!("udp to {}", n.destination)),
                message: format!(
                    "Run sealed, the skill sent UDP to {} (refused there; in a real run it would have left).",
                    n.destination
                ),
                context: FindingContext::Code,
            });
            continue;
        }
        if n.decision != NetDecision::Sinkholed {
            continue;
        }
        let Some(catch) = &n.catch else { continue };
        let host = n.host.clone().unwrap_or_else(|| n.destination.clone());
        let what = catch
            .request
            .as_ref()
            .map_or_else(|| catch.kind.clone(), |r| format!("{} {r}", catch.kind));
        let address = n.destination.rsplit_once(':').map_or("", |(a, _)| a);
        let path = catch
            .request
            .as_deref()
            .and_then(|r| r.split(' ').nth(1))
            .and_then(|p| p.split('?').next())
            .filter(|p| p.len() > 2)
            .unwrap_or_default();
        let parent = host.split_once('.').map_or("", |(_, p)| p).to_owned();
        let parent = if parent.contains('.') { parent.as_str() } else { "" };
        let (file, line) = cite.at(
            n.pid,
            &[&host, address.trim_matches(['[', ']']), path, parent],
            NETWORK_CALLS,
        );
        let stolen = canaries.stolen(&catch.canaries, &host);
        if !stolen.is_empty() {
            let stolen: Vec<String> = stolen.into_iter().cloned().collect();
            // Sent only as the request's own credential (a bearer token to an API gateway, an S3-compatible
            // store's signature): an API call to check, not a theft on its face.
            let as_credential = stolen.iter().all(|c| catch.credential_only.contains(c));
            push(Finding {
                rule: "detonation/secret-sent".into(),
                severity: if as_credential {
                    Severity::High
                } else {
                    Severity::Critical
                },
                file: file.clone(),
                line,
                evidence: airlock_types::display::line(&format!(
                    "{what} to {}: {}",
                    n.destination,
                    sample(&catch.sample)
                )),
                message: if as_credential {
                    format!(
                        "Run sealed with planted secrets, the skill sent {} to {host} as its request's credential \
                         (an Authorization header): an API or a gateway to one if {host} is that service's, a theft \
                         if it is not.",
                        some_of(&stolen)
                    )
                } else {
                    format!(
                        "Run sealed with planted secrets, the skill sent {} to {host}; in a real run it would have \
                         left this machine.",
                        some_of(&stolen)
                    )
                },
                context: FindingContext::Code,
            });
        }
        if catch.shell {
            push(Finding {
                rule: "detonation/remote-shell".into(),
                severity: Severity::Critical,
                file: file.clone(),
                line,
                evidence: airlock_types::display::line(&format!("{} {}", n.destination, sample(&catch.sample))),
                message: format!(
                    "The skill connected to {host} and ran the command the sinkhole sent down the connection: a \
                     remote shell for whoever answers there."
                ),
                context: FindingContext::Code,
            });
        }
        if catch.kind == "dns" {
            continue;
        }
        let registry = REGISTRIES.contains(&host.as_str());
        push(Finding {
            rule: "detonation/network".into(),
            severity: if registry {
                Severity::Medium
            } else {
                Severity::High
            },
            file,
            line,
            evidence: airlock_types::display::line(&format!(
                "{what} to {} ({} bytes)",
                n.destination, n.bytes_up
            )),
            message: if registry {
                format!(
                    "Run sealed, the skill reached the package registry {host} (an install); the sinkhole took it."
                )
            } else {
                format!(
                    "Run sealed, the skill opened a connection to {host}; the sinkhole took it, in a real run it \
                     would have reached the network."
                )
            },
            context: FindingContext::Code,
        });
    }
    // Code the sinkhole served (to a download) that ran.
    for e in &record.timeline {
        if !e.argv.iter().skip(1).any(|a| a == &canaries.marker) {
            continue;
        }
        let (file, line) = cite.at(e.ppid, &[], DOWNLOADS);
        push(Finding {
            rule: "detonation/fetched-code-ran".into(),
            severity: Severity::Critical,
            file,
            line,
            evidence: airlock_types::display::line(&cite.program(e.ppid)),
            message: "Run sealed, the skill ran code it downloaded: the sinkhole answered a download with a script, \
                      and that script ran. In a real run, whoever serves that address decides what runs."
                .into(),
            context: FindingContext::Code,
        });
        break;
    }
    // A name looked up and never connected to: only the lookup would have left.
    let connected: Vec<&str> = record
        .network
        .iter()
        .filter(|n| n.catch.as_ref().is_some_and(|c| c.kind != "dns"))
        .filter_map(|n| n.host.as_deref())
        .collect();
    for n in &record.network {
        let (Some(catch), Some(host)) = (&n.catch, &n.host) else {
            continue;
        };
        if catch.kind != "dns" || connected.contains(&host.as_str()) || !catch.canaries.is_empty() {
            continue;
        }
        let (file, line) = cite.at(n.pid, &[host], NETWORK_CALLS);
        push(Finding {
            rule: "detonation/lookup".into(),
            severity: Severity::Medium,
            file,
            line,
            evidence: airlock_types::display::line(&n.destination),
            message: format!("Run sealed, the skill looked up {host} (and connected to nothing there)."),
            context: FindingContext::Code,
        });
    }
    for f in &record.files_read {
        let path = &through_proc_root(f.resolved.as_deref().unwrap_or(&f.path));
        let Some(name) = canaries
            .planted_at(path)
            .or_else(|| canaries.planted_at(&through_proc_root(&f.path)))
        else {
            continue;
        };
        // An app reads its project's `.env` (dotenv): only sending it counts.
        if !skill_pid(f.pid) || path.starts_with(crate::WORKSPACE) {
            continue;
        }
        let hint = path.rsplit('/').next().unwrap_or(path);
        let (file, line) = cite.at(f.pid, &[hint], &["open(", "read", "cat "]);
        push(Finding {
            rule: "detonation/secret-read".into(),
            severity: Severity::High,
            file,
            line,
            evidence: airlock_types::display::line(&format!("{} read {path}", cite.program(f.pid))),
            message: format!(
                "Run sealed, the skill read {name}, a planted secret (what it did with it is in the other findings)."
            ),
            context: FindingContext::Code,
        });
    }
    for f in &record.files_written {
        let path = f.resolved.as_deref().unwrap_or(&f.path);
        let path = &through_proc_root(path);
        let agent = agent_file(path);
        let later = airlock_types::observe::startup_or_hook(path) || runs_later(path);
        if !(later || agent) || !lasting(path) || !skill_pid(f.pid) {
            continue;
        }
        let hint = path.rsplit('/').next().unwrap_or(path);
        let (file, line) = cite.at(f.pid, &[hint], &[">>", "open(", "write"]);
        push(Finding {
            rule: "detonation/persistence".into(),
            severity: Severity::High,
            file,
            line,
            evidence: airlock_types::display::line(&format!("{} wrote {path}", cite.program(f.pid))),
            message: if agent {
                "Run sealed, the skill wrote an agent's own configuration, memory or skills: what the agent does \
                 next would change."
                    .into()
            } else {
                "Run sealed, the skill wrote a file that runs later (a start-up file, a hook, a scheduled job, a \
                 command of the same name put first on the PATH)."
                    .into()
            },
            context: FindingContext::Code,
        });
    }
    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.file.cmp(&b.file))
            .then(a.line.cmp(&b.line))
    });
    out
}

/// Words of a network call in code, for citing the line a connection came from when no line names its host.
const NETWORK_CALLS: &[&str] = &[
    "urlopen",
    "requests.",
    "httpx.",
    "http.client",
    "fetch(",
    "axios",
    "curl ",
    "wget ",
    "socket.",
    "/dev/tcp/",
    "Invoke-WebRequest",
];

/// Words of a download in code, for citing the line fetched code came from.
const DOWNLOADS: &[&str] = &[
    "curl ",
    "wget ",
    "urlopen",
    "requests.get",
    "fetch(",
    "Invoke-WebRequest",
    "iwr ",
];

/// An agent's own configuration, memory, instructions or skills (not its logs, caches or locks).
fn agent_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    const DIRS: &[&str] = &[
        "/.claude/",
        "/.codex/",
        "/.cursor/",
        "/.gemini/",
        "/.config/opencode/",
        "/.openclaw/",
        "/.continue/",
    ];
    const WHAT: &[&str] = &[
        "/settings.json",
        "/settings.local.json",
        "/config.toml",
        "/config.json",
        "/mcp.json",
        "/.mcp.json",
        "/skills/",
        "/commands/",
        "/agents/",
        "/hooks/",
        "/prompts/",
        "/rules/",
        "/plugins/",
    ];
    DIRS.iter().any(|d| {
        path.split_once(d)
            .is_some_and(|(_, rest)| WHAT.iter().any(|w| format!("/{rest}").starts_with(w)))
    }) || [
        "CLAUDE.md",
        "AGENTS.md",
        "GEMINI.md",
        ".cursorrules",
        "MEMORY.md",
        "SOUL.md",
        "copilot-instructions.md",
        ".windsurfrules",
        ".clinerules",
    ]
    .contains(&name)
}

/// A path opened through `/proc/self/root/` or `/proc/PID/root/` is the path after it.
fn through_proc_root(path: &str) -> String {
    let Some(rest) = path.strip_prefix("/proc/") else {
        return path.to_owned();
    };
    match rest.split_once("/root/") {
        Some((pid, after))
            if pid == "self" || pid == "thread-self" || pid.bytes().all(|b| b.is_ascii_digit()) =>
        {
            format!("/{after}")
        }
        _ => path.to_owned(),
    }
}

/// Files beyond start-up files whose writing makes code run later: git's and ssh's configuration (a pager, an
/// fsmonitor, a `LocalCommand`), Python's start-up hooks (`.pth` files, `sitecustomize`), a command shadowed in the
/// user's own `bin` folder.
fn runs_later(path: &str) -> bool {
    // git writes its configuration through a lock file it renames.
    let path = path.strip_suffix(".lock").unwrap_or(path);
    let name = path.rsplit('/').next().unwrap_or(path);
    name == ".gitconfig"
        || path.ends_with("/.config/git/config")
        || path.ends_with("/.ssh/config")
        || path.ends_with("/.ssh/rc")
        || (path.contains("/site-packages/") || path.contains("/dist-packages/")) && name.ends_with(".pth")
        || name == "sitecustomize.py"
        || name == "usercustomize.py"
        || shadows_a_command(path, name)
}

/// Whether a file put in the user's own `bin` folders (first on `PATH` in most set-ups) takes the name of a
/// command the user runs with secrets or rights: `sudo` there asks for the password, `git` or `ssh` sees every
/// remote and key.
fn shadows_a_command(path: &str, name: &str) -> bool {
    const COMMANDS: &[&str] = &[
        "sudo",
        "su",
        "doas",
        "pkexec",
        "git",
        "ssh",
        "scp",
        "sftp",
        "gpg",
        "python",
        "python3",
        "pip",
        "pip3",
        "node",
        "npm",
        "npx",
        "docker",
        "kubectl",
        "aws",
        "gcloud",
        "az",
        "gh",
        "curl",
        "wget",
        "make",
        "ls",
        "cd",
        "op",
        "bw",
        "vault",
        "terraform",
        "cargo",
    ];
    let home = airlock_sandbox::SANDBOX_HOME;
    ["/.local/bin/", "/bin/"].iter().any(|dir| {
        path.strip_prefix(&format!("{home}{dir}"))
            .is_some_and(|rest| !rest.contains('/'))
    }) && COMMANDS.contains(&name)
}

/// Whether a write there matters later: in the home folder or the project, not in scratch space, and not one of the
/// sample hooks `git init` writes.
fn lasting(path: &str) -> bool {
    (path.starts_with(&format!("{}/", airlock_sandbox::SANDBOX_HOME))
        || path.starts_with(&format!("{}/", crate::WORKSPACE)))
        && !(path.contains("/.git/hooks/") && path.ends_with(".sample"))
}

/// Hosts packages are installed from: reaching them is an install's network, a `medium`, not a skill's own.
const REGISTRIES: &[&str] = &[
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "pypi.org",
    "files.pythonhosted.org",
    "crates.io",
    "index.crates.io",
    "static.crates.io",
    "rubygems.org",
    "proxy.golang.org",
    "deb.debian.org",
    "repo.maven.apache.org",
];

/// The start of what was sent, on one line.
fn sample(text: &str) -> String {
    // An HTTP request's headers are known from its request line: what was sent is its body.
    let body = if text.split('\n').next().is_some_and(|l| l.contains(" HTTP/1.")) {
        text.split_once("\n\n").map_or(text, |(_, b)| b)
    } else {
        text
    };
    body.chars()
        .take(400)
        .collect::<String>()
        .replace('\n', " ⏎ ")
        .replace('\t', " ")
}

/// Names, the first few of them.
fn some_of(names: &[String]) -> String {
    match names.len() {
        0..=3 => names.join(", "),
        n => format!("{} and {} more", names[..3].join(", "), n - 3),
    }
}

/// Finds the file and line a process's deed comes from: the skill's script it runs in (the line that names the
/// host or path, when one does), else the plan step it belongs to.
struct Citer<'a> {
    record: &'a SkillRun,
    report: &'a ScanReport,
    store: &'a airlock_store::Store,
    execs: HashMap<i32, (i32, &'a [String])>,
    /// Skill files read from the store, each once for all the findings that cite it.
    texts: std::cell::RefCell<HashMap<String, Option<std::rc::Rc<str>>>>,
}

impl<'a> Citer<'a> {
    fn new(record: &'a SkillRun, report: &'a ScanReport, store: &'a airlock_store::Store) -> Self {
        let mut execs = HashMap::new();
        for e in &record.timeline {
            execs.insert(e.pid, (e.ppid, e.argv.as_slice()));
        }
        Self {
            record,
            report,
            store,
            execs,
            texts: std::cell::RefCell::default(),
        }
    }

    /// Whether the process is one of the skill's (a step's descendant), not airlock's own.
    fn is_skill(&self, pid: i32) -> bool {
        self.execs.contains_key(&pid)
    }

    fn program(&self, pid: i32) -> String {
        self.execs
            .get(&pid)
            .map(|(_, argv)| {
                let text = argv.iter().take(3).cloned().collect::<Vec<_>>().join(" ");
                let first = text.lines().next().unwrap_or_default();
                let mut shown: String = first.chars().take(120).collect();
                if shown.len() < text.len() {
                    shown.push_str(" …");
                }
                shown
            })
            .unwrap_or_else(|| format!("process {pid}"))
    }

    /// The skill files a process and its parents run, nearest first, and the step it belongs to.
    fn origin(&self, pid: i32) -> (Vec<String>, Option<(String, u32)>) {
        let prefix = if self.report.source.subpath.is_empty() {
            String::new()
        } else {
            format!("{}/", self.report.source.subpath)
        };
        let mut files = Vec::new();
        let mut step = None;
        let mut at = pid;
        for _ in 0..64 {
            let Some((ppid, argv)) = self.execs.get(&at) else {
                break;
            };
            for a in argv.iter() {
                if let Some(rel) = a.strip_prefix(&format!("{SKILL_DIR}/")) {
                    let f = format!("{prefix}{rel}");
                    if !files.contains(&f) {
                        files.push(f);
                    }
                }
            }
            if step.is_none() && argv.len() == 3 && argv[1] == "-c" {
                step = self
                    .record
                    .steps
                    .iter()
                    .find(|s| s.command == argv[2])
                    .map(|s| (s.file.clone(), s.line));
            }
            at = *ppid;
        }
        (files, step)
    }

    /// The file and line to cite for what process `pid` did: the first line naming one of `specific` (a host, a
    /// path) in the scripts it runs or its step's file, else the first line of a `generic` word (a network call) in
    /// the script nearest it, else its step, else any file of the skill naming one of `specific`.
    fn at(&self, pid: i32, specific: &[&str], generic: &[&str]) -> (String, u32) {
        let (files, step) = self.origin(pid);
        let texts = |f: &str| self.text_of(f);
        for f in files.iter().chain(step.iter().map(|(f, _)| f)) {
            if let Some(line) = texts(f).and_then(|t| line_naming(&t, specific)) {
                return (f.clone(), line);
            }
        }
        if let Some(f) = files.first() {
            if let Some(line) = texts(f).and_then(|t| line_naming(&t, generic)) {
                return (f.clone(), line);
            }
        }
        if let Some((f, line)) = step {
            return (f, line);
        }
        if let Some(f) = files.first() {
            return (f.clone(), 0);
        }
        // Not tied to a process (a name looked up): the first file of the skill that names it.
        for f in &self.report.inventory.files {
            if let Some(line) = texts(&f.path).and_then(|t| line_naming(&t, specific)) {
                return (f.path.clone(), line);
            }
        }
        let sub = &self.report.source.subpath;
        let skill_md = if sub.is_empty() {
            "SKILL.md".to_owned()
        } else {
            format!("{sub}/SKILL.md")
        };
        (skill_md, 0)
    }

    /// A skill file's text (path from the repository root), from the copy the run stored.
    fn text_of(&self, path: &str) -> Option<std::rc::Rc<str>> {
        if let Some(known) = self.texts.borrow().get(path) {
            return known.clone();
        }
        let text = self.read_text(path);
        self.texts.borrow_mut().insert(path.to_owned(), text.clone());
        text
    }

    fn read_text(&self, path: &str) -> Option<std::rc::Rc<str>> {
        let sub = &self.report.source.subpath;
        let rel = if sub.is_empty() {
            path
        } else {
            path.strip_prefix(&format!("{sub}/"))?
        };
        let artifact = self
            .record
            .artifacts
            .iter()
            .find(|a| a.kind == "skill-file" && a.path == rel)?;
        let bytes = self.store.read_object(&artifact.sha256).ok()?;
        String::from_utf8(bytes).ok().map(std::rc::Rc::from)
    }
}

/// The 1-based line of the first line naming one of the hints.
fn line_naming(text: &str, hints: &[&str]) -> Option<u32> {
    let hints: Vec<&str> = hints.iter().copied().filter(|h| h.len() >= 3).collect();
    text.lines()
        .position(|l| hints.iter().any(|h| l.contains(h)))
        .and_then(|i| u32::try_from(i + 1).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_shadowed_in_the_users_bin_runs_later() {
        let home = airlock_sandbox::SANDBOX_HOME;
        assert!(runs_later(&format!("{home}/.local/bin/sudo")));
        assert!(runs_later(&format!("{home}/bin/git")));
        // A tool of its own name, and a command's name deeper in a folder of the tool's.
        assert!(!runs_later(&format!("{home}/.local/bin/mdfmt")));
        assert!(!runs_later(&format!("{home}/.local/bin/tool/git")));
        assert!(!runs_later("/workspace/bin/sudo"));
    }
}
