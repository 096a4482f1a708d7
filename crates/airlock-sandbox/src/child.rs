//! The in-sandbox half: helper (unshares), init (pid 1: builds the root, reaps, kills), command (locks itself
//! down in the documented order, then execs).

use std::convert::Infallible;
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    Scope, ABI,
};
use nix::sched::{unshare, CloneFlags};
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{kill, Signal};
use nix::sys::time::TimeValLike;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Gid, Pid, Uid};

use crate::protocol::{recv, send, Msg, HELPER_FD};
use crate::{mounts, seccomp, Config, Mount, SANDBOX_HOME, SANDBOX_UID};

type R<T> = Result<T, String>;

fn fail(msg: String) -> ! {
    let _ = send(HELPER_FD, &Msg::Error(msg), None);
    std::process::exit(125);
}

fn ok<T>(r: R<T>) -> T {
    r.unwrap_or_else(|e| fail(e))
}

fn ctx<T, E: std::fmt::Display>(r: Result<T, E>, what: &str) -> R<T> {
    r.map_err(|e| format!("{what}: {e}"))
}

/// The helper: entered from `maybe_run_child` in a fresh process whose descriptor 3 is the channel.
pub fn helper_main() -> ! {
    let (config, root) = match recv(HELPER_FD) {
        Ok((Msg::Config(c, _), _)) => (*c, std::env::args().nth(2).map(PathBuf::from)),
        _ => std::process::exit(125),
    };
    let Some(root) = root else {
        fail("no root folder given".to_owned())
    };
    let flags = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWNET
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS
        | CloneFlags::CLONE_NEWCGROUP;
    ok(ctx(
        unshare(flags),
        "unshare namespaces (are unprivileged user namespaces allowed? see `airlock doctor`)",
    ));
    ok(ctx(send(HELPER_FD, &Msg::Unshared, None), "channel"));
    match recv(HELPER_FD) {
        Ok((Msg::Mapped, _)) => {}
        _ => fail("the supervisor did not map ids".to_owned()),
    }
    let id = Gid::from_raw(SANDBOX_UID);
    ok(ctx(nix::unistd::setresgid(id, id, id), "setresgid"));
    let uid = Uid::from_raw(SANDBOX_UID);
    ok(ctx(nix::unistd::setresuid(uid, uid, uid), "setresuid"));
    // SAFETY: this process is single-threaded (a fresh helper process).
    match unsafe { fork() } {
        Ok(ForkResult::Child) => init_main(&config, &root),
        Ok(ForkResult::Parent { child }) => {
            let _ = send(HELPER_FD, &Msg::Init(child.as_raw()), None);
            let code = match waitpid(child, None) {
                Ok(WaitStatus::Exited(_, c)) => c,
                _ => 125,
            };
            std::process::exit(code);
        }
        Err(e) => fail(format!("fork init: {e}")),
    }
}

/// Pid 1 of the sandbox.
fn init_main(config: &Config, root: &Path) -> ! {
    // SAFETY: prctl with constant arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let (upper_fd, rw) = ok(mounts::build_root(root, config));
    ok(ctx(
        send(HELPER_FD, &Msg::Root(rw), Some(upper_fd.as_raw_fd())),
        "send upper layers",
    ));
    drop(upper_fd);
    let _ = nix::unistd::sethostname("airlock");
    ok(mounts::loopback_up());
    if config.net_proxy {
        // The proxy's ends inside the sandbox: created here (in its network namespace) and served by the supervisor.
        let listener = ok(ctx(
            std::net::TcpListener::bind(("127.0.0.1", airlock_egress::PROXY_PORT)),
            "listen for the egress proxy",
        ));
        ok(ctx(
            send(HELPER_FD, &Msg::ProxyListener, Some(listener.as_raw_fd())),
            "send the proxy listener",
        ));
        let dns = ok(ctx(
            std::net::UdpSocket::bind(("127.0.0.1", 53)),
            "bind the DNS stub",
        ));
        ok(ctx(
            send(HELPER_FD, &Msg::DnsSocket, Some(dns.as_raw_fd())),
            "send the DNS socket",
        ));
    }
    // SAFETY: init is single-threaded.
    let child = match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            let e = command_main(config).unwrap_err();
            fail(e)
        }
        Ok(ForkResult::Parent { child }) => child,
        Err(e) => fail(format!("fork command: {e}")),
    };
    let (mut code, mut signal) = (None, None);
    loop {
        match waitpid(Pid::from_raw(-1), None) {
            Ok(WaitStatus::Exited(pid, c)) if pid == child => {
                code = Some(c);
                break;
            }
            Ok(WaitStatus::Signaled(pid, s, _)) if pid == child => {
                signal = Some(s as i32);
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    // The command is done: nothing it started may survive.
    let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
    while waitpid(Pid::from_raw(-1), Some(WaitPidFlag::__WALL)).is_ok() {}
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).ok();
    let (max_rss_kb, cpu_ms) = usage.map_or((0, 0), |u| {
        let cpu = u.user_time().num_milliseconds() + u.system_time().num_milliseconds();
        (u.max_rss(), u64::try_from(cpu).unwrap_or(0))
    });
    let _ = send(
        HELPER_FD,
        &Msg::Exit {
            code,
            signal,
            max_rss_kb,
            cpu_ms,
        },
        None,
    );
    std::process::exit(0);
}

fn set_limit(resource: Resource, value: u64, what: &str) -> R<()> {
    ctx(setrlimit(resource, value, value), what)
}

/// The command: session, limits, capabilities, no_new_privs, Landlock, seccomp, exec. Returns only on error.
fn command_main(config: &Config) -> R<Infallible> {
    ctx(nix::unistd::setsid(), "setsid")?;
    let limits = &config.limits;
    let cpu_seconds = limits.cpu_seconds();
    // The data limit bounds what a process can really use (heap and writable private mappings) and, unlike the
    // address-space limit, leaves alone the large reservations runtimes make without using them (V8, the JVM and
    // Go reserve gigabytes of address space at start-up and fail under RLIMIT_AS).
    set_limit(Resource::RLIMIT_DATA, limits.memory_bytes, "memory limit")?;
    set_limit(Resource::RLIMIT_FSIZE, limits.disk_bytes, "file size limit")?;
    set_limit(Resource::RLIMIT_CPU, cpu_seconds, "cpu limit")?;
    set_limit(Resource::RLIMIT_NOFILE, limits.open_files, "open files limit")?;
    set_limit(Resource::RLIMIT_NPROC, limits.pids, "process limit")?;
    set_limit(Resource::RLIMIT_CORE, 0, "core limit")?;
    pin_cpus(limits.cpus);
    let workdir = config.workdir.clone().unwrap_or_else(|| {
        config
            .mounts
            .iter()
            .find_map(|m| match m {
                Mount::Rw { sandbox, .. } => Some(sandbox.clone()),
                Mount::Ro { .. } => None,
            })
            .unwrap_or_else(|| PathBuf::from(SANDBOX_HOME))
    });
    ctx(
        nix::unistd::chdir(&workdir),
        &format!("chdir {}", workdir.display()),
    )?;
    drop_capabilities()?;
    // SAFETY: prctl with constant arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(format!("no_new_privs: {}", std::io::Error::last_os_error()));
    }
    landlock(config)?;
    let env = environment(config, &workdir);
    let to_argv = |command: &[String]| {
        command
            .iter()
            .map(|a| CString::new(a.as_bytes()).map_err(|_| format!("argument {a:?} holds a NUL byte")))
            .collect::<R<Vec<CString>>>()
    };
    let argv = to_argv(&config.command)?;
    let steps = config.steps.iter().map(|s| to_argv(s)).collect::<R<Vec<_>>>()?;
    let program = resolve(&config.command[0], &env);
    let listener = seccomp::apply(config.record_files)?;
    ctx(
        send(HELPER_FD, &Msg::ListenerAt(listener.as_raw_fd()), None),
        "announce the listener",
    )?;
    match recv(HELPER_FD) {
        Ok((Msg::Taken, _)) => {}
        _ => return Err("the supervisor did not take the recorder's listener".to_owned()),
    }
    drop(listener);
    if !steps.is_empty() {
        run_steps(&config.steps, &steps, &env);
    }
    // Close every descriptor but the standard ones (the channel included).
    // SAFETY: closing descriptors we own; no other thread exists.
    unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    exec(&config.command[0], &program, &argv, &env)
}

/// Execs a command; on failure reports on stderr and exits with the shell's codes (127 not found, 126 cannot run).
fn exec(name: &str, program: &CString, argv: &[CString], env: &[CString]) -> ! {
    let err = nix::unistd::execve(program, argv, env).unwrap_err();
    // The channel is closed now: report on stderr.
    eprintln!("airlock: cannot run {name}: {err}");
    std::process::exit(if err == nix::errno::Errno::ENOENT {
        127
    } else {
        126
    });
}

/// airlock's step runner, inside every layer: starts each step, waits for it and reports its status to the
/// supervisor on the channel, which the steps never hold. It makes itself non-dumpable first, so that the steps
/// (same user, no capabilities) can neither read its memory nor reopen its descriptors through `/proc`; they can
/// only kill it, which ends the run with the remaining steps unreported. Exits with the first failing step's code.
fn run_steps(names: &[Vec<String>], steps: &[Vec<CString>], env: &[CString]) -> ! {
    // SAFETY: prctl with constant arguments.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    let mut first_failure = None;
    for (index, argv) in steps.iter().enumerate() {
        let name = names[index].first().map_or("", String::as_str);
        let program = resolve(name, env);
        // SAFETY: the runner is single-threaded.
        let child = match unsafe { fork() } {
            Ok(ForkResult::Child) => {
                // The step itself may be read by the recorder (its exec's path and arguments); the runner may not.
                // SAFETY: prctl with constant arguments; closing descriptors we own; no other thread exists.
                unsafe {
                    libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
                    libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
                }
                exec(name, &program, argv, env)
            }
            Ok(ForkResult::Parent { child }) => child,
            Err(_) => {
                let step = Msg::Step {
                    index,
                    code: None,
                    signal: None,
                };
                if send(HELPER_FD, &step, None).is_ok() {
                    let _ = recv(HELPER_FD);
                }
                first_failure.get_or_insert(126);
                continue;
            }
        };
        let (code, signal) = loop {
            match waitpid(child, None) {
                Ok(WaitStatus::Exited(_, c)) => break (Some(c), None),
                Ok(WaitStatus::Signaled(_, sig, _)) => break (None, Some(sig as i32)),
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => break (None, None),
            }
        };
        // The next step starts once the supervisor has counted this one's output, so each step's output is its own.
        if send(HELPER_FD, &Msg::Step { index, code, signal }, None).is_ok() {
            let _ = recv(HELPER_FD);
        }
        if code != Some(0) {
            first_failure.get_or_insert(code.unwrap_or_else(|| 128 + signal.unwrap_or(0)));
        }
    }
    std::process::exit(first_failure.unwrap_or(0));
}

fn pin_cpus(cpus: u32) {
    let Ok(allowed) = nix::sched::sched_getaffinity(Pid::from_raw(0)) else {
        return;
    };
    let mut set = nix::sched::CpuSet::new();
    let mut n = 0;
    for cpu in 0..nix::sched::CpuSet::count() {
        if n >= cpus {
            break;
        }
        if allowed.is_set(cpu).unwrap_or(false) {
            let _ = set.set(cpu);
            n += 1;
        }
    }
    if n > 0 {
        let _ = nix::sched::sched_setaffinity(Pid::from_raw(0), &set);
    }
}

fn drop_capabilities() -> R<()> {
    for cap in 0..=libc::c_ulong::from(63u8) {
        // SAFETY: prctl on this thread only; EINVAL past the last capability is expected.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
    }
    // SAFETY: prctl with constant arguments.
    unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) };
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset with a v3 header and two zeroed data blocks.
    if unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) } != 0 {
        return Err(format!("drop capabilities: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn landlock(config: &Config) -> R<()> {
    let abi = ABI::V5;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let mut writable: Vec<PathBuf> = vec!["/tmp".into(), SANDBOX_HOME.into(), "/dev/shm".into()];
    writable.extend(config.mounts.iter().filter_map(|m| match m {
        Mount::Rw { sandbox, .. } => Some(sandbox.clone()),
        Mount::Ro { .. } => None,
    }));
    let path = |p: &Path| landlock::PathFd::new(p).map_err(|e| format!("landlock open {}: {e}", p.display()));
    let mut ruleset = ctx(
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(all),
        "landlock (needs Linux 5.13+ with Landlock enabled)",
    )?;
    ruleset = ruleset.set_compatibility(CompatLevel::BestEffort);
    ruleset = ctx(
        ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal),
        "landlock scopes",
    )?;
    let mut created = ctx(ruleset.create(), "landlock create")?;
    created = ctx(
        created.add_rule(landlock::PathBeneath::new(path(Path::new("/"))?, read)),
        "landlock /",
    )?;
    for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
        let access = AccessFs::ReadFile | AccessFs::WriteFile;
        created = ctx(
            created.add_rule(landlock::PathBeneath::new(path(Path::new(dev))?, access)),
            "landlock /dev",
        )?;
    }
    // The sandbox's own pseudo-terminals: opened read-write, and set up with their ioctls (a terminal of the
    // host is not in this devpts instance).
    created = ctx(
        created.add_rule(landlock::PathBeneath::new(
            path(Path::new("/dev/pts"))?,
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev,
        )),
        "landlock /dev/pts",
    )?;
    for dir in &writable {
        created = ctx(
            created.add_rule(landlock::PathBeneath::new(path(dir)?, all)),
            "landlock rule",
        )?;
    }
    let status = ctx(created.restrict_self(), "landlock restrict")?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err("landlock is not enforced on this kernel; refusing to run without it".to_owned());
    }
    Ok(())
}

fn environment(config: &Config, workdir: &Path) -> Vec<CString> {
    let mut vars: Vec<(String, String)> = vec![
        ("PATH".into(), crate::SANDBOX_PATH.into()),
        ("HOME".into(), SANDBOX_HOME.into()),
        ("USER".into(), "sandbox".into()),
        ("LOGNAME".into(), "sandbox".into()),
        ("SHELL".into(), "/bin/sh".into()),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), "dumb".into()),
        ("TMPDIR".into(), "/tmp".into()),
        ("PWD".into(), workdir.display().to_string()),
        ("AIRLOCK_SANDBOX".into(), "1".into()),
    ];
    if config.net_proxy {
        let proxy = format!("http://127.0.0.1:{}", airlock_egress::PROXY_PORT);
        for k in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ] {
            vars.push((k.into(), proxy.clone()));
        }
        for k in ["NO_PROXY", "no_proxy"] {
            vars.push((k.into(), "localhost,127.0.0.1,::1".into()));
        }
    }
    for (k, v) in &config.env {
        vars.retain(|(name, _)| name != k);
        vars.push((k.clone(), v.clone()));
    }
    vars.into_iter()
        .filter_map(|(k, v)| CString::new(format!("{k}={v}")).ok())
        .collect()
}

/// Finds a bare program name on the sandbox's PATH.
fn resolve(program: &str, env: &[CString]) -> CString {
    if program.contains('/') {
        return CString::new(program).unwrap_or_default();
    }
    let path = env
        .iter()
        .filter_map(|e| e.to_str().ok())
        .find_map(|e| e.strip_prefix("PATH="))
        .unwrap_or("/usr/bin:/bin")
        .to_owned();
    for dir in path.split(':') {
        let candidate = Path::new(dir).join(program);
        if candidate.is_file() {
            return CString::new(candidate.as_os_str().as_encoded_bytes()).unwrap_or_default();
        }
    }
    CString::new(program).unwrap_or_default()
}
