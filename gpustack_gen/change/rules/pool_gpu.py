"""A pool changes GPU model: its nodes are replaced by nodes of the new model.

Drain the old nodes, replace the node group (new nodes join with the pool's labels, the drained ones go),
give the new nodes the pool's labels in case their template lacks them, and wait until they advertise
what the pool offers. The old and new nodes carry the same selector labels, so the wait for the old ones
to go selects them by their cordon too.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import commands, steps
from ..context import ClusterChange
from ..model import Action, Finding, Level, Outcome, Phase, Step

ID = "pool-gpu"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    for before, after in change.common_pools:
        if before.gpu.id == after.gpu.id:
            continue
        plan: list[Step] = []
        if before.nodes > 0:
            plan += [
                # By the new selector: a new selector's labels are on the old nodes first (node-selector).
                *steps.drain(after, f"the pool's {before.gpu.id} nodes leave: evict their pods first", ID),
                Step(
                    Action.WAIT,
                    commands.wait_nodes_gone(after, cordoned_only=True),
                    commands.list_nodes(after, "nvidia.com/gpu.product"),
                    f"replace the pool's node group: create {after.gpu.id} nodes from a template with the pool's "
                    "labels (node-labels.yaml) and remove the drained ones; this waits until they are gone",
                    after.name,
                    ID,
                    Phase.LABELS,
                ),
            ]
        config = change.new_names.mig_config_label(after)
        if after.nodes > 0 and config is not None:
            # The mig-manager pod of a new node mounts the ConfigMap as it is then: no volume sync to wait for.
            plan.append(
                steps.apply_configmaps(change, change.new, f"MIG config {config} for the pool's {after.gpu.id}", ID)
            )
        if after.nodes > 0:
            plan += steps.label_new_nodes(
                change,
                after,
                f"the pool's {after.gpu.id} nodes carry its labels (if their template did not set them)",
                ID,
            )
            plan.append(steps.allocatable(change.new, after, ID))
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"pool {after.name} changes GPU model ({before.gpu.id} -> {after.gpu.id}): its nodes are replaced; "
                "its pods wait for the new nodes",
                after.name,
                (after.name,),
            ),
            tuple(plan),
        )
