"""Helm-values fragments for the services' own charts: resources, nodeSelector and tolerations.

Each backend writes its own fragment (its compilers' ``workload_values``): the backends whose pods ask
for extended resources use :func:`~.pod_spec.limits_values`; the DRA backend asks through
ResourceClaims instead. The scheduling part (requests, nodeSelector, tolerations) is shared.
"""

from __future__ import annotations

from typing import Any

from ..model.fleet import Cluster, Workload
from .artifact import Artifact
from .backends import backend_of


def workload_values(cluster: Cluster, workload: Workload) -> dict[str, Any]:
    """The fragment of ``workload`` on its cluster's backend."""
    return backend_of(cluster).workload_values(cluster, workload)


def workload_fragment(cluster: Cluster, workload: Workload) -> Artifact:
    pool = cluster.pool_of(workload)
    values = workload_values(cluster, workload)
    notes = [
        f"Values fragment for {workload.namespace}/{workload.name} on pool {pool.name} ({pool.gpu.name}):",
        "merge it into the service's chart values (helm --values).",
    ]
    if pool.sharing.is_shared:
        notes.append(f"{pool.sharing.strategy}: no memory isolation from the other pods on the same GPU.")
    notes += backend_of(cluster).workload_notes(cluster, workload)
    return Artifact(f"workloads/{workload.file_stem}.yaml", "workload-values", (values,), tuple(notes))
