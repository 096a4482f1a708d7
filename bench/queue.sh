#!/usr/bin/env bash
# The run queue of a team deployment: a run's latency through one API server and its runners against the embedded
# server (paired), the queue's own wait, and runs per minute as runners are added. Starts a PostgreSQL cluster of
# its own in a temporary folder (as `nobody` when run as root; Debian's postgresql from scripts/setup).
#
#   bench/queue.sh                      # builds this checkout in release
#   PAIRS=15 BATCH=30 AIRLOCK=/path/to/airlock bench/queue.sh
#   BEFORE=/path/to/an/older/airlock bench/queue.sh   # a single server of this build against that one, pair by pair
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bin=$(airlock_bin AIRLOCK)
pg=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d)
chmod 755 "$work"
mkdir "$work/pg" "$work/sock"
as_pg() { if [ "$(id -u)" -eq 0 ]; then setpriv --reuid nobody --regid nogroup --clear-groups -- "$@"; else "$@"; fi; }
[ "$(id -u)" -eq 0 ] && chown nobody "$work/pg" "$work/sock"
as_pg "$pg/initdb" -D "$work/pg/data" -U airlock --auth=trust --no-sync -E UTF8 >/dev/null
as_pg "$pg/pg_ctl" -D "$work/pg/data" -w -l "$work/pg/log" -o "-c listen_addresses='' -k $work/sock -F" start >/dev/null
trap 'as_pg "$pg/pg_ctl" -D "$work/pg/data" -m immediate stop >/dev/null 2>&1; rm -rf "$work"' EXIT
url="postgres://airlock@${work//\//%2F}%2Fsock/postgres"
cp -r examples/skills/add-footer "$work/skill"
chmod -R a+rX "$work/skill"
python3 bench/queue.py "$bin" "$work" "$url" "$pg/psql"
