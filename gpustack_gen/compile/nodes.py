"""Per-pool node labels: what a node group (Karpenter, a cloud node group, Ansible) must set."""

from __future__ import annotations

import shlex
from typing import Any

from ..model.fleet import Cluster
from .artifact import Artifact
from .plan import ClusterPlan

DEVICE_PLUGIN_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"


def pool_labels(cluster: Cluster, plan: ClusterPlan) -> dict[str, dict[str, str]]:
    """Pool name -> the NVIDIA labels its nodes must carry."""
    result: dict[str, dict[str, str]] = {}
    for pool in cluster.pools:
        labels: dict[str, str] = {}
        if pool.name in plan.device_plugin_keys:
            labels[DEVICE_PLUGIN_LABEL] = plan.device_plugin_keys[pool.name]
        mig_name = plan.mig_config_label(pool)
        if mig_name is not None:
            labels[MIG_CONFIG_LABEL] = mig_name
        result[pool.name] = labels
    return result


def node_labels(cluster: Cluster, plan: ClusterPlan) -> Artifact:
    pools: list[dict[str, Any]] = []
    for pool, labels in zip(cluster.pools, pool_labels(cluster, plan).values(), strict=True):
        selector = ",".join(f"{k}={v}" for k, v in pool.node_selector)
        entry: dict[str, Any] = {
            "name": pool.name,
            "gpu": pool.gpu.id,
            "nodeSelector": dict(pool.node_selector),
            "labels": labels,
        }
        if labels:
            assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in labels.items())
            entry["command"] = f"kubectl label nodes --selector {shlex.quote(selector)} {assignments} --overwrite"
        pools.append(entry)
    return Artifact(
        "node-labels.yaml",
        "node-labels",
        ({"cluster": cluster.name, "pools": pools},),
        ("Labels each pool's nodes must carry. Set them in the node group template so new nodes get them.",),
    )
