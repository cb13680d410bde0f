"""Helm-values fragments for the services' own charts: resources, nodeSelector and tolerations."""

from __future__ import annotations

from typing import Any

from ..model.fleet import Cluster, Workload
from .artifact import Artifact
from .backends import backend_of


def workload_values(cluster: Cluster, workload: Workload) -> dict[str, Any]:
    pool = cluster.pool(workload.pool)
    assert pool is not None  # checked when the fleet was loaded
    limits = {resource: str(count) for resource, count in cluster.workload_limits(workload).items()}
    resources: dict[str, Any] = {"limits": limits}
    requests = {
        name: value for name, value in (("cpu", workload.cpu), ("memory", workload.memory)) if value is not None
    }
    if requests:
        resources["requests"] = requests
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
    pool = cluster.pool(workload.pool)
    assert pool is not None
    notes = [
        f"Values fragment for {workload.namespace}/{workload.name} on pool {pool.name} ({pool.gpu.name}):",
        "merge it into the service's chart values (helm --values).",
    ]
    if pool.sharing.is_shared:
        notes.append(f"{pool.sharing.strategy}: no memory isolation from the other pods on the same GPU.")
    notes += backend_of(cluster).workload_notes(cluster, workload)
    return Artifact(
        f"workloads/{workload.file_stem}.yaml",
        "workload-values",
        (workload_values(cluster, workload),),
        tuple(notes),
    )
