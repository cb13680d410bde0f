"""Compile a resolved cluster into artifacts: pure functions from the model to plain data."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .artifact import Artifact, EmbeddedYaml

if TYPE_CHECKING:
    from ..model.fleet import Cluster

__all__ = ["Artifact", "EmbeddedYaml", "compile_cluster"]


def compile_cluster(cluster: Cluster, wrap: tuple[str, ...] = ()) -> list[Artifact]:
    """Every artifact of one cluster, in the order they are written and listed.

    ``wrap`` adds GitOps wrappers (argocd, flux, helmfile) to those the fleet file asks for.
    """
    # Imported here so that ``compile.artifact`` (the data types the emitter and diff need) stays light.
    from .alerts import alerts_artifacts
    from .backends import backend_of
    from .capacity import capacity
    from .gitops import delivery_artifacts, delivery_kustomization, wrap_targets, wrapped_kustomization
    from .kustomization import kustomization
    from .namespace import namespace_object
    from .node_groups import node_group_artifacts
    from .operator import clusterpolicy_patch, helm_values
    from .workloads import workload_fragment

    backend = backend_of(cluster)
    targets = wrap_targets(cluster, wrap)
    objects = [namespace_object(cluster, targets, backend.namespace(cluster)), *backend.objects(cluster)]
    wrappers = delivery_artifacts(cluster, targets, objects)
    delivery = delivery_kustomization(wrappers, cluster.kube_context)
    operator = [helm_values(cluster), clusterpolicy_patch(cluster)] if backend.INSTALLS_OPERATOR else []
    artifacts = [
        *operator,
        *objects,
        *backend.files(cluster),
        capacity(cluster),
        *node_group_artifacts(cluster),
        *alerts_artifacts(cluster),
        wrapped_kustomization(kustomization(objects, cluster.kube_context), targets),
        *wrappers,
        *((delivery,) if delivery is not None else ()),
    ]
    artifacts += [workload_fragment(cluster, w) for w in sorted(cluster.workloads, key=lambda w: w.file_stem)]
    return artifacts
