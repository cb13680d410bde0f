"""A pool leaves and another joins with the same nodeSelector: the same nodes under a new name.

Planned as a rename in place: the new device-plugin key reaches the nodes' volumes, then the nodes are
relabelled to it; the config-manager sidecars watch the label and make the plugin and GFD reload
(k8s-device-plugin ``cmd/config-manager/main.go``), so the GPUs stay advertised throughout. The old key
stays (``retired``, the retention rule) until no node carries it. A rename that also changes the GPU
model, what the pool serves, or its node count is refused: as one change it would read as a pool leaving
(its nodes drained and removed) and one joining on the same nodes.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import DEVICE_PLUGIN_LABEL
from ...compile.node_labels import selector_text
from ...model.backends.gpu_operator import NAME
from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "pool-renamed"
LEVEL = Level.RESTART


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    old, new = change.both
    for before, after in change.overlapping_pools:
        yield Outcome(
            Finding(
                ID,
                Level.ERROR,
                f"pool {before.name} leaves and pool {after.name} joins on nodes both can select (nodeSelector "
                f"{selector_text(before)} and {selector_text(after)}): draining and removing {before.name}'s nodes "
                f"would take {after.name}'s",
                after.name,
                (before.name, after.name),
                f"rename {before.name} to {after.name} with the same nodeSelector in one change, and change the "
                "nodeSelector in another",
            )
        )
    for before, after in change.renamed_pools:
        what = f"pool {before.name} becomes {after.name} (the same nodeSelector: the same nodes)"
        same_service = (
            before.gpu.id == after.gpu.id
            and before.nodes == after.nodes
            and before.sharing == after.sharing
            and old.resources_per_gpu(before) == new.resources_per_gpu(after)
        )
        why = hint = ""
        if not same_service:
            why = "what it serves changes"
            hint = f"keep the name {before.name} in this change and rename it in a change of its own"
        elif not change.on(NAME):
            why = "its backend names its objects after the pool"
            hint = f"keep the name {before.name}: a rename on backend {new.backend} is a new pool"
        if why:
            yield Outcome(Finding(ID, Level.ERROR, f"{what}, and {why}", after.name, (before.name, after.name), hint))
            continue
        key = change.new_labels[after.name][DEVICE_PLUGIN_LABEL]
        plan = [
            steps.apply_configmaps(change, new, f"add device-plugin key {key} for the renamed pool", ID),
            steps.device_plugin_sync(new, key, ID, after.name),
        ]
        mps = after.sharing.strategy == "mps" and after.nodes > 0
        if mps:  # the sidecar's SIGHUP on the new key makes the MPS daemon quit its server
            plan += steps.drain(after, "the relabel restarts the MPS daemon, which ends its clients", ID)
        plan.insert(2, steps.node_group(change, after, ID))
        if after.nodes > 0:
            plan += [
                steps.label_nodes(
                    after,
                    {DEVICE_PLUGIN_LABEL: key},
                    "move the nodes to the pool's new key: the "
                    "config-manager sidecars reload the device plugin and GFD on the label change",
                    ID,
                ),
                steps.allocatable(new, after, ID),
            ]
        if mps:
            plan.append(steps.uncordon(after, ID))
        level, drained = (Level.DISRUPTIVE, ", drained first: its MPS daemon restarts") if mps else (LEVEL, "")
        yield Outcome(
            Finding(
                ID, level, f"{what}: its nodes move to device-plugin key {key}{drained}", after.name, (after.name,)
            ),
            tuple(plan),
        )
