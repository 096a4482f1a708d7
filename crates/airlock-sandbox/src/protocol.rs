//! Messages between the supervisor and the sandbox's processes over a SOCK_SEQPACKET pair, with file
//! descriptors passed by SCM_RIGHTS. The helper's end is always descriptor 3.

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};

pub const HELPER_FD: RawFd = 3;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Msg {
    /// Supervisor → helper: what to run.
    Config(Box<crate::Config>, u32),
    /// Helper → supervisor: namespaces created, write my id maps.
    Unshared,
    /// Supervisor → helper: maps written.
    Mapped,
    /// Helper → supervisor: host pid of the sandbox's init.
    Init(i32),
    /// Init → supervisor: the root is built; carries the fd of the upper layers' folder.
    Root(Vec<String>),
    /// Init → supervisor: the egress proxy's listener inside the sandbox (carries its fd).
    ProxyListener,
    /// Init → supervisor: the DNS stub's socket inside the sandbox (carries its fd).
    DnsSocket,
    /// Command → supervisor: filters installed; the notification listener is this descriptor of the command, for the
    /// supervisor to take with `pidfd_getfd` (passing it with `sendmsg` would need the notification it enables).
    ListenerAt(i32),
    /// Supervisor → command: the listener is taken; go on.
    Taken,
    /// Step runner → supervisor: step `index` ended (exit code, or the signal that killed it).
    Step {
        index: usize,
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// Supervisor → step runner: the step's end is noted (its output so far counted); start the next one.
    StepNoted,
    /// Init → supervisor: how the command ended, and resource use of the whole run.
    Exit {
        code: Option<i32>,
        signal: Option<i32>,
        max_rss_kb: i64,
        cpu_ms: u64,
    },
    /// Any sandbox process → supervisor: a layer could not be set up.
    Error(String),
}

pub fn send(fd: RawFd, msg: &Msg, pass: Option<RawFd>) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    let iov = [IoSlice::new(&bytes)];
    match pass {
        Some(f) => {
            let fds = [f];
            let cmsgs = [ControlMessage::ScmRights(&fds)];
            sendmsg::<()>(fd, &iov, &cmsgs, MsgFlags::empty(), None).map_err(std::io::Error::from)?;
        }
        // A plain send (the `sendto` system call without an address), which the recorder's filter lets through:
        // the step runner reports on the channel while the command's filter is installed.
        None => {
            nix::sys::socket::send(fd, &bytes, MsgFlags::empty()).map_err(std::io::Error::from)?;
        }
    }
    Ok(())
}

pub fn recv(fd: RawFd) -> std::io::Result<(Msg, Option<OwnedFd>)> {
    let mut buf = vec![0u8; 1 << 16];
    let mut cmsg = nix::cmsg_space!([RawFd; 1]);
    let (len, passed) = {
        let mut iov = [IoSliceMut::new(&mut buf)];
        let msg = recvmsg::<()>(fd, &mut iov, Some(&mut cmsg), MsgFlags::MSG_CMSG_CLOEXEC)
            .map_err(std::io::Error::from)?;
        let mut passed = None;
        for c in msg.cmsgs().map_err(std::io::Error::from)? {
            if let ControlMessageOwned::ScmRights(fds) = c {
                // SAFETY: the kernel just gave us these descriptors; we own them now.
                passed = fds.first().map(|f| unsafe { OwnedFd::from_raw_fd(*f) });
            }
        }
        (msg.bytes, passed)
    };
    if len == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "sandbox channel closed",
        ));
    }
    let msg = serde_json::from_slice(&buf[..len]).map_err(std::io::Error::other)?;
    Ok((msg, passed))
}
