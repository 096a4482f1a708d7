//! `airlock exec` and `airlock doctor`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use airlock_sandbox::{Config, Limits, Mount};

use crate::exit;
use crate::settings::escape;

/// The resource limits shared by `airlock exec` and `airlock run`.
#[derive(Debug, Clone, Default, Args)]
pub struct LimitArgs {
    /// Wall-clock limit, e.g. 30s, 2m (default: 30s for exec, 60s for run).
    #[arg(long, value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Memory limit (address space), e.g. 512M [default: 512M].
    #[arg(long, value_parser = parse_size)]
    pub memory: Option<u64>,
    /// Disk limit for everything the run writes, e.g. 256M [default: 256M].
    #[arg(long, value_parser = parse_size)]
    pub disk: Option<u64>,
    /// Most processes [default: 256].
    #[arg(long)]
    pub pids: Option<u64>,
    /// CPUs the command may use [default: 1].
    #[arg(long)]
    pub cpus: Option<u32>,
}

impl LimitArgs {
    pub fn limits(&self, default_timeout: Duration) -> Limits {
        Limits {
            timeout: self.timeout.unwrap_or(default_timeout),
            memory_bytes: self.memory.unwrap_or(512 << 20),
            disk_bytes: self.disk.unwrap_or(256 << 20),
            pids: self.pids.unwrap_or(256),
            cpus: self.cpus.unwrap_or(1),
            open_files: 1024,
        }
    }

    /// The limits the user gave (the others are defaults a skill's accepted policy may replace).
    pub fn given(&self) -> Vec<&'static str> {
        [
            self.timeout.map(|_| "timeout"),
            self.memory.map(|_| "memory"),
            self.disk.map(|_| "disk"),
            self.pids.map(|_| "pids"),
            self.cpus.map(|_| "cpus"),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Mount a host folder read-only: HOST[:SANDBOX_PATH] (same path inside by default).
    #[arg(long, value_name = "PATH")]
    pub ro: Vec<String>,
    /// Mount a host folder copy-on-write: HOST[:SANDBOX_PATH]. The host folder is never written.
    #[arg(long, value_name = "PATH")]
    pub rw: Vec<String>,
    /// Working directory inside the sandbox.
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    #[command(flatten)]
    pub net: super::net::NetArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Set an environment variable inside (nothing from the host is passed).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Append one JSON line describing the run to this file.
    #[arg(long, value_name = "FILE.jsonl")]
    pub audit: Option<PathBuf>,
    /// Print the run record as JSON on stdout (the command's output is inside it).
    #[arg(long)]
    pub json: bool,
    /// Do not record file opens (execs, connects and exits are still recorded).
    #[arg(long)]
    pub no_record_files: bool,
    /// Make the host's /opt visible read-only (software installed there); hidden by default.
    #[arg(long)]
    pub host_opt: bool,
    /// Read the request as one JSON object on stdin and print the result and the record as one JSON object on
    /// stdout (see docs/json-io.md); no other flag or command is taken.
    #[arg(long, conflicts_with_all = ["ro", "rw", "workdir", "env", "json", "audit", "no_record_files", "host_opt", "command"])]
    pub json_io: bool,
    /// With --json-io: keep answering, one JSON request per line on stdin and one answer per line on stdout, until
    /// stdin closes (each request still gets a sandbox of its own).
    #[arg(long, requires = "json_io")]
    pub serve: bool,
    /// The command and its arguments.
    #[arg(last = true, required_unless_present = "json_io")]
    pub command: Vec<String>,
}

/// A request of `airlock exec --json-io`. Unknown keys are an error, so a typo never silently loosens a limit.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct IoRequest {
    /// The program and its arguments; or `call`.
    #[serde(default)]
    command: Vec<String>,
    /// A function of a Python skill module to call instead of a command.
    #[serde(default)]
    call: Option<IoCall>,
    /// A skill folder on the host, mounted read-only at `/skill`.
    #[serde(default)]
    skill: Option<PathBuf>,
    /// The policy the caller grants the call (docs/policy.md), within the operator's (`AIRLOCK_POLICY`).
    #[serde(default)]
    policy: Option<serde_json::Value>,
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    ro: Vec<String>,
    #[serde(default)]
    rw: Vec<String>,
    #[serde(default)]
    workdir: Option<PathBuf>,
    /// `30s`, `500ms`, `2m`.
    #[serde(default)]
    timeout: Option<String>,
    /// `512M`, `2G`.
    #[serde(default)]
    memory: Option<String>,
    #[serde(default)]
    disk: Option<String>,
    #[serde(default)]
    pids: Option<u64>,
    #[serde(default)]
    cpus: Option<u32>,
    #[serde(default)]
    allow_net: Vec<String>,
    #[serde(default)]
    deny_net: Vec<String>,
    #[serde(default)]
    net_preset: Vec<String>,
    #[serde(default)]
    connect_to: Vec<String>,
    #[serde(default = "yes")]
    record_files: bool,
}

fn yes() -> bool {
    true
}

/// `{"module": "skill.py", "function": "name", "kwargs": {...}}`: a function of a Python module in the skill.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct IoCall {
    #[serde(default = "skill_py")]
    module: String,
    function: String,
    #[serde(default)]
    kwargs: serde_json::Map<String, serde_json::Value>,
}

fn skill_py() -> String {
    "skill.py".into()
}

/// Calls one function of a skill module inside the sandbox. What the skill prints goes to stderr; stdout carries
/// one JSON line, the function's result or its error.
const CALL_DRIVER: &str = r#"
import importlib.util, json, sys
with open("/airlock-call/request.json") as f:
    req = json.load(f)
out = sys.stdout
sys.stdout = sys.stderr
sys.path.insert(0, "/skill")
try:
    spec = importlib.util.spec_from_file_location("airlock_skill", "/skill/" + req["module"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = getattr(module, req["function"])(**req["kwargs"])
    line = json.dumps({"result": result}, default=str)
    code = 0
except BaseException as e:
    import traceback
    traceback.print_exc()
    line = json.dumps({"error": {"type": type(e).__name__, "message": str(e)}})
    code = 1
sys.stderr.flush()
out.write("\n" + line + "\n")
out.flush()
sys.exit(code)
"#;

/// Most bytes of a `--json-io` request.
const IO_REQUEST_LIMIT: u64 = 1 << 20;

/// `airlock exec --json-io`: the request from stdin, one JSON object with the result and the record on stdout. A
/// request airlock cannot take is answered with `{"error": …}` and exit code 125.
fn json_io(serve: bool) -> anyhow::Result<u8> {
    use std::io::{BufRead as _, Read as _};
    if serve {
        // One request per line, one answer per line, until the caller closes stdin.
        let mut stdin = std::io::stdin().lock();
        let mut out = std::io::stdout().lock();
        loop {
            let mut line = Vec::new();
            let n = (&mut stdin)
                .take(IO_REQUEST_LIMIT + 1)
                .read_until(b'\n', &mut line)?;
            if n == 0 {
                return Ok(exit::OK);
            }
            let (value, _) = if line.len() as u64 > IO_REQUEST_LIMIT {
                // Skip the rest of the oversized line (without holding it) before answering.
                if line.last() != Some(&b'\n') {
                    loop {
                        let buf = stdin.fill_buf()?;
                        if buf.is_empty() {
                            break;
                        }
                        match buf.iter().position(|b| *b == b'\n') {
                            Some(i) => {
                                stdin.consume(i + 1);
                                break;
                            }
                            None => {
                                let n = buf.len();
                                stdin.consume(n);
                            }
                        }
                    }
                }
                io_error(format!("the request is larger than {IO_REQUEST_LIMIT} bytes"))
            } else if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            } else {
                answer(&String::from_utf8_lossy(&line))
            };
            writeln!(out, "{value}")?;
            out.flush()?;
        }
    }
    let mut text = String::new();
    let (value, code) = if let Err(e) = std::io::stdin()
        .take(IO_REQUEST_LIMIT + 1)
        .read_to_string(&mut text)
    {
        io_error(format!("reading the request on stdin: {e}"))
    } else if text.len() as u64 > IO_REQUEST_LIMIT {
        io_error(format!("the request is larger than {IO_REQUEST_LIMIT} bytes"))
    } else {
        answer(&text)
    };
    println!("{value}");
    Ok(code)
}

/// An error answer: nothing ran.
fn io_error(message: String) -> (serde_json::Value, u8) {
    (
        json!({"schema_version": 1, "error": {"message": message}}),
        exit::AIRLOCK,
    )
}

/// The answer to one request, and the exit code it stands for.
fn answer(text: &str) -> (serde_json::Value, u8) {
    match try_answer(text) {
        Ok(a) => a,
        Err(e) => io_error(format!("{e:#}")),
    }
}

fn try_answer(text: &str) -> anyhow::Result<(serde_json::Value, u8)> {
    let answer_error = |message: String| -> anyhow::Result<(serde_json::Value, u8)> { Ok(io_error(message)) };
    let request: IoRequest = match serde_json::from_str(text) {
        Ok(r) => r,
        Err(e) => return answer_error(format!("the request is not valid: {e}")),
    };
    let mut request = request;
    // A call: the driver and the request in a read-only folder of their own.
    let call_dir = match &request.call {
        Some(call) => {
            if !request.command.is_empty() {
                return answer_error("give `command` or `call`, not both".into());
            }
            let Some(skill) = &request.skill else {
                return answer_error("`call` needs `skill`, the folder that holds the module".into());
            };
            let module = std::path::Path::new(&call.module);
            if module.is_absolute()
                || module
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
                || !skill.join(module).is_file()
            {
                return answer_error(format!(
                    "`call.module` must be a file inside the skill: {}",
                    escape(&call.module)
                ));
            }
            let dir = tempfile::Builder::new().prefix("airlock-call-").tempdir()?;
            fs_err::write(
                dir.path().join("request.json"),
                serde_json::to_vec(
                    &json!({"module": call.module, "function": call.function, "kwargs": call.kwargs}),
                )?,
            )?;
            fs_err::write(dir.path().join("driver.py"), CALL_DRIVER)?;
            for (path, mode) in [
                (dir.path().to_path_buf(), 0o755),
                (dir.path().join("request.json"), 0o644),
                (dir.path().join("driver.py"), 0o644),
            ] {
                fs_err::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode))?;
            }
            request.ro.push(format!("{}:/airlock-call", dir.path().display()));
            request.command = vec!["python3".into(), "/airlock-call/driver.py".into()];
            Some(dir)
        }
        None => None,
    };
    // As root the sandbox's user is a mapped uid that may not reach the caller's folder: it gets a copy it can read.
    let mut skill_copy = None;
    if let Some(skill) = &request.skill {
        if !skill.is_dir() {
            return answer_error(format!(
                "`skill` is not a folder: {}",
                escape(&skill.display().to_string())
            ));
        }
        if nix::unistd::geteuid().is_root() {
            let dir = tempfile::Builder::new().prefix("airlock-skill-").tempdir()?;
            airlock_run::target::copy_tree(skill, &dir.path().join("skill"), None)?;
            fs_err::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
            request
                .ro
                .push(format!("{}:/skill", dir.path().join("skill").display()));
            skill_copy = Some(dir);
        } else {
            request.ro.push(format!("{}:/skill", skill.display()));
        }
    }
    if request.command.is_empty() || request.command[0].is_empty() {
        return answer_error("`command` must name a program (or give `call`)".into());
    }
    let size = |v: &Option<String>| v.as_deref().map(parse_size).transpose();
    let limits = (|| -> Result<LimitArgs, String> {
        Ok(LimitArgs {
            timeout: request.timeout.as_deref().map(parse_duration).transpose()?,
            memory: size(&request.memory)?,
            disk: size(&request.disk)?,
            pids: request.pids,
            cpus: request.cpus,
        })
    })();
    let limits = match limits {
        Ok(l) => l,
        Err(e) => return answer_error(e),
    };
    // The caller's policy, accepted, within the operator's.
    let policy = match request
        .policy
        .as_ref()
        .map(airlock_scan::policy::parse_json)
        .transpose()
    {
        Ok(p) => p,
        Err(e) => return answer_error(format!("`policy` is not valid: {e}")),
    };
    let operator = match std::env::var_os("AIRLOCK_POLICY") {
        Some(f) => match super::net::operator_policy(std::path::Path::new(&f)) {
            Ok(p) => Some(p),
            Err(e) => return answer_error(e.0),
        },
        None => None,
    };
    let args = ExecArgs {
        ro: request.ro,
        rw: request.rw,
        workdir: request.workdir,
        net: super::net::NetArgs {
            allow_net: request.allow_net,
            deny_net: request.deny_net,
            net_preset: request.net_preset,
            connect_to: request.connect_to,
            ..Default::default()
        },
        limits,
        env: request.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        audit: None,
        json: true,
        no_record_files: !request.record_files,
        host_opt: false,
        json_io: false,
        serve: false,
        command: request.command,
    };
    let declared = policy.map(|policy| airlock_types::policy::SourcedPolicy {
        source: airlock_types::policy::PolicySource {
            role: "caller".into(),
            origin: "request".into(),
            file: "request".into(),
            line: 1,
        },
        policy,
    });
    let (record, effective) = match policed_record(&args, declared.as_ref(), operator) {
        Ok(r) => r,
        Err(e) => return answer_error(format!("{e:#}")),
    };
    drop(call_dir);
    drop(skill_copy);
    // A call's answer is the last line the driver wrote on stdout.
    let result = request.call.as_ref().map(|_| {
        record
            .stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .unwrap_or_else(
                || json!({"error": {"type": "NoResult", "message": "the call ended without a result"}}),
            )
    });
    let code = exit::of_command(record.status, record.exit_code, record.signal);
    Ok((
        json!({
            "schema_version": 1,
            "result": result.as_ref().and_then(|r| r.get("result")),
            "call_error": result.as_ref().and_then(|r| r.get("error")),
            "policy": effective,
            "request_id": request.request_id.unwrap_or_else(|| record.request_id.clone()),
            "status": record.status,
            "exit_code": record.exit_code,
            "signal": record.signal,
            "timed_out": record.timed_out,
            "duration_ms": record.duration_ms,
            "stdout": record.stdout,
            "stderr": record.stderr,
            "record": record,
        }),
        code,
    ))
}

pub use airlock_types::policy::{parse_duration, parse_size};

fn mount_arg(text: &str) -> (PathBuf, PathBuf) {
    match text.split_once(':') {
        Some((host, sandbox)) => (PathBuf::from(host), PathBuf::from(sandbox)),
        None => {
            let abs = std::path::absolute(text).unwrap_or_else(|_| PathBuf::from(text));
            (PathBuf::from(text), abs)
        }
    }
}

pub fn exec(args: &ExecArgs) -> anyhow::Result<u8> {
    if args.json_io {
        return json_io(args.serve);
    }
    let record = sandbox_record(args)?;
    report(args, &record)
}

/// [`sandbox_record`] under a policy the caller accepted and the operator's cap: the effective policy is returned
/// with what the run did beyond it.
fn policed_record(
    args: &ExecArgs,
    declared: Option<&airlock_types::policy::SourcedPolicy>,
    operator: Option<airlock_types::policy::SourcedPolicy>,
) -> anyhow::Result<(
    airlock_types::RunRecord,
    Option<airlock_types::policy::EffectivePolicy>,
)> {
    if declared.is_none() && operator.is_none() {
        return Ok((sandbox_record(args)?, None));
    }
    let options = airlock_run::policy::PolicyOptions {
        operator,
        accept: true,
        given: args.limits.given(),
    };
    let mut limits = args.limits.limits(Duration::from_secs(30));
    let mut egress = args.net.egress()?;
    let mut env = airlock_run::environment::EnvOptions::default();
    let mut effective = airlock_run::policy::apply(declared, &options, &mut limits, &mut egress, &mut env)?;
    let record = sandbox_record_with(args, limits, egress)?;
    effective.beyond = airlock_run::policy::beyond_record(declared, &record);
    Ok((record, Some(effective)))
}

/// Runs the command as the arguments say and returns its record.
fn sandbox_record(args: &ExecArgs) -> anyhow::Result<airlock_types::RunRecord> {
    sandbox_record_with(
        args,
        args.limits.limits(Duration::from_secs(30)),
        args.net.egress()?,
    )
}

fn sandbox_record_with(
    args: &ExecArgs,
    limits: Limits,
    egress: Option<airlock_egress::EgressConfig>,
) -> anyhow::Result<airlock_types::RunRecord> {
    let mut config = Config::new(args.command.clone());
    config.egress = egress;
    for ro in &args.ro {
        let (host, sandbox) = mount_arg(ro);
        config.mounts.push(Mount::Ro { host, sandbox });
    }
    for rw in &args.rw {
        let (host, sandbox) = mount_arg(rw);
        config.mounts.push(Mount::Rw { host, sandbox });
    }
    config.workdir = args.workdir.clone();
    for kv in &args.env {
        let (k, v) = kv
            .split_once('=')
            .with_context(|| format!("--env {kv}: use K=V"))?;
        config.env.push((k.to_owned(), v.to_owned()));
    }
    config.limits = limits;
    config.record_files = !args.no_record_files;
    config.host_opt = args.host_opt;
    Ok(airlock_sandbox::run(&config, None)?)
}

/// Writes the audit line and prints the record or the output and a summary.
fn report(args: &ExecArgs, record: &airlock_types::RunRecord) -> anyhow::Result<u8> {
    if let Some(path) = &args.audit {
        let line = json!({
            "ts": record.started_at,
            "command": record.command,
            "exit_code": record.exit_code,
            "duration_ms": record.duration_ms,
            "request_id": record.request_id,
            "network_allowed": record.network_allowed,
            "memory_limit_mb": record.limits.memory_bytes >> 20,
            "timed_out": record.timed_out,
            "status": record.status,
            "limit_hit": record.limit_hit,
            "limits": record.limits,
            "execs": record.timeline.len(),
            "files_read": record.files_read.len(),
            "files_written": record.files_written.len(),
            "network_attempts": record.network.len(),
        });
        let mut file = fs_err::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(file, "{line}")?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(record)?);
    } else {
        print!("{}", escape(&record.stdout));
        eprint!("{}", escape(&record.stderr));
        eprintln!(
            "airlock: {} ({}) in {} ms; {} exec(s), {} file(s) read, {} written, {} network attempt(s){}",
            airlock_types::wire_name(&record.status),
            match (record.exit_code, record.signal) {
                (Some(c), _) => format!("exit {c}"),
                (None, Some(s)) => format!("killed by signal {s}"),
                (None, None) if record.status == airlock_types::RunStatus::TimedOut =>
                    "stopped at the time limit".to_owned(),
                (None, None) => "no exit code".to_owned(),
            },
            record.duration_ms,
            record.timeline.len(),
            record.files_read.len(),
            record.files_written.len(),
            record.network.len(),
            record
                .limit_hit
                .map_or(String::new(), |l| format!("; limit hit: {l:?}")),
        );
    }
    Ok(exit::of_command(record.status, record.exit_code, record.signal))
}

pub fn doctor(json: bool) -> anyhow::Result<u8> {
    let report = airlock_sandbox::doctor(None);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for c in &report.checks {
            println!(
                "{} {}: {}",
                if c.ok { "ok  " } else { "MISSING" },
                c.layer,
                escape(&c.detail)
            );
            if !c.ok {
                if let Some(fix) = &c.fix {
                    println!("       fix: {fix}");
                }
            }
        }
        // Where allowed traffic would leave: direct, or through the proxy in airlock's environment.
        match airlock_egress::Upstream::from_env() {
            Ok(None) => {
                println!("ok   egress: direct (no HTTPS_PROXY or HTTP_PROXY in airlock's environment)")
            }
            Ok(Some(up)) => {
                let show = |p: &Option<airlock_egress::ProxyAddr>| {
                    p.as_ref().map_or("direct".to_owned(), |p| escape(&p.to_string()))
                };
                println!(
                    "ok   egress: through the upstream proxy (HTTPS and other TCP: {}; plain HTTP: {}), NO_PROXY honoured",
                    show(&up.https),
                    show(&up.http)
                );
            }
            Err(e) => println!("MISSING egress: {}", escape(&e)),
        }
        println!(
            "{}",
            if report.ready {
                "ready: airlock exec can run here"
            } else {
                "not ready: see the fixes above"
            }
        );
    }
    Ok(if report.ready { exit::OK } else { exit::POLICY })
}
