//! `airlock doctor`: which isolation layers this machine supports, probed for real, and what to do when one
//! is missing.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub layer: String,
    pub ok: bool,
    pub detail: String,
    /// What to do when the layer is missing.
    pub fix: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    /// True when every layer `airlock exec` needs is present.
    pub ready: bool,
}

fn read(path: &str) -> Option<String> {
    fs_err::read_to_string(path).ok().map(|s| s.trim().to_owned())
}

/// Probes the machine. The user-namespace, overlay, Landlock and seccomp checks run a real sandbox.
pub fn doctor(helper: Option<std::path::PathBuf>) -> Report {
    let mut checks = Vec::new();
    let max_userns = read("/proc/sys/user/max_user_namespaces")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let apparmor = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").is_some_and(|v| v == "1");
    let debian_knob = read("/proc/sys/kernel/unprivileged_userns_clone").is_some_and(|v| v == "0");
    checks.push(Check {
        layer: "user namespaces".into(),
        ok: max_userns > 0 && !apparmor && !debian_knob,
        detail: format!("max_user_namespaces={max_userns}{}", if apparmor { ", AppArmor restricts unprivileged user namespaces" } else { "" }),
        fix: Some(if apparmor {
            "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0 (or add an AppArmor profile for airlock with `userns,`)".into()
        } else if debian_knob {
            "sudo sysctl kernel.unprivileged_userns_clone=1".into()
        } else {
            "sudo sysctl user.max_user_namespaces=15000".into()
        }),
    });
    // SAFETY: querying the Landlock ABI with a null ruleset is the documented probe.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    checks.push(Check {
        layer: "landlock".into(),
        ok: abi >= 1,
        detail: if abi >= 1 {
            format!("ABI {abi}")
        } else {
            "not available".into()
        },
        fix: Some("boot a kernel with CONFIG_SECURITY_LANDLOCK=y and `landlock` in the lsm= list".into()),
    });
    let cgroup_v2 = std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let controllers = read("/sys/fs/cgroup/cgroup.controllers").unwrap_or_default();
    let probe =
        crate::cgroup::Cgroup::create(&format!("airlock-doctor-{}", std::process::id()), 1 << 30, 1024);
    checks.push(Check {
        layer: "cgroups".into(),
        ok: probe.is_some(),
        detail: if probe.is_some() {
            "a per-run memory and pids group (v1) can be created: limits are enforced per run, not only per process"
                .into()
        } else if cgroup_v2 {
            format!(
                "cgroup v2 controllers: {}; airlock uses per-run v1 memory and pids groups, which need root",
                if controllers.trim().is_empty() { "none" } else { controllers.trim() }
            )
        } else {
            "no per-run cgroup can be created by this user".into()
        },
        fix: Some(
            "optional: limits use rlimits, the pid namespace and a size-limited tmpfs without it".into(),
        ),
    });
    drop(probe);
    let mut config = crate::Config::new(vec!["/bin/true".into()]);
    let probe_dir = tempfile::tempdir().ok();
    if let Some(dir) = &probe_dir {
        let _ = std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755));
        config.mounts.push(crate::Mount::Rw {
            host: dir.path().to_path_buf(),
            sandbox: "/workspace".into(),
        });
    }
    config.limits.timeout = std::time::Duration::from_secs(10);
    let probe = crate::run(&config, helper);
    let (ok, detail) = match &probe {
        Ok(r) if r.exit_code == Some(0) && r.timeline.iter().any(|e| e.path == "/bin/true") => (
            true,
            "ran /bin/true with every layer; its exec was recorded by seccomp notification".to_owned(),
        ),
        Ok(r) => (
            false,
            format!(
                "the probe ran but ended {:?} (exit {:?}): {}",
                r.status,
                r.exit_code,
                r.stderr.trim()
            ),
        ),
        Err(e) => (false, e.to_string()),
    };
    checks.push(Check {
        layer: "sandbox probe (overlay in a user namespace, seccomp notification, pivot_root)".into(),
        ok,
        detail,
        fix: Some("needs Linux 5.11+ (overlayfs with userxattr in user namespaces) and 5.5+ (seccomp notify continue)".into()),
    });
    let ready = checks.iter().filter(|c| c.layer != "cgroups").all(|c| c.ok);
    Report { checks, ready }
}
