"""The NVIDIA DRA driver: GPUs and MIG devices as DRA devices, claimed through DeviceClasses of our own.

Every pool gets a DeviceClass per kind of device it offers (``<pool>.gpu.gpustack-gen.dev``, or
``<pool>.mig-<profile>.gpustack-gen.dev`` per MIG profile), and these names are the resources of
``capacity.yaml``. A pod claims devices of its pool's class:

- whole GPUs and MIG devices: a ResourceClaimTemplate per workload, so each pod gets its own claim and
  its own ``gpus`` devices (``dra-driver demo/specs/quickstart/v1/gpu-test1.yaml``, ``gpu-test4.yaml``);
- time-slicing and MPS: DRA shares a device only among the pods that name the same ResourceClaim
  (``gpu-test3.yaml``), and a claim lives in one namespace and is allocated on one node. So a workload
  gets one named ResourceClaim that all its pods share, on one node, and the pool's ``replicas`` means
  pods per claim. The claim is allocated its ``gpus`` devices for itself, so capacity counts devices
  (physical GPUs), each workload taking its ``gpus`` whatever its pod count; no DRA object enforces
  ``replicas``, and the checks refuse a workload with more pods than that (``research/dra.md`` §3, §9).

The checks here: the Kubernetes minor (DRA from 1.32, GA in 1.34), the Operator version NVIDIA's DRA
guide names, GPU models the driver can be told apart by (their NVML ``productName``), the driver's rules
for the sharing options, and what DRA cannot enforce.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import Field

from ....versions import leading_version, parse_version
from ....versions.dra import DRA_VERSIONS, NEWEST_DRA, SHARING_GATES, DraDriverVersion, require_dra_version
from ....versions.gpu_operator import NEWEST_OPERATOR
from ...fleet import ISOLATION, BackendOptions, PoolOptions, SharingOptions, WorkloadOptions
from ...intent_base import DnsLabel, IntentModel
from ..charts import pinned_chart
from . import gpu_config

if TYPE_CHECKING:
    from ....yamlio.source import PathKey
    from ...fleet import Cluster, Pool, Sharing, Workload
    from ...intent import Cluster as ClusterSpec
    from ...intent import NodePool
    from ...intent import Workload as WorkloadSpec
    from ...resolve import ClusterOrigin, PoolOrigin, Report, Setting

NAME = "dra"
SUMMARY = "dra (the NVIDIA DRA driver: DeviceClasses and ResourceClaims; Kubernetes 1.32 or newer)"
STRATEGY_SUMMARIES: Mapping[str, str] = {}
STRATEGIES = frozenset({"none", "time-slicing", "mps", "mig"})
OPTIONS = frozenset({"replicas", "layout", "config", "interval", "activeThreadPercentage", "pinnedMemoryLimit"})
# The options of the driver's GpuConfig, under the strategy that takes each.
SHARING_OPTIONS: Mapping[str, frozenset[str]] = {
    "time-slicing": frozenset({"interval"}),
    "mps": frozenset({"activeThreadPercentage", "pinnedMemoryLimit"}),
}
# Why the DRA driver refuses an option under another strategy, in its own words (its GpuConfig and
# MigDeviceConfig, api/nvidia.com/resource/v1beta1/sharing.go).
OPTION_REASONS: Mapping[tuple[str, str], str] = {
    ("interval", "mps"): "the DRA driver fails such a claim: cannot use TimeSlicingConfig with the 'MPS' strategy",
    ("activeThreadPercentage", "time-slicing"): "the DRA driver fails such a claim: cannot use MpsConfig with the "
    "'TimeSlicing' strategy",
    ("pinnedMemoryLimit", "time-slicing"): "the DRA driver fails such a claim: cannot use MpsConfig with the "
    "'TimeSlicing' strategy",
    ("interval", "mig"): "a MIG device's config (MigDeviceConfig) has no timeSlicingConfig: the DRA driver's strict "
    "decoder rejects it, and time-slicing has no effect on MIG",
}
WORKLOAD_OPTIONS: Mapping[str, str] = {}
SHARING_EXAMPLES: Mapping[str, str] = {}
RANGE_HINTS: Mapping[str, str] = {}
RETIRED_REFUSALS: Mapping[str, tuple[str, str]] = {}
DEVICE_PLUGIN_LIMITS = False  # a DeviceClass per MIG profile whatever mig.strategy says; a claim's devices are distinct
EXTENDED_RESOURCES = False  # devices are published in ResourceSlices, not in the node's allocatable
NODE_LABELLED_CONFIGS = True  # nvidia.com/mig.config: static layouts still come from the Operator's MIG manager
REDEPLOYS_ON_MOVE = True  # pools move one at a time, each redeploying its own workloads (change rule dra-move)

CLASS_DOMAIN = "gpustack-gen.dev"
MIN_KUBERNETES = (1, 32)  # resource.k8s.io/v1beta1 (k8s.io/api resource/v1beta1: introduced=1.32)
BETA2_KUBERNETES = (1, 33)  # resource.k8s.io/v1beta2 (introduced=1.33)
GA_KUBERNETES = (1, 34)  # resource.k8s.io/v1, DynamicResourceAllocation GA and on by default
# NVIDIA's DRA install guide for the GPU Operator: "GPU Operator >= 25.10.0 installed with devicePlugin.enabled=false"
# (cloud-native-docs gpu-operator/dra-intro-install.rst).
MIN_OPERATOR = "v25.10.0"
# The GPU driver: "v565 or later for GPU allocation" (dra-driver v0.4.1 docs/prerequisites.md); NVIDIA's DRA guide
# for the GPU Operator asks for 580 or later (research/dra.md §1).
MIN_GPU_DRIVER = 565
GUIDE_GPU_DRIVER = 580
# Labels on each pool's nodes (dra-intro-install.rst): the driver's kubelet plugin runs where the first is true;
# the Operator keeps its device plugin off a node whose deploy label is false (gpu-operator
# controllers/state_manager.go addGPUStateLabels sets it only when absent or empty).
KUBELET_PLUGIN_LABEL = "nvidia.com/dra-kubelet-plugin"
DEVICE_PLUGIN_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
DEFAULT_NAMESPACE = "nvidia-dra-driver-gpu"  # as NVIDIA's DRA install guide and the upgrade guide name it


class DraSettings(IntentModel):
    """The NVIDIA DRA driver chart (backend dra)."""

    version: str | None = Field(
        default=None,
        description="DRA driver chart version, e.g. 0.4.1 (0.4.x: dra-driver-nvidia-gpu from registry.k8s.io; 25.12.0: nvidia-dra-driver-gpu from NVIDIA's repository). Default: the newest known.",
    )
    namespace: DnsLabel | None = Field(
        default=None, description="Namespace of the driver's release (default nvidia-dra-driver-gpu)."
    )


@dataclass(frozen=True, slots=True)
class DraOptions(BackendOptions):
    """The NVIDIA DRA driver release a cluster on backend dra installs (fleet key ``dra``)."""

    release: DraDriverVersion = NEWEST_DRA
    namespace: str = DEFAULT_NAMESPACE


def resolve_options(report: Report, setting: Setting) -> DraOptions:
    return DraOptions(*pinned_chart(report, setting, "dra", NEWEST_DRA, require_dra_version, DEFAULT_NAMESPACE))


def dra_options(cluster: Cluster) -> DraOptions:
    return cluster.options(DraOptions)


@dataclass(frozen=True, slots=True)
class DraSharing(SharingOptions):
    """The pool's GpuConfig options (fleet keys under ``sharing``); None: the driver's default."""

    interval: str | None = None  # time-slicing: Default | Short | Medium | Long
    active_thread_percentage: int | None = None  # mps: per client, 0-100
    pinned_memory_limit: str | None = None  # mps: device memory each client may pin, a quantity


def resolve_sharing(strategy: str, options: Mapping[str, Any]) -> SharingOptions:
    """Each option under the strategy that takes it (others are refused while resolving)."""
    pinned = options.get("pinnedMemoryLimit") if strategy == "mps" else None
    own = DraSharing(
        interval=options.get("interval") if strategy == "time-slicing" else None,
        active_thread_percentage=options.get("activeThreadPercentage") if strategy == "mps" else None,
        pinned_memory_limit=None if pinned is None else str(pinned),
    )
    return SharingOptions() if own == DraSharing() else own


def dra_sharing(sharing: Sharing) -> DraSharing:
    return sharing.options(DraSharing)


def check_sharing(strategy: str, options: Mapping[str, Any], path: PathKey, report: Report) -> None:
    """The GpuConfig's options are all optional."""


def resolve_pool(cluster: ClusterSpec, pool: NodePool, path: PathKey, report: Report) -> PoolOptions:
    """Nothing of the driver's own: it finds its devices on every node it runs on."""
    return PoolOptions()


def resolve_workload(workload: WorkloadSpec, path: PathKey, report: Report) -> WorkloadOptions:
    """Nothing of the driver's own: a workload asks for devices by ``gpus``."""
    return WorkloadOptions()


def capacity_hint(pool: Pool, resource: str) -> str | None:
    return None


def check_pool(cluster: Cluster, pool: Pool, origin: PoolOrigin, strategy_path: PathKey, report: Report) -> None:
    """The driver's per-pool rules are checked with the cluster (:func:`check`)."""


_MINOR = re.compile(r"v?(\d+)\.(\d+)")


def device_class(pool: Pool, profile: str | None = None) -> str:
    """The pool's DeviceClass for whole (or shared) GPUs, or for one of its MIG profiles."""
    if profile is None:
        return f"{pool.name}.gpu.{CLASS_DOMAIN}"
    return f"{pool.name}.mig-{profile.replace('+', '.')}.{CLASS_DOMAIN}"


def pool_classes(pool: Pool) -> dict[str, str | None]:
    """The pool's DeviceClasses, each with the MIG profile it holds (None: whole or shared GPUs)."""
    if pool.sharing.strategy == "mig":
        return {device_class(pool, profile): profile for profile, _ in pool.mig_devices()}
    return {device_class(pool): None}


def class_attributes(pool: Pool, profile: str | None = None) -> dict[str, tuple[str, ...]]:
    """What a device of the class publishes (driver gpu.nvidia.com): attribute -> the values that match. Its type
    (``gpu``, or ``mig`` for a MIG device), its GPU model's NVML name (``productName``, a MIG device's parent's)
    and a MIG device's ``profile`` (dra-driver ``cmd/gpu-kubelet-plugin/deviceinfo.go``). The DeviceClass's CEL
    selector is written from it, and ``verify`` matches the devices a node publishes with it."""
    attributes = {"type": ("gpu",) if profile is None else ("mig",), "productName": pool.gpu.nvml_names}
    if profile is not None:
        attributes["profile"] = (profile,)
    return attributes


def slots_per_device(pool: Pool, profile: str | None = None) -> int:
    """What one device of the class counts for in capacity: itself, a shared GPU too, since the claim it is
    allocated to holds it for that claim's pods alone."""
    return 1


def resources_per_gpu(cluster: Cluster, pool: Pool) -> dict[str, int]:
    """Devices of each DeviceClass one physical GPU of the pool offers: itself, or its MIG devices
    (:func:`slots_per_device`)."""
    if pool.sharing.strategy == "mig":
        return {device_class(pool, profile): count for profile, count in pool.mig_devices()}
    return {device_class(pool): slots_per_device(pool)}


def allocatable_per_gpu(cluster: Cluster, pool: Pool) -> dict[str, int]:
    """Nothing: DRA devices are published in ResourceSlices, not in the node's allocatable."""
    return {}


def workload_request(cluster: Cluster, workload: Workload) -> dict[str, int]:
    """One pod's devices (on a shared pool, the devices of the claim all its workload's pods share)."""
    pool = cluster.pool_of(workload)
    if pool.sharing.strategy == "mig":
        return {device_class(pool, workload.mig_profile or pool.mig_devices()[0][0]): workload.gpus}
    return {device_class(pool): workload.gpus}


def workload_limits(cluster: Cluster, workload: Workload) -> dict[str, int]:
    """Nothing in resources.limits: a pod names its claim instead (compile/backends/dra/claims.py)."""
    return {}


def pods_share_request(cluster: Cluster, pool: Pool) -> bool:
    """On time-slicing and MPS pools a workload's pods share one ResourceClaim, and so its devices."""
    return pool.sharing.is_shared


def thread_percentage(sharing: Sharing) -> int:
    """The share of the GPU's threads each MPS client gets: ``activeThreadPercentage``, else ``100 / replicas``,
    the share a device-plugin MPS replica gets."""
    percentage = dra_sharing(sharing).active_thread_percentage
    return 100 // sharing.replicas if percentage is None else percentage


def isolation(cluster: Cluster, pool: Pool) -> str:
    """MPS limits each claim's clients to what the pool's GpuConfig says: their threads, and their memory only
    with ``pinnedMemoryLimit``; the driver splits no memory by itself (``research/dra.md`` §4, §9)."""
    sharing = pool.sharing
    if sharing.strategy != "mps":
        return ISOLATION[sharing.strategy]
    pinned = dra_sharing(sharing).pinned_memory_limit
    memory = (
        f"{pinned} of pinned device memory"
        if pinned is not None
        else "no limit on its memory (no pinnedMemoryLimit: one pod can run the others out of memory)"
    )
    return (
        f"none: the MPS server limits each client to {thread_percentage(sharing)}% of the GPU's threads and "
        f"{memory}, but the clients share one MPS server, so a fatal GPU error in one ends the others"
    )


def check_workload(cluster: Cluster, pool: Pool, workload: Workload, path: PathKey, report: Report) -> bool:
    """A shared claim's devices are on one node, and all its pods with them: the pool's slots per node do not say
    whether a claim fits. False when the workload cannot be served as written."""
    if not pool.sharing.is_shared:
        return True
    fits = True
    if workload.gpus > pool.gpus_per_node:
        fits = False
        report.error(
            (*path, "gpus"),
            f"on backend dra the claim of {workload.namespace}/{workload.name} asks for {workload.gpus} GPUs of "
            f"one node, and a node of pool {pool.name!r} has {pool.gpus_per_node}",
            f"ask for gpus: {pool.gpus_per_node} or fewer",
        )
    if workload.replicas > pool.sharing.replicas:
        fits = False
        report.error(
            (*path, "replicas"),
            f"on backend dra the {workload.replicas} pods of {workload.namespace}/{workload.name} share one "
            f"ResourceClaim, so all of them run on one node with its {workload.gpus} GPU(s), and pool {pool.name!r} "
            f"lets {pool.sharing.replicas} pods share a GPU",
            f"lower replicas to {pool.sharing.replicas}, or split the workload into workloads of at most "
            f"{pool.sharing.replicas} pods (each gets a claim of its own)",
        )
    return fits


def kubernetes_minor(kubernetes: str) -> tuple[int, int] | None:
    match = _MINOR.match(kubernetes)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def resource_api_version(kubernetes: str) -> str:
    """The ``resource.k8s.io`` version a cluster of this Kubernetes version serves (v1beta1 on 1.32, v1beta2 on
    1.33, v1 from 1.34)."""
    minor = kubernetes_minor(kubernetes) or GA_KUBERNETES
    if minor >= GA_KUBERNETES:
        return "resource.k8s.io/v1"
    return "resource.k8s.io/v1beta2" if minor >= BETA2_KUBERNETES else "resource.k8s.io/v1beta1"


def gates(cluster: Cluster) -> dict[str, bool]:
    """The driver feature gates the cluster's pools need, and only those (all alpha, off by default)."""
    strategies = {pool.sharing.strategy for pool in cluster.pools}
    return {gate: True for strategy, gate in SHARING_GATES.items() if strategy in strategies}


def check(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    _check_kubernetes(cluster, origin, report)
    if _check_operator(cluster, origin, report):  # an older Operator's defaults (CDI off) are beside the point
        _check_node_software(cluster, origin, report)
    used_gates: set[str] = set()
    for pool in cluster.pools:
        pool_origin = origin.pools[pool.name]
        for key, _ in pool.node_selector:
            if key in (KUBELET_PLUGIN_LABEL, DEVICE_PLUGIN_DEPLOY_LABEL):
                report.error(
                    (*pool_origin.path, "nodeSelector", key),
                    f"pool {pool.name!r} selects its nodes by {key}, a label gpustack-gen sets on them on backend dra: "
                    "relabelling would unselect the pool's own nodes",
                    "select on a label your node group sets, such as node.kubernetes.io/instance-type",
                    key=True,
                )
        if not pool.gpu.nvml_names:
            report.error(
                (*pool_origin.path, "gpu"),
                f"the DRA driver tells GPU models apart by their NVML name (productName), and gpustack-gen does not "
                f"know that of {pool.gpu.name}: no DeviceClass could select pool {pool.name!r}",
                "keep this cluster on backend gpu-operator",
            )
        _check_options(cluster, pool, pool_origin.sharing, report)
        if pool.sharing.is_shared:
            gate = SHARING_GATES[pool.sharing.strategy]
            strategy_path = pool_origin.sharing.get("strategy", pool_origin.sharing_path)
            if gate not in used_gates:
                used_gates.add(gate)
                report.warn(
                    strategy_path,
                    f"{pool.sharing.strategy} on backend dra needs the DRA driver's {gate} feature gate, which is "
                    f"alpha (cluster {cluster.name!r}; dra-driver-values.yaml turns it on)",
                    "alpha gates can change or go between driver releases: check the release notes before "
                    "each driver upgrade",
                )
            report.warn(
                pool_origin.sharing.get("replicas", strategy_path),
                f"on backend dra, replicas {pool.sharing.replicas} of pool {pool.name!r} in cluster "
                f"{cluster.name!r} is the number of pods that may share one ResourceClaim: each workload's pods "
                "share its claim, on one node, and no DRA object enforces the number (any pod naming the claim "
                "joins it)",
                "gpustack-gen checks the fleet's workloads against it; keep other pods off these claims",
            )


def _check_kubernetes(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    minor = kubernetes_minor(cluster.kubernetes)
    if minor is None:
        return  # reported while resolving
    path: PathKey = origin.fields.get("kubernetes", origin.path)
    if minor < MIN_KUBERNETES:
        report.error(
            path,
            f"backend dra needs Kubernetes 1.32 or newer (cluster {cluster.name!r} runs {cluster.kubernetes}): "
            "resource.k8s.io arrived as v1beta1 in 1.32 and is GA from 1.34",
            "upgrade the cluster to 1.34 or newer, or keep it on backend gpu-operator",
        )
        return
    release = dra_options(cluster).release
    prerequisite = parse_version(release.kubernetes_prerequisite or "")
    running = parse_version(cluster.kubernetes)
    documented = older = ""
    if prerequisite is not None and running is not None and running < prerequisite:
        documented = (
            f"; the DRA driver {release.version} documents Kubernetes v{release.kubernetes_prerequisite} or newer"
        )
        fitting = [
            known
            for known in DRA_VERSIONS
            if running >= (parse_version(known.kubernetes_prerequisite or "") or running)
        ]
        if fitting:
            older = (
                f"; or, on a new install (there is no downgrade), pin dra.version {fitting[-1].version}, whose "
                "prerequisites name no newer Kubernetes"
            )
    if minor < GA_KUBERNETES:
        versions = "resource.k8s.io/v1beta1=true" + (
            ",resource.k8s.io/v1beta2=true" if minor >= BETA2_KUBERNETES else ""
        )
        report.warn(
            path,
            f"DRA is beta and off by default on Kubernetes {minor[0]}.{minor[1]} (cluster {cluster.name!r}): enable "
            "the DynamicResourceAllocation feature gate on kube-apiserver, kube-controller-manager, kube-scheduler "
            f"and every kubelet, and --runtime-config={versions} on kube-apiserver; gpustack-gen writes "
            f"{resource_api_version(cluster.kubernetes)} objects{documented}",
            "or upgrade to Kubernetes 1.34, where DRA is GA and on; managed offerings may not let you set the gates "
            f"(dra-driver docs/prerequisites.md){older}",
        )
    elif documented:
        report.warn(
            path,
            f"cluster {cluster.name!r} runs Kubernetes {cluster.kubernetes}{documented}",
            f"upgrade the cluster{older}",
        )


def _check_operator(cluster: Cluster, origin: ClusterOrigin, report: Report) -> bool:
    release = cluster.operator.release
    if release.at_least(MIN_OPERATOR):
        return True
    report.error(
        origin.fields.get("operator.version", origin.path),
        f"backend dra needs GPU Operator {MIN_OPERATOR} or newer beside the DRA driver, with its device plugin off "
        f"(NVIDIA's DRA install guide); cluster {cluster.name!r} pins {release.version}",
        f"pin operator.version {NEWEST_OPERATOR.version} (upgrade the Operator in a change of its own first)",
    )
    return False


# Where the container runtime reads CDI specs by default, whatever the Operator's toolkit sets: "enabled by
# default in containerd 2.0+ and CRIO v1.27+" (kubernetes-sigs/dra-driver-nvidia-gpu@v0.4.1 docs/prerequisites.md:14).
CDI_BY_DEFAULT = {"cri-o": (1, 27), "containerd": (2, 0)}


def _check_runtime_cdi(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """With the Operator's CDI switch off, the driver's own CDI specs are read only by a runtime that reads CDI by
    default: fine on CRI-O 1.27+ and containerd 2.0+, an error on older ones, a warning where the version is not
    stated. The switch sets the toolkit's mode, not whether the runtime reads CDI (real-world research, section 13)."""
    runtime = cluster.container_runtime
    needed = CDI_BY_DEFAULT[runtime]
    least = f"{runtime} {needed[0]}.{needed[1]}"
    running = leading_version(cluster.container_runtime_version) if cluster.container_runtime_version else None
    path = origin.fields.get("operator.cdi.enabled", origin.fields.get("operator.version", origin.path))
    if running is not None and running[:2] >= needed:
        return
    if running is None:
        report.warn(
            path,
            f"the DRA driver hands GPUs to containers through CDI, and cluster {cluster.name!r} has the Operator's "
            f"toolkit leave CDI off: that works only where the runtime reads CDI by default ({least} or newer), "
            "and the fleet does not say which version the nodes run",
            'state it (containerRuntimeVersion: "1.29.1", from kubectl get nodes -o wide), or set operator.cdi.enabled: true',
        )
        return
    report.error(
        origin.fields.get("containerRuntimeVersion", path),
        f"the DRA driver hands GPUs to containers through CDI, and cluster {cluster.name!r} runs {runtime} "
        f"{cluster.container_runtime_version}, which reads CDI by default only from {needed[0]}.{needed[1]}, with "
        "the Operator's toolkit leaving CDI off",
        f"set operator.cdi.enabled: true, or upgrade {runtime} to {needed[0]}.{needed[1]} or newer",
    )


def _check_node_software(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """What the driver needs on the nodes where the Operator provides it: CDI in the container runtime ("CDI enabled
    through the NVIDIA Container Toolkit") and a GPU driver of 565 or newer (dra-driver docs/prerequisites.md)."""
    operator = cluster.operator
    if operator.toolkit_enabled and not operator.cdi_enabled:
        _check_runtime_cdi(cluster, origin, report)
    version = operator.driver_version or operator.release.driver
    major = re.match(r"\d+", version or "")
    if not operator.driver_enabled or major is None or int(major.group()) >= GUIDE_GPU_DRIVER:
        return
    path = origin.fields.get("operator.driver.version", origin.fields.get("operator.version", origin.path))
    what = f"cluster {cluster.name!r} gets GPU driver {version}"
    if int(major.group()) < MIN_GPU_DRIVER:
        report.error(
            path,
            f"the DRA driver needs GPU driver {MIN_GPU_DRIVER} or newer (its prerequisites); {what}",
            f"pin operator.driver.version {GUIDE_GPU_DRIVER} or newer, as NVIDIA's DRA guide asks",
        )
    else:
        report.warn(
            path,
            f"NVIDIA's DRA guide for the GPU Operator asks for GPU driver {GUIDE_GPU_DRIVER} or newer (the DRA "
            f"driver's own prerequisites say {MIN_GPU_DRIVER}); {what}",
            f"pin operator.driver.version {GUIDE_GPU_DRIVER} or newer",
        )


def _check_options(cluster: Cluster, pool: Pool, paths: dict[str, PathKey], report: Report) -> None:
    """The driver's rules for the values the pool's GpuConfig carries, at the fleet's lines."""
    sharing = dra_sharing(pool.sharing)
    problems = [
        ("interval", sharing.interval is not None and gpu_config.interval_problem(sharing.interval)),
        (
            "activeThreadPercentage",
            sharing.active_thread_percentage is not None
            and gpu_config.thread_percentage_problem(sharing.active_thread_percentage),
        ),
        (
            "pinnedMemoryLimit",
            sharing.pinned_memory_limit is not None and gpu_config.pinned_limit_problem(sharing.pinned_memory_limit),
        ),
    ]
    for alias, problem in problems:
        if problem:
            report.error(
                paths[alias],
                f"the DRA driver refuses this {alias}: {problem}",
                _OPTION_HINTS[alias],
            )


_OPTION_HINTS = {
    "interval": "one of " + ", ".join(gpu_config.INTERVALS),
    "activeThreadPercentage": "a percentage from 0 to 100 (unset: 100 / replicas)",
    "pinnedMemoryLimit": 'at least 1Mi, e.g. "10Gi"',
}


def device_plugin_version(cluster: Cluster) -> str:
    """The Operator's pinned device plugin."""
    return cluster.operator.release.device_plugin
