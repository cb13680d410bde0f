"""Helm-values fragments for the services' own charts: resources, nodeSelector and tolerations.

Each backend writes its own fragment (its compilers' ``workload_values``): ``limits_values`` here is the
one of the backends whose pods ask for extended resources in ``resources.limits``; the DRA backend asks
through ResourceClaims instead. The scheduling part (requests, nodeSelector, tolerations) is shared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model.fleet import Cluster, Pool, Workload
from .artifact import Artifact

if TYPE_CHECKING:
    from .backends import BackendCompilers


def workload_values(cluster: Cluster, workload: Workload) -> dict[str, Any]:
    """The fragment of ``workload`` on its cluster's backend."""
    return _backend(cluster).workload_values(cluster, workload)


def limits_values(cluster: Cluster, workload: Workload) -> dict[str, Any]:
    """The fragment of a backend whose pods ask for extended resources: ``resources.limits``."""
    limits = {resource: str(count) for resource, count in cluster.workload_limits(workload).items()}
    return scheduling(cluster, workload, {"limits": limits})


def scheduling(cluster: Cluster, workload: Workload, resources: dict[str, Any]) -> dict[str, Any]:
    """``resources`` plus the cpu/memory requests, and the pool's nodeSelector and tolerations."""
    pool = _pool(cluster, workload)
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


def workload_fragment(cluster: Cluster, workload: Workload) -> Artifact:
    pool = _pool(cluster, workload)
    values = workload_values(cluster, workload)
    notes = [
        f"Values fragment for {workload.namespace}/{workload.name} on pool {pool.name} ({pool.gpu.name}):",
        "merge it into the service's chart values (helm --values).",
    ]
    if pool.sharing.is_shared:
        notes.append(f"{pool.sharing.strategy}: no memory isolation from the other pods on the same GPU.")
    notes += _backend(cluster).workload_notes(cluster, workload)
    return Artifact(f"workloads/{workload.file_stem}.yaml", "workload-values", (values,), tuple(notes))


def _pool(cluster: Cluster, workload: Workload) -> Pool:
    pool = cluster.pool(workload.pool)
    assert pool is not None  # checked when the fleet was loaded
    return pool


def _backend(cluster: Cluster) -> BackendCompilers:
    from .backends import backend_of  # here: the backend packages import this module

    return backend_of(cluster)
