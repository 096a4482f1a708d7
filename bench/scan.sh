#!/usr/bin/env bash
# Scan benchmark: 1,000 generated skills. `airlock scan` (warm: the staged copy cached) against what a user would
# otherwise do by hand, a recursive grep for risky patterns, run in turn pair by pair; prints each pair, the median
# times and the median ratio, and the machine's load. The cold run (staging the copy) is timed once.
#
#   bench/scan.sh [SKILLS] [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
n=${1:-1000}
pairs=${2:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/gen_corpus.py "$work/corpus" "$n"
bin=$(airlock_bin AIRLOCK)
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc; }
cold=$(t "$bin" scan "$work/corpus" --data-dir "$work/data" --json)
a=(); b=(); r=()
for _ in $(seq "$pairs"); do
  x=$(t "$bin" scan "$work/corpus" --data-dir "$work/data" --json)
  y=$(t grep -rEn -e 'curl|wget|\.ssh|\.aws|subprocess|eval|base64|crontab|bashrc|npm install|pip install|ignore previous' "$work/corpus")
  a+=("$x"); b+=("$y"); r+=("$(echo "$x / $y" | bc -l)")
  printf 'pair: airlock %.3f s, grep %.3f s\n' "$x" "$y"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
findings=$("$bin" scan "$work/corpus" --data-dir "$work/data" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["skills"]), len(d["findings"]))')
printf 'skills=%s cores=%s load=%s\n' "$n" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'airlock scan (cold, once)  %.3f s\n' "$cold"
printf 'airlock scan (warm, median) %.3f s\n' "$(median "${a[@]}")"
printf 'grep -rEn (median)          %.3f s\n' "$(median "${b[@]}")"
printf 'median ratio airlock/grep   %.1fx\n' "$(median "${r[@]}")"
printf 'skills, findings            %s\n' "$findings"
