"""The pod-spec parts of a workload fragment that backends share: resource limits and scheduling."""

from __future__ import annotations

from typing import Any

from ..model.fleet import Cluster, Workload


def limits_values(cluster: Cluster, workload: Workload) -> dict[str, Any]:
    """The fragment of a backend whose pods ask for extended resources: ``resources.limits``."""
    limits = {resource: str(count) for resource, count in cluster.workload_limits(workload).items()}
    return scheduling(cluster, workload, {"limits": limits})


def scheduling(cluster: Cluster, workload: Workload, resources: dict[str, Any]) -> dict[str, Any]:
    """``resources`` plus the cpu/memory requests, and the pool's nodeSelector and tolerations."""
    pool = cluster.pool_of(workload)
    requests = {
        name: value for name, value in (("cpu", workload.cpu), ("memory", workload.memory)) if value is not None
    }
    if requests:
        resources = {**resources, "requests": requests}
    tolerations = [
        {
            "key": t.key,
            "operator": "Equal" if t.value is not None else "Exists",
            **({"value": t.value} if t.value else {}),
            "effect": t.effect,
        }
        for t in pool.taints
    ]
    return {"resources": resources, "nodeSelector": dict(pool.node_selector), "tolerations": tolerations}
