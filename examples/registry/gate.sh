#!/usr/bin/env bash
# A skill registry's gate, as docs/registry.md describes it: a skill is published only when it scans below `block`
# and, run in the sandbox under the policy it declares, stays within it; the signed statements of both go beside it.
# A consumer installs a skill only when those statements verify, against the registry's public key, for the exact
# files it is about to install.
#
#   examples/registry/gate.sh publish SKILL_DIR REGISTRY_DIR          # the registry's pipeline
#   examples/registry/gate.sh install NAME REGISTRY_DIR DEST_DIR       # a consumer
#
# AIRLOCK names the airlock binary (default: `airlock` on PATH); AIRLOCK_DATA_DIR the registry's data folder, whose
# key signs.
set -euo pipefail
airlock=${AIRLOCK:-airlock}
usage() { echo "usage: $0 publish SKILL_DIR REGISTRY_DIR | install NAME REGISTRY_DIR DEST_DIR" >&2; exit 2; }
[ $# -ge 3 ] || usage
case "$1" in
publish)
  skill=$2 registry=$3
  name=$(basename "$skill")
  mkdir -p "$registry"
  # The scan and its runtime check, signed: one envelope a line. A `block` or a run beyond the declared policy
  # exits non-zero, and nothing is published.
  if ! "$airlock" scan "$skill" --runtime --fail-on block --attest "$registry/$name.intoto.jsonl" >"$registry/$name.scan.txt"; then
    rm -f "$registry/$name.intoto.jsonl"
    echo "refused: $name did not pass (see $registry/$name.scan.txt)" >&2
    exit 1
  fi
  rm -rf "$registry/$name"
  cp -R "$skill" "$registry/$name"
  # The registry's public key, for its consumers.
  "$airlock" doctor 2>/dev/null | sed -n 's/.*signing key: .*public key \([0-9a-f]\{64\}\).*/\1/p' >"$registry/key.pub"
  [ -s "$registry/key.pub" ] || { echo "no signing key found" >&2; exit 1; }
  echo "published $name"
  ;;
install)
  [ $# -eq 4 ] || usage
  name=$2 registry=$3 dest=$4
  # The signatures, the skill's files (their digest), and the runtime check's result, or no install.
  if ! "$airlock" verify "$registry/$name.intoto.jsonl" --key "$(cat "$registry/key.pub")" --skill "$registry/$name"; then
    echo "refused: $name does not verify" >&2
    exit 1
  fi
  mkdir -p "$dest"
  cp -R "$registry/$name" "$dest/$name"
  echo "installed $name"
  ;;
*) usage ;;
esac
