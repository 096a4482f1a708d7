#!/usr/bin/env bash
# The runner's speed targets against bubblewrap and plain, paired (bench/runner.py): start-up and the exec loop, as
# this user and, when run as root, again as `nobody` (no cgroups, as users run airlock); then the same with a busy
# loop on the last CPU. bubblewrap comes from Debian (installed when missing and root).
#
#   bench/runner.sh
#   AIRLOCK=/path/to/airlock ROUNDS=60 LOOPS=9 bench/runner.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bin=$(airlock_bin AIRLOCK)
if ! command -v bwrap >/dev/null && [ "$(id -u)" -eq 0 ]; then
  apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; }
fi
work=$(mktemp -d)
busy=
trap '[ -n "$busy" ] && kill "$busy" 2>/dev/null; rm -rf "$work"' EXIT
# nobody must reach the binaries and the script: copies in this script's own temporary folder.
cp "$bin" "$(dirname "$bin")/airlock-sandbox-helper" bench/runner.py "$work/"
chmod 755 "$work"
run_all() {
  python3 "$work/runner.py" "$work/airlock"
  if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$work" BUSY="${BUSY:-no}" \
      ROUNDS="${ROUNDS:-40}" LOOPS="${LOOPS:-7}" python3 "$work/runner.py" "$work/airlock"
  fi
}
run_all
taskset -c "$(( $(nproc) - 1 ))" sh -c 'while :; do :; done' &
busy=$!
sleep 1
BUSY=yes run_all
