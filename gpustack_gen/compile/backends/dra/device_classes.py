"""The DeviceClasses of a cluster on backend dra: one per pool and kind of device, with the pool's sharing.

A class selects the driver's devices by the attributes it publishes (``cmd/gpu-kubelet-plugin/deviceinfo.go``,
``partitions.go``): ``type`` (``gpu`` or ``mig``), ``productName`` (the NVML name of the GPU, or of a MIG
device's parent) and a MIG device's ``profile``. The chart's own classes (``gpu.nvidia.com``,
``mig.nvidia.com``) match every GPU; these match the pool's model, so a workload's claim can only be
served by the GPUs it was sized for. A pod still lands on its pool's nodes by the nodeSelector of its
fragment: two pools of one model differ by their nodes, not by their devices.

Time-slicing and MPS go in the class's config (``DeviceClassConfiguration``), which Kubernetes copies into a
claim's allocation when it allocates the claim, and the driver applies when it prepares the device. A claim
keeps that copy as long as it stays allocated, and a shared claim stays allocated while any pod uses it: so the
shared claims name a digest of this config, and a change gives each workload a new claim (``claims.py``).
"""

from __future__ import annotations

from typing import Any

from ....model.backends.dra import class_attributes, dra_sharing, pool_classes, resource_api_version, thread_percentage
from ....model.backends.dra import gpu_config as dra_gpu_config
from ....model.fleet import Cluster, Pool, Sharing
from ...artifact import MANAGED_BY

_ATTRIBUTE = "device.attributes['gpu.nvidia.com']"


def device_classes(cluster: Cluster) -> list[dict[str, Any]]:
    api_version = resource_api_version(cluster.kubernetes)
    return [
        _device_class(api_version, name, _selector(pool, profile), None if profile else gpu_config(pool.sharing))
        for pool in cluster.pools
        for name, profile in pool_classes(pool).items()
    ]


def _device_class(api_version: str, name: str, expression: str, config: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if config is not None:
        spec["config"] = [{"opaque": {"driver": dra_gpu_config.DRIVER, "parameters": config}}]
    return {
        "apiVersion": api_version,
        "kind": "DeviceClass",
        "metadata": {"name": name, "labels": dict(MANAGED_BY)},
        "spec": spec,
    }


def _selector(pool: Pool, profile: str | None) -> str:
    """CEL: the driver's devices of the pool's GPU model (and MIG profile), by the attributes they publish."""
    terms = [f"device.driver == '{dra_gpu_config.DRIVER}'"]
    for name, values in class_attributes(pool, profile).items():
        quoted = [f"'{value}'" for value in values]
        terms.append(f"{_ATTRIBUTE}.{name} " + (f"== {quoted[0]}" if len(quoted) == 1 else f"in [{', '.join(quoted)}]"))
    return " && ".join(terms)


def gpu_config(sharing: Sharing) -> dict[str, Any] | None:
    """The opaque GpuConfig of a shared pool's class; None for whole GPUs. MPS clients get
    :func:`~gpustack_gen.model.backends.dra.thread_percentage` of the threads."""
    own = dra_sharing(sharing)
    if sharing.strategy == "time-slicing":
        shared: dict[str, Any] = {
            "strategy": dra_gpu_config.TIME_SLICING,
            "timeSlicingConfig": {"interval": own.interval or dra_gpu_config.INTERVALS[0]},
        }
    elif sharing.strategy == "mps":
        mps: dict[str, Any] = {"defaultActiveThreadPercentage": thread_percentage(sharing)}
        if own.pinned_memory_limit is not None:
            mps["defaultPinnedDeviceMemoryLimit"] = own.pinned_memory_limit
        shared = {"strategy": dra_gpu_config.MPS, "mpsConfig": mps}
    else:
        return None
    return {"apiVersion": dra_gpu_config.API_VERSION, "kind": dra_gpu_config.GPU_CONFIG, "sharing": shared}
