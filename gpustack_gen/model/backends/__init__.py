"""What a pool offers and a workload asks, per device backend: the fleet's meaning on each one.

A backend is the component that advertises GPUs to the kubelet: the GPU Operator's device plugin
(``gpu-operator``, the default), HAMi, or the NVIDIA DRA driver. Each registers a module here with
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
``NODE_LABELLED_CONFIGS`` and ``REDEPLOYS_ON_MOVE`` (see :class:`BackendSemantics`). The compilers of each backend live in :mod:`gpustack_gen.compile`; nothing else
branches on a backend's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from . import dra, gpu_operator, hami

if TYPE_CHECKING:
    from ...yamlio.source import PathKey
    from ..fleet import BackendOptions, Cluster, Pool, Workload
    from ..resolve import ClusterOrigin, Report, Setting

DEFAULT_BACKEND = gpu_operator.NAME


class BackendSemantics(Protocol):
    NAME: str
    STRATEGIES: frozenset[str]
    OPTIONS: frozenset[str]  # the sharing options (fleet keys) it reads; others are warned about
    # The device plugin's own limits apply to its pools: one MIG profile type per node under mig.strategy single,
    # no MPS under mixed, failRequestsGreaterThanOne, and a request for several shared GPUs served by one GPU.
    DEVICE_PLUGIN_LIMITS: bool
    EXTENDED_RESOURCES: bool  # pools advertise extended resources in the node's allocatable (else DRA devices)
    NODE_LABELLED_CONFIGS: bool  # node labels name entries of its ConfigMaps (device-plugin keys, mig-parted configs)
    REDEPLOYS_ON_MOVE: bool  # a move to or from it redeploys the workloads itself, pool by pool (else workload-values)

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


# Each module is assigned to the protocol itself, so mypy checks its names and signatures against it.
SEMANTICS: Mapping[str, BackendSemantics] = {
    gpu_operator.NAME: gpu_operator,
    hami.NAME: hami,
    dra.NAME: dra,
}


def semantics(name: str) -> BackendSemantics:
    return SEMANTICS[name]


def backends_offering(strategy: str) -> tuple[str, ...]:
    """The backends whose pools may use ``strategy``, for hints."""
    return tuple(name for name, backend in SEMANTICS.items() if strategy in backend.STRATEGIES)
