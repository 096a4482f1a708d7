"""Per-call overhead of a sandboxed tool call (bench/calls.sh): one function of a skill module, called
in-process, in a plain subprocess, through airlock cold (one `airlock exec --json-io` per call), through airlock warm
(`SkillSandbox(warm=True)`, one `--json-io --serve` process) and, for the cold start-up of the same command, under
bubblewrap. Rounds run each way in turn; medians per call, and the median of the per-round ratios."""

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "src"))
from airlock import SkillSandbox  # noqa: E402

rounds = int(os.environ.get("ROUNDS", "30"))
root = tempfile.mkdtemp(prefix="airlock-bench-calls-")
os.chmod(root, 0o755)
skill = os.path.join(root, "adder")
os.makedirs(skill)
with open(os.path.join(skill, "skill.py"), "w") as f:
    f.write("def add(a, b):\n    return {'sum': a + b}\n")
os.chmod(skill, 0o755)
os.chmod(os.path.join(skill, "skill.py"), 0o644)
driver = "import sys, json; sys.path.insert(0, sys.argv[1]); import skill; print(json.dumps(skill.add(2, 3)))"

spec = importlib.util.spec_from_file_location("skill", os.path.join(skill, "skill.py"))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)

cold = SkillSandbox(skill)
warm = SkillSandbox(skill, warm=True)
bwrap = shutil.which("bwrap")
true_warm = SkillSandbox(skill, warm=True)


def in_process():
    return module.add(a=2, b=3)


# The interpreter the sandbox runs, so the comparison is the same program.
python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def plain_subprocess():
    subprocess.run([python, "-c", driver, skill], capture_output=True, check=True)


def airlock_cold():
    assert cold.call("add", a=2, b=3) == {"sum": 5}


def airlock_warm():
    assert warm.call("add", a=2, b=3) == {"sum": 5}


def airlock_warm_true():
    true_warm._send({"command": ["/bin/true"]})


def bubblewrap():
    subprocess.run(
        [bwrap, "--unshare-all", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink",
         "usr/lib64", "/lib64", "--symlink", "usr/lib", "/lib", "--proc", "/proc", "--dev", "/dev", "--tmpfs",
         "/tmp", "--ro-bind", skill, "/skill", "--", "/usr/bin/python3", "-c", driver, "/skill"],
        capture_output=True, check=True)


ways = [("in-process call", in_process), ("plain subprocess (python3 -c)", plain_subprocess),
        ("airlock cold (exec --json-io per call)", airlock_cold), ("airlock warm (--serve)", airlock_warm),
        ("airlock warm, /bin/true instead of Python", airlock_warm_true)]
if bwrap:
    ways.append(("bubblewrap cold (same python3 command)", bubblewrap))
for _, fn in ways:
    fn()  # warm the caches once
times = {name: [] for name, _ in ways}
for _ in range(rounds):
    for name, fn in ways:
        t0 = time.perf_counter()
        fn()
        times[name].append((time.perf_counter() - t0) * 1000)
warm.close()
true_warm.close()
shutil.rmtree(root)

print(f"user: {os.getuid()}; rounds: {rounds}; load: {open('/proc/loadavg').read().split()[:3]}; cores: {os.cpu_count()}")
base = times["plain subprocess (python3 -c)"]
for name, _ in ways:
    ms = statistics.median(times[name])
    ratio = statistics.median(a / b for a, b in zip(times[name], base))
    print(f"{name:<42} {ms:8.2f} ms   ratio to plain subprocess {ratio:5.2f}x")
if bwrap:
    r = statistics.median(a / b for a, b in zip(times["airlock warm (--serve)"], times["bubblewrap cold (same python3 command)"]))
    c = statistics.median(a / b for a, b in zip(times["airlock cold (exec --json-io per call)"], times["bubblewrap cold (same python3 command)"]))
    print(f"airlock warm / bubblewrap: {r:.2f}x; airlock cold / bubblewrap: {c:.2f}x")
