//! The supervisor: starts the helper, writes its id maps, collects the descriptors the sandbox hands back,
//! records while the command runs, enforces the wall-clock timeout and builds the run record.

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::unistd::Pid;

use airlock_types::{
    LimitEnforcement, LimitKind, Limits as RecordLimits, RunRecord, RunStatus, SCHEMA_VERSION,
};

use crate::cgroup::Cgroup;
use crate::notify::{record, Recording};
use crate::protocol::{recv, send, Msg, HELPER_FD};
use crate::{Config, Mount, SandboxError, HELPER_ARG, ROOT_MODE_HOST_UID, SANDBOX_UID};

fn setup(msg: impl Into<String>) -> SandboxError {
    SandboxError::Setup(msg.into())
}

/// Checks and normalises the request: a command, existing mount sources, absolute sandbox paths.
fn validate(config: &Config) -> Result<Config, SandboxError> {
    let mut config = config.clone();
    if config.command.is_empty() {
        return Err(SandboxError::Invalid("no command given".into()));
    }
    for m in &mut config.mounts {
        let (Mount::Ro { host, sandbox } | Mount::Rw { host, sandbox }) = m;
        *host = fs_err::canonicalize(&*host)
            .map_err(|e| SandboxError::Invalid(format!("{}: {e}", host.display())))?;
        if !host.is_dir() {
            return Err(SandboxError::Invalid(format!(
                "{} is not a folder",
                host.display()
            )));
        }
        if !sandbox.is_absolute() || sandbox.components().any(|c| c == std::path::Component::ParentDir) {
            return Err(SandboxError::Invalid(format!(
                "sandbox path {} must be absolute, without `..`",
                sandbox.display()
            )));
        }
        let reserved = ["/proc", "/dev", "/etc", "/usr", "/.airlock", "/"];
        if reserved.iter().any(|r| sandbox == std::path::Path::new(r)) {
            return Err(SandboxError::Invalid(format!(
                "{} is reserved inside the sandbox",
                sandbox.display()
            )));
        }
    }
    config.net_proxy = config
        .egress
        .as_ref()
        .is_some_and(airlock_egress::EgressConfig::is_open);
    if config.net_proxy {
        if let Some(egress) = &config.egress {
            let setup = egress
                .sandbox_setup(std::path::Path::new(crate::SANDBOX_HOME))
                .map_err(|e| SandboxError::Invalid(e.to_string()))?;
            // The caller's own variables win.
            for (k, v) in setup.env {
                if !config.env.iter().any(|(name, _)| *name == k) {
                    config.env.push((k, v));
                }
            }
            config.files.extend(setup.files);
        }
    }
    for (path, _) in &config.files {
        let under = |base: &str| path.starts_with(base) && path != std::path::Path::new(base);
        if !path.is_absolute()
            || path.components().any(|c| c == std::path::Component::ParentDir)
            || !(under("/etc") || under(crate::SANDBOX_HOME))
        {
            return Err(SandboxError::Invalid(format!(
                "file {} must be under /etc or {}",
                path.display(),
                crate::SANDBOX_HOME
            )));
        }
    }
    Ok(config)
}

fn write_maps(pid: u32) -> Result<(), SandboxError> {
    let euid = nix::unistd::geteuid().as_raw();
    let egid = nix::unistd::getegid().as_raw();
    let (uid, gid) = if euid == 0 {
        (ROOT_MODE_HOST_UID, ROOT_MODE_HOST_UID)
    } else {
        (euid, egid)
    };
    if euid != 0 {
        fs_err::write(format!("/proc/{pid}/setgroups"), "deny")?;
    }
    fs_err::write(format!("/proc/{pid}/uid_map"), format!("{SANDBOX_UID} {uid} 1\n"))?;
    fs_err::write(format!("/proc/{pid}/gid_map"), format!("{SANDBOX_UID} {gid} 1\n"))?;
    Ok(())
}

/// Reads one of the command's output pipes, keeping up to `limit` bytes.
struct Output {
    thread: std::thread::JoinHandle<(Vec<u8>, bool)>,
    /// Bytes read so far.
    read: Arc<std::sync::atomic::AtomicU64>,
    /// A second descriptor of the pipe, to ask how much is still unread.
    pipe: Option<OwnedFd>,
}

/// Where a pipe's bytes are also reported live: the stream's name, the sink and the run's start.
struct Live {
    stream: &'static str,
    sink: airlock_types::EventSink,
    t0: Instant,
    /// Output events sent so far (at most [`airlock_types::LIVE_OUTPUT_EVENTS`], the last one saying so).
    sent: std::cell::Cell<usize>,
}

fn reader<P: Read + AsFd + Send + 'static>(mut pipe: P, limit: usize, live: Option<Live>) -> Output {
    let read = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let count = read.clone();
    let dup = pipe.as_fd().try_clone_to_owned().ok();
    let thread = std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 65536];
        let mut truncated = false;
        // Bytes not reported yet (gathered for up to LIVE_EVERY, so that a program printing line by line is not
        // an event a line), and the bytes taken for reporting so far.
        let mut partial: Vec<u8> = Vec::new();
        let mut reported = 0usize;
        let mut last_sent = Instant::now();
        loop {
            if let Some(live) = &live {
                if !partial.is_empty() {
                    let wait = LIVE_EVERY.saturating_sub(last_sent.elapsed());
                    if !readable(pipe.as_fd(), wait) {
                        live.flush(&mut partial, false);
                        last_sent = Instant::now();
                    }
                }
            }
            let n = match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let room = limit.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
            truncated |= n > room;
            count.fetch_add(n as u64, Ordering::Release);
            if let Some(live) = &live {
                let take = n.min(airlock_types::LIVE_OUTPUT_LIMIT.saturating_sub(reported));
                partial.extend_from_slice(&buf[..take]);
                reported += take;
                if partial.len() >= 8192 || last_sent.elapsed() >= LIVE_EVERY {
                    live.flush(&mut partial, false);
                    last_sent = Instant::now();
                }
            }
        }
        if let Some(live) = &live {
            live.flush(&mut partial, true);
        }
        (kept, truncated)
    });
    Output {
        thread,
        read,
        pipe: dup,
    }
}

/// How long output is gathered before it is reported live.
const LIVE_EVERY: Duration = Duration::from_millis(100);

impl Live {
    /// Reports what `pending` holds, but for a UTF-8 character cut at its end (kept for the next read) unless
    /// `last`.
    fn flush(&self, pending: &mut Vec<u8>, last: bool) {
        let whole = if last { pending.len() } else { utf8_prefix(pending) };
        if whole == 0 {
            return;
        }
        let mut text = String::from_utf8_lossy(&pending[..whole]).into_owned();
        pending.drain(..whole);
        let sent = self.sent.get();
        if sent >= airlock_types::LIVE_OUTPUT_EVENTS {
            return;
        }
        self.sent.set(sent + 1);
        if sent + 1 == airlock_types::LIVE_OUTPUT_EVENTS {
            text.push_str("\n[airlock: no more of this stream is shown live; the record keeps it]\n");
        }
        self.sink.send(airlock_types::LiveEvent::Output {
            stream: self.stream.to_string(),
            t_ms: self.t0.elapsed().as_millis() as u64,
            text,
        });
    }
}

/// Whether `fd` has something to read (or has closed) within `wait`.
fn readable(fd: std::os::fd::BorrowedFd<'_>, wait: Duration) -> bool {
    let mut poll = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd, valid for the call, on a descriptor borrowed for its duration.
    let r = unsafe { libc::poll(&mut poll, 1, wait.as_millis().min(1_000) as libc::c_int) };
    r != 0
}

/// The length of `bytes` without a UTF-8 character cut at its end (which waits for the next read). Bytes that can
/// never be UTF-8 are left in, to be replaced when reported.
fn utf8_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => bytes.len(),
    }
}

impl Output {
    /// Bytes written so far by processes that have exited: waits (briefly) until the pipe holds nothing unread.
    fn written(&self) -> u64 {
        if let Some(pipe) = &self.pipe {
            for _ in 0..200 {
                let mut pending: libc::c_int = 0;
                // SAFETY: FIONREAD writes one int through the pointer, on a descriptor this owns.
                let r = unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut pending) };
                if r != 0 || pending == 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            // The reader counts what it read just after its read returns.
            std::thread::sleep(Duration::from_millis(1));
        }
        self.read.load(Ordering::Acquire)
    }
}

struct Started {
    child: Child,
    init: i32,
    upper: OwnedFd,
    listener: OwnedFd,
    /// The egress proxy's listener and DNS socket inside the sandbox, when the run has egress.
    net: Option<(OwnedFd, OwnedFd)>,
    /// The channel to the helper, kept open: init reports the command's exit on it.
    channel: OwnedFd,
}

fn expect(channel: &OwnedFd) -> Result<(Msg, Option<OwnedFd>), SandboxError> {
    match recv(channel.as_raw_fd()) {
        Ok((Msg::Error(e), _)) => Err(setup(e)),
        Ok(other) => Ok(other),
        Err(e) => Err(setup(format!("the sandbox helper stopped during setup ({e})"))),
    }
}

/// The next message, which must be the one `is` accepts and carry a descriptor.
fn expect_fd(channel: &OwnedFd, is: fn(&Msg) -> bool) -> Result<OwnedFd, SandboxError> {
    match expect(channel)? {
        (msg, Some(fd)) if is(&msg) => Ok(fd),
        (msg, _) => Err(setup(format!("unexpected {msg:?}"))),
    }
}

fn start(
    config: &Config,
    root: &std::path::Path,
    helper: &std::path::Path,
    make_cgroup: impl FnOnce() -> Option<Cgroup> + Send,
    stdin: Option<&OwnedFd>,
) -> Result<(Started, Option<Cgroup>), SandboxError> {
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| setup(format!("socketpair: {e}")))?;
    let theirs_raw = theirs.as_raw_fd();
    let mut cmd = Command::new(helper);
    cmd.arg(HELPER_ARG)
        .arg(root)
        .env_clear()
        .stdin(match stdin {
            Some(fd) => Stdio::from(fd.try_clone()?),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: dup2 is async-signal-safe; it runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(theirs_raw, HELPER_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| setup(format!("start {}: {e}", helper.display())))?;
    drop(theirs);
    let fail = |child: &mut Child, e: SandboxError| {
        let _ = child.kill();
        let _ = child.wait();
        e
    };
    let pid = child.id();
    let steps = std::thread::scope(|scope| {
        // The group is made and joined on a thread of its own while the helper starts and unshares: moving a process
        // into a v1 cgroup waits for an RCU grace period (milliseconds), which would otherwise add to every start.
        // The helper forks nothing before `Mapped`, which is sent only once it has joined, so everything the run
        // starts is inside the group.
        let joining = scope.spawn(move || {
            let cgroup = make_cgroup();
            if let Some(group) = &cgroup {
                group
                    .add(pid)
                    .map_err(|e| setup(format!("join the run's cgroup: {e}")))?;
            }
            Ok::<_, SandboxError>(cgroup)
        });
        send(ours.as_raw_fd(), &Msg::Config(Box::new(config.clone()), 0), None)?;
        match expect(&ours)? {
            (Msg::Unshared, _) => {}
            other => return Err(setup(format!("unexpected {:?}", other.0))),
        }
        write_maps(pid)?;
        let cgroup = joining
            .join()
            .map_err(|_| setup("joining the run's cgroup panicked"))??;
        send(ours.as_raw_fd(), &Msg::Mapped, None)?;
        let init = match expect(&ours)? {
            (Msg::Init(pid), _) => pid,
            other => return Err(setup(format!("unexpected {:?}", other.0))),
        };
        let upper = expect_fd(&ours, |m| matches!(m, Msg::Root(_)))?;
        let net = if config.net_proxy {
            let proxy = expect_fd(&ours, |m| matches!(m, Msg::ProxyListener))?;
            let dns = expect_fd(&ours, |m| matches!(m, Msg::DnsSocket))?;
            Some((proxy, dns))
        } else {
            None
        };
        let listener = match expect(&ours)? {
            (Msg::ListenerAt(fd), _) => take_listener(init, fd)?,
            other => return Err(setup(format!("unexpected {:?}", other.0))),
        };
        send(ours.as_raw_fd(), &Msg::Taken, None)?;
        Ok::<_, SandboxError>((init, upper, listener, net, cgroup))
    });
    match steps {
        Ok((init, upper, listener, net, cgroup)) => Ok((
            Started {
                child,
                init,
                upper,
                listener,
                net,
                channel: ours,
            },
            cgroup,
        )),
        Err(e) => Err(fail(&mut child, e)),
    }
}

/// Takes the recorder's listener (descriptor `fd` of the command, init's only child) with `pidfd_getfd`.
fn take_listener(init: i32, fd: i32) -> Result<OwnedFd, SandboxError> {
    let children = fs_err::read_to_string(format!("/proc/{init}/task/{init}/children"))?;
    let command: u32 = children
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or_else(|| setup("the sandbox's command process is gone"))?;
    crate::notify::get_fd(command, fd)
        .ok_or_else(|| setup("could not take the recorder's listener from the command (pidfd_getfd)"))
}

/// Runs one command in a fresh sandbox and returns what happened. `helper` is the executable that calls
/// [`maybe_run_child`](crate::maybe_run_child) (the current one when `None`).
pub fn run(config: &Config, helper: Option<PathBuf>) -> Result<RunRecord, SandboxError> {
    run_inner(config, helper, None)
}

/// A sandbox started before its work is known (a warm pool): the command's stdin, and the moment its clock starts.
/// Until `go` is set the sandbox waits at most `hold` (its command blocked reading stdin); from then on the time
/// limit counts from `go`, and the record's duration too.
pub struct Held {
    pub stdin: OwnedFd,
    pub go: Arc<std::sync::OnceLock<Instant>>,
    pub hold: Duration,
}

/// [`run`] for a sandbox started ahead of its work; see [`Held`].
pub fn run_held(config: &Config, helper: Option<PathBuf>, held: Held) -> Result<RunRecord, SandboxError> {
    run_inner(config, helper, Some(held))
}

fn run_inner(
    config: &Config,
    helper: Option<PathBuf>,
    held: Option<Held>,
) -> Result<RunRecord, SandboxError> {
    let config = validate(config)?;
    let (helper, fallback) = match helper {
        Some(h) => (h, None),
        None => {
            let exe = std::env::current_exe()?;
            (default_helper(&exe), Some(exe))
        }
    };
    let root_dir = crate::scratch::scratch_dir("airlock-root-")?;
    fs_err::set_permissions(
        root_dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )?;
    let started_at = airlock_types::now_rfc3339();
    let t0 = Instant::now();
    let request_id = crate::random_hex(8);
    let l = &config.limits;
    let group_name = format!("airlock-{request_id}");
    let make_cgroup = || Cgroup::create(&group_name, l.memory_bytes, l.pids);
    let stdin = held.as_ref().map(|h| &h.stdin);
    let (mut s, cgroup) = match start(&config, root_dir.path(), &helper, make_cgroup, stdin) {
        // The helper next to this program failed (from another build, or damaged): run this program's own copy of
        // the helper instead. A failure that is not the helper's repeats and is reported from there.
        Err(e) if fallback.as_ref().is_some_and(|exe| *exe != helper) => {
            let exe = fallback.unwrap_or_default();
            tracing::warn!("{} failed ({e}); using {}", helper.display(), exe.display());
            start(&config, root_dir.path(), &exe, make_cgroup, stdin)?
        }
        other => other?,
    };
    let live = |stream| {
        config.events.clone().map(|sink| Live {
            stream,
            sink,
            t0,
            sent: Default::default(),
        })
    };
    let stdout = reader(
        s.child.stdout.take().ok_or_else(|| setup("no stdout pipe"))?,
        config.output_limit,
        live("stdout"),
    );
    let stderr = reader(
        s.child.stderr.take().ok_or_else(|| setup("no stderr pipe"))?,
        config.output_limit,
        live("stderr"),
    );
    let egress = match (s.net.take(), &config.egress) {
        (Some((proxy, dns)), Some(egress_config)) => {
            let mut egress_config = egress_config.clone();
            egress_config.events = config.events.clone();
            let egress = airlock_egress::Egress::new(egress_config, t0)
                .map_err(|e| SandboxError::Invalid(e.to_string()))?;
            egress.serve(std::net::TcpListener::from(proxy), std::net::UdpSocket::from(dns));
            Some(egress)
        }
        _ => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let pin = (config.limits.cpus == 1).then(first_allowed_cpu).flatten();
    let recorder = {
        let stop = stop.clone();
        let listener = s.listener;
        let egress = egress.clone();
        let events = config.events.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(record(listener, t0, stop, pin, egress, events));
        });
        rx
    };
    // A held sandbox's clock starts when its work arrives.
    let go = held.as_ref().map(|h| (h.go.clone(), h.hold));
    let deadline_now = || match &go {
        Some((go, hold)) => go
            .get()
            .map_or(t0 + *hold + config.limits.timeout, |g| *g + config.limits.timeout),
        None => t0 + config.limits.timeout,
    };
    drop(held);
    let mut timed_out = false;
    let mut cancelled = false;
    // A pidfd turns readable when the helper exits: wait on it rather than polling.
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, s.child.id(), 0) } as i32;
    let mut steps = Vec::new();
    // One message of the channel: a step's end is noted, with how much of the run's output had been written by
    // then, and the step runner told to go on; init's report of how the command ended is handed back.
    let channel = s.channel.as_raw_fd();
    let mut take = |msg: Msg| match msg {
        Msg::Step { index, code, signal } if index < config.steps.len() => {
            steps.push(airlock_types::StepExit {
                index,
                exit_code: code,
                signal,
                stdout_end: stdout.written(),
                stderr_end: stderr.written(),
            });
            let _ = send(channel, &Msg::StepNoted, None);
            None
        }
        Msg::Exit {
            code,
            signal,
            max_rss_kb,
            cpu_ms,
        } => Some((code, signal, max_rss_kb, cpu_ms)),
        _ => None,
    };
    let mut early_exit = None;
    let mut channel_open = true;
    loop {
        if s.child.try_wait()?.is_some() {
            break;
        }
        cancelled = config.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        let now = Instant::now();
        let deadline = deadline_now();
        timed_out = now >= deadline;
        if cancelled || timed_out {
            let _ = kill(Pid::from_raw(s.init), Signal::SIGKILL);
            let _ = s.child.kill();
            let _ = s.child.wait();
            break;
        }
        let wait_ms = (deadline - now).as_millis().clamp(1, 100) as i32;
        // Wait for the helper's end and, while the steps run, for the step runner's reports: each step's end is
        // noted as it happens (with how much output there is so far) and the runner told to go on.
        let mut pfds = [
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if channel_open { s.channel.as_raw_fd() } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds (a negative fd is ignored by poll).
        unsafe { libc::poll(pfds.as_mut_ptr(), 2, if pidfd >= 0 { wait_ms } else { 2 }) };
        if pfds[1].revents != 0 {
            match recv(s.channel.as_raw_fd()) {
                Ok((msg, _)) => {
                    if let Some(exit) = take(msg) {
                        early_exit = Some(exit);
                        channel_open = false;
                    }
                }
                Err(_) => channel_open = false,
            }
        }
    }
    if pidfd >= 0 {
        // SAFETY: the descriptor was opened above and is closed once.
        unsafe { libc::close(pidfd) };
    }
    let began = go.as_ref().and_then(|(g, _)| g.get().copied()).unwrap_or(t0);
    let duration_ms = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    // Init sends its report before exiting, after the step runner's reports; after a timeout there is none.
    let exit = if early_exit.is_some() || !channel_open {
        early_exit
    } else {
        loop {
            let mut pfd = libc::pollfd {
                fd: s.channel.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut pfd, 1, 0) } <= 0 {
                break None;
            }
            match recv(s.channel.as_raw_fd()) {
                Ok((msg, _)) => {
                    if let Some(exit) = take(msg) {
                        break Some(exit);
                    }
                }
                Err(_) => break None,
            }
        }
    };
    stop.store(true, Ordering::Relaxed);
    // Every process of the sandbox is gone by now (its pid 1 has exited), which ends the recorder's wait. Should it
    // not end, the run fails loudly rather than hang or hand back a record with events missing.
    let mut rec: Recording = recorder.recv_timeout(Duration::from_secs(30)).map_err(|_| {
        SandboxError::Setup(
            "the recorder did not finish after the sandbox ended; the record would be incomplete".into(),
        )
    })?;
    if let Some(egress) = &egress {
        let (attempts, dropped) = egress.finish(Duration::from_secs(1));
        rec.network.extend(attempts);
        rec.network.sort_by_key(|a| a.t_ms);
        rec.dropped.network += dropped;
    }
    let (out, out_trunc) = stdout.thread.join().unwrap_or_default();
    let (err, err_trunc) = stderr.thread.join().unwrap_or_default();
    let (code, signal, max_rss_kb, cpu_ms) = exit.unwrap_or((None, None, 0, 0));
    let stderr_text = String::from_utf8_lossy(&err).into_owned();
    let disk_full = upper_full(&s.upper);
    let changes = workspace_changes(&config, &s.upper)?;
    let limit_hit = if timed_out {
        Some(LimitKind::Timeout)
    } else if signal == Some(libc::SIGXCPU) {
        Some(LimitKind::Cpu)
    } else if signal == Some(libc::SIGXFSZ) {
        Some(LimitKind::FileSize)
    } else if disk_full {
        Some(LimitKind::Disk)
    } else if cgroup.as_ref().is_some_and(Cgroup::memory_hit)
        || code != Some(0) && memory_exhausted(&stderr_text)
    {
        Some(LimitKind::Memory)
    } else if cgroup.as_ref().is_some_and(Cgroup::pids_hit) || code != Some(0) && forks_refused(&stderr_text)
    {
        Some(LimitKind::Pids)
    } else {
        None
    };
    let status = if timed_out {
        RunStatus::TimedOut
    } else if limit_hit.is_some() {
        RunStatus::LimitExceeded
    } else if cancelled {
        RunStatus::Cancelled
    } else if signal.is_some() {
        RunStatus::Killed
    } else if code == Some(0) {
        RunStatus::Succeeded
    } else {
        RunStatus::Failed
    };
    let peak = cgroup.as_ref().map_or(0, Cgroup::peak_memory);
    let enforcement = if cgroup.is_some() {
        LimitEnforcement::Cgroup
    } else {
        LimitEnforcement::Rlimits
    };
    drop(cgroup);
    Ok(RunRecord {
        schema_version: SCHEMA_VERSION,
        request_id,
        status,
        exit_code: code.or(signal.map(|s| 128 + s)),
        signal,
        timed_out,
        started_at,
        duration_ms,
        command: config.command.clone(),
        limits: RecordLimits {
            timeout_ms: u64::try_from(l.timeout.as_millis()).unwrap_or(u64::MAX),
            memory_bytes: l.memory_bytes,
            disk_bytes: l.disk_bytes,
            pids: l.pids,
            cpus: l.cpus,
            cpu_seconds: l.cpu_seconds(),
            open_files: l.open_files,
            file_size_bytes: l.disk_bytes,
            enforcement,
        },
        limit_hit,
        layers: LAYERS.iter().map(|s| (*s).to_owned()).collect(),
        network_allowed: config.net_proxy,
        timeline: rec.timeline,
        files_read: rec.files_read,
        files_written: rec.files_written,
        changes,
        network: rec.network,
        max_rss_bytes: (u64::try_from(max_rss_kb).unwrap_or(0) * 1024).max(peak),
        cpu_ms,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: stderr_text,
        stdout_truncated: out_trunc,
        stderr_truncated: err_trunc,
        dropped_events: rec.dropped.total(),
        dropped: rec.dropped,
        steps,
    })
}

/// The layers every run enforces, in the order they are applied.
pub const LAYERS: [&str; 9] = [
    "namespaces:user,mount,pid,net,ipc,uts,cgroup",
    "pivot_root:tmpfs",
    "overlay:copy-on-write",
    "rlimits",
    "setsid",
    "capabilities:dropped",
    "no_new_privs",
    "landlock",
    "seccomp",
];

fn forks_refused(stderr: &str) -> bool {
    [
        "Resource temporarily unavailable",
        "Cannot fork",
        "fork: retry",
        "BlockingIOError",
    ]
    .iter()
    .any(|s| stderr.contains(s))
}

fn memory_exhausted(stderr: &str) -> bool {
    [
        "MemoryError",
        "Cannot allocate memory",
        "out of memory",
        "bad_alloc",
        "memory allocation",
    ]
    .iter()
    .any(|s| stderr.contains(s))
}

/// Reads the changes from the upper layers, which stay reachable through the descriptor after the sandbox is gone.
fn workspace_changes(config: &Config, upper: &OwnedFd) -> Result<Vec<airlock_types::Change>, SandboxError> {
    let base = PathBuf::from(format!("/proc/self/fd/{}", upper.as_raw_fd()));
    let layers: Vec<_> = config
        .mounts
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            Mount::Rw { host, sandbox } => Some(crate::changes::Layer {
                lower: host,
                mount: sandbox,
                upper: base.join(i.to_string()),
            }),
            Mount::Ro { .. } => None,
        })
        .collect();
    if let Some(keep) = &config.keep_changes {
        fs_err::create_dir_all(keep)?;
    }
    crate::changes::collect(&layers, config.keep_changes.as_deref())
        .map_err(|e| setup(format!("read the workspace changes: {e}")))
}

fn upper_full(upper: &OwnedFd) -> bool {
    nix::sys::statvfs::fstatvfs(upper)
        .map(|s| s.blocks_available() < s.blocks() / 100 + 1)
        .unwrap_or(false)
}

/// The small helper next to the running program when there is one (same version: it checks the argument), else
/// the running program itself.
fn default_helper(exe: &std::path::Path) -> PathBuf {
    let sibling = exe.with_file_name(crate::HELPER_BIN);
    let usable = fs_err::metadata(&sibling)
        .is_ok_and(|m| m.is_file() && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0);
    if usable {
        sibling
    } else {
        exe.to_path_buf()
    }
}

fn first_allowed_cpu() -> Option<usize> {
    let set = nix::sched::sched_getaffinity(Pid::from_raw(0)).ok()?;
    (0..nix::sched::CpuSet::count()).find(|c| set.is_set(*c).unwrap_or(false))
}

#[cfg(test)]
mod live_tests {
    use super::*;

    #[test]
    fn live_output_stops_at_its_event_cap_and_says_so() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = seen.clone();
        let live = Live {
            stream: "stdout",
            sink: airlock_types::EventSink::new(move |e| {
                if let airlock_types::LiveEvent::Output { text, .. } = e {
                    keep.lock().unwrap().push(text);
                }
            }),
            t0: Instant::now(),
            sent: Default::default(),
        };
        for _ in 0..airlock_types::LIVE_OUTPUT_EVENTS + 100 {
            let mut pending = b"x".to_vec();
            live.flush(&mut pending, false);
            assert!(pending.is_empty(), "what was not shown is not held back either");
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), airlock_types::LIVE_OUTPUT_EVENTS);
        assert!(seen
            .last()
            .unwrap()
            .contains("no more of this stream is shown live"));
        assert_eq!(seen[0], "x");
    }
}
