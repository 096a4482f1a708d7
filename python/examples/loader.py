"""A framework's skill loader, switched from in-process execution to airlock with no change to the skill.

Before: the loader runs the skill's module inside the agent's own process (``exec_module``), with the agent's
files, environment variables (API keys) and network. After: the same calls go to airlock, each in a fresh sealed
sandbox; the skill's code is untouched.

    python examples/loader.py examples/word_count "how long is this text"
"""

import importlib.util
import sys

from airlock import SkillSandbox


class InProcessLoader:
    """What frameworks do today: the skill runs with the agent's privileges."""

    def load(self, path):
        spec = importlib.util.spec_from_file_location("skill", f"{path}/skill.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


class SealedSkill:
    """The skill's functions, each call run by airlock in its own sandbox."""

    def __init__(self, sandbox):
        self._sandbox = sandbox

    def __getattr__(self, name):
        return lambda **kwargs: self._sandbox.call(name, **kwargs)


class AirlockLoader:
    """The same interface as InProcessLoader; only this class changed."""

    def __init__(self, **limits):
        self.limits = limits

    def load(self, path):
        return SealedSkill(SkillSandbox(path, **self.limits))


if __name__ == "__main__":
    folder, text = sys.argv[1], " ".join(sys.argv[2:]) or "hello sealed world"
    skill = AirlockLoader(timeout=10, memory_mb=256).load(folder)
    print(skill.count(text=text))
