#!/usr/bin/env bash
# From SOURCE to a finished sandbox run record: a small script skill in a local git repository, run against the
# bundled sample, record stored. Compared with what a user would do without airlock: clone the repository and run
# the script directly on their machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$(pwd)/target/release/airlock
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
mkdir -p "$repo/skills/hello/scripts"
cat > "$repo/skills/hello/SKILL.md" <<'MD'
---
name: hello
description: Writes a greeting file into the project. Use it to try airlock.
---

Run `scripts/greet.py` in the project folder.
MD
cat > "$repo/skills/hello/scripts/greet.py" <<'PY'
import pathlib
pathlib.Path("GREETING.md").write_text("hello from a skill\n")
print("done")
PY
git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" -c user.name=b -c user.email=b@example.com commit -qm skill
url="file://$repo#HEAD:skills/hello"
runs=${RUNS:-10}
t() { local s e; s=$(date +%s%N); for i in $(seq "$runs"); do "$@" >/dev/null 2>&1; done; e=$(date +%s%N); echo $(( (e - s) / runs / 1000000 )); }
cold() { rm -rf "$work/data"; AIRLOCK_DATA_DIR="$work/data" "$bin" run "$url" --script scripts/greet.py --json; }
warm() { AIRLOCK_DATA_DIR="$work/data" "$bin" run "$url" --script scripts/greet.py --json; }
plain() { rm -rf "$work/clone"; git clone -q "$repo" "$work/clone" && (cd "$work/clone" && python3 skills/hello/scripts/greet.py); }
AIRLOCK_DATA_DIR="$work/data" "$bin" run "$url" --script scripts/greet.py --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print("check:", r["status"], [c["path"] for c in r["changes"]])'
echo "airlock run, cold data folder (clone, stage, scan, snapshot, sandbox, store): $(t cold) ms"
echo "airlock run, warm (clone cached): $(t warm) ms"
echo "git clone + python3 on the host (no isolation, no record): $(t plain) ms"
