#!/usr/bin/env bash
# The skill's environment, measured: a run that installs a requirements file in the sealed install phase (from a
# package index on loopback, one small wheel) against the next run of the same skill, which reuses the cached
# layer, and a run with --no-install (nothing mounted); beside them what a user would do by hand on the host
# (`pip install --target` from the same index, then the script). PAIRS fresh data folders, each measured in turn;
# medians, and the ratio of each to the host's install-and-run.
#
#   bench/environment.sh            # builds this checkout in release
#   AIRLOCK=/path/to/airlock bench/environment.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bin=$(airlock_bin AIRLOCK)
pairs=${PAIRS:-5}
work=$(mktemp -d)
chmod 755 "$work"
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import base64, hashlib, os, sys, zipfile
work = sys.argv[1]
os.makedirs(f"{work}/index/files")
os.makedirs(f"{work}/index/simple/greetlib")
files = {
    "greetlib/__init__.py": "def greet():\n    return 'hello from greetlib'\n",
    "greetlib-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: greetlib\nVersion: 1.0\n",
    "greetlib-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(f"{work}/index/files/greetlib-1.0-py3-none-any.whl", "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
        d = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={d},{len(text)}")
    record.append("greetlib-1.0.dist-info/RECORD,,")
    z.writestr("greetlib-1.0.dist-info/RECORD", "\n".join(record) + "\n")
open(f"{work}/index/simple/greetlib/index.html", "w").write(
    '<a href="../../files/greetlib-1.0-py3-none-any.whl">greetlib-1.0-py3-none-any.whl</a>\n')
os.makedirs(f"{work}/greeter/scripts")
open(f"{work}/greeter/SKILL.md", "w").write(
    "---\nname: greeter\ndescription: Greets. Use for the benchmark.\n---\nRun `python3 scripts/hello.py`.\n")
open(f"{work}/greeter/requirements.txt", "w").write("greetlib==1.0\n")
open(f"{work}/greeter/scripts/hello.py", "w").write("import greetlib\nprint(greetlib.greet())\n")
PY
chmod -R a+rX "$work"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work/index" && exec python3 -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1) &
server=$!
sleep 1
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
net=(--allow-net pypi.test:80 --connect-to "pypi.test:80=127.0.0.1:$port" --pip-index-url http://pypi.test/simple/)
for i in $(seq "$pairs"); do
  data="$work/data$i"
  host=$(t sh -c "/usr/bin/python3 -m pip install -q --target '$work/host$i' --index-url http://127.0.0.1:$port/simple/ --trusted-host 127.0.0.1 -r '$work/greeter/requirements.txt' && PYTHONPATH='$work/host$i' /usr/bin/python3 '$work/greeter/scripts/hello.py'")
  first=$(t "$bin" run "$work/greeter" --script scripts/hello.py --data-dir "$data" "${net[@]}")
  second=$(t "$bin" run "$work/greeter" --script scripts/hello.py --data-dir "$data" "${net[@]}")
  none=$(t "$bin" run "$work/greeter" --script scripts/hello.py --data-dir "$data" --no-install "${net[@]}")
  echo "$host $first $second $none" >> "$work/rows"
done
"$bin" run --json "$work/greeter" --script scripts/hello.py --data-dir "$work/data1" "${net[@]}" |
  python3 -c 'import json, sys; r = json.load(sys.stdin); print("check: second run", r["environment"]["status"], "->", r["stdout"].strip())'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
python3 - "$work/rows" <<'PY'
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
names = ["host: /usr/bin/python3 -m pip install --target, then the script", "airlock run, first (install phase)",
         "airlock run, second (cached layer)", "airlock run --no-install (script fails on import)"]
for i, name in enumerate(names):
    ratios = [r[i] / r[0] for r in rows]
    print(f"{name}: median {statistics.median(r[i] for r in rows) / 1e3:.0f} ms, "
          f"median ratio to the host {statistics.median(ratios):.2f}x")
PY
