//! The sealed runner.
//!
//! [`run`] starts a command in a fresh set of namespaces (user, mount, pid, net, ipc, uts, cgroup) on a tmpfs root
//! with read-only system directories, copy-on-write workspaces ([`Mount::Rw`], an overlay whose upper layer lives
//! on the size-limited root tmpfs), an environment built from nothing, rlimits, `no_new_privs`, Landlock and a
//! seccomp filter, in that fixed order. A second seccomp filter sends execs, opens, connects and exits to the
//! supervisor by user notification, which builds the [`RunRecord`](airlock_types::RunRecord) while the command
//! runs. The in-sandbox half re-enters the current executable: programs that embed this crate call
//! [`maybe_run_child`] first thing in `main`.
//!
//! Process tree: supervisor → helper (unshares, gets its id maps written by the supervisor) → init, pid 1 of the
//! new pid namespace (builds the root, reaps, kills everything when the command ends) → the command.

mod cgroup;
mod changes;
mod child;
mod doctor;
mod mounts;
mod notify;
mod protocol;
pub mod scratch;
mod seccomp;
mod supervise;

use std::path::PathBuf;
use std::time::Duration;

pub use doctor::{doctor, Check, Report as DoctorReport};
pub use supervise::{run, run_held, Held};

/// Where a host folder appears in the sandbox.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Mount {
    /// Read-only bind.
    Ro { host: PathBuf, sandbox: PathBuf },
    /// Copy-on-write: reads see the host folder, writes land in the run's upper layer; the host is never written.
    Rw { host: PathBuf, sandbox: PathBuf },
}

/// Resource limits, enforced by the kernel.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub disk_bytes: u64,
    pub pids: u64,
    pub cpus: u32,
    pub open_files: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            memory_bytes: 512 << 20,
            disk_bytes: 256 << 20,
            pids: 256,
            cpus: 1,
            open_files: 1024,
        }
    }
}

impl Limits {
    /// The CPU-time limit (RLIMIT_CPU) that goes with the wall-clock one: every allowed CPU busy for the whole
    /// timeout, plus a second.
    pub fn cpu_seconds(&self) -> u64 {
        self.timeout
            .as_secs()
            .saturating_mul(u64::from(self.cpus.max(1)))
            .saturating_add(1)
    }
}

/// Hex of `n` random bytes (from the kernel's generator), for ids, tokens and session ids. Without a working
/// generator the process stops rather than hand out a predictable value.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    if getrandom::fill(&mut bytes).is_err() {
        eprintln!("airlock: the kernel's random number generator is not available");
        std::process::abort();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One sandboxed command.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Config {
    pub command: Vec<String>,
    /// Commands run one after another in the same sandbox instead of `command` (which then only names the run):
    /// airlock's own step runner starts each, waits for it and reports its exit status to the supervisor, so a
    /// step's result never depends on what the skill prints. The run's exit code is the first failing step's.
    pub steps: Vec<Vec<String>>,
    pub mounts: Vec<Mount>,
    /// Working directory inside the sandbox; defaults to the first read-write mount, else `/home/sandbox`.
    pub workdir: Option<PathBuf>,
    /// Extra environment variables (nothing from the host is inherited).
    pub env: Vec<(String, String)>,
    pub limits: Limits,
    /// Record file opens (execs, connects and exits are always recorded).
    pub record_files: bool,
    /// Most bytes of stdout and of stderr kept in the record.
    pub output_limit: usize,
    /// When set, the files a run added or modified in each read-write mount are copied to `<dir>/<n>/` (`n` counts
    /// the read-write mounts from 0) after the run; the record's `changes` lists them either way.
    pub keep_changes: Option<PathBuf>,
    /// The egress policy; `None` (or a policy that allows nothing) keeps the sandbox on loopback only. Stays on
    /// the host side: the sandbox only learns whether a proxy is there ([`Config::net_proxy`]).
    #[serde(skip)]
    pub egress: Option<airlock_egress::EgressConfig>,
    /// Set by the runner when the egress proxy serves this run.
    pub net_proxy: bool,
    /// Make the host's `/opt` visible read-only (software installed there); hidden by default.
    #[serde(default)]
    pub host_opt: bool,
    /// Files written into the sandbox before the command starts, at sandbox paths under `/etc/` or the home
    /// folder (the egress settings' package-manager configuration and CA bundle).
    pub files: Vec<(PathBuf, airlock_egress::FileContent)>,
    /// Where the recorder reports each exec, exit, file opened and network attempt as it sees it.
    #[serde(skip)]
    pub events: Option<airlock_types::EventSink>,
    /// Set from another thread to stop the run: every process is killed and the record says `killed`.
    #[serde(skip)]
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Config {
    pub fn new(command: Vec<String>) -> Self {
        Self {
            command,
            steps: Vec::new(),
            mounts: Vec::new(),
            workdir: None,
            env: Vec::new(),
            limits: Limits::default(),
            record_files: true,
            output_limit: 1 << 20,
            keep_changes: None,
            egress: None,
            net_proxy: false,
            files: Vec::new(),
            host_opt: false,
            events: None,
            cancel: None,
        }
    }
}

/// The sandbox user inside the namespace.
pub const SANDBOX_UID: u32 = 1000;
pub const SANDBOX_HOME: &str = "/home/sandbox";
/// A folder last on every sandbox's `PATH` with the names skills assume beside the system's programs: `python` for
/// `python3` when the system has only the latter (as Debian does without `python-is-python3`).
pub const ALIASES_DIR: &str = "/airlock/bin";
/// The aliases made in [`ALIASES_DIR`], as (name, the program it starts), each only when the system lacks the name
/// and has the program.
pub const ALIASES: &[(&str, &str)] = &[("python", "/usr/bin/python3")];
/// Programs airlock stands in for in [`ALIASES_DIR`], as (name, shell script), each only when the system lacks the
/// name: `uvx` (and `uv tool run`, `uv run x.py`) start what the install phase installed before the run, sealed,
/// since nothing may be fetched while a skill runs.
pub const SHIMS: &[(&str, &str)] = &[("uvx", UVX_SHIM), ("uv", UV_SHIM)];

const UVX_SHIM: &str = r#"#!/bin/sh
# airlock's uvx: starts a tool the install phase installed before the run (nothing is downloaded while a skill runs).
from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from="$2"; shift 2 ;;
    --with|--python|-p|--index-url|--index) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  echo "uvx: no tool named" >&2
  exit 2
fi
tool=$(printf '%s' "$1" | sed 's/[@[<>=!~].*//')
shift
for dir in /env/python/bin /env/node/node_modules/.bin /usr/local/bin /usr/bin /bin; do
  if [ -x "$dir/$tool" ]; then
    exec "$dir/$tool" "$@"
  fi
done
echo "uvx: \`$tool\`${from:+ (from $from)} is not installed in this sandbox: airlock installs the tools a skill starts with uvx before the run, in the sealed install phase, and nothing is downloaded while it runs (was the install phase off, or did it fail?)" >&2
exit 127
"#;

const UV_SHIM: &str = r#"#!/bin/sh
# airlock's uv: what uv would fetch was installed before the run, sealed (the skill's pyproject.toml dependencies, a
# script's inline ones); `uv run` starts the command with it, `uv sync` has nothing left to do, `uv tool run` is uvx.
case "$1" in
  run)
    shift
    while [ $# -gt 0 ]; do
      case "$1" in
        --with|--python|-p|--project|--directory|--env-file) shift 2 ;;
        -*) shift ;;
        *) break ;;
      esac
    done
    case "$1" in
      python|python3) shift; exec /usr/bin/python3 "$@" ;;
      *.py) exec /usr/bin/python3 "$@" ;;
      "") echo "uv run: no command given" >&2; exit 2 ;;
      *) exec "$@" ;;
    esac ;;
  sync|lock|venv)
    echo "airlock: \`uv $1\` has nothing to do here: the skill's dependencies were installed before the run, sealed" >&2
    exit 0 ;;
  tool)
    if [ "$2" = run ]; then shift 2; exec uvx "$@"; fi ;;
esac
echo "uv $1: not available in this sandbox (airlock installs what a skill declares before the run, sealed; nothing is downloaded while it runs)" >&2
exit 127
"#;

/// The `PATH` every sandbox starts with.
pub const SANDBOX_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin:/airlock/bin";
/// Host uid the sandbox user maps to when airlock runs as root (so RLIMIT_NPROC applies).
pub const ROOT_MODE_HOST_UID: u32 = 1_000_000;

/// Why a sandbox could not run. A command that fails inside is not an error: see the record's status.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
    #[error("invalid sandbox request: {0}")]
    Invalid(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The argument that makes this executable act as the sandbox helper.
pub const HELPER_ARG: &str = concat!("__airlock_sandbox_helper_", env!("AIRLOCK_SANDBOX_BUILD"));
/// The small helper executable's name; used when it sits next to the running program.
pub const HELPER_BIN: &str = "airlock-sandbox-helper";

/// If this process was started as the sandbox helper, runs it and never returns; otherwise returns at once.
/// A helper from another build does not know this build's argument and returns here too; the runner then falls
/// back to its own executable.
pub fn maybe_run_child() {
    if std::env::args_os().nth(1).is_some_and(|a| a == HELPER_ARG) {
        child::helper_main();
    }
}
