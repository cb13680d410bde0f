"""The NVIDIA device plugin's resources, which the GPU Operator's plugin and the standalone chart's both advertise.

Resource names follow k8s-device-plugin: ``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` under
``renameByDefault`` (api/config/v1/replicas.go), and ``nvidia.com/mig-<profile>`` under the mixed MIG
strategy (internal/rm/rm.go); under ``single`` every MIG device is ``nvidia.com/gpu``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..fleet import ISOLATION, PoolOptions, SharingOptions, WorkloadOptions

if TYPE_CHECKING:
    from ...yamlio.source import PathKey
    from ..fleet import Cluster, Pool, Workload
    from ..intent import Cluster as ClusterSpec
    from ..intent import NodePool
    from ..intent import Workload as WorkloadSpec
    from ..resolve import Report

RESOURCE_GPU = "nvidia.com/gpu"
RESOURCE_GPU_SHARED = "nvidia.com/gpu.shared"


def resources_per_gpu(cluster: Cluster, pool: Pool) -> dict[str, int]:
    """Extended resources one physical GPU of the pool advertises to the kubelet."""
    sharing = pool.sharing
    if sharing.strategy == "mig":
        devices = pool.mig_devices()
        if cluster.mig_strategy == "single":
            return {RESOURCE_GPU: sum(count for _, count in devices)}
        result: dict[str, int] = {}
        for profile_name, count in devices:
            resource = mig_resource(pool, profile_name)
            result[resource] = result.get(resource, 0) + count
        return result
    if sharing.is_shared:
        name = RESOURCE_GPU_SHARED if sharing.rename_by_default else RESOURCE_GPU
        return {name: sharing.replicas}
    return {RESOURCE_GPU: 1}


def allocatable_per_gpu(cluster: Cluster, pool: Pool) -> dict[str, int]:
    """The device plugin advertises all of it."""
    return resources_per_gpu(cluster, pool)


def mig_resource(pool: Pool, profile_name: str) -> str:
    """The mixed-strategy resource of one of the pool's MIG profiles (``nvidia.com/mig-3g.20gb``)."""
    profile = pool.gpu.profile(profile_name)
    # The checks refuse a profile the GPU model lacks, so a loaded fleet never gets here with one.
    assert profile is not None, f"{pool.gpu.name} has no MIG profile {profile_name!r}"
    return profile.resource_name


def workload_request(cluster: Cluster, workload: Workload) -> dict[str, int]:
    """The extended resource and count one pod of ``workload`` asks for."""
    pool = cluster.pool_of(workload)
    if pool.sharing.strategy == "mig" and cluster.mig_strategy == "mixed":
        return {mig_resource(pool, workload.mig_profile or pool.mig_devices()[0][0]): workload.gpus}
    return {next(iter(resources_per_gpu(cluster, pool))): workload.gpus}


def workload_limits(cluster: Cluster, workload: Workload) -> dict[str, int]:
    """A pod lists what it takes."""
    return workload_request(cluster, workload)


def pods_share_request(cluster: Cluster, pool: Pool) -> bool:
    """Each pod gets its own replicas or devices."""
    return False


def isolation(cluster: Cluster, pool: Pool) -> str:
    """The device plugin's MPS replicas each get 1/replicas of the memory and compute (``ISOLATION``)."""
    return ISOLATION[pool.sharing.strategy]


# The rows both plugins share: nothing of their own beyond the device plugin's options, which every backend has.


def resolve_sharing(strategy: str, options: Mapping[str, Any]) -> SharingOptions:
    return SharingOptions()


def check_sharing(strategy: str, options: Mapping[str, Any], path: PathKey, report: Report) -> None:
    """The device plugin's options are checked with every strategy's (model/resolve.py)."""


def resolve_pool_of(backend: str, cluster: ClusterSpec, pool: NodePool, path: PathKey, report: Report) -> PoolOptions:
    """``backend``'s ``resolve_pool``: node names it never uses, as the plugin finds a node's config by its labels."""
    if pool.node_names:
        report.warn(
            (*path, "nodeNames"),
            f"nodeNames of pool {pool.name!r} in cluster {cluster.name!r} have no effect on backend {backend}: "
            "its device plugin finds a node's config by the node's labels",
            "remove nodeNames; only a HAMi backend matches per-node settings by node name",
            key=True,
        )
    return PoolOptions()


def resolve_workload(workload: WorkloadSpec, path: PathKey, report: Report) -> WorkloadOptions:
    return WorkloadOptions()


def capacity_hint(pool: Pool, resource: str) -> str | None:
    return None


def check_workload(cluster: Cluster, pool: Pool, workload: Workload, path: PathKey, report: Report) -> bool:
    """The device plugin's workload rules are checked with the workloads (model/checks.py): nothing more here."""
    return True
