"""The GPU Operator's device plugin: why a node advertises what it does, weighed by what the cluster shows.

The causes and their order come from how the Operator's components fail (gpu-operator v25.3.3 and v26.7.0,
k8s-device-plugin v0.17.4 and v0.20.0):

- The config-manager reads the node's ``nvidia.com/device-plugin.config`` label, else
  ``devicePlugin.config.default``; a key missing from the ConfigMap makes it exit 1
  (``cmd/config-manager/main.go``: "specified config X does not exist"). As the init container it keeps
  the plugin from starting; as the sidecar it leaves the plugin on its old config.
- The plugin reads its config only at start or on SIGHUP from the config-manager, which acts on label
  changes only: a changed ConfigMap takes effect at the next restart (``cmd/nvidia-device-plugin/main.go``).
- A plugin that cannot load NVML exits (the Operator sets ``FAIL_ON_INIT_ERROR``); while it is gone the
  kubelet keeps the resource's capacity and drops its allocatable to 0. On CRI-O the toolkit's runtime
  hook must be in CRI-O's hooks dir, or CDI on: otherwise containers get no driver ("error executing
  hook", "could not load NVML library"; NVIDIA/gpu-operator#448, #1598).
- The mig-manager pauses the operands of a node it repartitions with
  ``nvidia.com/gpu.deploy.device-plugin=paused-for-mig-change``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...compile.artifact import (
    DEVICE_PLUGIN_CONFIGMAP,
    DEVICE_PLUGIN_DAEMONSET,
    DEVICE_PLUGIN_LABEL,
    MIG_CONFIG_LABEL,
    MIG_CONFIG_STATE_LABEL,
    MIG_MANAGER_DAEMONSET,
    device_plugin_daemonsets,
)
from ...compile.config_names import config_names
from ...model.backends.gpu_operator import NAME, RESOURCE_GPU, RESOURCE_GPU_SHARED
from ...model.fleet import DEFAULT_DEVICE_PLUGIN_KEY
from .. import commands
from ..in_progress import PAUSED
from ..model import Fallback
from ..observed import NVIDIA_RESOURCE_PREFIX, advertised, count
from ..pod_failures import diagnose, how_it_fails, show_command
from .nvidia_plugin import default_key_fallback

if TYPE_CHECKING:
    from ...k8s_state import ContainerState, Pod
    from ...model.fleet import Cluster
    from ..model import NodeView, Registration
    from ..state import StatePart

__all__ = [
    "NAME",
    "REGISTRATION_PARTS",
    "capacity_causes",
    "daemonsets",
    "not_advertised_causes",
    "registration",
    "rollout_role",
    "state_parts",
    "unlabelled",
    "unwanted_daemonsets",
]

PLUGIN = DEVICE_PLUGIN_DAEMONSET.removeprefix("daemonset/")
DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"
REGISTRATION_PARTS: tuple[str, ...] = ()  # the node's allocatable is the whole record
_MAX_CAUSES = 3
_RUNTIME_NAMES = {"cri-o": "CRI-O", "containerd": "containerd"}


def daemonsets(cluster: Cluster) -> tuple[str, ...]:
    names = config_names(cluster)
    sets = device_plugin_daemonsets(names.uses_mps)
    if names.uses_mig_parted_config:
        sets += (MIG_MANAGER_DAEMONSET,)
    return tuple(name.removeprefix("daemonset/") for name in sets)


def unwanted_daemonsets(cluster: Cluster) -> dict[str, str]:
    return {}


def state_parts(cluster: Cluster) -> tuple[StatePart, ...]:
    return ()


def registration(view: NodeView) -> Registration | None:
    """The device plugin registers with the kubelet only: the node's allocatable is the whole record."""
    return None


def rollout_role(rollout: str) -> str:
    return ""  # the GPU Operator installs no release of its own beside it


def unlabelled(view: NodeView, label: str) -> Fallback | None:
    """A node without the device-plugin label gets the ``any`` key; nothing stands in for the MIG label."""
    if label != DEVICE_PLUGIN_LABEL:
        return None
    return default_key_fallback(view)


def not_advertised_causes(view: NodeView) -> tuple[str, ...]:
    """Causes seen in the cluster first, then the usual ones in the order they are likely on this cluster."""
    cluster = view.expected.cluster
    namespace = cluster.operator.namespace
    seen: list[str] = []
    pod = _plugin_pod(view)
    runtime: str | None = _runtime_cause(view)
    if view.node.labels.get(DEPLOY_LABEL) == PAUSED:
        # The mig-manager took the plugin away on purpose: nothing about the runtime applies while it is paused.
        return (
            f"the node's {DEPLOY_LABEL} label is {PAUSED}: the mig-manager is repartitioning it and runs the plugin "
            "again when it is done (see mig-state)",
        )
    if view.node.labels.get(DEPLOY_LABEL) == "false":
        seen.append(f"the node's {DEPLOY_LABEL} label is false: the Operator runs no plugin there")
    missing_key = _missing_key(view)
    if pod is not None:
        events = view.state.events_of(pod)
        init = _failing(pod, init=True)
        if init is not None:
            diagnosis = diagnose(init, events, _runtime(view))
            seen.append(
                f"{_container_text(init)} of pod {pod.name} {how_it_fails(init)}: "
                + (diagnosis.cause if diagnosis else missing_key or "the config label or the ConfigMap is wrong")
                + f"; {show_command(cluster, pod, init, namespace)}"
            )
            missing_key = None
        elif _waits_for_toolkit(pod):
            seen.append(
                f"the container toolkit is not ready on the node: init container {TOOLKIT_VALIDATION} of pod {pod.name} "
                "waits for it; " + commands.pods_on(cluster, namespace, view.node.name, "-l", f"app={TOOLKIT_APP}")
            )
        main = _failing(pod, init=False)
        if main is not None:
            diagnosis = diagnose(main, events, _runtime(view))
            cause = runtime if diagnosis is None else diagnosis.cause
            if diagnosis is not None and diagnosis.sign == "nvml":
                cause = f"{diagnosis.cause}, why: {runtime}"  # the runtime is what hands the driver over
            seen.append(
                f"{_container_text(main)} of pod {pod.name} {how_it_fails(main)}: {cause}; "
                f"{show_command(cluster, pod, main, namespace)}"
            )
            runtime = None  # named, or ruled out by what the kubelet said
        if init is None and main is None and pod.ready:
            seen.append(
                f"pod {pod.name} runs and is ready, yet registers no device: its log says why; "
                + commands.logs(cluster, namespace, pod.name, "nvidia-device-plugin")
            )
    elif view.state.pods is not None:
        seen.append(
            f"the device plugin is not running on the node: no {PLUGIN} pod there; "
            + commands.describe(cluster, namespace, "daemonset", PLUGIN)
        )
    if missing_key is not None and view.state.configmaps is not None:
        seen.append(missing_key)
        missing_key = None
    resource = next(iter(view.pool.resources), RESOURCE_GPU)
    registered = count(view.node.capacity.get(resource)) or 0
    if registered and not seen:
        seen.append(
            f"capacity {registered}, allocatable 0: the plugin registered and then went away (restarting or crashing); "
            + commands.pods_on(cluster, namespace, view.node.name)
        )
    others = [f"{k} {advertised(view.node, k)}" for k in sorted(view.node.allocatable) if _other_resource(view, k)]
    if others:
        seen.append(f"it advertises {', '.join(others)} instead: the plugin runs another config")
    usual = []
    if view.state.pods is None:
        usual.append(
            f"the device plugin is not running on the node: {commands.pods_on(cluster, namespace, view.node.name)}"
        )
    if runtime is not None:
        usual.insert(0 if _cri_o_without_cdi(view) else len(usual), runtime)
    if missing_key is not None or (view.state.configmaps is None and view.state.pods is None):
        usual.append(
            missing_key
            or f"the node's {DEVICE_PLUGIN_LABEL} label names a key missing from ConfigMap {DEVICE_PLUGIN_CONFIGMAP}"
        )
    return tuple((seen + usual)[:_MAX_CAUSES])


def capacity_causes(view: NodeView, resource: str, actual: int) -> tuple[str, ...]:
    """Why the node advertises ``actual`` of ``resource``, not what the pool says."""
    expected = view.pool.resources[resource]
    pool = view.pool.pool
    namespace = view.expected.cluster.operator.namespace
    causes: list[str] = []
    gpus = count(view.node.labels.get("nvidia.com/gpu.count"))
    if gpus is not None and gpus != pool.gpus_per_node and actual == expected // pool.gpus_per_node * gpus:
        causes.append(
            f"the node has {gpus} GPUs (nvidia.com/gpu.count), the pool says gpusPerNode {pool.gpus_per_node}"
        )
    if pool.sharing.strategy == "mig":
        state = view.node.labels.get(MIG_CONFIG_STATE_LABEL)
        causes.append(
            f"the node's MIG layout is not the pool's (nvidia.com/mig.config={view.node.labels.get(MIG_CONFIG_LABEL)}, "
            f"state {state}): see mig-state"
        )
    policy = view.state.clusterpolicy
    name = _get(policy.spec, "devicePlugin", "config", "name") if policy is not None else DEVICE_PLUGIN_CONFIGMAP
    if name != DEVICE_PLUGIN_CONFIGMAP:
        causes.append(
            f"the ClusterPolicy's devicePlugin.config.name is {name or 'not set'}, not {DEVICE_PLUGIN_CONFIGMAP}: the "
            "plugin does not read the rendered configs; apply clusterpolicy-patch.yaml (or helm upgrade)"
        )
    key, key_source = _config_key(view)
    config = _observed_config(view, key)
    restart = commands.run(
        view.expected.cluster,
        "rollout", "restart", "-n", namespace, *device_plugin_daemonsets(config_names(view.expected.cluster).uses_mps),
    )  # fmt: skip
    if key is not None and config is not None:
        per_node = _per_gpu(config).get(resource, 0) * (gpus or pool.gpus_per_node)
        if key_source != "label" and key != pool.name:
            causes.append(
                f"the node has no {DEVICE_PLUGIN_LABEL} label and gets key {key} ({per_node}); label it {pool.name}"
            )
        elif key != pool.name:
            causes.append(f"its {DEVICE_PLUGIN_LABEL} label names key {key} ({per_node}), not {pool.name}")
        if per_node != expected and per_node == actual:
            causes.append(
                f"ConfigMap key {key} holds {per_node} per node: apply the rendered ConfigMap, then {restart}"
            )
        elif per_node == expected:
            replicas = view.node.labels.get(REPLICAS_LABEL)
            evidence = f" (GFD still labels it {REPLICAS_LABEL}={replicas})" if replicas is not None else ""
            causes.append(
                f"the plugin has not reloaded since ConfigMap {DEVICE_PLUGIN_CONFIGMAP} changed: it reads key {key} only "
                f"when it starts{evidence}; {restart}"
            )
    elif key is not None and view.state.configmaps is not None:
        causes.append(_missing_key(view) or f"ConfigMap {DEVICE_PLUGIN_CONFIGMAP} is not in the Operator's namespace")
    else:
        per_gpu_one = actual == (gpus or pool.gpus_per_node)
        label_cause = (
            f"the node lacks its {DEVICE_PLUGIN_LABEL}={pool.name} label and gets the default config, or the plugin "
            "runs without the ConfigMap"
        )
        restart_cause = f"the plugin has not been restarted since the ConfigMap changed: {restart}"
        causes += [label_cause, restart_cause] if per_gpu_one else [restart_cause, label_cause]
    return tuple(causes[:_MAX_CAUSES])


# --- evidence -------------------------------------------------------------------------------------


def _get(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _plugin_pod(view: NodeView) -> Pod | None:
    return next((p for p in view.state.pods_on(view.node.name) if p.owner == PLUGIN), None)


TOOLKIT_VALIDATION = "toolkit-validation"  # the plugin's init container that waits for the toolkit's ready file
TOOLKIT_APP = "nvidia-container-toolkit-daemonset"


def _waits_for_toolkit(pod: Pod) -> bool:
    return any(c.init and c.name == TOOLKIT_VALIDATION and not c.ready for c in pod.containers)


# Waiting reasons of a container that has not failed (yet).
_STARTING = frozenset({"PodInitializing", "ContainerCreating"})


def _failing(pod: Pod, *, init: bool) -> ContainerState | None:
    """The first container of that kind (init or not) that waits after a failure or last exited with an error."""
    for container in pod.containers:
        if container.init != init or container.ready:
            continue
        if (container.waiting and container.waiting not in _STARTING) or container.last_exit:
            return container
    return None


def _container_text(container: ContainerState) -> str:
    return f"container {container.name} ({container.trouble})"


def _cdi(view: NodeView) -> tuple[bool, str]:
    """Whether CDI is on, and where that is known from: the running ClusterPolicy when read, else the fleet."""
    policy = view.state.clusterpolicy
    if policy is not None and isinstance(_get(policy.spec, "cdi", "enabled"), bool):
        return bool(_get(policy.spec, "cdi", "enabled")), "ClusterPolicy"
    return view.expected.cluster.operator.cdi_enabled, "fleet"


def _runtime(view: NodeView) -> str:
    version = view.node.runtime_version or ""
    return version.split("://", 1)[0] if "://" in version else view.expected.cluster.container_runtime


def _cri_o_without_cdi(view: NodeView) -> bool:
    return _runtime(view) == "cri-o" and not _cdi(view)[0]


def _runtime_cause(view: NodeView) -> str:
    runtime = _RUNTIME_NAMES.get(_runtime(view), _runtime(view))
    cdi, source = _cdi(view)
    symptoms = '"error executing hook" or "could not load NVML library" in its log'
    if _runtime(view) == "cri-o" and not cdi:
        fix = (
            "the fleet enables CDI: apply the render (see clusterpolicy)"
            if view.expected.cluster.operator.cdi_enabled
            else "enable CDI in the fleet (operator.cdi.enabled), render it and apply it"
        )
        return (
            f"CRI-O without CDI (cdi.enabled false in the {source}): the plugin gets the driver only through an OCI hook "
            f"in CRI-O's hooks dir, and without a working one it gets none ({symptoms}); {fix}"
        )
    if not cdi:
        return f"{runtime} without CDI: the nvidia runtime is not its default handler, so the plugin gets no driver ({symptoms})"
    return f"{runtime} gives the plugin no driver ({symptoms}): check the toolkit pod on the node"


def _config_key(view: NodeView) -> tuple[str | None, str]:
    """The device-plugin key the node's config-manager reads, and from where: its label, or the default."""
    label = view.node.labels.get(DEVICE_PLUGIN_LABEL)
    if label:
        return label, "label"
    policy = view.state.clusterpolicy
    if policy is None:
        return DEFAULT_DEVICE_PLUGIN_KEY, "default"
    default = _get(policy.spec, "devicePlugin", "config", "default")
    return (default, "default") if isinstance(default, str) and default else (None, "none")


def _configmap_name(view: NodeView) -> str:
    policy = view.state.clusterpolicy
    name = _get(policy.spec, "devicePlugin", "config", "name") if policy is not None else None
    return name if isinstance(name, str) and name else DEVICE_PLUGIN_CONFIGMAP


def _missing_key(view: NodeView) -> str | None:
    """Why the config-manager cannot find the node's key, when the ConfigMaps were read and show it."""
    key, source = _config_key(view)
    if view.state.configmaps is None or key is None:
        return None
    name = _configmap_name(view)
    configmap = view.state.configmap(view.expected.cluster.operator.namespace, name)
    if configmap is None:
        return f"ConfigMap {name} is missing: the plugin pod cannot start without it (its volume is not optional)"
    if key in configmap.data:
        return None
    where = f"its {DEVICE_PLUGIN_LABEL} label" if source == "label" else "devicePlugin.config.default"
    return f'{where} names key {key}, missing from ConfigMap {name}: the config-manager exits ("specified config {key} does not exist")'


def _observed_config(view: NodeView, key: str | None) -> dict[str, Any] | None:
    from ...yamlio.load import load_data

    if key is None or view.state.configmaps is None:
        return None
    configmap = view.state.configmap(view.expected.cluster.operator.namespace, _configmap_name(view))
    text = configmap.data.get(key) if configmap is not None else None
    if text is None:
        return None
    try:
        config = load_data(text)
    except Exception:  # any YAML error: a config the plugin cannot load either (configmap-drift says so)
        return None
    return config if isinstance(config, dict) else None


def _per_gpu(config: dict[str, Any]) -> dict[str, int]:
    """What one GPU advertises under a device-plugin config file (k8s-device-plugin api/config/v1)."""
    sharing = _get(config, "sharing") or {}
    for strategy in ("timeSlicing", "mps"):
        block = sharing.get(strategy) if isinstance(sharing, dict) else None
        if not isinstance(block, dict):
            continue
        for entry in block.get("resources") or []:
            if isinstance(entry, dict) and entry.get("name") == RESOURCE_GPU and isinstance(entry.get("replicas"), int):
                name = RESOURCE_GPU_SHARED if block.get("renameByDefault") else RESOURCE_GPU
                return {name: entry["replicas"]}
    return {RESOURCE_GPU: 1}


def _other_resource(view: NodeView, resource: str) -> bool:
    return (
        resource.startswith(NVIDIA_RESOURCE_PREFIX)
        and resource not in view.pool.resources
        and advertised(view.node, resource) > 0
    )
