"""One cluster's change, old and new, with the compile decisions both sides share (computed once)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from ..compile.backends import backend_of
from ..compile.config_names import ConfigNames, config_names
from ..compile.operator import clusterpolicy_patch, operator_settings
from ..model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, Cluster, Pool
from ..workdir import Paths


def _effective(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a device-plugin config does: the Operator sets MIG_STRATEGY, which overrides flags.migStrategy
    (the mig-strategy rule covers that change)."""
    return None if config is None else {k: v for k, v in config.items() if k != "flags"}


def _is_mps(config: dict[str, Any] | None) -> bool:
    return config is not None and "mps" in config.get("sharing", {})


class ClusterChange:
    """``old`` and ``new`` of one cluster (either may be None: added or removed) and what both compile to."""

    def __init__(self, old: Cluster | None, new: Cluster | None, paths: Paths) -> None:
        assert old is not None or new is not None
        self.old = old
        self.new = new
        self.paths = paths

    @property
    def name(self) -> str:
        cluster = self.new or self.old
        assert cluster is not None
        return cluster.name

    @property
    def both(self) -> tuple[Cluster, Cluster]:
        assert self.old is not None and self.new is not None
        return self.old, self.new

    @cached_property
    def old_names(self) -> ConfigNames:
        assert self.old is not None
        return config_names(self.old)

    @cached_property
    def new_names(self) -> ConfigNames:
        assert self.new is not None
        return config_names(self.new)

    @cached_property
    def old_labels(self) -> dict[str, dict[str, str]]:
        return backend_of(self.old).pool_labels(self.old) if self.old is not None else {}

    @cached_property
    def new_labels(self) -> dict[str, dict[str, str]]:
        return backend_of(self.new).pool_labels(self.new) if self.new is not None else {}

    @cached_property
    def old_pools(self) -> dict[str, Pool]:
        return {p.name: p for p in self.old.pools} if self.old is not None else {}

    @cached_property
    def new_pools(self) -> dict[str, Pool]:
        return {p.name: p for p in self.new.pools} if self.new is not None else {}

    @cached_property
    def common_pools(self) -> list[tuple[Pool, Pool]]:
        """Pools on both sides, in the new order."""
        return [(self.old_pools[name], pool) for name, pool in self.new_pools.items() if name in self.old_pools]

    @cached_property
    def _leaving_and_joining(self) -> list[tuple[Pool, Pool]]:
        """Every pair of a pool that leaves and one that joins."""
        joined = [pool for name, pool in self.new_pools.items() if name not in self.old_pools]
        left = [pool for name, pool in self.old_pools.items() if name not in self.new_pools]
        return [(before, after) for before in left for after in joined]

    @cached_property
    def renamed_pools(self) -> list[tuple[Pool, Pool]]:
        """A pool that leaves and one that joins with the same nodeSelector: the same nodes, under a new name."""
        return [(b, a) for b, a in self._leaving_and_joining if a.node_selector == b.node_selector]

    @cached_property
    def overlapping_pools(self) -> list[tuple[Pool, Pool]]:
        """A pool that leaves and one that joins whose nodeSelectors differ but can select the same nodes (one
        contains the other): the leaving pool's steps (drain, wait for its nodes to go) would hit the other's."""
        return [
            (b, a)
            for b, a in self._leaving_and_joining
            if a.node_selector != b.node_selector
            and (set(b.node_selector) <= set(a.node_selector) or set(a.node_selector) <= set(b.node_selector))
        ]

    def renamed(self, name: str) -> bool:
        """The pool (by its old or new name) is one side of a rename."""
        return any(name in (before.name, after.name) for before, after in self.renamed_pools)

    def pool_index(self, name: str | None) -> int:
        """Where a pool sorts in a runbook: new pools in their order, then the pools that leave."""
        order = [*self.new_pools, *(n for n in self.old_pools if n not in self.new_pools)]
        return order.index(name) if name in order else -1

    def keeps_labelled_configs(self) -> bool:
        """Both sides run one backend whose nodes carry labels naming entries of its ConfigMaps."""
        old, new = self.both
        return old.backend == new.backend and new.semantics.NODE_LABELLED_CONFIGS

    def on(self, backend: str) -> bool:
        """Both sides run ``backend``: its own rules apply (a move between backends has rules of its own)."""
        return all(c is not None and c.backend == backend for c in (self.old, self.new))

    def operator_on_both(self) -> bool:
        """Both sides install the GPU Operator (a backend's ``INSTALLS_OPERATOR``): its own rules apply; a move to
        or from a backend without it installs or removes the Operator as a whole (that move's rule)."""
        return all(c is not None and backend_of(c).INSTALLS_OPERATOR for c in (self.old, self.new))

    def operator_differs(self) -> bool:
        """The values (Helm) or the ClusterPolicy patch (external installs) differ: the operator step is due."""
        old, new = self.both
        if old.operator.install != new.operator.install:
            return True
        if new.operator.install == "external":
            before = clusterpolicy_patch(old).documents
            after = clusterpolicy_patch(new).documents
            return before != after
        values: tuple[dict[str, Any], dict[str, Any]] = (
            operator_settings(old),
            operator_settings(new),
        )
        return values[0] != values[1] or old.operator.release != new.operator.release

    @cached_property
    def device_plugin_changes(self) -> list[tuple[Pool, Pool]]:
        """Pools on both sides whose device-plugin config (under its stable key) does something else."""
        old_configs, new_configs = self.old_names.device_plugin_configs, self.new_names.device_plugin_configs
        return [
            (before, after)
            for before, after in self.common_pools
            if _effective(old_configs.get(before.name)) != _effective(new_configs.get(after.name))
        ]

    @cached_property
    def default_device_plugin_changes(self) -> bool:
        """The config unlabelled nodes get (key ``any``) does something else."""
        before = self.old_names.device_plugin_configs[DEFAULT_DEVICE_PLUGIN_KEY]
        after = self.new_names.device_plugin_configs[DEFAULT_DEVICE_PLUGIN_KEY]
        return _effective(before) != _effective(after)

    @cached_property
    def pools_leaving_default_key(self) -> list[Pool]:
        """Old pools with nodes whose own key held what ``any`` held (their nodes may have run unlabelled: a
        cluster with one kind of pool works without labels) and whose new config is not what ``any`` will
        hold: such nodes, unlabelled, would end with another config than their pool's."""
        if not self.default_device_plugin_changes:
            return []
        old_configs, new_configs = self.old_names.device_plugin_configs, self.new_names.device_plugin_configs
        before, after = (_effective(c[DEFAULT_DEVICE_PLUGIN_KEY]) for c in (old_configs, new_configs))
        return [
            old_pool
            for old_pool, new_pool in self.common_pools
            if old_pool.nodes > 0
            and _effective(old_configs.get(old_pool.name)) == before
            and _effective(new_configs.get(new_pool.name)) != after
        ]

    @cached_property
    def mps_config_changes(self) -> bool:
        """A changed config is (or was) MPS's: its control daemon must restart to load it."""
        old_configs, new_configs = self.old_names.device_plugin_configs, self.new_names.device_plugin_configs
        keys = [after.name for _, after in self.device_plugin_changes]
        if self.default_device_plugin_changes:
            keys.append(DEFAULT_DEVICE_PLUGIN_KEY)
        return any(_is_mps(old_configs.get(key)) or _is_mps(new_configs.get(key)) for key in keys)

    def device_plugin_rolls(self) -> bool:
        """The Operator re-renders the device plugin's DaemonSet, GFD's and the MPS daemon's, which then roll: a
        new Operator or plugin version, config name or default, MIG strategy or CDI setting (gpu-operator
        ``controllers/object_controls.go`` handleDevicePluginConfig, applyMIGConfiguration, transformForRuntime)."""

        def inputs(cluster: Cluster) -> tuple[Any, ...]:
            settings = operator_settings(cluster)
            plugin = settings.get("devicePlugin", {})
            # The Operator's version too: every operand's init container runs the validator image of that version.
            release = cluster.operator.release
            return (release.version, release.device_plugin, plugin, settings.get("mig"), settings.get("cdi"))

        old, new = self.both
        return inputs(old) != inputs(new)
