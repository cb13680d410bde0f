"""The device-plugin and mig-parted ConfigMaps of one cluster."""

from __future__ import annotations

from typing import Any

from ..catalog import builtin_mig_config, get_gpu
from ..model.fleet import Cluster
from .artifact import DEVICE_PLUGIN_CONFIGMAP, MANAGED_BY, MIG_PARTED_CONFIGMAP, Artifact, EmbeddedYaml
from .plan import ClusterPlan


def _configmap(name: str, namespace: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "data": data,
    }


def device_plugin_configmap(cluster: Cluster, plan: ClusterPlan) -> Artifact | None:
    if not plan.uses_device_plugin_config:
        return None
    namespace = cluster.operator.namespace
    data = {key: EmbeddedYaml(config) for key, config in plan.device_plugin_configs.items()}
    return Artifact(
        "device-plugin-config.yaml",
        "device-plugin-configmap",
        (_configmap(DEVICE_PLUGIN_CONFIGMAP, namespace, data),),
        (
            "The device plugin does not reload this ConfigMap: after a change run",
            f"kubectl rollout restart -n {namespace} daemonset/nvidia-device-plugin-daemonset",
        ),
    )


def mig_parted_config(cluster: Cluster, plan: ClusterPlan) -> dict[str, Any]:
    """A mig-parted ``version: v1`` config with every config a pool of the cluster names.

    A custom ConfigMap replaces the Operator's default one, so built-in names used by pools are
    carried over too, each entry filtered to the PCI ids of the GPU it was resolved for.
    """
    configs: dict[str, list[dict[str, Any]]] = {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    builtin_users: dict[str, list[str]] = {}
    layout_users: dict[str, list[str]] = {}
    for pool in cluster.pools:
        if pool.sharing.strategy != "mig":
            continue
        if pool.sharing.mig_layout:
            name = plan.custom_mig_names[pool.sharing.mig_layout]
            _add_unique(layout_users.setdefault(name, []), pool.gpu.id)
        elif pool.sharing.mig_config:
            _add_unique(builtin_users.setdefault(pool.sharing.mig_config, []), pool.gpu.id)
    for name in sorted(builtin_users):
        entries = []
        for gpu_id in builtin_users[name]:
            gpu = get_gpu(gpu_id)
            assert gpu is not None
            entry = builtin_mig_config(gpu, name)
            assert entry is not None  # checked when the fleet was loaded
            entries.append(_entry(list(gpu.pci_device_ids), entry.mig_enabled, dict(entry.mig_devices)))
        configs[name] = entries
    for layout, name in plan.custom_mig_names.items():
        entries = []
        for gpu_id in layout_users.get(name, []):
            gpu = get_gpu(gpu_id)
            assert gpu is not None
            entries.append(_entry(list(gpu.pci_device_ids), True, dict(layout)))
        configs[name] = entries
    return {"version": "v1", "mig-configs": configs}


def _entry(device_filter: list[str], enabled: bool, devices: dict[str, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {"devices": "all", "device-filter": device_filter, "mig-enabled": enabled}
    if enabled:
        entry["mig-devices"] = devices
    return entry


def _add_unique(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)


def mig_parted_configmap(cluster: Cluster, plan: ClusterPlan) -> Artifact | None:
    if not plan.uses_custom_mig_config:
        return None
    document = _configmap(
        MIG_PARTED_CONFIGMAP,
        cluster.operator.namespace,
        {"config.yaml": EmbeddedYaml(mig_parted_config(cluster, plan))},
    )
    return Artifact(
        "mig-parted-config.yaml",
        "mig-parted-configmap",
        (document,),
        (
            "Replaces the Operator's default-mig-parted-config for this cluster. Changing a layout repartitions",
            "the GPUs of the nodes labelled with it: drain them first.",
        ),
    )
