"""The NVIDIA DRA driver's Helm values and the command that installs them.

Values (chart ``values.yaml`` and ``templates/validation.yaml``, the same keys in 25.12.0 and 0.4.x):

- ``gpuResourcesEnabledOverride: true``: GPU allocation (``resources.gpus.enabled``, the chart default) fails
  to render without it; gpustack-gen keeps the Operator's device plugin off every node the driver runs on;
- ``resources.computeDomains.enabled: false``: ComputeDomains are for multi-node NVLink, which no fleet
  setting describes;
- ``featureGates``: exactly the gates the pools' sharing needs (``TimeSlicingSettings``, ``MPSSupport``);
- ``nvidiaDriverRoot``: ``/run/nvidia/driver`` where the Operator installs the driver, ``/`` where the nodes
  have it preinstalled;
- ``kubeletPlugin.nodeSelector``: the pools' ``nvidia.com/dra-kubelet-plugin=true`` label (NVIDIA's DRA
  guide for the GPU Operator), so the plugin runs only on the nodes moved to DRA;
- ``resourceApiVersion``: the ``resource.k8s.io`` version the cluster serves, as gpustack-gen's objects use
  it (the chart otherwise asks ``.Capabilities``, which ``helm template`` does not have);
- ``nameOverride: nvidia-dra-driver-gpu``: the chart was renamed in 0.4.0; with the old name its objects keep
  their names across the rename, and an upgrade from 25.12.0 needs it (``docs/upgrade.md``).
"""

from __future__ import annotations

import shlex
from typing import Any

from ...dra_versions import NGC_REPOSITORY, NGC_REPOSITORY_NAME
from ...model.backends.dra import KUBELET_PLUGIN_LABEL, gates, resource_api_version
from ...model.fleet import Cluster
from ..artifact import Artifact
from .claims import namespaces_command

VALUES_FILE = "dra-driver-values.yaml"
RELEASE_NAME = "nvidia-dra-driver-gpu"
NAME_OVERRIDE = "nvidia-dra-driver-gpu"
# <release>-kubelet-plugin, the release name containing the (overridden) chart name (templates/_helpers.tpl
# fullname; the pods of docs/upgrade.md's `kubectl get pods -n nvidia-dra-driver-gpu`).
KUBELET_PLUGIN_DAEMONSET = f"daemonset/{RELEASE_NAME}-kubelet-plugin"
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"
HOST_DRIVER_ROOT = "/"


def driver_values(cluster: Cluster) -> dict[str, Any]:
    return {
        "nameOverride": NAME_OVERRIDE,
        "nvidiaDriverRoot": OPERATOR_DRIVER_ROOT if cluster.operator.driver_enabled else HOST_DRIVER_ROOT,
        "gpuResourcesEnabledOverride": True,
        "resourceApiVersion": resource_api_version(cluster.kubernetes),
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "featureGates": gates(cluster),
        "kubeletPlugin": {"nodeSelector": {KUBELET_PLUGIN_LABEL: "true"}},
    }


def helm_upgrade_command(cluster: Cluster, values_path: str = VALUES_FILE) -> str:
    """``helm upgrade --install`` of the pinned driver chart; the values are passed whole (never --reuse-values)."""
    release = cluster.dra.release
    return (
        f"helm upgrade --install {RELEASE_NAME} {release.chart_reference} --version {release.version} "
        f"--namespace {cluster.dra.namespace} --create-namespace --values {shlex.quote(values_path)}"
    )


def repository_command(cluster: Cluster) -> str | None:
    """The ``helm repo add`` a chart from NVIDIA's repository needs first (None for an OCI chart)."""
    if cluster.dra.release.oci:
        return None
    return f"helm repo add {NGC_REPOSITORY_NAME} {NGC_REPOSITORY} && helm repo update"


def driver_values_file(cluster: Cluster) -> Artifact:
    release = cluster.dra.release
    notes = [f"Values for the NVIDIA DRA driver chart {release.chart} {release.version}."]
    if cluster.workloads:
        notes += [
            "Create the namespaces the claims go into (the cluster folder does not):",
            namespaces_command([w.namespace for w in cluster.workloads]),
        ]
    notes.append("Apply the cluster folder (kubectl apply -k .: the DeviceClasses and claims), then:")
    repository = repository_command(cluster)
    if repository is not None:
        notes.append(repository)
    notes += [
        helm_upgrade_command(cluster),
        f"The kubelet plugin runs on nodes labelled {KUBELET_PLUGIN_LABEL}=true (node-labels.yaml), and only there.",
    ]
    return Artifact(VALUES_FILE, "dra-driver-values", (driver_values(cluster),), tuple(notes))
