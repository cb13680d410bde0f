"""An AKS node pool's labels and taints (the agent pool's ``nodeLabels`` and ``nodeTaints``) per pool.

AKS manages node-pool taints only through its API, as a whole list (https://learn.microsoft.com/azure/aks/use-node-taints);
``az aks nodepool add|update`` take them as ``--labels`` and ``--node-taints key=value:Effect``. The MIG
profile of an AKS pool (``--gpu-instance-profile``) is fixed at creation (https://learn.microsoft.com/azure/aks/gpu-multi-instance).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...shell import kubectl, text_in
from .nodes import PoolNodes, provided_note

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool

NAME = "aks"
PROVIDER_DOMAINS = ("kubernetes.azure.com",)
NAME_LABEL = "kubernetes.azure.com/agentpool"
# an az/ARM node pool, not an object in the cluster: nothing to read back.
TEMPLATE_RESOURCE: str | None = None


def extra_labels(cluster: Cluster) -> dict[str, str]:
    return {}


def document(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> dict[str, Any]:
    properties: dict[str, Any] = {"nodeLabels": dict(nodes.labels)}
    if nodes.taints:
        # key=value:Effect, the form --node-taints and nodeTaints take; key:Effect without a value, as kubectl
        # taint writes it (AKS documents only the form with a value: not verified there).
        properties["nodeTaints"] = [t.text for t in nodes.taints]
    return {"name": nodes.name, "properties": properties}


def notes(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> tuple[str, ...]:
    return (
        f"Pool {pool.name}'s labels and taints as an AKS agent pool's nodeLabels and nodeTaints (ARM, Bicep,",
        "Terraform node_labels and node_taints, or az aks nodepool add|update --labels and --node-taints).",
        "AKS manages node-pool taints only through its API, and an update replaces the whole list: never kubectl taint",
        "an AKS node. Leave --gpu-instance-profile unset: it is fixed at creation, the GPU Operator's MIG manager",
        "applies nvidia.com/mig.config instead.",
        *provided_note(nodes, "AKS or Kubernetes"),
        "Changing labels or taints is a node-pool update through the AKS API (not a new pool); whether running",
        "nodes are relabelled in place is not documented: check them with "
        f"{text_in(cluster.kube_context, kubectl('get', 'nodes', '--show-labels'))}.",
    )
