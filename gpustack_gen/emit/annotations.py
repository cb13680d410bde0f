"""GitHub Actions workflow commands (``::error file=...,line=...::message``), escaped as the runner expects."""

from __future__ import annotations

from ..inert import inert_line


def _escape_data(text: str) -> str:
    """The runner's own escapes for %, CR and LF; any other control character escaped as everywhere else."""
    return inert_line(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(
    kind: str, message: str, *, file: str | None = None, line: int = 0, column: int = 0, title: str | None = None
) -> str:
    """One annotation line: ``kind`` is error, warning or notice; a zero line or column is left out."""
    props = []
    if file:
        props.append(f"file={_escape_property(file)}")
    if line:
        props += [f"line={line}", f"col={column}"]
    if title is not None:
        props.append(f"title={_escape_property(title)}")
    return f"::{kind} {','.join(props)}::{_escape_data(message)}"
