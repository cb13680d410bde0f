"""The change rules, one module each, in report order; each module has ``ID``, ``LEVEL`` and ``outcomes``.

A rule looks at one cluster's change and yields :class:`~gpustack_gen.change.model.Outcome` objects: the
finding ``diff`` shows and the steps ``plan`` orders, so the two never disagree. Each module's docstring
says what it covers and cites the upstream behaviour it relies on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from ..context import ClusterChange
from ..model import Level, Outcome
from . import (
    backend_switch,
    cluster_added,
    cluster_removed,
    device_plugin_config,
    driver,
    kubernetes_version,
    mig_strategy,
    mps_clients,
    node_selector,
    operator_version,
    pool_added,
    pool_gpu,
    pool_nodes,
    pool_removed,
    pool_renamed,
    prune,
    retention,
    runtime,
    unlabelled_nodes,
    workload_values,
)
from .backends import hami as hami_settings
from .backends.device_plugin import move as device_plugin_move
from .backends.device_plugin import values as device_plugin_values
from .backends.dra import move as dra_move
from .backends.dra import objects as dra_objects
from .backends.gpu_operator import mig_layout, mig_manager_config


class Rule(Protocol):
    ID: str
    LEVEL: Level

    def outcomes(self, change: ClusterChange) -> Iterator[Outcome]: ...


# Each module is typed as the protocol itself, so mypy checks its names and signatures against it.
RULES: tuple[Rule, ...] = (
    unlabelled_nodes,  # first: its check runs before any rule's apply changes `any`
    cluster_added,
    cluster_removed,
    kubernetes_version,
    backend_switch,
    retention,
    prune,
    pool_removed,
    pool_renamed,
    dra_move,
    device_plugin_move,
    pool_gpu,
    driver,
    mig_strategy,
    mig_layout,
    device_plugin_config,
    mps_clients,
    runtime,
    operator_version,
    mig_manager_config,
    hami_settings,
    device_plugin_values,
    workload_values,
    pool_added,
    pool_nodes,
    dra_objects,
    node_selector,
)
RULE_IDS: tuple[str, ...] = tuple(rule.ID for rule in RULES)
