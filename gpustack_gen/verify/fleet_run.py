"""``verify FLEET --all``: every cluster of the fleet, each read through its own kube context, one outcome each.

A cluster that cannot be read (no such context, unreachable, refused, objects the readers refuse) is an outcome
too, with exit code 2, and the others are still checked. The fleet's exit code is the worst of its clusters':
3 (a bug) over 2 (unreadable) over 1 (a finding is an error) over 4 (nodes mid-rollout) over 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ExitCode, FleetError, GpustackError
from ..model.fleet import Cluster
from .result import VerifyResult
from .state import ClusterState

_WORST_FIRST = (ExitCode.INTERNAL, ExitCode.INVALID, ExitCode.DIFFERS, ExitCode.IN_PROGRESS, ExitCode.OK)
FLEET_JSON_FORMAT = "gpustack-gen-verify-fleet/v1"


@dataclass(frozen=True)
class ClusterOutcome:
    cluster: str
    context: str  # the kube context it was read through
    result: VerifyResult | None  # None: it could not be read
    error: str | None = None  # why it could not be read

    @property
    def exit_code(self) -> ExitCode:
        return self.result.exit_code if self.result is not None else ExitCode.INVALID


@dataclass(frozen=True)
class FleetVerifyResult:
    fleet: str
    outcomes: tuple[ClusterOutcome, ...]

    @property
    def exit_code(self) -> ExitCode:
        codes = {outcome.exit_code for outcome in self.outcomes}
        return next((code for code in _WORST_FIRST if code in codes), ExitCode.OK)

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": FLEET_JSON_FORMAT,
            "fleet": self.fleet,
            "exitCode": int(self.exit_code),
            "clusters": [
                {
                    "cluster": outcome.cluster,
                    "context": outcome.context,
                    "exitCode": int(outcome.exit_code),
                    "error": outcome.error,
                    "result": None if outcome.result is None else outcome.result.as_dict(),
                }
                for outcome in self.outcomes
            ],
        }


def kube_context_of(cluster: Cluster) -> str:
    """The kube context ``verify --all`` reads a cluster through: its ``kubeContext`` (default: its name)."""
    return cluster.kube_context


def verify_fleet(
    clusters: tuple[Cluster, ...],
    context_of: Callable[[Cluster], str],
    read: Callable[[Cluster, str], ClusterState],
    verify: Callable[[Cluster, ClusterState], VerifyResult],
    *,
    fleet_label: str,
) -> FleetVerifyResult:
    """Each cluster read through ``context_of(cluster)`` by ``read`` and checked by ``verify``, in fleet order."""
    outcomes = []
    for cluster in clusters:
        context = context_of(cluster)
        try:
            state = read(cluster, context)
        except FleetError as error:
            outcomes.append(ClusterOutcome(cluster.name, context, None, "; ".join(p.format() for p in error.problems)))
            continue
        except GpustackError as error:
            outcomes.append(ClusterOutcome(cluster.name, context, None, str(error)))
            continue
        outcomes.append(ClusterOutcome(cluster.name, context, verify(cluster, state)))
    return FleetVerifyResult(fleet_label, tuple(outcomes))
