"""A rollout plan: per changed cluster, the ordered steps, or the errors that block it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..change.model import Finding, Step
from ..errors import ExitCode

JSON_FORMAT = "gpustack-gen-plan/v1"


@dataclass(frozen=True)
class ClusterRunbook:
    """One cluster's steps in order; a cluster with errors gets none (its change cannot be rolled out as written)."""

    name: str
    context: str  # the kube context every command of the runbook names
    steps: tuple[Step, ...]
    errors: tuple[Finding, ...] = ()
    notes: tuple[Finding, ...] = ()  # findings with nothing to run (a cluster leaving the fleet, say)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "context": self.context,
            "steps": [step.as_dict() for step in self.steps],
            "errors": [error.as_dict() for error in self.errors],
            "notes": [note.message for note in self.notes],
        }


@dataclass(frozen=True)
class PlanResult:
    old_label: str
    new_label: str
    rendered: str  # the folder the commands expect the new render in
    clusters: tuple[ClusterRunbook, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.clusters

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.DIFFERS if any(c.errors for c in self.clusters) else ExitCode.OK

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON document (see :mod:`gpustack_gen.plan.report` for the format)."""
        return {
            "format": JSON_FORMAT,
            "old": self.old_label,
            "new": self.new_label,
            "rendered": self.rendered,
            "clusters": [cluster.as_dict() for cluster in self.clusters],
        }
