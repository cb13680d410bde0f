"""Compile a resolved cluster into artifacts: pure functions from the model to plain data."""

from __future__ import annotations

from ..model.fleet import Cluster
from .artifact import Artifact, EmbeddedYaml
from .capacity import capacity
from .configmaps import device_plugin_configmap, mig_parted_configmap
from .kustomization import kustomization
from .nodes import node_labels
from .operator import clusterpolicy_patch, helm_values
from .plan import plan_cluster
from .workloads import workload_fragment

__all__ = ["Artifact", "EmbeddedYaml", "compile_cluster"]


def compile_cluster(cluster: Cluster) -> list[Artifact]:
    """Every artifact of one cluster, in the order they are written and listed."""
    plan = plan_cluster(cluster)
    objects = [
        a for a in (device_plugin_configmap(cluster, plan), mig_parted_configmap(cluster, plan)) if a is not None
    ]
    artifacts = [
        helm_values(cluster, plan),
        clusterpolicy_patch(cluster, plan),
        *objects,
        node_labels(cluster, plan),
        capacity(cluster),
        kustomization(objects),
    ]
    artifacts += [workload_fragment(cluster, w) for w in sorted(cluster.workloads, key=lambda w: w.file_stem)]
    return artifacts
