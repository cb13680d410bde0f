"""Format a :class:`~.result.DiffResult` as text, Markdown, JSON or GitHub workflow annotations.

Every function returns a string; none prints.

JSON format (``render_json``; ``format`` is ``gpustack-gen-diff/v2``; keys never change within v2,
new keys may be added; v2 replaced each finding's ``commands`` with the plan ``actions`` it takes, since
the commands of a change are only safe in the order ``gpustack-gen plan`` gives them)::

    {
      "format": "gpustack-gen-diff/v2",
      "old": "origin/main:examples/fleet.yaml",       # how each side was named
      "new": "examples/fleet.yaml",
      "changed": true,                                 # false: nothing differs ("clusters" is [])
      "impactAvailable": true,                         # false when a side is a rendered folder
      "impactNote": null,                              # why impact is missing, when it is
      "level": "restart",                              # none|restart|disruptive|error (null without impact)
      "summary": {"clusters": {"added": 0, "removed": 0, "changed": 1},
                  "files": {"added": 0, "removed": 0, "changed": 3}},
      "clusters": [                                    # only clusters that differ, sorted by name
        {
          "name": "prod",
          "status": "changed",                         # added|removed|changed
          "level": "restart",                          # highest finding level (null without impact)
          "files": [                                   # sorted by path, relative to the cluster folder
            {
              "path": "device-plugin-config.yaml",
              "kind": "device-plugin-configmap",       # artifact kind ("unknown" for unrecognized files)
              "status": "changed",                     # added|removed|changed
              "documents": [                           # only for changed files
                {
                  "index": 0,                          # position in the file
                  "id": "ConfigMap gpu-operator/gpustack-device-plugin-config",  # or "document 1"
                  "status": "changed",                 # added|removed|changed
                  "changes": [                         # sorted by path
                    {"path": "data.t4.sharing.timeSlicing.resources[0].replicas",
                     "kind": "changed", "old": 4, "new": 5}
                  ]                                    # kind: changed|added (old null)|removed (new null)|renamed
                }
              ],
              "notes": []                              # header comment changes: path "(header)", old/new text
            }
          ],
          "capacity": [                                # per pool and resource, only what changed (null without impact)
            {"pool": "t4", "resource": "nvidia.com/gpu", "old": 12, "new": 15,
             "requestedOld": 7, "requestedNew": 7}
          ],
          "findings": [                                # sorted: highest level first (null without impact)
            {"rule": "device-plugin-config", "level": "restart", "pool": null,
             "message": "...", "items": ["t4"],
             "hint": null,                             # errors: what to change in the fleet
             "actions": ["apply-configmaps", "wait", "restart-device-plugin"]}  # plan step actions, in order
          ]
        }
      ]
    }

Paths: map keys are joined with dots, keys holding other characters are quoted
(``labels["nvidia.com/mig.config"]``), list items are ``[index]``, and pools are matched by name
(``pools[name=t4]``). Values are plain JSON data. Rules are the modules of :mod:`gpustack_gen.change.rules`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..change.model import Finding, Level
from ..emit.annotations import workflow_command
from ..emit.markdown import markdown_escape
from ..formatting import format_value
from .result import Change, ClusterDiff, DiffResult, FileDiff, Status

NO_CHANGES = "no changes"


@dataclass(frozen=True)
class ReportContext:
    """What a report needs besides the result: colour, the file annotations point at, the plan command."""

    color: bool = False
    annotation_file: str | None = None
    plan_command: str | None = None  # the `gpustack-gen plan` that orders this change, as the user would run it


_LEVEL_COLORS = {Level.NONE: "green", Level.RESTART: "yellow", Level.DISRUPTIVE: "red", Level.ERROR: "red"}
_STATUS_MARKS = {Status.ADDED: ("+", "green"), Status.REMOVED: ("-", "red"), Status.CHANGED: ("~", "yellow")}


def format_change(change: Change) -> str:
    if change.kind == "renamed":
        return f"{change.path}: renamed -> {change.new}"
    if change.kind == "added":
        return f"{change.path}: added {format_value(change.new)}"
    if change.kind == "removed":
        return f"{change.path}: removed (was {format_value(change.old)})"
    return f"{change.path}: {format_value(change.old)} -> {format_value(change.new)}"


def _cluster_headline(cluster: ClusterDiff) -> str:
    counts = cluster.file_counts()
    parts = [f"{n} file{'s' if n != 1 else ''} {status}" for status, n in counts.items() if n]
    text = f"{cluster.name} ({cluster.status.value})"
    if parts:
        text += ": " + ", ".join(parts)
    return text


def summary_line(result: DiffResult) -> str:
    data = result.as_dict()["summary"]
    clusters = ", ".join(f"{n} {s}" for s, n in data["clusters"].items() if n) or "0"
    files = ", ".join(f"{n} {s}" for s, n in data["files"].items() if n) or "0 changed"
    text = f"clusters: {clusters}; files: {files}"
    if result.impact_available:
        text += f"; highest impact: {result.level.value}"
    return text


# --- text ---------------------------------------------------------------------------------------


def render_text(result: DiffResult, context: ReportContext = ReportContext()) -> str:
    """Human-readable report; ``context.color`` adds ANSI styles (click.echo strips them in pipes anyway)."""
    import click

    color = context.color

    def style(text: str, **kwargs: Any) -> str:
        return click.style(text, **kwargs) if color else text

    if result.empty:
        return NO_CHANGES + "\n"
    lines = [style(f"gpustack-gen diff: {result.old_label} -> {result.new_label}", bold=True)]
    if not result.impact_available:
        lines.append(style(f"note: {_impact_note()}", dim=True))
    for cluster in result.clusters:
        lines.append("")
        headline = _cluster_headline(cluster)
        if result.impact_available:
            level = cluster.level
            headline += "  " + style(f"[{level.value}]", fg=_LEVEL_COLORS[level], bold=level.rank >= 2)
        lines.append(style(headline, bold=True) if not result.impact_available else headline)
        if cluster.capacity:
            lines.append("  capacity:")
            lines += [f"    {c.line()}" for c in cluster.capacity]
        if cluster.findings:
            lines.append("  impact:")
            for finding in cluster.findings:
                tag = style(f"[{finding.level.value}]", fg=_LEVEL_COLORS[finding.level], bold=finding.level.rank >= 2)
                lines.append(f"    {tag} {finding.message}")
                lines += [style(f"        {line}", dim=True) for line in _finding_details(finding)]
        if cluster.files:
            lines.append("  files:")
            for file in cluster.files:
                lines += _text_file(file, style)
    lines.append("")
    lines.append(summary_line(result))
    if context.plan_command and result.impact_available and any(c.findings for c in result.clusters):
        lines.append(f"the steps in a safe order, with their commands: {context.plan_command}")
    return "\n".join(lines) + "\n"


def _finding_details(finding: Finding) -> list[str]:
    lines = []
    if finding.hint:
        lines.append(f"fix: {finding.hint}")
    if finding.actions:
        lines.append(f"plan: {', '.join(finding.actions)}")
    return lines


def _text_file(file: FileDiff, style: Any) -> list[str]:
    mark, fg = _STATUS_MARKS[file.status]
    lines = [
        f"    {style(mark, fg=fg)} {file.path}" + ("" if file.status is Status.CHANGED else f" ({file.status.value})")
    ]
    for note in file.notes:
        lines += _text_notes(note, style)
    for document in file.documents:
        indent = "        "
        if not document.identity.startswith("document ") or document.status is not Status.CHANGED:
            doc_mark, doc_fg = _STATUS_MARKS[document.status]
            lines.append(f"{indent}{style(doc_mark, fg=doc_fg)} {document.identity}")
            indent += "  "
        lines += [f"{indent}{format_change(change)}" for change in document.changes]
    return lines


def _text_notes(note: Change, style: Any) -> list[str]:
    old_lines = str(note.old or "").split("\n")
    new_lines = str(note.new or "").split("\n")
    lines = ["        header comment:"]
    lines += [style(f"          - {line}", fg="red") for line in old_lines if line not in new_lines]
    lines += [style(f"          + {line}", fg="green") for line in new_lines if line not in old_lines]
    return lines


def _impact_note() -> str:
    from .result import IMPACT_NEEDS_FLEETS

    return IMPACT_NEEDS_FLEETS


# --- JSON ---------------------------------------------------------------------------------------


def render_json(result: DiffResult, context: ReportContext = ReportContext()) -> str:
    """The stable JSON document described in this module's docstring (2-space indent, key order fixed)."""
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n"


# --- Markdown -----------------------------------------------------------------------------------

_LEVEL_ICONS = {"none": "🟢", "restart": "🟡", "disruptive": "🟠", "error": "🔴"}


def render_markdown(result: DiffResult, context: ReportContext = ReportContext(), template: str = "diff.md.j2") -> str:
    """The pull-request comment: a summary table, then each cluster's details folded."""
    from ..templates import environment

    env = environment()
    env.filters["md"] = markdown_escape
    env.filters["value"] = format_value
    env.filters["change"] = format_change
    data = result.as_dict()
    return env.get_template(template).render(
        result=data,
        clusters=list(zip(result.clusters, data["clusters"], strict=True)),
        icons=_LEVEL_ICONS,
        summary=summary_line(result),
        no_changes=NO_CHANGES,
        plan_command=context.plan_command,
    )


# --- GitHub annotations -------------------------------------------------------------------------

_ANNOTATION = {Level.ERROR: "error", Level.DISRUPTIVE: "warning", Level.RESTART: "warning", Level.NONE: "notice"}


def render_github(result: DiffResult, context: ReportContext = ReportContext()) -> str:
    """GitHub Actions workflow commands: ``::error``/``::warning``/``::notice`` per finding, on the fleet file."""
    file = context.annotation_file

    def annotation(kind: str, title: str, message: str) -> str:
        return workflow_command(kind, message, file=file, title=title)

    if result.empty:
        return annotation("notice", "gpustack-gen diff", NO_CHANGES) + "\n"
    lines = []
    for cluster in result.clusters:
        for finding in cluster.findings:
            message = "\n".join([finding.message, *_finding_details(finding)])
            lines.append(annotation(_ANNOTATION[finding.level], f"{cluster.name}: {finding.rule}", message))
        if not result.impact_available:
            lines.append(annotation("notice", f"{cluster.name}: files", _cluster_headline(cluster)))
    lines.append(f"gpustack-gen diff: {summary_line(result)}")
    return "\n".join(lines) + "\n"


DIFF_REPORTS: dict[str, Callable[[DiffResult, ReportContext], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
}
