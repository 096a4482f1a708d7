//! `airlock exec --json-io`: one JSON request, one JSON answer (docs/json-io.md); with `--serve`, one per line, and
//! for calls of a skill's function a warm sandbox: the next call's sandbox is started, its interpreter up and
//! waiting for its request, while the caller reads the answer.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::json;

use airlock_types::policy::{EffectivePolicy, SourcedPolicy};
use airlock_types::RunRecord;

use super::exec::{build_config, parse_duration, parse_size, Sealed};
use crate::exit;
use crate::settings::escape;

use airlock_protocol::IoRequest;

/// Calls one function of a skill module inside the sandbox: the call comes on stdin (so a sandbox can be started
/// before it is known), what the skill prints goes to stderr, and stdout carries one JSON line, the function's result
/// or its error. The skill's code runs only once the call has arrived.
const CALL_DRIVER: &str = r#"
import importlib.util, json, sys
req = json.load(sys.stdin)
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

/// How long a warm sandbox waits for its call before it gives up (and the next call starts cold).
const WARM_HOLD: Duration = Duration::from_secs(60);

/// `airlock exec --json-io [--serve]`. A request airlock cannot take is answered with `{"error": …}` (exit code 125
/// for a single request).
pub fn json_io(serve: bool) -> anyhow::Result<u8> {
    use std::io::{BufRead as _, Read as _};
    if serve {
        // One request per line, one answer per line, until the caller closes stdin.
        let mut stdin = std::io::stdin().lock();
        let mut out = std::io::stdout().lock();
        let mut warm: Option<Warm> = None;
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
                        if let Some(i) = buf.iter().position(|b| *b == b'\n') {
                            stdin.consume(i + 1);
                            break;
                        }
                        let n = buf.len();
                        stdin.consume(n);
                    }
                }
                io_error(format!("the request is larger than {IO_REQUEST_LIMIT} bytes"))
            } else if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            } else {
                answer(&String::from_utf8_lossy(&line), Some(&mut warm))
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
        answer(&text, None)
    };
    outln!("{value}");
    Ok(code)
}

/// An error answer: nothing ran.
fn io_error(message: String) -> (serde_json::Value, u8) {
    let failure = airlock_protocol::IoFailure {
        schema_version: 1,
        error: airlock_protocol::IoFailureReason { message },
    };
    (serde_json::to_value(failure).unwrap_or_default(), exit::AIRLOCK)
}

/// The answer to one request, and the exit code it stands for.
fn answer(text: &str, warm: Option<&mut Option<Warm>>) -> (serde_json::Value, u8) {
    match try_answer(text, warm) {
        Ok(a) => a,
        Err(e) => io_error(format!("{e:#}")),
    }
}

/// A request made ready to run: the sandbox's configuration, the call to send on stdin, the policy, and the folders
/// the configuration mounts (kept while a sandbox may use them).
struct Prepared {
    config: airlock_sandbox::Config,
    call: Option<serde_json::Value>,
    declared: Option<SourcedPolicy>,
    effective: Option<EffectivePolicy>,
    folders: Arc<Vec<tempfile::TempDir>>,
    /// Everything that decides the sandbox, not the call itself: a warm sandbox serves a call with the same shape.
    shape: String,
}

/// A sandbox started ahead of its call (or for it), its command waiting on stdin.
struct Launched {
    handle: std::thread::JoinHandle<Result<RunRecord, airlock_sandbox::SandboxError>>,
    stdin: std::fs::File,
    go: Arc<OnceLock<Instant>>,
    /// Keeps the mounted folders alive while the sandbox runs.
    _folders: Arc<Vec<tempfile::TempDir>>,
}

/// The next call's sandbox, and the shape of calls it can serve.
struct Warm {
    shape: String,
    launched: Launched,
}

fn launch(
    config: &airlock_sandbox::Config,
    folders: &Arc<Vec<tempfile::TempDir>>,
) -> anyhow::Result<Launched> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let go = Arc::new(OnceLock::new());
    let held = airlock_sandbox::Held {
        stdin: read,
        go: go.clone(),
        hold: WARM_HOLD,
    };
    let config = config.clone();
    let handle = std::thread::spawn(move || airlock_sandbox::run_held(&config, None, held));
    Ok(Launched {
        handle,
        stdin: std::fs::File::from(write),
        go,
        _folders: folders.clone(),
    })
}

/// Starts the launched sandbox's clock and sends it its call; its record.
fn fire(launched: Launched, call: &serde_json::Value) -> anyhow::Result<RunRecord> {
    let Launched {
        handle,
        mut stdin,
        go,
        _folders,
    } = launched;
    let _ = go.set(Instant::now());
    // A sandbox that already ended (it gave up waiting) has closed its end: its record says what happened.
    let _ = stdin.write_all(&serde_json::to_vec(call)?);
    drop(stdin);
    handle
        .join()
        .map_err(|_| anyhow::anyhow!("the sandbox's thread panicked"))?
        .map_err(Into::into)
}

fn try_answer(text: &str, warm: Option<&mut Option<Warm>>) -> anyhow::Result<(serde_json::Value, u8)> {
    let request: IoRequest = match serde_json::from_str(text) {
        Ok(r) => r,
        Err(e) => return Ok(io_error(format!("the request is not valid: {e}"))),
    };
    let request_id = request.request_id.clone();
    let prepared = match prepare(request)? {
        Ok(p) => p,
        Err(message) => return Ok(io_error(message)),
    };
    let record = match &prepared.call {
        None => airlock_sandbox::run(&prepared.config, None)?,
        Some(call) => match warm {
            // Served by the sandbox started after the last call when it has this call's shape and is still waiting.
            Some(slot) => {
                let launched = match slot.take() {
                    Some(w) if w.shape == prepared.shape && !w.launched.handle.is_finished() => w.launched,
                    _ => launch(&prepared.config, &prepared.folders)?,
                };
                let record = fire(launched, call)?;
                *slot = Some(Warm {
                    shape: prepared.shape.clone(),
                    launched: launch(&prepared.config, &prepared.folders)?,
                });
                record
            }
            None => fire(launch(&prepared.config, &prepared.folders)?, call)?,
        },
    };
    let effective = prepared.effective.map(|mut e| {
        e.beyond = airlock_run::policy::beyond_record(prepared.declared.as_ref(), &record);
        e
    });
    // A call's answer is the last line the driver wrote on stdout.
    let result = prepared.call.as_ref().map(|_| {
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
    let answer = airlock_protocol::IoAnswer {
        schema_version: 1,
        result: result.as_ref().and_then(|r| r.get("result")).cloned(),
        call_error: result.as_ref().and_then(|r| r.get("error")).cloned(),
        policy: effective,
        request_id: request_id.unwrap_or_else(|| record.request_id.clone()),
        status: record.status,
        exit_code: record.exit_code,
        signal: record.signal,
        timed_out: record.timed_out,
        duration_ms: record.duration_ms,
        stdout: record.stdout.clone(),
        stderr: record.stderr.clone(),
        record,
    };
    Ok((serde_json::to_value(answer)?, code))
}

fn chmod(path: &Path, mode: u32) -> std::io::Result<()> {
    fs_err::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))
}

/// The operator's policy (`AIRLOCK_POLICY`), read once per process: `--serve` answers many requests under it.
fn operator_policy() -> &'static Result<Option<SourcedPolicy>, String> {
    static POLICY: OnceLock<Result<Option<SourcedPolicy>, String>> = OnceLock::new();
    POLICY.get_or_init(|| match std::env::var_os("AIRLOCK_POLICY") {
        Some(f) => super::net::operator_policy(Path::new(&f))
            .map(Some)
            .map_err(|e| e.0),
        None => Ok(None),
    })
}

/// Checks a request and builds its sandbox: `Ok(Err(message))` for a request airlock cannot take.
fn prepare(mut request: IoRequest) -> anyhow::Result<Result<Prepared, String>> {
    let mut shape_of = request.clone();
    shape_of.request_id = None;
    shape_of.call = None;
    let shape = serde_json::to_string(&shape_of)?;
    let mut folders = Vec::new();
    // A call: the driver in a read-only folder of its own; the call itself goes on stdin.
    let call = match request.call.take() {
        Some(call) => {
            if !request.command.is_empty() {
                return Ok(Err("give `command` or `call`, not both".into()));
            }
            let Some(skill) = &request.skill else {
                return Ok(Err(
                    "`call` needs `skill`, the folder that holds the module".into()
                ));
            };
            let module = Path::new(&call.module);
            if module.is_absolute()
                || module
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
                || !skill.join(module).is_file()
            {
                return Ok(Err(format!(
                    "`call.module` must be a file inside the skill: {}",
                    escape(&call.module)
                )));
            }
            let dir = tempfile::Builder::new().prefix("airlock-call-").tempdir()?;
            fs_err::write(dir.path().join("driver.py"), CALL_DRIVER)?;
            chmod(dir.path(), 0o755)?;
            chmod(&dir.path().join("driver.py"), 0o644)?;
            request.ro.push(format!("{}:/airlock-call", dir.path().display()));
            request.command = vec!["python3".into(), "/airlock-call/driver.py".into()];
            folders.push(dir);
            Some(json!({"module": call.module, "function": call.function, "kwargs": call.kwargs}))
        }
        None => None,
    };
    // As root the sandbox's user is a mapped uid that may not reach the caller's folder: it gets a copy it can read.
    if let Some(skill) = &request.skill {
        if !skill.is_dir() {
            return Ok(Err(format!(
                "`skill` is not a folder: {}",
                escape(&skill.display().to_string())
            )));
        }
        if nix::unistd::geteuid().is_root() {
            let dir = tempfile::Builder::new().prefix("airlock-skill-").tempdir()?;
            airlock_run::target::copy_tree(skill, &dir.path().join("skill"), None)?;
            chmod(dir.path(), 0o755)?;
            request
                .ro
                .push(format!("{}:/skill", dir.path().join("skill").display()));
            folders.push(dir);
        } else {
            request.ro.push(format!("{}:/skill", skill.display()));
        }
    }
    if request.command.is_empty() || request.command[0].is_empty() {
        return Ok(Err("`command` must name a program (or give `call`)".into()));
    }
    let size = |v: &Option<String>| v.as_deref().map(parse_size).transpose();
    let given = [
        request.timeout.as_ref().map(|_| "timeout"),
        request.memory.as_ref().map(|_| "memory"),
        request.disk.as_ref().map(|_| "disk"),
        request.pids.map(|_| "pids"),
        request.cpus.map(|_| "cpus"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let limits = (|| -> Result<airlock_sandbox::Limits, String> {
        let defaults = airlock_sandbox::Limits::default();
        Ok(airlock_sandbox::Limits {
            timeout: request
                .timeout
                .as_deref()
                .map(parse_duration)
                .transpose()?
                .unwrap_or(Duration::from_secs(30)),
            memory_bytes: size(&request.memory)?.unwrap_or(defaults.memory_bytes),
            disk_bytes: size(&request.disk)?.unwrap_or(defaults.disk_bytes),
            pids: request.pids.unwrap_or(defaults.pids),
            cpus: request.cpus.unwrap_or(defaults.cpus),
            open_files: defaults.open_files,
        })
    })();
    let mut limits = match limits {
        Ok(l) => l,
        Err(e) => return Ok(Err(e)),
    };
    // The caller's policy, accepted, within the operator's.
    let policy = match request
        .policy
        .as_ref()
        .map(airlock_scan::policy::parse_json)
        .transpose()
    {
        Ok(p) => p,
        Err(e) => return Ok(Err(format!("`policy` is not valid: {e}"))),
    };
    let operator = match operator_policy() {
        Ok(p) => p.clone(),
        Err(e) => return Ok(Err(e.clone())),
    };
    let declared = policy.map(|policy| SourcedPolicy {
        source: airlock_types::policy::PolicySource {
            role: "caller".into(),
            origin: "request".into(),
            file: "request".into(),
            line: 1,
        },
        policy,
    });
    let rules = super::net::NetRules {
        allow: &request.allow_net,
        deny: &request.deny_net,
        presets: &request.net_preset,
        connect_to: &request.connect_to,
        ..Default::default()
    };
    let mut egress = match rules.egress() {
        Ok(e) => e,
        Err(e) => return Ok(Err(format!("{e:#}"))),
    };
    let effective = if declared.is_some() || operator.is_some() {
        let options = airlock_run::policy::PolicyOptions {
            operator,
            accept: true,
            given,
        };
        let mut env = airlock_run::environment::EnvOptions::default();
        match airlock_run::policy::apply(declared.as_ref(), &options, &mut limits, &mut egress, &mut env) {
            Ok(e) => Some(e),
            Err(e) => return Ok(Err(e.to_string())),
        }
    } else {
        None
    };
    let sealed = Sealed {
        command: request.command,
        ro: request.ro,
        rw: request.rw,
        workdir: request.workdir,
        env: request.env.into_iter().collect(),
        record_files: request.record_files,
        host_opt: false,
    };
    let config = match build_config(&sealed, limits, egress) {
        Ok(c) => c,
        Err(e) => return Ok(Err(format!("{e:#}"))),
    };
    Ok(Ok(Prepared {
        config,
        call,
        declared,
        effective,
        folders: Arc::new(folders),
        shape,
    }))
}
