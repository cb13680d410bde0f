"""Format a :class:`~.result.VerifyResult` as text, Markdown, JSON or GitHub workflow annotations.

Every function returns a string; none prints. The text report starts with the summary: per pool, the nodes
that are ok out of those found (and intended), and the capacity advertised out of the capacity intended;
then a line per node of each pool (``ok``, or one line per finding), then the cluster-wide findings and the
checks skipped for want of input.

JSON format (``render_json``; ``format`` is ``gpustack-gen-verify/v1``; keys never change within v1, new
keys may be added)::

    {
      "format": "gpustack-gen-verify/v1",
      "fleet": "examples/fleet.yaml",                 # how the fleet file was named
      "cluster": "prod",
      "source": "state",                              # the --from folder, or "context NAME"
      "matches": false,                               # true: no error finding and no node mid-rollout (exit 0)
      "summary": {"errors": 3, "warnings": 0, "inProgress": 0},   # inProgress: nodes mid-rollout
      "pools": [                                      # null when the nodes were not read
        {
          "name": "t4", "gpu": "tesla-t4", "sharing": "time-slicing, 4 per GPU",
          "nodes": {"intended": 3, "found": 3, "ok": 1},    # found: selected by the pool's nodeSelector
          "capacity": [{"resource": "nvidia.com/gpu", "advertised": 5, "intended": 12}],
          "nodeStatus": [{"name": "gpu-t4-a", "ok": false, "advertised": {"nvidia.com/gpu": 0},
                          "inProgress": null}]          # the rollout step the node is in, or null
        }
      ],
      "findings": [                                   # in check order (see below), then pool and node order
        {
          "check": "gpu-not-advertised",              # the check's stable id
          "severity": "error",                        # error (exit 1) | warning
          "pool": "t4",                               # null for cluster-wide findings
          "node": "gpu-t4-a",                         # null unless one node
          "subject": "nvidia.com/gpu",                # what differs
          "message": "nvidia.com/gpu: expected 4, actual 0",
          "expected": {"nvidia.com/gpu": 4},          # the values compared; null: absent
          "actual": {"nvidia.com/gpu": 0},
          "hint": "likely: ...; or: ..."              # the causes, most likely first, and the fix
        }
      ],
      "skipped": [{"check": "operator-pods", "reason": "operator.json not found (write it with ...)"}],
      "inProgress": [                                 # nodes mid-rollout (exit 4 when nothing else differs)
        {"pool": "a100", "node": "gpu-a100-a", "state": "MIG reconfiguration to all-balanced pending",
         "ends": "when the mig-manager sets nvidia.com/mig.config.state=success ..."}
      ]
    }

Checks, in report order, with what ``expected`` and ``actual`` hold: ``pool-size`` (node counts; for a
node several pools select, the pool it counts in and the pools), ``unmatched-gpu-node`` (null, the
node's product), ``gpu-not-advertised`` (resource -> count per node), ``capacity-mismatch`` (counts, in
the allocatable or, subject ``<resource> in annotation ...``, in the backend's registration),
``node-registration`` (what the registration should be and what it is), ``gpu-health`` ("healthy",
"unhealthy"), ``label-mismatch`` (label values), ``product-mismatch`` (product labels, or the pool's model
and the registered GPU types), ``mig-state`` (the state label's values, or MIG profile -> devices per
node), ``clusterpolicy`` (field values), ``configmap-drift`` (key contents as data), ``operator-pods``
("rolled out", the DaemonSet's desired/ready/updated counts; null and the counts for one that must not
run), ``release-pods`` ("rolled out", the workload's counts). ``node-registration``, ``gpu-health`` and
``release-pods`` apply where the backend keeps a registration or installs a release (HAMi). Each is a
module of :mod:`gpustack_gen.verify.checks`, whose docstring says what it relies on upstream. A node's
``advertised`` holds its allocatable and, where the backend registers more (HAMi's GPU memory and cores),
what it registers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import Severity
from .model import Finding
from .result import PoolSummary, VerifyResult

MATCHES = "the cluster matches the fleet"
IN_PROGRESS = "a rollout is in progress"


@dataclass(frozen=True)
class ReportContext:
    """What a report needs besides the result: colour, and the file annotations point at."""

    color: bool = False
    annotation_file: str | None = None


_SEVERITY_COLORS = {Severity.ERROR: "red", Severity.WARNING: "yellow"}


def pool_line(pool: PoolSummary) -> str:
    """``t4 (tesla-t4, time-slicing, 4 per GPU): 1/3 nodes ok; nvidia.com/gpu 5/12``."""
    found = len(pool.nodes)
    nodes = f"{pool.ok_nodes}/{found} nodes ok" + (
        f" ({pool.intended_nodes} intended)" if found != pool.intended_nodes else ""
    )
    capacity = ", ".join(f"{t.resource} {t.advertised}/{t.intended}" for t in pool.capacity)
    return f"{pool.name} ({pool.gpu}, {pool.sharing}): {nodes}" + (f"; {capacity}" if capacity else "")


def summary_line(result: VerifyResult) -> str:
    errors, warnings = result.count(Severity.ERROR), result.count(Severity.WARNING)
    verdict = MATCHES if not errors else "the cluster does not match the fleet"
    if not errors and result.in_progress:
        verdict = (
            f"{IN_PROGRESS}: {len(result.in_progress)} node{'s' if len(result.in_progress) != 1 else ''} mid-rollout"
        )
    return f"{verdict}: {errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"


def finding_line(finding: Finding) -> str:
    """``error gpu-not-advertised: nvidia.com/gpu: expected 4, actual 0 (likely: ...)``, without the node."""
    text = f"{finding.severity.value} {finding.check}: {finding.message}"
    return text + (f" ({finding.hint})" if finding.hint else "")


def _node_findings(result: VerifyResult, pool: str, node: str) -> list[Finding]:
    return [f for f in result.findings if f.pool == pool and f.node == node]


def render_text(result: VerifyResult, context: ReportContext = ReportContext()) -> str:
    import click

    def style(text: str, **kwargs: Any) -> str:
        return click.style(text, **kwargs) if context.color else text

    def tagged(finding: Finding) -> str:
        return style(f"{finding.severity.value} {finding.check}", fg=_SEVERITY_COLORS[finding.severity]) + finding_line(
            finding
        ).removeprefix(f"{finding.severity.value} {finding.check}")

    lines = [
        style(f"gpustack-gen verify: cluster {result.cluster} of {result.fleet} against {result.source}", bold=True)
    ]
    shown: set[int] = set()
    if result.pools is not None:
        lines += [f"  {pool_line(pool)}" for pool in result.pools]
        for pool in result.pools:
            lines.append("")
            lines.append(style(f"pool {pool.name}:", bold=True))
            for finding in result.findings:
                if finding.pool == pool.name and finding.node is None:
                    shown.add(id(finding))
                    lines.append(f"  {tagged(finding)}")
            for node in pool.nodes:
                found = _node_findings(result, pool.name, node.name)
                shown.update(id(f) for f in found)
                step = next((p for p in result.in_progress if (p.pool, p.node) == (pool.name, node.name)), None)
                if step is not None:
                    lines.append(f"  {node.name}: {style('in progress', fg='cyan')}: {step.state} (ends {step.ends})")
                elif not found or node.ok:
                    advertised = ", ".join(f"{r} {n}" for r, n in node.advertised.items())
                    lines.append(
                        f"  {node.name}: {style('ok', fg='green')}" + (f" ({advertised})" if advertised else "")
                    )
                lines += [f"  {node.name}: {tagged(f)}" for f in found]
    rest = [f for f in result.findings if id(f) not in shown]
    if rest:
        lines.append("")
        lines.append(style("cluster:", bold=True))
        lines += [f"  {f.node + ': ' if f.node else ''}{tagged(f)}" for f in rest]
    if result.skipped:
        lines.append("")
        lines += [style(f"skipped {s.check}: {s.reason}", dim=True) for s in result.skipped]
    lines.append("")
    lines.append(summary_line(result))
    return "\n".join(lines) + "\n"


def render_json(result: VerifyResult, context: ReportContext = ReportContext()) -> str:
    """The stable JSON document described in this module's docstring (2-space indent, key order fixed)."""
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n"


def render_markdown(result: VerifyResult, context: ReportContext = ReportContext()) -> str:
    """A summary table per pool, then the findings as a table (for a pull request or an issue)."""
    from ..emit.markdown import markdown_escape

    def cell(value: Any) -> str:
        return str(markdown_escape(value))

    icon = "✅" if not result.count(Severity.ERROR) else "❌"
    lines = [f"### {icon} gpustack-gen verify: cluster `{cell(result.cluster)}`", "", cell(summary_line(result)), ""]
    if result.pools is not None:
        lines += ["| pool | GPU | sharing | nodes ok | capacity |", "|---|---|---|---|---|"]
        for pool in result.pools:
            capacity = ", ".join(f"{t.resource} {t.advertised}/{t.intended}" for t in pool.capacity)
            lines.append(
                f"| {cell(pool.name)} | {cell(pool.gpu)} | {cell(pool.sharing)} | "
                f"{pool.ok_nodes}/{len(pool.nodes)} ({pool.intended_nodes} intended) | {cell(capacity)} |"
            )
        lines.append("")
    if result.findings:
        lines += ["| severity | check | pool | node | finding | hint |", "|---|---|---|---|---|---|"]
        for f in result.findings:
            lines.append(
                f"| {f.severity.value} | {f.check} | {cell(f.pool or '')} | {cell(f.node or '')} | {cell(f.message)} | "
                f"{cell(f.hint)} |"
            )
        lines.append("")
    if result.skipped:
        lines += [f"- skipped `{s.check}`: {cell(s.reason)}" for s in result.skipped]
        lines.append("")
    return "\n".join(lines)


_ANNOTATION = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def render_github(result: VerifyResult, context: ReportContext = ReportContext()) -> str:
    """GitHub Actions workflow commands: one ``::error``/``::warning`` per finding, on the fleet file."""
    from ..emit.annotations import workflow_command

    file = context.annotation_file
    lines = []
    for f in result.findings:
        where = " ".join(part for part in (result.cluster, f.pool and f"pool {f.pool}", f.node) if part)
        message = f.message + (f"\nfix: {f.hint}" if f.hint else "")
        lines.append(workflow_command(_ANNOTATION[f.severity], message, file=file, title=f"{where}: {f.check}"))
    if not result.findings:
        lines.append(workflow_command("notice", MATCHES, file=file, title=f"{result.cluster}: verify"))
    lines.append(f"gpustack-gen verify: {summary_line(result)}")
    return "\n".join(lines) + "\n"


VERIFY_REPORTS: dict[str, Callable[[VerifyResult, ReportContext], str]] = {
    "text": render_text,
    "json": render_json,
    "markdown": render_markdown,
    "github": render_github,
}
