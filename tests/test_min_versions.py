"""The minimum-versions CI job pins exactly the lower bounds that pyproject.toml declares: every dependency's,
and those of the test tools that job runs besides pytest."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS_RUN_AT_MINIMUM = {"import-linter": "lint-imports"}  # test-extra package -> the command .ci/run runs


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~; ]", requirement, maxsplit=1)[0].lower()


def test_constraints_pin_every_lower_bound() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bounds = {}
    for requirement in project["dependencies"]:
        match = re.search(r">=\s*([0-9][0-9a-z.]*)", requirement)
        assert match, f"{requirement}: every dependency needs a lower bound"
        bounds[_name(requirement)] = match.group(1)
    for requirement in project["optional-dependencies"]["test"]:
        if _name(requirement) in TOOLS_RUN_AT_MINIMUM:
            match = re.search(r">=\s*([0-9][0-9a-z.]*)", requirement)
            assert match, f"{requirement}: a tool the minimum job runs needs a lower bound"
            bounds[_name(requirement)] = match.group(1)
    pinned = {}
    for line in (ROOT / ".ci" / "min-versions.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pinned[name.lower()] = version

    def release(version: str) -> tuple[int, ...]:
        parts = [int(p) for p in version.split(".")]
        return tuple(parts + [0] * (3 - len(parts)))

    assert {k: release(v) for k, v in pinned.items()} == {k: release(v) for k, v in bounds.items()}


def test_ci_runs_the_minimum_versions_job() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "-c .ci/min-versions.txt" in ci
    for command in TOOLS_RUN_AT_MINIMUM.values():
        assert f".venv-min/bin/{command}" in ci.splitlines()
