"""What a pool's nodes must be born with, whatever creates them: its labels and taints.

The labels are the pool's nodeSelector and the labels its backend sets on the pool's nodes (the
device-plugin and MIG config labels, HAMi's ``gpu=on``, the DRA kubelet plugin's). Labels that
Kubernetes or the provider sets itself (``node.kubernetes.io/instance-type``, ``karpenter.sh/nodepool``)
cannot be written in a node-group template: they are kept apart, for the file's notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...model.fleet import Pool, Taint

# Label domains the kubelet or the cloud provider sets (kubernetes.io/arch, node.kubernetes.io/instance-type,
# topology.kubernetes.io/zone): eksctl and GKE refuse them in a node group (node-groups.md §3, §4).
KUBERNETES_DOMAINS = ("kubernetes.io", "k8s.io")


def label_domain(key: str) -> str:
    """The prefix of a label key (``nvidia.com`` of ``nvidia.com/mig.config``), "" when it has none."""
    return key.split("/", 1)[0] if "/" in key else ""


def in_domains(key: str, domains: tuple[str, ...]) -> bool:
    """Whether ``key``'s prefix is one of ``domains`` or a subdomain of one."""
    domain = label_domain(key)
    return any(domain == d or domain.endswith("." + d) for d in domains)


@dataclass(frozen=True)
class PoolNodes:
    """A pool's node-group content: the group's name, the labels written, those the provider sets, the taints."""

    name: str
    labels: Mapping[str, str]
    provided: Mapping[str, str]
    taints: tuple[Taint, ...]


def pool_nodes(
    pool: Pool, backend_labels: Mapping[str, str], provider_domains: tuple[str, ...], name_label: str | None
) -> PoolNodes:
    """Split the pool's labels into those a template carries and those Kubernetes or the provider sets.

    ``name_label`` is the label the provider sets to the group's name (``karpenter.sh/nodepool``): a
    nodeSelector on it names the group.
    """
    wanted = {**dict(pool.node_selector), **backend_labels}
    domains = KUBERNETES_DOMAINS + provider_domains
    provided = {k: v for k, v in wanted.items() if in_domains(k, domains) or k == name_label}
    labels = {k: v for k, v in wanted.items() if k not in provided}
    name = provided.get(name_label, pool.name) if name_label is not None else pool.name
    return PoolNodes(name, labels, provided, pool.taints)


def provided_note(nodes: PoolNodes, who: str) -> tuple[str, ...]:
    """The header line naming the labels the template cannot carry, when there are any."""
    if not nodes.provided:
        return ()
    shown = ", ".join(f"{k}={v}" for k, v in nodes.provided.items())
    return (
        f"Not written here, as {who} sets them: {shown}; choose the node group's instance type so its nodes get them.",
    )


def taint_fields(taint: Taint) -> dict[str, str]:
    """A taint as Kubernetes writes it (key, value when it has one, effect): Karpenter, eksctl and Cluster API."""
    return {"key": taint.key, **({"value": taint.value} if taint.value is not None else {}), "effect": taint.effect}
