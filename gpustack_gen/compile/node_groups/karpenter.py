"""A Karpenter ``NodePool`` (``karpenter.sh/v1``) per pool: its template's labels and taints.

The user merges it over a NodePool of their own, which keeps its ``nodeClassRef`` and ``requirements``.
Upstream: kubernetes-sigs/karpenter@v1.14.1 ``pkg/apis/crds/karpenter.sh_nodepools.yaml`` (labels
``spec.template.metadata.labels``, taints ``spec.template.spec.taints``); ``NodePool.Hash()`` hashes all of
``spec.template`` but ``requirements`` (``pkg/apis/v1/nodepool.go:234,336-342``), so a template change drifts
every node, which Karpenter replaces within ``spec.disruption.budgets`` (``designing/disruption.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .nodes import PoolNodes, taint_fields

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool

NAME = "karpenter"
# Karpenter sets these itself; its CRD refuses them in template labels (labels.go IsRestrictedLabel).
PROVIDER_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
NAME_LABEL = "karpenter.sh/nodepool"
# the NodePool a check reads the template labels of.
TEMPLATE_RESOURCE = "nodepools.karpenter.sh"


def extra_labels(cluster: Cluster) -> dict[str, str]:
    return {}


def document(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> dict[str, Any]:
    template: dict[str, Any] = {"metadata": {"labels": dict(nodes.labels)}}
    if nodes.taints:
        template["spec"] = {"taints": [taint_fields(t) for t in nodes.taints]}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": nodes.name},
        "spec": {"template": template},
    }


def notes(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> tuple[str, ...]:
    requirements = ", ".join(f"{k} In [{v}]" for k, v in nodes.provided.items() if k != NAME_LABEL)
    return (
        f"Pool {pool.name}'s labels and taints as a Karpenter NodePool template: merge it over your NodePool {nodes.name}",
        "(a kustomize patch), which keeps its nodeClassRef, requirements and disruption budgets; taints here replace its list.",
        *((f"Its requirements must allow {requirements} (the pool's nodeSelector).",) if requirements else ()),
        "Changing this file drifts every node of the NodePool: Karpenter replaces them (a new node first, then drain",
        "and delete), as many at a time as spec.disruption.budgets allows (default 10%). kubectl label on a node",
        "changes it in place but not this template, so new nodes would come up with the old labels.",
    )
