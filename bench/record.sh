#!/usr/bin/env bash
# Exec-recording overhead, measured paired (bench/record.py): 2,000 runs of /bin/true from a `sh` loop, plain and
# inside `airlock exec` with every layer and recording on, for this build and any earlier builds named in BEFORE.
# Each row (plain, then each build) runs in turn, PAIRS times; the script prints the median of each and the median
# of its per-row ratios to plain. It measures as this user and, when run as root, again as `nobody` (no cgroup, as
# users run airlock), first with the other CPUs idle and then with a busy loop on the last CPU.
#
#   bench/record.sh                                          # this checkout
#   BEFORE="old=/path/to/airlock older=/path/to/airlock" bench/record.sh
#   AFTER=/path/to/airlock BEFORE=... PAIRS=11 bench/record.sh   # builds made beforehand
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
after=$(airlock_bin AFTER)
work=$(mktemp -d)
busy=
trap '[ -n "$busy" ] && kill "$busy" 2>/dev/null; rm -rf "$work"' EXIT
# nobody must reach the binaries and the script: copies in this script's own temporary folder.
copy() {
  mkdir "$work/$1"
  cp "$2" "$(dirname "$2")/airlock-sandbox-helper" "$work/$1/"
  echo "$1=$work/$1/airlock"
}
builds=("$(copy this "$after")")
for spec in ${BEFORE:-}; do
  builds+=("$(copy "${spec%%=*}" "${spec#*=}")")
done
cp bench/record.py "$work/"
chmod -R a+rX "$work"
run_all() {
  python3 "$work/record.py" "${builds[@]}"
  if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$work" BUSY="${BUSY:-no}" \
      PAIRS="${PAIRS:-11}" python3 "$work/record.py" "${builds[@]}"
  fi
}
run_all
taskset -c "$(( $(nproc) - 1 ))" sh -c 'while :; do :; done' &
busy=$!
sleep 1
BUSY=yes run_all
