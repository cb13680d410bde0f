"""GPU Operator settings: the Helm values file and the equivalent ClusterPolicy merge patch."""

from __future__ import annotations

from typing import Any

from ..catalog import ALL_DISABLED
from ..model.fleet import Cluster
from .artifact import DEVICE_PLUGIN_CONFIGMAP, MIG_PARTED_CONFIGMAP, Artifact
from .plan import WHOLE_GPU_KEY, ClusterPlan

MPS_ROOT = "/run/nvidia/mps"
CHART = "gpu-operator"
HELM_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
HELM_REPOSITORY_NAME = "nvidia"
RELEASE_NAME = "gpu-operator"
VALUES_FILE = "gpu-operator-values.yaml"


def helm_upgrade_command(cluster: Cluster, values_path: str = VALUES_FILE, *, create_namespace: bool = False) -> str:
    """The ``helm upgrade --install`` that installs the pinned chart with the cluster's values file."""
    operator = cluster.operator
    return (
        f"helm upgrade --install {RELEASE_NAME} {HELM_REPOSITORY_NAME}/{CHART} --namespace {operator.namespace} "
        + ("--create-namespace " if create_namespace else "")
        + f"--version {operator.release.version} --values {values_path}"
    )


def operator_settings(cluster: Cluster, plan: ClusterPlan) -> dict[str, Any]:
    """The settings gpustack-gen owns, keyed as in the chart values (and, nearly, the ClusterPolicy spec)."""
    operator = cluster.operator
    cdi: dict[str, Any] = {"enabled": operator.cdi_enabled}
    if operator.cdi_default is not None:
        cdi["default"] = operator.cdi_default
    if operator.nri_plugin_enabled is not None:
        cdi["nriPluginEnabled"] = operator.nri_plugin_enabled
    driver: dict[str, Any] = {"enabled": operator.driver_enabled}
    if operator.driver_version:
        driver["version"] = operator.driver_version
    settings: dict[str, Any] = {
        "cdi": cdi,
        "driver": driver,
        "toolkit": {"enabled": operator.toolkit_enabled},
        "mig": {"strategy": cluster.mig_strategy},
    }
    if plan.uses_device_plugin_config:
        settings["devicePlugin"] = {"config": {"name": DEVICE_PLUGIN_CONFIGMAP, "default": WHOLE_GPU_KEY}}
    if plan.uses_mig_parted_config:
        settings["migManager"] = {"config": {"name": MIG_PARTED_CONFIGMAP, "default": ALL_DISABLED}}
    return settings


def helm_values(cluster: Cluster, plan: ClusterPlan) -> Artifact:
    operator = cluster.operator
    return Artifact(
        VALUES_FILE,
        "helm-values",
        (operator_settings(cluster, plan),),
        (
            f"Values for chart {HELM_REPOSITORY_NAME}/{CHART} {operator.release.version}. Create the namespace and the",
            "ConfigMaps first (kubectl apply -k .), then:",
            f"helm repo add {HELM_REPOSITORY_NAME} {HELM_REPOSITORY} && helm repo update",
            helm_upgrade_command(cluster),
        ),
    )


def clusterpolicy_patch(cluster: Cluster, plan: ClusterPlan) -> Artifact:
    """The settings as a JSON merge patch of the ClusterPolicy ``spec``.

    A merge patch only changes what it names, so config references gpustack-gen owns but no longer uses
    are written as ``null`` (deleted): otherwise turning sharing off would leave the ClusterPolicy
    pointing at a ConfigMap nothing maintains any more.
    """
    spec = operator_settings(cluster, plan)
    if not plan.uses_device_plugin_config:
        spec["devicePlugin"] = {"config": {"name": None, "default": None}}
    if not plan.uses_mig_parted_config:
        spec["migManager"] = {"config": {"name": None}}
    if plan.uses_mps:
        # The chart never renders devicePlugin.mps.root; only the ClusterPolicy carries it.
        spec["devicePlugin"]["mps"] = {"root": MPS_ROOT}
    return Artifact(
        "clusterpolicy-patch.yaml",
        "clusterpolicy-patch",
        ({"spec": spec},),
        (
            "Merge patch for a cluster where the GPU Operator is already installed:",
            "kubectl patch clusterpolicies.nvidia.com/cluster-policy --type merge --patch-file clusterpolicy-patch.yaml",
        ),
    )
