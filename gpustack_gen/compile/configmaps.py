"""The device-plugin and mig-parted ConfigMaps of one cluster."""

from __future__ import annotations

import copy
from typing import Any

from ..catalog import ALL_DISABLED, GpuModel
from ..model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, Cluster
from ..shell import kubectl, text_in
from .artifact import (
    DEVICE_PLUGIN_CONFIGMAP,
    DEVICE_PLUGIN_LABEL,
    MANAGED_BY,
    MIG_PARTED_CONFIGMAP,
    Artifact,
    EmbeddedYaml,
    device_plugin_daemonsets,
)
from .config_names import ConfigNames


def _configmap(name: str, namespace: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "data": data,
    }


def device_plugin_configmap(cluster: Cluster, names: ConfigNames) -> Artifact:
    namespace = cluster.operator.namespace
    # Copies: the names are memoised per cluster, and a caller that edits an artifact must not edit them.
    data = {key: EmbeddedYaml(copy.deepcopy(config)) for key, config in names.device_plugin_configs.items()}
    restarts = [
        text_in(
            cluster.kube_context,
            kubectl("rollout", "restart", "-n", namespace, *device_plugin_daemonsets(names.uses_mps)),
        )
    ]
    notes = [
        f"One key per pool, named after it (its nodes' {DEVICE_PLUGIN_LABEL} label), and {DEFAULT_DEVICE_PLUGIN_KEY}:",
        f"what GPU nodes without the label get, here {names.default_text(cluster)}.",
    ]
    if names.retired_device_plugin_keys:
        notes.append(
            f"Retired keys kept while nodes may still carry them: {', '.join(names.retired_device_plugin_keys)};"
        )
        notes.append("drop them from the fleet's retired list once no node is labelled with them.")
    notes += [
        "The device plugin does not reload this ConfigMap: after a change run (gpustack-gen plan gives the order)",
        *restarts,
    ]
    return Artifact(
        "device-plugin-config.yaml",
        "device-plugin-configmap",
        (_configmap(DEVICE_PLUGIN_CONFIGMAP, namespace, data),),
        tuple(notes),
    )


def mig_parted_config(names: ConfigNames) -> dict[str, Any]:
    """A mig-parted ``version: v1`` config with every config a pool of the cluster (or a retired entry) names.

    It replaces the Operator's default one, so it holds ``all-disabled`` (the label of MIG-capable GPUs
    handed out whole), each built-in name a pool uses and one config per custom layout; every entry is
    filtered to the PCI ids of the GPU models that use it, so a config never touches another model.
    """
    configs: dict[str, list[dict[str, Any]]] = {}
    for name, users in names.mig_configs.items():
        if name == ALL_DISABLED:
            configs[name] = [{"devices": "all", "mig-enabled": False}]
        else:
            configs[name] = [_entry(gpu, devices) for gpu, devices in users]
    return {"version": "v1", "mig-configs": configs}


def _entry(gpu: GpuModel, devices: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    return {
        "devices": "all",
        "device-filter": list(gpu.pci_device_ids),
        "mig-enabled": True,
        "mig-devices": dict(devices),
    }


def mig_parted_configmap(cluster: Cluster, names: ConfigNames) -> Artifact | None:
    if not names.uses_mig_parted_config:
        return None
    document = _configmap(
        MIG_PARTED_CONFIGMAP,
        cluster.operator.namespace,
        {"config.yaml": EmbeddedYaml(mig_parted_config(names))},
    )
    notes = [
        "Replaces the Operator's default-mig-parted-config for this cluster, so that every MIG config a",
        "pool names exists whatever mig-manager the chart ships. Changing a pool's config repartitions",
        "the GPUs of its nodes: drain them first (gpustack-gen plan gives the order).",
    ]
    if names.retired_mig_configs:
        notes.append(f"Retired configs kept while nodes may still carry them: {', '.join(names.retired_mig_configs)};")
        notes.append("drop them from the fleet's retired list once no node is labelled with them.")
    return Artifact("mig-parted-config.yaml", "mig-parted-configmap", (document,), tuple(notes))
