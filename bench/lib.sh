# Shared by the benchmark scripts (sourced from the repository's root).

# The airlock to measure: the path in the named variable when set, else this checkout built in release.
airlock_bin() {
  local given=${!1:-}
  if [ -n "$given" ]; then
    echo "$given"
    return
  fi
  cargo build --release -q
  echo "$(pwd)/target/release/airlock"
}
