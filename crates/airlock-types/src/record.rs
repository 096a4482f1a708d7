use serde::{Deserialize, Serialize};

/// How a sandboxed run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Succeeded,
    Failed,
    TimedOut,
    LimitExceeded,
    Killed,
    /// Someone asked the run to stop (cancel): every process was killed.
    Cancelled,
    Refused,
}

/// A limit the kernel enforces on a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    Timeout,
    Memory,
    Pids,
    Cpu,
    Disk,
    FileSize,
    OpenFiles,
}

/// What mechanism enforced the limits of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitEnforcement {
    /// rlimits, the pid namespace and a size-limited tmpfs.
    Rlimits,
    /// cgroup controllers on top of the rlimits.
    Cgroup,
}

/// The limits a run had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub timeout_ms: u64,
    pub memory_bytes: u64,
    pub disk_bytes: u64,
    pub pids: u64,
    pub cpus: u32,
    pub cpu_seconds: u64,
    pub open_files: u64,
    pub file_size_bytes: u64,
    pub enforcement: LimitEnforcement,
}

/// One program started in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecEvent {
    /// Milliseconds since the run started.
    pub t_ms: u64,
    /// Pid inside the sandbox's pid namespace.
    pub pid: i32,
    pub ppid: i32,
    /// The program path as given to execve.
    pub path: String,
    /// The arguments, whole up to 64 KiB and 1,024 arguments; a cut argument ends with an
    /// `[airlock: cut, N bytes in all]` mark.
    pub argv: Vec<String>,
    /// The arguments' full size in bytes when they were cut (`None` when `argv` is whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv_bytes: Option<u64>,
    pub cwd: String,
    /// Exit status of the process that made this exec, when it exited normally and was seen.
    pub exit_code: Option<i32>,
}

/// A file opened in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAccess {
    /// The path as asked for.
    pub path: String,
    /// What the path reached, when it differs (through a symbolic link), inside the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    pub pid: i32,
    pub t_ms: u64,
}

/// What became of a network attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetDecision {
    Allowed,
    Denied,
    /// A connection to the sandbox's own loopback, which never leaves it.
    Local,
    /// Taken by a detonation's sinkhole on this machine: accepted and read there, never carried further.
    Sinkholed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetAttempt {
    pub t_ms: u64,
    pub pid: i32,
    /// `tcp`, `udp`, `unix`, ...
    pub protocol: String,
    /// Address and port, or the socket path.
    pub destination: String,
    /// The host name asked for, when the attempt went through the egress proxy or the DNS stub.
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub port: Option<u16>,
    pub decision: NetDecision,
    /// The policy rule that decided, when one did.
    #[serde(default)]
    pub rule: Option<String>,
    pub reason: String,
    #[serde(default)]
    pub bytes_up: u64,
    #[serde(default)]
    pub bytes_down: u64,
    /// Set when the proxy added a secret header for this host (the value is never recorded).
    #[serde(default)]
    pub secret_injected: bool,
    /// The upstream proxy the connection left through (`upstream proxy HOST:PORT`), when one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// What a detonation's sinkhole read on this connection (nothing of it left the machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch: Option<Box<Catch>>,
}

/// What a detonation's sinkhole read on one connection or lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catch {
    /// `http`, `https` (TLS the sinkhole opened with its own certificate), `tls` (TLS it could not open), `raw`
    /// (bytes that are neither), `dns` (a name looked up).
    pub kind: String,
    /// An HTTP request's method and path (`POST /upload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// The first bytes sent, as printable text, bounded.
    pub sample: String,
    /// Planted secrets whose value (as is, in base64 or in hex) was among the bytes sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub canaries: Vec<String>,
    /// A command the sinkhole sent down the connection ran and answered: a remote shell.
    #[serde(default)]
    pub shell: bool,
    /// Of `canaries`, those sent only as the request's own credential (an `Authorization` header): how a client
    /// calls an API (or a gateway to one), and still a theft when the host is not the service's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credential_only: Vec<String>,
}

/// Everything observed during one sandboxed command, built while it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub schema_version: u32,
    pub request_id: String,
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    /// Signal that ended the command, if one did.
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub started_at: String,
    pub duration_ms: u64,
    pub command: Vec<String>,
    pub limits: Limits,
    pub limit_hit: Option<LimitKind>,
    /// The isolation layers that were enforced, in the order applied.
    pub layers: Vec<String>,
    pub network_allowed: bool,
    pub timeline: Vec<ExecEvent>,
    pub files_read: Vec<FileAccess>,
    pub files_written: Vec<FileAccess>,
    /// Files changed in the copy-on-write workspaces, from their upper layers after the run.
    #[serde(default)]
    pub changes: Vec<Change>,
    pub network: Vec<NetAttempt>,
    /// Peak resident memory of the run's processes, in bytes.
    pub max_rss_bytes: u64,
    pub cpu_ms: u64,
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Events the recorder dropped because the run produced more than it keeps (all kinds).
    pub dropped_events: u64,
    /// The same, by kind.
    #[serde(default)]
    pub dropped: DroppedEvents,
    /// How each step of a multi-step run ended, as airlock's step runner saw it (`wait`), in order.
    #[serde(default)]
    pub steps: Vec<StepExit>,
}

/// Ordinary events the recorder did not keep, by kind. Events that matter for the verdict are kept far beyond the
/// ordinary cap, so a flood of harmless events cannot push them out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedEvents {
    pub timeline: u64,
    pub files_read: u64,
    pub files_written: u64,
    pub network: u64,
}

impl DroppedEvents {
    pub fn total(&self) -> u64 {
        self.timeline + self.files_read + self.files_written + self.network
    }
}

/// How one step of a multi-step run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepExit {
    pub index: usize,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// How many bytes the run had written to stdout and stderr when the step ended: the step's own output is what
    /// lies between the previous step's ends and these (a process a step left in the background may add to it).
    #[serde(default)]
    pub stdout_end: u64,
    #[serde(default)]
    pub stderr_end: u64,
}

/// How a file in a workspace differs after the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One file the run changed in a copy-on-write workspace (read from the overlay's upper layer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The workspace's path inside the sandbox.
    pub mount: String,
    /// The file's path relative to the workspace.
    pub path: String,
    pub kind: ChangeKind,
    /// `file` or `symlink`.
    pub file_type: String,
    pub size_before: Option<u64>,
    pub size_after: Option<u64>,
    /// Unix mode bits after the run (for added and modified files).
    pub mode_after: Option<u32>,
}

/// One thing the recorder saw while a sandboxed command ran, reported as it happens (the same facts end up in the
/// [`RunRecord`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LiveEvent {
    /// A program started.
    Exec(ExecEvent),
    /// A process that had exec'd ended with this code.
    Exit { pid: i32, t_ms: u64, exit_code: i32 },
    /// A file opened for reading, the first time.
    FileRead(FileAccess),
    /// A file opened for writing (a change in the making), the first time.
    FileWritten(FileAccess),
    /// A network attempt and what became of it.
    Net(NetAttempt),
    /// Bytes the command wrote to its standard output or error, as they came (the first
    /// [`LIVE_OUTPUT_LIMIT`] bytes of each; the record keeps more). Invalid UTF-8 is replaced.
    Output {
        /// `stdout` or `stderr`.
        stream: String,
        t_ms: u64,
        text: String,
    },
}

/// Most bytes of each output stream reported live; the rest is in the record only.
pub const LIVE_OUTPUT_LIMIT: usize = 64 * 1024;

/// The most live output events of one stream (a program printing a byte every tenth of a second would otherwise send
/// one event per byte and crowd a run's other events out); the record keeps all of its output.
pub const LIVE_OUTPUT_EVENTS: usize = 400;

/// Where live events go: a callback shared by the recorder's threads. Cheap to clone.
#[derive(Clone)]
pub struct EventSink(std::sync::Arc<dyn Fn(LiveEvent) + Send + Sync>);

impl EventSink {
    pub fn new(f: impl Fn(LiveEvent) + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(f))
    }

    pub fn send(&self, event: LiveEvent) {
        (self.0)(event);
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSink")
    }
}
