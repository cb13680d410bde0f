"""The GPU Operator's driver upgrade controller (NVIDIA/k8s-operator-libs@7d667fbaa7ac ``pkg/upgrade/``, pinned
by gpu-operator v25.3.3's go.mod; ../shared/research/real-world.md §7).

* A node goes ``upgrade-required`` only once its driver pod is out of sync with the DaemonSet
  (``upgrade_state.go:488-535``): here, when the ClusterPolicy's driver changes.
* ``autoUpgrade: false``: the controller does nothing (``:372-375``) and the ``OnDelete`` DaemonSet replaces
  nothing.
* In progress = total - (unknown + done + upgrade-required) (``:1040-1061``); no node starts while
  ``maxParallelUpgrades`` are in progress, 0 meaning no limit (``:1074-1085``).
* A started node is cordoned, its GPU pods deleted through kubectl's drain filters with
  ``DeleteEmptyDirData = gpuPodDeletion.deleteEmptyDir`` and ``Force = gpuPodDeletion.force``
  (``pod_manager.go:149-160``; the chart's ``gpuPodDeletion`` is the ClusterPolicy's ``podDeletion``); one the filters refuse sends the node to ``upgrade-failed``, cordoned
  (``:193-203,396-406``), which counts as in progress. It leaves that state only once its driver pod is in sync
  (``upgrade_state.go:833-875``), which under ``OnDelete`` takes someone deleting the pod: the model never does.
* Then the driver pod restarts and reloads the driver; the operands restart with it; the node is uncordoned
  unless it was cordoned before (``:508-520,846-856``) and ends ``upgrade-done``.
* GFD labels the loaded driver: ``cuda.driver-version.full`` from the device plugin's image (v24.3.0 on),
  ``cuda.driver.major|minor|rev`` from the standalone GFD v0.8.2 of v23.9.2 (gpu-feature-discovery@v0.8.2
  ``internal/lm/nvml.go:98-101``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cluster import Cluster, Node

STATE_LABEL = "nvidia.com/gpu-driver-upgrade-state"
FULL_LABEL = "nvidia.com/cuda.driver-version.full"
OLD_LABELS = ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev")
RELOAD_SECONDS = 300  # the driver pod's restart, the module unload and load, the validator
NOT_IN_PROGRESS = ("", "upgrade-done", "upgrade-required")


def driver_labels(version: str, standalone_gfd: bool) -> dict[str, str]:
    if not standalone_gfd:
        return {FULL_LABEL: version}
    return dict(zip(OLD_LABELS, version.split("."), strict=False))


@dataclass
class Controller:
    reload_at: dict[str, float] = field(default_factory=dict)
    cordoned_before: set[str] = field(default_factory=set)

    def busy(self, cluster: Cluster) -> bool:
        return any(n.labels.get(STATE_LABEL, "") != "upgrade-done" for n in cluster.nodes.values())

    def required(self, cluster: Cluster) -> None:
        """The driver DaemonSet's template changed: every node's driver pod is out of sync."""
        for node in cluster.nodes.values():
            node.labels[STATE_LABEL] = "upgrade-required"

    def step(self, cluster: Cluster) -> None:
        spec = cluster.spec
        if spec is None or not spec["driver"].get("enabled", True):
            return
        policy: dict[str, Any] = spec["driver"].get("upgradePolicy") or {}
        for name, at in list(self.reload_at.items()):
            node = cluster.nodes.get(name)
            if node is not None and cluster.now >= at:
                self._done(cluster, node)
        if not policy.get("autoUpgrade", True):
            return
        parallel = int(policy.get("maxParallelUpgrades", 1))
        nodes = sorted(cluster.nodes.values(), key=lambda n: n.name)
        busy = sum(1 for n in nodes if n.labels.get(STATE_LABEL, "") not in NOT_IN_PROGRESS)
        for node in nodes:
            if node.labels.get(STATE_LABEL) != "upgrade-required":
                continue
            if parallel and busy >= parallel:
                break
            busy += 1
            self._start(cluster, node, policy.get("podDeletion") or {})

    def _start(self, cluster: Cluster, node: Node, deletion: dict[str, Any]) -> None:
        if node.unschedulable:
            self.cordoned_before.add(node.name)
        node.unschedulable = True
        pods = cluster.pods_on(node.name)
        refused = [
            pod
            for pod in pods
            if (pod.empty_dir and not deletion.get("deleteEmptyDir", False))
            or (not pod.controller and not deletion.get("force", False))
        ]
        if refused:
            node.labels[STATE_LABEL] = "upgrade-failed"
            return
        for pod in pods:
            if pod.controller:
                pod.node = None
            else:
                cluster.pods.remove(pod)
        node.labels[STATE_LABEL] = "pod-restart-required"
        for kind in ("dp", "gfd", "mps"):
            getattr(node, kind).running = False
        self.reload_at[node.name] = cluster.now + RELOAD_SECONDS

    def _done(self, cluster: Cluster, node: Node) -> None:
        del self.reload_at[node.name]
        node.labels.update(cluster.driver_labels())
        node.labels[STATE_LABEL] = "upgrade-done"
        if node.name not in self.cordoned_before:
            node.unschedulable = False
        self.cordoned_before.discard(node.name)
        for kind in ("dp", "gfd", "mps"):
            cluster.start_operand(node, kind)
