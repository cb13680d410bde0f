"""Per-pool node labels on a HAMi cluster: ``gpu=on`` for HAMi's device plugin, MIG kept off."""

from __future__ import annotations

from ....catalog import ALL_DISABLED
from ....model.backends.hami import NODE_LABEL, NODE_LABEL_VALUE, node_names
from ....model.fleet import Cluster
from ...artifact import MIG_CONFIG_LABEL, Artifact
from ...node_labels import NODE_LABELS_NOTE, node_labels_document


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
    """The shared node-labels.yaml, with each pool's nodeNames where it names its nodes (HAMi's per-node
    config matches them)."""
    document = node_labels_document(cluster, pool_labels(cluster))
    for entry, pool in zip(document["pools"], cluster.pools, strict=True):
        if names := node_names(pool):
            entry["nodeNames"] = list(names)
    return Artifact(
        "node-labels.yaml",
        "node-labels",
        (document,),
        (
            NODE_LABELS_NOTE,
            f"HAMi manages only nodes labelled {NODE_LABEL}={NODE_LABEL_VALUE}: its device plugin runs there, nowhere else.",
        ),
    )
