"""Decisions shared by several artifacts of one cluster: config keys and MIG config names.

The device-plugin ConfigMap keys and the mig-parted config names appear in the ConfigMaps, the Helm
values, the ClusterPolicy patch and the node labels; they are decided once here so they always agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..catalog import ALL_DISABLED
from ..model.fleet import RESOURCE_GPU, Cluster, MigLayout, Pool, mig_profile_sort_key

WHOLE_GPU_KEY = "whole-gpu"
MAX_LABEL_VALUE = 63


@dataclass(frozen=True)
class ClusterPlan:
    device_plugin_keys: dict[str, str]  # pool name -> ConfigMap key (empty when no pool shares GPUs)
    device_plugin_configs: dict[str, dict[str, Any]]  # key -> device-plugin config, in key order
    custom_mig_names: dict[MigLayout, str]  # custom per-GPU layout -> mig-parted config name
    uses_mig_parted_config: bool  # any pool partitions its GPUs: the cluster gets its own mig-parted ConfigMap

    @property
    def uses_mps(self) -> bool:
        """MPS needs its control daemon restarted with the plugin, and its root set on the ClusterPolicy."""
        return any("mps" in config.get("sharing", {}) for config in self.device_plugin_configs.values())

    @property
    def uses_device_plugin_config(self) -> bool:
        return bool(self.device_plugin_configs)

    def mig_config_label(self, pool: Pool) -> str | None:
        """Value of the ``nvidia.com/mig.config`` label for the pool's nodes (None on GPUs without MIG)."""
        if not pool.gpu.mig_capable:
            return None
        if pool.sharing.strategy != "mig":
            return ALL_DISABLED
        if pool.sharing.mig_layout:
            return self.custom_mig_names[pool.sharing.mig_layout]
        return pool.sharing.mig_config


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
    # Built-in config names are resolved against the catalog, not against whichever default ConfigMap the
    # pinned mig-manager ships (v0.12.3 lacks B300 and differs on all-balanced): so every MIG cluster
    # carries the configs its pools name, and the labels mean the same on every Operator version.
    uses_mig = any(pool.sharing.strategy == "mig" for pool in cluster.pools)
    return ClusterPlan(keys, configs, names, uses_mig)


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
    if sharing.strategy == "mps" and not sharing.fail_requests_greater_than_one:
        key += "-many-per-pod"  # MPS refuses requests over one replica unless told otherwise (plugin v0.20+)
    return key


def device_plugin_config(cluster: Cluster, pool: Pool | None) -> dict[str, Any]:
    """A device-plugin config file (``version: v1``) holding only fields that take effect upstream."""
    config: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": cluster.mig_strategy}}
    if pool is None or not pool.sharing.is_shared:
        return config
    sharing = pool.sharing
    block: dict[str, Any] = {"renameByDefault": sharing.rename_by_default}
    # MPS forces failRequestsGreaterThanOne before device plugin v0.20.0: written only where it is read.
    if sharing.strategy == "time-slicing" or cluster.operator.mps_fail_requests_configurable:
        block["failRequestsGreaterThanOne"] = sharing.fail_requests_greater_than_one
    block["resources"] = [{"name": RESOURCE_GPU, "replicas": sharing.replicas}]
    config["sharing"] = {"timeSlicing" if sharing.strategy == "time-slicing" else "mps": block}
    return config


def mig_layout_name(layout: MigLayout) -> str:
    """``custom-3g.20gb-2g.10gbx2``: largest profiles first; hashed when too long for a label value."""
    ordered = sorted(layout, key=lambda item: mig_profile_sort_key(item[0]))
    name = "custom-" + "-".join(profile if count == 1 else f"{profile}x{count}" for profile, count in ordered)
    name = name.replace("+", ".")
    if len(name) > MAX_LABEL_VALUE:
        digest = hashlib.sha256(repr(ordered).encode()).hexdigest()[:12]
        name = f"custom-{digest}"
    return name
