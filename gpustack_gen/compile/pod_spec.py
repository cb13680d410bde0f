"""The pod-spec parts of a workload fragment that backends share: resource limits and scheduling."""

from __future__ import annotations

from typing import Any

from ..model.fleet import Cluster, Workload
from .tolerations import toleration


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
    tolerations = [toleration(t) for t in pool.taints]
    return {"resources": resources, "nodeSelector": dict(pool.node_selector), "tolerations": tolerations}
