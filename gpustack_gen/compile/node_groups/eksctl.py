"""An eksctl managed node group (``eksctl.io/v1alpha5`` ClusterConfig) per pool: its labels and taints.

Upstream: eksctl-io/eksctl@v0.230.0 ``pkg/apis/eksctl.io/v1alpha5/assets/schema.json`` (``managedNodeGroups[]``
``labels``, ``taints`` as a list of key, value, effect); labels under ``kubernetes.io/`` and ``k8s.io/`` are
refused (``validation.go:1186-1230``). Managed groups change labels in place (``eksctl set labels``) and taints
through UpdateNodegroupConfig; self-managed groups are immutable (``userdocs/src/usage/nodegroups.md:151-155``).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from .nodes import PoolNodes, provided_note, taint_fields

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool

NAME = "eksctl"
PROVIDER_DOMAINS = ("eks.amazonaws.com", "alpha.eksctl.io")
NAME_LABEL = "eks.amazonaws.com/nodegroup"
# a file for eksctl, not an object in the cluster: nothing to read back.
TEMPLATE_RESOURCE: str | None = None
# eksctl installs its own device plugin on GPU node groups unless told not to (pkg/eks/tasks.go:339-372): a
# second plugin on the nodes (kube-system/nvidia-device-plugin-daemonset).
NO_PLUGIN_FLAG = "--install-nvidia-plugin=false"


def extra_labels(cluster: Cluster) -> dict[str, str]:
    return {}


def document(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> dict[str, Any]:
    group: dict[str, Any] = {"name": nodes.name, "labels": dict(nodes.labels)}
    if nodes.taints:  # the list form: the schema refuses the map form eksctl also reads (node-groups.md §3)
        group["taints"] = [taint_fields(t) for t in nodes.taints]
    return {
        "apiVersion": "eksctl.io/v1alpha5",
        "kind": "ClusterConfig",
        "metadata": {"name": cluster.name},
        "managedNodeGroups": [group],
    }


def notes(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> tuple[str, ...]:
    labels = ",".join(f"{k}={v}" for k, v in nodes.labels.items())
    set_labels = shlex.join(
        ["eksctl", "set", "labels", "--cluster", cluster.name, "--nodegroup", nodes.name, "--labels", labels]
    )
    return (
        f"Pool {pool.name}'s labels and taints as an eksctl managed node group: merge it into your ClusterConfig",
        f"(metadata.name is the EKS cluster, here named as in the fleet). Create the group with {NO_PLUGIN_FLAG}:",
        "eksctl's own device plugin would run beside the one the cluster's backend deploys.",
        *provided_note(nodes, "EKS or Kubernetes"),
        f"A managed group changes its labels in place ({set_labels}) and its taints",
        "with aws eks update-nodegroup-config --taints; a self-managed node group is immutable: create a new one.",
    )
