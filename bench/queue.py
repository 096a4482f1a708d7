"""The run queue of a team deployment, measured (driven by bench/queue.sh, which starts PostgreSQL).

For one API server with 1, 2 and 3 runners (one slot each) against the embedded default (one `airlock serve`
running its runs itself, one slot per core):
  - a run's latency, submitted alone and waited on (POST to stored record), pair by pair against the embedded
    server, and the queue's own wait (claimed_at - created_at in the queue's table);
  - runs per minute: BATCH runs submitted at once, until the last is stored.

With BEFORE=/path/to/an/older/airlock, it measures instead one embedded server of each build, pair by pair (the
order within a pair alternating): a run alone and BATCH runs at once, each as a median ratio (this build / before).
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

BIN, WORK, URL, PSQL = sys.argv[1:5]
PAIRS = int(os.environ.get("PAIRS", "15"))
BATCH = int(os.environ.get("BATCH", "30"))
BEFORE = os.environ.get("BEFORE")
SKILL = os.path.join(WORK, "skill")
RUN = {"source": SKILL, "script": "scripts/add_footer.py", "timeout_secs": 120}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(base, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read() or b"null")


def wait_up(base):
    for _ in range(200):
        try:
            call(base, "GET", "/api/runs")
            return
        except Exception:
            time.sleep(0.05)
    raise SystemExit("server did not start")


def wait_done(base, run_id):
    while True:
        v = call(base, "GET", f"/api/runs/{run_id}")
        if v.get("record") or v["status"] in ("failed", "error", "cancelled"):
            if v["status"] != "succeeded":
                raise SystemExit(f"run {run_id}: {v['status']} {v.get('message')}")
            return
        time.sleep(0.005)


class Deployment:
    def __init__(self, name, runners, binary=BIN):
        self.procs = []
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        data = os.path.join(WORK, name)
        args = [binary, "serve", "--addr", f"127.0.0.1:{port}", "--data-dir", data, "--allow-local", WORK]
        if runners:
            tokens = os.path.join(WORK, "runner-tokens")
            args += ["--database", URL, "--runner-tokens", tokens]
        self.procs.append(subprocess.Popen(args, stderr=subprocess.DEVNULL))
        wait_up(self.base)
        for i in range(runners):
            token = os.path.join(WORK, f"runner-{i}.token")
            self.procs.append(subprocess.Popen(
                [BIN, "runner", "--server", self.base, "--token-file", token, "--name", f"r{i}",
                 "--data-dir", os.path.join(WORK, f"{name}-runner-{i}"), "--slots", "1"],
                stderr=subprocess.DEVNULL))
        time.sleep(0.5)
        for _ in range(2):  # warm caches (the staged skill, the blank target)
            wait_done(self.base, call(self.base, "POST", "/api/runs", RUN)["run_id"])

    def one(self):
        t0 = time.perf_counter()
        wait_done(self.base, call(self.base, "POST", "/api/runs", RUN)["run_id"])
        return time.perf_counter() - t0

    def batch(self):
        t0 = time.perf_counter()
        ids = [call(self.base, "POST", "/api/runs", RUN)["run_id"] for _ in range(BATCH)]
        for i in ids:
            wait_done(self.base, i)
        return time.perf_counter() - t0

    def stop(self):
        for p in reversed(self.procs):
            p.terminate()
            p.wait()


def queue_waits():
    out = subprocess.run([PSQL, "-At", URL.replace("postgres://", "postgresql://"), "-c",
                          "SELECT claimed_at - created_at FROM run_queue WHERE state = 'done' ORDER BY created_at"],
                         capture_output=True, text=True, check=True).stdout.split()
    subprocess.run([PSQL, "-Aqt", URL.replace("postgres://", "postgresql://"), "-c", "DELETE FROM run_queue"],
                   check=True, capture_output=True)
    return [int(x) for x in out]


def paired(a, b, measure, n):
    """n pairs of measure(a), measure(b), the order alternating: the two medians and the median ratio a/b."""
    pairs = []
    for i in range(n):
        if i % 2 == 0:
            x = measure(a)
            y = measure(b)
        else:
            y = measure(b)
            x = measure(a)
        pairs.append((x, y))
    return (statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs),
            statistics.median(p[0] / p[1] for p in pairs))


def against_before():
    """This build's embedded server against an older build's, pair by pair."""
    with open("/proc/loadavg") as f:
        print(f"load average: {' '.join(f.read().split()[:3])} ({os.cpu_count()} CPUs)")
    now = Deployment("now", 0)
    before = Deployment("before", 0, BEFORE)
    x, y, r = paired(now, before, Deployment.one, PAIRS)
    print(f"a run alone, submitted to stored: this build {x * 1000:.0f} ms, before {y * 1000:.0f} ms, "
          f"median ratio {r:.2f}x over {PAIRS} pairs")
    n = max(3, PAIRS // 3)
    x, y, r = paired(now, before, Deployment.batch, n)
    print(f"{BATCH} runs at once: this build {BATCH * 60 / x:.0f} runs/min, before {BATCH * 60 / y:.0f} runs/min, "
          f"median time ratio {r:.2f}x over {n} pairs")
    with open("/proc/loadavg") as f:
        print(f"load average after: {' '.join(f.read().split()[:3])}")
    now.stop()
    before.stop()


def main():
    if BEFORE:
        against_before()
        return
    with open(os.path.join(WORK, "runner-tokens"), "w") as f:
        for i in range(3):
            token = f"bench-runner-{i}-0123456789abcdef"
            f.write(token + "\n")
            with open(os.path.join(WORK, f"runner-{i}.token"), "w") as t:
                t.write(token)
    with open("/proc/loadavg") as f:
        print(f"load average: {' '.join(f.read().split()[:3])} ({os.cpu_count()} CPUs)")
    embedded = Deployment("embedded", 0)
    rows = []
    for runners in (1, 3):
        team = Deployment(f"team{runners}", runners)
        queue_waits()
        pairs = []
        for _ in range(PAIRS):
            pairs.append((team.one(), embedded.one()))
        waits = queue_waits()
        team_s = statistics.median(p[0] for p in pairs) * 1000
        emb_s = statistics.median(p[1] for p in pairs) * 1000
        ratio = statistics.median(p[0] / p[1] for p in pairs)
        print(f"{runners} runner(s): a run alone, submitted to stored: team {team_s:.0f} ms, embedded {emb_s:.0f} ms, "
              f"median ratio {ratio:.2f}x; queue wait (submitted to claimed) median {statistics.median(waits)} ms, "
              f"max {max(waits)} ms over {len(waits)} runs")
        team.stop()
    emb_batch = embedded.batch()
    print(f"embedded server (one slot per core): {BATCH} runs in {emb_batch:.1f} s, {BATCH * 60 / emb_batch:.0f} runs/min")
    embedded.stop()
    for runners in (1, 2, 3):
        team = Deployment(f"teamb{runners}", runners)
        took = team.batch()
        queue_waits()
        rows.append((runners, took))
        print(f"{runners} runner(s), one slot each: {BATCH} runs in {took:.1f} s, {BATCH * 60 / took:.0f} runs/min "
              f"({BATCH * 60 / took / min(runners, os.cpu_count()):.0f} per busy core), "
              f"{emb_batch / took:.2f}x the embedded server's rate")
        team.stop()


main()
