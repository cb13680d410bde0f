"""One cluster's change, old and new, with the compile decisions both sides share (computed once)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from ..compile.backends import backend_of
from ..compile.gpu_operator.config_names import ConfigNames, config_names
from ..compile.operator import clusterpolicy_patch, operator_settings
from ..compile.workloads import workload_values
from ..model.fleet import Cluster, Pool, Workload
from .commands import Paths


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

    def pool_index(self, name: str | None) -> int:
        """Where a pool sorts in a runbook: new pools in their order, then the pools that leave."""
        order = [*self.new_pools, *(n for n in self.old_pools if n not in self.new_pools)]
        return order.index(name) if name in order else -1

    def on(self, backend: str) -> bool:
        """Both sides run ``backend``: its own rules apply (a move between backends has rules of its own)."""
        return all(c is not None and c.backend == backend for c in (self.old, self.new))

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

    def workload_values(self, cluster: Cluster, workload: Workload) -> dict[str, Any]:
        return workload_values(cluster, workload)
