"""What a cluster runs beyond the fleet, from a change folder's ``cluster.yaml``: PodDisruptionBudgets over the
fleet's workloads and pods without a controller. The model adds them once the old fleet is installed.

    podDisruptionBudgets: [{workload: research/notebook, minAvailable: 1}]
    barePods: [{name: research/scratch, pool: a100, requests: {nvidia.com/mig-3g.20gb: 1}}]
    emptyDirWorkloads: [ml/api]  # their pods mount an emptyDir (/dev/shm)
    unlabelledPools: [t4]  # their nodes run without nvidia.com/device-plugin.config: the plugin reads `any`
    autoscaler: {pools: [a100]}  # their node groups add a node for Pending GPU pods (:mod:`.autoscaler`)
    running: {...}  # a cluster being adopted: the Operator it runs today (:mod:`.adoption`)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .cluster import DP_LABEL, Cluster, WorkloadPod
from .upstream import load_yaml


def load(path: Path) -> dict[str, Any]:
    return load_yaml(path) if path.is_file() else {}


def add(cluster: Cluster, extras: dict[str, Any], selectors: dict[str, dict[str, str]]) -> None:
    """``selectors``: pool name -> its nodeSelector (a bare pod is pinned to its pool like a workload)."""
    unlabelled = set(extras.get("unlabelledPools") or [])
    for node in cluster.nodes.values():
        if node.pool in unlabelled:
            # The label removed, the config-manager sidecars fall back to the default key (main.go:256-293).
            cluster.set_labels(node, {DP_LABEL: None})
    cluster.empty_dir_workloads = set(extras.get("emptyDirWorkloads") or [])
    for pod in cluster.pods:
        pod.empty_dir = pod.workload in cluster.empty_dir_workloads
    for budget in extras.get("podDisruptionBudgets") or []:
        cluster.pdbs[budget["workload"]] = int(budget["minAvailable"])
    for pod in extras.get("barePods") or []:
        requests = {str(k): int(v) for k, v in pod["requests"].items()}
        cluster.pods.append(
            WorkloadPod(pod["name"], requests, dict(selectors[pod["pool"]]), controller=False, empty_dir=True)
        )
    cluster.schedule()
