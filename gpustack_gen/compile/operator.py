"""GPU Operator settings: the Helm values file and the equivalent ClusterPolicy merge patch."""

from __future__ import annotations

from typing import Any

from ..model.fleet import Cluster, DriverUpgrade
from ..shell import Command, Script, helm, kubectl, lines_in, text_in
from ..versions import GPU_TAINT_TOLERATION
from .artifact import DEVICE_PLUGIN_DAEMONSET, GFD_DAEMONSET, Artifact
from .backends import backend_of
from .kustomization import apply_folder
from .releases import repo_add_command
from .tolerations import operand_tolerations

CHART = "gpu-operator"
HELM_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
HELM_REPOSITORY_NAME = "nvidia"
RELEASE_NAME = "gpu-operator"
VALUES_FILE = "gpu-operator-values.yaml"
OPERAND_TOLERATIONS = (GPU_TAINT_TOLERATION,)  # daemonsets.tolerations by default, in every known chart


def operator_repo_add() -> Script:
    return repo_add_command(HELM_REPOSITORY_NAME, HELM_REPOSITORY)


def helm_upgrade_command(
    cluster: Cluster,
    values_path: str = VALUES_FILE,
    *,
    create_namespace: bool = False,
    user_values: tuple[str, ...] = (),
    new_chart_version: bool = False,
) -> Command:
    """The ``helm upgrade --install`` of the pinned chart with the cluster's values file.

    The user's own values files come first and gpustack-gen's last, so ours win where both set a key and
    theirs are kept (a bare ``--values`` would drop them). Never ``--reuse-values``: across chart versions it
    keeps the old chart's defaults (old operand images, no new keys; helm ``pkg/action/upgrade.go``
    ``reuseValues``). A new chart version adds ``--disable-openapi-validation``, which the chart's CRD
    upgrade hook needs (``operator.upgradeCRD`` in its values.yaml).
    """
    operator = cluster.operator
    return helm(
        "upgrade", "--install", RELEASE_NAME, f"{HELM_REPOSITORY_NAME}/{CHART}", "--namespace", operator.namespace,
        *(("--create-namespace",) if create_namespace else ()),
        "--version", operator.release.version,
        *(("--disable-openapi-validation",) if new_chart_version else ()),
        *(w for path in user_values for w in ("--values", path)),
        "--values", values_path,
    )  # fmt: skip


def patch_command(patch_path: str = "clusterpolicy-patch.yaml") -> Command:
    """The merge patch of an installed ClusterPolicy (Operators not installed with Helm)."""
    return kubectl("patch", "clusterpolicies.nvidia.com/cluster-policy", "--type", "merge", "--patch-file", patch_path)


def driver_upgrade_policy(upgrade: DriverUpgrade) -> dict[str, Any]:
    """``driver.upgradePolicy``, keys every chart version in the table has (gpu-operator
    ``deployments/gpu-operator/values.yaml``: v23.9.2 ``:151-182``, v25.3.3 ``:160-191``, v26.7.0 ``:167-198``).

    The controller deletes GPU pods through kubectl's drain filters with ``deleteEmptyDir`` and ``force``; a pod
    they refuse sends the node to ``upgrade-failed``, which counts as in progress, so with
    ``maxParallelUpgrades: 1`` no other node starts (k8s-operator-libs@7d667fbaa7ac ``pkg/upgrade/pod_manager.go:149-203``,
    ``upgrade_state.go:1040-1085``)."""
    return {
        "autoUpgrade": True,
        "maxParallelUpgrades": upgrade.max_parallel_upgrades,
        "gpuPodDeletion": {"deleteEmptyDir": upgrade.delete_empty_dir, "force": upgrade.force},
    }


def operator_settings(cluster: Cluster) -> dict[str, Any]:
    """The settings gpustack-gen owns, keyed as in the chart values (and, nearly, the ClusterPolicy spec):
    the driver, toolkit and CDI every backend needs, and what the cluster's backend sets on top."""
    operator = cluster.operator
    cdi: dict[str, Any] = {"enabled": operator.cdi_enabled}
    if operator.cdi_default is not None:
        cdi["default"] = operator.cdi_default
    if operator.nri_plugin_enabled is not None:
        cdi["nriPluginEnabled"] = operator.nri_plugin_enabled
    driver: dict[str, Any] = {"enabled": operator.driver_enabled}
    if operator.driver_version:
        driver["version"] = operator.driver_version
    if operator.driver_enabled:
        driver["upgradePolicy"] = driver_upgrade_policy(operator.driver_upgrade)
    settings: dict[str, Any] = {
        "cdi": cdi,
        "driver": driver,
        "toolkit": {"enabled": operator.toolkit_enabled},
        "mig": {"strategy": cluster.mig_strategy},
    }
    tolerations = operand_tolerations(cluster, OPERAND_TOLERATIONS)
    if tolerations is not None:  # the operands run on every GPU node, whatever its pool's taints
        settings["daemonsets"] = {"tolerations": tolerations}
    for key, value in backend_of(cluster).operator_values(cluster).items():
        settings[key] = {**settings.get(key, {}), **value}
    return settings


def operand_daemonsets(cluster: Cluster) -> tuple[str, ...]:
    """The Operator's DaemonSets that advertise and label the GPUs: its device plugin where the settings keep
    it on (a backend such as HAMi turns it off), and GPU Feature Discovery."""
    plugin = operator_settings(cluster).get("devicePlugin", {}).get("enabled", True)
    return (DEVICE_PLUGIN_DAEMONSET, GFD_DAEMONSET) if plugin else (GFD_DAEMONSET,)


def helm_values(cluster: Cluster) -> Artifact:
    operator = cluster.operator
    return Artifact(
        VALUES_FILE,
        "helm-values",
        (operator_settings(cluster),),
        (
            f"Values for chart {HELM_REPOSITORY_NAME}/{CHART} {operator.release.version}. Create the namespace and the",
            f"ConfigMaps first ({apply_folder(cluster.kube_context)}), then:",
            *lines_in(cluster.kube_context, operator_repo_add()),
            text_in(cluster.kube_context, helm_upgrade_command(cluster)),
            "Keep values of your own for the release? Pass them first (--values yours.yaml --values "
            f"{VALUES_FILE}), or list",
            "them in the fleet's operator.valuesFiles; never --reuse-values. gpustack-gen plan orders upgrades.",
        ),
    )


def clusterpolicy_patch(cluster: Cluster) -> Artifact:
    """The settings as a JSON merge patch of the ClusterPolicy ``spec``.

    A merge patch only changes what it names, so what the values leave to the chart is written out: the
    driver version is the pinned one or the chart's default (an omitted field would keep whatever the
    ClusterPolicy had), and the backend deletes with ``null`` what it no longer uses.
    """
    spec = operator_settings(cluster)
    policy = spec["driver"].get("upgradePolicy")
    if policy is not None:
        spec["driver"]["upgradePolicy"] = {
            ("podDeletion" if key == "gpuPodDeletion" else key): value for key, value in policy.items()
        }
    notes = [
        "Merge patch for a cluster where the GPU Operator is already installed:",
        text_in(cluster.kube_context, patch_command()),
    ]
    operator = cluster.operator
    if operator.driver_enabled and operator.driver_version is None:
        if operator.release.driver is not None:
            spec["driver"]["version"] = operator.release.driver
        else:
            notes.append(
                f"driver.version: the default driver of chart {operator.release.version} is not in gpustack-gen's "
                "table, so this patch leaves the ClusterPolicy's as it is; pin operator.driver.version to set it."
            )
    for key, value in backend_of(cluster).patch_only(cluster).items():
        spec[key] = {**spec.get(key, {}), **value}
    return Artifact("clusterpolicy-patch.yaml", "clusterpolicy-patch", ({"spec": spec},), tuple(notes))
