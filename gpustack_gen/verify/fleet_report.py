"""Reports of ``verify FLEET --all``: one summary table of the clusters, then each cluster's own report.

Text: the table (cluster, context, outcome, errors, warnings, nodes in progress), then per cluster its text report
(:func:`.report.render_text`) or why it could not be read, then the worst exit code. JSON
(``gpustack-gen-verify-fleet/v1``)::

    {
      "format": "gpustack-gen-verify-fleet/v1",
      "fleet": "examples/fleet.yaml",
      "exitCode": 1,                                  # the worst of the clusters' (see fleet_run)
      "clusters": [
        {"cluster": "prod", "context": "prod-admin", "exitCode": 0,
         "error": null,                               # why it could not be read (exit 2), else null
         "result": {...}}                             # the cluster's gpustack-gen-verify/v1 document, or null
      ]
    }
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..errors import ExitCode, Severity
from .fleet_run import ClusterOutcome, FleetVerifyResult
from .report import ReportContext, render_text

_OUTCOMES = {
    ExitCode.OK: "matches",
    ExitCode.DIFFERS: "does not match",
    ExitCode.IN_PROGRESS: "rollout in progress",
    ExitCode.INVALID: "not read",
    ExitCode.INTERNAL: "bug",
}
_PLAIN = ReportContext()
_HEADER = ("cluster", "context", "outcome", "errors", "warnings", "in progress")


def _row(outcome: ClusterOutcome) -> tuple[str, ...]:
    result = outcome.result
    counts = (
        ("-", "-", "-")
        if result is None
        else (str(result.count(Severity.ERROR)), str(result.count(Severity.WARNING)), str(len(result.in_progress)))
    )
    return (outcome.cluster, outcome.context, _OUTCOMES[outcome.exit_code], *counts)


def summary_table(result: FleetVerifyResult) -> list[str]:
    rows = [_HEADER, *(_row(outcome) for outcome in result.outcomes)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(_HEADER))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def render_fleet_text(result: FleetVerifyResult, context: ReportContext = _PLAIN) -> str:
    lines = [f"gpustack-gen verify: every cluster of {result.fleet}", ""]
    lines += [f"  {line}" for line in summary_table(result)]
    for outcome in result.outcomes:
        lines += ["", f"== cluster {outcome.cluster} (context {outcome.context}) =="]
        if outcome.result is None:
            lines.append(f"error: {outcome.error}")
        else:
            lines += render_text(outcome.result, context).rstrip("\n").splitlines()
    worst = [o.cluster for o in result.outcomes if o.exit_code is result.exit_code]
    lines += [
        "",
        f"exit {int(result.exit_code)}: {_OUTCOMES[result.exit_code]}" + (f" ({', '.join(worst)})" if worst else ""),
    ]
    return "\n".join(lines) + "\n"


def render_fleet_json(result: FleetVerifyResult, context: ReportContext = _PLAIN) -> str:
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n"


FLEET_REPORTS: dict[str, Callable[[FleetVerifyResult, ReportContext], str]] = {
    "text": render_fleet_text,
    "json": render_fleet_json,
}
