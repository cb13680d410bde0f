"""The standalone NVIDIA device plugin chart (release ``nvdp``) on hosts with their own driver and toolkit.

No GPU Operator runs there: no ClusterPolicy, no Operator namespace. The chart's plugin, GFD and MPS DaemonSets
share one selector and pod labels, ``app.kubernetes.io/name=nvidia-device-plugin`` and
``app.kubernetes.io/instance=<release>`` (chart v0.17.4 ``templates/_helpers.tpl:61-79``), as does the ConfigMap
the chart renders from ``config.map`` (``configmap.yml:1-14``), so ``verify`` reads them by that label in every
namespace, wherever the release was installed, and tells the plugin's pod from GFD's and MPS's by its owner or
its container ``nvidia-device-plugin-ctr`` (``daemonset-device-plugin.yml``).

Why a GPU node advertises 0, ranked as the write-up lived it (``../shared/research/standalone-plugin.md`` §8,
``real-world.md`` §10):

1. under CRI-O, the host's legacy OCI hook: the plugin container is never created (``CreateContainerError``,
   "error executing hook /usr/bin/nvidia-container-toolkit" in its waiting message);
2. NVML not found ("could not load NVML library", "Failed to initialize NVML"): the plugin exits
   (``fail-on-init-error`` defaults to true, k8s-device-plugin v0.17.4 ``cmd/nvidia-device-plugin/main.go:67-72``)
   and crash-loops;
3. the config-manager's missing key: the init container ``nvidia-device-plugin-init`` exits ("specified config X
   does not exist", ``cmd/config-manager/main.go:351-354``) when the node's label names no key of the ConfigMap;
4. no plugin pod on the node: the chart's affinity (``values.yaml:63-84``, and the off switch the render adds)
   matches no label of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...compile.artifact import DEVICE_PLUGIN_LABEL
from ...compile.backends.device_plugin.values import (
    GPU_NODE_TERMS,
    GPU_PRESENT_LABEL,
    device_plugin_release,
)
from ...errors import Severity
from ...k8s_state import DaemonSet
from ...model.backends.device_plugin import (
    NAME,
    SWITCH_LABEL,
    chart_configmap,
    device_plugin_options,
    plugin_daemonset,
)
from ...model.backends.nvidia_plugin import RESOURCE_GPU, RESOURCE_GPU_SHARED
from ...model.fleet import DEFAULT_DEVICE_PLUGIN_KEY
from ...shell import command
from ...versions.device_plugin import DEVICE_PLUGIN_CHART, DEVICE_PLUGIN_RELEASE
from ...workdir import Paths
from .. import commands
from ..model import Fallback
from ..observed import count
from ..pod_failures import HOST_HOOK_DIR_PATHS, HOST_HOOK_DIRS, diagnose, how_it_fails, show_command
from ..state import RELEASE_LABEL, StatePart
from .nvidia_plugin import default_key_fallback

if TYPE_CHECKING:
    from ...k8s_state import ConfigMap, ContainerState, Pod
    from ...model.fleet import Cluster
    from ..model import NodeView, Registration

__all__ = [
    "NAME",
    "REGISTRATION_PARTS",
    "capacity_causes",
    "daemonsets",
    "not_advertised_causes",
    "plugin_pod",
    "registration",
    "rollout_role",
    "state_parts",
    "unlabelled",
    "unwanted_daemonsets",
]

NAME_LABEL = "app.kubernetes.io/name"
PLUGIN_CONTAINER = "nvidia-device-plugin-ctr"  # daemonset-device-plugin.yml; GFD's is gpu-feature-discovery-ctr
INIT_CONTAINER = "nvidia-device-plugin-init"  # the config-manager, ONESHOT (daemonset-device-plugin.yml:60-96)
REGISTRATION_PARTS: tuple[str, ...] = ()  # the node's allocatable is the whole record
_MAX_CAUSES = 3
RELEASE_FILE = (
    f"{DEVICE_PLUGIN_RELEASE}.json"  # what verify --from reads the chart's objects from, whatever the release's name
)


def state_parts(cluster: Cluster) -> tuple[StatePart, ...]:
    """The chart's workloads, pods and ConfigMap by its name label, in every namespace (they replace the common
    ``release`` and ``configmaps`` parts, which read one namespace)."""
    selector = f"{NAME_LABEL}={DEVICE_PLUGIN_CHART}"
    return (
        StatePart("configmaps", "configmaps.json", ("ConfigMap",), None, selector, all_namespaces=True),
        StatePart(
            "release", RELEASE_FILE, ("DaemonSet", "Deployment", "Pod"), None, selector,
            all_namespaces=True,
        ),
    )  # fmt: skip


def daemonsets(cluster: Cluster) -> tuple[str, ...]:
    return ()  # no Operator: the release's DaemonSets are release-pods'


def unwanted_daemonsets(cluster: Cluster) -> dict[str, str]:
    return {}


def registration(view: NodeView) -> Registration | None:
    """The plugin registers with the kubelet only: the node's allocatable is the whole record."""
    return None


def rollout_role(rollout: str) -> str:
    # The release's DaemonSets are named after it and the chart (_helpers.tpl:14-25); GFD's and MPS's add a suffix.
    name = rollout.removeprefix("daemonset/")
    if DEVICE_PLUGIN_CHART in name and not name.endswith(("-gpu-feature-discovery", "-mps-control-daemon")):
        return f"the standalone device plugin advertises {RESOURCE_GPU}: without it a GPU node advertises 0"
    return ""


def unlabelled(view: NodeView, label: str) -> Fallback | None:
    """Without its config label a node gets the chart's ``config.default`` (``any``); without
    ``nvidia.com/gpu.present`` the plugin runs there only if NFD labels the node."""
    if label == GPU_PRESENT_LABEL:
        if any(view.node.labels.get(key) == value for key, value in GPU_NODE_TERMS):
            return Fallback(
                Severity.WARNING, "NFD's labels put the plugin on it all the same; label it as the render says"
            )
        return Fallback(
            Severity.ERROR, "no term of the chart's node affinity matches it: the plugin does not run there"
        )
    if label != DEVICE_PLUGIN_LABEL:
        return None
    return default_key_fallback(view)


def not_advertised_causes(view: NodeView) -> tuple[str, ...]:
    """What the plugin's pod on the node shows, in the ranked order; where the pods were not read, the usual
    causes in that order."""
    cluster = view.expected.cluster
    if view.state.release is None:
        return (_hook_cause(view), _nvml_cause(view), _missing_key_usual(view))[:_MAX_CAUSES]
    pod = plugin_pod(view)
    if pod is None:
        return (_no_pod_cause(view),)
    namespace = pod.namespace or device_plugin_options(cluster).namespace
    events = view.state.events_of(pod)
    # One slot per rank: (1) hook, (2) NVML, (3) missing key, then what else the pod shows.
    ranked: dict[int, str] = {}
    for container in _failing(pod):
        diagnosis = diagnose(container, events, _runtime(view))
        where = f"container {container.name} ({container.trouble}) of pod {pod.name} {how_it_fails(container)}"
        shown = show_command(cluster, pod, container, namespace)
        if diagnosis is not None and diagnosis.sign in ("host-hook", "operator-hook"):
            # No Operator here: any hook that fails is the host's, left by its toolkit package.
            ranked[1] = (
                f'{where}: the host\'s legacy OCI hook fails ("{diagnosis.quote}"): an oci-nvidia-hook.json left by '
                f"the host's nvidia-container-toolkit package (up to v1.13.x) runs it for every container; {shown}; "
                + _hook_fix(view)
            )
        elif diagnosis is not None and diagnosis.sign == "nvml":
            ranked[2] = f"{where}: {diagnosis.cause}; {_nvml_why(view)}; {shown}"
        elif diagnosis is not None and diagnosis.sign == "missing-config-key":
            ranked[3] = f"{where}: {_missing_key(view, pod) or diagnosis.cause}; {shown}"
        elif container.init and container.name == INIT_CONTAINER:
            ranked[3] = f"{where}: {_missing_key(view, pod) or 'the config label or the ConfigMap is wrong'}; {shown}"
        elif diagnosis is None and container.name == PLUGIN_CONTAINER and not container.ran:
            # Never created and no message read: on CRI-O the host's hook is what fails there (real-world.md §10).
            ranked[1] = f"{where}: {_hook_cause(view)}; {shown}"
        elif diagnosis is None and container.name == PLUGIN_CONTAINER:
            # It ran and exits: with fail-on-init-error (the default) that is the plugin finding no NVML.
            ranked[2] = f"{where}: {_nvml_cause(view)}; {shown}"
        else:
            cause = diagnosis.cause if diagnosis is not None else "its log or the pod's description says why"
            ranked.setdefault(5, f"{where}: {cause}; {shown}")
    if 3 not in ranked and (missing := _missing_key(view, pod)) is not None:
        ranked[3] = missing  # the init container has not failed yet, but will at the next start
    if not ranked and pod.ready:
        ranked[6] = f"pod {pod.name} runs and is ready, yet registers no device: its log says why; " + commands.logs(
            cluster, namespace, pod.name, PLUGIN_CONTAINER
        )
    registered = count(view.node.capacity.get(next(iter(view.pool.resources), RESOURCE_GPU))) or 0
    if registered and not ranked:
        ranked[7] = (
            f"capacity {registered}, allocatable 0: the plugin registered and then went away (restarting or crashing); "
            + commands.pods_on(
                cluster,
                namespace,
                view.node.name,
                "-l",
                f"{RELEASE_LABEL}={device_plugin_options(cluster).release_name}",
            )
        )
    return tuple(ranked[rank] for rank in sorted(ranked))[:_MAX_CAUSES]


def capacity_causes(view: NodeView, resource: str, actual: int) -> tuple[str, ...]:
    """Why the node advertises ``actual``: its label names another key, the chart's ConfigMap holds another
    config (the release's values are not the render's), or the plugin has not restarted since the ConfigMap
    changed (the chart rolls its pods on a ``helm upgrade`` that changes ``config.map``, not on an edit of the
    ConfigMap itself; the plugin reads its config at start, ``cmd/nvidia-device-plugin/main.go``)."""
    cluster = view.expected.cluster
    pool = view.pool.pool
    expected = view.pool.resources[resource]
    label = view.node.labels.get(DEVICE_PLUGIN_LABEL)
    key = label or DEFAULT_DEVICE_PLUGIN_KEY
    relabel = commands.label_node(cluster, view.node.name, DEVICE_PLUGIN_LABEL, pool.name)
    causes = []
    if label is None:
        causes.append(f"the node has no {DEVICE_PLUGIN_LABEL} label and gets key {key}; {relabel}")
    elif label != pool.name:
        causes.append(f"its {DEVICE_PLUGIN_LABEL} label names key {label}, not {pool.name}; {relabel}")
    pod = plugin_pod(view) if view.state.release is not None else None
    held = _per_node(view, pod, key, resource)
    if held is not None and held == actual != expected:
        causes.append(
            f"ConfigMap {chart_configmap(view.expected.cluster)} key {key} gives {held} per node: the release's config.map is not the render's; "
            f"{_values_file(view)}"
        )
    elif held == expected:
        namespace = (pod.namespace if pod is not None else None) or device_plugin_options(cluster).namespace
        restart = commands.run(cluster, "rollout", "restart", "-n", namespace, f"daemonset/{plugin_daemonset(cluster)}")
        causes.append(
            f"the plugin has not restarted since ConfigMap {chart_configmap(view.expected.cluster)} changed (it reads key {key} only when it "
            f"starts, and an edit of the ConfigMap outside helm does not roll the pods); {restart}"
        )
    else:
        causes.append(f"the release's config.map is not the render's; {_values_file(view)}")
    return tuple(causes[:_MAX_CAUSES])


# --- evidence -------------------------------------------------------------------------------------


def plugin_pod(view: NodeView) -> Pod | None:
    """The plugin's pod on the node (not GFD's or MPS's): its container, or its owner, says so; the release's
    own (``app.kubernetes.io/instance``) before another release of the chart."""
    pods = [
        pod
        for pod in view.state.release_pods_on(view.node.name)
        if pod.owner == plugin_daemonset(view.expected.cluster)
        or any(c.name == PLUGIN_CONTAINER for c in pod.containers)
    ]
    pods.sort(
        key=lambda pod: pod.labels.get(RELEASE_LABEL) != device_plugin_options(view.expected.cluster).release_name
    )
    return pods[0] if pods else None


def _failing(pod: Pod) -> tuple[ContainerState, ...]:
    """Its containers that wait after a failure or last exited with an error, init containers first."""
    starting = {"PodInitializing", "ContainerCreating"}
    found = [c for c in pod.containers if not c.ready and ((c.waiting and c.waiting not in starting) or c.last_exit)]
    return tuple(sorted(found, key=lambda c: not c.init))


def _runtime(view: NodeView) -> str:
    version = view.node.runtime_version or ""
    return version.split("://", 1)[0] if "://" in version else view.expected.cluster.container_runtime


def _plan_command(view: NodeView) -> str:
    return commands.shown(view.expected.cluster, command("gpustack-gen", "plan", "--base", "HEAD", view.expected.fleet))


def _hook_fix(view: NodeView) -> str:
    cluster = view.expected.cluster
    return (
        "fix: move the cluster to the GPU Operator with CDI (in the fleet backend: gpu-operator, operator: {driver: "
        f"{{enabled: false}}, cdi: {{enabled: true, default: true}}}}, then {_plan_command(view)}), or remove that oci-nvidia-hook.json from {HOST_HOOK_DIRS} on the node ("
        + commands.run(
            cluster, "debug", f"node/{view.node.name}", "-it", "--image=busybox", "--",
            "ls", *(f"/host{path}" for path in HOST_HOOK_DIR_PATHS),
        )
        + " shows them)"
    )  # fmt: skip


def _hook_cause(view: NodeView) -> str:
    if _runtime(view) != "cri-o":
        return "the host's NVIDIA runtime or OCI hook hands the plugin no GPU; its pod's description says why"
    return (
        "CRI-O runs a legacy OCI hook from the host's toolkit package: the plugin container is never created "
        '(CreateContainerError, "error executing hook /usr/bin/nvidia-container-toolkit" in kubectl describe pod); '
        + _hook_fix(view)
    )


def _nvml_why(view: NodeView) -> str:
    options = device_plugin_options(view.expected.cluster)
    runtime = "CRI-O's OCI hook" if _runtime(view) == "cri-o" else "the host's NVIDIA runtime"
    where = (
        f"runtimeClassName {options.runtime_class_name} names no working NVIDIA runtime"
        if options.runtime_class_name
        else "the NVIDIA runtime is not the default one (set devicePlugin.runtimeClassName in the fleet) or"
    )
    return (
        f"why: the host's driver is not installed or its module is not loaded (nvidia-smi on the node fails), or "
        f"{where} {runtime} did not run for the container"
    )


def _nvml_cause(view: NodeView) -> str:
    return (
        f'the plugin cannot load NVML ("could not load NVML library" in its log, CrashLoopBackOff); {_nvml_why(view)}'
    )


def _configmap(view: NodeView, pod: Pod | None) -> ConfigMap | None:
    """The chart's ConfigMap: in the plugin pod's namespace, else in the fleet's."""
    namespace = (pod.namespace if pod is not None else None) or device_plugin_options(view.expected.cluster).namespace
    return view.state.configmap(namespace, chart_configmap(view.expected.cluster))


def _missing_key(view: NodeView, pod: Pod | None) -> str | None:
    """Why the config-manager cannot find the node's key, when the ConfigMap was read and shows it."""
    if view.state.configmaps is None:
        return None
    label = view.node.labels.get(DEVICE_PLUGIN_LABEL)
    key = label or DEFAULT_DEVICE_PLUGIN_KEY
    configmap = _configmap(view, pod)
    if configmap is None:
        return (
            f"ConfigMap {chart_configmap(view.expected.cluster)} is missing: the release renders no config.map, so the plugin runs one config on "
            f"every node; upgrade the release with {_values_file(view)}"
        )
    if key in configmap.data:
        return None
    where = f"the node's {DEVICE_PLUGIN_LABEL} label" if label else "the chart's config.default"
    keys = ", ".join(sorted(configmap.data)) or "none"
    fix = (
        commands.label_node(view.expected.cluster, view.node.name, DEVICE_PLUGIN_LABEL, view.pool.name)
        if view.pool.name in configmap.data
        else f"upgrade the release with {_values_file(view)}"
    )
    return (
        f"{where} names key {key}, missing from ConfigMap {chart_configmap(view.expected.cluster)} (keys: {keys}): the config-manager exits "
        f'("specified config {key} does not exist") and the plugin never starts; {fix}'
    )


def _missing_key_usual(view: NodeView) -> str:
    return (
        f"the node's {DEVICE_PLUGIN_LABEL} label names a key missing from ConfigMap {chart_configmap(view.expected.cluster)}: init container "
        f'{INIT_CONTAINER} exits ("specified config X does not exist")'
    )


def _no_pod_cause(view: NodeView) -> str:
    cluster = view.expected.cluster
    labels = view.node.labels
    # Where the release runs its DaemonSet (it may not be the fleet's namespace).
    namespace = next(
        (
            o.namespace
            for o in view.state.release or ()
            if isinstance(o, DaemonSet) and o.name == plugin_daemonset(cluster) and o.namespace
        ),
        device_plugin_options(cluster).namespace,
    )
    if labels.get(SWITCH_LABEL) == "off":
        return (
            f"no plugin pod on the node: its {SWITCH_LABEL} label is off, which keeps the chart's plugin away (the move "
            "to the GPU Operator sets it); if the Operator does not serve the node yet, "
            + commands.run(cluster, "label", "node", view.node.name, f"{SWITCH_LABEL}-")
        )
    if not any(labels.get(key) == value for key, value in GPU_NODE_TERMS):
        return (
            f"no plugin pod on the node: no term of the chart's node affinity matches it (no {GPU_PRESENT_LABEL}=true, "
            "and no NFD label of an NVIDIA GPU); "
            + commands.label_node(cluster, view.node.name, GPU_PRESENT_LABEL, "true")
        )
    return (
        f"no plugin pod on the node though its labels match the chart's affinity: a taint it does not tolerate, or "
        f"the DaemonSet cannot create it; {commands.describe(cluster, namespace, 'daemonset', plugin_daemonset(cluster))}"
    )


def _per_node(view: NodeView, pod: Pod | None, key: str, resource: str) -> int | None:
    """What one node gets of ``resource`` under ``key`` of the chart's ConfigMap as read; None: not readable."""
    from ...yamlio.load import load_data

    configmap = _configmap(view, pod) if view.state.configmaps is not None else None
    text = configmap.data.get(key) if configmap is not None else None
    if text is None:
        return None
    try:
        config = load_data(text)
    except Exception:  # any YAML error: a config the plugin cannot load either
        return None
    gpus = count(view.node.labels.get("nvidia.com/gpu.count")) or view.pool.pool.gpus_per_node
    return _per_gpu(config).get(resource, 0) * gpus if isinstance(config, dict) else None


def _per_gpu(config: dict[str, Any]) -> dict[str, int]:
    """What one GPU advertises under a device-plugin config file (k8s-device-plugin api/config/v1)."""
    sharing = config.get("sharing")
    # MPS first: with both blocks the plugin shares by MPS (validate/device_plugin.py says so to the user).
    for strategy in ("mps", "timeSlicing"):
        block = sharing.get(strategy) if isinstance(sharing, dict) else None
        if not isinstance(block, dict):
            continue
        for entry in block.get("resources") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("replicas"), int):
                continue
            name = entry.get("name")
            # A bare name is nvidia.com/<name> (k8s-device-plugin api/config/v1 resources.go NewResourceName).
            if isinstance(name, str) and (name if "/" in name else f"nvidia.com/{name}") == RESOURCE_GPU:
                return {RESOURCE_GPU_SHARED if block.get("renameByDefault") else RESOURCE_GPU: entry["replicas"]}
    return {RESOURCE_GPU: 1}


def _values_file(view: NodeView) -> str:
    """The release's install command with the rendered values: what ``upgrade the release with`` runs."""
    cluster = view.expected.cluster
    release = device_plugin_release(cluster)
    path = Paths(rendered=view.expected.rendered).rendered_file(cluster, release.values_file)
    return commands.shown(cluster, release.install_commands(path))
