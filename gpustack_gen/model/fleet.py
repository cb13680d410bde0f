"""The resolved fleet: defaults merged, sharing resolved, GPU models looked up, everything checked.

These are what the compilers consume. Every value here is final; nothing downstream merges or guesses.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog import GpuModel, builtin_mig_config
from ..errors import Problem
from ..versions import OperatorVersion

RESOURCE_GPU = "nvidia.com/gpu"
RESOURCE_GPU_SHARED = "nvidia.com/gpu.shared"

ISOLATION = {
    "none": "whole GPU per pod",
    "time-slicing": "none: pods sharing a GPU share its memory and compute; one pod can run the others out of memory",
    "mps": "none for memory: MPS clients share the GPU's memory (each gets 1/replicas of compute)",
    "mig": "hardware: each MIG device has its own memory and compute slices",
}


@dataclass(frozen=True, slots=True)
class Sharing:
    strategy: str  # none | time-slicing | mps | mig
    replicas: int = 1
    rename_by_default: bool = False
    fail_requests_greater_than_one: bool = False
    mig_layout: tuple[tuple[str, int], ...] = ()  # custom per-GPU layout, in the user's order
    mig_config: str | None = None  # a built-in mig-parted config name, when named instead of a layout

    @property
    def is_shared(self) -> bool:
        return self.strategy in ("time-slicing", "mps")


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str | None
    effect: str


@dataclass(frozen=True, slots=True)
class Pool:
    name: str
    gpu: GpuModel
    nodes: int
    gpus_per_node: int
    node_selector: tuple[tuple[str, str], ...]
    taints: tuple[Taint, ...]
    sharing: Sharing

    @property
    def physical_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def mig_devices(self) -> tuple[tuple[str, int], ...]:
        """The MIG instances on each GPU of the pool (empty when MIG is not used)."""
        if self.sharing.strategy != "mig":
            return ()
        if self.sharing.mig_layout:
            return self.sharing.mig_layout
        entry = builtin_mig_config(self.gpu, self.sharing.mig_config or "")
        return entry.mig_devices if entry is not None else ()

    def mig_config_name(self, custom_names: dict[tuple[tuple[str, int], ...], str]) -> str | None:
        """Value of the ``nvidia.com/mig.config`` label for the pool's nodes (None on GPUs without MIG)."""
        if not self.gpu.mig_capable:
            return None
        if self.sharing.strategy != "mig":
            return "all-disabled"
        if self.sharing.mig_layout:
            return custom_names[self.sharing.mig_layout]
        return self.sharing.mig_config

    def resources_per_gpu(self, mig_strategy: str) -> dict[str, int]:
        """Extended resources one physical GPU of the pool advertises to the kubelet."""
        sharing = self.sharing
        if sharing.strategy == "mig":
            devices = self.mig_devices()
            if mig_strategy == "single":
                return {RESOURCE_GPU: sum(count for _, count in devices)}
            result: dict[str, int] = {}
            for profile_name, count in devices:
                profile = self.gpu.profile(profile_name)
                resource = profile.resource_name if profile else f"nvidia.com/mig-{profile_name.replace('+', '.')}"
                result[resource] = result.get(resource, 0) + count
            return result
        if sharing.is_shared:
            name = RESOURCE_GPU_SHARED if sharing.rename_by_default else RESOURCE_GPU
            return {name: sharing.replicas}
        return {RESOURCE_GPU: 1}

    def resources_per_node(self, mig_strategy: str) -> dict[str, int]:
        return {k: v * self.gpus_per_node for k, v in self.resources_per_gpu(mig_strategy).items()}

    def resources_total(self, mig_strategy: str) -> dict[str, int]:
        return {k: v * self.nodes for k, v in self.resources_per_node(mig_strategy).items()}


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    namespace: str
    pool: str
    gpus: int
    replicas: int
    mig_profile: str | None
    cpu: str | None
    memory: str | None

    @property
    def file_stem(self) -> str:
        return f"{self.namespace}.{self.name}"


@dataclass(frozen=True, slots=True)
class OperatorConfig:
    release: OperatorVersion
    namespace: str
    cdi_enabled: bool
    cdi_default: bool | None  # None where the chart version has no such key
    nri_plugin_enabled: bool | None  # None where the chart version has no such key
    driver_enabled: bool
    driver_version: str | None
    toolkit_enabled: bool


WRAP_TARGETS = ("argocd", "flux", "helmfile")
ARGOCD_IN_CLUSTER = "https://kubernetes.default.svc"


@dataclass(frozen=True, slots=True)
class ArgoCdDelivery:
    project: str = "default"
    namespace: str = "argocd"  # of the Application object
    server: str | None = ARGOCD_IN_CLUSTER  # exactly one of server and name is set
    name: str | None = None
    automated: bool = False
    prune: bool = False
    self_heal: bool = False


@dataclass(frozen=True, slots=True)
class FluxDelivery:
    namespace: str = "flux-system"
    interval: str = "1h"
    source: str = "helm"  # helm | oci
    url: str | None = None  # None: NVIDIA's Helm repository (source helm only)
    release_name: str = "gpu-operator"


@dataclass(frozen=True, slots=True)
class Delivery:
    wrap: tuple[str, ...] = ()  # a subset of WRAP_TARGETS, in that order
    argocd: ArgoCdDelivery = ArgoCdDelivery()
    flux: FluxDelivery = FluxDelivery()


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    kubernetes: str
    container_runtime: str
    mig_strategy: str  # single | mixed
    operator: OperatorConfig
    pools: tuple[Pool, ...]
    workloads: tuple[Workload, ...]
    delivery: Delivery = Delivery()

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)

    def workload_resource(self, workload: Workload) -> tuple[str, int]:
        """The extended resource and count one pod of ``workload`` asks for."""
        pool = self.pool(workload.pool)
        assert pool is not None  # checked when the fleet was loaded
        if pool.sharing.strategy == "mig" and self.mig_strategy == "mixed":
            profile = workload.mig_profile or pool.mig_devices()[0][0]
            gpu_profile = pool.gpu.profile(profile)
            resource = gpu_profile.resource_name if gpu_profile else f"nvidia.com/mig-{profile.replace('+', '.')}"
            return resource, workload.gpus
        return next(iter(pool.resources_per_gpu(self.mig_strategy))), workload.gpus


@dataclass(frozen=True, slots=True)
class Fleet:
    """A validated fleet, ready to render."""

    source: str  # how the fleet file is named in headers and messages
    clusters: tuple[Cluster, ...]
    warnings: tuple[Problem, ...] = ()

    def cluster(self, name: str) -> Cluster | None:
        return next((c for c in self.clusters if c.name == name), None)
