"""HAMi on top of the GPU Operator: the Operator keeps the driver and toolkit, HAMi advertises the GPUs.

Both device plugins advertise ``nvidia.com/gpu`` and "must not run on the same nodes", so the Operator's
is turned off (``devicePlugin.enabled: false``; web docs/troubleshooting/troubleshooting.md). The patch
also drops the device-plugin and mig-parted ConfigMaps a gpu-operator backend named: GFD would otherwise
keep mounting a ConfigMap nothing renders any more. HAMi's own settings are ``hami-values.yaml``.
"""

from __future__ import annotations

from typing import Any

from ....model.backends.hami import (
    MEMORY_SHORTFALL,
    NAME,
    cores_per_gpu,
    hami_options,
    hami_sharing,
    least_memory,
    memory_per_gpu,
    node_settings,
    registered_memory,
)
from ....model.fleet import Cluster, Pool, Workload
from ...artifact import Artifact
from ...pod_spec import limits_values as workload_values
from ...releases import ChartRelease
from .nodes import node_labels, pool_labels
from .values import DEVICE_PLUGIN_DAEMONSET, RUNTIME_CLASS, hami_release, needs_runtime_class, values_artifact

__all__ = [
    "INSTALLS_OPERATOR",
    "NAME",
    "capacity_details",
    "files",
    "namespace",
    "objects",
    "operator_values",
    "patch_only",
    "plugin_daemonset",
    "pool_labels",
    "releases",
    "workload_notes",
    "workload_values",
]

# web docs/faq/faq.md "How does HAMi enforce GPU memory and compute limits?" and "Why is my
# nvidia.com/gpumem limit not enforced?"; docs/troubleshooting/troubleshooting.md.
ENFORCEMENT = (
    "HAMi-core (libvgpu.so, loaded through /etc/ld.so.preload) intercepts CUDA and NVML calls: an allocation past "
    "the pod's GPU memory fails with CUDA_ERROR_OUT_OF_MEMORY, and kernel launches are throttled to its cores, so "
    "use fluctuates around the limit. Software isolation: memory and compute are soft limits, noise between "
    "tenants best-effort (MIG partitions in hardware)."
)
BYPASSES = (
    "CUDA_DISABLE_CONTROL=true in a container turns HAMi-core off for it",
    "Docker-in-Docker: inner containers do not inherit /etc/ld.so.preload",
    "programs that call the GPU driver (NVML, the CUDA driver API) directly, past libvgpu.so",
    "a pod that does not run with the nvidia container runtime",
)
MEMORY_LEGEND = (
    "gpuMemoryPerGpuMiB: the catalog's nominal memory x memoryScaling; HAMi registers what NVML reports (the node "
    "annotation hami.io/node-nvidia-register has it), which ECC and the driver's reserve make up to "
    f"{MEMORY_SHORTFALL * 100:g} % less: gpuMemoryPerGpuAtLeastMiB; workloads that need more than that are warned about"
)
CORES_LEGEND = (
    "coresPerGpu: percent of each GPU's compute the scheduler sets aside for the pod and HAMi-core holds it to; "
    "0 sets none aside and does not limit it"
)


def operator_values(cluster: Cluster) -> dict[str, Any]:
    return {"devicePlugin": {"enabled": False}}


def patch_only(cluster: Cluster) -> dict[str, Any]:
    return {"devicePlugin": {"config": None}, "migManager": {"config": {"name": None}}}


def objects(cluster: Cluster) -> list[Artifact]:
    """HAMi's ConfigMaps come with its chart (from the values)."""
    return []


def files(cluster: Cluster) -> list[Artifact]:
    return [values_artifact(cluster), node_labels(cluster)]


def releases(cluster: Cluster) -> tuple[ChartRelease, ...]:
    return (hami_release(cluster),)


def plugin_daemonset(cluster: Cluster) -> tuple[str, str]:
    """HAMi's device plugin, in its release's namespace."""
    return hami_options(cluster).namespace, DEVICE_PLUGIN_DAEMONSET.removeprefix("daemonset/")


def workload_notes(cluster: Cluster, workload: Workload) -> tuple[str, ...]:
    pool = cluster.pool_of(workload)
    memory = memory_per_gpu(pool, workload)
    cores = cores_per_gpu(workload)
    shown_memory = f"{memory} MiB" if memory is not None else "its share"
    notes = [
        f"HAMi: per GPU the pod gets {shown_memory} of GPU memory and "
        + (f"{cores}% of the compute" if cores else "the compute the other pods leave")
        + ", enforced by HAMi-core in the container.",
        "HAMi's admission webhook sets schedulerName: hami-scheduler"
        + (f" and runtimeClassName: {RUNTIME_CLASS}" if needs_runtime_class(cluster) else "")
        + " on the pod, and refuses privileged containers.",
    ]
    return tuple(notes)


def capacity_details(cluster: Cluster, pool: Pool) -> dict[str, Any]:
    """What capacity.yaml says of a HAMi pool beyond the counts: its settings, each workload's guarantee, and
    how (and how far) HAMi enforces it."""
    settings = node_settings(pool)
    sharing: dict[str, Any] = {"strategy": pool.sharing.strategy, "split": settings.split}
    sharing["memoryScaling"] = settings.memory_scaling_value
    policy = hami_sharing(pool.sharing).policy
    if policy is not None:
        sharing["policy"] = policy
    memory = registered_memory(pool)
    guarantees = [
        {
            "workload": f"{w.namespace}/{w.name}",
            "gpus": w.gpus,
            "memoryPerGpuMiB": memory_per_gpu(pool, w),
            "coresPerGpu": cores_per_gpu(w),
        }
        for w in cluster.workloads
        if w.pool == pool.name
    ]
    return {
        "sharing": sharing,
        "gpuMemoryPerGpuMiB": memory,
        "gpuMemoryPerGpuAtLeastMiB": None if memory is None else least_memory(memory),
        "guarantees": guarantees,
        "guaranteeNotes": [MEMORY_LEGEND, CORES_LEGEND],
        "enforcement": ENFORCEMENT,
        "notEnforced": list(BYPASSES),
    }


INSTALLS_OPERATOR = True


def namespace(cluster: Cluster) -> str:
    """The Operator's: its ConfigMaps live there."""
    return cluster.operator.namespace
