#!/usr/bin/env bash
# Exec-recording overhead, measured paired: 2,000 runs of /bin/true from a `sh` loop, plain and inside
# `airlock exec` (recording execs and files, and execs only), and, when BEFORE names an earlier airlock build, the
# same inside it. Each pair (plain, then each airlock) runs in turn, PAIRS times, while a busy loop holds the last
# CPU; the script prints the median ratio of each airlock to plain and the machine's load average.
#
#   bench/record.sh                          # this checkout
#   BEFORE=/path/to/old/airlock bench/record.sh
#   AFTER=/path/to/airlock BEFORE=... bench/record.sh   # two builds made beforehand
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
after=$(airlock_bin AFTER)
before=${BEFORE:-}
pairs=${PAIRS:-15}
loop='i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done'
last=$(( $(nproc) - 1 ))
taskset -c "$last" sh -c 'while :; do :; done' &
load=$!
trap 'kill $load 2>/dev/null' EXIT
sleep 1
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
out=$(mktemp)
for _ in $(seq "$pairs"); do
  row="$(t /bin/sh -c "$loop") $(t "$after" exec -- /bin/sh -c "$loop") $(t "$after" exec --no-record-files -- /bin/sh -c "$loop")"
  if [ -n "$before" ]; then
    row="$row $(t "$before" exec -- /bin/sh -c "$loop") $(t "$before" exec --no-record-files -- /bin/sh -c "$loop")"
  fi
  echo "$row" >> "$out"
done
echo "load average during the run: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs, a busy loop on CPU $last)"
python3 - "$out" <<'PY'
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
names = ["this build, execs and files", "this build, execs only", "BEFORE, execs and files", "BEFORE, execs only"]
print(f"plain: median {statistics.median(r[0] for r in rows) / 1e6:.3f} s over {len(rows)} pairs")
for i, name in enumerate(names, start=1):
    if len(rows[0]) > i:
        ratios = [r[i] / r[0] for r in rows]
        print(f"{name}: median {statistics.median(r[i] for r in rows) / 1e6:.3f} s, median ratio to plain "
              f"{statistics.median(ratios):.2f}x (range {min(ratios):.2f} to {max(ratios):.2f})")
PY
rm -f "$out"
