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
    from .capacity import capacity
    from .config_names import config_names
    from .configmaps import device_plugin_configmap, mig_parted_configmap
    from .gitops import KUBERNETES_KINDS, delivery_artifacts, wrap_targets, wrapped_kustomization
    from .kustomization import kustomization
    from .namespace import namespace_object
    from .nodes import node_labels
    from .operator import clusterpolicy_patch, helm_values
    from .workloads import workload_fragment

    names = config_names(cluster)
    objects = [
        a for a in (device_plugin_configmap(cluster, names), mig_parted_configmap(cluster, names)) if a is not None
    ]
    targets = wrap_targets(cluster, wrap)
    objects.insert(0, namespace_object(cluster, targets))
    wrappers = delivery_artifacts(cluster, names, targets, objects)
    listed = objects + [a for a in wrappers if a.kind in KUBERNETES_KINDS]
    artifacts = [
        helm_values(cluster, names),
        clusterpolicy_patch(cluster, names),
        *objects,
        node_labels(cluster, names),
        capacity(cluster),
        wrapped_kustomization(kustomization(listed), targets),
        *wrappers,
    ]
    artifacts += [workload_fragment(cluster, w) for w in sorted(cluster.workloads, key=lambda w: w.file_stem)]
    return artifacts
