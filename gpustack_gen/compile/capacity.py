"""What each pool offers: physical GPUs, advertised resources, sharing and isolation."""

from __future__ import annotations

from typing import Any

from ..model.fleet import Cluster
from .artifact import Artifact
from .backends import backend_of


def capacity(cluster: Cluster) -> Artifact:
    backend = backend_of(cluster)
    asked = cluster.requested_by_pool()
    pools: list[dict[str, Any]] = []
    for pool in cluster.pools:
        sharing: dict[str, Any] = {"strategy": pool.sharing.strategy}
        if pool.sharing.is_shared:
            sharing["replicas"] = pool.sharing.replicas
        if pool.sharing.strategy == "mig":
            sharing["migDevicesPerGpu"] = dict(pool.mig_devices())
        per_node = cluster.resources_per_node(pool)
        entry: dict[str, Any] = {
            "name": pool.name,
            "gpu": pool.gpu.id,
            "model": pool.gpu.name,
            "nodes": pool.nodes,
            "gpusPerNode": pool.gpus_per_node,
            "physicalGpus": pool.physical_gpus,
            "sharing": sharing,
            "isolation": cluster.semantics.isolation(cluster, pool),
            "perNode": per_node,
            "total": cluster.resources_total(pool),
            "requested": _in_order_of(per_node, asked.get(pool.name, {})),
        }
        entry.update(backend.capacity_details(cluster, pool))  # a key it gives again keeps its place
        pools.append(entry)
    return Artifact(
        "capacity.yaml",
        "capacity",
        ({"cluster": cluster.name, "migStrategy": cluster.mig_strategy, "pools": pools},),
    )


def _in_order_of(offered: dict[str, int], requested: dict[str, int]) -> dict[str, int]:
    """The requested resources in the order the pool offers them (perNode, total), any others after, sorted."""
    order = {resource: index for index, resource in enumerate(offered)}
    return dict(sorted(requested.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))
