"""Per-pool node labels: what a node group (Karpenter, a cloud node group, Ansible) must set."""

from __future__ import annotations

from typing import Any

from ..model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, Cluster, Pool
from ..shell import Command, kubectl, text_in
from ..versions import parse_version
from .artifact import DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL, Artifact
from .config_names import ConfigNames

# k8s-device-plugin commit ab05acef5, "Fix race condition in config-manager when label is unset": before it, an
# unlabelled node's config-manager could block in Get() forever (cmd/config-manager/main.go:104-114). It is in
# v0.19.0 and later and was cherry-picked into v0.18.2 (09d51359c; ../shared/research/real-world.md §6).
CONFIG_MANAGER_UNLABELLED_FIX = (0, 18, 2)


def config_manager_handles_unlabelled_nodes(device_plugin: str) -> bool:
    parsed = parse_version(device_plugin)
    return parsed is not None and parsed >= CONFIG_MANAGER_UNLABELLED_FIX


def pool_labels(cluster: Cluster, names: ConfigNames) -> dict[str, dict[str, str]]:
    """Pool name -> the NVIDIA labels its nodes must carry."""
    result: dict[str, dict[str, str]] = {}
    for pool in cluster.pools:
        labels = {DEVICE_PLUGIN_LABEL: names.device_plugin_keys[pool.name]}
        mig_name = names.mig_config_label(pool)
        if mig_name is not None:
            labels[MIG_CONFIG_LABEL] = mig_name
        result[pool.name] = labels
    return result


def selector_text(pool: Pool) -> str:
    """The pool's nodeSelector as ``kubectl --selector`` takes it: ``k=v,k2=v2``."""
    return ",".join(f"{k}={v}" for k, v in pool.node_selector)


def label_command(selector: str, assignments: dict[str, str | None]) -> Command:
    """``kubectl label nodes --selector S k=v k2- --overwrite``: None removes a label."""
    words = (f"{k}=" + v if v is not None else f"{k}-" for k, v in assignments.items())
    return kubectl("label", "nodes", "--selector", selector, *words, "--overwrite")


def node_labels_document(cluster: Cluster, labels: dict[str, dict[str, str]]) -> dict[str, Any]:
    """``node-labels.yaml``'s document: per pool, its nodeSelector, its ``labels`` and the command that sets them."""
    pools: list[dict[str, Any]] = []
    for pool in cluster.pools:
        pools.append(
            {
                "name": pool.name,
                "gpu": pool.gpu.id,
                "nodeSelector": dict(pool.node_selector),
                "labels": labels[pool.name],
                "command": text_in(cluster.kube_context, label_command(selector_text(pool), dict(labels[pool.name]))),
            }
        )
    return {"cluster": cluster.name, "pools": pools}


NODE_LABELS_NOTE = "Labels each pool's nodes must carry. Set them in the node group template so new nodes get them."


def node_labels(
    cluster: Cluster,
    names: ConfigNames,
    labels: dict[str, dict[str, str]] | None = None,
    notes_after: tuple[str, ...] = (),
) -> Artifact:
    """``labels``: the pools' labels, where a backend sets more than :func:`pool_labels` (default: those)."""
    notes = [NODE_LABELS_NOTE]
    notes.append(
        f"A GPU node without {DEVICE_PLUGIN_LABEL} gets {DEFAULT_DEVICE_PLUGIN_KEY}: {names.default_text(cluster)}."
    )
    if not config_manager_handles_unlabelled_nodes(cluster.device_plugin_version):
        notes.append(
            f"Label every node: the config-manager of device plugin {cluster.device_plugin_version} can hang "
            "on a node without the label (fixed in v0.18.2 and v0.19.0)."
        )
    notes += notes_after
    return Artifact(
        "node-labels.yaml",
        "node-labels",
        (node_labels_document(cluster, labels if labels is not None else pool_labels(cluster, names)),),
        tuple(notes),
    )
