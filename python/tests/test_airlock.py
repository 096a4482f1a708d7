"""The Python package against the real airlock binary (AIRLOCK_BIN, set by scripts/test)."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from airlock import (
    AirlockError,
    SkillUntrustedError,
    verify_skill,
    SkillCallError,
    SkillSandbox,
    SkillValidationError,
    validate_skill,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def skill():
    """A skill folder any user can read (the sandbox's user is not the test's)."""
    root = Path(tempfile.mkdtemp(prefix="airlock-py-"))
    os.chmod(root, 0o755)
    folder = root / "tool"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: tool\ndescription: Test tool. Use it in tests.\n---\n\nRun `python3 scripts/echo.py`.\n"
    )
    (folder / "scripts" / "echo.py").write_text(
        "import os, sys\nprint('args', sys.argv[1:])\nprint('secret', os.environ.get('AIRLOCK_PY_SECRET'))\n"
        "sys.exit(int(os.environ.get('CODE', '0')))\n"
    )
    (folder / "scripts" / "slow.py").write_text("import time\ntime.sleep(30)\n")
    (folder / "scripts" / "reach.py").write_text(
        "import socket, sys\n"
        "try:\n    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)\n    print('connected')\n"
        "except OSError as e:\n    print('refused', e)\n"
        "try:\n    open(sys.argv[3]).read()\n    print('read host file')\n"
        "except OSError as e:\n    print('no host file', e)\n"
    )
    (folder / "skill.py").write_text(
        "import os, subprocess\n"
        "STATE = []\n"
        "def add(a, b):\n    print('noise on stdout goes to stderr')\n    return {'sum': a + b}\n"
        "def fail():\n    raise ValueError('bad input')\n"
        "def sleepy():\n    import time\n    time.sleep(30)\n"
        "def remember(value):\n"
        "    STATE.append(value)\n"
        "    open('/tmp/left-behind', 'w').write(value)\n"
        "    open(os.path.expanduser('~/left-behind'), 'w').write(value)\n"
        "    subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
        "    return {'state': STATE, 'pid': os.getpid()}\n"
        "def look():\n"
        "    procs = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
        "    cmdlines = [open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode() for p in procs]\n"
        "    return {'state': STATE, 'tmp': os.path.exists('/tmp/left-behind'),\n"
        "            'home': os.path.exists(os.path.expanduser('~/left-behind')),\n"
        "            'sleepers': [c for c in cmdlines if c.startswith('sleep')]}\n"
    )
    for p in folder.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(root)


def test_validate_skill_reads_a_skill_and_refuses_a_folder_that_is_not_one(skill, tmp_path):
    meta = validate_skill(skill)
    assert meta.name == "tool"
    assert "scripts/echo.py" in meta.scripts or "echo.py" in " ".join(meta.scripts)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(SkillValidationError) as e:
        validate_skill(tmp_path)
    assert e.value.message


def test_run_script_returns_the_result_and_a_jsonl_line(skill, monkeypatch):
    monkeypatch.setenv("AIRLOCK_PY_SECRET", "s3cret-value")
    sandbox = SkillSandbox(skill, timeout=20, memory_mb=256)
    result = sandbox.run_script("echo.py", args=["a b", "c"])
    assert result.ok and result.exit_code == 0, result.stderr
    assert "args ['a b', 'c']" in result.stdout
    # Nothing of the caller's environment goes in.
    assert "s3cret-value" not in result.stdout
    assert "secret None" in result.stdout
    assert result.duration_ms > 0 and not result.timed_out and result.request_id
    assert result.record["timeline"], result.record
    line = json.loads(result.to_jsonl())
    assert line["exit_code"] == 0 and line["memory_limit_mb"] == 256 and line["network_allowed"] is False
    assert "\n" not in result.to_jsonl()
    # The script's own exit code comes back.
    coded = SkillSandbox(skill, env={"CODE": "3"}).run_script("echo.py")
    assert coded.exit_code == 3 and coded.status == "failed"


def test_the_time_limit_is_enforced(skill):
    result = SkillSandbox(skill, timeout=1).run_script("slow.py")
    assert result.timed_out and result.status == "timed_out"
    assert result.duration_ms < 20000


def test_no_network_and_no_host_files_unless_allowed(skill, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    private = tmp_path / "private.txt"
    private.write_text("host secret")
    os.chmod(tmp_path, 0o755)
    os.chmod(private, 0o644)
    try:
        result = SkillSandbox(skill).run_script("reach.py", args=["127.0.0.1", str(port), str(private)])
        assert "refused" in result.stdout and "no host file" in result.stdout, result.stdout
        # The record has the attempt (the sandbox's own loopback, never the host's).
        assert any(n["destination"].endswith(f":{port}") for n in result.record["network"]), result.record["network"]
        allowed = SkillSandbox(skill, allow_network=[f"127.0.0.1:{port}"]).run_script(
            "reach.py", args=["127.0.0.1", str(port), str(private)]
        )
        assert "connected" in allowed.stdout, allowed.stdout + allowed.stderr
        assert allowed.network_allowed
    finally:
        listener.close()


def test_call_runs_a_function_of_the_skill_module(skill):
    sandbox = SkillSandbox(skill)
    assert sandbox.call("add", a=2, b=40) == {"sum": 42}
    assert "noise on stdout" in sandbox.last_result.stderr
    with pytest.raises(SkillCallError) as e:
        sandbox.call("fail")
    assert e.value.type == "ValueError" and "bad input" in e.value.message
    with pytest.raises(SkillCallError):
        sandbox.call("no_such_function")
    with pytest.raises(AirlockError):
        sandbox.call("add", module="../outside.py", a=1, b=2)


def test_a_policy_is_granted_and_recorded(skill):
    sandbox = SkillSandbox(skill, policy={"resources": {"timeout": "1s"}})
    result = sandbox.run_script("slow.py")
    assert result.timed_out
    parts = {p["key"]: p for p in result.policy["parts"]}
    assert parts["resources.timeout"]["value"] == "1s"
    with pytest.raises(AirlockError) as e:
        SkillSandbox(skill, policy={"resources": {"timeot": "1s"}}).run_script("echo.py")
    assert "timeot" in e.value.message


def test_warm_mode_answers_many_calls_and_nothing_survives_between_them(skill):
    with SkillSandbox(skill, warm=True) as warm:
        first = warm.call("remember", value="from-call-1")
        assert first["state"] == ["from-call-1"]
        second = warm.call("look")
        # A fresh interpreter, file system and process tree each call: no module state, no files in /tmp or the
        # home folder, no process left from the call before.
        assert second == {"state": [], "tmp": False, "home": False, "sleepers": []}, second
        results = [warm.call("add", a=i, b=1) for i in range(5)]
        assert [r["sum"] for r in results] == [1, 2, 3, 4, 5]
        # Calls from several threads are answered in turn.
        got = []
        threads = [threading.Thread(target=lambda i=i: got.append(warm.call("add", a=i, b=0)["sum"])) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(got) == [0, 1, 2, 3]


def test_the_framework_example_runs_the_unchanged_skill_sealed():
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / "loader.py"), str(EXAMPLES / "word_count"), "one two three"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "'words': 3" in out, out


def test_run_script_gets_input_files_and_never_writes_the_hosts(skill, tmp_path):
    (skill / "scripts" / "count.py").write_text(
        "import sys\ntext = open(sys.argv[1]).read()\nprint('words', len(text.split()))\n"
        "open(sys.argv[1], 'w').write('changed')\nopen('out.txt', 'w').write('done')\n"
    )
    notes = tmp_path / "notes.txt"
    notes.write_text("one two three\n")
    result = SkillSandbox(skill).run_script("count.py", args=["notes.txt"], files=[notes], check=True)
    assert "words 3" in result.stdout
    changed = {c["path"]: c["kind"] for c in result.changes}
    assert changed.get("out.txt") == "added" and changed.get("notes.txt") == "modified", changed
    # The host's file is untouched and nothing was written beside it.
    assert notes.read_text() == "one two three\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    with pytest.raises(AirlockError):
        SkillSandbox(skill).run_script("count.py", files=[tmp_path / "missing.txt"])


def test_each_kind_of_failure_is_an_exception_of_its_own(skill):
    from airlock import SkillLimitError, SkillRunError, SkillTimeoutError

    with pytest.raises(SkillTimeoutError) as e:
        SkillSandbox(skill, timeout=1).run_script("slow.py", check=True)
    assert e.value.result.timed_out
    with pytest.raises(SkillCallError) as e:
        SkillSandbox(skill, env={"CODE": "3"}).run_script("echo.py", check=True)
    assert e.value.result.exit_code == 3
    with pytest.raises(SkillTimeoutError):
        SkillSandbox(skill, timeout=1).call("sleepy")
    assert issubclass(SkillLimitError, SkillRunError) and issubclass(SkillCallError, SkillRunError)


def test_the_package_is_typed_and_versioned():
    import airlock

    assert airlock.__version__ == "0.1.0"
    assert (Path(airlock.__file__).parent / "py.typed").is_file()


def test_a_signed_statement_vouches_for_its_skill_only(skill, tmp_path):
    data = tmp_path / "data"
    att = tmp_path / "scan.att"
    proc = subprocess.run(
        [os.environ["AIRLOCK_BIN"], "scan", str(skill), "--attest", str(att), "--data-dir", str(data)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    key = proc.stderr.split("public key ")[1].split(";")[0]
    checked = verify_skill(att, skill, key=key)
    assert checked.holds and checked.statement["predicate"]["risk_level"]
    SkillSandbox(skill, attestation=att, trusted_key=key)
    other = tmp_path / "other"
    other.mkdir()
    os.chmod(tmp_path, 0o755)
    (other / "SKILL.md").write_text("---\nname: other\ndescription: Other. Use it in tests.\n---\n\nHi.\n")
    assert not verify_skill(att, other, key=key).holds
    with pytest.raises(SkillUntrustedError):
        SkillSandbox(other, attestation=att, trusted_key=key)
    with pytest.raises(SkillUntrustedError):
        SkillSandbox(skill, attestation=att, trusted_key="00" * 32)
