"""``hami-values.yaml``: the HAMi chart's values, and the release that installs them.

Keys are checked against the pinned chart's ``values.yaml`` (``validate/backends/hami.py``; a conformance test
holds the table against ``../shared/upstream/hami/<version>/charts/hami/values.yaml``).
"""

from __future__ import annotations

import json
from typing import Any

from ....model.backends.hami import (
    NODE_LABEL,
    NODE_LABEL_VALUE,
    RESOURCE_CORES,
    RESOURCE_GPU,
    RESOURCE_MEMORY,
    RESOURCE_MEMORY_PERCENTAGE,
    cluster_settings,
    hami_options,
    named_pools,
    node_names,
    node_settings,
    scheduler_policy,
)
from ....model.fleet import Cluster
from ....shell import lines_in
from ....versions import Toleration
from ....versions.hami import HAMI_CHART, HAMI_RELEASE, HAMI_REPOSITORY, HAMI_REPOSITORY_NAME
from ...artifact import Artifact
from ...releases import ChartRelease
from ...tolerations import operand_tolerations

VALUES_FILE = "hami-values.yaml"
RUNTIME_CLASS = "nvidia"  # the RuntimeClass the GPU Operator creates (operator.runtimeClass, CRD default nvidia)
DEVICE_PLUGIN_DAEMONSET = "daemonset/hami-device-plugin"
SCHEDULER_DEPLOYMENT = "deployment/hami-scheduler"
# devicePlugin.tolerations: none by default, rendered only when set (Project-HAMi/HAMi@v2.10.0
# charts/hami/values.yaml:421; templates/device-plugin/daemonsetnvidia.yaml:260-262).
PLUGIN_TOLERATIONS: tuple[Toleration, ...] = ()
OPERATING_MODE = "hami-core"  # HAMi's own vGPUs, not dynamic MIG (web docs/userguide/configure.md)


def needs_runtime_class(cluster: Cluster) -> bool:
    """From GPU Operator v25.10.0, CDI is the default and nvidia no longer the default runtime: HAMi's device
    plugin and its workloads need the nvidia RuntimeClass (web docs/troubleshooting/troubleshooting.md)."""
    operator = cluster.operator
    return operator.release.at_least("v25.10.0") and operator.cdi_enabled


def node_config(cluster: Cluster) -> str:
    """``devicePlugin.nodeConfiguration.config``: an entry per node of the pools that name their nodes.

    The device plugin applies an entry whose ``name`` equals its node's name (server.go readFromConfigFile).
    Always written, so that the chart's example entry (node "your-node-name") never ships.
    """
    entries = []
    for pool in named_pools(cluster):
        settings = node_settings(pool)
        for name in node_names(pool):
            entries.append(
                {
                    "name": name,
                    "operatingmode": OPERATING_MODE,
                    "devicesplitcount": settings.split,
                    "devicememoryscaling": settings.memory_scaling_value,
                    "devicecorescaling": 1,
                }
            )
    return json.dumps({"nodeconfig": entries}, indent=2)


def waits_for_toolkit(cluster: Cluster) -> bool:
    """Where the Operator runs the container toolkit, HAMi's device plugin waits for it: an init container until
    /run/nvidia/validations/toolkit-ready exists (daemonsetnvidia.yaml toolkit-validation)."""
    return cluster.operator.toolkit_enabled


def hami_values(cluster: Cluster) -> dict[str, Any]:
    settings = cluster_settings(cluster)
    plugin: dict[str, Any] = {
        "deviceSplitCount": settings.split,
        "deviceMemoryScaling": settings.memory_scaling_value,
        "nvidiaNodeSelector": {NODE_LABEL: NODE_LABEL_VALUE},
        "nodeConfiguration": {"config": node_config(cluster)},
    }
    if needs_runtime_class(cluster):
        plugin["runtimeClassName"] = RUNTIME_CLASS
    if waits_for_toolkit(cluster):
        plugin["gpuOperatorToolkitReady"] = {"enabled": True}
    tolerations = operand_tolerations(cluster, PLUGIN_TOLERATIONS)
    if tolerations is not None:  # else the plugin, and with it every vGPU, stays off tainted pools
        plugin["tolerations"] = tolerations
    values: dict[str, Any] = {
        # Pinned to the names the workload fragments ask for, whatever the chart's defaults become.
        "resourceName": RESOURCE_GPU,
        "resourceMem": RESOURCE_MEMORY,
        "resourceMemPercentage": RESOURCE_MEMORY_PERCENTAGE,
        "resourceCores": RESOURCE_CORES,
        "devicePlugin": plugin,
    }
    registry, _, repository = hami_options(cluster).scheduler_image.partition("/")
    scheduler: dict[str, Any] = {"kubeScheduler": {"image": {"registry": registry, "repository": repository}}}
    policy = scheduler_policy(cluster)
    if policy is not None:
        scheduler["defaultSchedulerPolicy"] = {"nodeSchedulerPolicy": policy, "gpuSchedulerPolicy": policy}
    values["scheduler"] = scheduler  # the image, else the chart's mirror registry
    return values


def hami_release(cluster: Cluster) -> ChartRelease:
    return ChartRelease(
        name=HAMI_RELEASE,
        chart=HAMI_CHART,
        repository_name=HAMI_REPOSITORY_NAME,
        repository_url=HAMI_REPOSITORY,
        version=hami_options(cluster).release.version,
        namespace=hami_options(cluster).namespace,
        values_file=VALUES_FILE,
        values=hami_values(cluster),
        rollouts=(DEVICE_PLUGIN_DAEMONSET, SCHEDULER_DEPLOYMENT),
    )


def values_artifact(cluster: Cluster) -> Artifact:
    release = hami_release(cluster)
    notes = [
        f"Values for chart {release.reference} {release.version}: HAMi's scheduler, admission webhook and device",
        "plugin. Install it after the GPU Operator, whose own device plugin this cluster turns off:",
        *lines_in(cluster.kube_context, release.install_commands()),
        f"Its device plugin runs on nodes labelled {NODE_LABEL}={NODE_LABEL_VALUE} (node-labels.yaml). Never --reuse-values.",
        f"Its scheduler runs {hami_options(cluster).scheduler_image}, tagged with the cluster's Kubernetes version when Helm renders",
        "it (hami.schedulerImage; the chart's own default is a mirror registry).",
    ]
    if needs_runtime_class(cluster):
        notes.append(
            f"runtimeClassName {RUNTIME_CLASS}: from GPU Operator v25.10.0 nvidia is no longer the default runtime."
        )
    return Artifact(VALUES_FILE, "hami-values", (release.values,), tuple(notes))
