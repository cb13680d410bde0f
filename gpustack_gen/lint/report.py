"""Lint reports, one formatter per ``--format`` in :data:`LINT_REPORTS`: ``text`` (``file:line:col`` lines and
a summary), ``json`` (one object) and ``github`` (workflow annotations). Every finding names its rule."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from ..emit.annotations import workflow_command
from ..errors import shown_problems
from .run import LintReport


def summary(report: LintReport) -> str:
    """``2 errors, 1 warning in 3 files (5 documents)``."""

    def count(n: int, word: str) -> str:
        return f"{n} {word}{'s' if n != 1 else ''}"

    text = (
        f"{count(len(report.errors), 'error')}, {count(len(report.warnings), 'warning')} in "
        f"{count(len(report.files), 'file')} ({count(len(report.documents), 'document')})"
    )
    if report.unreadable:
        text += f"; {count(len(report.unreadable), 'file')} could not be read"
    return text


def render_text(report: LintReport) -> str:
    shown, more = shown_problems(report.problems)
    lines = [p.format() for p in shown] + ([more] if more else [])
    lines.append(summary(report))
    return "".join(line + "\n" for line in lines)


def render_json(report: LintReport) -> str:
    """``findings`` (each with its ``rule``: "" for a file that could not be read or a document not linted),
    ``documents`` and the kind each was taken for, ``unreadable``, the counts and ``exitCode``."""
    payload = {
        "findings": [{**p.as_dict(), "rule": p.rule} for p in report.problems],
        "documents": [d.as_dict() for d in report.documents],
        "unreadable": list(report.unreadable),
        "errors": len(report.errors),
        "warnings": len(report.warnings),
        "exitCode": report.exit_code,
    }
    return json.dumps(payload, indent=2) + "\n"


def render_github(report: LintReport) -> str:
    lines = []
    shown, more = shown_problems(report.problems)
    for p in shown:
        title = f"gpustack-gen lint [{p.rule}]" if p.rule else "gpustack-gen lint"
        title += f": {p.path}" if p.path else ""
        message = p.message + (f" (hint: {p.hint})" if p.hint else "")
        lines.append(
            workflow_command(p.severity.value, message, file=p.file, line=p.line, column=p.column, title=title)
        )
    return "".join(line + "\n" for line in [*lines, *([more] if more else [])])


LINT_REPORTS: Mapping[str, Callable[[LintReport], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
}


def format_report(report: LintReport, output_format: str) -> str:
    """The report in ``output_format``, one of :data:`LINT_REPORTS`."""
    formatter = LINT_REPORTS.get(output_format)
    if formatter is None:
        raise ValueError(f"unknown output format {output_format!r}; expected {', '.join(LINT_REPORTS)}")
    return formatter(report)
