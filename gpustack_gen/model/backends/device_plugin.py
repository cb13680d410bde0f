"""The standalone NVIDIA device plugin chart (``nvdp/nvidia-device-plugin``) on hosts whose driver and container
toolkit are installed outside Kubernetes (Ansible, EKS AMIs, Bottlerocket): whole GPUs, time-slicing and MPS.

The plugin is the GPU Operator's (the same binary, resources and config file: :mod:`.nvidia_plugin`), so a pool
offers on it what it offers there. No MIG: the chart has no MIG manager, so a layout would have to be made on
each host by hand; such pools belong on backend ``gpu-operator`` (``../shared/research/standalone-plugin.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field

from ...versions import format_version
from ...versions.device_plugin import (
    DEVICE_PLUGIN_CHART,
    DEVICE_PLUGIN_NAMESPACE,
    DEVICE_PLUGIN_RELEASE,
    MPS_FROM,
    NEWEST_DEVICE_PLUGIN,
    DevicePluginVersion,
    require_device_plugin_version,
)
from ..fleet import BackendOptions, PoolOptions
from ..intent_base import DnsLabel, IntentModel
from .charts import pinned_chart
from .nvidia_plugin import (
    allocatable_per_gpu,
    capacity_hint,
    check_sharing,
    check_workload,
    isolation,
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
    "RETIRED_REFUSALS",
    "SHARING_EXAMPLES",
    "SHARING_OPTIONS",
    "STRATEGIES",
    "STRATEGY_SUMMARIES",
    "SUMMARY",
    "SWITCH_LABEL",
    "WORKLOAD_OPTIONS",
    "DevicePluginOptions",
    "DevicePluginSettings",
    "allocatable_per_gpu",
    "capacity_hint",
    "chart_configmap",
    "check",
    "check_pool",
    "check_sharing",
    "check_workload",
    "device_plugin_options",
    "device_plugin_version",
    "fullname",
    "isolation",
    "plugin_daemonset",
    "pods_share_request",
    "resolve_options",
    "resolve_pool",
    "resolve_sharing",
    "resolve_workload",
    "resources_per_gpu",
    "workload_limits",
    "workload_request",
]

NAME = "device-plugin"
SUMMARY = "device-plugin (the standalone NVIDIA device plugin chart, on hosts with their own driver and toolkit)"
STRATEGY_SUMMARIES: Mapping[str, str] = {}
STRATEGIES = frozenset({"none", "time-slicing", "mps"})
OPTIONS = frozenset({"replicas", "renameByDefault", "failRequestsGreaterThanOne"})
SHARING_OPTIONS: Mapping[str, frozenset[str]] = {}  # the device plugin's options are every backend's
OPTION_REASONS: Mapping[tuple[str, str], str] = {}
WORKLOAD_OPTIONS: Mapping[str, str] = {}
SHARING_EXAMPLES: Mapping[str, str] = {}
RANGE_HINTS: Mapping[str, str] = {}
RETIRED_REFUSALS: Mapping[str, tuple[str, str]] = {}
DEVICE_PLUGIN_LIMITS = True  # the same plugin as the Operator's: failRequestsGreaterThanOne, one GPU per request
EXTENDED_RESOURCES = True
NODE_LABELLED_CONFIGS = True  # nvidia.com/device-plugin.config names a key of the chart's ConfigMap
REDEPLOYS_ON_MOVE = False
# The chart's off switch: every term of its node affinity holds only where this label is not "off", so the move to
# the Operator takes the standalone plugin off one node group at a time (standalone-plugin.md §7, preparation 1).
SWITCH_LABEL = "gpustack.io/standalone-plugin"


class DevicePluginSettings(IntentModel):
    """The standalone NVIDIA device plugin chart (backend device-plugin)."""

    version: str | None = Field(
        default=None,
        description='nvidia-device-plugin chart version, quoted, e.g. "0.17.4". Default: the newest known.',
    )
    namespace: DnsLabel | None = Field(
        default=None,
        description="Namespace of the release (default nvidia-device-plugin, as upstream installs it); not default.",
    )
    release_name: DnsLabel | None = Field(
        default=None,
        description="Name of the Helm release (default nvdp, as upstream's README installs it); import reads it from "
        "the release's app.kubernetes.io/instance label. A second release under another name would run a second "
        "plugin on every node.",
    )
    runtime_class_name: DnsLabel | None = Field(
        default=None,
        description="The RuntimeClass the plugin pods run with (the chart's runtimeClassName), where the NVIDIA "
        "runtime is installed but is not the default runtime, e.g. nvidia. Default: none (the hosts' default "
        "runtime or OCI hook reaches the GPUs).",
    )


@dataclass(frozen=True, slots=True)
class DevicePluginOptions(BackendOptions):
    """The chart a cluster on backend device-plugin runs (fleet key ``devicePlugin``)."""

    release: DevicePluginVersion = NEWEST_DEVICE_PLUGIN
    namespace: str = DEVICE_PLUGIN_NAMESPACE
    runtime_class_name: str | None = None
    release_name: str = DEVICE_PLUGIN_RELEASE


def resolve_options(report: Report, setting: Setting) -> DevicePluginOptions:
    release, namespace = pinned_chart(
        report, setting, "device_plugin", NEWEST_DEVICE_PLUGIN, require_device_plugin_version, DEVICE_PLUGIN_NAMESPACE
    )
    namespace_value, namespace_path = setting("device_plugin", "namespace")
    if namespace_value == "default":
        assert namespace_path is not None
        # The chart fails in `default` unless allowDefaultNamespace (templates/validation.yml:27-34,55-62).
        report.error(
            namespace_path,
            "the nvidia-device-plugin chart refuses to install into namespace default",
            f"use its own namespace, e.g. {DEVICE_PLUGIN_NAMESPACE}",
        )
    runtime_class, _ = setting("device_plugin", "runtime_class_name")
    release_name, _ = setting("device_plugin", "release_name")
    return DevicePluginOptions(release, namespace, runtime_class, release_name or DEVICE_PLUGIN_RELEASE)


def device_plugin_options(cluster: Cluster) -> DevicePluginOptions:
    return cluster.options(DevicePluginOptions)


def fullname(release: str) -> str:
    """The chart's object names (``_helpers.tpl:14-25``): the release name when it holds the chart's, else
    ``<release>-<chart>``."""
    return release if DEVICE_PLUGIN_CHART in release else f"{release}-{DEVICE_PLUGIN_CHART}"


def plugin_daemonset(cluster: Cluster) -> str:
    """The plugin's DaemonSet (``daemonset-device-plugin.yml:20``)."""
    return fullname(device_plugin_options(cluster).release_name)


def chart_configmap(cluster: Cluster) -> str:
    """The ConfigMap the chart renders from ``config.map`` (``_helpers.tpl:237-248``)."""
    return f"{plugin_daemonset(cluster)}-configs"


def device_plugin_version(cluster: Cluster) -> str:
    """The chart's plugin: its appVersion is the chart version."""
    return device_plugin_options(cluster).release.plugin


def resolve_pool(cluster: ClusterSpec, pool: NodePool, path: PathKey, report: Report) -> PoolOptions:
    return resolve_pool_of(NAME, cluster, pool, path, report)


def check_pool(cluster: Cluster, pool: Pool, origin: PoolOrigin, strategy_path: PathKey, report: Report) -> None:
    release = device_plugin_options(cluster).release
    if pool.sharing.strategy == "mps" and not release.has_mps:
        report.error(
            strategy_path,
            f"pool {pool.name!r} shares by MPS, which the nvidia-device-plugin chart has from "
            f"{format_version(MPS_FROM).lstrip('v')} (cluster {cluster.name!r} pins {release.version})",
            f'pin devicePlugin.version "{NEWEST_DEVICE_PLUGIN.version}", or share by time-slicing',
        )
    elif (
        pool.sharing.strategy == "mps"
        and not pool.sharing.fail_requests_greater_than_one
        and not cluster.mps_fail_requests_configurable
    ):
        # Resolving judged the option by the Operator's plugin; this cluster runs the chart's.
        report.error(
            strategy_path,
            f"pool {pool.name!r}: failRequestsGreaterThanOne: false cannot be honoured on MPS by device plugin "
            f"{release.plugin} (chart {release.version}), which always refuses requests for more than one replica",
            f'remove it, or pin devicePlugin.version "{NEWEST_DEVICE_PLUGIN.version}", which honours it',
        )


def check(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """The device plugin's own rules are checked with the pools (model/checks.py) and :func:`check_pool`."""
