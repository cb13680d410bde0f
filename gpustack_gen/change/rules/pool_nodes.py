"""A pool's ``nodes`` changes: its node group is scaled outside gpustack-gen; the plan labels the new nodes and
waits until they advertise what the pool offers.

A node created from the node group's template carries the template's labels only; the Operator gives a
MIG-capable one ``nvidia.com/mig.config=all-disabled`` when it has none (gpu-operator@v25.3.3
``controllers/state_manager.go:538-546``), so the labels node-labels.yaml lists are set (and the MIG config as a
relabel) on every node of the pool, which changes nothing on the nodes that already carry them. A
``node-group`` step first names the labels the template must carry.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...shell import text_in
from .. import commands, steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "pool-nodes"
LEVEL = Level.NONE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    _, new = change.both
    for before, after in change.common_pools:
        if before.gpu.id != after.gpu.id or before.nodes == after.nodes:
            continue  # pool-gpu: the nodes are replaced
        if after.nodes < before.nodes:
            yield Outcome(
                Finding(
                    ID,
                    LEVEL,
                    f"pool {after.name}: nodes {before.nodes} -> {after.nodes}: drain the nodes that go "
                    f"({text_in(new.kube_context, commands.drain_node(after, 'NODE'))}), then scale its node group "
                    "down",
                    after.name,
                    (after.name,),
                )
            )
            continue
        reason = (
            f"scale the pool's node group to {after.nodes} nodes first (its template with the labels in "
            "node-labels.yaml); this labels any node that came up without them"
        )
        plan = [*steps.label_new_nodes(change, after, reason, ID), steps.allocatable(new, after, ID)]
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"pool {after.name}: nodes {before.nodes} -> {after.nodes}: scale its node group; the new nodes are "
                "labelled and waited for until they advertise the pool's GPUs",
                after.name,
                (after.name,),
            ),
            tuple(plan),
        )
