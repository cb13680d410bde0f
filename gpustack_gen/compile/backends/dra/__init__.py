"""The NVIDIA DRA driver as a cluster's backend: DeviceClasses, claims, the driver's values and the node labels.

The GPU Operator still installs the driver, the toolkit, GFD and the MIG manager; its device plugin is
turned off (``devicePlugin.enabled: false``, and ``nvidia.com/gpu.deploy.device-plugin=false`` on each
pool's nodes, which lets ``plan`` move one pool at a time). MIG layouts stay static: the MIG manager applies
the cluster's mig-parted ConfigMap (the GPU Operator backend's, reused) and the driver publishes the MIG
devices it finds. The driver manager evicts the DRA kubelet plugin before a driver reload
(``NODE_LABEL_FOR_GPU_POD_EVICTION``, NVIDIA's DRA install guide for the GPU Operator).
"""

from __future__ import annotations

from typing import Any

from ....model.backends.dra import DEVICE_PLUGIN_DEPLOY_LABEL, KUBELET_PLUGIN_LABEL, NAME, dra_options, dra_sharing
from ....model.fleet import Cluster, Pool, Workload
from ....shell import text_in
from ...artifact import MIG_CONFIG_LABEL, Artifact
from ...config_names import config_names
from ...configmaps import mig_parted_configmap
from ...kustomization import apply_folder, namespaces_command
from ...mig_manager import mig_manager_patch, mig_manager_values
from ...node_labels import NODE_LABELS_NOTE, node_labels_document
from ...releases import ChartRelease
from .claims import claim_name, claim_object
from .claims import workload_values as workload_values
from .device_classes import device_classes
from .driver import KUBELET_PLUGIN_DAEMONSET, dra_release, driver_values_file

__all__ = [
    "INSTALLS_OPERATOR",
    "NAME",
    "capacity_details",
    "files",
    "namespace",
    "objects",
    "operator_values",
    "patch_only",
    "plugin_daemonset",
    "pool_labels",
    "releases",
    "workload_notes",
    "workload_values",
]

DEVICE_CLASSES_FILE = "dra-device-classes.yaml"
CLAIMS_FILE = "dra-claims.yaml"
EVICTION_ENV = "NODE_LABEL_FOR_GPU_POD_EVICTION"


def operator_values(cluster: Cluster) -> dict[str, Any]:
    settings: dict[str, Any] = {"devicePlugin": {"enabled": False}, **mig_manager_values(cluster)}
    if cluster.operator.driver_enabled:
        settings["driver"] = {"manager": {"env": [{"name": EVICTION_ENV, "value": KUBELET_PLUGIN_LABEL}]}}
    return settings


def patch_only(cluster: Cluster) -> dict[str, Any]:
    """A merge patch keeps what it does not name: drop the device-plugin ConfigMap, which GFD would keep mounting
    once nothing renders it, and the mig-parted one where no pool uses MIG."""
    return {"devicePlugin": {"config": None}, **mig_manager_patch(cluster)}


def releases(cluster: Cluster) -> tuple[ChartRelease, ...]:
    return (dra_release(cluster),)


def plugin_daemonset(cluster: Cluster) -> tuple[str, str]:
    """The DRA driver's kubelet plugin, which publishes the GPUs, in its release's namespace."""
    return dra_options(cluster).namespace, KUBELET_PLUGIN_DAEMONSET.removeprefix("daemonset/")


def workload_notes(cluster: Cluster, workload: Workload) -> tuple[str, ...]:
    return (
        f"Its claim is in dra-claims.yaml: apply the cluster folder ({apply_folder(cluster.kube_context)} in it) first.",
    )


def objects(cluster: Cluster) -> list[Artifact]:
    mig = mig_parted_configmap(cluster, config_names(cluster))
    found = [mig] if mig is not None else []
    found.append(
        Artifact(
            DEVICE_CLASSES_FILE,
            "dra-device-classes",
            tuple(device_classes(cluster)),
            (
                "One DeviceClass per pool and kind of device: it selects the pool's GPU model (and MIG profile) by",
                "the attributes the DRA driver publishes, and carries the pool's time-slicing or MPS config.",
            ),
        )
    )
    if cluster.workloads:
        workloads = sorted(cluster.workloads, key=lambda w: w.file_stem)
        found.append(
            Artifact(
                CLAIMS_FILE,
                "dra-claims",
                tuple(claim_object(cluster, w) for w in workloads),
                (
                    "What each workload claims: a ResourceClaimTemplate (a claim per pod), or on time-slicing and MPS",
                    "pools one ResourceClaim its pods share, on one node. Their namespaces must exist first:",
                    text_in(cluster.kube_context, namespaces_command([w.namespace for w in workloads])),
                ),
            )
        )
    return found


def files(cluster: Cluster) -> list[Artifact]:
    labels = Artifact(
        "node-labels.yaml",
        "node-labels",
        (node_labels_document(cluster, pool_labels(cluster)),),
        (
            NODE_LABELS_NOTE,
            f"{KUBELET_PLUGIN_LABEL}=true runs the DRA kubelet plugin there; {DEVICE_PLUGIN_DEPLOY_LABEL}=false",
            "keeps the GPU Operator's device plugin off (the two must not share a node).",
        ),
    )
    return [labels, driver_values_file(cluster)]


def pool_labels(cluster: Cluster) -> dict[str, dict[str, str]]:
    """Pool name -> the labels its nodes carry: the device plugin off, the DRA kubelet plugin on, the MIG config."""
    names = config_names(cluster)
    result: dict[str, dict[str, str]] = {}
    for pool in cluster.pools:
        labels = {DEVICE_PLUGIN_DEPLOY_LABEL: "false", KUBELET_PLUGIN_LABEL: "true"}
        mig = names.mig_config_label(pool)
        if mig is not None:
            labels[MIG_CONFIG_LABEL] = mig
        result[pool.name] = labels
    return result


def capacity_details(cluster: Cluster, pool: Pool) -> dict[str, Any]:
    """How the pool's devices are claimed, and what its numbers count. A shared pool has two limits: the devices
    its workloads' claims hold (each its gpus, against the physical GPUs) and the pods sharing each claim (against
    the pool's replicas, which no DRA object enforces)."""
    if pool.sharing.is_shared:
        claims: dict[str, Any] = {
            "claims": "one ResourceClaim per workload, shared by its pods on one node",
            "counts": "devices: each workload's claim holds its gpus GPUs for its own pods, whatever their number",
            "podsPerClaim": pool.sharing.replicas,
            "sharedClaims": {
                f"{w.namespace}/{claim_name(cluster, w)}": {"devices": w.gpus, "pods": w.replicas}
                for w in cluster.workloads
                if w.pool == pool.name
            },
        }
        if pool.sharing.strategy == "mps":
            claims["pinnedMemoryLimit"] = (
                dra_sharing(pool.sharing).pinned_memory_limit
                or "none: memory is not split, each pod may use all of the GPU's"
            )
    else:
        claims = {"claims": "one ResourceClaim per pod, from its workload's ResourceClaimTemplate", "counts": "devices"}
    return {"dra": claims}


INSTALLS_OPERATOR = True


def namespace(cluster: Cluster) -> str:
    """The Operator's: its ConfigMaps live there."""
    return cluster.operator.namespace
