"""The README's promises: its two set-up commands, the CI command, a tour that prints what it shows, its size
and its links into the docs (the long documentation lives in docs/, tested by tests/docs/)."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from docsgen.examples import run_page, scratch_env

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_BYTES = 15 * 1024


def _first_block() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", README, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def test_first_screen_has_exactly_two_setup_commands() -> None:
    assert README.index("```sh") < 1500, "the set-up commands must be on the first screen"
    commands = _first_block()
    assert len(commands) == 2
    assert "gpustack-gen render examples/fleet.yaml" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _first_block()[1] in ci.splitlines()


def test_readme_is_short() -> None:
    assert len(README.encode("utf-8")) <= MAX_BYTES, "move long sections into docs/"


def test_the_tour_prints_what_it_shows(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    actual = run_page(README, tmp_path, scratch_env(Path(sys.executable).parent))
    if os.environ.get("UPDATE_GOLDEN") == "1":
        if actual != README:
            (ROOT / "README.md").write_text(actual, encoding="utf-8")
        return
    assert actual == README, "the tour prints something else (UPDATE_GOLDEN=1 rewrites it)"
    assert README.count("\n$ ") >= 5


def test_links_into_the_docs_exist() -> None:
    links = re.findall(r"\]\(((?:docs|examples)/[^)#]+)", README)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).exists(), link
