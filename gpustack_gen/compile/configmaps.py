"""The device-plugin and mig-parted ConfigMaps of one cluster."""

from __future__ import annotations

from typing import Any

from ..catalog import ALL_DISABLED, GpuModel, builtin_mig_config
from ..model.fleet import Cluster
from .artifact import (
    DEVICE_PLUGIN_CONFIGMAP,
    DEVICE_PLUGIN_DAEMONSET,
    MANAGED_BY,
    MIG_PARTED_CONFIGMAP,
    MPS_DAEMONSET,
    Artifact,
    EmbeddedYaml,
)
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
    restarts = [f"kubectl rollout restart -n {namespace} {DEVICE_PLUGIN_DAEMONSET}"]
    if plan.uses_mps:
        restarts.append(f"kubectl rollout restart -n {namespace} {MPS_DAEMONSET}")
    return Artifact(
        "device-plugin-config.yaml",
        "device-plugin-configmap",
        (_configmap(DEVICE_PLUGIN_CONFIGMAP, namespace, data),),
        ("The device plugin does not reload this ConfigMap: after a change run", *restarts),
    )


def mig_parted_config(cluster: Cluster, plan: ClusterPlan) -> dict[str, Any]:
    """A mig-parted ``version: v1`` config with every config a pool of the cluster names.

    It replaces the Operator's default one, so it holds ``all-disabled`` (the label of MIG-capable GPUs
    handed out whole), each built-in name a pool uses and one config per custom layout; every entry is
    filtered to the PCI ids of the GPU models that use it, so a config never touches another model.
    """
    users: dict[str, list[GpuModel]] = {}
    for pool in cluster.pools:
        if pool.sharing.strategy != "mig":
            continue
        if pool.sharing.mig_layout:
            name = plan.custom_mig_names[pool.sharing.mig_layout]
        else:
            name = pool.sharing.mig_config or ""
        gpus = users.setdefault(name, [])
        if pool.gpu not in gpus:
            gpus.append(pool.gpu)
    configs: dict[str, list[dict[str, Any]]] = {ALL_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    custom = {name: layout for layout, name in plan.custom_mig_names.items()}
    for name in sorted(users, key=lambda n: (n in custom, n)):
        configs[name] = [_entry(gpu, custom.get(name) or _builtin_devices(gpu, name)) for gpu in users[name]]
    return {"version": "v1", "mig-configs": configs}


def _builtin_devices(gpu: GpuModel, name: str) -> tuple[tuple[str, int], ...]:
    entry = builtin_mig_config(gpu, name)
    assert entry is not None and entry.mig_enabled  # checked when the fleet was loaded
    return entry.mig_devices


def _entry(gpu: GpuModel, devices: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    return {
        "devices": "all",
        "device-filter": list(gpu.pci_device_ids),
        "mig-enabled": True,
        "mig-devices": dict(devices),
    }


def mig_parted_configmap(cluster: Cluster, plan: ClusterPlan) -> Artifact | None:
    if not plan.uses_mig_parted_config:
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
            "Replaces the Operator's default-mig-parted-config for this cluster, so that every MIG config a",
            "pool names exists whatever mig-manager the chart ships. Changing a pool's config repartitions",
            "the GPUs of its nodes: drain them first.",
        ),
    )
