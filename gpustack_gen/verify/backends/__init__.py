"""What ``verify`` needs to know of each device backend, one module per backend.

Most checks are the same on every backend: the labels each pool's nodes carry come from the backend's
``pool_labels``, what a node advertises from the model, the ClusterPolicy and ConfigMaps from the
render, the workloads of the Helm releases it installs (HAMi's, the DRA driver's) from its ``releases``. A backend module
adds what only it knows:

- ``NAME``;
- ``state_parts(cluster)``: what ``verify`` reads of the cluster besides what every cluster has (the DRA
  driver: ResourceSlices, DeviceClasses and claims), each a :class:`~gpustack_gen.verify.state.StatePart`;
- ``REGISTRATION_PARTS``: the state parts ``registration`` reads besides the nodes; a check that reads what
  a node registers (its ``NEEDS`` holds :data:`~gpustack_gen.verify.state.REGISTRATION`) needs them too;
- ``unlabelled(view, label)``: what a node of a pool gets when it lacks one of the pool's labels (a
  :class:`~gpustack_gen.verify.model.Fallback`), or None when nothing stands in for it;
- ``daemonsets(cluster)``: the DaemonSets in the Operator's namespace that must be rolled out (none where the
  backend installs no Operator: the ``operator`` part is not read there);
- ``unwanted_daemonsets(cluster)``: those that must not run there, and why;
- ``registration(view)``: what the node registered with the backend's scheduler beyond its allocatable
  (a :class:`~gpustack_gen.verify.model.Registration`: HAMi's node annotation, the DRA driver's
  ResourceSlices, with what is wrong with it), or None when the backend keeps no such record or it was not
  read;
- ``rollout_role(rollout)``: what a workload of its releases (``daemonset/hami-device-plugin``) does, and
  what fails without it, for hints;
- ``not_advertised_causes(view)``: why a node with a GPU advertises none of the pool's resource, most
  likely first, weighed by what the cluster shows (its runtime, CDI, the plugin's pod, the ConfigMap);
- ``capacity_causes(view, resource, actual)``: why it advertises (or registers) another amount.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from . import device_plugin, dra, gpu_operator, hami

if TYPE_CHECKING:
    from ...model.fleet import Cluster
    from ..model import Fallback, NodeView, Registration
    from ..state import StatePart


class VerifyBackend(Protocol):
    NAME: str

    @property
    def REGISTRATION_PARTS(self) -> tuple[str, ...]: ...  # read-only, so that a module's (SLICES_PART,) satisfies it

    def state_parts(self, cluster: Cluster) -> tuple[StatePart, ...]: ...

    def unlabelled(self, view: NodeView, label: str) -> Fallback | None: ...

    def daemonsets(self, cluster: Cluster) -> tuple[str, ...]: ...

    def unwanted_daemonsets(self, cluster: Cluster) -> dict[str, str]: ...

    def registration(self, view: NodeView) -> Registration | None: ...

    def rollout_role(self, rollout: str) -> str: ...

    def not_advertised_causes(self, view: NodeView) -> tuple[str, ...]: ...

    def capacity_causes(self, view: NodeView, resource: str, actual: int) -> tuple[str, ...]: ...


# Each module is assigned to the protocol itself, so mypy checks its names and signatures against it.
VERIFY_BACKENDS: Mapping[str, VerifyBackend] = {
    gpu_operator.NAME: gpu_operator,
    hami.NAME: hami,
    dra.NAME: dra,
    device_plugin.NAME: device_plugin,
}


def verify_backend(cluster: Cluster) -> VerifyBackend | None:
    """The cluster's backend hook; None when ``verify`` does not know the backend yet."""
    return VERIFY_BACKENDS.get(cluster.backend)
