"""Format a :class:`~.result.PlanResult` as text, Markdown or JSON; every function returns a string.

JSON format (``format`` is ``gpustack-gen-plan/v1``; keys never change within v1, new keys may be added)::

    {
      "format": "gpustack-gen-plan/v1",
      "old": "origin/main:examples/fleet.yaml",    # how each side was named
      "new": "examples/fleet.yaml",
      "rendered": "rendered",                       # where the commands expect `render --out` to have written NEW
      "clusters": [                                 # clusters whose intent differs, sorted by name
        {
          "name": "prod",
          "context": "prod",                        # the kube context every command names (the cluster's kubeContext)
          "steps": [                                # in order; empty when "errors" is not
            {
              "action": "apply-configmaps",         # apply-configmaps | operator | backend | label-nodes |
                                                    # restart-device-plugin | drain | wait | uncordon |
                                                    # update-workloads | prune
              "command": "kubectl --context prod apply -k rendered/prod",  # null: no command can do it (see reason)
              "verify": "kubectl --context prod diff -k rendered/prod",    # shows the step finished (null: the command does)
              "reason": "...",                      # why, and what to watch for
              "pool": null,                         # the pool it acts on, when one
              "rule": "device-plugin-config"        # the change rule(s) it comes from, comma-separated
            }
          ],
          "errors": [                               # why the change cannot be rolled out as written
            {"rule": "retention", "level": "error", "pool": "a100", "message": "...", "items": ["a100"],
             "hint": "add to cluster train: retired: ...", "actions": []}
          ],
          "notes": ["..."]                          # findings with nothing to run
        }
      ]
    }

Commands run in the order given from the folder ``plan`` ran in; each assumes the earlier ones finished
(their ``verify`` shows it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .result import PlanResult

NOTHING_TO_DO = "nothing to roll out"


@dataclass(frozen=True)
class ReportContext:
    color: bool = False
    render_command: str | None = None  # the render that writes what the commands apply


def render_text(result: PlanResult, context: ReportContext = ReportContext()) -> str:
    import click

    def style(text: str, **kwargs: object) -> str:
        return click.style(text, **kwargs) if context.color else text  # type: ignore[arg-type]

    lines = [style(f"gpustack-gen plan: {result.old_label} -> {result.new_label}", bold=True)]
    if result.empty:
        lines.append(NOTHING_TO_DO)
        return "\n".join(lines) + "\n"
    render = context.render_command or f"gpustack-gen render NEW --out {result.rendered}"
    lines.append(f"Run each step from this folder, in order, after {render}; its check shows it finished.")
    for cluster in result.clusters:
        lines.append("")
        if cluster.errors:
            lines.append(style(f"{cluster.name}: cannot be rolled out as written", fg="red", bold=True))
            for error in cluster.errors:
                lines.append(f"  error: {error.message}")
                if error.hint:
                    lines.append(f"    fix: {error.hint}")
        else:
            count = len(cluster.steps)
            steps = f"{count} step{'s' if count != 1 else ''}"
            where = f", each on kube context {cluster.context}" if count else ""
            lines.append(style(f"{cluster.name}: {steps}{where}", bold=True))
        for number, step in enumerate(cluster.steps, 1):
            where = f" (pool {step.pool})" if step.pool else ""
            lines.append(f"  {number}. {style(step.action.value, bold=True)}{where}")
            if step.command is not None:
                lines.append(f"     $ {step.command_text}")
            if step.verify is not None:
                lines.append(style(f"     check: {step.verify_text}", dim=True))
            lines.append(style(f"     why: {step.reason}", dim=True))
        for note in cluster.notes:
            lines.append(f"  note: {note.message}")
    return "\n".join(lines) + "\n"


def render_json(result: PlanResult, context: ReportContext = ReportContext()) -> str:
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n"


def render_markdown(result: PlanResult, context: ReportContext = ReportContext()) -> str:
    from ..diff.templates import environment
    from ..emit.markdown import markdown_escape

    env = environment()
    env.filters["md"] = markdown_escape
    return env.get_template("plan.md.j2").render(
        result=result,
        render_command=context.render_command or f"gpustack-gen render NEW --out {result.rendered}",
        nothing=NOTHING_TO_DO,
    )


PLAN_REPORTS: dict[str, Callable[[PlanResult, ReportContext], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}
