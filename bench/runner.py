"""The runner's two speed targets, measured paired (bench/runner.sh): start-up (`/bin/true`) and the exec loop
(2,000 runs of `/bin/true` from `sh`), each as a triple run in turn: plain, bubblewrap (`--unshare-all`, read-only
`/usr`, `/proc`, `/dev`, tmpfs `/tmp`), airlock exec (every layer, recording on). Prints medians, the median of the
per-triple ratios, the user it ran as and the load average; optionally with a busy loop on the last CPU."""

import os
import statistics
import subprocess
import sys
import time

airlock = sys.argv[1]
rounds = int(os.environ.get("ROUNDS", "40"))
loops = int(os.environ.get("LOOPS", "7"))
bwrap = ["bwrap", "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink",
         "usr/lib64", "/lib64", "--symlink", "usr/lib", "/lib", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
         "--"]
loop = ["/bin/sh", "-c", "i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done"]


def ms(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


def measure(name, command, n):
    rows = [(ms(command), ms(bwrap + command), ms([airlock, "exec", "--"] + command)) for _ in range(n)]
    plain, bw, air = (statistics.median(r[i] for r in rows) for i in range(3))
    vs_bw = statistics.median(r[2] / r[1] for r in rows)
    vs_plain = statistics.median(r[2] / r[0] for r in rows)
    bw_plain = statistics.median(r[1] / r[0] for r in rows)
    print(f"{name}: plain {plain:.2f} ms, bwrap {bw:.2f} ms ({bw_plain:.2f}x plain), airlock {air:.2f} ms "
          f"({vs_plain:.2f}x plain, {vs_bw:.2f}x bwrap)")


print(f"user {os.getuid()}; load {' '.join(open('/proc/loadavg').read().split()[:3])}; "
      f"busy core: {os.environ.get('BUSY', 'no')}")
measure("start-up (/bin/true)", ["/bin/true"], rounds)
measure("exec loop (2,000 x /bin/true)", loop, loops)
