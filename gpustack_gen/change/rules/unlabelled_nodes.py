"""What ``any`` holds changes: a capacity change for every GPU node without a device-plugin config label.

The Operator points the device plugin at ``any`` for a node without ``nvidia.com/device-plugin.config``
(``devicePlugin.config.default``; k8s-device-plugin ``cmd/config-manager/main.go`` falls back to the
default key when the label is empty), so a second pool added beside a pool that ran unlabelled turns those
nodes from the shared config into whole GPUs (``defaultSharing: auto``) at the next plugin restart. The
pool's own key has held the same content all along, so the plan labels the pool's nodes into it by the
pool's selector before the ConfigMap changes: the config-manager sidecar watches only its node's label
(main.go, the label watch) and reloads the same config under the new key, and the nodes keep their
capacity. A GPU node outside every pool's selector cannot be found from the fleet: a check before the
apply refuses to go on while one is unlabelled, and says how to fix it.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import DEVICE_PLUGIN_LABEL
from ...model.backends.gpu_operator import NAME, RESOURCE_GPU
from ...model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, DEFAULT_SHARING_NONE, Sharing
from .. import commands, steps
from ..context import ClusterChange
from ..model import Action, Finding, Level, Outcome, Phase, Step

ID = "unlabelled-nodes"
LEVEL = Level.RESTART  # the relabel makes the sidecar reload the plugin; running pods keep running


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    pools = change.pools_leaving_default_key
    if not pools:  # `any` that follows its pool (or no pool's nodes ran on it) keeps unlabelled nodes right
        return
    before, after = change.old_names.default_sharing, change.new_names.default_sharing
    keep = change.old_names.default_from or DEFAULT_SHARING_NONE
    fix = (
        f"label it into its pool (node-labels.yaml has each pool's command), or set defaultSharing: {keep} to keep "
        f"{DEFAULT_DEVICE_PLUGIN_KEY} as it was"
    )
    plan: list[Step] = [
        steps.label_nodes(
            pool,
            {DEVICE_PLUGIN_LABEL: pool.name},
            f"before {DEFAULT_DEVICE_PLUGIN_KEY} changes: a node of the pool without the label runs on "
            f"{DEFAULT_DEVICE_PLUGIN_KEY}, whose content equals the pool's key until now; labelled, it keeps "
            "its config",
            ID,
            Phase.CHECK,
        )
        for pool in pools
    ]
    # The template carries the label before the default key changes: a node added later is born labelled.
    plan += [steps.node_group(change, pool, ID, Phase.CHECK) for pool in pools]
    plan.append(
        Step(
            Action.CHECK,
            commands.every_gpu_node_labelled(),
            commands.gpu_node_labels(),
            f"no GPU node is left on {DEFAULT_DEVICE_PLUGIN_KEY} before it changes ({before.describe()} -> "
            f"{after.describe()}); if the check lists a node, {fix}",
            None,
            ID,
            Phase.APPLY,  # before the apply that changes the key (this rule runs first)
        )
    )
    counts = f"{_per_gpu(before)} to {_per_gpu(after)} {RESOURCE_GPU} per GPU"
    relied = ", ".join(pool.name for pool in pools)
    covered = f"; the plan first labels the nodes of pool{'s' if len(pools) > 1 else ''} {relied} into their own key"
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"{DEFAULT_DEVICE_PLUGIN_KEY}, the config of GPU nodes without {DEVICE_PLUGIN_LABEL}, changes from "
            f"{before.describe()} to {after.describe()}: such a node goes from {counts}{covered}; a GPU node "
            f"outside every pool's selector would change too: {fix}",
            None,
            tuple(pool.name for pool in pools),
        ),
        tuple(plan),
    )


def _per_gpu(sharing: Sharing) -> int:
    return sharing.replicas if sharing.is_shared else 1
