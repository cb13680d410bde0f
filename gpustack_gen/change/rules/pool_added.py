"""A pool joins a running cluster: its config reaches the nodes before their labels do."""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import DEVICE_PLUGIN_LABEL
from ...compile.node_labels import selector_text
from ...model.backends.gpu_operator import NAME
from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome, Step

ID = "pool-added"
LEVEL = Level.NONE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):  # the device plugin's key and labels (dra: dra_objects)
        return
    _, new = change.both
    for pool in new.pools:
        if pool.name in change.old_pools or change.renamed(pool.name):
            continue
        labels = change.new_labels[pool.name]
        plan: list[Step] = []
        key = labels.get(DEVICE_PLUGIN_LABEL)
        if key is not None:  # the GPU Operator's device plugin reads the pool's config from the ConfigMap
            plan += [
                steps.apply_configmaps(change, new, f"add pool {pool.name}'s device-plugin key", ID),
                steps.device_plugin_sync(new, key, ID, pool.name),
            ]
        if pool.nodes > 0:
            plan += steps.label_new_nodes(
                change,
                pool,
                "label the pool's nodes (create its node group with these labels in its template, so that nodes get "
                "them when they join)",
                ID,
            )
            plan.append(steps.allocatable(new, pool, ID))
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"pool {pool.name} added ({pool.nodes} x {pool.gpus_per_node} {pool.gpu.id}): create its node group "
                f"with the selector labels {selector_text(pool)} and the labels of node-labels.yaml",
                pool.name,
                (pool.name,),
            ),
            tuple(plan),
        )
