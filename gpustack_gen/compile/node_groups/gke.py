"""A GKE node pool's ``node_config`` labels and taints (Terraform ``google_container_node_pool``) per pool.

Upstream: hashicorp/terraform-provider-google@v7.45.0 ``website/docs/r/container_cluster.html.markdown``
(``node_config.labels``, ``node_config.taint`` with effect ``NO_SCHEDULE|PREFER_NO_SCHEDULE|NO_EXECUTE``,
``:1193-1194,1259-1265``); labels and taints update in place, ``guest_accelerator`` is ForceNew
(``google/services/container/node_config.go:316-383,420-428,673-697``). With the GPU Operator GKE's own
device plugin must be off (``gke-no-default-nvidia-gpu-device-plugin=true``) and, where the Operator
installs the driver, GKE's driver installation too (NVIDIA cloud-native-docs ``gpu-operator/google-gke.rst:109-117``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .nodes import PoolNodes, provided_note

if TYPE_CHECKING:
    from ...model.fleet import Cluster, Pool

NAME = "gke"
PROVIDER_DOMAINS = ("cloud.google.com",)
NAME_LABEL = "cloud.google.com/gke-nodepool"
# Terraform, not an object in the cluster: nothing to read back.
TEMPLATE_RESOURCE: str | None = None
NO_GKE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}


def extra_labels(cluster: Cluster) -> dict[str, str]:
    """Every backend brings its own device plugin (the Operator's, HAMi's, the DRA driver's): GKE's must go."""
    return {NO_GKE_PLUGIN_LABEL: "true"}


def document(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> dict[str, Any]:
    config: dict[str, Any] = {"labels": dict(nodes.labels)}
    if nodes.taints:
        config["taint"] = [{"key": t.key, "value": t.value or "", "effect": EFFECTS[t.effect]} for t in nodes.taints]
    return {"name": nodes.name, "node_config": config}


def notes(cluster: Cluster, pool: Pool, nodes: PoolNodes) -> tuple[str, ...]:
    driver = (
        (
            "Its guest_accelerator needs gpu_driver_installation_config.gpu_driver_version = INSTALLATION_DISABLED",
            "(the GPU Operator installs the driver) and no gpu_sharing_config (the cluster's backend shares the GPUs).",
        )
        if cluster.operator.driver_enabled
        else ("Its guest_accelerator needs no gpu_sharing_config: the cluster's backend shares the GPUs.",)
    )
    return (
        f"Pool {pool.name}'s labels and taints for its google_container_node_pool, read by Terraform:",
        'locals { pool = yamldecode(file("<this file>")) } and in node_config: labels = local.pool.node_config.labels,',
        'dynamic "taint" { for_each = local.pool.node_config.taint; content { key = taint.value.key ... } }.',
        *driver,
        *provided_note(nodes, "GKE or Kubernetes"),
        "Changing labels or taints updates the pool in place (its nodes and future ones); a guest_accelerator",
        "change (count, type, sharing, MIG partition, driver) destroys and recreates the node pool.",
    )
