#!/usr/bin/env bash
# Egress benchmark: throughput of one 256 MiB download and latency of 200 fresh connections, each direct on the
# host's loopback and through airlock's egress proxy (explicit HTTP proxy, and a program that ignores the proxy
# variables and is captured transparently). All servers are on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$(pwd)/target/release/airlock
work=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
head -c $((256 << 20)) /dev/zero > "$work/big"
echo ok > "$work/small"
port=18765
python3 - "$work" "$port" <<'PY' &
import http.server, socketserver, sys, os
os.chdir(sys.argv[1])
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[2])), H).serve_forever()
PY
server=$!
sleep 0.5
client='import http.client, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def get(path):
    if mode == "proxy":
        c = http.client.HTTPConnection("127.0.0.1", 3128)
        c.request("GET", f"http://{host}:{port}{path}")
    else:
        c = http.client.HTTPConnection(host, port)
        c.request("GET", path)
    r = c.getresponse(); n = 0
    while True:
        b = r.read(1 << 20)
        if not b: break
        n += len(b)
    c.close(); return n
t = time.perf_counter(); n = get("/big"); dt = time.perf_counter() - t
print(f"throughput {n / dt / 1e6:.0f} MB/s")
t = time.perf_counter()
for _ in range(200): get("/small")
print(f"latency {(time.perf_counter() - t) / 200 * 1e3:.2f} ms per request")'
echo "direct (host loopback):"
python3 -c "$client" direct 127.0.0.1 $port
net=(--allow-net "bench.test:$port" --connect-to "bench.test:$port=127.0.0.1:$port" --memory 1G --no-record-files)
echo "airlock, explicit proxy:"
"$bin" exec "${net[@]}" -- /usr/bin/python3 -c "$client" proxy bench.test $port 2>/dev/null
echo "airlock, transparent capture:"
"$bin" exec "${net[@]}" -- /usr/bin/python3 -c "$client" direct bench.test $port 2>/dev/null
