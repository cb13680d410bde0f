"""The compilers of each device backend, chosen once per cluster by its ``backend``.

A backend with ``INSTALLS_OPERATOR`` installs the GPU Operator (driver, toolkit, CDI): :mod:`..operator` writes
those settings and merges what the backend sets on top; the standalone device plugin's hosts bring their own.
``namespace`` is the namespace object's (the Operator's, or the backend release's). A backend module has ``NAME``, ``operator_values``
(its part of the Helm values), ``patch_only`` (what only the ClusterPolicy patch carries: deletions,
fields the chart never renders), ``objects`` (Kubernetes objects applied with the namespace, listed in
the kustomization), ``files`` (its other artifacts), ``pool_labels`` (the labels each pool's nodes carry,
which ``plan`` sets and ``verify`` expects), ``releases`` (Helm releases it installs beside the Operator),
``workload_values`` (a workload's values fragment), ``workload_notes`` (header lines of that fragment),
``plugin_daemonset`` (the namespace and name of the DaemonSet that advertises the GPUs, for alerts) and
``capacity_details`` (what capacity.yaml says of a pool beyond the counts). What a pool offers and a workload
asks on a
backend is the model's (:mod:`gpustack_gen.model.backends`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from . import device_plugin, dra, gpu_operator, hami

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool, Workload
    from ..artifact import Artifact
    from ..releases import ChartRelease


class BackendCompilers(Protocol):
    NAME: str
    INSTALLS_OPERATOR: bool  # the GPU Operator's values and ClusterPolicy patch are written (else the hosts' own)

    def namespace(self, cluster: Cluster) -> str: ...  # of the namespace object (namespace.yaml)

    def operator_values(self, cluster: Cluster) -> dict[str, Any]: ...

    def patch_only(self, cluster: Cluster) -> dict[str, Any]: ...

    def objects(self, cluster: Cluster) -> list[Artifact]: ...

    def files(self, cluster: Cluster) -> list[Artifact]: ...

    def pool_labels(self, cluster: Cluster) -> dict[str, dict[str, str]]: ...

    def releases(self, cluster: Cluster) -> tuple[ChartRelease, ...]: ...

    def workload_values(self, cluster: Cluster, workload: Workload) -> dict[str, Any]: ...

    def workload_notes(self, cluster: Cluster, workload: Workload) -> tuple[str, ...]: ...

    def capacity_details(self, cluster: Cluster, pool: Pool) -> dict[str, Any]: ...

    def plugin_daemonset(self, cluster: Cluster) -> tuple[str, str]: ...


# Each module is assigned to the protocol itself, so mypy checks its names and signatures against it.
BACKENDS: Mapping[str, BackendCompilers] = {
    gpu_operator.NAME: gpu_operator,
    hami.NAME: hami,
    dra.NAME: dra,
    device_plugin.NAME: device_plugin,
}


def backend_of(cluster: Cluster) -> BackendCompilers:
    return BACKENDS[cluster.backend]
