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

from typing import Any

from ....model.backends.dra import KUBELET_PLUGIN_LABEL, dra_options, gates, resource_api_version
from ....model.fleet import Cluster
from ....shell import lines_in, text_in
from ...artifact import Artifact
from ...kustomization import apply_folder, namespaces_command
from ...releases import ChartRelease
from ...tolerations import operand_tolerations

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
        "kubeletPlugin": kubelet_plugin_values(cluster),
    }


def kubelet_plugin_values(cluster: Cluster) -> dict[str, Any]:
    """The kubelet plugin runs on the pools' nodes, tolerating their taints (merged with the chart's default)."""
    plugin: dict[str, Any] = {"nodeSelector": {KUBELET_PLUGIN_LABEL: "true"}}
    tolerations = operand_tolerations(cluster, dra_options(cluster).release.kubelet_plugin_tolerations)
    if tolerations is not None:
        plugin["tolerations"] = tolerations
    return plugin


def dra_release(cluster: Cluster) -> ChartRelease:
    """The driver's Helm release: the chart pinned by ``dra.version``, from NVIDIA's repository (25.12.0) or by OCI
    from registry.k8s.io (0.4.x); its kubelet plugin is what rolls out."""
    release = dra_options(cluster).release
    return ChartRelease(
        name=RELEASE_NAME,
        chart=release.chart,
        repository_name=release.repository_name,
        repository_url=release.repository,
        version=release.version,
        namespace=dra_options(cluster).namespace,
        values_file=VALUES_FILE,
        values=driver_values(cluster),
        rollouts=(KUBELET_PLUGIN_DAEMONSET,),
    )


def driver_values_file(cluster: Cluster) -> Artifact:
    release = dra_release(cluster)
    notes = [f"Values for the NVIDIA DRA driver chart {release.chart} {release.version}."]
    if cluster.workloads:
        notes += [
            "Create the namespaces the claims go into (the cluster folder does not):",
            text_in(cluster.kube_context, namespaces_command([w.namespace for w in cluster.workloads])),
        ]
    notes += [
        f"Apply the cluster folder ({apply_folder(cluster.kube_context)}: the DeviceClasses and claims), then:",
        *lines_in(cluster.kube_context, release.install_commands()),
        f"The kubelet plugin runs on nodes labelled {KUBELET_PLUGIN_LABEL}=true (node-labels.yaml), and only there.",
    ]
    return Artifact(VALUES_FILE, "dra-driver-values", (release.values,), tuple(notes))
