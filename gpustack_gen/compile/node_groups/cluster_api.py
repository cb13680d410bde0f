"""A Cluster API ``MachineDeployment`` (``cluster.x-k8s.io/v1beta2``) per pool: template labels and taints.

Upstream: kubernetes-sigs/cluster-api@v1.14.0 ``core/config/crd/bases/cluster.x-k8s.io_machinedeployments.yaml``
(``spec.template.metadata.labels``, ``spec.template.spec.taints[]`` with ``propagation``). Template labels
reach Machines in place but the Node only for synced domains or ``--additional-sync-machine-labels``
(``docs/book/src/reference/api/metadata-propagation.md:47-71``); template taints are updated in place
(``internal/util/inplace/inplace.go:60-66``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .nodes import PoolNodes, provided_note, taint_fields

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool

NAME = "cluster-api"
PROVIDER_DOMAINS = ("cluster.x-k8s.io",)
NAME_LABEL = "cluster.x-k8s.io/deployment-name"
# the MachineDeployment a check reads the template labels of.
TEMPLATE_RESOURCE = "machinedeployments.cluster.x-k8s.io"


def extra_labels(cluster: Cluster) -> dict[str, str]:
    return {}


def document(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> dict[str, Any]:
    template: dict[str, Any] = {"metadata": {"labels": dict(nodes.labels)}}
    if nodes.taints:
        template["spec"] = {
            "taints": [
                {**taint_fields(t), "propagation": "Always"}  # Always: re-added when removed from the Node
                for t in nodes.taints
            ]
        }
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "MachineDeployment",
        "metadata": {"name": nodes.name},
        "spec": {"template": template},
    }


def sync_flag(nodes: PoolNodes) -> str:
    """The core manager's flag that lets the template's labels reach the Node (one anchored regex per key)."""
    return "--additional-sync-machine-labels=" + ",".join(f"^{re.escape(k)}$" for k in nodes.labels)


def notes(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> tuple[str, ...]:
    return (
        f"Pool {pool.name}'s labels and taints as a MachineDeployment template: merge it over your MachineDeployment",
        f"{nodes.name}, which keeps its clusterName, bootstrap and infrastructureRef.",
        "Cluster API copies template labels to the Node only for its own domains: run the core manager with",
        f"{sync_flag(nodes)}, or set them as kubelet --node-labels in the bootstrap config (a change there rolls the machines).",
        *provided_note(nodes, "Cluster API or Kubernetes"),
        "Changing labels or taints here updates the Machines in place, without a rollout (taints with propagation",
        "Always are kept on the Node); infrastructure or bootstrap template changes roll the machines.",
    )
