"""Rules of the cluster's node-group provider that its pools must follow, reported at the fleet file's lines."""

from __future__ import annotations

from .fleet import Cluster
from .resolve import ClusterOrigin, Report


def check_node_groups(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    if cluster.node_group_provider != "aks":
        return
    for pool, pool_path in zip(cluster.pools, origin.pool_paths, strict=True):
        for index, taint in enumerate(pool.taints):
            if taint.value is None:
                report.warn(
                    (*pool_path, "taints", index),
                    f"AKS documents node-pool taints as key=value:Effect; pool {pool.name!r}'s taint {taint.key} "
                    f"has no value, and node-groups/{pool.name}.aks.yaml writes it {taint.key}:{taint.effect}, "
                    "which AKS may refuse",
                    "give the taint a value, e.g. value: present (the toleration then matches it with Equal)",
                )
