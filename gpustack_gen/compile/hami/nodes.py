"""Per-pool node labels on a HAMi cluster: ``gpu=on`` for HAMi's device plugin, MIG kept off."""

from __future__ import annotations

from typing import Any

from ...catalog import ALL_DISABLED
from ...model.backends.hami import NODE_LABEL, NODE_LABEL_VALUE
from ...model.fleet import Cluster
from ..artifact import MIG_CONFIG_LABEL, Artifact
from ..gpu_operator.nodes import label_command, selector_text


def pool_labels(cluster: Cluster) -> dict[str, dict[str, str]]:
    """Pool name -> labels. MIG-capable GPUs are labelled all-disabled: HAMi shares whole GPUs, and the
    Operator's mig-manager (still deployed) keeps MIG as the label says (it sets the label only when absent)."""
    result: dict[str, dict[str, str]] = {}
    for pool in cluster.pools:
        labels = {NODE_LABEL: NODE_LABEL_VALUE}
        if pool.gpu.mig_capable:
            labels[MIG_CONFIG_LABEL] = ALL_DISABLED
        result[pool.name] = labels
    return result


def node_labels(cluster: Cluster) -> Artifact:
    pools: list[dict[str, Any]] = []
    for pool, labels in zip(cluster.pools, pool_labels(cluster).values(), strict=True):
        entry: dict[str, Any] = {
            "name": pool.name,
            "gpu": pool.gpu.id,
            "nodeSelector": dict(pool.node_selector),
            "labels": labels,
            "command": label_command(selector_text(pool), dict(labels)),
        }
        if pool.node_names:
            entry["nodeNames"] = list(pool.node_names)
        pools.append(entry)
    return Artifact(
        "node-labels.yaml",
        "node-labels",
        ({"cluster": cluster.name, "pools": pools},),
        (
            "Labels each pool's nodes must carry. Set them in the node group template so new nodes get them.",
            f"HAMi manages only nodes labelled {NODE_LABEL}={NODE_LABEL_VALUE}: its device plugin runs there, nowhere else.",
        ),
    )
