"""What a pool offers and a workload asks, per device backend: the fleet's meaning on each one.

A backend is the component that advertises GPUs to the kubelet: the GPU Operator's device plugin
(``gpu-operator``, the default), HAMi, the NVIDIA DRA driver, or the standalone device plugin chart
(``device-plugin``). Each registers a module here with
``NAME``, ``STRATEGIES`` (the sharing strategies its pools may use), ``resources_per_gpu`` (what one
physical GPU of a pool offers), ``allocatable_per_gpu`` (the part of it a node's allocatable shows),
``workload_request`` (what one pod takes of its pool), ``pods_share_request`` (whether a workload's pods
share that request, a DRA ResourceClaim, instead of each taking its own), ``workload_limits`` (what one pod
lists in ``resources.limits``), ``isolation`` (what keeps a pool's pods apart, for capacity.yaml and the
warnings), ``check_workload`` (its rules for one workload; False when the workload cannot be
counted against its pool), ``check`` (its own semantic rules, reported at the fleet file's lines) and
``resolve_options`` (its own cluster settings, :class:`~gpustack_gen.model.fleet.BackendOptions`, which the
cluster holds in ``backend_options`` and the wing reads back with its ``options``),
plus ``OPTIONS`` (the sharing options it reads), ``DEVICE_PLUGIN_LIMITS``, ``EXTENDED_RESOURCES``,
``NODE_LABELLED_CONFIGS`` and ``REDEPLOYS_ON_MOVE`` (see :class:`BackendSemantics`).

What a backend adds to the neutral model it resolves itself, into one slot of each neutral object: a
sharing policy's ``backend_options`` (``resolve_sharing``, from the options of ``SHARING_OPTIONS``; their
own rules in ``check_sharing`` and ``check_pool``), a pool's (``resolve_pool``) and a workload's
(``resolve_workload``, the keys of ``WORKLOAD_OPTIONS``). The wing reads them back with ``options`` of
the object. The compilers of each backend live in :mod:`gpustack_gen.compile`; nothing else branches on
a backend's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..fleet import ISOLATION
from . import device_plugin, dra, gpu_operator, hami

if TYPE_CHECKING:
    from ...yamlio.source import PathKey
    from ..fleet import BackendOptions, Cluster, Pool, PoolOptions, SharingOptions, Workload, WorkloadOptions
    from ..intent import Cluster as ClusterSpec
    from ..intent import NodePool
    from ..intent import Workload as WorkloadSpec
    from ..resolve import ClusterOrigin, PoolOrigin, Report, Setting

DEFAULT_BACKEND = gpu_operator.NAME


class BackendSemantics(Protocol):
    NAME: str
    SUMMARY: str  # "<name> (what it is)", as the fleet schema describes the backend field
    STRATEGY_SUMMARIES: Mapping[str, str]  # strategy of its own -> "<name> (what it is)", for the schema
    STRATEGIES: frozenset[str]
    OPTIONS: frozenset[str]  # the sharing options (fleet keys) it reads; others are warned about
    # The device plugin's own limits apply to its pools: one MIG profile type per node under mig.strategy single,
    # no MPS under mixed, failRequestsGreaterThanOne, and a request for several shared GPUs served by one GPU.
    DEVICE_PLUGIN_LIMITS: bool
    EXTENDED_RESOURCES: bool  # pools advertise extended resources in the node's allocatable (else DRA devices)
    NODE_LABELLED_CONFIGS: bool  # node labels name entries of its ConfigMaps (device-plugin keys, mig-parted configs)
    REDEPLOYS_ON_MOVE: bool  # a move to or from it redeploys the workloads itself, pool by pool (else workload-values)
    # Strategy -> the sharing options of its own under it (beyond the device plugin's, which every backend has).
    SHARING_OPTIONS: Mapping[str, frozenset[str]]
    OPTION_REASONS: Mapping[tuple[str, str], str]  # (option, strategy) -> why it refuses the option there
    WORKLOAD_OPTIONS: Mapping[str, str]  # a workload's fleet keys of its own -> the strategy whose pools give them
    SHARING_EXAMPLES: Mapping[str, str]  # strategy of its own -> a policy of it, for hints
    RANGE_HINTS: Mapping[str, str]  # its own fleet key -> what its bounds mean, for range errors
    RETIRED_REFUSALS: Mapping[str, tuple[str, str]]  # strategy of its own -> why it is no retired config, a hint

    def resources_per_gpu(self, cluster: Cluster, pool: Pool) -> dict[str, int]: ...

    def allocatable_per_gpu(self, cluster: Cluster, pool: Pool) -> dict[str, int]: ...

    def workload_request(self, cluster: Cluster, workload: Workload) -> dict[str, int]: ...

    def workload_limits(self, cluster: Cluster, workload: Workload) -> dict[str, int]: ...

    def pods_share_request(self, cluster: Cluster, pool: Pool) -> bool: ...

    def isolation(self, cluster: Cluster, pool: Pool) -> str: ...

    def check_workload(
        self, cluster: Cluster, pool: Pool, workload: Workload, path: PathKey, report: Report
    ) -> bool: ...

    def check(self, cluster: Cluster, origin: ClusterOrigin, report: Report) -> None: ...

    def resolve_options(self, report: Report, setting: Setting) -> BackendOptions: ...

    def resolve_sharing(self, strategy: str, options: Mapping[str, Any]) -> SharingOptions: ...

    def check_sharing(self, strategy: str, options: Mapping[str, Any], path: PathKey, report: Report) -> None: ...

    def resolve_pool(self, cluster: ClusterSpec, pool: NodePool, path: PathKey, report: Report) -> PoolOptions: ...

    def resolve_workload(self, workload: WorkloadSpec, path: PathKey, report: Report) -> WorkloadOptions: ...

    def check_pool(
        self, cluster: Cluster, pool: Pool, origin: PoolOrigin, strategy_path: PathKey, report: Report
    ) -> None: ...

    def capacity_hint(self, pool: Pool, resource: str) -> str | None: ...  # None: the neutral hint

    # The NVIDIA device plugin release ("v0.17.4") whose config files the cluster's nodes read, for its version gates.
    def device_plugin_version(self, cluster: Cluster) -> str: ...


# Each module is assigned to the protocol itself, so mypy checks its names and signatures against it.
SEMANTICS: Mapping[str, BackendSemantics] = {
    gpu_operator.NAME: gpu_operator,
    hami.NAME: hami,
    dra.NAME: dra,
    device_plugin.NAME: device_plugin,
}


def semantics(name: str) -> BackendSemantics:
    return SEMANTICS[name]


def backends_offering(strategy: str) -> tuple[str, ...]:
    """The backends whose pools may use ``strategy``, for hints."""
    return tuple(name for name, backend in SEMANTICS.items() if strategy in backend.STRATEGIES)


def _merged(tables: list[Mapping[Any, Any]]) -> dict[Any, Any]:
    merged: dict[Any, Any] = {}
    for table in tables:
        merged.update(table)
    return merged


# What the backends add to the sharing policies and workloads of the fleet file, over all of them: a fleet's
# defaults apply to clusters of every backend, so each policy is checked against all of them.
SHARING_OPTIONS: Mapping[str, frozenset[str]] = {
    strategy: frozenset().union(*(b.SHARING_OPTIONS.get(strategy, frozenset()) for b in SEMANTICS.values()))
    for strategy in sorted({s for b in SEMANTICS.values() for s in b.SHARING_OPTIONS})
}
OPTION_REASONS: Mapping[tuple[str, str], str] = _merged([b.OPTION_REASONS for b in SEMANTICS.values()])
WORKLOAD_OPTIONS: Mapping[str, str] = _merged([b.WORKLOAD_OPTIONS for b in SEMANTICS.values()])
SHARING_EXAMPLES: Mapping[str, str] = _merged([b.SHARING_EXAMPLES for b in SEMANTICS.values()])
RANGE_HINTS: Mapping[str, str] = _merged([b.RANGE_HINTS for b in SEMANTICS.values()])
RETIRED_REFUSALS: Mapping[str, tuple[str, str]] = _merged([b.RETIRED_REFUSALS for b in SEMANTICS.values()])
STRATEGIES: frozenset[str] = frozenset().union(*(b.STRATEGIES for b in SEMANTICS.values()))
# The fleet schema's names: the backends in registry order, the device plugin's strategies then the backends' own.
BACKEND_NAMES: tuple[str, ...] = tuple(SEMANTICS)
STRATEGY_NAMES: tuple[str, ...] = (*ISOLATION, *sorted(STRATEGIES - ISOLATION.keys()))
STRATEGY_SUMMARIES: Mapping[str, str] = _merged([b.STRATEGY_SUMMARIES for b in SEMANTICS.values()])


def listing(items: list[str]) -> str:
    """``a, b or c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def check_sharing(strategy: str, options: Mapping[str, Any], path: PathKey, report: Report) -> None:
    """Every backend's rules for the options of a sharing policy (of its own strategies)."""
    for backend in SEMANTICS.values():
        backend.check_sharing(strategy, options, path, report)
