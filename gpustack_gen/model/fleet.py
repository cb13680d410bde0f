"""The resolved fleet: defaults merged, sharing resolved, GPU models looked up, everything checked.

These are what the compilers consume. Every value here is final; nothing downstream merges or guesses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from ..catalog import GpuModel, builtin_mig_config
from ..errors import Problem
from ..versions import parse_version
from ..versions.gpu_operator import OperatorVersion

if TYPE_CHECKING:
    from .backends import BackendSemantics

# The first device plugin that honours an explicit MPS failRequestsGreaterThanOne (older ones force it to true).
MPS_FAIL_REQUESTS_CONFIGURABLE_FROM = (0, 20, 0)

MigLayout = tuple[tuple[str, int], ...]


def mig_profile_sort_key(profile: str) -> tuple[int, str]:
    """Largest profile first: compute slices of the GPU instance descending (``3g.20gb`` -> 3), then the name.

    Read from the name, so that it also orders profiles the catalog does not know. This is the one order of
    MIG layouts: the resolved ``Sharing.mig_layout``, the custom mig-parted config names and their contents.
    """
    head = profile.split("g.", 1)[0].split(".")[-1]
    return (-int(head) if head.isdigit() else 0, profile)


def mps_fail_requests_configurable(device_plugin: str) -> bool:
    """Whether device plugin ``device_plugin`` (``"v0.20.0"``) honours an explicit MPS ``failRequestsGreaterThanOne``.

    v0.20.0 and newer honour it (true when unset); older ones force it to true whatever the config says.
    """
    parsed = parse_version(device_plugin)
    return parsed is not None and parsed >= MPS_FAIL_REQUESTS_CONFIGURABLE_FROM


def canonical_mig_layout(layout: Iterable[tuple[str, int]]) -> MigLayout:
    """A MIG layout in :func:`mig_profile_sort_key` order, so that key order in the file changes nothing."""
    return tuple(sorted(layout, key=lambda item: mig_profile_sort_key(item[0])))


ISOLATION = {
    "none": "whole GPU per pod",
    "time-slicing": "none: pods sharing a GPU share its memory and compute; one pod can run the others out of memory",
    "mps": "none: the MPS server limits each client to 1/replicas of the GPU's memory and compute, but the clients "
    "share one MPS server, so a fatal GPU error in one ends the others",
    "mig": "hardware: each MIG device has its own memory and compute slices",
}

OptionsT = TypeVar("OptionsT")


def _options_as(kind: type[OptionsT], options: object, empty: type, owner: str) -> OptionsT:
    """``options`` as ``kind``: a backend's wing asks for its own, so another backend's is our bug. Empty options
    (the base class: nothing of the backend's own was written) read as ``kind``'s defaults."""
    if isinstance(options, kind):
        return options
    if type(options) is empty:
        return kind()
    raise TypeError(f"{owner} holds {type(options).__name__}, not {kind.__name__}")


@dataclass(frozen=True, slots=True)
class SharingOptions:
    """A backend's own options of a sharing policy (a split, a driver's per-device config): each backend that
    has any subclasses this in its model wing, and reads them with :meth:`Sharing.options`. Empty: none written."""

    def describe(self, strategy: str) -> str | None:
        """How a reader names a policy of the backend's own strategy; None: the neutral wording."""
        return None


@dataclass(frozen=True, slots=True)
class PoolOptions:
    """A backend's own settings of a pool (nodes named one by one), read with :meth:`Pool.options`."""


@dataclass(frozen=True, slots=True)
class WorkloadOptions:
    """A backend's own settings of a workload (a share of GPU memory and compute), read with :meth:`Workload.options`."""


SharingOptionsT = TypeVar("SharingOptionsT", bound=SharingOptions)
PoolOptionsT = TypeVar("PoolOptionsT", bound=PoolOptions)
WorkloadOptionsT = TypeVar("WorkloadOptionsT", bound=WorkloadOptions)


@dataclass(frozen=True, slots=True)
class Sharing:
    strategy: str  # none | time-slicing | mps | mig, or one of a backend's own (model/backends)
    replicas: int = 1
    rename_by_default: bool = False
    fail_requests_greater_than_one: bool = False
    mig_layout: MigLayout = ()  # custom per-GPU layout, largest profile first (canonical_mig_layout)
    mig_config: str | None = None  # a built-in mig-parted config name, when named instead of a layout
    backend_options: SharingOptions = SharingOptions()  # the cluster's backend's own, as its model wing resolved them

    @property
    def is_shared(self) -> bool:
        return self.strategy in ("time-slicing", "mps")

    def options(self, kind: type[SharingOptionsT]) -> SharingOptionsT:
        """The policy's backend options as ``kind`` (its defaults where none were written)."""
        return _options_as(kind, self.backend_options, SharingOptions, f"a {self.strategy} policy")

    def describe(self) -> str:
        """``time-slicing, 4 per GPU``: how a reader names the policy in messages and file notes."""
        if self.strategy == "none":
            return "whole GPUs"
        if self.strategy == "mig":
            if self.mig_config:
                return f"MIG {self.mig_config}"
            return "MIG " + ", ".join(name if count == 1 else f"{name} x{count}" for name, count in self.mig_layout)
        own = self.backend_options.describe(self.strategy)
        if own is not None:
            return own
        text = f"{'MPS' if self.strategy == 'mps' else self.strategy}, {self.replicas} per GPU"
        if self.rename_by_default:
            text += " as nvidia.com/gpu.shared"
        return text


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str | None
    effect: str

    @property
    def text(self) -> str:
        """``key=value:effect`` (``key:effect`` without a value), as ``kubectl taint`` writes it."""
        return f"{self.key}{'' if self.value is None else '=' + self.value}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Drain:
    """How the plan drains a pool: batches of ``max_unavailable`` nodes, each with a ``kubectl drain --timeout``."""

    max_unavailable: int = 1
    timeout_minutes: int = 15
    delete_pods_without_controller: bool = False


@dataclass(frozen=True, slots=True)
class Pool:
    name: str
    gpu: GpuModel
    nodes: int
    gpus_per_node: int
    node_selector: tuple[tuple[str, str], ...]
    taints: tuple[Taint, ...]
    sharing: Sharing
    drain: Drain = Drain()
    backend_options: PoolOptions = PoolOptions()  # the cluster's backend's own, as its model wing resolved them

    def options(self, kind: type[PoolOptionsT]) -> PoolOptionsT:
        """The pool's backend options as ``kind`` (its defaults where none were written)."""
        return _options_as(kind, self.backend_options, PoolOptions, f"pool {self.name!r}")

    @property
    def physical_gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def mig_devices(self) -> MigLayout:
        """The MIG instances on each GPU of the pool (empty when MIG is not used)."""
        if self.sharing.strategy != "mig":
            return ()
        if self.sharing.mig_layout:
            return self.sharing.mig_layout
        entry = builtin_mig_config(self.gpu, self.sharing.mig_config or "")
        return entry.mig_devices if entry is not None else ()


@dataclass(frozen=True, slots=True)
class HelmRelease:
    """The Helm release that deploys a workload; paths are relative to the fleet file."""

    release: str
    chart: str
    version: str | None = None
    values_files: tuple[str, ...] = ()


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
    helm: HelmRelease | None = None
    backend_options: WorkloadOptions = WorkloadOptions()  # the cluster's backend's own, as its model wing resolved them

    def options(self, kind: type[WorkloadOptionsT]) -> WorkloadOptionsT:
        """The workload's backend options as ``kind`` (its defaults where none were written)."""
        return _options_as(kind, self.backend_options, WorkloadOptions, f"workload {self.namespace}/{self.name}")

    @property
    def file_stem(self) -> str:
        return f"{self.namespace}.{self.name}"


@dataclass(frozen=True, slots=True)
class DriverUpgrade:
    """``driver.upgradePolicy`` as gpustack-gen renders it (``autoUpgrade`` stays on)."""

    max_parallel_upgrades: int = 1
    delete_empty_dir: bool = True
    force: bool = False


@dataclass(frozen=True, slots=True)
class AdoptedConfigMaps:
    """The ConfigMaps the running Operator reads before the first rollout switches it to gpustack-gen's."""

    device_plugin_config: str | None = None
    mig_config: str | None = None


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
    install: str = "helm"  # helm | external (installed by something else: only its ClusterPolicy is patched)
    values_files: tuple[str, ...] = ()  # the user's own values for the release, relative to the fleet file
    driver_upgrade: DriverUpgrade = DriverUpgrade()
    adopt_from: AdoptedConfigMaps | None = None  # set: the cluster's first rollout takes over a running Operator

    @property
    def mps_fail_requests_configurable(self) -> bool:
        """The pinned device plugin honours an explicit MPS ``failRequestsGreaterThanOne`` (v0.20.0 and newer)."""
        return mps_fail_requests_configurable(self.release.device_plugin)


@dataclass(frozen=True, slots=True)
class BackendOptions:
    """A backend's own cluster settings (the chart it installs, ...): each backend that has any subclasses this in
    its model wing (:mod:`.backends`) and reads them with :meth:`Cluster.options`. A backend without any keeps
    this empty one."""


ClusterOptionsT = TypeVar("ClusterOptionsT", bound=BackendOptions)


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


DEFAULT_ALERTS_NAMESPACE = "monitoring"


@dataclass(frozen=True, slots=True)
class Alerts:
    """The cluster's PrometheusRule (alerts.yaml), written when ``enabled``."""

    enabled: bool = False
    namespace: str = DEFAULT_ALERTS_NAMESPACE
    rule_labels: tuple[tuple[str, str], ...] = ()  # of the PrometheusRule object (Prometheus' ruleSelector)
    node_at_zero_for: str = "10m"  # a Prometheus duration
    gpu_memory_percent: int = 90
    fleet_file: str = "fleet.yaml"  # as the verify command in the annotations names it


@dataclass(frozen=True, slots=True)
class RetiredMigConfig:
    """A MIG config the mig-parted ConfigMap keeps for nodes still labelled with it."""

    gpu: GpuModel
    sharing: Sharing  # strategy mig, with a layout or a built-in config


@dataclass(frozen=True, slots=True)
class Retired:
    """Configs kept after the fleet stopped using them, until no node carries their label (see ``plan``)."""

    device_plugin_configs: tuple[tuple[str, Sharing], ...] = ()  # ConfigMap key -> the policy it held
    mig_configs: tuple[RetiredMigConfig, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.device_plugin_configs or self.mig_configs)


# The device-plugin ConfigMap key of GPU nodes without the nvidia.com/device-plugin.config label
# (devicePlugin.config.default); NVIDIA's time-slicing documentation names it "any". Pools are keyed by name.
DEFAULT_DEVICE_PLUGIN_KEY = "any"
DEFAULT_SHARING_AUTO = "auto"
DEFAULT_SHARING_NONE = "none"


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    kube_context: str  # the kubeconfig context every printed command names
    kubernetes: str
    container_runtime: str
    mig_strategy: str  # single | mixed
    operator: OperatorConfig
    pools: tuple[Pool, ...]
    workloads: tuple[Workload, ...]
    # What pools offer and workloads ask on the cluster's backend: its row of the model registry, which resolving
    # looked up (the registry imports this module, so the model hands it over instead of importing it back).
    semantics: BackendSemantics = field(repr=False, compare=False)
    delivery: Delivery = Delivery()
    default_sharing: str = DEFAULT_SHARING_AUTO  # auto | none | a pool name: what nodes without the label get
    retired: Retired = Retired()
    backend: str = "gpu-operator"  # what advertises the GPUs: a name of the model's registry (model/backends)
    container_runtime_version: str | None = None  # of the runtime on the GPU nodes; None: not stated
    backend_options: BackendOptions = BackendOptions()  # the backend's own settings, as its model wing resolved them
    node_group_provider: str | None = None  # karpenter | eksctl | gke | aks | cluster-api: node-groups/ fragments
    alerts: Alerts = Alerts()

    def __post_init__(self) -> None:
        assert self.backend == self.semantics.NAME, (
            f"cluster {self.name!r} on {self.backend} with {self.semantics.NAME}"
        )

    def pool(self, name: str) -> Pool | None:
        return next((p for p in self.pools if p.name == name), None)

    def pool_of(self, workload: Workload) -> Pool:
        """The pool ``workload`` runs on; it exists, as loading the fleet checked."""
        pool = self.pool(workload.pool)
        assert pool is not None, f"workload {workload.name!r} names no pool of cluster {self.name!r}"
        return pool

    def options(self, kind: type[ClusterOptionsT]) -> ClusterOptionsT:
        """The cluster's backend options as ``kind`` (a backend's own :class:`BackendOptions`); the backend's wing
        asks for its own, so a mismatch is our bug."""
        options = self.backend_options
        if not isinstance(options, kind):
            raise TypeError(f"cluster {self.name!r} on backend {self.backend} holds no {kind.__name__}")
        return options

    @property
    def device_plugin_version(self) -> str:
        """The NVIDIA device plugin release whose config files the nodes read (``"v0.17.4"``): the Operator's or the
        standalone chart's, as the backend says."""
        return self.semantics.device_plugin_version(self)

    @property
    def mps_fail_requests_configurable(self) -> bool:
        """That plugin honours an explicit MPS ``failRequestsGreaterThanOne`` (v0.20.0 and newer)."""
        return mps_fail_requests_configurable(self.device_plugin_version)

    def resources_per_gpu(self, pool: Pool) -> dict[str, int]:
        """Extended resources one physical GPU of ``pool`` advertises to the kubelet."""
        return self.semantics.resources_per_gpu(self, pool)

    def resources_per_node(self, pool: Pool) -> dict[str, int]:
        return {k: v * pool.gpus_per_node for k, v in self.resources_per_gpu(pool).items()}

    def allocatable_per_node(self, pool: Pool) -> dict[str, int]:
        """What the kubelet shows in a node's allocatable for ``pool``: part of :meth:`resources_per_node`
        where a backend accounts for more than its device plugin advertises (memory and compute it schedules)."""
        return {k: v * pool.gpus_per_node for k, v in self.semantics.allocatable_per_gpu(self, pool).items()}

    def resources_total(self, pool: Pool) -> dict[str, int]:
        return {k: v * pool.nodes for k, v in self.resources_per_node(pool).items()}

    def workload_request(self, workload: Workload) -> dict[str, int]:
        """What one pod of ``workload`` takes of its pool's resources (:meth:`resources_per_node`)."""
        return self.semantics.workload_request(self, workload)

    def workload_total(self, workload: Workload) -> dict[str, int]:
        """What all the pods of ``workload`` take together: one request each, or one they share (a claim)."""
        pool = self.pool_of(workload)
        pods = 1 if self.semantics.pods_share_request(self, pool) else workload.replicas
        return {resource: count * pods for resource, count in self.workload_request(workload).items()}

    def workload_limits(self, workload: Workload) -> dict[str, int]:
        """The extended resources one pod of ``workload`` lists in ``resources.limits``."""
        return self.semantics.workload_limits(self, workload)

    def requested_by_pool(self, workloads: Iterable[Workload] | None = None) -> dict[str, dict[str, int]]:
        """Pool name -> resource -> what ``workloads`` (default: all of the cluster's) ask for (:meth:`workload_total`).

        Pools and resources appear in the order the workloads name them; pools nobody asks for are absent.
        """
        asked: dict[str, dict[str, int]] = {}
        for workload in self.workloads if workloads is None else workloads:
            pool = asked.setdefault(workload.pool, {})
            for resource, count in self.workload_total(workload).items():
                pool[resource] = pool.get(resource, 0) + count
        return asked


@dataclass(frozen=True, slots=True)
class Fleet:
    """A validated fleet, ready to render."""

    source: str  # how the fleet file is named in headers and messages
    clusters: tuple[Cluster, ...]
    warnings: tuple[Problem, ...] = ()

    def cluster(self, name: str) -> Cluster | None:
        return next((c for c in self.clusters if c.name == name), None)
