"""Exec-recording overhead, paired (bench/record.sh): each row runs the 2,000-exec loop plain and then inside
`airlock exec` of each build given as NAME=PATH, in turn; prints medians and the median of the per-row ratios to
plain, with the user it ran as and the load average."""

import os
import statistics
import subprocess
import sys
import time

loop = ["/bin/sh", "-c", "i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done"]
builds = [arg.split("=", 1) for arg in sys.argv[1:]]
pairs = int(os.environ.get("PAIRS", "11"))


def ms(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000


rows = []
for _ in range(pairs):
    row = [ms(loop)]
    row.extend(ms([path, "exec", "--"] + loop) for _, path in builds)
    rows.append(row)
print(f"user {os.getuid()}; load {' '.join(open('/proc/loadavg').read().split()[:3])}; "
      f"busy core: {os.environ.get('BUSY', 'no')}; {pairs} rows")
print(f"  plain: {statistics.median(r[0] for r in rows):.0f} ms")
for i, (name, _) in enumerate(builds, start=1):
    ratios = [r[i] / r[0] for r in rows]
    print(f"  {name}: {statistics.median(r[i] for r in rows):.0f} ms, {statistics.median(ratios):.3f}x plain "
          f"(range {min(ratios):.2f} to {max(ratios):.2f})")
