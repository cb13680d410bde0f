"""Helpers of the hostile-input tests: run the command as a user would, on inputs written to a temporary folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# A clipboard write (OSC 52), an erase of the line, a carriage return, a bell, a right-to-left override and a C1 CSI.
TERMINAL_ATTACK = "\x1b]52;c;aGk=\x07\x1b[2K\r\u202e\x9b2J"


def run_cli(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``gpustack-gen ARGS`` in a child process; stdout and stderr decoded as UTF-8 whatever the locale says."""
    result = subprocess.run(
        [sys.executable, "-m", "gpustack_gen", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        timeout=120,
    )
    return subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode("utf-8", "replace"),
        result.stderr.decode("utf-8", "replace"),
    )


def assert_inert(text: str) -> None:
    """No character of ``text`` can act on a terminal: everything but newline and tab is printable."""
    unsafe = sorted({c for c in text if not (c.isprintable() or c in "\n\t")})
    assert not unsafe, f"raw control characters reach the output: {unsafe!r}"


def state_with_node(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the healthy prod cluster's ``--from`` folder whose first node ``edit`` changed."""
    state = tmp_path / "state"
    shutil.copytree(ROOT / "tests" / "verify" / "data" / "prod-healthy", state)
    nodes = json.loads((state / "nodes.json").read_text(encoding="utf-8"))
    edit(nodes["items"][0])
    (state / "nodes.json").write_text(json.dumps(nodes), encoding="utf-8")
    return state


def verify_from(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``gpustack-gen verify examples/fleet.yaml --cluster prod --from STATE ARGS``."""
    return run_cli("verify", "examples/fleet.yaml", "--cluster", "prod", "--from", state, *args)
