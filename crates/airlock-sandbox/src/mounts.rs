//! Building the sandbox's root: a tmpfs with read-only binds of the system, a minimal /etc and /dev, a fresh
//! /proc, and overlay workspaces whose upper layers sit on the same size-limited tmpfs.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sys::statvfs::{statvfs, FsFlags};

use crate::{Config, Mount, SANDBOX_HOME, SANDBOX_UID};

type R<T> = Result<T, String>;

fn ctx<T, E: std::fmt::Display>(r: Result<T, E>, what: impl FnOnce() -> String) -> R<T> {
    r.map_err(|e| format!("{}: {e}", what()))
}

/// The host folders every sandbox sees, read-only (on a merged-/usr system all but `/usr` are links into it).
/// `/opt` is added only when asked ([`Config::host_opt`]). The whole list is in `docs/record.md`.
const SYSTEM_DIRS: [&str; 7] = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"];
const ETC_FILES: [&str; 9] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/python3.11",
];

/// Bind `src` read-only at `dst`, keeping the flags the kernel locks in a user namespace.
fn bind_ro(src: &Path, dst: &Path) -> R<()> {
    ctx(
        mount(
            Some(src),
            dst,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        ),
        || format!("bind {} at {}", src.display(), dst.display()),
    )?;
    let mut flags =
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    if let Ok(st) = statvfs(dst) {
        let f = st.flags();
        if f.contains(FsFlags::ST_NOEXEC) {
            flags |= MsFlags::MS_NOEXEC;
        }
        if f.contains(FsFlags::ST_NOATIME) {
            flags |= MsFlags::MS_NOATIME;
        }
        if f.contains(FsFlags::ST_NODIRATIME) {
            flags |= MsFlags::MS_NODIRATIME;
        }
        if f.contains(FsFlags::ST_RELATIME) {
            flags |= MsFlags::MS_RELATIME;
        }
    }
    ctx(
        mount(None::<&str>, dst, None::<&str>, flags, None::<&str>),
        || format!("make {} read-only", dst.display()),
    )
}

fn mkdirs(path: &Path) -> R<()> {
    ctx(fs_err::create_dir_all(path), || {
        format!("create {}", path.display())
    })
}

fn touch(path: &Path) -> R<()> {
    if let Some(parent) = path.parent() {
        mkdirs(parent)?;
    }
    ctx(std::fs::File::create(path), || {
        format!("create {}", path.display())
    })
    .map(drop)
}

fn inside(root: &Path, sandbox_path: &Path) -> PathBuf {
    root.join(sandbox_path.strip_prefix("/").unwrap_or(sandbox_path))
}

/// Builds the root under `root` (an empty folder) and pivots into it. Returns the upper-layer folder (opened
/// before it is hidden) and the sandbox paths of the copy-on-write mounts, in order.
pub fn build_root(root: &Path, config: &Config) -> R<(std::os::fd::OwnedFd, Vec<String>)> {
    ctx(
        mount(
            None::<&str>,
            "/",
            None::<&str>,
            MsFlags::MS_REC | MsFlags::MS_PRIVATE,
            None::<&str>,
        ),
        || "make mounts private".to_owned(),
    )?;
    let size = format!(
        "size={},mode=0755,uid={SANDBOX_UID},gid={SANDBOX_UID}",
        config.limits.disk_bytes.max(1 << 20)
    );
    ctx(
        mount(
            Some("tmpfs"),
            root,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(size.as_str()),
        ),
        || "mount the root tmpfs".to_owned(),
    )?;
    let opt = config.host_opt.then_some("/opt");
    for dir in SYSTEM_DIRS.into_iter().chain(opt) {
        let src = Path::new(dir);
        let Ok(meta) = std::fs::symlink_metadata(src) else {
            continue;
        };
        let dst = inside(root, src);
        if meta.file_type().is_symlink() {
            let target = ctx(std::fs::read_link(src), || format!("read link {dir}"))?;
            ctx(std::os::unix::fs::symlink(&target, &dst), || {
                format!("link {dir}")
            })?;
        } else if meta.is_dir() {
            mkdirs(&dst)?;
            bind_ro(src, &dst)?;
        }
    }
    // Names skills assume that the system lacks (`python`), as links to the program they mean.
    let aliases = inside(root, Path::new(crate::ALIASES_DIR));
    mkdirs(&aliases)?;
    for (name, program) in crate::ALIASES {
        let taken = ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .any(|d| std::fs::symlink_metadata(Path::new(d).join(name)).is_ok());
        if !taken && Path::new(program).exists() {
            ctx(std::os::unix::fs::symlink(program, aliases.join(name)), || {
                format!("link {name}")
            })?;
        }
    }
    for (name, script) in crate::SHIMS {
        let taken = ["/usr/local/bin", "/usr/bin", "/bin"]
            .iter()
            .any(|d| std::fs::symlink_metadata(Path::new(d).join(name)).is_ok());
        if !taken {
            let path = aliases.join(name);
            ctx(fs_err::write(&path, script), || format!("write {name}"))?;
            ctx(
                fs_err::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)),
                || format!("mode of {name}"),
            )?;
        }
    }
    // A minimal /etc: the sandbox user, loopback names, and what the dynamic linker and TLS need.
    let etc = root.join("etc");
    mkdirs(&etc)?;
    let files = [
        ("passwd", format!("root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:{SANDBOX_HOME}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")),
        ("group", format!("root:x:0:\nsandbox:x:{SANDBOX_UID}:\nnogroup:x:65534:\n")),
        ("hosts", "127.0.0.1 localhost\n::1 localhost\n127.0.1.1 airlock\n".to_owned()),
        ("hostname", "airlock\n".to_owned()),
        (
            "resolv.conf",
            if config.net_proxy {
                "nameserver 127.0.0.1\noptions attempts:1 timeout:2\n".to_owned()
            } else {
                String::new()
            },
        ),
        ("nsswitch.conf", "passwd: files\ngroup: files\nhosts: files dns\n".to_owned()),
    ];
    for (name, content) in files {
        ctx(fs_err::write(etc.join(name), content), || {
            format!("write /etc/{name}")
        })?;
    }
    for file in ETC_FILES {
        let src = Path::new(file);
        let Ok(meta) = std::fs::metadata(src) else {
            continue;
        };
        let dst = inside(root, src);
        if meta.is_dir() {
            mkdirs(&dst)?;
        } else {
            touch(&dst)?;
        }
        bind_ro(src, &dst)?;
    }
    // /dev: a tmpfs with the harmless devices bound from the host.
    let dev = root.join("dev");
    mkdirs(&dev)?;
    ctx(
        mount(
            Some("tmpfs"),
            &dev,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
            Some("size=64k,mode=0755"),
        ),
        || "mount /dev".to_owned(),
    )?;
    for name in ["null", "zero", "full", "random", "urandom"] {
        let dst = dev.join(name);
        touch(&dst)?;
        let src = PathBuf::from(format!("/dev/{name}"));
        ctx(
            mount(Some(&src), &dst, None::<&str>, MsFlags::MS_BIND, None::<&str>),
            || format!("bind /dev/{name}"),
        )?;
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        ctx(std::os::unix::fs::symlink(target, dev.join(name)), || {
            format!("link /dev/{name}")
        })?;
    }
    // Pseudo-terminals of the sandbox's own (`newinstance`): programs that open a terminal (tmux, `script`,
    // `expect`, Python's `pty`) work, and no terminal of the host is reachable from it. Typing into a terminal
    // (`TIOCSTI`) stays refused by the system-call filter.
    let pts = dev.join("pts");
    mkdirs(&pts)?;
    ctx(
        mount(
            Some("devpts"),
            &pts,
            Some("devpts"),
            MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
            Some("newinstance,ptmxmode=0666,mode=0620"),
        ),
        || "mount /dev/pts".to_owned(),
    )?;
    ctx(std::os::unix::fs::symlink("pts/ptmx", dev.join("ptmx")), || {
        "link /dev/ptmx".to_owned()
    })?;
    let shm = dev.join("shm");
    mkdirs(&shm)?;
    ctx(
        mount(
            Some("tmpfs"),
            &shm,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=16m,mode=1777"),
        ),
        || "mount /dev/shm".to_owned(),
    )?;
    // /proc for the new pid namespace.
    let proc_dir = root.join("proc");
    mkdirs(&proc_dir)?;
    ctx(
        mount(
            Some("proc"),
            &proc_dir,
            Some("proc"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            None::<&str>,
        ),
        || "mount /proc".to_owned(),
    )?;
    // Writable places on the root tmpfs (bounded by its size): /tmp and the home folder.
    let tmp = root.join("tmp");
    mkdirs(&tmp)?;
    let home = inside(root, Path::new(SANDBOX_HOME));
    mkdirs(&home)?;
    chown_sandbox(&tmp)?;
    chown_sandbox(&home)?;
    ctx(
        std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o1777)),
        || "chmod /tmp".to_owned(),
    )?;
    // Files airlock gives the sandbox (package-manager configuration, a CA bundle): in /etc, read-only to the
    // sandbox user; in the home folder, the sandbox user's.
    for (path, text) in &config.files {
        let dst = inside(root, path);
        if let Some(parent) = dst.parent() {
            mkdirs(parent)?;
        }
        ctx(fs_err::write(&dst, text.bytes()), || {
            format!("write {}", path.display())
        })?;
        if path.starts_with(SANDBOX_HOME) {
            chown_up_to(&dst, &home)?;
        }
    }
    // Workspaces.
    let private = root.join(".airlock");
    let upper_root = private.join("upper");
    let work_root = private.join("work");
    mkdirs(&upper_root)?;
    mkdirs(&work_root)?;
    let mut rw_paths = Vec::new();
    for (i, m) in config.mounts.iter().enumerate() {
        match m {
            Mount::Ro { host, sandbox } => {
                let dst = inside(root, sandbox);
                mkdirs(&dst)?;
                // Folders made in the home folder on the way to a mount (`~/.claude/skills/`) are the sandbox
                // user's, as the home folder is; the mount itself stays read-only.
                if let Some(parent) = dst.parent().filter(|_| sandbox.starts_with(SANDBOX_HOME)) {
                    chown_up_to(parent, &home)?;
                }
                bind_ro(host, &dst)?;
            }
            Mount::Rw { host, sandbox } => {
                let dst = inside(root, sandbox);
                mkdirs(&dst)?;
                let (upper, work) = (upper_root.join(i.to_string()), work_root.join(i.to_string()));
                mkdirs(&upper)?;
                mkdirs(&work)?;
                chown_sandbox(&upper)?;
                chown_sandbox(&work)?;
                let opts = format!(
                    "lowerdir={},upperdir={},workdir={},userxattr",
                    escape_opt(host),
                    escape_opt(&upper),
                    escape_opt(&work)
                );
                ctx(
                    mount(
                        Some("overlay"),
                        &dst,
                        Some("overlay"),
                        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                        Some(opts.as_str()),
                    ),
                    || {
                        format!(
                            "overlay {} at {} (the kernel must allow overlayfs in user namespaces)",
                            host.display(),
                            sandbox.display()
                        )
                    },
                )?;
                rw_paths.push(format!("{i}:{}", sandbox.display()));
            }
        }
    }
    let upper_fd = ctx(
        nix::fcntl::open(
            &upper_root,
            nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        ),
        || "open the upper layers".to_owned(),
    )?;
    // Pivot, drop the old root, and hide the upper layers.
    let old = private.join("old");
    mkdirs(&old)?;
    ctx(nix::unistd::pivot_root(root, &old), || "pivot_root".to_owned())?;
    ctx(nix::unistd::chdir("/"), || "chdir /".to_owned())?;
    ctx(umount2("/.airlock/old", MntFlags::MNT_DETACH), || {
        "detach the old root".to_owned()
    })?;
    ctx(
        mount(
            Some("tmpfs"),
            "/.airlock",
            Some("tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some("size=4k,mode=0000"),
        ),
        || "hide /.airlock".to_owned(),
    )?;
    Ok((upper_fd, rw_paths))
}

/// Gives `path` and every folder above it up to `home` (not `home` itself) to the sandbox user.
fn chown_up_to(path: &Path, home: &Path) -> R<()> {
    let mut dir = Some(path);
    while let Some(d) = dir.filter(|d| d.starts_with(home) && *d != home) {
        chown_sandbox(d)?;
        dir = d.parent();
    }
    Ok(())
}

fn chown_sandbox(path: &Path) -> R<()> {
    ctx(
        nix::unistd::chown(
            path,
            Some(nix::unistd::Uid::from_raw(SANDBOX_UID)),
            Some(nix::unistd::Gid::from_raw(SANDBOX_UID)),
        ),
        || format!("chown {}", path.display()),
    )
}

/// Overlay options are comma-separated: escape commas and backslashes in paths.
fn escape_opt(path: &Path) -> String {
    path.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace(',', "\\,")
}

/// Brings the loopback interface up, so programs in the sandbox can talk to each other.
pub fn loopback_up() -> R<()> {
    let sock = ctx(
        nix::sys::socket::socket(
            nix::sys::socket::AddressFamily::Inet,
            nix::sys::socket::SockType::Datagram,
            nix::sys::socket::SockFlag::SOCK_CLOEXEC,
            None,
        ),
        || "socket for lo".to_owned(),
    )?;
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (i, b) in b"lo\0".iter().enumerate() {
        req.ifr_name[i] = *b as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: a valid socket and a fully initialised ifreq.
    let rc = unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&sock), libc::SIOCSIFFLAGS, &req) };
    if rc != 0 {
        return Err(format!("bring lo up: {}", std::io::Error::last_os_error()));
    }
    let _ = CString::new("");
    Ok(())
}
