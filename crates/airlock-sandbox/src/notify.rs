//! The recorder: answers seccomp user notifications from the sandbox, noting each exec, open, connect and exit
//! before letting the call continue. Paths and addresses are read from the caller's memory and are hints (the
//! caller may change them after the read); the record is an audit trail, the enforcement is elsewhere.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use airlock_types::{DroppedEvents, EventSink, ExecEvent, FileAccess, LiveEvent, NetAttempt, NetDecision};

const NOTIF_RECV: libc::c_ulong = 0xc050_2100;
const NOTIF_SEND: libc::c_ulong = 0xc018_2101;
const NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
const FD_SYNC_WAKE_UP: u64 = 1;
const FLAG_CONTINUE: u32 = 1;
/// Ordinary events kept per kind; more are counted as dropped.
pub const MAX_EVENTS: usize = 10_000;
/// Events that matter for the verdict (credential reads, writes outside the workspace or to start-up and hook
/// files, remote network attempts, installs, execs of programs outside the system folders) kept per kind.
pub const MAX_IMPORTANT: usize = 100_000;

#[repr(C)]
#[derive(Default)]
struct SeccompData {
    nr: i32,
    arch: u32,
    ip: u64,
    args: [u64; 6],
}

#[repr(C)]
#[derive(Default)]
struct Notif {
    id: u64,
    pid: u32,
    flags: u32,
    data: SeccompData,
}

#[repr(C)]
struct Resp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

/// What the recorder saw.
#[derive(Debug, Default)]
pub struct Recording {
    pub timeline: Vec<ExecEvent>,
    pub files_read: Vec<FileAccess>,
    pub files_written: Vec<FileAccess>,
    pub network: Vec<NetAttempt>,
    /// Events not kept, by kind.
    pub dropped: DroppedEvents,
    /// Where each event is also reported as it is seen.
    pub events: Option<EventSink>,
}

type Attempt = (String, String, Option<u16>, NetDecision, String);

/// Whether one more event fits in a list: ordinary events up to [`MAX_EVENTS`], events that matter for the verdict
/// up to [`MAX_IMPORTANT`] (so a flood of harmless events cannot push them out, and memory stays bounded).
fn fits(len: usize, important: bool) -> bool {
    len < MAX_EVENTS || important && len < MAX_IMPORTANT
}

impl Recording {
    /// Keeps an exec; returns its index in the timeline.
    fn keep_exec(&mut self, event: ExecEvent, important: bool) -> Option<usize> {
        if !fits(self.timeline.len(), important) {
            self.dropped.timeline += 1;
            return None;
        }
        if let Some(sink) = &self.events {
            sink.send(LiveEvent::Exec(event.clone()));
        }
        self.timeline.push(event);
        Some(self.timeline.len() - 1)
    }

    /// Keeps a file access; false when it was dropped.
    fn keep_file(&mut self, write: bool, access: FileAccess, important: bool) -> bool {
        let (list, dropped) = if write {
            (&mut self.files_written, &mut self.dropped.files_written)
        } else {
            (&mut self.files_read, &mut self.dropped.files_read)
        };
        if !fits(list.len(), important) {
            *dropped += 1;
            return false;
        }
        if let Some(sink) = &self.events {
            sink.send(if write {
                LiveEvent::FileWritten(access.clone())
            } else {
                LiveEvent::FileRead(access.clone())
            });
        }
        list.push(access);
        true
    }

    fn push_attempt(
        &mut self,
        (protocol, destination, port, decision, reason): Attempt,
        t_ms: u64,
        pid: i32,
    ) {
        if !fits(self.network.len(), decision != NetDecision::Local) {
            self.dropped.network += 1;
            return;
        }
        let attempt = NetAttempt {
            t_ms,
            pid,
            protocol,
            destination,
            host: None,
            port,
            decision,
            rule: None,
            reason,
            bytes_up: 0,
            bytes_down: 0,
            secret_injected: false,
            via: None,
            catch: None,
        };
        if let Some(sink) = &self.events {
            sink.send(LiveEvent::Net(attempt.clone()));
        }
        self.network.push(attempt);
    }
}

struct Reader {
    mem: HashMap<u32, File>,
    /// Whether `process_vm_readv` works here (one system call per read, no `/proc/PID/mem` to open for each
    /// process); when the kernel refuses it, reads go through the memory file.
    vm: bool,
}

impl Reader {
    fn mem(&mut self, pid: u32) -> Option<&File> {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.mem.entry(pid) {
            slot.insert(File::open(format!("/proc/{pid}/mem")).ok()?);
        }
        self.mem.get(&pid)
    }

    fn bytes(&mut self, pid: u32, addr: u64, len: usize) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; len];
        if self.vm {
            let remote = [nix::sys::uio::RemoteIoVec {
                base: usize::try_from(addr).ok()?,
                len,
            }];
            let local = &mut [std::io::IoSliceMut::new(&mut buf)];
            let pid_t = nix::unistd::Pid::from_raw(i32::try_from(pid).ok()?);
            match nix::sys::uio::process_vm_readv(pid_t, local, &remote) {
                Ok(n) => {
                    buf.truncate(n);
                    return Some(buf);
                }
                // The address is not mapped, or the process is gone: nothing to read, as with the memory file.
                Err(nix::errno::Errno::EFAULT | nix::errno::Errno::ESRCH) => return None,
                Err(_) => self.vm = false,
            }
        }
        let n = self.mem(pid)?.read_at(&mut buf, addr).ok()?;
        buf.truncate(n);
        Some(buf)
    }

    fn string(&mut self, pid: u32, addr: u64) -> Option<String> {
        self.bounded_string(pid, addr, 4096).map(|(s, _)| s)
    }

    /// The NUL-terminated string at `addr`, at most `limit` bytes of it, and its whole length.
    fn bounded_string(&mut self, pid: u32, addr: u64, limit: usize) -> Option<(String, usize)> {
        if addr == 0 {
            return None;
        }
        let mut out = Vec::new();
        let mut len = 0usize;
        let mut at = addr;
        // The kernel caps one argument at MAX_ARG_STRLEN (32 pages): never read further.
        while len < MAX_ARG_STRLEN {
            // Read up to the page end so a string at the end of a mapping does not fail the read.
            let chunk = (4096 - (at % 4096)) as usize;
            let bytes = self.bytes(pid, at, chunk)?;
            if bytes.is_empty() {
                break;
            }
            let end = bytes.iter().position(|b| *b == 0);
            let part = &bytes[..end.unwrap_or(bytes.len())];
            let room = limit.saturating_sub(out.len());
            out.extend_from_slice(&part[..part.len().min(room)]);
            len += part.len();
            if end.is_some() {
                break;
            }
            at += bytes.len() as u64;
        }
        Some((String::from_utf8_lossy(&out).into_owned(), len))
    }

    /// The argument vector, whole up to [`ARGV_LIMIT`] bytes and [`ARGV_MAX`] arguments; beyond that the record
    /// says so: the cut argument ends with a mark, and the original size is returned.
    fn argv(&mut self, pid: u32, addr: u64) -> (Vec<String>, Option<u64>) {
        let mut out = Vec::new();
        let (mut kept, mut total, mut cut) = (0usize, 0u64, false);
        // The pointers, read up to a page end at a time (one read for a usual command line).
        let mut pointers: Vec<u64> = Vec::new();
        for i in 0..ARGV_MAX as u64 + 1 {
            if pointers.len() as u64 <= i {
                let at = addr + i * 8;
                let chunk = ((4096 - (at % 4096)) as usize).clamp(8, 512);
                let Some(bytes) = self.bytes(pid, at, chunk) else {
                    break;
                };
                pointers.extend(
                    bytes
                        .chunks_exact(8)
                        .filter_map(|c| <[u8; 8]>::try_from(c).ok())
                        .map(u64::from_ne_bytes),
                );
                if pointers.len() as u64 <= i {
                    break;
                }
            }
            let ptr = pointers[i as usize];
            if ptr == 0 {
                break;
            }
            if i as usize == ARGV_MAX {
                cut = true;
                out.push(format!("[airlock: more than {ARGV_MAX} arguments]"));
                break;
            }
            let room = ARGV_LIMIT.saturating_sub(kept);
            let (text, len) = self.bounded_string(pid, ptr, room).unwrap_or_default();
            total += len as u64 + 1;
            kept += text.len();
            if len > text.len() {
                cut = true;
                out.push(format!("{text}[airlock: cut, {len} bytes in all]"));
            } else {
                out.push(text);
            }
        }
        (out, cut.then_some(total))
    }
}

/// The kernel's cap on one argument's length.
const MAX_ARG_STRLEN: usize = 32 * 4096;
/// Bytes of an exec's arguments kept in the record.
pub const ARGV_LIMIT: usize = 64 * 1024;
/// Arguments of one exec kept in the record.
pub const ARGV_MAX: usize = 1024;

/// How to answer a notification.
enum Answer {
    /// Let the call run as asked.
    Continue,
    /// The call is done here: it returns 0 or fails with this errno.
    Return(i32),
}

/// An IPv4 or IPv6 destination from a sockaddr.
fn inet(bytes: &[u8]) -> Option<std::net::SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]));
    let port = u16::from_be_bytes([*bytes.get(2)?, *bytes.get(3)?]);
    match family {
        libc::AF_INET => {
            let o: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            Some((std::net::Ipv4Addr::from(o), port).into())
        }
        libc::AF_INET6 => {
            let o: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            Some((std::net::Ipv6Addr::from(o), port).into())
        }
        _ => None,
    }
}

/// A connect or sendto while the egress proxy serves the run. Loopback calls run as asked (a client of the proxy
/// is registered first, to tie its connection to its pid); a TCP connect elsewhere is either refused or done here
/// against the proxy's listener with the original destination registered, so the program gets an ordinary
/// connected socket whatever it thinks of proxy variables; UDP elsewhere is refused.
fn egress_connect(
    egress: &airlock_egress::Egress,
    pid: u32,
    nspid: i32,
    fd: i32,
    dest: std::net::SocketAddr,
    is_connect: bool,
) -> Answer {
    let ip = airlock_egress::to_canonical(dest.ip());
    let sock = get_fd(pid, fd);
    let stream = sock.as_ref().is_some_and(|s| {
        nix::sys::socket::getsockopt(s, nix::sys::socket::sockopt::SockType)
            .is_ok_and(|t| t == nix::sys::socket::SockType::Stream)
    });
    // A loopback port the user named (`--allow-net 127.0.0.1:8080`) is the host's service: sent there through the
    // proxy like a remote connect. Every other loopback connect stays inside the sandbox.
    let host_service = stream
        && is_connect
        && dest.port() != airlock_egress::PROXY_PORT
        && egress.policy().loopback_service(ip, dest.port()).is_some();
    if ip.is_loopback() && !host_service {
        if stream && is_connect && dest.port() == airlock_egress::PROXY_PORT {
            if let Some(port) = sock.as_ref().and_then(|s| bind_loopback(s, dest.is_ipv6())) {
                egress.capture(
                    port,
                    airlock_egress::Captured {
                        pid: nspid,
                        target: None,
                    },
                );
            }
        }
        return Answer::Continue;
    }
    let decision = if host_service {
        airlock_egress::ConnectDecision::Capture
    } else {
        egress.decide_connect(nspid, ip, dest.port(), stream && is_connect)
    };
    match decision {
        airlock_egress::ConnectDecision::Refuse => Answer::Return(if stream {
            libc::ECONNREFUSED
        } else {
            libc::ENETUNREACH
        }),
        airlock_egress::ConnectDecision::Capture => {
            let Some(sock) = sock else {
                return Answer::Return(libc::ECONNREFUSED);
            };
            let Some(port) = bind_loopback(&sock, dest.is_ipv6()) else {
                return Answer::Return(libc::ECONNREFUSED);
            };
            egress.capture(
                port,
                airlock_egress::Captured {
                    pid: nspid,
                    target: Some((ip, dest.port())),
                },
            );
            let proxy = loopback(dest.is_ipv6(), airlock_egress::PROXY_PORT);
            match nix::sys::socket::connect(sock.as_raw_fd(), &proxy) {
                Ok(()) => Answer::Return(0),
                Err(e) => Answer::Return(e as i32),
            }
        }
    }
}

/// A copy of descriptor `fd` of process `pid` (the same open socket).
pub(crate) fn get_fd(pid: u32, fd: i32) -> Option<OwnedFd> {
    // A notification names the thread that made the call; pidfd_open takes a process (its thread group leader),
    // and the descriptor table is the whole process's.
    let pidfd = pidfd_open(pid, 0)
        .or_else(|_| {
            let tgid = proc_status(pid)
                .lines()
                .find_map(|l| l.strip_prefix("Tgid:"))
                .and_then(|v| v.trim().parse::<u32>().ok())
                .ok_or(libc::ESRCH)?;
            pidfd_open(tgid, 0)
        })
        .ok()?;
    // SAFETY: plain syscall with integer arguments; the result is checked before use.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) } as i32;
    // SAFETY: a descriptor just received, owned here alone.
    (got >= 0).then(|| unsafe { OwnedFd::from_raw_fd(got) })
}

/// The errno of the last failed system call.
fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `pidfd_open`: a pidfd of process `pid` (with [`PIDFD_THREAD`], of thread `pid`), or the errno.
fn pidfd_open(pid: u32, flags: libc::c_uint) -> Result<OwnedFd, i32> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) } as i32;
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: the descriptor was just opened and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The pidfs inode number of a pidfd's process or thread (Linux 6.9+; see [`Proc::ino`]).
fn pidfd_ino(pidfd: &OwnedFd) -> Option<u64> {
    nix::sys::stat::fstat(pidfd)
        .ok()
        .map(|st| st.st_ino)
        .filter(|i| *i != 0)
}

/// The thread group id in pid namespace `ns` of host pid `pid` (`NS_GET_TGID_IN_PIDNS`), or the errno.
fn tgid_in_ns(ns: &OwnedFd, pid: u32) -> Result<i32, i32> {
    // SAFETY: the namespace ioctl takes the pid by value and returns the translated one or -1.
    let r = unsafe { libc::ioctl(ns.as_raw_fd(), NS_GET_TGID_IN_PIDNS, libc::c_ulong::from(pid)) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r)
    }
}

/// The sandbox's loopback address for a socket of this family (IPv4-mapped for IPv6 sockets).
fn loopback(v6: bool, port: u16) -> nix::sys::socket::SockaddrStorage {
    let ip = std::net::Ipv4Addr::LOCALHOST;
    let addr: std::net::SocketAddr = if v6 {
        (ip.to_ipv6_mapped(), port).into()
    } else {
        (ip, port).into()
    };
    addr.into()
}

/// Binds a socket to a loopback port (unless the program bound it already) and returns its local port.
fn bind_loopback(sock: &OwnedFd, v6: bool) -> Option<u16> {
    use nix::sys::socket::{bind, getsockname, SockaddrIn, SockaddrIn6, SockaddrStorage};
    let fd = sock.as_raw_fd();
    let _ = bind(fd, &loopback(v6, 0));
    let local: SockaddrStorage = getsockname(fd).ok()?;
    local
        .as_sockaddr_in()
        .map(SockaddrIn::port)
        .or_else(|| local.as_sockaddr_in6().map(SockaddrIn6::port))
        .filter(|p| *p != 0)
}

/// `/proc/PID/status`, read with one system call into a buffer of its size (it is generated anew at each read, and
/// reading it as a file of unknown size costs a size probe and several reads): on the path of every new process.
fn proc_status(pid: u32) -> String {
    use std::io::Read as _;
    let Ok(mut file) = File::open(format!("/proc/{pid}/status")) else {
        return String::new();
    };
    let mut buf = vec![0u8; 8192];
    let mut len = 0;
    // One read gives it all (it is a few kilobytes); more only if it ever outgrows the buffer.
    while let Ok(n) = file.read(&mut buf[len..]) {
        if n == 0 {
            break;
        }
        len += n;
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        } else {
            break;
        }
    }
    buf.truncate(len);
    String::from_utf8_lossy(&buf).into_owned()
}

/// What the recorder knows of a thread that made a call.
#[derive(Clone, Copy, Debug, Default)]
struct Proc {
    /// Its process's pid inside the sandbox.
    nspid: i32,
    /// Its parent's pid inside the sandbox (0 when the parent is outside it).
    ppid: i32,
    /// Its thread group leader's host pid.
    tgid: u32,
    /// Its parent's host pid.
    ppid_host: u32,
    /// The thread's pidfs inode number (Linux 6.9+): unique for the system's life and handed out in creation order,
    /// so it tells a process from a later one given the same pid, and which of two processes is older. 0: unknown.
    ino: u64,
    /// The parent process's pidfs inode number (0: unknown).
    ppid_ino: u64,
}

/// A process's ids as the sandbox sees them (its thread group's pid, its parent's pid) and its thread group leader's
/// host pid, from `/proc`; a parent already known (in `known`) is not read again.
fn ns_pid(pid: u32, known: &HashMap<u32, Proc>) -> Proc {
    let status = proc_status(pid);
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    };
    // The thread group (the process), not the thread: an exec from any thread replaces the whole process, and an
    // exit_group from any thread ends it.
    let nspid = field("NStgid:")
        .or_else(|| field("NSpid:"))
        .and_then(|v| v.last().and_then(|p| p.parse().ok()))
        .unwrap_or(0);
    let ppid_host: u32 = field("PPid:")
        .and_then(|v| v.first().and_then(|p| p.parse().ok()))
        .unwrap_or(0);
    let ppid = if ppid_host == 0 {
        0
    } else if let Some(parent) = known.get(&ppid_host) {
        parent.nspid
    } else {
        proc_status(ppid_host)
            .lines()
            .find_map(|l| l.strip_prefix("NSpid:"))
            .and_then(|v| v.split_whitespace().last().and_then(|p| p.parse().ok()))
            .unwrap_or(0)
    };
    let tgid = field("Tgid:")
        .and_then(|v| v.first().and_then(|p| p.parse().ok()))
        .unwrap_or(pid);
    Proc {
        nspid,
        ppid,
        tgid,
        ppid_host,
        ino: 0,
        ppid_ino: 0,
    }
}

/// `PIDFD_GET_INFO` (Linux 6.13): a process's pid, thread group and parent, in the caller's pid namespace.
const PIDFD_GET_INFO: libc::c_ulong = 0xc040_ff0b;
const PIDFD_INFO_PID: u64 = 1;
/// `pidfd_open` of a thread rather than a process (Linux 6.9).
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;
/// `NS_GET_TGID_IN_PIDNS` (Linux 6.11): the thread group id, in a pid namespace, of a pid of the caller's.
const NS_GET_TGID_IN_PIDNS: libc::c_ulong = 0x8004_b709;

#[repr(C)]
#[derive(Default)]
struct PidfdInfo {
    mask: u64,
    cgroupid: u64,
    pid: u32,
    tgid: u32,
    ppid: u32,
    creds: [u32; 8],
    spare: u32,
}

/// Finds a process's ids as the sandbox sees them. On Linux 6.13 and later, with a few calls that build no text and
/// touch no `/proc` entry (a new process's first `/proc` read allocates its directory and was most of the cost of
/// recording an exec); on older kernels from `/proc/PID/status` ([`ns_pid`]).
struct Ids {
    /// The sandbox's pid namespace, once known; `None` after a kernel refused the calls (then `/proc` is read).
    pidns: Option<OwnedFd>,
    fast: bool,
    /// Fewer pids than this handed out since a process was created, and its pid cannot have come round to another
    /// process yet (the kernel hands pids out in a cycle up to `pid_max`): a quarter of `pid_max`.
    reuse_gap: u64,
}

impl Ids {
    fn new() -> Ids {
        let pid_max = fs_err::read_to_string("/proc/sys/kernel/pid_max")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        Ids {
            pidns: None,
            fast: true,
            reuse_gap: pid_max / 4,
        }
    }

    /// What is known of thread `tid` (see [`Proc`]).
    fn of(&mut self, tid: u32, known: &HashMap<u32, Proc>) -> Proc {
        if self.fast {
            if let Some(ids) = self.fast_ids(tid, known) {
                return ids;
            }
        }
        ns_pid(tid, known)
    }

    /// The pidfs inode number of thread `tid` (see [`Proc::ino`]), when the kernel gives one.
    fn ino(&self, tid: u32) -> Option<u64> {
        if !self.fast {
            return None;
        }
        thread_ino(tid)
    }

    fn fast_ids(&mut self, tid: u32, known: &HashMap<u32, Proc>) -> Option<Proc> {
        if self.pidns.is_none() {
            match File::open(format!("/proc/{tid}/ns/pid")) {
                Ok(f) => self.pidns = Some(OwnedFd::from(f)),
                Err(_) => {
                    self.fast = false;
                    return None;
                }
            }
        }
        let ns = self.pidns.as_ref()?;
        // A call refused for another reason than the thread being gone means a kernel without it: `/proc` from then.
        fn fast<T>(flag: &mut bool, r: Result<T, i32>) -> Option<T> {
            r.map_err(|errno| *flag = errno == libc::ESRCH).ok()
        }
        let pidfd = fast(&mut self.fast, pidfd_open(tid, PIDFD_THREAD))?;
        let mut info = PidfdInfo {
            mask: PIDFD_INFO_PID,
            ..PidfdInfo::default()
        };
        // SAFETY: a pidfd_info of the kernel's first layout (64 bytes), which the ioctl number names.
        let got = unsafe { libc::ioctl(pidfd.as_raw_fd(), PIDFD_GET_INFO, &mut info) };
        fast(&mut self.fast, if got == 0 { Ok(()) } else { Err(errno()) })?;
        let nspid = fast(&mut self.fast, tgid_in_ns(ns, tid))?;
        let ino = pidfd_ino(&pidfd).unwrap_or(0);
        // The parent as it is now: what is known under its pid may be of an earlier process given the same pid,
        // unless too few pids were handed out since that one was created (pidfs inode numbers count them).
        let parent = known.get(&info.ppid);
        let ppid_ino = match parent {
            _ if info.ppid == 0 => 0,
            Some(p) if p.ino != 0 && ino > p.ino && ino - p.ino < self.reuse_gap => p.ino,
            _ => thread_ino(info.ppid).unwrap_or(0),
        };
        let ppid = match parent {
            _ if info.ppid == 0 => 0,
            Some(p) if p.ino != 0 && p.ino == ppid_ino => p.nspid,
            _ => tgid_in_ns(ns, info.ppid).unwrap_or(0),
        };
        Some(Proc {
            nspid,
            ppid,
            tgid: info.tgid,
            ppid_host: info.ppid,
            ino,
            ppid_ino,
        })
    }
}

/// The pidfs inode number of thread `tid` (Linux 6.9+).
fn thread_ino(tid: u32) -> Option<u64> {
    pidfd_ino(&pidfd_open(tid, PIDFD_THREAD).ok()?)
}

/// The pidfs inode number of a thread started now: every process created after this call has a higher one.
/// `u64::MAX` when it cannot be had (then no process counts as created after it).
fn pid_counter_now() -> u64 {
    let (tx, rx) = std::sync::mpsc::channel();
    let (hold, wait) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("airlock-mark".into())
        .spawn(move || {
            let _ = tx.send(nix::unistd::gettid().as_raw());
            let _ = wait.recv();
        });
    let Ok(handle) = spawned else {
        return u64::MAX;
    };
    let ino = rx
        .recv()
        .ok()
        .and_then(|tid| u32::try_from(tid).ok())
        .and_then(thread_ino);
    drop(hold);
    let _ = handle.join();
    ino.unwrap_or(u64::MAX)
}

/// Working directories for the record, read from `/proc/PID/cwd` only when they cannot be known otherwise: the
/// first read of a new process's `/proc` entry costs more than the rest of recording its exec. A process's working
/// directory is its parent's at the moment it was created, and changes only by `chdir` or `fchdir` (`chroot`,
/// `pivot_root`, `setns` and `unshare` are denied), which the recorder sees. So a new process takes its parent's
/// known directory (learnt since the last `chdir`) and the process was created after that `chdir` returned (by
/// pidfs inode numbers, which follow creation order). Every `chdir` forgets what was known,
/// and until the caller's next call shows it returned, every directory is read from `/proc` and not kept. What is
/// kept is a process's (its main thread's) and carries the process's pidfs inode number, so it is never taken for
/// a later process given the same pid; other threads, and kernels without pidfs inode numbers, read `/proc`.
#[derive(Default)]
struct Cwds {
    /// By host pid of a process: its directory, and the process's pidfs inode number; all learnt since the last
    /// `chdir`.
    known: HashMap<u32, (String, u64)>,
    /// Processes with a pidfs inode number above this were created after the last `chdir` returned.
    after_chdir: u64,
    /// Threads whose `chdir` or `fchdir` may not have taken effect yet.
    pending: BTreeSet<u32>,
}

impl Cwds {
    /// The working directory of thread `tid`.
    fn of(&mut self, tid: u32, proc_: &Proc) -> String {
        if !self.pending.is_empty() || tid != proc_.tgid || proc_.ino == 0 {
            return link(format!("/proc/{tid}/cwd"));
        }
        if let Some((cwd, ino)) = self.known.get(&proc_.tgid) {
            if *ino == proc_.ino {
                return cwd.clone();
            }
        }
        let inherited = (proc_.ino > self.after_chdir && proc_.ppid_ino != 0)
            .then(|| self.known.get(&proc_.ppid_host))
            .flatten()
            .filter(|(_, ino)| *ino == proc_.ppid_ino)
            .map(|(cwd, _)| cwd.clone());
        let cwd = inherited.unwrap_or_else(|| link(format!("/proc/{tid}/cwd")));
        self.known.insert(proc_.tgid, (cwd.clone(), proc_.ino));
        cwd
    }

    /// Thread `tid` calls `chdir` or `fchdir`.
    fn chdir(&mut self, tid: u32) {
        self.pending.insert(tid);
        self.known.clear();
    }

    /// Thread `tid` makes a call: any `chdir` it made before has returned.
    fn called(&mut self, tid: u32) {
        if self.pending.remove(&tid) && self.pending.is_empty() {
            self.known.clear();
            self.after_chdir = pid_counter_now();
        }
    }

    /// The process is gone (its pid may be given to another).
    fn forget(&mut self, tgid: u32) {
        self.known.remove(&tgid);
    }
}

fn link(path: String) -> String {
    std::fs::read_link(path)
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

fn absolute(pid: u32, dirfd: i32, path: &str, cwd: impl FnOnce() -> String) -> String {
    if path.starts_with('/') {
        return path.to_owned();
    }
    let base = if dirfd == libc::AT_FDCWD {
        cwd()
    } else {
        link(format!("/proc/{pid}/fd/{dirfd}"))
    };
    if path.is_empty() {
        return base;
    }
    format!("{}/{}", base.trim_end_matches('/'), path)
}

/// What a connect or sendto to this address is, for the record (no network: everything but loopback is denied).
fn attempt_of(bytes: &[u8]) -> Option<Attempt> {
    if let Some(dest) = inet(bytes) {
        let (decision, reason) = if dest.ip().is_loopback() {
            (NetDecision::Local, "the sandbox's own loopback")
        } else if dest.ip().is_unspecified() {
            // 0.0.0.0 or [::] as a destination means this host (a server's own address probe, as glibc's
            // getaddrinfo makes for a passive socket): the sandbox's loopback, not the network.
            (
                NetDecision::Local,
                "this host (the unspecified address): the sandbox's own loopback",
            )
        } else {
            (NetDecision::Denied, "no network: the sandbox has only loopback")
        };
        let protocol = if dest.is_ipv4() { "tcp/udp" } else { "tcp6/udp6" };
        return Some((
            protocol.into(),
            dest.to_string(),
            Some(dest.port()),
            decision,
            reason.into(),
        ));
    }
    if i32::from(u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?])) != libc::AF_UNIX {
        return None;
    }
    let raw = &bytes[2..];
    let path = if raw.first() == Some(&0) {
        format!("@{}", String::from_utf8_lossy(&raw[1..]).trim_end_matches('\0'))
    } else {
        String::from_utf8_lossy(raw.split(|b| *b == 0).next().unwrap_or_default()).into_owned()
    };
    Some((
        "unix".into(),
        path,
        None,
        NetDecision::Local,
        "a socket inside the sandbox".into(),
    ))
}

/// The sandbox's root directory, as seen through `/proc/PID/root` of one of its processes (they all share it: the
/// root is built before the command starts and `chroot` is denied).
fn sandbox_root(pid: u32) -> Option<OwnedFd> {
    nix::fcntl::open(
        format!("/proc/{pid}/root").as_str(),
        nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .ok()
}

/// Opens `path` (absolute, inside the sandbox) in the sandbox's root with `openat2`, refusing every symbolic link:
/// the path is never resolved against the supervisor's own root, whatever the sandbox puts in it.
fn open_in_root(root: &OwnedFd, path: &str, flags: i32) -> std::io::Result<OwnedFd> {
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
    const RESOLVE_NO_SYMLINKS: u64 = 0x04;
    const RESOLVE_IN_ROOT: u64 = 0x10;
    let c_path = std::ffi::CString::new(path).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: a valid directory descriptor, a NUL-terminated path and an open_how of the kernel's layout and size.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            c_path.as_ptr(),
            &how,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just opened and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether `path` (absolute, inside the sandbox) goes through a symbolic link: one `openat2` that refuses links,
/// resolved in the sandbox's root. A path that does not exist has no link before its missing part.
fn has_links(root: &OwnedFd, path: &str) -> bool {
    match open_in_root(root, path, libc::O_PATH) {
        Ok(_) => false,
        Err(e) => e.raw_os_error() == Some(libc::ELOOP),
    }
}

/// Folders searched for the other names of a hard-linked file: its own folder, the workspace's top, the home
/// folder and the credential folders in it.
const HARD_LINK_FOLDERS: &[&str] = &[
    "/workspace",
    crate::SANDBOX_HOME,
    "/home/sandbox/.ssh",
    "/home/sandbox/.aws",
];
/// Entries read from each folder at most.
const HARD_LINK_ENTRIES: usize = 4096;

/// When `path` (absolute, inside the sandbox, without links) is a regular file with more than one name and another
/// of its names is credential-like, that name: `ln .env stats.cfg; cat stats.cfg` reads `.env`. Only files in the
/// places a run writes are looked at (not the read-only system folders), and only where [`HARD_LINK_FOLDERS`] and the
/// file's own folder list the other name; every folder is opened in the sandbox's root, never following a link.
fn hard_link_secret(root: &OwnedFd, path: &str) -> Option<String> {
    if !["/workspace/", "/tmp/", "/home/", "/skill/"]
        .iter()
        .any(|p| path.starts_with(p))
        || airlock_types::observe::credential_like(path)
    {
        return None;
    }
    let file = open_in_root(root, path, libc::O_PATH).ok()?;
    let st = nix::sys::stat::fstat(&file).ok()?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_nlink < 2 {
        return None;
    }
    let own = path
        .rsplit_once('/')
        .map_or("/", |(d, _)| if d.is_empty() { "/" } else { d });
    let mut folders = vec![own];
    folders.extend(HARD_LINK_FOLDERS.iter().copied().filter(|f| *f != own));
    for folder in folders {
        let Ok(fd) = open_in_root(root, folder, libc::O_RDONLY | libc::O_DIRECTORY) else {
            continue;
        };
        let Ok(mut dir) = nix::dir::Dir::from_fd(fd) else {
            continue;
        };
        for entry in dir.iter().take(HARD_LINK_ENTRIES).flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let candidate = format!("{}/{name}", folder.trim_end_matches('/'));
            if candidate == path || !airlock_types::observe::credential_like(&candidate) {
                continue;
            }
            let same = open_in_root(root, &candidate, libc::O_PATH)
                .ok()
                .and_then(|f| nix::sys::stat::fstat(&f).ok())
                .is_some_and(|o| o.st_ino == st.st_ino && o.st_dev == st.st_dev);
            if same {
                return Some(candidate);
            }
        }
    }
    None
}

/// The path `path` (absolute, inside the sandbox) reaches when it goes through symbolic links, resolved as the kernel
/// would inside the sandbox (absolute targets from its root); `None` when no component is a link, which costs one
/// `openat2` ([`has_links`]). Only a path with links is walked component by component.
fn resolve_links(root: &OwnedFd, path: &str) -> Option<String> {
    if !has_links(root, path) {
        return None;
    }
    let mut todo: Vec<String> = path
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect();
    todo.reverse();
    let mut done: Vec<String> = Vec::new();
    let mut hops = 0;
    while let Some(part) = todo.pop() {
        match part.as_str() {
            "." => continue,
            ".." => {
                done.pop();
                continue;
            }
            _ => {}
        }
        // Relative to the root descriptor, through components already known not to be links.
        let here = if done.is_empty() {
            part.clone()
        } else {
            format!("{}/{part}", done.join("/"))
        };
        let Ok(stat) = nix::sys::stat::fstatat(root, here.as_str(), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        else {
            // Not there (yet): the rest is taken as written.
            done.push(part);
            done.extend(todo.drain(..).rev());
            break;
        };
        if stat.st_mode & libc::S_IFMT != libc::S_IFLNK {
            done.push(part);
            continue;
        }
        hops += 1;
        if hops > 40 {
            return None;
        }
        let target = nix::fcntl::readlinkat(root, here.as_str()).ok()?;
        let target = target.to_string_lossy();
        if target.starts_with('/') {
            done.clear();
        }
        todo.extend(
            target
                .split('/')
                .filter(|c| !c.is_empty())
                .rev()
                .map(str::to_owned),
        );
    }
    Some(format!("/{}", done.join("/")))
}

/// Size of `struct mmsghdr` on 64-bit Linux: a 56-byte msghdr and a 4-byte length, padded.
const MMSGHDR_SIZE: u64 = 64;

/// The caller of a connect, sendto or sendmsg.
struct AddressCall {
    pid: u32,
    nspid: i32,
    fd: i32,
    is_connect: bool,
    t_ms: u64,
}

/// A call that names a destination address (`bytes`, a sockaddr): recorded, and with egress decided by it.
fn address_call(
    rec: &mut Recording,
    egress: Option<&airlock_egress::Egress>,
    call: &AddressCall,
    bytes: &[u8],
) -> Answer {
    match (egress, inet(bytes)) {
        (Some(egress), Some(dest)) => {
            let answer = egress_connect(egress, call.pid, call.nspid, call.fd, dest, call.is_connect);
            if let Answer::Continue = answer {
                if let Some(attempt) = attempt_of(bytes) {
                    rec.push_attempt(attempt, call.t_ms, call.nspid);
                }
            }
            answer
        }
        (None, Some(dest)) if dest.ip().is_loopback() && dest.port() == 53 => {
            // Nothing answers DNS in a sandbox without network: a name lookup that goes nowhere.
            rec.push_attempt(
                (
                    "dns".into(),
                    dest.to_string(),
                    Some(53),
                    NetDecision::Denied,
                    "a name lookup: nothing answers DNS in the sandbox (no network)".into(),
                ),
                call.t_ms,
                call.nspid,
            );
            Answer::Continue
        }
        _ => {
            if let Some(attempt) = attempt_of(bytes) {
                rec.push_attempt(attempt, call.t_ms, call.nspid);
            }
            Answer::Continue
        }
    }
}

/// Polls the listener: the number of ready descriptors (negative on an error) and the events.
fn poll_listener(fd: i32, timeout_ms: i32) -> (i32, i16) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
    (n, pfd.revents)
}

/// Whether the listener has a notification within `timeout_ms` (false on a timeout, an error or a hang-up).
fn wait_readable(fd: i32, timeout_ms: i32) -> bool {
    let (n, revents) = poll_listener(fd, timeout_ms);
    n > 0 && revents & libc::POLLIN != 0
}

/// Whether no process is left on the listener's filter (and nothing is pending).
fn hung_up(fd: i32) -> bool {
    let (n, revents) = poll_listener(fd, 0);
    n < 0 || revents & (libc::POLLHUP | libc::POLLERR) != 0 && revents & libc::POLLIN == 0
}

/// Runs until the listener reports that no process is left, or `stop` is set.
pub fn record(
    listener: OwnedFd,
    started: Instant,
    stop: Arc<AtomicBool>,
    pin_cpu: Option<usize>,
    egress: Option<airlock_egress::Egress>,
    events: Option<EventSink>,
) -> Recording {
    if let Some(cpu) = pin_cpu {
        let mut set = nix::sched::CpuSet::new();
        if set.set(cpu).is_ok() {
            let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
        }
    }
    let fd = listener.as_raw_fd();
    // Ask the kernel to hand the CPU straight to the recorder and back (Linux 6.6+): with the recorder pinned next to
    // the command this keeps a notification to a few microseconds. Older kernels refuse it; recording still works.
    // SAFETY: the flag argument is passed by value as the kernel expects.
    let sync = unsafe { libc::ioctl(fd, NOTIF_SET_FLAGS, FD_SYNC_WAKE_UP) } == 0;
    let mut pids: HashMap<u32, Proc> = HashMap::new();
    let mut ids = Ids::new();
    let mut cwds = Cwds::default();
    let mut rec = Recording {
        events,
        ..Recording::default()
    };
    let mut reader = Reader {
        mem: HashMap::new(),
        vm: true,
    };
    let mut last_exec: HashMap<i32, usize> = HashMap::new();
    let mut root: Option<OwnedFd> = None;
    let mut seen_read = BTreeSet::new();
    let mut seen_written = BTreeSet::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if !sync && !wait_readable(fd, 100) {
            if stop.load(Ordering::Relaxed) || hung_up(fd) {
                break;
            }
            continue;
        }
        let mut notif = Notif::default();
        // SAFETY: a zeroed notification buffer of the kernel's layout.
        if unsafe { libc::ioctl(fd, NOTIF_RECV, &mut notif) } != 0 {
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                // A notification withdrawn (its process died), or, waiting in the call itself, no process left.
                Some(libc::ENOENT) => {
                    if hung_up(fd) {
                        break;
                    }
                    continue;
                }
                _ => break,
            }
        }
        let t_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let pid = notif.pid;
        let args = notif.data.args;
        let nr = i64::from(notif.data.nr);
        let (mut known, fresh) = match pids.get(&pid) {
            Some(known) => (*known, false),
            None => {
                let known = ids.of(pid, &pids);
                pids.insert(pid, known);
                (known, true)
            }
        };
        cwds.called(pid);
        let nspid = known.nspid;
        let mut answer = Answer::Continue;
        match nr {
            libc::SYS_execve | libc::SYS_execveat => {
                // A pid the kernel gave again to a new process (the earlier one was killed, or was a thread that
                // ended) is known by its pidfs inode number: what was known of the earlier one is dropped.
                if !fresh && known.ino != 0 && ids.ino(pid) != Some(known.ino) {
                    cwds.forget(known.tgid);
                    pids.remove(&pid);
                    known = ids.of(pid, &pids);
                    pids.insert(pid, known);
                }
                let Proc {
                    nspid, ppid, tgid, ..
                } = known;
                let (path, argv_ptr) = if nr == libc::SYS_execve {
                    (reader.string(pid, args[0]).unwrap_or_default(), args[1])
                } else {
                    let p = reader.string(pid, args[1]).unwrap_or_default();
                    (
                        absolute(pid, args[0] as i32, &p, || cwds.of(pid, &known)),
                        args[2],
                    )
                };
                let (argv, argv_bytes) = reader.argv(pid, argv_ptr);
                let cwd = cwds.of(pid, &known);
                // The process image is replaced: its memory handle is stale after this. Its ids stay (the next
                // notification, often its exit, needs no /proc read), unless a thread made the exec and so became the
                // process: then both the thread's and the old leader's are stale.
                for p in [pid, tgid] {
                    reader.mem.remove(&p);
                    if pid != tgid {
                        pids.remove(&p);
                    }
                }
                // Always kept: installs, programs the run wrote or downloaded, anything outside the system folders.
                let important = airlock_types::observe::install_manager(&path, &argv).is_some()
                    || seen_written.contains(&path)
                    || !["/usr/", "/bin/", "/sbin/", "/lib"]
                        .iter()
                        .any(|p| path.starts_with(p));
                let event = ExecEvent {
                    t_ms,
                    pid: nspid,
                    ppid,
                    path,
                    argv,
                    argv_bytes,
                    cwd,
                    exit_code: None,
                };
                if let Some(i) = rec.keep_exec(event, important) {
                    last_exec.insert(nspid, i);
                }
            }
            libc::SYS_chdir | libc::SYS_fchdir => cwds.chdir(pid),
            libc::SYS_exit_group => {
                cwds.forget(known.tgid);
                if let Some(i) = last_exec.get(&nspid) {
                    let exit_code = (args[0] & 0xff) as i32;
                    rec.timeline[*i].exit_code = Some(exit_code);
                    if let Some(sink) = &rec.events {
                        sink.send(LiveEvent::Exit {
                            pid: nspid,
                            t_ms,
                            exit_code,
                        });
                    }
                }
                reader.mem.remove(&pid);
                pids.remove(&pid);
            }
            libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 | libc::SYS_creat => {
                let (dirfd, path_ptr, flags) = match nr {
                    libc::SYS_open => (libc::AT_FDCWD, args[0], args[1]),
                    libc::SYS_creat => (libc::AT_FDCWD, args[0], (libc::O_CREAT | libc::O_WRONLY) as u64),
                    libc::SYS_openat2 => {
                        let how = reader.bytes(pid, args[2], 8).unwrap_or_default();
                        let flags = <[u8; 8]>::try_from(how.as_slice())
                            .map(u64::from_ne_bytes)
                            .unwrap_or(0);
                        (args[0] as i32, args[1], flags)
                    }
                    _ => (args[0] as i32, args[1], args[2]),
                };
                if let Some(p) = reader.string(pid, path_ptr) {
                    let full = absolute(pid, dirfd, &p, || cwds.of(pid, &known));
                    let write =
                        flags as i32 & (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) != 0;
                    let seen = if write { &mut seen_written } else { &mut seen_read };
                    if !seen.contains(&full) {
                        // A read or write through a symbolic link counts as what it reached.
                        if root.is_none() {
                            root = sandbox_root(pid);
                        }
                        let resolved = root
                            .as_ref()
                            .and_then(|r| resolve_links(r, &full).or_else(|| hard_link_secret(r, &full)));
                        let judged = resolved.as_deref().unwrap_or(&full);
                        let important = if write {
                            airlock_types::observe::startup_or_hook(judged)
                                || airlock_types::observe::credential_like(judged)
                                || !["/workspace/", "/tmp/", "/dev/", "/proc/"]
                                    .iter()
                                    .any(|p| judged.starts_with(p))
                        } else {
                            airlock_types::observe::credential_like(judged)
                        };
                        let access = FileAccess {
                            path: full.clone(),
                            resolved,
                            pid: nspid,
                            t_ms,
                        };
                        if rec.keep_file(write, access, important) {
                            seen.insert(full);
                        }
                    }
                }
            }
            libc::SYS_connect | libc::SYS_sendto => {
                let (addr, len) = if nr == libc::SYS_connect {
                    (args[1], args[2])
                } else {
                    (args[4], args[5])
                };
                let bytes = reader
                    .bytes(pid, addr, usize::try_from(len.min(128)).unwrap_or(0))
                    .unwrap_or_default();
                let call = AddressCall {
                    pid,
                    nspid,
                    fd: args[0] as i32,
                    is_connect: nr == libc::SYS_connect,
                    t_ms,
                };
                answer = address_call(&mut rec, egress.as_ref(), &call, &bytes);
            }
            libc::SYS_sendmsg | libc::SYS_sendmmsg => {
                // Each message's destination (msg_name), when it has one: a datagram sent to an address, or a TCP
                // Fast Open connect. `sendmmsg` carries a vector of `struct mmsghdr` (a msghdr and a length).
                let (count, stride) = if nr == libc::SYS_sendmsg {
                    (1, 0)
                } else {
                    (args[2].min(64), MMSGHDR_SIZE)
                };
                let call = AddressCall {
                    pid,
                    nspid,
                    fd: args[0] as i32,
                    is_connect: false,
                    t_ms,
                };
                for i in 0..count {
                    let Some(header) = reader.bytes(pid, args[1] + i * stride, 16) else {
                        break;
                    };
                    let name = u64::from_ne_bytes(header[0..8].try_into().unwrap_or_default());
                    let name_len = u32::from_ne_bytes(header[8..12].try_into().unwrap_or_default());
                    if name == 0 || name_len == 0 {
                        continue;
                    }
                    let bytes = reader
                        .bytes(pid, name, usize::try_from(name_len.min(128)).unwrap_or(0))
                        .unwrap_or_default();
                    // Every destination is recorded; the call is refused if any of them is.
                    if let Answer::Return(errno) = address_call(&mut rec, egress.as_ref(), &call, &bytes) {
                        if let Answer::Continue = answer {
                            answer = Answer::Return(errno);
                        }
                    }
                }
            }
            _ => {}
        }
        let resp = match answer {
            Answer::Continue => Resp {
                id: notif.id,
                val: 0,
                error: 0,
                flags: FLAG_CONTINUE,
            },
            Answer::Return(errno) => Resp {
                id: notif.id,
                val: 0,
                error: -errno,
                flags: 0,
            },
        };
        // SAFETY: a response of the kernel's layout for a notification we received.
        unsafe { libc::ioctl(fd, NOTIF_SEND, &resp) };
    }
    rec
}
