#!/usr/bin/env bash
# Per-call overhead of a sandboxed tool call through the Python package: in-process, plain subprocess, airlock
# cold, airlock warm, and bubblewrap's cold start of the same command (bench/calls.py).
#
#   bench/calls.sh                 # builds this checkout in release
#   AIRLOCK=/path/to/airlock ROUNDS=50 bench/calls.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bin=$(airlock_bin AIRLOCK)
AIRLOCK_BIN="$bin" PYTHONDONTWRITEBYTECODE=1 python3 bench/calls.py
