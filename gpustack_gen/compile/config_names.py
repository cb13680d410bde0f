"""Names shared by several artifacts of one cluster: device-plugin config keys and MIG config names.

The device-plugin ConfigMap keys and the mig-parted config names appear in the ConfigMaps, the Helm
values, the ClusterPolicy patch and the node labels; they are decided once here so they always agree.

Device-plugin keys are stable: one key per pool, named after the pool, plus ``any`` for GPU nodes
without the label (``devicePlugin.config.default``). A change of sharing parameters changes the content
of a key, never a node label: the labels live in node-group templates, where a change replaces nodes
(Karpenter) or waits for the next node, and a key renamed under a label makes the config-manager refuse
to start the plugin (k8s-device-plugin ``cmd/config-manager/main.go``: "specified config X does not
exist"). The device plugin does not reread its ConfigMap, so a content change is made effective by a
restart, which ``gpustack-gen plan`` includes.

MIG config names are content-derived (``custom-3g.20gb-2g.10gbx2``, or a built-in name): a layout change
changes the ``nvidia.com/mig.config`` label, which is the only thing the mig-manager acts on; a restarted
mig-manager re-asserts the labelled config, so an uncontrolled restart never repartitions a node to a
layout its pods did not drain for. The old name stays in the ConfigMap while nodes carry it
(``retired.migConfigs``).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

from ..catalog import ALL_DISABLED, GpuModel
from ..model.backends.gpu_operator import RESOURCE_GPU
from ..model.fleet import (
    DEFAULT_DEVICE_PLUGIN_KEY,
    DEFAULT_SHARING_AUTO,
    DEFAULT_SHARING_NONE,
    Cluster,
    MigLayout,
    Pool,
    Sharing,
    mig_profile_sort_key,
)

MAX_LABEL_VALUE = 63
WHOLE_GPUS = Sharing("none")


@dataclass(frozen=True)
class ConfigNames:
    device_plugin_keys: dict[str, str]  # pool name -> ConfigMap key (the pool's name)
    device_plugin_configs: dict[str, dict[str, Any]]  # key -> config: `any`, the pools', then retired keys
    default_from: str | None  # the pool whose config `any` holds; None: whole GPUs
    default_sharing: Sharing  # what `any` holds, as a device-plugin policy (MIG pools' is whole GPUs)
    retired_device_plugin_keys: tuple[str, ...]
    mig_configs: dict[str, tuple[tuple[GpuModel, MigLayout], ...]]  # name -> (GPU model, devices per GPU)
    custom_mig_names: dict[MigLayout, str]  # custom per-GPU layout -> mig-parted config name
    retired_mig_configs: tuple[str, ...]  # names kept only for nodes that may still carry them

    def default_text(self, cluster: Cluster) -> str:
        """What ``any`` holds, in words that change only when the choice does (not with every replicas edit)."""
        if self.default_from is None:
            return "whole GPUs"
        if cluster.default_sharing == DEFAULT_SHARING_AUTO:
            return "the config all the cluster's pools share"
        return f"the config of pool {self.default_from}"

    @property
    def uses_mps(self) -> bool:
        """MPS needs its control daemon restarted with the plugin, and its root set on the ClusterPolicy."""
        return any("mps" in config.get("sharing", {}) for config in self.device_plugin_configs.values())

    @property
    def uses_mig_parted_config(self) -> bool:
        """The cluster has MIG-capable GPUs: it gets its own mig-parted ConfigMap (see ``mig_parted_config``)."""
        return bool(self.mig_configs)

    def mig_config_label(self, pool: Pool) -> str | None:
        """Value of the ``nvidia.com/mig.config`` label for the pool's nodes (None on GPUs without MIG)."""
        if not pool.gpu.mig_capable:
            return None
        return mig_config_name(pool.sharing, self.custom_mig_names)


def config_names(cluster: Cluster) -> ConfigNames:
    """The names of one cluster, computed once per cluster (every artifact and rule asks for them)."""
    # Looked up by identity first: hashing a Cluster hashes all of it (pools, workloads, ...), and a
    # render asks about five times per cluster. The entry holds the cluster, so its id stays its own.
    found = _by_identity.get(id(cluster))
    if found is not None and found[0] is cluster:
        return found[1]
    names = _config_names(cluster)
    if len(_by_identity) >= _BY_IDENTITY_SIZE:
        _by_identity.clear()
    _by_identity[id(cluster)] = (cluster, names)
    return names


_BY_IDENTITY_SIZE = 256
_by_identity: dict[int, tuple[Cluster, ConfigNames]] = {}


@functools.lru_cache(maxsize=256)
def _config_names(cluster: Cluster) -> ConfigNames:
    keys = {pool.name: pool.name for pool in cluster.pools}
    pool_configs = {pool.name: device_plugin_config(cluster, pool.sharing) for pool in cluster.pools}
    default_from = _default_source(cluster, pool_configs)
    default_policy = next(p.sharing for p in cluster.pools if p.name == default_from) if default_from else WHOLE_GPUS
    configs: dict[str, dict[str, Any]] = {DEFAULT_DEVICE_PLUGIN_KEY: device_plugin_config(cluster, default_policy)}
    configs.update(pool_configs)
    retired_keys = tuple(key for key, _ in cluster.retired.device_plugin_configs if key not in configs)
    for key, sharing in cluster.retired.device_plugin_configs:
        configs.setdefault(key, device_plugin_config(cluster, sharing))

    capable = [pool for pool in cluster.pools if pool.gpu.mig_capable]
    used: list[tuple[GpuModel, Sharing]] = [(pool.gpu, pool.sharing) for pool in capable]
    retired = [(entry.gpu, entry.sharing) for entry in cluster.retired.mig_configs]
    layouts = {s.mig_layout for _, s in used + retired if s.strategy == "mig" and s.mig_layout}
    custom = {layout: mig_layout_name(layout) for layout in sorted(layouts)}
    mig: dict[str, list[tuple[GpuModel, MigLayout]]] = {}
    if capable or retired:
        # A cluster with MIG-capable GPUs always carries its own mig-parted ConfigMap, so that a pool that
        # starts using MIG changes no ClusterPolicy setting, and every name a label carries means the same
        # on every Operator version (v0.12.3's default ConfigMap lacks B300 and differs on all-balanced).
        mig[ALL_DISABLED] = []
    live = set()
    for source, entries in (("live", used), ("retired", retired)):
        for gpu, sharing in entries:
            if sharing.strategy != "mig":
                continue
            name = mig_config_name(sharing, custom)
            if source == "live":
                live.add(name)
            users = mig.setdefault(name, [])
            devices = sharing.mig_layout or _builtin_devices(gpu, name)
            if (gpu, devices) not in users:
                users.append((gpu, devices))
    ordered = {
        name: tuple(mig[name]) for name in sorted(mig, key=lambda n: (n != ALL_DISABLED, n in custom.values(), n))
    }
    retired_names = tuple(name for name in ordered if name != ALL_DISABLED and name not in live)
    default = default_policy if default_policy.is_shared else WHOLE_GPUS
    return ConfigNames(keys, configs, default_from, default, retired_keys, ordered, custom, retired_names)


def _default_source(cluster: Cluster, pool_configs: dict[str, dict[str, Any]]) -> str | None:
    """The pool whose config unlabelled GPU nodes get, or None for whole GPUs (``defaultSharing``)."""
    choice = cluster.default_sharing
    if choice == DEFAULT_SHARING_NONE:
        return None
    if choice != DEFAULT_SHARING_AUTO:
        return choice
    # auto: when every pool has the same device-plugin config, unlabelled nodes get it too, so a cluster
    # with one kind of pool works without labels; otherwise whole GPUs, which never over-promise a GPU.
    distinct = {repr(config) for config in pool_configs.values()}
    if len(distinct) == 1 and cluster.pools:
        return cluster.pools[0].name
    return None


def mig_config_name(sharing: Sharing, custom: dict[MigLayout, str]) -> str:
    if sharing.strategy != "mig":
        return ALL_DISABLED
    if sharing.mig_layout:
        return custom[sharing.mig_layout]
    assert sharing.mig_config is not None  # a MIG policy has a layout or a built-in config
    return sharing.mig_config


def _builtin_devices(gpu: GpuModel, name: str) -> MigLayout:
    from ..catalog import builtin_mig_config

    entry = builtin_mig_config(gpu, name)
    assert entry is not None and entry.mig_enabled  # checked when the fleet was loaded
    return entry.mig_devices


def device_plugin_config(cluster: Cluster, sharing: Sharing) -> dict[str, Any]:
    """A device-plugin config file (``version: v1``) holding only fields that take effect upstream."""
    config: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": cluster.mig_strategy}}
    if not sharing.is_shared:
        return config
    block: dict[str, Any] = {"renameByDefault": sharing.rename_by_default}
    # MPS forces failRequestsGreaterThanOne before device plugin v0.20.0: written only where it is read.
    if sharing.strategy == "time-slicing" or cluster.mps_fail_requests_configurable:
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
