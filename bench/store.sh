#!/usr/bin/env bash
# Store latency, SQLite against PostgreSQL (the example crates/airlock-store/examples/store_latency.rs starts a
# PostgreSQL cluster of its own in a temporary folder; Debian's postgresql from scripts/setup).
#
#   PAIRS=200 bench/store.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-200} cargo run --release -q -p airlock-store --features testing --example store_latency
