"""A shell to paste printed commands into: bash with stand-in ``kubectl``, ``helm`` and ``gpustack-gen`` on PATH that record the
argv they get, and which kube context it reaches (``--context`` / ``--kube-context``, else the current one)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from gpustack_gen.shell import AllOf, Command, IntoFile, Pipe, PrintsNothing, Script, Spliced

# Prints nothing and succeeds, as kubectl does for an empty list; each call appends to $ARGV_LOG, NUL-separated,
# its argument count, its argv and the context it would reach.
_STAND_IN = """#!/bin/bash
context=$(cat "$CURRENT_CONTEXT")
previous=
for word in "$@"; do
  case "$previous" in --context|--kube-context) context=$word ;; esac
  previous=$word
done
printf '%s\\0' "$#" "${0##*/}" "$@" "$context" >> "$ARGV_LOG"
"""


@dataclass(frozen=True)
class Call:
    argv: tuple[str, ...]
    context: str  # the kube context the call reaches


class Sandbox:
    def __init__(self, root: Path, current_context: str = "current") -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        for program in ("kubectl", "helm", "sleep", "gpustack-gen"):
            path = self.bin / program
            path.write_text(_STAND_IN, encoding="utf-8")
            path.chmod(0o755)
        self.log = root / "argv.log"
        self.current = root / "current-context"
        self.current.write_text(current_context, encoding="utf-8")

    def syntax_ok(self, text: str) -> bool:
        return subprocess.run(["bash", "-n", "-c", text], capture_output=True, check=False).returncode == 0

    def run(self, text: str) -> list[Call]:
        """Runs ``text`` in bash from the sandbox folder; the calls the stand-ins saw, in order."""
        self.log.write_bytes(b"")
        env = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "ARGV_LOG": str(self.log),
            "CURRENT_CONTEXT": str(self.current),
            "HOME": str(self.root),
            "LC_ALL": "C.UTF-8",
        }
        done = subprocess.run(
            ["bash", "-e", "-c", text], cwd=self.root, env=env, capture_output=True, check=False, timeout=60
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        fields = self.log.read_bytes().decode("utf-8", errors="surrogateescape").split("\0")[:-1]
        calls: list[Call] = []
        while fields:
            count = int(fields[0])
            calls.append(Call(tuple(fields[1 : count + 2]), fields[count + 2]))
            fields = fields[count + 3 :]
        return calls


def programs(script: Script) -> list[tuple[str, ...]]:
    """The argv of every program ``script`` runs that is not a shell builtin, in order."""
    if isinstance(script, Command):
        return [script.argv]
    if isinstance(script, Pipe):
        return [part.argv for part in script.parts]
    if isinstance(script, Spliced):
        # The listing runs first; in the sandbox it prints nothing, so only a prefix is left of the splice.
        argv = script.command.argv
        spliced = (*argv[: script.at], *((script.prefix,) if script.prefix else ()), *argv[script.at :])
        return [script.listing.argv, spliced]
    if isinstance(script, PrintsNothing):
        return programs(script.command)
    if isinstance(script, IntoFile):
        return [script.command.argv]
    assert isinstance(script, AllOf)
    return [argv for part in script.parts for argv in programs(part)]


def xargs_free(argvs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """``xargs PROGRAM ARGS`` as the call it makes (with nothing on its input: PROGRAM ARGS once)."""
    return [argv[1:] if argv[0] == "xargs" else argv for argv in argvs]
