"""HAMi: what a node registers with HAMi's scheduler, and why it advertises what it does.

Facts from HAMi v2.10.0 (Project-HAMi/HAMi@4707fb02; ``../shared/research/hami.md``):

- HAMi's device plugin runs on nodes labelled ``gpu=on`` (chart ``devicePlugin.nvidiaNodeSelector``). It
  advertises ``nvidia.com/gpu`` to the kubelet, split x GPUs (an unhealthy GPU's shares are not counted), and
  registers each GPU, with its memory (NVML's total x deviceMemoryScaling) and cores (deviceCoreScaling x
  100), in the node annotation ``hami.io/node-nvidia-register`` (``nvinternal/plugin/register.go``, checked
  every 30 s; its format: :mod:`.registration`), which the scheduler places pods by.
- A GPU's ``health`` there is the plugin's NVML health check: critical Xid and ECC events (``rm/health.go``).
- HAMi's scheduler writes ``hami.io/node-handshake: Requesting_<time>`` on the nodes it lists; once that is
  60 s old while the node advertises no ``nvidia.com/gpu``, it drops the node's GPUs and removes the
  annotation (``pkg/device/devices.go CheckHealth``, ``nvidia/device.go NodeCleanUp``). Since v2.8.0 the
  plugin no longer answers it, so its age says nothing of the plugin; its absence says the scheduler has
  not reached the node or has dropped it.
- HAMi's and the GPU Operator's device plugins both advertise ``nvidia.com/gpu`` and must not run on one node
  (web ``docs/troubleshooting/troubleshooting.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....compile.artifact import TOOLKIT_DAEMONSET
from ....compile.backends.hami.values import (
    DEVICE_PLUGIN_DAEMONSET,
    OPERATING_MODE,
    RUNTIME_CLASS,
    SCHEDULER_DEPLOYMENT,
    VALUES_FILE,
    hami_release,
    needs_runtime_class,
    waits_for_toolkit,
)
from ....errors import Severity
from ....model.backends.hami import (
    FULL_CORES,
    MEMORY_SHORTFALL,
    MEMORY_SHORTFALL_WHY,
    NODE_LABEL,
    NODE_LABEL_VALUE,
    RESOURCE_CORES,
    RESOURCE_GPU,
    RESOURCE_MEMORY,
    hami_options,
    node_names,
    node_settings,
)
from ....model.backends.hami import NAME as NAME
from ....workdir import Paths
from ... import commands
from ...model import Fallback, RegisteredDevice, Registration, RegistrationIssue
from ...pod_failures import diagnose, how_it_fails, show_command
from ...rollouts import not_ready_yet
from .. import operator_plugin
from .registration import REGISTER_ANNOTATION, parse_registration

if TYPE_CHECKING:
    from ....k8s_state import Pod
    from ....model.fleet import Cluster
    from ...model import NodeView
    from ...state import StatePart

HANDSHAKE_ANNOTATION = "hami.io/node-handshake"
SOURCE = f"annotation {REGISTER_ANNOTATION}"
REGISTRATION_PARTS: tuple[str, ...] = ()  # the annotation comes with the nodes
PLUGIN = DEVICE_PLUGIN_DAEMONSET.removeprefix("daemonset/")
PLUGIN_CONTAINER = "device-plugin"  # charts/hami/templates/device-plugin/daemonsetnvidia.yaml
PLUGIN_COMPONENT = "app.kubernetes.io/component=hami-device-plugin"
_MAX_CAUSES = 3

UNHEALTHY_HINT = (
    "HAMi's device plugin marks a GPU unhealthy on a critical Xid or ECC event from NVML; the kubelet counts none "
    "of its shares and HAMi's scheduler places no pod on it: the node's kernel log (Xid) and nvidia-smi -q say "
    "what happened; a GPU reset or a reboot clears it, a recurring Xid needs the hardware looked at"
)
ROLES = {
    DEVICE_PLUGIN_DAEMONSET: (
        f"HAMi's device plugin runs on every node labelled {NODE_LABEL}={NODE_LABEL_VALUE}: it advertises the vGPUs "
        f"and registers each GPU's memory and cores in the node annotation {REGISTER_ANNOTATION}"
    ),
    SCHEDULER_DEPLOYMENT: (
        "HAMi's scheduler places the GPU pods and serves the admission webhook that sends them to it; the webhook "
        "fails open (failurePolicy Ignore), so pods created while it is down keep the default scheduler, which "
        "knows no nvidia.com/gpumem or gpucores: they stay Pending (Insufficient nvidia.com/gpumem) until recreated"
    ),
}


def daemonsets(cluster: Cluster) -> tuple[str, ...]:
    """GPU Feature Discovery, and the mig-manager, which keeps MIG off on MIG-capable GPUs as their
    ``nvidia.com/mig.config=all-disabled`` label says; the container toolkit where HAMi's device plugin waits
    for it."""
    toolkit = (TOOLKIT_DAEMONSET.removeprefix("daemonset/"),) if waits_for_toolkit(cluster) else ()
    return operator_plugin.kept_daemonsets(cluster) + toolkit


def unwanted_daemonsets(cluster: Cluster) -> dict[str, str]:
    return operator_plugin.unwanted(
        cluster, "it advertises nvidia.com/gpu as HAMi's does, and the two must not run on one node"
    )


def state_parts(cluster: Cluster) -> tuple[StatePart, ...]:
    return ()  # the registration is an annotation of the node


def rollout_role(rollout: str) -> str:
    return ROLES.get(rollout, "")


def unlabelled(view: NodeView, label: str) -> Fallback | None:
    if label != NODE_LABEL:
        return None
    return Fallback(
        Severity.ERROR,
        f"HAMi's device plugin runs only on nodes labelled {NODE_LABEL}={NODE_LABEL_VALUE}: the node gets no vGPU",
    )


# --- the node's registration ------------------------------------------------------------------------


def registration(view: NodeView) -> Registration:
    text = view.node.annotations.get(REGISTER_ANNOTATION)
    devices, problem, legacy = parse_registration(text)
    issues: list[RegistrationIssue] = []
    if text is None:
        issues.append(RegistrationIssue("absent", "one entry per GPU", None, _absent_hint(view)))
    elif problem is not None:
        issues.append(
            RegistrationIssue(
                f"unreadable: {problem}", "one entry per GPU", text,
                "HAMi's scheduler cannot read it either and places no pod on the node; its device plugin writes it: "
                f"restart the plugin on the node ({_delete_plugin(view)}) and check that it runs HAMi "
                f"{hami_options(view.expected.cluster).release.version}",
            )
        )  # fmt: skip
    elif legacy:
        issues.append(
            RegistrationIssue(
                "in the string form HAMi's device plugin wrote before v2.8.0 (UUID,count,devmem,devcore,type,numa,"
                f"health:), which HAMi {hami_options(view.expected.cluster).release.version}'s scheduler does not read (it "
                "reads JSON): it places no pod on the node",
                "JSON",
                "string",
                f"the node runs an older HAMi device plugin than the fleet's: {_upgrade(view)}; then "
                f"{_restart_plugin(view)}",
            )
        )
    modes = sorted({device.mode or "absent" for device in devices or () if device.mode != OPERATING_MODE})
    if modes:
        issues.append(
            RegistrationIssue(
                f"GPU mode: expected {OPERATING_MODE}, actual {', '.join(modes)}", OPERATING_MODE, modes,
                "the device plugin's config for the node sets another operatingmode (mig: HAMi's dynamic MIG, which "
                "partitions GPUs per pod); gpustack-gen renders hami-core for every node: apply hami-values.yaml "
                f"({_upgrade(view)}), then {_restart_plugin(view)}",
            )
        )  # fmt: skip
    return Registration(
        SOURCE,
        devices,
        tuple(issues),
        {RESOURCE_MEMORY: (MEMORY_SHORTFALL, MEMORY_SHORTFALL_WHY)},
        UNHEALTHY_HINT,
    )


# --- causes -------------------------------------------------------------------------------------------


def not_advertised_causes(view: NodeView) -> tuple[str, ...]:
    """Causes seen in the cluster first (the gpu label, the plugins' pods, the registration), then the usual."""
    node = view.node
    release = hami_release(view.expected.cluster)
    seen: list[str] = []
    labelled = node.labels.get(NODE_LABEL) == NODE_LABEL_VALUE
    if not labelled:
        seen.append(
            f"the node is not labelled {NODE_LABEL}={NODE_LABEL_VALUE}, so HAMi's device plugin does not run there "
            f"(its DaemonSet's nodeSelector): "
            f"{commands.label_node(view.expected.cluster, node.name, NODE_LABEL, NODE_LABEL_VALUE)}, and set "
            "it in the pool's node group template"
        )
    operator_pod = operator_plugin.pod_on(view)
    if operator_pod is not None:
        seen.append(_operator_plugin_cause(view, operator_pod))
    devices = registration(view).devices or ()
    unhealthy = bool(devices) and not any(device.healthy for device in devices)
    if unhealthy:
        seen.append(f"{_gpus_text(list(devices))} registered unhealthy ({REGISTER_ANNOTATION}): {UNHEALTHY_HINT}")
    pod = _plugin_pod(view)
    if pod is not None and not (unhealthy and pod.ready):
        seen.append(_plugin_pod_cause(view, pod))
    elif pod is None and view.state.release is not None and labelled:
        seen.append(
            f"HAMi's device plugin is not running on the node: no {PLUGIN} pod there; "
            + commands.describe(view.expected.cluster, release.namespace, "daemonset", PLUGIN)
        )
    if labelled:  # without the label, no registration is what follows from it
        seen += _handshake_evidence(view)
    usual = []
    if view.state.release is None and labelled:
        usual.append(f"HAMi's device plugin is not running on the node: {_plugin_pods(view)}")
    if labelled or pod is not None:  # where HAMi's plugin does not run, it cannot be what lacks the driver
        usual.append(_no_driver(view))
    return tuple((seen + usual)[:_MAX_CAUSES])


def capacity_causes(view: NodeView, resource: str, actual: int) -> tuple[str, ...]:
    """Why the node advertises (or registers) ``actual`` of ``resource``, not what the pool says."""
    pool = view.pool.pool
    found = registration(view)
    devices = found.devices
    causes: list[str] = []
    operator_pod = operator_plugin.pod_on(view) if resource == RESOURCE_GPU else None
    if operator_pod is not None:
        causes.append(_operator_plugin_cause(view, operator_pod))
    if found.issues:
        causes.append(f"its {SOURCE} is not what the pool needs: see node-registration")
    if devices is not None and len(devices) != pool.gpus_per_node:
        causes.append(
            f"HAMi registers {len(devices)} GPU{'s' if len(devices) != 1 else ''} on the node ({REGISTER_ANNOTATION}), "
            f"the pool says gpusPerNode {pool.gpus_per_node}: a GPU the driver does not see, or filtered out "
            "(filterdevices in the device plugin's node config)"
        )
    unhealthy = [d for d in devices or () if not d.healthy]
    if resource == RESOURCE_GPU and unhealthy:
        causes.append(f"{_gpus_text(unhealthy)} unhealthy, and the kubelet counts none of its shares: see gpu-health")
    if (
        resource == RESOURCE_GPU
        and operator_pod is None
        and devices is None
        and actual == pool.gpus_per_node
        and node_settings(pool).split != 1
    ):
        causes.append(
            "1 per GPU, as a device plugin without HAMi's split advertises: the GPU Operator's own device plugin, if "
            "it still runs there (see operator-pods)"
        )
    per_gpu = sorted({d.resources.get(resource, 0) for d in devices or ()})
    if per_gpu:
        causes += _per_gpu_causes(view, resource, per_gpu)
    if not causes:
        causes.append(f"HAMi's device plugin has not restarted since its settings changed: {_restart_plugin(view)}")
    return tuple(causes[:_MAX_CAUSES])


def _per_gpu_causes(view: NodeView, resource: str, per_gpu: list[int]) -> list[str]:
    """What each GPU registers against what one GPU of the pool should, and which setting gives it."""
    pool = view.pool.pool
    want = view.expected.cluster.resources_per_gpu(pool).get(resource)
    shown = " or ".join(str(value) for value in per_gpu)
    if want is None or per_gpu == [want]:
        return []
    if resource == RESOURCE_GPU:
        return [f"HAMi's device plugin splits each GPU into {shown} (count in {REGISTER_ANNOTATION}), the pool says "
                f"split {node_settings(pool).split}: {_fix(view, 'deviceSplitCount')}"]  # fmt: skip
    if resource == RESOURCE_CORES:
        return [f"each GPU registers {shown} cores, not {FULL_CORES}: deviceCoreScaling is not 1 on the node (gpustack-gen "
                f"renders 1): {_fix(view, 'deviceCoreScaling')}"]  # fmt: skip
    least = registration(view).least(resource, want)
    if all(least <= value <= want for value in per_gpu):
        return []
    scaling = node_settings(pool).memory_scaling
    scaled = f" x memoryScaling {scaling:g}" if scaling != 1 else ""
    fix = _fix(view, "deviceMemoryScaling")
    if max(per_gpu) > want:
        return [f"each GPU registers {shown} MiB, more than one {pool.gpu.name}'s {want} MiB{scaled}: a higher "
                f"deviceMemoryScaling on the node: {fix}"]  # fmt: skip
    return [f"each GPU registers {shown} MiB, under {least} ({MEMORY_SHORTFALL_WHY}; one {pool.gpu.name} has {want} "
            f"MiB{scaled}): a lower deviceMemoryScaling on the node, or a GPU with less memory than a "
            f"{pool.gpu.name} (see product-mismatch): {fix}"]  # fmt: skip


def _fix(view: NodeView, setting: str) -> str:
    """Where the node's ``setting`` comes from (the chart's devicePlugin values, or the node's entry by name in
    its nodeConfiguration, lower-cased there), and how the rendered one reaches it."""
    pool = view.pool.pool
    entry = f"the node's entry in devicePlugin.nodeConfiguration ({setting.lower()})"
    apply = f"apply it ({_upgrade(view)}), then {_restart_plugin(view)}"
    names = node_names(pool)
    if names and view.node.name not in names:
        return (
            f"the node is not in pool {pool.name}'s nodeNames, so no entry of devicePlugin.nodeConfiguration applies "
            f"to it (HAMi matches them by node name) and it runs with the chart's: add it to nodeNames, render, {apply}"
        )
    if names:
        return f"{entry} in {VALUES_FILE}, as pool {pool.name} names its nodes; {apply}"
    return f"devicePlugin.{setting} in {VALUES_FILE}, unless {entry} overrides it; {apply}"


# --- evidence -------------------------------------------------------------------------------------------


def _plugin_pod(view: NodeView) -> Pod | None:
    return next((p for p in view.state.release_pods_on(view.node.name) if p.owner == PLUGIN), None)


def _operator_plugin_cause(view: NodeView, pod: Pod) -> str:
    return (
        f"the GPU Operator's own device plugin runs on the node (pod {pod.name}): it advertises nvidia.com/gpu as "
        "HAMi's does, and the two must not run together; turn it off (devicePlugin.enabled: false, see clusterpolicy "
        "and operator-pods)"
    )


def _plugin_pod_cause(view: NodeView, pod: Pod) -> str:
    namespace = hami_release(view.expected.cluster).namespace
    failing = pod.failing
    if not failing:
        if pod.ready:
            return f"pod {pod.name} runs and is ready, yet advertises no vGPU: its log says why; " + commands.logs(
                view.expected.cluster, namespace, pod.name, PLUGIN_CONTAINER
            )
        return not_ready_yet(view.expected.cluster, pod, namespace)
    container = failing[0]
    state = container.trouble
    logs = show_command(view.expected.cluster, pod, container, namespace)
    if container.init:
        return (
            f"init container {container.name} ({state}) of pod {pod.name} waits for the GPU Operator's toolkit "
            f"(/run/nvidia/validations/toolkit-ready): see the toolkit pod on the node (and operator-pods); {logs}"
        )
    runtime = view.node.runtime_version.split("://", 1)[0] if view.node.runtime_version else ""
    diagnosis = diagnose(container, view.state.events_of(pod), runtime or view.expected.cluster.container_runtime)
    cause = _no_driver(view) if diagnosis is None or diagnosis.sign == "nvml" else diagnosis.cause
    return f"container {container.name} ({state}) of pod {pod.name} {how_it_fails(container)}: {cause}; {logs}"


def _no_driver(view: NodeView) -> str:
    """The plugin gets no driver when its pod does not run with the nvidia container runtime."""
    symptom = 'HAMi\'s device plugin gets no driver if "could not load NVML library" is in its log'
    if needs_runtime_class(view.expected.cluster):
        return (
            f"{symptom}: it runs with runtimeClassName {RUNTIME_CLASS} (hami-values.yaml; from GPU Operator v25.10.0 "
            f"with CDI, nvidia is not the default runtime), which the Operator's toolkit must have created: "
            + commands.run(view.expected.cluster, "get", "runtimeclass", RUNTIME_CLASS)
        )
    return (
        f"{symptom}: the nvidia runtime must be the container runtime's default, which the GPU Operator's toolkit "
        "sets up: see its pod on the node"
    )


def _handshake_evidence(view: NodeView) -> list[str]:
    """What HAMi's scheduler made of the node, from its handshake annotation and the registration."""
    handshake = view.node.annotations.get(HANDSHAKE_ANNOTATION)
    registered = REGISTER_ANNOTATION in view.node.annotations
    if handshake is None and registered:
        return [
            f"HAMi's scheduler has dropped the node's GPUs: it removes {HANDSHAKE_ANNOTATION} when a node advertises "
            "no nvidia.com/gpu 60 s after its handshake, and the registration left is stale"
        ]
    if not registered:
        return [f"HAMi's device plugin has registered no GPU on the node (no {REGISTER_ANNOTATION} annotation)"]
    return []


def _absent_hint(view: NodeView) -> str:
    pod = operator_plugin.pod_on(view)
    if pod is not None:
        return f"likely: {_operator_plugin_cause(view, pod)}; HAMi's has not registered the node"
    plugin = _plugin_pod(view)
    if plugin is not None:
        namespace = hami_release(view.expected.cluster).namespace
        return (
            f"HAMi's device plugin (pod {plugin.name}) advertises to the kubelet but has not written the annotation: "
            "its log says why (NVML, or its right to patch nodes); "
            + commands.logs(view.expected.cluster, namespace, plugin.name, PLUGIN_CONTAINER)
        )
    return f"HAMi's device plugin has not registered the node's GPUs: {_plugin_pods(view)}"


def _plugin_pods(view: NodeView) -> str:
    namespace = hami_release(view.expected.cluster).namespace
    return commands.pods_on(view.expected.cluster, namespace, view.node.name, "-l", PLUGIN_COMPONENT)


def _delete_plugin(view: NodeView) -> str:
    namespace = hami_release(view.expected.cluster).namespace
    return commands.run(
        view.expected.cluster,
        "-n", namespace, "delete", "pod", "-l", PLUGIN_COMPONENT, "--field-selector", f"spec.nodeName={view.node.name}",
    )  # fmt: skip


def _restart_plugin(view: NodeView) -> str:
    namespace = hami_release(view.expected.cluster).namespace
    return commands.run(view.expected.cluster, "rollout", "restart", "-n", namespace, DEVICE_PLUGIN_DAEMONSET)


def _upgrade(view: NodeView) -> str:
    cluster = view.expected.cluster
    release = hami_release(cluster)
    return commands.shown(
        cluster,
        release.install_commands(Paths(rendered=view.expected.rendered).rendered_file(cluster, release.values_file)),
    )


def _gpus_text(devices: list[RegisteredDevice]) -> str:
    names = ", ".join(f"{d.index} ({d.id})" for d in devices)
    return f"GPU {names} is" if len(devices) == 1 else f"GPUs {names} are"
