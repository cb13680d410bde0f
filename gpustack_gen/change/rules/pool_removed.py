"""A pool leaves the cluster: move or stop its workloads, drain its nodes, then remove its node group."""

from __future__ import annotations

from collections.abc import Iterator

from .. import commands, steps
from ..context import ClusterChange
from ..model import Action, Finding, Level, Outcome, Phase, Step

ID = "pool-removed"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    for pool in change.old.pools:
        if pool.name in change.new_pools or change.renamed(pool.name):
            continue
        plan: list[Step] = []
        if pool.nodes > 0:
            plan += steps.drain(
                pool,
                "evict the pods left on the pool's nodes (the workloads that move have moved by now)",
                ID,
                Phase.RETIRE_NODES,
            )
            plan.append(
                Step(
                    Action.WAIT,
                    commands.wait_nodes_gone(pool),
                    commands.list_nodes(pool),
                    "remove the pool's node group in your infrastructure; this waits until its nodes are gone",
                    pool.name,
                    ID,
                    Phase.RETIRE_NODES,
                )
            )
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"pool {pool.name} removed: its {pool.nodes} nodes ({pool.physical_gpus} {pool.gpu.id} GPUs) leave "
                "the cluster; drain them, then remove the node group",
                pool.name,
                (pool.name,),
            ),
            tuple(plan),
        )
