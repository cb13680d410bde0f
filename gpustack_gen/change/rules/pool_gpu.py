"""A pool changes GPU model: its nodes are replaced by nodes of the new model."""

from __future__ import annotations

from collections.abc import Iterator

from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "pool-gpu"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    for before, after in change.common_pools:
        if before.gpu.id == after.gpu.id:
            continue
        plan = []
        if before.nodes > 0:
            plan.append(
                steps.drain(
                    before,
                    f"replace the pool's {before.gpu.id} nodes with {after.gpu.id} nodes carrying the pool's labels "
                    "(a new node group template): evict their pods first",
                    ID,
                )
            )
        if after.nodes > 0:
            plan.append(steps.allocatable(change.new, after, ID))
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"pool {after.name} changes GPU model ({before.gpu.id} -> {after.gpu.id}): its nodes are replaced",
                after.name,
                (after.name,),
            ),
            tuple(plan),
        )
