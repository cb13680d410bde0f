"""What a compiler produces: an artifact is one output file holding plain-data documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Re-exported: compilers mark a YAML file held in a ConfigMap value with it, and the YAML writer serializes it.
from ..yamlio.writer import EmbeddedYaml as EmbeddedYaml

DEVICE_PLUGIN_CONFIGMAP = "gpustack-device-plugin-config"
MIG_PARTED_CONFIGMAP = "gpustack-mig-parted-config"
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpustack-gen"}
DEVICE_PLUGIN_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_CONFIG_STATE_LABEL = "nvidia.com/mig.config.state"
DRIVER_UPGRADE_STATE_LABEL = "nvidia.com/gpu-driver-upgrade-state"  # the Operator's driver upgrade controller's
# Operator operands that load the device-plugin ConfigMap only when they start (or on SIGHUP from their
# config-manager, which acts on label changes only): a content change needs them restarted. GFD reads the
# same config to label the node (nvidia.com/gpu.replicas, -SHARED) and the MPS daemon runs its MPS servers.
DEVICE_PLUGIN_DAEMONSET = "daemonset/nvidia-device-plugin-daemonset"
MIG_MANAGER_DAEMONSET = "daemonset/nvidia-mig-manager"
TOOLKIT_DAEMONSET = "daemonset/nvidia-container-toolkit-daemonset"
GFD_DAEMONSET = "daemonset/gpu-feature-discovery"
MPS_DAEMONSET = "daemonset/nvidia-device-plugin-mps-control-daemon"


def device_plugin_daemonsets(uses_mps: bool) -> tuple[str, ...]:
    """The DaemonSets that load the device-plugin ConfigMap, for ``kubectl rollout restart``."""
    return (DEVICE_PLUGIN_DAEMONSET, GFD_DAEMONSET, *((MPS_DAEMONSET,) if uses_mps else ()))


# The fixed file names of a cluster folder and their artifact kinds (workloads/<ns>.<name>.yaml aside);
# readers of a rendered folder (diff) take kinds from here, and a test holds the compilers to it.
FILE_KINDS = {
    "gpu-operator-values.yaml": "helm-values",
    "clusterpolicy-patch.yaml": "clusterpolicy-patch",
    "namespace.yaml": "namespace",
    "device-plugin-config.yaml": "device-plugin-configmap",
    "mig-parted-config.yaml": "mig-parted-configmap",
    "node-labels.yaml": "node-labels",
    "hami-values.yaml": "hami-values",
    "capacity.yaml": "capacity",
    "kustomization.yaml": "kustomization",
    "argocd-application.yaml": "argocd-application",
    "flux-helmrelease.yaml": "flux-helmrelease",
    "helmfile.yaml": "helmfile",
    "dra-device-classes.yaml": "dra-device-classes",
    "dra-claims.yaml": "dra-claims",
    "dra-driver-values.yaml": "dra-driver-values",
    "alerts.yaml": "prometheus-rule",
}
WORKLOAD_KIND = "workload-values"
# node-groups/<pool>.<provider>.yaml: each pool's labels and taints in the format of what creates its nodes.
NODE_GROUP_FOLDER = "node-groups"
NODE_GROUP_KINDS = {
    "karpenter": "karpenter-nodepool",
    "eksctl": "eksctl-nodegroup",
    "gke": "gke-node-pool",
    "aks": "aks-node-pool",
    "cluster-api": "cluster-api-machinedeployment",
}


def kind_of_file(rel: str) -> str:
    """The artifact kind of a file of a rendered cluster folder, by its path; "unknown" for others."""
    parts = rel.split("/")
    if "workloads" in parts[:-1]:
        return WORKLOAD_KIND
    if NODE_GROUP_FOLDER in parts[:-1]:
        provider = parts[-1].removesuffix(".yaml").rsplit(".", 1)[-1]
        return NODE_GROUP_KINDS.get(provider, "unknown")
    return FILE_KINDS.get(parts[-1], "unknown")


@dataclass(frozen=True)
class Artifact:
    """One generated file: its path relative to the cluster folder, its kind and its documents."""

    path: str
    kind: str  # schema / validation key, e.g. "helm-values", "device-plugin-configmap"
    documents: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = field(default=())  # extra header lines: how to apply the file
