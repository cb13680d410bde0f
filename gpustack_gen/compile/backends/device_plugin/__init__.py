"""The standalone NVIDIA device plugin chart: its values (with the configs), the node labels, nothing of the Operator.

The cluster's hosts bring their own driver and container toolkit, so no GPU Operator is installed: no Operator
values, no ClusterPolicy patch, and the namespace is the release's. The configs are the Operator backend's, keyed
the same way, so a pool's config key survives the move to backend ``gpu-operator``.
"""

from __future__ import annotations

from typing import Any

from ....model.backends.device_plugin import NAME, device_plugin_options
from ....model.backends.device_plugin import plugin_daemonset as daemonset_name
from ....model.fleet import Cluster, Pool, Workload
from ...artifact import Artifact
from ...config_names import config_names
from ...node_labels import node_labels
from ...node_labels import pool_labels as _pool_labels
from ...pod_spec import limits_values as workload_values
from ...releases import ChartRelease
from .values import GPU_PRESENT_LABEL, MPS_CAPABLE_LABEL, device_plugin_release, values_artifact

__all__ = [
    "INSTALLS_OPERATOR",
    "NAME",
    "capacity_details",
    "files",
    "namespace",
    "objects",
    "operator_values",
    "patch_only",
    "plugin_daemonset",
    "pool_labels",
    "releases",
    "workload_notes",
    "workload_values",
]

INSTALLS_OPERATOR = False


def namespace(cluster: Cluster) -> str:
    return device_plugin_options(cluster).namespace


def operator_values(cluster: Cluster) -> dict[str, Any]:
    return {}


def patch_only(cluster: Cluster) -> dict[str, Any]:
    return {}


def objects(cluster: Cluster) -> list[Artifact]:
    """The chart renders its ConfigMap from ``config.map``."""
    return []


def pool_labels(cluster: Cluster) -> dict[str, dict[str, str]]:
    """The config key, and ``nvidia.com/gpu.present=true``: the chart's affinity term that needs no NFD. An MPS
    pool also gets ``nvidia.com/mps.capable=true``, the MPS daemon's nodeSelector
    (``templates/daemonset-mps-control-daemon.yml:201-203``), which only GFD sets and GFD stays off here; without
    the daemon the plugin never registers (``internal/plugin/server.go:126-131``, research rollout.md §1)."""
    mps = {pool.name for pool in cluster.pools if pool.sharing.strategy == "mps"}
    return {
        pool: {**labels, GPU_PRESENT_LABEL: "true", **({MPS_CAPABLE_LABEL: "true"} if pool in mps else {})}
        for pool, labels in _pool_labels(cluster, config_names(cluster)).items()
    }


def files(cluster: Cluster) -> list[Artifact]:
    notes = (
        f"{GPU_PRESENT_LABEL}=true puts the chart's plugin on the node without NFD; once the GPU Operator runs, its own",
        "NFD labels the node and the Operator keeps the label.",
    )
    return [values_artifact(cluster), node_labels(cluster, config_names(cluster), pool_labels(cluster), notes)]


def releases(cluster: Cluster) -> tuple[ChartRelease, ...]:
    return (device_plugin_release(cluster),)


def plugin_daemonset(cluster: Cluster) -> tuple[str, str]:
    return namespace(cluster), daemonset_name(cluster)


def workload_notes(cluster: Cluster, workload: Workload) -> tuple[str, ...]:
    return ()


def capacity_details(cluster: Cluster, pool: Pool) -> dict[str, Any]:
    """Nothing beyond the resources: the plugin's are what a node's allocatable shows."""
    return {}
