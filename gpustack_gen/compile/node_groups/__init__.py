"""Node-group fragments: per pool, the labels and taints its nodes must be born with, in the format of what
creates them (``nodeGroups.provider``). One module per provider, registered in :data:`PROVIDERS`.

A provider module has ``NAME``, ``PROVIDER_DOMAINS`` (label domains it sets itself), ``NAME_LABEL`` (the label
it sets to the group's name), ``TEMPLATE_RESOURCE`` (the cluster object holding the template, None when it is
not one), ``extra_labels`` (labels it needs beyond the pool's), ``document`` and ``notes``
(the file's header: how to merge it, and what changing it does to running nodes).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..artifact import NODE_GROUP_FOLDER, NODE_GROUP_KINDS, Artifact
from ..backends import backend_of
from . import aks, cluster_api, eksctl, gke, karpenter
from .nodes import PoolNodes, pool_nodes

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool

__all__ = ["PROVIDERS", "PoolNodes", "node_group_artifacts", "node_group_file", "template_of"]


class NodeGroupProvider(Protocol):
    NAME: str

    # Read-only, so that a module's one-domain tuple and its label string satisfy them.
    @property
    def PROVIDER_DOMAINS(self) -> tuple[str, ...]: ...

    @property
    def NAME_LABEL(self) -> str | None: ...

    @property
    def TEMPLATE_RESOURCE(self) -> str | None: ...

    def extra_labels(self, cluster: Cluster) -> dict[str, str]: ...

    def document(self, cluster: Cluster, pool: Pool, nodes: PoolNodes) -> dict[str, Any]: ...

    def notes(self, cluster: Cluster, pool: Pool, nodes: PoolNodes) -> tuple[str, ...]: ...


# Each module is assigned to the protocol itself, so mypy checks its names and signatures against it.
PROVIDERS: Mapping[str, NodeGroupProvider] = {
    karpenter.NAME: karpenter,
    eksctl.NAME: eksctl,
    gke.NAME: gke,
    aks.NAME: aks,
    cluster_api.NAME: cluster_api,
}


def node_group_file(cluster: Cluster, pool: Pool) -> str | None:
    """The pool's node-group file in the cluster folder (``node-groups/t4.karpenter.yaml``); None when the
    cluster names no provider."""
    if cluster.node_group_provider is None:
        return None
    return posixpath.join(NODE_GROUP_FOLDER, f"{pool.name}.{cluster.node_group_provider}.yaml")


def template_of(cluster: Cluster, pool: Pool) -> PoolNodes:
    """What the pool's node-group template carries: as its provider writes it, or (no provider named) every
    label of the pool that Kubernetes does not set itself."""
    labels = backend_of(cluster).pool_labels(cluster)[pool.name]
    if cluster.node_group_provider is None:
        return pool_nodes(pool, labels, (), None)
    provider = PROVIDERS[cluster.node_group_provider]
    return pool_nodes(
        pool, {**labels, **provider.extra_labels(cluster)}, provider.PROVIDER_DOMAINS, provider.NAME_LABEL
    )


def node_group_artifacts(cluster: Cluster) -> list[Artifact]:
    """One fragment per pool, in the cluster's pool order; none when the cluster names no provider."""
    if cluster.node_group_provider is None:
        return []
    provider = PROVIDERS[cluster.node_group_provider]
    artifacts = []
    for pool in cluster.pools:
        nodes = template_of(cluster, pool)
        path = node_group_file(cluster, pool)
        assert path is not None
        artifacts.append(
            Artifact(
                path,
                NODE_GROUP_KINDS[provider.NAME],
                (provider.document(cluster, pool, nodes),),
                provider.notes(cluster, pool, nodes),
            )
        )
    return artifacts
