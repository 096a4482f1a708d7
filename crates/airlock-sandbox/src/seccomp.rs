//! The seccomp filters, built with seccompiler and installed in this order:
//!
//! 1. a guard that kills the process on any x32-ABI system call (seccompiler's own arch check kills any other
//!    architecture);
//! 2. the deny list: the kernel surface a skill has no use for fails with EPERM;
//! 3. `clone3` fails with ENOSYS, so the C library falls back to `clone`, whose namespace flags filter 2 can see;
//! 4. the recorder: execs, opens, connects and exits go to the supervisor by user notification, which records
//!    them and lets them continue. This filter is the only one with a listener.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond,
    SeccompFilter, SeccompRule, TargetArch,
};

type R<T> = Result<T, String>;

const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_FILTER_FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// System calls denied outright.
pub const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_uselib,
    libc::SYS_vhangup,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_lookup_dcookie,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    // --cpus pins the command before this filter; it may not widen its own affinity afterwards.
    libc::SYS_sched_setaffinity,
];

/// System calls the recorder sees. (The command hands its listener over without `sendmsg`: the supervisor takes it
/// with `pidfd_getfd`, so `sendmsg` can be recorded like the rest.) `chdir` and `fchdir` tell it when a working
/// directory it knows may have changed.
pub const RECORDED_ALWAYS: &[i64] = &[
    libc::SYS_execve,
    libc::SYS_chdir,
    libc::SYS_fchdir,
    libc::SYS_execveat,
    libc::SYS_connect,
    libc::SYS_exit_group,
    libc::SYS_sendmsg,
    libc::SYS_sendmmsg,
];
pub const RECORDED_FILES: &[i64] = &[
    libc::SYS_open,
    libc::SYS_openat,
    libc::SYS_openat2,
    libc::SYS_creat,
];

const DENIED_SOCKET_FAMILIES: [u64; 16] = [
    3,  // AF_AX25
    4,  // AF_IPX
    5,  // AF_APPLETALK
    8,  // AF_ATMPVC
    9,  // AF_X25
    12, // AF_DECnet
    15, // AF_KEY
    17, // AF_PACKET
    21, // AF_RDS
    26, // AF_LLC
    29, // AF_CAN
    30, // AF_TIPC
    31, // AF_BLUETOOTH
    38, // AF_ALG
    40, // AF_VSOCK
    44, // AF_XDP
];

fn arch() -> TargetArch {
    #[cfg(target_arch = "aarch64")]
    {
        TargetArch::aarch64
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        TargetArch::x86_64
    }
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> R<Cond> {
    Cond::new(arg, len, op, value).map_err(|e| e.to_string())
}

fn rule(conds: Vec<Cond>) -> R<SeccompRule> {
    SeccompRule::new(conds).map_err(|e| e.to_string())
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, on_match: SeccompAction) -> R<BpfProgram> {
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, on_match, arch()).map_err(|e| e.to_string())?;
    BpfProgram::try_from(filter).map_err(|e| e.to_string())
}

fn deny_program() -> R<BpfProgram> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED.iter().map(|nr| (*nr, vec![])).collect();
    // New namespaces through clone.
    let ns_flags = [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ];
    let clone_rules = ns_flags
        .iter()
        .map(|f| rule(vec![cond(0, Len::Qword, Op::MaskedEq(*f as u64), *f as u64)?]))
        .collect::<R<Vec<_>>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    // Terminal injection.
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Len::Dword, Op::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, Len::Dword, Op::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    // Socket families with no use in a skill, and the audit netlink.
    let mut socket_rules = DENIED_SOCKET_FAMILIES
        .iter()
        .map(|fam| rule(vec![cond(0, Len::Dword, Op::Eq, *fam)?]))
        .collect::<R<Vec<_>>>()?;
    socket_rules.push(rule(vec![
        cond(0, Len::Dword, Op::Eq, 16)?,
        cond(2, Len::Dword, Op::Eq, 9)?,
    ])?);
    rules.insert(libc::SYS_socket, socket_rules);
    // Personality tricks (only the default persona and queries are allowed).
    rules.insert(
        libc::SYS_personality,
        vec![rule(vec![
            cond(0, Len::Dword, Op::Ne, 0)?,
            cond(0, Len::Dword, Op::Ne, 0xffff_ffff)?,
        ])?],
    );
    compile(rules, SeccompAction::Errno(libc::EPERM as u32))
}

fn clone3_program() -> R<BpfProgram> {
    let rules = BTreeMap::from([(libc::SYS_clone3, vec![])]);
    compile(rules, SeccompAction::Errno(libc::ENOSYS as u32))
}

fn notify_program(record_files: bool) -> R<BpfProgram> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = RECORDED_ALWAYS.iter().map(|nr| (*nr, vec![])).collect();
    // sendto only with an explicit destination.
    rules.insert(
        libc::SYS_sendto,
        vec![rule(vec![cond(4, Len::Qword, Op::Ne, 0)?])?],
    );
    if record_files {
        rules.extend(RECORDED_FILES.iter().map(|nr| (*nr, vec![])));
    }
    let mut program = compile(rules, SeccompAction::Trace(0))?;
    // seccompiler has no user-notification action: it compiles TRACE, rewritten here. Nothing else uses TRACE.
    for ins in &mut program {
        if ins.code == (libc::BPF_RET | libc::BPF_K) as u16 && ins.k == SECCOMP_RET_TRACE {
            ins.k = SECCOMP_RET_USER_NOTIF;
        }
    }
    Ok(program)
}

fn x32_guard() -> BpfProgram {
    use seccompiler::sock_filter as F;
    let ld_nr = F {
        code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
        jt: 0,
        jf: 0,
        k: 0,
    };
    let jge = F {
        code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
        jt: 0,
        jf: 1,
        k: X32_SYSCALL_BIT,
    };
    let kill = F {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_KILL_PROCESS,
    };
    let allow = F {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_ALLOW,
    };
    vec![ld_nr, jge, kill, allow]
}

fn install(program: &BpfProgram, flags: libc::c_ulong) -> R<libc::c_long> {
    let prog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| "filter too long".to_owned())?,
        // SAFETY: seccompiler's sock_filter has the same repr(C) layout as the kernel's.
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: a valid program pointer for the duration of the call.
    let rc = unsafe { libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &prog) };
    if rc < 0 {
        return Err(format!(
            "install seccomp filter: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(rc)
}

/// Installs every filter; returns the recorder's listener. Needs `no_new_privs` already set.
pub fn apply(record_files: bool) -> R<OwnedFd> {
    install(&x32_guard(), 0)?;
    install(&deny_program()?, 0)?;
    install(&clone3_program()?, 0)?;
    let fd = install(&notify_program(record_files)?, SECCOMP_FILTER_FLAG_NEW_LISTENER)?;
    let fd = i32::try_from(fd).map_err(|_| "bad listener fd".to_owned())?;
    // SAFETY: the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_compile_and_notify_uses_user_notif() {
        assert!(!deny_program().unwrap().is_empty());
        let notify = notify_program(true).unwrap();
        assert!(notify.iter().any(|i| i.k == SECCOMP_RET_USER_NOTIF));
        assert!(!notify.iter().any(|i| i.k == SECCOMP_RET_TRACE));
    }
}
