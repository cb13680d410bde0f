"""What the importer could not decide (TODOs) and where in the fleet file each one is written."""

from __future__ import annotations

from dataclasses import dataclass

HEADER = ""
CLUSTER = "cluster"
OPERATOR = "operator"


def pool_place(name: str) -> str:
    return f"pool:{name}"


@dataclass(frozen=True)
class Todo:
    """One thing the user must decide; ``place`` says where its comment goes in the fleet file."""

    message: str
    place: str = HEADER


def one_line(text: str) -> str:
    """Text safe inside a YAML comment: one line, printable characters only."""
    words = " ".join(str(text).split())
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100 else "?" for c in words)
