"""Decisions shared by several artifacts of one cluster: config keys and MIG config names.

The device-plugin ConfigMap keys and the mig-parted config names appear in the ConfigMaps, the Helm
values, the ClusterPolicy patch and the node labels; they are decided once here so they always agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..model.fleet import RESOURCE_GPU, Cluster, Pool

WHOLE_GPU_KEY = "whole-gpu"
MAX_LABEL_VALUE = 63

MigLayout = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ClusterPlan:
    device_plugin_keys: dict[str, str]  # pool name -> ConfigMap key (empty when no pool shares GPUs)
    device_plugin_configs: dict[str, dict[str, Any]]  # key -> device-plugin config, in key order
    custom_mig_names: dict[MigLayout, str]  # custom per-GPU layout -> mig-parted config name

    @property
    def uses_device_plugin_config(self) -> bool:
        return bool(self.device_plugin_configs)

    @property
    def uses_custom_mig_config(self) -> bool:
        return bool(self.custom_mig_names)


def plan_cluster(cluster: Cluster) -> ClusterPlan:
    keys: dict[str, str] = {}
    configs: dict[str, dict[str, Any]] = {}
    if any(pool.sharing.is_shared for pool in cluster.pools):
        configs[WHOLE_GPU_KEY] = device_plugin_config(cluster, None)
        for pool in cluster.pools:
            key = device_plugin_key(pool)
            keys[pool.name] = key
            configs.setdefault(key, device_plugin_config(cluster, pool))
        configs = {WHOLE_GPU_KEY: configs.pop(WHOLE_GPU_KEY), **dict(sorted(configs.items()))}
    layouts = {
        pool.sharing.mig_layout for pool in cluster.pools if pool.sharing.strategy == "mig" and pool.sharing.mig_layout
    }
    names = {layout: mig_layout_name(layout) for layout in sorted(layouts)}
    return ClusterPlan(keys, configs, names)


def device_plugin_key(pool: Pool) -> str:
    """A readable key that is equal exactly when the device-plugin settings are equal."""
    sharing = pool.sharing
    if not sharing.is_shared:
        return WHOLE_GPU_KEY
    key = f"{sharing.strategy}-{sharing.replicas}"
    if sharing.rename_by_default:
        key += "-renamed"
    if sharing.strategy == "time-slicing" and sharing.fail_requests_greater_than_one:
        key += "-one-per-pod"
    return key


def device_plugin_config(cluster: Cluster, pool: Pool | None) -> dict[str, Any]:
    """A device-plugin config file (``version: v1``) holding only fields that take effect upstream."""
    config: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": cluster.mig_strategy}}
    if pool is None or not pool.sharing.is_shared:
        return config
    sharing = pool.sharing
    block: dict[str, Any] = {"renameByDefault": sharing.rename_by_default}
    if sharing.strategy == "time-slicing":
        block["failRequestsGreaterThanOne"] = sharing.fail_requests_greater_than_one
    block["resources"] = [{"name": RESOURCE_GPU, "replicas": sharing.replicas}]
    config["sharing"] = {"timeSlicing" if sharing.strategy == "time-slicing" else "mps": block}
    return config


def mig_layout_name(layout: MigLayout) -> str:
    """``custom-3g.20gb-2g.10gbx2``: largest profiles first; hashed when too long for a label value."""
    ordered = sorted(layout, key=lambda item: (-_profile_size(item[0]), item[0]))
    name = "custom-" + "-".join(profile if count == 1 else f"{profile}x{count}" for profile, count in ordered)
    name = name.replace("+", ".")
    if len(name) > MAX_LABEL_VALUE:
        digest = hashlib.sha256(repr(ordered).encode()).hexdigest()[:12]
        name = f"custom-{digest}"
    return name


def _profile_size(profile: str) -> int:
    head = profile.split("g.", 1)[0].split(".")[-1]
    return int(head) if head.isdigit() else 0
