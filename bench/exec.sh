#!/usr/bin/env bash
# Sandbox benchmarks (start-up: mean of 50; workloads: median of 5): start-up of `airlock exec -- /bin/true` against plain /bin/true (and bwrap when installed),
# 2,000 execs from a shell loop, and 20,000 opens, each with file recording on and off.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
# bubblewrap is the alternative a user would reach for; install it for the comparison when we may.
if ! command -v bwrap >/dev/null && [ "$(id -u)" -eq 0 ]; then
  apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; }
fi
bin=$(pwd)/target/release/airlock
runs=${RUNS:-50}
t() { local s e; s=$(date +%s%N); for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1; done; e=$(date +%s%N); echo $(( (e - s) / runs / 1000 )); }
plain=$(t /bin/true)
air=$(t "$bin" exec -- /bin/true)
echo "start-up: /bin/true ${plain} us, airlock exec ${air} us"
if command -v bwrap >/dev/null; then
  bw=$(t bwrap --unshare-all --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib64 /lib64 --symlink usr/lib /lib --proc /proc --dev /dev --tmpfs /tmp -- /bin/true)
  echo "start-up: bwrap ${bw} us, ratio airlock/bwrap $(echo "scale=2; $air / $bw" | bc)"
fi
# Workloads: the median of 5 runs (a single slow run on a shared 2-core machine would swamp a mean of 3).
t() { local i s e; for i in 1 2 3 4 5; do s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); done | sort -n | sed -n 3p; }
execs_on=$(t "$bin" exec -- /bin/sh -c 'i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done')
execs_off=$(t "$bin" exec --no-record-files -- /bin/sh -c 'i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done')
plain_execs=$(t /bin/sh -c 'i=0; while [ $i -lt 2000 ]; do /bin/true; i=$((i+1)); done')
echo "2000 execs: plain ${plain_execs} us, recording execs+files ${execs_on} us, execs only ${execs_off} us"
opens='import os
for i in range(20000):
    os.close(os.open("/etc/hostname", os.O_RDONLY))'
opens_on=$(t "$bin" exec -- /usr/bin/python3 -c "$opens")
opens_off=$(t "$bin" exec --no-record-files -- /usr/bin/python3 -c "$opens")
echo "20000 opens: recording files ${opens_on} us, not recording files ${opens_off} us, cost $(echo "scale=2; $opens_on / $opens_off" | bc)x"
# A realistic open-heavy job: grep through every header under /usr/include (about 8,000 files).
grep_on=$(t "$bin" exec -- /bin/grep -r -c zzzq /usr/include)
grep_off=$(t "$bin" exec --no-record-files -- /bin/grep -r -c zzzq /usr/include)
grep_plain=$(t /bin/grep -r -c zzzq /usr/include)
echo "grep -r /usr/include: plain ${grep_plain} us, recording files ${grep_on} us, not recording files ${grep_off} us, cost $(echo "scale=2; $grep_on / $grep_off" | bc)x"
# Byte-compiling a package: opens interleaved with real work.
comp='import py_compile, pathlib
for p in pathlib.Path("/usr/lib/python3.11").glob("*.py"):
    py_compile.compile(str(p), cfile="/tmp/out.pyc")'
comp_on=$(t "$bin" exec -- /usr/bin/python3 -c "$comp")
comp_off=$(t "$bin" exec --no-record-files -- /usr/bin/python3 -c "$comp")
echo "py_compile of the stdlib: recording files ${comp_on} us, not recording files ${comp_off} us, cost $(echo "scale=2; $comp_on / $comp_off" | bc)x"
# An open-heavy build: make compiling 40 C files that each include 12 system headers (several hundred header
# opens, most of them misses along the include path), in a copy-on-write workspace.
build=$(mktemp -d)
chmod 755 "$build"
for i in $(seq 40); do
  for h in stdio.h stdlib.h string.h math.h unistd.h fcntl.h sys/stat.h sys/types.h pthread.h signal.h time.h errno.h; do
    echo "#include <$h>"
  done > "$build/f$i.c"
  echo "int f$i(void) { return $i; }" >> "$build/f$i.c"
done
printf 'OBJS=$(patsubst %%.c,%%.o,$(wildcard f*.c))\nall: $(OBJS)\n%%.o: %%.c\n\tgcc -O0 -c $< -o $@\n' > "$build/Makefile"
chmod -R a+rX "$build"
[ "$(id -u)" -eq 0 ] && chown -R 1000000:1000000 "$build"
make_plain=$(t make -s -C "$build" -B)
make_on=$(t "$bin" exec --rw "$build:/work" --workdir /work -- make -s -B)
make_off=$(t "$bin" exec --no-record-files --rw "$build:/work" --workdir /work -- make -s -B)
rm -rf "$build"
echo "make, 40 C files: plain ${make_plain} us, recording files ${make_on} us, not recording files ${make_off} us, cost $(echo "scale=2; $make_on / $make_off" | bc)x"

