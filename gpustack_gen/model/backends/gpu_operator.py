"""The GPU Operator's device plugin: whole GPUs, time-slicing and MPS replicas, MIG devices (what each offers:
:mod:`.nvidia_plugin`, shared with the standalone chart's plugin)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..fleet import BackendOptions, PoolOptions
from .nvidia_plugin import (
    RESOURCE_GPU,
    RESOURCE_GPU_SHARED,
    allocatable_per_gpu,
    capacity_hint,
    check_sharing,
    check_workload,
    isolation,
    mig_resource,
    pods_share_request,
    resolve_pool_of,
    resolve_sharing,
    resolve_workload,
    resources_per_gpu,
    workload_limits,
    workload_request,
)

if TYPE_CHECKING:
    from ...yamlio.source import PathKey
    from ..fleet import Cluster, Pool
    from ..intent import Cluster as ClusterSpec
    from ..intent import NodePool
    from ..resolve import ClusterOrigin, PoolOrigin, Report, Setting

__all__ = [
    "DEVICE_PLUGIN_LIMITS",
    "EXTENDED_RESOURCES",
    "NAME",
    "NODE_LABELLED_CONFIGS",
    "OPTIONS",
    "OPTION_REASONS",
    "RANGE_HINTS",
    "REDEPLOYS_ON_MOVE",
    "RESOURCE_GPU",
    "RESOURCE_GPU_SHARED",
    "RETIRED_REFUSALS",
    "SHARING_EXAMPLES",
    "SHARING_OPTIONS",
    "STRATEGIES",
    "STRATEGY_SUMMARIES",
    "SUMMARY",
    "WORKLOAD_OPTIONS",
    "allocatable_per_gpu",
    "capacity_hint",
    "check",
    "check_pool",
    "check_sharing",
    "check_workload",
    "device_plugin_version",
    "isolation",
    "mig_resource",
    "pods_share_request",
    "resolve_options",
    "resolve_pool",
    "resolve_sharing",
    "resolve_workload",
    "resources_per_gpu",
    "workload_limits",
    "workload_request",
]

NAME = "gpu-operator"
SUMMARY = "gpu-operator (default: the GPU Operator's device plugin)"  # in the fleet schema's description of backend
STRATEGY_SUMMARIES: Mapping[str, str] = {}
STRATEGIES = frozenset({"none", "time-slicing", "mps", "mig"})
OPTIONS = frozenset({"replicas", "renameByDefault", "failRequestsGreaterThanOne", "layout", "config"})
SHARING_OPTIONS: Mapping[str, frozenset[str]] = {}  # the device plugin's options are every backend's
OPTION_REASONS: Mapping[tuple[str, str], str] = {}
WORKLOAD_OPTIONS: Mapping[str, str] = {}
SHARING_EXAMPLES: Mapping[str, str] = {}
RANGE_HINTS: Mapping[str, str] = {}
RETIRED_REFUSALS: Mapping[str, tuple[str, str]] = {}
DEVICE_PLUGIN_LIMITS = True  # single: one profile type per node, as nvidia.com/gpu; mixed: no MPS (internal/rm)
EXTENDED_RESOURCES = True
NODE_LABELLED_CONFIGS = True  # nvidia.com/device-plugin.config, nvidia.com/mig.config
REDEPLOYS_ON_MOVE = False


def resolve_options(report: Report, setting: Setting) -> BackendOptions:
    """The Operator's settings are every cluster's (``operator``): nothing of its own beyond them."""
    return BackendOptions()


def resolve_pool(cluster: ClusterSpec, pool: NodePool, path: PathKey, report: Report) -> PoolOptions:
    return resolve_pool_of(NAME, cluster, pool, path, report)


def check_pool(cluster: Cluster, pool: Pool, origin: PoolOrigin, strategy_path: PathKey, report: Report) -> None:
    """MPS comes with the Operator's device plugin from v24.3.0; the device plugin's other pool rules are every
    backend's (model/checks.py)."""
    release = cluster.operator.release
    if pool.sharing.strategy == "mps" and not release.has_mps:
        report.error(
            strategy_path,
            f"MPS needs GPU Operator v24.3.0 or newer (pinned: {release.version})",
            "pin operator.version to v24.3.0 or newer, or use time-slicing",
        )


def check(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """The device plugin's own rules are checked with the pools (model/checks.py); node names it never uses are
    warned about while resolving (:func:`resolve_pool`)."""


def device_plugin_version(cluster: Cluster) -> str:
    """The Operator's pinned device plugin."""
    return cluster.operator.release.device_plugin
