"""A pool's nodeSelector changes: its nodes need the new labels before workloads select them.

The labels are set first, by the old selector: every later step of the plan (drain, relabel, waits,
uncordon) finds the pool's nodes by the new one. The pool's node-group template gets them first (a
``node-group`` step), so that a node added meanwhile is one the new selector finds.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome, Phase

ID = "node-selector"
LEVEL = Level.NONE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    for before, after in change.common_pools:
        if before.node_selector == after.node_selector:
            continue
        added = {k: v for k, v in after.node_selector if (k, v) not in before.node_selector}
        plan = [steps.node_group(change, after, ID)]
        if before.nodes > 0 and added:
            plan.append(
                steps.label_nodes(
                    before,
                    dict(added),
                    "give the pool's nodes the labels of its new nodeSelector before its workloads select them and "
                    "before any step finds the nodes by it",
                    ID,
                    Phase.FIRST_LABELS,
                    labelled=after,
                )
            )
        old_text = ",".join(f"{k}={v}" for k, v in before.node_selector)
        new_text = ",".join(f"{k}={v}" for k, v in after.node_selector)
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"pool {after.name}: nodeSelector {old_text} -> {new_text}; set the new labels in the node group "
                "template so new nodes get them",
                after.name,
                (after.name,),
            ),
            tuple(plan),
        )
