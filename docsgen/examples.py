"""The docs' runnable examples: ``console`` blocks (``$ command`` lines and their output) and ``pycon`` sessions.

Every page's examples run in order in one scratch folder that holds a copy of ``examples/``, so a page can
render, edit a fleet with ``sed`` and diff the result, as a reader would. A command that should fail says so
at the end of its line (``# exits 2``); any other exit status fails the test. Under ``UPDATE_GOLDEN=1`` the
shown output is rewritten from the real one, so a change to a command's output is regenerated, never
edited by hand. Other shell or Python blocks must be marked ``<!-- not run: why -->`` on the line before.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

RUN = ("console", "pycon")
SHELL_OR_PYTHON = ("sh", "bash", "shell", "console", "python", "py", "pycon")
NOT_RUN = re.compile(r"<!-- not run: [^>]+-->")
_FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```$", re.M | re.S)
_EXITS = re.compile(r"\s+# exits (\d+)$")


@dataclass(frozen=True)
class Block:
    language: str
    text: str  # between the fences
    start: int  # offset of the text in the page
    line: int  # 1-based line of the opening fence
    marked: bool  # preceded by a not-run marker


def blocks(page: str) -> Iterator[Block]:
    for match in _FENCE.finditer(page):
        before = page[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = page.count("\n", 0, match.start()) + 1
        yield Block(match.group(1), match.group(2), match.start(2), line, bool(NOT_RUN.fullmatch(before.strip())))


def run_page(page: str, workdir: Path, env: dict[str, str]) -> str:
    """The page with every runnable block's output replaced by what it really prints."""
    pieces: list[str] = []
    done = 0
    namespace: dict[str, object] = {}
    for block in blocks(page):
        if block.language not in RUN:
            continue
        if block.language == "console":
            actual = _run_console(block.text, workdir, env)
        else:
            actual = _run_pycon(block.text, workdir, namespace)
        pieces += [page[done : block.start], actual]
        done = block.start + len(block.text)
    return "".join(pieces) + page[done:]


def _run_console(text: str, workdir: Path, env: dict[str, str]) -> str:
    commands = [line for line in text.splitlines() if line.startswith("$ ")]
    if not commands or not text.startswith("$ "):
        raise AssertionError(f"a console block starts with a $ command line:\n{text}")
    out: list[str] = []
    for line in commands:
        command = line.removeprefix("$ ")
        found = _EXITS.search(command)
        expected = int(found.group(1)) if found else 0
        result = subprocess.run(
            ["bash", "-c", command[: found.start()] if found else command],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # one stream, in the order a terminal shows them
            text=True,
            check=False,
        )
        if result.returncode != expected:
            raise AssertionError(f"{command!r} exited {result.returncode}, not {expected}:\n{result.stdout}")
        out += [line + "\n", result.stdout]
    return "".join(out)


def _run_pycon(text: str, workdir: Path, namespace: dict[str, object]) -> str:
    """Each ``>>>`` statement run as the interactive interpreter would, its echo captured."""
    statements: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(">>> "):
            statements.append([line])
        elif line.startswith("... ") or line == "...":
            statements[-1].append(line)
    out: list[str] = []
    with contextlib.chdir(workdir):
        for lines in statements:
            source = "\n".join(line[4:] for line in lines) + "\n"
            captured = io.StringIO()
            with contextlib.redirect_stdout(captured):
                try:
                    exec(compile(source, "<docs>", "single"), namespace)
                except Exception as error:
                    last = traceback.format_exception_only(error)[-1]
                    captured.write(f"Traceback (most recent call last):\n  ...\n{last}")
            out += [line + "\n" for line in lines]
            out.append(captured.getvalue())
    return "".join(out)


def scratch_env(bin_dir: Path) -> dict[str, str]:
    """The environment examples run in: our ``gpustack-gen`` first on PATH, no colour, a fixed width."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GPUSTACK_", "UPDATE_GOLDEN"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1", COLUMNS="120", LC_ALL="C.UTF-8")
    return env
