"""Helpers of the hostile-input tests: run the command as a user would, on inputs written to a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
