"""What ``verify`` needs to know of each device backend, one module per backend.

Most checks are the same on every backend: the labels each pool's nodes carry come from the backend's
``pool_labels``, what a node advertises from the model, the ClusterPolicy and ConfigMaps from the
render. A backend module adds what only it knows:

- ``NAME``;
- ``unlabelled(view, label)``: what a node of a pool gets when it lacks one of the pool's labels (a
  :class:`~gpustack_gen.verify.model.Fallback`), or None when nothing stands in for it;
- ``daemonsets(cluster)``: the DaemonSets in the Operator's namespace that must be rolled out;
- ``not_advertised_causes(view)``: why a node with a GPU advertises none of the pool's resource, most
  likely first, weighed by what the cluster shows (its runtime, CDI, the plugin's pod, the ConfigMap);
- ``capacity_causes(view, resource, actual)``: why it advertises another amount.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, cast

from . import gpu_operator

if TYPE_CHECKING:
    from ...model.fleet import Cluster
    from ..model import Fallback, NodeView


class VerifyBackend(Protocol):
    NAME: str

    def unlabelled(self, view: NodeView, label: str) -> Fallback | None: ...

    def daemonsets(self, cluster: Cluster) -> tuple[str, ...]: ...

    def not_advertised_causes(self, view: NodeView) -> tuple[str, ...]: ...

    def capacity_causes(self, view: NodeView, resource: str, actual: int) -> tuple[str, ...]: ...


VERIFY_BACKENDS: Mapping[str, VerifyBackend] = {module.NAME: cast(VerifyBackend, module) for module in (gpu_operator,)}


def verify_backend(cluster: Cluster) -> VerifyBackend | None:
    """The cluster's backend hook; None when ``verify`` does not know the backend yet."""
    return VERIFY_BACKENDS.get(cluster.backend)
