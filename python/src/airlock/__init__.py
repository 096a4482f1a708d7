"""Run AI agent skills and their tool calls in airlock's sealed sandbox.

A thin client over ``airlock exec --json-io`` (see ``docs/json-io.md`` in airlock's repository): every call is one
JSON request and one JSON answer with the result and the whole run record. Standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

__version__ = "0.1.0"

__all__ = [
    "AirlockError",
    "SkillCallError",
    "SkillLimitError",
    "SkillRefusedError",
    "SkillRunError",
    "SkillTimeoutError",
    "SkillMeta",
    "SkillSandbox",
    "SkillValidationError",
    "RunResult",
    "find_airlock",
    "validate_skill",
    "verify_skill",
    "Verification",
    "SkillUntrustedError",
]


class AirlockError(Exception):
    """airlock could not take the request (bad arguments, no binary, a sandbox that cannot start)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class SkillValidationError(AirlockError):
    """The folder is not a valid skill; ``message`` says why."""


class SkillUntrustedError(AirlockError):
    """A signed statement about the skill did not hold (the signature, the skill, or the record)."""


class SkillRunError(AirlockError):
    """A sandboxed call that did not end well; ``result`` is its RunResult (output and the whole record)."""

    def __init__(self, message: str, result: "RunResult"):
        super().__init__(message)
        self.result = result


class SkillCallError(SkillRunError):
    """The skill's function raised (``type`` and ``message`` are its exception's), or its script failed."""

    def __init__(self, type_: str, message: str, result: "RunResult"):
        super().__init__(f"{type_}: {message}", result)
        self.type = type_


class SkillTimeoutError(SkillRunError):
    """The call reached its time limit and was killed."""


class SkillLimitError(SkillRunError):
    """The call reached another limit the kernel enforces (memory, processes, disk); ``limit`` names it."""

    def __init__(self, message: str, result: "RunResult", limit: str):
        super().__init__(message, result)
        self.limit = limit


class SkillRefusedError(SkillRunError):
    """airlock refused to run the call (a skill the scan blocks, a policy that does not allow it)."""


def _raise_for(result: "RunResult") -> None:
    """Raises the error of a call's kind of failure; returns when it succeeded."""
    if result.ok:
        return
    limit = (result.record or {}).get("limit_hit")
    if result.timed_out or result.status == "timed_out":
        raise SkillTimeoutError(f"the call reached its time limit after {result.duration_ms} ms", result)
    if result.status == "limit_exceeded" or limit:
        raise SkillLimitError(f"the call reached its {limit or 'resource'} limit", result, str(limit or ""))
    if result.status == "refused":
        raise SkillRefusedError((result.record or {}).get("status_reason") or "airlock refused the call", result)
    last = result.stderr.strip().splitlines()[-1:] or [f"exit code {result.exit_code}"]
    raise SkillCallError("ScriptError", last[0], result)


def find_airlock() -> str:
    """The airlock binary: ``AIRLOCK_BIN``, else ``airlock`` on ``PATH``."""
    given = os.environ.get("AIRLOCK_BIN")
    if given:
        return given
    found = shutil.which("airlock")
    if not found:
        raise AirlockError("the airlock binary was not found: put it on PATH or set AIRLOCK_BIN")
    return found


@dataclass
class SkillMeta:
    name: str
    description: str
    path: str
    scripts: List[str]
    references: List[str]
    assets: List[str]


def validate_skill(path: Union[str, os.PathLike]) -> SkillMeta:
    """Checks a skill folder against the Agent Skills spec; raises SkillValidationError when it is not valid."""
    proc = subprocess.run(
        [find_airlock(), "validate", os.fspath(path), "--json"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise AirlockError((proc.stderr or proc.stdout).strip() or f"airlock validate exited {proc.returncode}")
    if not data.get("valid"):
        reasons = [f.get("message", "") for f in data.get("findings", [])]
        raise SkillValidationError("; ".join(r for r in reasons if r) or "not a valid skill (no SKILL.md?)")
    return SkillMeta(
        name=data.get("name") or "",
        description=data.get("description") or "",
        path=str(path),
        scripts=list(data.get("scripts", [])),
        references=list(data.get("references", [])),
        assets=list(data.get("assets", [])),
    )


@dataclass
class Verification:
    """What ``airlock verify`` said of a signed statement: whether it holds, what was attested, and each check."""

    holds: bool
    statement: Optional[Dict[str, Any]]
    checks: List[Dict[str, Any]]


def verify_skill(
    attestation: Union[str, os.PathLike],
    skill_path: Optional[Union[str, os.PathLike]] = None,
    key: Optional[str] = None,
    airlock: Optional[str] = None,
) -> Verification:
    """Checks a signed statement (``airlock scan --attest``, ``export --attestation``) against the public ``key`` (64
    hex digits; the data folder's own when None) and, given ``skill_path``, that the skill is the one attested.
    Returns the verification; it does not raise when a check fails (see ``holds``)."""
    cmd = [airlock or find_airlock(), "verify", os.fspath(attestation), "--json"]
    if key:
        cmd += ["--key", key]
    if skill_path is not None:
        cmd += ["--skill", os.fspath(skill_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise AirlockError((proc.stderr or proc.stdout).strip() or f"airlock verify exited {proc.returncode}")
    return Verification(
        holds=bool(data.get("holds")),
        statement=data.get("statement"),
        checks=list(data.get("checks", [])),
    )


@dataclass
class RunResult:
    """One sandboxed call: what it printed, how it ended, and airlock's record of what it did."""

    exit_code: Optional[int]
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool
    request_id: str
    status: str
    signal: Optional[int] = None
    network_allowed: bool = False
    memory_limit_mb: int = 0
    record: Dict[str, Any] = field(default_factory=dict)
    policy: Optional[Dict[str, Any]] = None

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    @property
    def changes(self) -> List[Dict[str, Any]]:
        """Files the call added, changed or deleted in its working folder (never written back to the host)."""
        return list(self.record.get("changes", []))

    @classmethod
    def from_answer(cls, answer: Dict[str, Any]) -> "RunResult":
        record = answer.get("record") or {}
        return cls(
            exit_code=answer.get("exit_code"),
            stdout=answer.get("stdout", ""),
            stderr=answer.get("stderr", ""),
            duration_ms=int(answer.get("duration_ms") or 0),
            timed_out=bool(answer.get("timed_out")),
            request_id=answer.get("request_id", ""),
            status=answer.get("status", ""),
            signal=answer.get("signal"),
            network_allowed=bool(record.get("network_allowed")),
            memory_limit_mb=int((record.get("limits") or {}).get("memory_bytes", 0)) >> 20,
            record=record,
            policy=answer.get("policy"),
        )

    def to_jsonl(self) -> str:
        """One JSON line for an audit log (what ``airlock exec --audit`` writes)."""
        record = self.record
        return json.dumps(
            {
                "ts": record.get("started_at"),
                "command": record.get("command"),
                "exit_code": self.exit_code,
                "duration_ms": self.duration_ms,
                "request_id": self.request_id,
                "status": self.status,
                "network_allowed": self.network_allowed,
                "memory_limit_mb": self.memory_limit_mb,
                "timed_out": self.timed_out,
                "limit_hit": record.get("limit_hit"),
                "execs": len(record.get("timeline", [])),
                "files_read": len(record.get("files_read", [])),
                "files_written": len(record.get("files_written", [])),
                "network_attempts": len(record.get("network", [])),
            },
            separators=(",", ":"),
        )


# The host uid a sandbox's user is mapped to when airlock runs as root (airlock_sandbox::ROOT_MODE_HOST_UID).
_ROOT_MODE_HOST_UID = 1_000_000

_INTERPRETERS = {".py": ["python3"], ".sh": ["bash"], ".js": ["node"], ".mjs": ["node"], ".rb": ["ruby"]}


class SkillSandbox:
    """Runs a skill's scripts, or functions of its ``skill.py``, each call in a fresh sealed sandbox.

    ``timeout`` is in seconds (airlock's default: 30), ``memory_mb`` bounds memory (default 512); given, they win
    over the same limits in ``policy``, as flags do over a skill's declared policy. ``allow_network`` is False (nothing leaves), a list of
    ``--allow-net`` rules, or True for the hosts the skill's declared policy names; ``policy`` is a policy document
    (docs/policy.md) granted to every call. With ``attestation`` (a signed statement, checked against
    ``trusted_key``), a skill it does not vouch for is refused with SkillUntrustedError. ``warm=True`` keeps one ``airlock exec --json-io --serve`` process for
    all calls (close it with ``close()`` or a ``with`` block); each call still gets a sandbox of its own.
    """

    def __init__(
        self,
        skill_path: Union[str, os.PathLike],
        timeout: Optional[float] = None,
        memory_mb: Optional[int] = None,
        allow_network: Union[bool, Sequence[str]] = False,
        policy: Optional[Dict[str, Any]] = None,
        env: Optional[Dict[str, str]] = None,
        warm: bool = False,
        airlock: Optional[str] = None,
        attestation: Optional[Union[str, os.PathLike]] = None,
        trusted_key: Optional[str] = None,
    ):
        self.skill_path = Path(skill_path).resolve()
        if not self.skill_path.is_dir():
            raise AirlockError(f"{skill_path} is not a folder")
        if attestation is not None or trusted_key is not None:
            # Refuse a skill no signed statement by the trusted key vouches for.
            if attestation is None:
                raise SkillUntrustedError("trusted_key is given but no attestation for the skill")
            checked = verify_skill(attestation, self.skill_path, key=trusted_key, airlock=airlock)
            if not checked.holds:
                failed = [c.get("detail", "") for c in checked.checks if not c.get("holds")]
                raise SkillUntrustedError("; ".join(failed) or "the attestation does not hold")
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.env = dict(env or {})
        self.policy = policy
        self.binary = airlock or find_airlock()
        if allow_network is True:
            self.allow_net = self._declared_network()
        elif allow_network is False or allow_network is None:
            self.allow_net = []
        else:
            self.allow_net = [str(r) for r in allow_network]
        self._warm: Optional[subprocess.Popen] = None
        self._lock = threading.Lock()
        if warm:
            self._warm = subprocess.Popen(
                [self.binary, "exec", "--json-io", "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                bufsize=1,
            )

    # ----- lifecycle -----

    def close(self) -> None:
        if self._warm is not None:
            if self._warm.stdin:
                self._warm.stdin.close()
            self._warm.wait()
            if self._warm.stdout:
                self._warm.stdout.close()
            self._warm = None

    def __enter__(self) -> "SkillSandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # ----- calls -----

    def run_script(
        self,
        name: str,
        args: Sequence[str] = (),
        workdir: Optional[str] = None,
        files: Sequence[Union[str, os.PathLike]] = (),
        check: bool = False,
    ) -> RunResult:
        """Runs ``scripts/<name>`` (or a path inside the skill) with its interpreter; the skill is read-only at
        ``/skill``.

        ``files`` (files or folders of the host) are copied into a fresh working folder, ``/workspace``, where the
        script runs: ``run_script("summarize.py", args=["notes.txt"], files=["notes.txt"])`` finds ``notes.txt``.
        The script may change them there; the host's files are never written (``RunResult.changes`` lists what
        changed). With ``check=True`` a failure raises its own error (SkillTimeoutError, SkillLimitError,
        SkillRefusedError, SkillCallError) instead of returning.
        """
        rel = name if "/" in name else f"scripts/{name}"
        script = (self.skill_path / rel).resolve()
        if self.skill_path not in script.parents or not script.is_file():
            raise AirlockError(f"{name} is not a script of the skill")
        inside = "/skill/" + script.relative_to(self.skill_path).as_posix()
        command = _INTERPRETERS.get(script.suffix, []) + [inside] + [str(a) for a in args]
        request = self._base()
        request["command"] = command
        with tempfile.TemporaryDirectory(prefix="airlock-files-") as work:
            if files:
                request["rw"] = [f"{self._stage(files, Path(work))}:/workspace"]
                request["workdir"] = "/workspace"
            if workdir:
                request["workdir"] = workdir
            result = RunResult.from_answer(self._send(request))
        if check:
            _raise_for(result)
        return result

    def call(self, function: str, module: str = "skill.py", **kwargs: Any) -> Any:
        """Calls ``function(**kwargs)`` of the skill's Python module inside the sandbox and returns its JSON
        result; raises SkillCallError when it raises. ``last_result`` keeps the call's RunResult."""
        request = self._base()
        request["call"] = {"module": module, "function": function, "kwargs": kwargs}
        answer = self._send(request)
        result = RunResult.from_answer(answer)
        self.last_result = result
        error = answer.get("call_error")
        if error and error.get("type") == "NoResult":
            # Ended before it returned: the time limit, another limit or a refusal says why.
            _raise_for(result)
        if error:
            raise SkillCallError(error.get("type", "Error"), error.get("message", ""), result)
        if "result" not in answer:
            _raise_for(result)
            raise SkillCallError("NoResult", "the function returned no result", result)
        return answer.get("result")

    # ----- plumbing -----

    @staticmethod
    def _stage(files: Sequence[Union[str, os.PathLike]], work: Path) -> Path:
        """Copies the caller's files into a folder the sandbox's user can read: the call's working folder."""
        folder = work / "files"
        folder.mkdir()
        for f in files:
            source = Path(f)
            if not source.exists():
                raise AirlockError(f"{f}: no such file or folder")
            target = folder / source.name
            if source.is_dir():
                shutil.copytree(source, target, symlinks=True)
            else:
                shutil.copy2(source, target)
        # Readable by the sandbox's user; as root, owned by the host uid airlock maps that user to (as airlock does
        # with a run's target), so the script may change its copies.
        owner = _ROOT_MODE_HOST_UID if os.geteuid() == 0 else None
        for root, dirs, names in os.walk(work):
            os.chmod(root, 0o755)
            if owner is not None and root != str(work):
                os.chown(root, owner, owner)
            for n in names:
                path = os.path.join(root, n)
                if owner is not None:
                    os.lchown(path, owner, owner)
                if not os.path.islink(path):
                    os.chmod(path, 0o644 | (os.stat(path).st_mode & 0o111))
        return folder

    def _base(self) -> Dict[str, Any]:
        request: Dict[str, Any] = {
            "skill": str(self.skill_path),
            "env": self.env,
            "allow_net": self.allow_net,
        }
        if self.timeout is not None:
            request["timeout"] = f"{int(self.timeout * 1000)}ms"
        if self.memory_mb is not None:
            request["memory"] = f"{int(self.memory_mb)}M"
        if self.policy is not None:
            request["policy"] = self.policy
        return request

    def _send(self, request: Dict[str, Any]) -> Dict[str, Any]:
        line = json.dumps(request)
        if self._warm is not None:
            with self._lock:
                assert self._warm.stdin and self._warm.stdout
                self._warm.stdin.write(line + "\n")
                self._warm.stdin.flush()
                text = self._warm.stdout.readline()
            if not text:
                raise AirlockError("the warm airlock process ended")
        else:
            proc = subprocess.run(
                [self.binary, "exec", "--json-io"], input=line, capture_output=True, text=True
            )
            text = proc.stdout
            if not text.strip():
                raise AirlockError(proc.stderr.strip() or f"airlock exited {proc.returncode} without an answer")
        answer = json.loads(text)
        if "error" in answer and "status" not in answer:
            raise AirlockError(answer["error"].get("message", "airlock refused the request"))
        return answer

    def _declared_network(self) -> List[str]:
        proc = subprocess.run(
            [self.binary, "scan", str(self.skill_path), "--json"], capture_output=True, text=True
        )
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            raise AirlockError(proc.stderr.strip() or "airlock scan failed")
        declared = (report.get("declared_policy") or {}).get("policy") or {}
        rules = list((declared.get("network") or {}).get("allow") or [])
        if not rules:
            raise AirlockError(
                "allow_network=True takes the hosts the skill's policy declares, and it declares none: "
                "name them, e.g. allow_network=['api.example.com:443']"
            )
        return rules
