//! cgroup limits where the machine gives them: a per-run group in the v1 `memory` and `pids` hierarchies when
//! airlock may create one (as root on machines whose controllers are bound to v1). The group bounds the run's
//! processes together (rlimits bound each process), tells which limit ended a run from the kernel's own
//! counters, and kills every process of the run at the end. Without it the rlimits, the pid namespace and the
//! tmpfs quota remain the floor.

use std::path::PathBuf;

const V1: &str = "/sys/fs/cgroup";

pub struct Cgroup {
    memory: PathBuf,
    pids: PathBuf,
}

impl Cgroup {
    /// Creates the run's group, or `None` when this process may not (not root, no v1 controllers).
    pub fn create(name: &str, memory_bytes: u64, pids: u64) -> Option<Self> {
        if !nix::unistd::geteuid().is_root() {
            return None;
        }
        let memory = PathBuf::from(V1).join("memory").join(name);
        let pids_dir = PathBuf::from(V1).join("pids").join(name);
        if !memory.parent()?.join("memory.limit_in_bytes").exists()
            || !pids_dir.parent()?.join("cgroup.procs").exists()
        {
            return None;
        }
        let group = Self {
            memory,
            pids: pids_dir,
        };
        let made = (|| {
            fs_err::create_dir(&group.memory)?;
            fs_err::create_dir(&group.pids)?;
            fs_err::write(
                group.memory.join("memory.limit_in_bytes"),
                memory_bytes.to_string(),
            )?;
            // Swap must not extend the limit where the kernel accounts it.
            let memsw = group.memory.join("memory.memsw.limit_in_bytes");
            if memsw.exists() {
                fs_err::write(memsw, memory_bytes.to_string())?;
            }
            fs_err::write(group.pids.join("pids.max"), pids.to_string())?;
            Ok::<_, std::io::Error>(())
        })();
        match made {
            Ok(()) => Some(group),
            Err(e) => {
                tracing::debug!("cgroup not used: {e}");
                None
            }
        }
    }

    /// Moves a process (and so every process it starts later) into the group.
    pub fn add(&self, pid: u32) -> std::io::Result<()> {
        fs_err::write(self.memory.join("cgroup.procs"), pid.to_string())?;
        fs_err::write(self.pids.join("cgroup.procs"), pid.to_string())
    }

    /// Whether the kernel's out-of-memory killer ended a process of the group.
    pub fn memory_hit(&self) -> bool {
        counter(&self.memory.join("memory.oom_control"), "oom_kill ") > 0
    }

    /// Whether a fork or clone failed because the group was at its process limit.
    pub fn pids_hit(&self) -> bool {
        counter(&self.pids.join("pids.events"), "max ") > 0
    }

    pub fn peak_memory(&self) -> u64 {
        fs_err::read_to_string(self.memory.join("memory.max_usage_in_bytes"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Kills every process still in the group.
    fn kill_all(&self) {
        for _ in 0..50 {
            let procs = fs_err::read_to_string(self.pids.join("cgroup.procs")).unwrap_or_default();
            let pids: Vec<i32> = procs.lines().filter_map(|l| l.trim().parse().ok()).collect();
            if pids.is_empty() {
                break;
            }
            for pid in &pids {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
}

/// The number after `key` in a cgroup file of `key value` lines (0 when absent).
fn counter(file: &std::path::Path, key: &str) -> u64 {
    fs_err::read_to_string(file)
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.kill_all();
        for dir in [&self.memory, &self.pids] {
            // A group empties a moment after its last process is reaped.
            for _ in 0..1000 {
                if fs_err::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        }
    }
}
