#!/usr/bin/env bash
# airlock serve, measured: API latency under load from a second process (wrk on loopback, a read route and the
# SSE-free run list), the time from a submitted URL to its risk report against `airlock scan` on the same folder
# (paired, PAIRS times), and runs per minute of the bundled example through the server (its queue at
# --max-concurrent-runs, the default of one per core) against the CLI running them one after another.
#
#   bench/serve.sh                      # builds this checkout in release
#   AIRLOCK=/path/to/airlock bench/serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bin=$(airlock_bin AIRLOCK)
if ! command -v wrk >/dev/null && [ "$(id -u)" -eq 0 ]; then
  apt-get install -y -q wrk >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q wrk >/dev/null; }
fi
pairs=${PAIRS:-7}
runs=${RUNS:-12}
work=$(mktemp -d)
chmod 755 "$work"
cp -r examples/skills/add-footer "$work/skill"
chmod -R a+rX "$work/skill"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" serve --addr "127.0.0.1:$port" --data-dir "$work/data" --allow-local "$work" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/api/runs" && break; sleep 0.1; done
api="http://127.0.0.1:$port/api"
ms() { python3 -c "import sys; print(round((int(sys.argv[2]) - int(sys.argv[1])) / 1e6, 1))" "$1" "$2"; }
now() { date +%s%N; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
# URL to risk report: the API against the CLI, paired.
rows=$work/rows
for _ in $(seq "$pairs"); do
  a=$(now); curl -s -o /dev/null -H 'Content-Type: application/json' -d "{\"url\": \"$work/skill\"}" "$api/sources"; b=$(now)
  "$bin" scan "$work/skill" --data-dir "$work/cli" >/dev/null; c=$(now)
  echo "$(ms "$a" "$b") $(ms "$b" "$c")" >> "$rows"
done
python3 - "$rows" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
print(f"URL to risk report: POST /api/sources median {statistics.median(r[0] for r in rows):.1f} ms, "
      f"airlock scan median {statistics.median(r[1] for r in rows):.1f} ms, "
      f"median ratio {statistics.median(r[0] / r[1] for r in rows):.2f}x")
PY
source_id=$(curl -s "$api/sources" | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
# Latency under load: 2 wrk threads, 16 connections, 10 s each.
for route in "/api/sources/$source_id" "/api/runs"; do
  echo "wrk GET $route:"
  wrk -t2 -c16 -d10s --latency "http://127.0.0.1:$port$route" | grep -E "Requests/sec|50%|90%|99%" | sed 's/^/  /'
done
# Runs per minute: the server's queue against the CLI one after another.
a=$(now)
for _ in $(seq "$runs"); do "$bin" run "$work/skill" --data-dir "$work/cli" >/dev/null; done
b=$(now)
ids=()
for _ in $(seq "$runs"); do
  ids+=("$(curl -s -H 'Content-Type: application/json' -d "{\"source\": \"$work/skill\"}" "$api/runs" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["run_id"])')")
done
for id in "${ids[@]}"; do curl -s -N "$api/runs/$id/events" >/dev/null; done
c=$(now)
python3 - "$runs" "$a" "$b" "$c" <<'PY'
import sys
n, a, b, c = int(sys.argv[1]), *map(int, sys.argv[2:])
cli, srv = (b - a) / 1e9, (c - b) / 1e9
print(f"{n} runs of the bundled example: CLI one after another {cli:.1f} s ({60 * n / cli:.0f} runs/min), "
      f"through the server {srv:.1f} s ({60 * n / srv:.0f} runs/min), ratio {cli / srv:.2f}x")
PY
