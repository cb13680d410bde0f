"""HAMi: vGPUs with per-pod GPU memory and compute limits, enforced in software by CUDA interception.

Facts from HAMi v2.10.0 (``../shared/research/hami.md``):

- each physical GPU registers ``deviceSplitCount`` vGPUs, so a node's ``nvidia.com/gpu`` counts vGPUs;
  its memory (x ``deviceMemoryScaling``) and 100 % of its cores go into the node annotation
  ``hami.io/node-nvidia-register``, which the scheduler reads (§1; web ``docs/faq/faq.md``);
- in a pod, ``nvidia.com/gpu`` counts physical GPUs, one vGPU per card; ``nvidia.com/gpumem`` is MiB per
  GPU, ``nvidia.com/gpumem-percentage`` a share of it, ``nvidia.com/gpucores`` a percentage of its
  compute (§3). Without a memory request a pod gets all of the GPU's memory, and without cores as well
  the webhook makes it exclusive (``gpucores: 100``);
- per-node settings are matched by node name only (§2), so pools that need their own split or memory
  scaling must name their nodes;
- HAMi registers the memory NVML reports, which is less than the catalog's nominal size: memory asked
  within that margin may not fit, a warning (an error would refuse fleets that fit on GPUs that lose
  little or nothing, such as HBM ones; asking above the nominal size never fits, an error).

A pool with strategy ``none`` is a pool of whole GPUs: split 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from ...catalog import gpu_memory_mib
from ...versions import leading_version
from ...versions.hami import DEFAULT_SCHEDULER_IMAGE, HAMI_NAMESPACE, NEWEST_HAMI, HamiVersion, require_hami_version
from ..fleet import ISOLATION, BackendOptions, PoolOptions, SharingOptions, WorkloadOptions
from ..intent_base import DnsLabel, IntentModel
from ..quantity import quantity_mib, quantity_value
from .charts import pinned_chart

if TYPE_CHECKING:
    from ...yamlio.source import PathKey
    from ..fleet import Cluster, Pool, Sharing, Workload
    from ..intent import Cluster as ClusterSpec
    from ..intent import NodePool
    from ..intent import Workload as WorkloadSpec
    from ..resolve import ClusterOrigin, PoolOrigin, Report, Setting

NAME = "hami"
SUMMARY = "hami (HAMi's device plugin and scheduler; the GPU Operator still installs the driver and toolkit)"
STRATEGY_SUMMARIES: Mapping[str, str] = {
    "hami": "hami (several pods per GPU with memory and compute limits enforced in software; backend hami)"
}
STRATEGIES = frozenset({"none", "hami"})
OPTIONS = frozenset({"split", "memoryScaling", "policy"})
SHARING_OPTIONS: Mapping[str, frozenset[str]] = {"hami": OPTIONS}  # the options of its own strategy
OPTION_REASONS: Mapping[tuple[str, str], str] = {}
# A workload's own GPU memory and compute (fleet keys), which only pools of strategy hami give.
WORKLOAD_OPTIONS: Mapping[str, str] = {"gpuMemory": "hami", "gpuMemoryPercent": "hami", "gpuCores": "hami"}
SHARING_EXAMPLES: Mapping[str, str] = {"hami": "{strategy: hami, split: 4}"}
# What the bounds of its fleet keys mean, for range errors.
RANGE_HINTS: Mapping[str, str] = {
    "split": "split is how many pods share one GPU (HAMi's deviceSplitCount), 1 to 128",
    "memoryScaling": "a multiple of each GPU's memory, above 0: 1 hands out what the GPU has",
    "gpuMemoryPercent": "a percentage of each GPU's memory, 1 to 100",
    "gpuCores": "a percentage of each GPU's compute, 1 to 100; leave it out to set none aside",
}
RETIRED_REFUSALS: Mapping[str, tuple[str, str]] = {
    "hami": (
        "HAMi policies are not device-plugin configs",
        "remove it: HAMi's settings live in hami-values.yaml, which nodes do not name",
    )
}
ISOLATION_HAMI = "software: HAMi's CUDA interception enforces each pod's GPU memory and compute limits"
DEVICE_PLUGIN_LIMITS = False  # its own device plugin, not the GPU Operator's (no time-slicing, MPS or MIG pools)
EXTENDED_RESOURCES = True
NODE_LABELLED_CONFIGS = False  # its node labels (gpu=on, its per-node config) name no ConfigMap entry
REDEPLOYS_ON_MOVE = False
RESOURCE_GPU = "nvidia.com/gpu"
RESOURCE_MEMORY = "nvidia.com/gpumem"
RESOURCE_MEMORY_PERCENTAGE = "nvidia.com/gpumem-percentage"
RESOURCE_CORES = "nvidia.com/gpucores"
FULL_CORES = 100  # nvidia.com/gpucores of one GPU (deviceCoreScaling 1)
MIN_KUBERNETES = (1, 23)
NODE_LABEL = "gpu"  # HAMi's device plugin selects nodes labelled gpu=on (devicePlugin.nvidiaNodeSelector)
NODE_LABEL_VALUE = "on"
# NVML reports less memory than the catalog's nominal size: ECC on GDDR takes 6.25 % (CUDA C++ Best Practices
# Guide, "ECC"), and the driver reserves some: a 16 GiB T4 shows 15079 to 15360 MiB. 10 % covers both.
MEMORY_SHORTFALL = 0.10
MEMORY_SHORTFALL_WHY = f"the catalog's memory is nominal, NVML reports up to {MEMORY_SHORTFALL * 100:g} % less"


# registry[:port]/repository, lower case, no tag or digest (the chart adds the tag).
IMAGE_WITHOUT_TAG = r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$"


class HamiSettings(IntentModel):
    """The HAMi chart (backend hami)."""

    version: str | None = Field(
        default=None,
        description='HAMi chart version, quoted, e.g. "2.10.0". Default: the newest known.',
    )
    namespace: DnsLabel | None = Field(
        default=None, description="Namespace of the HAMi release (default kube-system, as upstream installs it)."
    )
    scheduler_image: Annotated[str, Field(max_length=255, pattern=IMAGE_WITHOUT_TAG)] | None = Field(
        default=None,
        description="The kube-scheduler image HAMi's scheduler runs beside its own, without a tag (the chart tags it "
        "with the cluster's Kubernetes version), e.g. registry.example.com/mirror/kube-scheduler. Default: "
        "registry.k8s.io/kube-scheduler, the Kubernetes project's; the chart's own default is a mirror "
        "(registry.cn-hangzhou.aliyuncs.com/google_containers/kube-scheduler).",
    )


@dataclass(frozen=True, slots=True)
class HamiOptions(BackendOptions):
    """The HAMi chart a cluster on backend hami installs (fleet key ``hami``)."""

    release: HamiVersion = NEWEST_HAMI
    namespace: str = HAMI_NAMESPACE
    scheduler_image: str = DEFAULT_SCHEDULER_IMAGE  # the kube-scheduler image, without its tag


def resolve_options(report: Report, setting: Setting) -> HamiOptions:
    release, namespace = pinned_chart(report, setting, "hami", NEWEST_HAMI, require_hami_version, HAMI_NAMESPACE)
    image, _ = setting("hami", "scheduler_image")
    return HamiOptions(release, namespace, image or DEFAULT_SCHEDULER_IMAGE)


def hami_options(cluster: Cluster) -> HamiOptions:
    return cluster.options(HamiOptions)


@dataclass(frozen=True, slots=True)
class HamiSharing(SharingOptions):
    """The options of strategy hami (fleet keys ``split``, ``memoryScaling``, ``policy``)."""

    split: int = 1  # vGPUs per physical GPU
    memory_scaling: float = 1.0  # GPU memory handed out per GPU, as a multiple of the real memory
    policy: str | None = None  # binpack | spread (None: HAMi's defaults)

    def describe(self, strategy: str) -> str | None:
        if strategy != "hami":
            return None
        text = f"HAMi, {self.split} per GPU"
        if self.memory_scaling != 1:
            text += f", memory x{self.memory_scaling:g}"
        return text


@dataclass(frozen=True, slots=True)
class HamiPool(PoolOptions):
    node_names: tuple[str, ...] = ()  # the pool's nodes by name (per-node settings match by name only)


@dataclass(frozen=True, slots=True)
class HamiWorkload(WorkloadOptions):
    gpu_memory_mib: int | None = None  # GPU memory per GPU
    gpu_memory_percent: int | None = None  # GPU memory per GPU, as a percentage
    gpu_cores: int | None = None  # percentage of each GPU's compute


def resolve_sharing(strategy: str, options: Mapping[str, Any]) -> SharingOptions:
    """A pool of whole GPUs (strategy none) is split 1."""
    if strategy != "hami":
        return SharingOptions()
    return HamiSharing(
        split=int(options.get("split", 1)),
        memory_scaling=float(options.get("memoryScaling", 1)),
        policy=options.get("policy"),
    )


def check_sharing(strategy: str, options: Mapping[str, Any], path: PathKey, report: Report) -> None:
    if strategy == "hami" and "split" not in options:
        report.error(path, "hami needs split (vGPUs per physical GPU: how many pods share one GPU)", "add split: 4")


def resolve_pool(cluster: ClusterSpec, pool: NodePool, path: PathKey, report: Report) -> PoolOptions:
    return HamiPool(tuple(pool.node_names)) if pool.node_names else PoolOptions()


def resolve_workload(workload: WorkloadSpec, path: PathKey, report: Report) -> WorkloadOptions:
    own = HamiWorkload(_gpu_memory_mib(workload, path, report), workload.gpu_memory_percent, workload.gpu_cores)
    return WorkloadOptions() if own == HamiWorkload() else own


def _gpu_memory_mib(workload: WorkloadSpec, path: PathKey, report: Report) -> int | None:
    """``gpuMemory`` in whole MiB, as HAMi's nvidia.com/gpumem counts it; None when unset or refused."""
    if workload.gpu_memory is None:
        return None
    value = quantity_value(workload.gpu_memory)
    if value < 2**20:
        unit = f"{workload.gpu_memory}Mi" if isinstance(workload.gpu_memory, int) else "3Gi or 3072Mi"
        report.error(
            (*path, "gpuMemory"),
            f"gpuMemory {workload.gpu_memory} is less than 1 MiB: a quantity without a unit counts bytes, and "
            "HAMi counts GPU memory in MiB",
            f"give the unit: {unit}",
        )
        return None
    return quantity_mib(workload.gpu_memory)


def capacity_hint(pool: Pool, resource: str) -> str | None:
    """Pods ask for vGPU slots, and for a share of GPU memory and compute."""
    if pool.sharing.strategy != "hami":
        return None
    if resource == RESOURCE_GPU:
        return "add nodes, raise the pool's split, or lower the workloads' replicas"
    return "add nodes, or lower the workloads' replicas or their GPU memory and cores"


def check_pool(cluster: Cluster, pool: Pool, origin: PoolOrigin, strategy_path: PathKey, report: Report) -> None:
    """HAMi's isolation and its documented bypasses (web docs/faq/faq.md, docs/troubleshooting), and the
    overcommit upstream calls experimental (web docs/userguide/configure.md)."""
    if pool.sharing.strategy != "hami":
        return
    where = f"pool {pool.name!r} in cluster {cluster.name!r}"
    report.warn(
        strategy_path,
        f"HAMi on {where} enforces GPU memory and compute limits in software, by intercepting "
        "CUDA calls: they do not hold with CUDA_DISABLE_CONTROL=true, inside Docker-in-Docker, or for programs that "
        "call the GPU driver directly, and compute limits throttle kernel launches, so use fluctuates",
        "use MIG where isolation is a compliance or SLA requirement"
        if pool.gpu.mig_capable
        else "keep CUDA_DISABLE_CONTROL out of the workloads, and size their gpuMemory to what they really use",
    )
    scaling = hami_sharing(pool.sharing).memory_scaling
    if scaling > 1:
        report.warn(
            origin.sharing.get("memoryScaling", strategy_path),
            f"memoryScaling {scaling:g} on {where} hands out more GPU memory "
            "than the GPUs have, which HAMi calls experimental: pods that use what they were given run out of memory",
            "keep memoryScaling at 1 unless the workloads use much less memory than they ask for",
        )


def hami_sharing(sharing: Sharing) -> HamiSharing:
    return sharing.options(HamiSharing)


def node_names(pool: Pool) -> tuple[str, ...]:
    return pool.options(HamiPool).node_names


def workload_shares(workload: Workload) -> HamiWorkload:
    return workload.options(HamiWorkload)


@dataclass(frozen=True, slots=True)
class NodeSettings:
    """What HAMi's device plugin applies on a node: the chart's values, or a per-node entry by name."""

    split: int
    memory_scaling: float

    @property
    def memory_scaling_value(self) -> float | int:
        """memoryScaling as written out: 1, not 1.0."""
        return int(self.memory_scaling) if self.memory_scaling == int(self.memory_scaling) else self.memory_scaling

    def describe(self) -> str:
        scaling = f", memoryScaling {self.memory_scaling:g}" if self.memory_scaling != 1 else ""
        return f"split {self.split}{scaling}"


def node_settings(pool: Pool) -> NodeSettings:
    sharing = hami_sharing(pool.sharing)
    return NodeSettings(sharing.split, sharing.memory_scaling)


def cluster_settings(cluster: Cluster) -> NodeSettings:
    """The chart-wide settings: those of the first pool without ``nodeNames`` (every such pool must agree,
    see :func:`check`), else of the first pool."""
    unnamed = [pool for pool in cluster.pools if not node_names(pool)]
    first = (unnamed or list(cluster.pools))[:1]
    return node_settings(first[0]) if first else NodeSettings(1, 1.0)


def named_pools(cluster: Cluster) -> tuple[Pool, ...]:
    """Pools whose nodes get per-node entries (they name their nodes)."""
    return tuple(pool for pool in cluster.pools if node_names(pool))


def scheduler_policy(cluster: Cluster) -> str | None:
    """The scheduler policy the pools ask for (they must agree, see :func:`check`); None: HAMi's defaults."""
    return next((policy for pool in cluster.pools if (policy := hami_sharing(pool.sharing).policy)), None)


def registered_memory(pool: Pool) -> int | None:
    """GPU memory HAMi hands out per GPU of the pool at most, in MiB (nominal memory x memoryScaling); None when
    the catalog does not know it."""
    memory = gpu_memory_mib(pool.gpu)
    return None if memory is None else int(memory * hami_sharing(pool.sharing).memory_scaling)


def least_memory(registered: int) -> int:
    """The least a GPU may register where the catalog says ``registered`` MiB (see MEMORY_SHORTFALL)."""
    return math.ceil(registered * (1 - MEMORY_SHORTFALL))


def resources_per_gpu(cluster: Cluster, pool: Pool) -> dict[str, int]:
    """vGPU slots, GPU memory (where the catalog knows it) and cores of one physical GPU."""
    resources = {RESOURCE_GPU: hami_sharing(pool.sharing).split}
    memory = registered_memory(pool)
    if memory is not None:
        resources[RESOURCE_MEMORY] = memory
    resources[RESOURCE_CORES] = FULL_CORES
    return resources


def allocatable_per_gpu(cluster: Cluster, pool: Pool) -> dict[str, int]:
    """The device plugin advertises vGPUs only; memory and cores are in the node annotation."""
    return {RESOURCE_GPU: hami_sharing(pool.sharing).split}


def memory_per_gpu(pool: Pool, workload: Workload, registered: int | None = None) -> int | None:
    """MiB of GPU memory one pod takes on each of its GPUs where each registers ``registered`` MiB (default: the
    pool's nominal figure); a share is of what the GPU registers, and HAMi's defaultMemory 0 is all of it."""
    shares = workload_shares(workload)
    if shares.gpu_memory_mib is not None:
        return shares.gpu_memory_mib
    memory = registered_memory(pool) if registered is None else registered
    if memory is None:
        return None
    return memory * (shares.gpu_memory_percent or 100) // 100


def cores_per_gpu(workload: Workload) -> int:
    """Percentage of each GPU's compute one pod takes: as asked; 100 where HAMi makes the pod exclusive
    (no memory limit, or 100 %, and no cores: device.go defaultExclusiveCoreIfNeeded); else 0."""
    shares = workload_shares(workload)
    if shares.gpu_cores is not None:
        return shares.gpu_cores
    whole_memory = shares.gpu_memory_mib is None and shares.gpu_memory_percent in (None, 100)
    return FULL_CORES if whole_memory else 0


def workload_request(cluster: Cluster, workload: Workload) -> dict[str, int]:
    """What one pod takes of its pool: vGPU slots (one per GPU), memory and cores, over all its GPUs."""
    pool = cluster.pool_of(workload)
    request = {RESOURCE_GPU: workload.gpus}
    memory = memory_per_gpu(pool, workload)
    if memory is not None and RESOURCE_MEMORY in resources_per_gpu(cluster, pool):
        request[RESOURCE_MEMORY] = memory * workload.gpus
    request[RESOURCE_CORES] = cores_per_gpu(workload) * workload.gpus
    return request


def workload_limits(cluster: Cluster, workload: Workload) -> dict[str, int]:
    """The pod's limits: physical GPUs, and memory (MiB or a percentage) and cores per GPU as asked."""
    shares = workload_shares(workload)
    limits = {RESOURCE_GPU: workload.gpus}
    if shares.gpu_memory_mib is not None:
        limits[RESOURCE_MEMORY] = shares.gpu_memory_mib
    elif shares.gpu_memory_percent is not None:
        limits[RESOURCE_MEMORY_PERCENTAGE] = shares.gpu_memory_percent
    if shares.gpu_cores is not None:
        limits[RESOURCE_CORES] = shares.gpu_cores
    return limits


def pods_share_request(cluster: Cluster, pool: Pool) -> bool:
    """Each pod gets its own vGPUs."""
    return False


def isolation(cluster: Cluster, pool: Pool) -> str:
    """HAMi's limits, enforced by its CUDA interception; whole GPUs as everywhere (``ISOLATION``)."""
    return ISOLATION_HAMI if pool.sharing.strategy == "hami" else ISOLATION[pool.sharing.strategy]


def check_workload(cluster: Cluster, pool: Pool, workload: Workload, path: PathKey, report: Report) -> bool:
    """A pod's GPUs, and its memory per GPU, against one node of the pool; False when it cannot be counted."""
    if workload.gpus > pool.gpus_per_node:
        report.error(
            (*path, "gpus"),
            f"a pod asks for {workload.gpus} GPUs, but a node of pool {pool.name!r} has {pool.gpus_per_node}: on "
            "HAMi, nvidia.com/gpu in a pod counts physical GPUs, and a pod never gets two vGPUs of one card",
            f"ask for gpus: {pool.gpus_per_node} or fewer; split shares a GPU between pods, not between the GPUs of one pod",
        )
        return False
    shares = workload_shares(workload)
    if shares.gpu_memory_mib is not None and shares.gpu_memory_percent is not None:
        report.error(
            (*path, "gpuMemoryPercent"),
            "gpuMemory and gpuMemoryPercent cannot be given together: HAMi documents that nvidia.com/gpumem and "
            "nvidia.com/gpumem-percentage cannot be assigned together (its scheduler then ignores the percentage)",
            "keep one of them",
        )
        return False
    memory = registered_memory(pool)
    asked = shares.gpu_memory_mib
    if asked is None:
        return True
    if memory is None:
        report.warn(
            (*path, "gpuMemory"),
            f"gpustack-gen does not know how much memory one {pool.gpu.name} has, so gpuMemory of "
            f"{workload.namespace}/{workload.name} is not checked against it",
            "check it against nvidia-smi on one node, or use gpuMemoryPercent",
        )
        return True
    if asked > memory:
        scaling = hami_sharing(pool.sharing).memory_scaling
        scaled = f" x memoryScaling {scaling:g}" if scaling != 1 else " (nominal)"
        report.error(
            (*path, "gpuMemory"),
            f"a pod asks for {asked} MiB of GPU memory per GPU, but one {pool.gpu.name} of pool "
            f"{pool.name!r} has {memory} MiB{scaled}",
            f"ask for at most {memory}Mi, or a share with gpuMemoryPercent",
        )
        return False
    least = least_memory(memory)
    if asked > least:
        report.warn(
            (*path, "gpuMemory"),
            f"a pod asks for {asked} MiB of GPU memory per GPU, more than the {least} MiB one "
            f"{pool.gpu.name} of pool {pool.name!r} may register: HAMi hands out what NVML reports "
            f"({MEMORY_SHORTFALL_WHY}), and on such a GPU the pod stays Pending",
            f"check nvidia-smi --query-gpu=memory.total on a node of the pool, or ask for at most {least}Mi",
        )
    return True


def check(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """What HAMi needs across the cluster: node names where pools differ, one policy, the nvidia RuntimeClass."""
    nri = origin.fields.get("operator.cdi.nriPluginEnabled")
    if cluster.operator.nri_plugin_enabled and nri is not None:
        report.error(
            nri,
            "with the NRI plugin the GPU Operator creates no nvidia RuntimeClass, which HAMi's device plugin and "
            "its workloads need when CDI is the default (GPU Operator v25.10.0 and newer)",
            "turn the NRI plugin off on this cluster (cdi.nriPluginEnabled: false)",
        )
    _check_kubernetes(cluster, origin, report)
    paths = dict(zip((pool.name for pool in cluster.pools), origin.pool_paths, strict=True))
    _check_memory_margin(cluster, origin, report)
    _check_per_gpu_fit(cluster, origin, report)
    _check_node_names(cluster, paths, report)
    _check_shared_settings(cluster, origin, paths, report)
    for pool in cluster.pools:
        for key, value in pool.node_selector:
            if key == NODE_LABEL and value != NODE_LABEL_VALUE:
                report.error(
                    (*paths[pool.name], "nodeSelector", key),
                    f"pool {pool.name!r} selects its nodes by {key}={value}, but HAMi needs {key}={NODE_LABEL_VALUE} "
                    "on every GPU node it manages, which gpustack-gen sets (node-labels.yaml)",
                    "select on a label your node group sets, such as node.kubernetes.io/instance-type or a pool label",
                    key=True,
                )


def _check_kubernetes(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """HAMi needs Kubernetes 1.23 or newer (``Project-HAMi/HAMi@v2.10.0 README.md:100``); its chart's kubeVersion
    ``>= 1.18.0-0`` (``charts/hami/Chart.yaml:26``) does not stop an install on 1.18 to 1.22."""
    running = leading_version(cluster.kubernetes)
    if running is not None and running[:2] < MIN_KUBERNETES:
        report.error(
            origin.fields.get("kubernetes", origin.path),
            f"backend hami needs Kubernetes {MIN_KUBERNETES[0]}.{MIN_KUBERNETES[1]} or newer (cluster {cluster.name!r} "
            f"runs {cluster.kubernetes}), as HAMi's README says; its chart installs from 1.18, and its scheduler "
            "then runs a kube-scheduler it does not support",
            "upgrade the cluster, or keep it on backend gpu-operator",
        )


def _check_memory_margin(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """Workloads whose GPU memory fits a pool's nominal memory, but not the least its GPUs may register: the
    pods past what the nodes register stay Pending. Pools over their nominal memory have their error."""
    for pool in cluster.pools:
        nominal = registered_memory(pool)
        if nominal is None:
            continue
        least = least_memory(nominal)
        workloads = [w for w in cluster.workloads if w.pool == pool.name and w.replicas]
        if any((workload_shares(w).gpu_memory_mib or 0) > least for w in workloads):
            continue  # such a pod has its warning, at its gpuMemory
        at_nominal = at_least = 0
        who: list[str] = []
        past: Workload | None = None
        for workload in workloads:
            pods = workload.gpus * workload.replicas
            at_nominal += (memory_per_gpu(pool, workload) or 0) * pods
            asked = (memory_per_gpu(pool, workload, least) or 0) * pods
            at_least += asked
            who.append(f"{workload.name} {asked}")
            if past is None and at_least > least * pool.physical_gpus:
                past = workload
        if past is not None and at_nominal <= nominal * pool.physical_gpus:
            report.warn(
                origin.workloads[(past.namespace, past.name)],
                f"workloads ask for {at_least} MiB of GPU memory of pool {pool.name!r} ({', '.join(who)}) where its "
                f"GPUs register the least HAMi may see, {least * pool.physical_gpus} MiB ({MEMORY_SHORTFALL_WHY}; "
                f"{nominal * pool.physical_gpus} MiB nominal): {past.name} takes the total past it, and the pods "
                "past what the nodes register stay Pending",
                "check nvidia-smi --query-gpu=memory.total on a node of the pool, and lower the workloads' gpuMemory "
                "or replicas, or add nodes, if it is less than the workloads need",
            )


def _check_per_gpu_fit(cluster: Cluster, origin: ClusterOrigin, report: Report) -> None:
    """Workloads that fit a pool's totals but not GPU by GPU: HAMi places each pod's share of memory, cores and
    one vGPU slot on one GPU (scheduler ``fitInDevices``), so a pool whose pods cannot be packed that way leaves
    some Pending. Packed exclusive pods first, then largest first, first fit, under HAMi's ``Fit`` rules
    (``Project-HAMi/HAMi@v2.10.0 pkg/device/nvidia/device.go:715``): free memory, cores and a slot (``:794-798``);
    a 100-core pod only on a GPU no pod uses (``:799-803``, ExclusiveDeviceAllocateConflict); a pod without cores
    not on a GPU whose cores are all taken (``:805-809``, CardComputeUnitsExhausted). Each 100-core pod holding a GPU
    alone, pods beside them that no GPU is left for are certain to stay Pending: an error. Otherwise a set first
    fit packs fits, and one it cannot is warned about (the packing problem has rare sets first fit misses). Pools
    over their totals have their error."""
    for pool in cluster.pools:
        memory = registered_memory(pool)
        workloads = [w for w in cluster.workloads if w.pool == pool.name and w.replicas]
        if memory is None or not workloads or not pool.physical_gpus:
            continue
        shares = sorted(
            (
                (memory_per_gpu(pool, workload) or 0, cores_per_gpu(workload), index, workload)
                for index, workload in enumerate(workloads)
                for _ in range(workload.gpus * workload.replicas)
            ),
            key=lambda share: (share[1] != FULL_CORES, -share[0], -share[1], share[2]),
        )
        if (
            len(shares) > hami_sharing(pool.sharing).split * pool.physical_gpus
            or sum(s[0] for s in shares) > memory * pool.physical_gpus
        ):
            continue  # over the pool's totals: that error says it
        exclusive = [s for s in shares if s[1] == FULL_CORES]
        if exclusive and len(exclusive) < len(shares) and len(exclusive) >= pool.physical_gpus:
            beside = next(s[3] for s in shares if s[1] != FULL_CORES)
            report.error(
                origin.workloads[(beside.namespace, beside.name)],
                f"pool {pool.name!r} has {pool.physical_gpus} GPU(s) and {len(exclusive)} pod(s) of 100 % of a GPU's "
                f"cores ({', '.join(sorted({s[3].name for s in exclusive}))}), which HAMi places only on a GPU no "
                f"other pod uses: no GPU is left for {beside.name}, whichever comes first (HAMi's Fit: "
                "ExclusiveDeviceAllocateConflict for the 100-core pod on a GPU in use, CardComputeUnitsExhausted for "
                "a pod without cores on a GPU whose cores are taken)",
                "give the 100-core workloads fewer gpuCores (and gpuMemory), or add nodes",
            )
            continue
        free = [[memory, FULL_CORES, hami_sharing(pool.sharing).split, 0] for _ in range(pool.physical_gpus)]
        for asked, cores, _, workload in shares:
            gpu = next((g for g in free if _fits(g, asked, cores)), None)
            if gpu is None:
                report.warn(
                    origin.workloads[(workload.namespace, workload.name)],
                    f"pool {pool.name!r} has the GPU memory and slots for its workloads in total, but not GPU by GPU: "
                    f"a pod of {workload.name} needs {asked} MiB and {cores} % of one GPU's cores, and packed onto "
                    f"{pool.physical_gpus} GPUs of {memory} MiB no GPU has that left (HAMi's Fit refuses a 100-core "
                    "pod on a GPU in use, and a pod without cores on a GPU whose cores are taken); HAMi places each "
                    "pod's share on one GPU, so such pods stay Pending",
                    "lower the workloads' gpuMemory or gpuCores so that they pack onto the GPUs, or add nodes",
                )
                break
            gpu[0] -= asked
            gpu[1] -= cores
            gpu[2] -= 1
            gpu[3] += 1


def _fits(gpu: list[int], memory: int, cores: int) -> bool:
    """HAMi's ``Fit`` for one GPU: [free memory, free cores, free slots, pods on it] against a pod's share."""
    free_memory, free_cores, slots, used = gpu
    if free_memory < memory or free_cores < cores or slots < 1:
        return False
    if cores == FULL_CORES and used > 0:  # ExclusiveDeviceAllocateConflict
        return False
    return not (cores == 0 and free_cores == 0)  # CardComputeUnitsExhausted


def _check_node_names(cluster: Cluster, paths: dict[str, PathKey], report: Report) -> None:
    seen: dict[str, str] = {}
    for pool in named_pools(cluster):
        path = (*paths[pool.name], "nodeNames")
        names = node_names(pool)
        if len(names) != pool.nodes:
            report.error(
                path,
                f"pool {pool.name!r} names {len(names)} nodes but has {pool.nodes}: HAMi applies per-node "
                "settings by node name only, so a node left out would run with the cluster-wide ones",
                f"list all {pool.nodes} node names, or set nodes: {len(names)}",
            )
        for index, name in enumerate(names):
            other = seen.setdefault(name, pool.name)
            if other != pool.name or names.index(name) != index:
                report.error(
                    (*path, index),
                    f"node {name!r} is named twice (also in pool {other!r}): a node belongs to one pool",
                    "remove the duplicate",
                )


def _check_shared_settings(cluster: Cluster, origin: ClusterOrigin, paths: dict[str, PathKey], report: Report) -> None:
    """Pools without node names share the chart's settings; pools share one scheduler policy."""
    wanted = cluster_settings(cluster)
    first = next((pool for pool in cluster.pools if not node_names(pool)), None)
    for pool in cluster.pools:
        pool_origin = origin.pools[pool.name]
        if node_names(pool) or first is None or node_settings(pool) == wanted:
            continue
        where = next(
            (pool_origin.sharing[key] for key in ("split", "memoryScaling", "strategy") if key in pool_origin.sharing),
            pool_origin.sharing_path,
        )
        report.error(
            where,
            f"pool {pool.name!r} ({node_settings(pool).describe()}) needs other HAMi settings than pool {first.name!r} "
            f"({wanted.describe()}): the chart sets one split and memory scaling for the cluster, and per-node "
            "settings match nodes by name only",
            f"list pool {pool.name!r}'s nodes under its nodeNames, or give both pools the same settings",
        )
    policy = scheduler_policy(cluster)
    for pool in cluster.pools:
        asked = hami_sharing(pool.sharing).policy
        if asked is not None and asked != policy:
            owner = next(p.name for p in cluster.pools if hami_sharing(p.sharing).policy == policy)
            report.error(
                origin.pools[pool.name].sharing.get("policy", paths[pool.name]),
                f"pool {pool.name!r} asks for scheduler policy {asked}, pool {owner!r} for {policy}: "
                "HAMi's scheduler has one policy for the cluster",
                "give every pool of the cluster the same policy, or leave it out on all but one",
            )


def device_plugin_version(cluster: Cluster) -> str:
    """The Operator's pinned device plugin."""
    return cluster.operator.release.device_plugin
