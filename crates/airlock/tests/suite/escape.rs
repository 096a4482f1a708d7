//! Escape tests: hostile programs run through `airlock exec` and each attempt must fail, as root and as an
//! ordinary user (the same suite runs again under `setpriv` as `nobody`). Each test also checks that the run
//! record shows what was attempted.

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::util::as_nobody;

struct Sandbox {
    tmp: tempfile::TempDir,
    workspace: PathBuf,
}

fn sandbox() -> Sandbox {
    let tmp = tempfile::tempdir().unwrap();
    let open =
        |p: &Path| std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    open(tmp.path());
    let workspace = tmp.path().join("ws");
    fs_err::create_dir(&workspace).unwrap();
    open(&workspace);
    fs_err::write(workspace.join("input.txt"), "original\n").unwrap();
    open(&workspace.join("input.txt"));
    // The workspace belongs to the user airlock runs as (root runs map the sandbox user to a dedicated uid).
    let owner = if as_nobody() {
        65534
    } else {
        airlock_sandbox::ROOT_MODE_HOST_UID
    };
    for p in [workspace.clone(), workspace.join("input.txt")] {
        std::os::unix::fs::chown(&p, Some(owner), Some(owner)).unwrap();
    }
    Sandbox { tmp, workspace }
}

impl Sandbox {
    fn exec(&self, extra: &[&str], script: &str) -> (i32, Value) {
        let mut cmd = super::util::airlock_command();
        cmd.arg("exec")
            .arg("--json")
            .arg("--rw")
            .arg(format!("{}:/workspace", self.workspace.display()));
        cmd.args(extra).args(["--", "/bin/bash", "-c", script]);
        cmd.env("AIRLOCK_TEST_SECRET", "s3cr3t-host-token");
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let json: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!(
                "no record ({e}); stdout: {stdout}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code().unwrap_or(-1), json)
    }
}

fn stdout(record: &Value) -> String {
    record["stdout"].as_str().unwrap_or_default().to_owned()
}

fn ran(record: &Value, program: &str) -> bool {
    record["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["path"].as_str().unwrap_or_default().ends_with(program))
}

#[test]
fn host_files_and_secrets_are_invisible() {
    let s = sandbox();
    let secret = s.tmp.path().join("host-secret.txt");
    fs_err::write(&secret, "TOP-SECRET").unwrap();
    let script = format!(
        "cat /root/.ssh/id_rsa; cat /etc/shadow; cat {}; ls /home; ls /run /var 2>&1; env; cat /proc/*/environ | tr '\\0' '\\n'; echo done",
        secret.display()
    );
    let (_, record) = s.exec(&[], &script);
    let out = stdout(&record);
    assert!(out.contains("done"), "{record}");
    assert!(!out.contains("TOP-SECRET"));
    assert!(
        !out.contains("s3cr3t-host-token"),
        "a host variable leaked in: {out}"
    );
    assert!(!out.contains("root:"), "/etc/shadow was readable");
    assert!(out.contains("HOME=/home/sandbox"));
    assert!(ran(&record, "cat") && ran(&record, "env"));
    let read = super::util::strings(&record["files_read"], "path");
    assert!(read.contains(&"/etc/shadow"), "the attempt is recorded: {read:?}");
}

#[test]
fn writes_outside_the_workspace_fail_and_the_host_folder_is_untouched() {
    let s = sandbox();
    let outside = s.tmp.path().join("outside.txt");
    let script = format!(
        "echo pwned > {}; echo x > /usr/pwned; echo x > /etc/pwned; echo changed > /workspace/input.txt; echo new > /workspace/new.txt; cat /workspace/input.txt",
        outside.display()
    );
    let (code, record) = s.exec(&[], &script);
    assert_eq!(code, 0, "{record}");
    assert_eq!(stdout(&record), "changed\n");
    assert!(!outside.exists());
    assert!(!Path::new("/usr/pwned").exists());
    assert_eq!(
        fs_err::read_to_string(s.workspace.join("input.txt")).unwrap(),
        "original\n"
    );
    assert!(!s.workspace.join("new.txt").exists());
    let written = super::util::strings(&record["files_written"], "path");
    assert!(written.contains(&"/workspace/new.txt"), "{written:?}");
    assert!(
        written.contains(&"/usr/pwned"),
        "the failed attempt is recorded too: {written:?}"
    );
}

#[test]
fn symlink_in_the_workspace_pointing_out_leads_nowhere() {
    let s = sandbox();
    let secret = s.tmp.path().join("linked-secret.txt");
    fs_err::write(&secret, "LINKED-SECRET").unwrap();
    std::os::unix::fs::symlink(&secret, s.workspace.join("link")).unwrap();
    let (_, record) = s.exec(&[], "cat /workspace/link; echo end");
    assert!(!stdout(&record).contains("LINKED-SECRET"));
    assert!(stdout(&record).contains("end"));
    let read = super::util::strings(&record["files_read"], "path");
    assert!(
        read.contains(&"/workspace/link"),
        "the attempt is recorded: {read:?}"
    );
}

#[test]
fn host_network_is_unreachable_and_attempts_are_recorded() {
    let s = sandbox();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let unix_path = s.tmp.path().join("host.sock");
    let unix = std::os::unix::net::UnixListener::bind(&unix_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let (tport, uport) = (tcp.local_addr().unwrap().port(), udp.local_addr().unwrap().port());
    let script = format!(
        "(exec 3<>/dev/tcp/127.0.0.1/{tport}) && echo TCP-CONNECTED; echo hi > /dev/udp/127.0.0.1/{uport}; \
         (exec 3<>/dev/tcp/1.1.1.1/443) && echo OUT-CONNECTED; \
         python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\")' && echo UNIX-CONNECTED; echo done",
        unix_path.display()
    );
    let (_, record) = s.exec(&[], &script);
    let out = stdout(&record);
    assert!(out.contains("done"), "{record}");
    assert!(!out.contains("CONNECTED"), "{out}");
    assert!(tcp.accept().is_err(), "the host TCP listener got a connection");
    let mut buf = [0u8; 16];
    assert!(
        udp.recv(&mut buf).is_err(),
        "the host UDP listener got a datagram"
    );
    assert!(unix.accept().is_err(), "the host unix socket got a connection");
    let net = super::util::strings(&record["network"], "destination");
    assert!(net.contains(&format!("127.0.0.1:{tport}").as_str()), "{net:?}");
    assert!(net.contains(&"1.1.1.1:443"), "{net:?}");
    assert!(net.contains(&unix_path.to_str().unwrap()), "{net:?}");
    let denied = record["network"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["destination"] == "1.1.1.1:443")
        .unwrap();
    assert_eq!(denied["decision"], "denied");
}

#[test]
fn fork_bomb_is_bounded_and_killed() {
    let s = sandbox();
    let marker = "bomb_7731";
    let (_, record) = s.exec(
        &["--pids", "64", "--timeout", "10s"],
        &format!("{marker}() {{ {marker} | {marker} & }}; {marker}; sleep 1; exit 3"),
    );
    assert_eq!(record["limit_hit"], "pids", "{record}");
    assert_eq!(record["status"], "limit_exceeded");
    assert!(
        record["timed_out"] == false,
        "the bomb was stopped by the process limit, not the timeout"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(survivors(marker), 0, "fork bomb processes survived the run");
}

/// Processes on the host whose command line contains `marker`.
fn survivors(marker: &str) -> usize {
    fs_err::read_dir("/proc")
        .unwrap()
        .filter_map(|e| fs_err::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(marker))
        .count()
}

#[test]
fn memory_bomb_hits_the_memory_limit() {
    let s = sandbox();
    let (code, record) = s.exec(
        &["--memory", "256M"],
        "python3 -c 'a = bytearray(1 << 30); print(\"ALLOCATED\")'",
    );
    assert_ne!(code, 0);
    assert!(!stdout(&record).contains("ALLOCATED"));
    assert_eq!(record["limit_hit"], "memory", "{record}");
    assert_eq!(record["status"], "limit_exceeded");
}

#[test]
fn disk_fill_hits_the_disk_limit() {
    let s = sandbox();
    let (code, record) = s.exec(
        &["--disk", "16M"],
        "dd if=/dev/zero of=/workspace/big bs=1M count=64 2>&1; echo rc=$?",
    );
    assert!(stdout(&record).contains("rc=1") || code != 0, "{record}");
    let hit = record["limit_hit"].as_str().unwrap_or_default();
    assert!(hit == "disk" || hit == "file_size", "{record}");
}

#[test]
fn background_processes_do_not_survive() {
    let s = sandbox();
    let marker = "4242.4242";
    let script = format!("setsid sleep {marker} & nohup sleep {marker} >/dev/null 2>&1 & (sleep {marker} &) ; sleep 0.3; echo started");
    let (_, record) = s.exec(&[], &script);
    assert!(stdout(&record).contains("started"));
    std::thread::sleep(Duration::from_millis(200));
    let left = survivors(marker);
    assert_eq!(left, 0, "{left} sleep process(es) survived the run");
    assert!(
        record["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["path"].as_str().unwrap().ends_with("sleep"))
            .count()
            >= 3
    );
}

#[test]
fn infinite_loop_times_out() {
    let s = sandbox();
    let (_, record) = s.exec(&["--timeout", "2s"], "while :; do :; done");
    assert_eq!(record["status"], "timed_out");
    assert_eq!(record["timed_out"], true);
    assert_eq!(record["limit_hit"], "timeout");
    assert!(record["duration_ms"].as_u64().unwrap() < 10_000);
}

/// A program that opens a terminal gets one of the sandbox's own; none of the host's is there.
#[test]
fn terminals_are_the_sandboxs_own() {
    let s = sandbox();
    let script = r#"
echo "before: $(ls /dev/pts | tr '\n' ' ')"
python3 - <<'PY'
import os, pty
pid, fd = pty.fork()
if pid == 0:
    os.write(1, b"IN-A-TERMINAL " + os.ttyname(0).encode() + b"\n")
    os._exit(0)
print(os.read(fd, 200).decode().strip())
os.waitpid(pid, 0)
PY"#;
    let (_, record) = s.exec(&[], script);
    let out = stdout(&record);
    assert!(out.contains("before: ptmx \n"), "{out}");
    assert!(out.contains("IN-A-TERMINAL /dev/pts/0"), "{out}");
}

#[test]
fn kernel_attack_surface_is_closed() {
    let s = sandbox();
    let script = r#"
python3 - <<'PY'
import ctypes, fcntl, os, termios
libc = ctypes.CDLL(None, use_errno=True)
def check(name, rc):
    print(name, "DENIED" if rc == -1 else "ALLOWED", ctypes.get_errno())
check("ptrace", libc.ptrace(16, 1, 0, 0))
check("mount", libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None))
check("unshare-user", libc.unshare(0x10000000))
check("keyctl", libc.syscall(250, 0, 0, 0, 0))
check("bpf", libc.syscall(321, 0, 0, 0))
try:
    fd = os.open("/dev/null", os.O_RDWR)
    fcntl.ioctl(fd, termios.TIOCSTI, b"x")
    print("tiocsti ALLOWED")
except OSError as e:
    print("tiocsti DENIED", e.errno)
PY
unshare -U true && echo UNSHARE-ALLOWED
echo finished"#;
    let (_, record) = s.exec(&[], script);
    let out = stdout(&record);
    assert!(out.contains("finished"), "{record}");
    for name in ["ptrace", "mount", "unshare-user", "keyctl", "bpf"] {
        assert!(
            out.contains(&format!("{name} DENIED 1")),
            "{name} was not denied with EPERM: {out}"
        );
    }
    assert!(out.contains("tiocsti DENIED 1"), "{out}");
    assert!(!out.contains("UNSHARE-ALLOWED"));
    assert!(ran(&record, "unshare"));
}

#[test]
fn the_cpu_limit_cannot_be_widened_from_inside() {
    let s = sandbox();
    let script = r#"python3 -c '
import os
before = len(os.sched_getaffinity(0))
try:
    os.sched_setaffinity(0, set(range(os.cpu_count())))
    print("setaffinity ALLOWED")
except OSError as e:
    print("setaffinity DENIED", e.errno)
print("cpus", before, len(os.sched_getaffinity(0)))
'"#;
    let (_, record) = s.exec(&["--cpus", "1"], script);
    let out = stdout(&record);
    assert!(out.contains("setaffinity DENIED 1"), "{record}");
    assert!(out.contains("cpus 1 1"), "{out}");
    assert_eq!(record["limits"]["cpus"], 1);
}

#[test]
fn workspace_changes_are_listed_and_the_real_folder_is_untouched() {
    let s = sandbox();
    let (_, record) = s.exec(
        &[],
        "cd /workspace && echo more >> input.txt && echo new > added.txt && mkdir -p d/e && echo x > d/e/f \
         && ln -s /etc/passwd link && rm input.txt && echo again > input.txt && cat input.txt",
    );
    assert_eq!(record["status"], "succeeded", "{record}");
    let changes = super::util::changes(&record);
    let want = [
        ("added.txt", "added"),
        ("d/e/f", "added"),
        ("input.txt", "modified"),
        ("link", "added"),
    ];
    assert_eq!(
        changes,
        want.iter()
            .map(|(p, k)| ((*p).to_owned(), (*k).to_owned()))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        fs_err::read_to_string(s.workspace.join("input.txt")).unwrap(),
        "original\n"
    );
    assert!(!s.workspace.join("added.txt").exists());
    let (_, record) = s.exec(&[], "rm /workspace/input.txt");
    assert_eq!(record["changes"][0]["kind"], "deleted");
    assert_eq!(record["changes"][0]["size_before"], 9);
    assert!(s.workspace.join("input.txt").exists());
}

/// The mount points inside a sandbox are exactly the documented list (docs/record.md), `/opt` only when asked.
#[test]
fn the_sandbox_sees_only_the_documented_host_folders() {
    let doc = fs_err::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/record.md")).unwrap();
    let block = doc
        .split("```text host-mounts\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("no host-mounts list in docs/record.md"));
    let mut documented: Vec<String> = block
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let path = parts.next()?.to_owned();
            let host = l.contains("host");
            // A host path is there only when the host has it.
            (!host || Path::new(&path).exists()).then_some(path)
        })
        .collect();
    documented.sort();
    let mounts = |extra: &[&str]| {
        let mut args = vec!["exec", "--json"];
        args.extend_from_slice(extra);
        args.extend(["--", "/bin/sh", "-c", "cut -d' ' -f5 /proc/self/mountinfo"]);
        let out = super::util::airlock_command().args(&args).output().unwrap();
        let rec: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        let mut seen: Vec<String> = rec["stdout"]
            .as_str()
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        seen.sort();
        seen.dedup();
        seen
    };
    assert_eq!(mounts(&[]), documented);
    if Path::new("/opt").is_dir() {
        let with_opt = mounts(&["--host-opt"]);
        assert!(with_opt.contains(&"/opt".to_owned()), "{with_opt:?}");
        assert_eq!(with_opt.len(), documented.len() + 1, "{with_opt:?}");
    }
}
