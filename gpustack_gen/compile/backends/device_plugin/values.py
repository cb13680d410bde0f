"""``nvidia-device-plugin-values.yaml``: the standalone chart's values, and the release that installs them.

Keys are checked against the pinned chart's ``values.yaml`` (``validate/backends/device_plugin.py``; a conformance
test holds the table against ``../shared/upstream/device-plugin/k8s-device-plugin-v<version>-helm-values.yaml``).
Line numbers below are of chart v0.17.4 (``../shared/research/standalone-plugin.md``).
"""

from __future__ import annotations

import copy
from typing import Any

from ....model.backends.device_plugin import SWITCH_LABEL, device_plugin_options, plugin_daemonset
from ....model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, Cluster
from ....shell import lines_in
from ....versions.device_plugin import (
    DEVICE_PLUGIN_CHART,
    DEVICE_PLUGIN_REPOSITORY,
    DEVICE_PLUGIN_REPOSITORY_NAME,
)
from ...artifact import DEVICE_PLUGIN_LABEL, Artifact, EmbeddedYaml
from ...config_names import config_names
from ...releases import ChartRelease
from ...tolerations import cluster_taints, tolerates, toleration

VALUES_FILE = "nvidia-device-plugin-values.yaml"
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
MPS_CAPABLE_LABEL = "nvidia.com/mps.capable"
# The chart's default node affinity, three OR'ed terms (values.yaml:63-84): NFD's discrete-GPU label, NFD's Tegra
# CPU vendor, and a label forcing a node (which node-labels.yaml sets, as nothing here runs NFD).
GPU_NODE_TERMS = (
    ("feature.node.kubernetes.io/pci-10de.present", "true"),
    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
    (GPU_PRESENT_LABEL, "true"),
)
# The chart's default tolerations (values.yaml:85-93), kept because setting the list replaces them.
CHART_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)
# Without a runtime class the plugin names devices in NVIDIA_VISIBLE_DEVICES for the hosts' NVIDIA runtime or OCI
# hook (README.md:308-330); the CDI strategies need the NVIDIA runtime as a non-default runtime and a RuntimeClass
# (docs/cdi.md:14-34), which the move to the GPU Operator sets up instead.
DEVICE_LIST_STRATEGY = "envvar"


def affinity() -> dict[str, Any]:
    """The chart's terms, each also requiring that the node's off switch is not ``off`` (terms are OR'ed, so every
    term needs it): the move to the GPU Operator turns the plugin off one node group at a time with a label, without
    a template change that would restart every plugin pod."""
    terms = [
        {
            "matchExpressions": [
                {"key": key, "operator": "In", "values": [value]},
                {"key": SWITCH_LABEL, "operator": "NotIn", "values": ["off"]},
            ]
        }
        for key, value in GPU_NODE_TERMS
    ]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def tolerations(cluster: Cluster) -> list[dict[str, Any]]:
    default = [dict(entry) for entry in CHART_TOLERATIONS]
    missing = [t for t in cluster_taints(cluster) if not any(tolerates(entry, t) for entry in default)]
    return [*default, *(toleration(t) for t in missing)]


def device_plugin_values(cluster: Cluster) -> dict[str, Any]:
    names = config_names(cluster)
    options = device_plugin_options(cluster)
    configs = {key: EmbeddedYaml(copy.deepcopy(config)) for key, config in names.device_plugin_configs.items()}
    values: dict[str, Any] = {
        "config": {"map": configs, "default": DEFAULT_DEVICE_PLUGIN_KEY},
        "deviceListStrategy": DEVICE_LIST_STRATEGY,
        "affinity": affinity(),
        "tolerations": tolerations(cluster),
    }
    if options.runtime_class_name is not None:
        values["runtimeClassName"] = options.runtime_class_name
    return values


def device_plugin_release(cluster: Cluster) -> ChartRelease:
    options = device_plugin_options(cluster)
    return ChartRelease(
        name=options.release_name,
        chart=DEVICE_PLUGIN_CHART,
        repository_name=DEVICE_PLUGIN_REPOSITORY_NAME,
        repository_url=DEVICE_PLUGIN_REPOSITORY,
        version=options.release.version,
        namespace=options.namespace,
        values_file=VALUES_FILE,
        values=device_plugin_values(cluster),
        rollouts=(f"daemonset/{plugin_daemonset(cluster)}",),
    )


def values_artifact(cluster: Cluster) -> Artifact:
    release = device_plugin_release(cluster)
    names = config_names(cluster)
    notes = [
        f"Values for chart {release.reference} {release.version}: the NVIDIA device plugin alone, on hosts whose",
        "driver and container toolkit are installed outside Kubernetes. Install or upgrade it with",
        *lines_in(cluster.kube_context, release.install_commands()),
        f"config.map: one config per pool (its nodes' {DEVICE_PLUGIN_LABEL} label) and {DEFAULT_DEVICE_PLUGIN_KEY}, what",
        f"GPU nodes without the label get: {names.default_text(cluster)}. A changed config rolls every plugin pod",
        "(the chart's checksum/config annotation); never --reuse-values.",
        f"The plugin runs on GPU nodes ({GPU_PRESENT_LABEL}=true, node-labels.yaml) whose {SWITCH_LABEL} label is",
        "not off: the move to the GPU Operator switches it off one node group at a time (gpustack-gen plan).",
        f"deviceListStrategy {DEVICE_LIST_STRATEGY}: the hosts' NVIDIA runtime or OCI hook hands the GPUs to containers. On",
        "CRI-O a legacy OCI hook is what failed after the Kubernetes 1.28 -> 1.29 upgrade of the write-up: move to",
        "the GPU Operator with CDI (backend gpu-operator) rather than upgrade Kubernetes first.",
    ]
    return Artifact(VALUES_FILE, "device-plugin-values", (release.values,), tuple(notes))
