//! Detonation: the skill's runnable parts (the commands its instructions run, every script it ships) run sealed
//! with planted secrets (canaries: tokens in the environment, an SSH key, cloud and git credentials, a project
//! `.env`, an agent's login) and a sinkhole network (every name resolves to a catcher on this machine, every TCP
//! connect ends there, TLS is opened with a certificate only this run trusts). What touched a canary and what would
//! have left becomes findings of the report, each citing the file and line it came from, with the bytes as
//! evidence. Nothing leaves the machine: the install phase is skipped (an environment installed before is reused).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use airlock_egress::Canary;
use airlock_types::{
    FileKind, Finding, FindingContext, NetDecision, PlanStep, RunMode, ScanReport, Severity, SkillRun,
};

use crate::{ImportSettings, Invocation, OnEvent, RunError, RunRequest, SKILL_DIR};

/// The time a detonation gets by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Most scripts a detonation adds to the plan.
const MAX_SCRIPTS: usize = 16;

/// The secrets planted in one detonation, each with a value made for it.
#[derive(Debug, Clone)]
pub struct Canaries {
    /// Environment variables the skill's processes get.
    pub env: Vec<(String, String)>,
    /// Files in the sandbox user's home: the sandbox path and the content.
    pub home: Vec<(PathBuf, String)>,
    /// The target project's `.env`.
    pub project_env: String,
    needles: Vec<Canary>,
    /// What the sinkhole's shell probe echoes and the code it serves runs.
    pub marker: String,
    /// The hosts each canary belongs to, by name: a token sent to its own service is its use, not a theft.
    homes: Vec<(String, &'static [&'static str])>,
    /// Planted files by sandbox path, and the canary each holds.
    paths: Vec<(String, String)>,
}

/// Letters and digits from the kernel's random generator.
fn alnum(n: usize) -> String {
    const SET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let hex = airlock_sandbox::random_hex(n);
    hex.as_bytes()
        .chunks(2)
        .map(|pair| {
            let b = u8::from_str_radix(std::str::from_utf8(pair).unwrap_or("00"), 16).unwrap_or(0);
            char::from(SET[usize::from(b) % SET.len()])
        })
        .collect()
}

fn upper(n: usize) -> String {
    alnum(n * 2)
        .chars()
        .filter(char::is_ascii_alphabetic)
        .map(|c| c.to_ascii_uppercase())
        .chain(std::iter::repeat('Q'))
        .take(n)
        .collect()
}

impl Canaries {
    /// New canaries, with values no one has seen.
    pub fn plant() -> Self {
        let home = airlock_sandbox::SANDBOX_HOME;
        let mut c = Self {
            env: Vec::new(),
            home: Vec::new(),
            project_env: String::new(),
            needles: Vec::new(),
            marker: format!("airlock-fetched-{}", airlock_sandbox::random_hex(8)),
            homes: Vec::new(),
            paths: Vec::new(),
        };
        for (var, value) in [
            ("AWS_ACCESS_KEY_ID", format!("AKIA{}", upper(16))),
            ("AWS_SECRET_ACCESS_KEY", alnum(40)),
            ("GITHUB_TOKEN", format!("ghp_{}", alnum(36))),
            ("OPENAI_API_KEY", format!("sk-proj-{}", alnum(48))),
            ("ANTHROPIC_API_KEY", format!("sk-ant-api03-{}", alnum(64))),
            ("NPM_TOKEN", format!("npm_{}", alnum(36))),
        ] {
            let name = format!("{var} (environment)");
            c.needle(&name, &value);
            c.homes.push((name, home_of(var)));
            c.env.push((var.to_owned(), value));
        }
        let key_body = alnum(64);
        let aws_key = format!("AKIA{}", upper(16));
        let aws_secret = alnum(40);
        let git_token = format!("ghp_{}", alnum(36));
        let gh_token = format!("gho_{}", alnum(36));
        let claude = format!("sk-ant-oat01-{}", alnum(64));
        let browser = alnum(32);
        let files = [
            (
                ".ssh/id_ed25519",
                "~/.ssh/id_ed25519",
                key_body.clone(),
                format!(
                    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{key_body}\n-----END OPENSSH PRIVATE KEY-----\n"
                ),
            ),
            (
                ".aws/credentials",
                "~/.aws/credentials",
                aws_secret.clone(),
                format!(
                    "[default]\naws_access_key_id = {aws_key}\naws_secret_access_key = {aws_secret}\n"
                ),
            ),
            (
                ".git-credentials",
                "~/.git-credentials",
                git_token.clone(),
                format!("https://dev:{git_token}@github.com\n"),
            ),
            (
                ".config/gh/hosts.yml",
                "~/.config/gh/hosts.yml",
                gh_token.clone(),
                format!("github.com:\n    oauth_token: {gh_token}\n    user: dev\n"),
            ),
            (
                ".claude/.credentials.json",
                "~/.claude/.credentials.json",
                claude.clone(),
                format!("{{\"claudeAiOauth\":{{\"accessToken\":\"{claude}\"}}}}\n"),
            ),
            (
                ".config/google-chrome/Default/Login Data",
                "the browser's saved passwords",
                browser.clone(),
                format!("https://bank.example\tdev\t{browser}\n"),
            ),
        ];
        for (rel, name, needle, content) in files {
            c.needle(name, &needle);
            c.paths.push((format!("{home}/{rel}"), name.to_owned()));
            c.home.push((PathBuf::from(format!("{home}/{rel}")), content));
        }
        c.needle(&format!("{} (AWS key id)", "~/.aws/credentials"), &aws_key);
        let project_key = format!("sk_live_{}", alnum(32));
        let db = alnum(24);
        c.needle("the project's .env", &project_key);
        c.needle("the project's .env (database password)", &db);
        c.project_env = format!(
            "STRIPE_SECRET_KEY={project_key}\nDATABASE_URL=postgres://app:{db}@db.internal:5432/app\n"
        );
        c.paths
            .push((format!("{}/.env", crate::WORKSPACE), "the project's .env".into()));
        c
    }

    fn needle(&mut self, name: &str, value: &str) {
        self.needles.push(Canary {
            name: name.to_owned(),
            value: value.to_owned(),
        });
    }

    /// Every planted value, by name.
    pub fn needles(&self) -> &[Canary] {
        &self.needles
    }

    /// The canaries of `names` that `host` is not the home of.
    fn stolen<'n>(&self, names: &'n [String], host: &str) -> Vec<&'n String> {
        names
            .iter()
            .filter(|n| {
                !self.homes.iter().any(|(name, homes)| {
                    name == *n
                        && homes
                            .iter()
                            .any(|h| host == *h || host.ends_with(&format!(".{h}")))
                })
            })
            .collect()
    }

    /// The canary planted at this sandbox path, if any.
    fn planted_at(&self, path: &str) -> Option<&str> {
        self.paths
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, n)| n.as_str())
    }
}

/// The services an environment token is made for.
fn home_of(var: &str) -> &'static [&'static str] {
    match var {
        "AWS_ACCESS_KEY_ID" | "AWS_SECRET_ACCESS_KEY" => &["amazonaws.com"],
        "GITHUB_TOKEN" => &["github.com", "githubusercontent.com"],
        "OPENAI_API_KEY" => &["openai.com"],
        "ANTHROPIC_API_KEY" => &["anthropic.com"],
        "NPM_TOKEN" => &["npmjs.org", "npmjs.com"],
        _ => &[],
    }
}

/// How a detonation runs.
#[derive(Debug, Clone)]
pub struct DetonateOptions {
    pub timeout: Duration,
    /// The executable that starts the sandbox, as for a run.
    pub helper: Option<PathBuf>,
    pub source_name: Option<String>,
    pub run_id: Option<String>,
    pub retention: Duration,
}

impl Default for DetonateOptions {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            helper: None,
            source_name: None,
            run_id: None,
            retention: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// What a detonation found.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Detonation {
    /// The stored run (see `airlock show`), when anything ran.
    pub run_id: Option<String>,
    pub status: String,
    /// Steps run, of which scripts added by the detonation.
    pub steps: usize,
    pub duration_ms: u64,
    pub findings: Vec<Finding>,
    /// One sentence for the report's headline.
    pub summary: String,
    /// The static report the run was based on (none when nothing ran).
    #[serde(skip)]
    pub report: Option<ScanReport>,
}

impl Detonation {
    /// The report with this detonation's evidence: judged again, dated now (so a store keeps it as the source's
    /// latest report).
    pub fn judged(&self, report: &ScanReport) -> ScanReport {
        let mut report = report.clone();
        airlock_scan::add_evidence(&mut report, self.findings.clone(), self.summary.clone());
        report.created_at = airlock_types::now_rfc3339();
        report
    }
}

/// Runs the skill's runnable parts sealed with canaries and a sinkhole network; the findings say what touched a
/// canary and what would have left. A skill with nothing to run gives no finding and says so.
pub fn detonate(
    source: &airlock_source::SourceSpec,
    settings: &ImportSettings,
    store: &mut airlock_store::Store,
    options: &DetonateOptions,
    on_event: &OnEvent,
) -> Result<Detonation, RunError> {
    let canaries = Canaries::plant();
    let mut limits = airlock_sandbox::Limits {
        timeout: options.timeout,
        ..airlock_sandbox::Limits::default()
    };
    limits.memory_bytes = limits.memory_bytes.max(1 << 30);
    let request = RunRequest {
        source: source.clone(),
        mode: RunMode::Sandbox,
        target: "blank".into(),
        invocation: Invocation::Plan,
        force: true,
        limits,
        egress: None,
        retention: options.retention,
        run_id: options.run_id.clone(),
        cancel: None,
        helper: options.helper.clone(),
        environment: crate::environment::EnvOptions {
            cached_only: true,
            ..Default::default()
        },
        host_opt: false,
        policy: crate::policy::PolicyOptions::default(),
        source_name: options.source_name.clone(),
        detonation: Some(canaries.clone()),
    };
    let outcome = match crate::execute(&request, settings, store, on_event) {
        Ok(o) => o,
        Err(RunError::NothingToRun { message, .. }) => {
            return Ok(Detonation {
                run_id: None,
                status: "nothing to run".into(),
                steps: 0,
                duration_ms: 0,
                findings: Vec::new(),
                summary: format!("Not detonated: nothing to run ({})", first_sentence(&message)),
                report: None,
            })
        }
        Err(e) => return Err(e),
    };
    let record = &outcome.record;
    let findings = findings(record, &canaries, &outcome.report, store);
    let steps = record.steps.len();
    let status = airlock_types::wire_name(&record.status);
    let worst = findings.iter().map(|f| f.severity).max();
    let summary = match worst {
        None => format!(
            "Detonated in the sandbox with planted secrets and a sinkhole network ({steps} step(s), {status}, run \
             {}): it touched no planted secret and sent nothing out.",
            record.run_id
        ),
        Some(_) => format!(
            "Detonated in the sandbox with planted secrets and a sinkhole network ({steps} step(s), {status}, run \
             {}): {}.",
            record.run_id,
            findings
                .iter()
                .map(|f| f.rule.trim_start_matches("detonation/").replace('-', " "))
                .fold(Vec::<String>::new(), |mut v, r| {
                    if !v.contains(&r) {
                        v.push(r);
                    }
                    v
                })
                .join(", ")
        ),
    };
    Ok(Detonation {
        run_id: Some(record.run_id.clone()),
        status,
        steps,
        duration_ms: record.duration_ms,
        findings,
        summary,
        report: Some(outcome.report.clone()),
    })
}

fn first_sentence(text: &str) -> &str {
    text.split(". ").next().unwrap_or(text).trim_end_matches('.')
}

/// Adds every script of the skill the plan does not run to the plan, and runs the scripts the plan would only
/// list (helpers, scripts that want arguments): a detonation runs whatever can run.
pub(crate) fn widen(plan: &mut airlock_types::Plan, skill_root: &Path, report: &ScanReport) {
    for step in &mut plan.steps {
        if step.kind == "script" {
            if let Some(why) = step.example.take() {
                step.note = Some(format!("run by the detonation, which runs every script ({why})"));
            }
        }
    }
    let sub = &report.source.subpath;
    let prefix = if sub.is_empty() {
        String::new()
    } else {
        format!("{sub}/")
    };
    let scripts: Vec<&str> = report
        .inventory
        .files
        .iter()
        .filter(|f| f.kind == FileKind::Script)
        .filter_map(|f| f.path.strip_prefix(&prefix))
        .collect();
    let mut added = 0;
    for rel in scripts {
        let file = format!("{prefix}{rel}");
        if added >= MAX_SCRIPTS || plan.steps.iter().any(|s| s.file == file && s.kind == "script") {
            continue;
        }
        let Ok(bytes) = fs_err::read(skill_root.join(rel)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        plan.steps.push(PlanStep {
            kind: "script".into(),
            command: rel.to_owned(),
            interpreter: airlock_scan::plan::interpreter(rel, &text),
            file,
            line: 0,
            findings: Vec::new(),
            example: None,
            note: Some("run by the detonation with no arguments".into()),
        });
        added += 1;
    }
}

/// The run's sandbox settings for a detonation: the canaries in the environment and the home folder, and the
/// sinkhole (its certificate authority written to `scratch` for the sandbox to trust).
pub(crate) fn configure(
    canaries: &Canaries,
    config: &mut airlock_sandbox::Config,
    scratch: &Path,
) -> Result<airlock_egress::EgressConfig, RunError> {
    for (k, v) in &canaries.env {
        config.env.retain(|(name, _)| name != k);
        config.env.push((k.clone(), v.clone()));
    }
    for (path, content) in &canaries.home {
        config
            .files
            .push((path.clone(), airlock_egress::FileContent::Text(content.clone())));
    }
    let sink = airlock_egress::Sinkhole::new(canaries.needles(), &canaries.marker)
        .map_err(|e| RunError::Usage(format!("cannot set up the sinkhole: {e}")))?;
    let ca = scratch.join("sinkhole-ca.pem");
    fs_err::write(&ca, sink.ca_pem())?;
    Ok(airlock_egress::EgressConfig {
        extra_ca: vec![ca],
        sinkhole: Some(std::sync::Arc::new(sink)),
        ..Default::default()
    })
}

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
            push(Finding {
                rule: "detonation/secret-sent".into(),
                severity: Severity::Critical,
                file: file.clone(),
                line,
                evidence: airlock_types::display::line(&format!(
                    "{what} to {}: {}",
                    n.destination,
                    sample(&catch.sample)
                )),
                message: format!(
                    "Run sealed with planted secrets, the skill sent {} to {host}; in a real run it would have \
                     left this machine.",
                    some_of(&stolen)
                ),
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
        push(Finding {
            rule: "detonation/network".into(),
            severity: Severity::High,
            file,
            line,
            evidence: airlock_types::display::line(&format!(
                "{what} to {} ({} bytes)",
                n.destination, n.bytes_up
            )),
            message: format!(
                "Run sealed, the skill opened a connection to {host}; the sinkhole took it, in a real run it would \
                 have reached the network."
            ),
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
        let path = f.resolved.as_deref().unwrap_or(&f.path);
        let Some(name) = canaries.planted_at(path).or_else(|| canaries.planted_at(&f.path)) else {
            continue;
        };
        if !skill_pid(f.pid) {
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
        let agent = agent_file(path);
        if !(airlock_types::observe::startup_or_hook(path) || agent) || !skill_pid(f.pid) {
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
                "Run sealed, the skill wrote a file that runs later (a start-up file, a hook, a scheduled job)."
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

/// An agent's own configuration, memory, instructions or skills.
fn agent_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    [
        "/.claude/",
        "/.codex/",
        "/.cursor/",
        "/.gemini/",
        "/.config/opencode/",
        "/.openclaw/",
        "/.continue/",
    ]
    .iter()
    .any(|p| path.contains(p) && !path.ends_with("/.credentials.json"))
        || ["CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", "MEMORY.md"].contains(&name)
}

/// The start of what was sent, on one line.
fn sample(text: &str) -> String {
    text.chars()
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
        }
    }

    /// Whether the process is one of the skill's (a step's descendant), not airlock's own.
    fn is_skill(&self, pid: i32) -> bool {
        self.execs.contains_key(&pid)
    }

    fn program(&self, pid: i32) -> String {
        self.execs
            .get(&pid)
            .map(|(_, argv)| argv.iter().take(3).cloned().collect::<Vec<_>>().join(" "))
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
    fn text_of(&self, path: &str) -> Option<String> {
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
        String::from_utf8(bytes).ok()
    }
}

/// The 1-based line of the first line naming one of the hints.
fn line_naming(text: &str, hints: &[&str]) -> Option<u32> {
    let hints: Vec<&str> = hints.iter().copied().filter(|h| h.len() >= 3).collect();
    text.lines()
        .position(|l| hints.iter().any(|h| l.contains(h)))
        .and_then(|i| u32::try_from(i + 1).ok())
}
