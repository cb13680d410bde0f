"""The GPU Operator's own device plugin, as the backends that turn it off (HAMi, the DRA driver) see it.

They still need GPU Feature Discovery, which labels the GPU nodes, and the mig-manager where a pool's GPUs can
do MIG (it applies each pool's ``nvidia.com/mig.config``: a MIG layout, or ``all-disabled``). The plugin's
DaemonSet must be gone: with ``devicePlugin.enabled: false`` the Operator deletes it, and its pod on a node
explains what the node advertises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...compile.artifact import DEVICE_PLUGIN_DAEMONSET, MIG_MANAGER_DAEMONSET
from ...compile.operator import operand_daemonsets
from .. import commands

if TYPE_CHECKING:
    from ...k8s_state import Pod
    from ...model.fleet import Cluster
    from ..model import NodeView

PLUGIN = DEVICE_PLUGIN_DAEMONSET.removeprefix("daemonset/")


def kept_daemonsets(cluster: Cluster) -> tuple[str, ...]:
    """The Operator's DaemonSets such a backend needs rolled out."""
    names = operand_daemonsets(cluster)
    if any(pool.gpu.mig_capable for pool in cluster.pools):
        names += (MIG_MANAGER_DAEMONSET,)
    return tuple(name.removeprefix("daemonset/") for name in names)


def unwanted(cluster: Cluster, why: str) -> dict[str, str]:
    """The plugin's DaemonSet, with ``why`` it must not run and how it goes."""
    namespace = cluster.operator.namespace
    return {
        PLUGIN: (
            f"the GPU Operator's own device plugin still runs: {why}; with devicePlugin.enabled false in the "
            "ClusterPolicy (see clusterpolicy) the Operator deletes it: "
            + commands.run(cluster, "wait", "--for=delete", "-n", namespace, DEVICE_PLUGIN_DAEMONSET, "--timeout=10m")
        )
    }


def pod_on(view: NodeView) -> Pod | None:
    """The plugin's pod on the node, if one runs there."""
    return next((p for p in view.state.pods_on(view.node.name) if p.owner == PLUGIN), None)
