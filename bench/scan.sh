#!/usr/bin/env bash
# Scan benchmark: 1,000 generated skills, `airlock scan` (cold: staging the copy; warm: staged copy cached)
# against what a user would otherwise do by hand, a recursive grep for risky patterns.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/gen_corpus.py "$work/corpus" "$n"
cargo build --release -q
bin=target/release/airlock
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc; }
cold=$(t "$bin" scan "$work/corpus" --data-dir "$work/data" --json)
warm=$(t "$bin" scan "$work/corpus" --data-dir "$work/data" --json)
grep_s=$(t grep -rEn -e 'curl|wget|\.ssh|\.aws|subprocess|eval|base64|crontab|bashrc|npm install|pip install|ignore previous' "$work/corpus")
findings=$("$bin" scan "$work/corpus" --data-dir "$work/data" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["skills"]), len(d["findings"]))')
printf 'skills=%s cores=%s\n' "$n" "$(nproc)"
printf 'airlock scan (cold)   %.3f s\n' "$cold"
printf 'airlock scan (warm)   %.3f s\n' "$warm"
printf 'grep -rEn (12 patterns) %.3f s\n' "$grep_s"
printf 'ratio warm/grep       %.1fx\n' "$(echo "$warm / $grep_s" | bc -l)"
printf 'skills, findings      %s\n' "$findings"
