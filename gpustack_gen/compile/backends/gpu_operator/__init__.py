"""The GPU Operator's own device plugin: the device-plugin and mig-parted ConfigMaps and the node labels.

Its Operator settings name both ConfigMaps: the device-plugin one always, so that no sharing change
ever changes ``devicePlugin.config.name`` or ``default`` (either change rolls the device plugin, GFD and
MPS daemon on every node: gpu-operator ``controllers/object_controls.go`` handleDevicePluginConfig).
"""

from __future__ import annotations

from typing import Any

from ....model.backends.gpu_operator import NAME
from ....model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, Cluster, Pool, Workload
from ...artifact import DEVICE_PLUGIN_CONFIGMAP, DEVICE_PLUGIN_DAEMONSET, Artifact
from ...config_names import config_names
from ...configmaps import device_plugin_configmap, mig_parted_configmap
from ...mig_manager import mig_manager_patch, mig_manager_values
from ...node_labels import node_labels
from ...node_labels import pool_labels as _pool_labels
from ...pod_spec import limits_values as workload_values
from ...releases import ChartRelease

__all__ = [
    "INSTALLS_OPERATOR",
    "MPS_ROOT",
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

MPS_ROOT = "/run/nvidia/mps"


def operator_values(cluster: Cluster) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "devicePlugin": {"config": {"name": DEVICE_PLUGIN_CONFIGMAP, "default": DEFAULT_DEVICE_PLUGIN_KEY}}
    }
    return {**settings, **mig_manager_values(cluster)}


def patch_only(cluster: Cluster) -> dict[str, Any]:
    names = config_names(cluster)
    extra: dict[str, Any] = mig_manager_patch(cluster)
    if names.uses_mps:
        # The chart never renders devicePlugin.mps.root; only the ClusterPolicy carries it.
        extra["devicePlugin"] = {"mps": {"root": MPS_ROOT}}
    return extra


def objects(cluster: Cluster) -> list[Artifact]:
    names = config_names(cluster)
    return [a for a in (device_plugin_configmap(cluster, names), mig_parted_configmap(cluster, names)) if a]


def files(cluster: Cluster) -> list[Artifact]:
    return [node_labels(cluster, config_names(cluster))]


def pool_labels(cluster: Cluster) -> dict[str, dict[str, str]]:
    return _pool_labels(cluster, config_names(cluster))


def releases(cluster: Cluster) -> tuple[ChartRelease, ...]:
    """The device plugin comes with the Operator's own chart."""
    return ()


def plugin_daemonset(cluster: Cluster) -> tuple[str, str]:
    """The Operator's device plugin (gpu-operator assets/state-device-plugin/0500_daemonset.yaml)."""
    return cluster.operator.namespace, DEVICE_PLUGIN_DAEMONSET.removeprefix("daemonset/")


def workload_notes(cluster: Cluster, workload: Workload) -> tuple[str, ...]:
    return ()


def capacity_details(cluster: Cluster, pool: Pool) -> dict[str, Any]:
    """Nothing beyond the resources: the device plugin's are what a node's allocatable shows."""
    return {}


INSTALLS_OPERATOR = True


def namespace(cluster: Cluster) -> str:
    """The Operator's: its ConfigMaps live there."""
    return cluster.operator.namespace
