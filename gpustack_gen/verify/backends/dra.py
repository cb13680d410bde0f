"""The NVIDIA DRA driver: the devices each node publishes in ResourceSlices, and why a node publishes what it does.

Facts (``../shared/research/dra.md``; dra-driver v25.12.0 ``cmd/gpu-kubelet-plugin/deviceinfo.go`` and
``partitions.go``, the same in 0.4.1; k8s.io/api ``resource/v1/types.go``):

- The driver's kubelet plugin (DaemonSet ``nvidia-dra-driver-gpu-kubelet-plugin``, on the nodes labelled
  ``nvidia.com/dra-kubelet-plugin=true``: ``kubeletPlugin.nodeSelector``) publishes the node's devices in
  ResourceSlices of driver ``gpu.nvidia.com``, one pool per node: a device per full GPU (``type: gpu``, named
  ``gpu-<minor>``) or, on a GPU in MIG mode, one per MIG device (``type: mig``, with its ``profile`` and
  ``parentUUID``; the full GPU is not published), each with the GPU's NVML name as ``productName``. The
  scheduler allocates claims from them; a node's allocatable holds none of it.
- Static MIG devices are found when the plugin starts: partitions the mig-manager makes later are not
  published until it restarts, and a GPU in MIG mode without MIG devices is published not at all
  (``nvlib.go``; on A100 the mig-manager does not evict the plugin).
- A pool is complete when all ``resourceSliceCount`` slices of its newest ``generation`` are there
  (``ResourcePool``). A device with a NoSchedule or NoExecute taint is allocated to no claim that does not
  tolerate it (``DeviceTaint``, feature gate DRADeviceTaints).
- The driver must not share a node with the GPU Operator's device plugin (the chart's
  ``templates/validation.yaml``). The plugin reaches the driver at ``nvidiaDriverRoot``:
  ``/run/nvidia/driver`` where the Operator installs it, ``/`` where the nodes have it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...catalog import get_gpu
from ...compile.artifact import MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL
from ...compile.backends.dra.driver import KUBELET_PLUGIN_DAEMONSET, VALUES_FILE, dra_release
from ...errors import Severity
from ...k8s_state.objects import DRA_KINDS
from ...model.backends.dra import (
    DEVICE_PLUGIN_DEPLOY_LABEL,
    KUBELET_PLUGIN_LABEL,
    NAME,
    class_attributes,
    dra_options,
    pool_classes,
    resource_api_version,
    slots_per_device,
)
from ...model.backends.dra.gpu_config import DRIVER
from .. import commands
from ..model import Fallback, RegisteredDevice, Registration, RegistrationIssue
from ..rollouts import not_ready_yet
from ..state import StatePart
from . import operator_plugin

if TYPE_CHECKING:
    from ...k8s_state import Device, Pod, ResourceSlice
    from ...model.fleet import Cluster, Pool
    from ..model import NodeView

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

SOURCE = f"ResourceSlices of {DRIVER}"
SLICES_PART = "resourceslices"
REGISTRATION_PARTS = (SLICES_PART,)
PLUGIN = KUBELET_PLUGIN_DAEMONSET.removeprefix("daemonset/")
BLOCKING_TAINTS = frozenset({"NoSchedule", "NoExecute"})  # DeviceTaint's effects: both keep claims off the device
_MINOR = re.compile(r"gpu-(\d+)")
_MAX_CAUSES = 3


def state_parts(cluster: Cluster) -> tuple[StatePart, ...]:
    """The ResourceSlices (every driver's, cluster-wide), and the DeviceClasses and claims in every namespace, in
    the ``resource.k8s.io`` version the cluster's Kubernetes serves."""
    api_version = resource_api_version(cluster.kubernetes)
    return (
        StatePart(SLICES_PART, "resourceslices.json", ("ResourceSlice",), api_version=api_version),
        StatePart("dra", "dra.json", DRA_KINDS, all_namespaces=True, api_version=api_version),
    )


def daemonsets(cluster: Cluster) -> tuple[str, ...]:
    """GPU Feature Discovery, and the mig-manager, which applies the pools' MIG layouts (the driver publishes the
    MIG devices it finds) and keeps MIG off on the other MIG-capable GPUs."""
    return operator_plugin.kept_daemonsets(cluster)


def unwanted_daemonsets(cluster: Cluster) -> dict[str, str]:
    return operator_plugin.unwanted(
        cluster, "the DRA driver must not share a node with it (its chart refuses GPU allocation beside it)"
    )


def rollout_role(rollout: str) -> str:
    if rollout != KUBELET_PLUGIN_DAEMONSET:
        return ""
    return (
        f"the DRA kubelet plugin runs on every node labelled {KUBELET_PLUGIN_LABEL}=true: it publishes the node's "
        "GPUs and MIG devices in ResourceSlices and prepares the devices of the claims allocated there; without it "
        "no claim gets a device on the node"
    )


def unlabelled(view: NodeView, label: str) -> Fallback | None:
    if label != KUBELET_PLUGIN_LABEL:
        return None
    return Fallback(
        Severity.ERROR,
        f"the DRA kubelet plugin runs only on nodes labelled {KUBELET_PLUGIN_LABEL}=true: the node publishes no device",
    )


# --- the node's devices ---------------------------------------------------------------------------------------


def registration(view: NodeView) -> Registration | None:
    """The devices the node publishes in the newest generation of each of its pools of driver gpu.nvidia.com, each
    counted for the pool's DeviceClass it matches; None when the ResourceSlices were not read."""
    found = _published(view)
    if found is None:
        return None
    devices, issues = found
    classes = _classes(view.pool.pool)
    taints = sorted({taint for device in devices for taint in device.taints})
    return Registration(
        SOURCE,
        tuple(_registered(view.pool.pool, device, classes) for device in devices),
        issues,
        unhealthy_hint=_unhealthy_hint(view, taints),
    )


def _published(view: NodeView) -> tuple[list[Device], tuple[RegistrationIssue, ...]] | None:
    """The devices of the newest generation of each of the node's pools, and the pools that are incomplete."""
    if view.state.resourceslices is None:
        return None
    pools: dict[str, list[ResourceSlice]] = {}
    for piece in view.state.slices_on(view.node.name):
        if piece.driver == DRIVER:
            pools.setdefault(piece.pool, []).append(piece)
    devices: list[Device] = []
    issues: list[RegistrationIssue] = []
    for name, pieces in sorted(pools.items()):
        newest = max(piece.generation for piece in pieces)
        current = [piece for piece in pieces if piece.generation == newest]
        size = max(piece.slice_count for piece in current)
        if len(current) < size:
            issues.append(
                RegistrationIssue(
                    f"pool {name} is incomplete: {len(current)} of its {size} ResourceSlices at generation {newest}",
                    size,
                    len(current),
                    "the kubelet plugin is publishing the pool again, or a slice of it was deleted; if it stays so, "
                    f"restart the plugin on the node: {_delete_plugin(view)}",
                )
            )
        devices += [device for piece in current for device in piece.devices]
    return devices, tuple(issues)


def _classes(pool: Pool) -> dict[str, tuple[str | None, dict[str, tuple[str, ...]]]]:
    """The pool's DeviceClasses: name -> (MIG profile, the attributes a device of it publishes)."""
    return {name: (profile, class_attributes(pool, profile)) for name, profile in pool_classes(pool).items()}


def _registered(
    pool: Pool, device: Device, classes: dict[str, tuple[str | None, dict[str, tuple[str, ...]]]]
) -> RegisteredDevice:
    attributes = device.attributes
    matched = next(
        (
            {name: slots_per_device(pool, profile)}
            for name, (profile, wanted) in classes.items()
            if all(attributes.get(key) in values for key, values in wanted.items())
        ),
        {},
    )
    product = attributes.get("productName", "")
    minor = _MINOR.match(device.name)
    return RegisteredDevice(
        attributes.get("uuid", device.name),
        int(minor.group(1)) if minor else -1,
        matched,
        product,
        _catalog_id(product),
        attributes.get("type"),
        not any(taint.rsplit(":", 1)[-1] in BLOCKING_TAINTS for taint in device.taints),
        name=device.name,
    )


def _catalog_id(product: str) -> str | None:
    model = get_gpu(product) if product else None
    return model.id if model is not None else None


def _unhealthy_hint(view: NodeView, taints: list[str]) -> str:
    return (
        f"its taints ({', '.join(taints) or 'none'}) keep the scheduler from allocating it to a claim that does not "
        "tolerate them (NoExecute also evicts the pods using it; feature gate DRADeviceTaints); the driver or a "
        f"DeviceTaintRule set them: {_show_slices(view)}"
    )


def _show_slices(view: NodeView) -> str:
    """The ResourceSlices the driver publishes for one node, whole (field selectors spec.driver, spec.nodeName)."""
    return commands.run(
        view.expected.cluster,
        "get", "resourceslices", "--field-selector", f"spec.driver={DRIVER},spec.nodeName={view.node.name}", "-o", "yaml",
    )  # fmt: skip


# --- causes -----------------------------------------------------------------------------------------------------

NO_DRIVER = "the plugin cannot reach the NVIDIA driver"


def not_advertised_causes(view: NodeView) -> tuple[str, ...]:
    """Why a node with a GPU publishes none of the pool's devices: what the cluster shows first (the label, the
    Operator's plugin, what it does publish, the kubelet plugin's pod, the MIG state), then the usual."""
    node = view.node
    seen: list[str] = []
    labelled = node.labels.get(KUBELET_PLUGIN_LABEL) == "true"
    if not labelled:
        seen.append(
            f"the node is not labelled {KUBELET_PLUGIN_LABEL}=true, so the DRA kubelet plugin does not run there "
            f"(kubeletPlugin.nodeSelector in {VALUES_FILE}): "
            f"{commands.label_node(view.expected.cluster, node.name, KUBELET_PLUGIN_LABEL, 'true')}, "
            "and set it in the pool's node group template"
        )
    operator_pod = operator_plugin.pod_on(view)
    if operator_pod is not None:
        seen.append(_operator_plugin_cause(operator_pod))
    found = _published(view)
    devices = found[0] if found is not None else []
    driver_named = False
    if devices:
        seen.append(_mismatch(view, devices))
    else:
        pod = _plugin_pod(view)
        if pod is not None:
            cause, driver_named = _plugin_pod_cause(view, pod)
            seen.append(cause)
        elif view.state.release is not None and labelled:
            seen.append(
                f"the DRA kubelet plugin is not running on the node: no {PLUGIN} pod there; "
                + commands.describe(view.expected.cluster, _namespace(view), "daemonset", PLUGIN)
            )
        stranded = _mig_pending(view)
        if stranded:
            seen.append(stranded)
    usual = []
    if labelled and view.state.release is None:
        usual.append(f"the DRA kubelet plugin is not running on the node: {_plugin_pods(view)}")
    if labelled and not devices and not driver_named:  # a plugin that publishes devices has reached the driver
        usual.append(f"{NO_DRIVER}: {_driver_root(view)}; its log says what it found: {_plugin_pods(view)}")
    return tuple((seen + usual)[:_MAX_CAUSES])


def capacity_causes(view: NodeView, resource: str, actual: int) -> tuple[str, ...]:
    """Why the node publishes ``actual`` devices (or pod slots) of the pool's class ``resource``, not what the pool
    says: GPUs the driver does not see, a MIG layout other than the pool's, devices of another model. A resource
    in its allocatable (``nvidia.com/gpu``) is a device plugin's: :func:`_device_plugin_causes`."""
    if resource not in view.pool.offered:
        return _device_plugin_causes(view, resource)
    pool = view.pool.pool
    found = _published(view)
    devices, issues = found if found is not None else ([], ())
    causes: list[str] = []
    if issues:
        causes.append(f"its {SOURCE} are not complete: see node-registration")
    operator_pod = operator_plugin.pod_on(view)
    if operator_pod is not None:
        causes.append(_operator_plugin_cause(operator_pod))
    gpus = len(_gpus(devices))
    if gpus != pool.gpus_per_node:
        causes.append(
            f"it publishes devices of {gpus} GPU{'s' if gpus != 1 else ''}, the pool says gpusPerNode "
            f"{pool.gpus_per_node}: a GPU the driver does not see, or a GPU in MIG mode without MIG devices, which "
            "the plugin does not publish"
        )
    causes += _layout_causes(view, devices)
    others = sorted({d.attributes.get("productName", "?") for d in devices if not _of_model(pool, d)})
    if others:
        causes.append(f"it publishes devices of {', '.join(others)}, not {pool.gpu.name}: see product-mismatch")
    if not causes:
        causes.append(f"the DRA kubelet plugin has not published the node's devices again: {_delete_plugin(view)}")
    return tuple(causes[:_MAX_CAUSES])


def _device_plugin_causes(view: NodeView, resource: str) -> tuple[str, ...]:
    """Who offers ``resource`` in the node's allocatable: a device plugin registered with the kubelet (which sets
    it to 0 once the plugin is gone), the Operator's where its pod or the node's deploy label says so."""
    node = view.node
    pod = operator_plugin.pod_on(view)
    if pod is not None:
        return (_operator_plugin_cause(pod),)
    deploy = node.labels.get(DEVICE_PLUGIN_DEPLOY_LABEL)
    if deploy != "false":
        return (
            f"the node's {DEVICE_PLUGIN_DEPLOY_LABEL} label is {deploy or 'absent'}, so the GPU Operator runs its "
            "device plugin there (see label-mismatch); the DRA driver must not share a node with it: "
            + commands.label_node(view.expected.cluster, node.name, DEVICE_PLUGIN_DEPLOY_LABEL, "false"),
        )
    who = "a device plugin" if view.state.pods is None else "a device plugin other than the GPU Operator's"
    return (
        f"{who} registers {resource} with the kubelet on the node (one installed beside the Operator, or HAMi's); "
        "the DRA driver must not share a node with it: "
        + commands.run(
            view.expected.cluster, "get", "pods", "-A", "-o", "wide", "--field-selector", f"spec.nodeName={node.name}"
        ),
    )


def _gpus(devices: list[Device]) -> set[str]:
    """The physical GPUs the devices are, or are on: a full GPU's uuid, a MIG device's parentUUID."""
    key = {"gpu": "uuid", "mig": "parentUUID"}
    return {
        d.attributes[key[t]] for d in devices if (t := d.attributes.get("type", "")) in key and key[t] in d.attributes
    }


def _of_model(pool: Pool, device: Device) -> bool:
    return _catalog_id(device.attributes.get("productName", "")) == pool.gpu.id


def _layout_causes(view: NodeView, devices: list[Device]) -> list[str]:
    """What the published devices say of the node's MIG layout against the pool's."""
    pool = view.pool.pool
    whole = [d for d in devices if d.attributes.get("type") == "gpu"]
    mig = [d for d in devices if d.attributes.get("type") == "mig"]
    restart = _delete_plugin(view)
    if pool.sharing.strategy == "mig" and whole:
        published = (
            f"{len(whole)} GPU{'s are' if len(whole) != 1 else ' is'} published whole (type gpu), not as MIG devices"
        )
        layout = view.pool.labels.get(MIG_CONFIG_LABEL)
        labels = view.node.labels
        if labels.get(MIG_CONFIG_LABEL) == layout and labels.get(MIG_CONFIG_STATE_LABEL) == "success":
            return [
                f"{published}: the mig-manager applied {layout} ({MIG_CONFIG_STATE_LABEL}=success) after the plugin "
                f"started, and the plugin finds MIG devices only when it starts: {restart}"
            ]
        return [
            f"{published}: the mig-manager has not applied {layout} (see mig-state and label-mismatch), or the plugin "
            f"started before it did and finds MIG devices only when it starts: once {MIG_CONFIG_STATE_LABEL} is "
            f"success, {restart}"
        ]
    if pool.sharing.strategy == "mig" and mig:
        wanted = ", ".join(f"{count * pool.gpus_per_node} {profile}" for profile, count in pool.mig_devices())
        return [
            f"it publishes MIG devices {_profiles(mig)}, the pool's layout gives {wanted}: the plugin finds MIG devices "
            f"only when it starts, so it still publishes an earlier layout: once {MIG_CONFIG_STATE_LABEL} is success, "
            f"{restart}"
        ]
    if mig:
        return [
            f"its GPUs are in MIG mode ({_profiles(mig)} published) and the pool shares whole GPUs: see "
            f"{MIG_CONFIG_LABEL} (label-mismatch) and mig-state; then {restart}"
        ]
    return []


def _mismatch(view: NodeView, devices: list[Device]) -> str:
    """Why the devices the node publishes match none of the pool's classes."""
    if not all(_of_model(view.pool.pool, d) for d in devices):
        return f"it publishes {_kinds_text(devices)}, not {view.pool.pool.gpu.name}s (see product-mismatch)"
    layout = _layout_causes(view, devices)
    if layout:
        return layout[0]
    return f"it publishes {_kinds_text(devices)}, none matching the pool's DeviceClasses (see dra-objects)"


_KIND_WORDS = {"gpu": "whole GPUs", "mig": "MIG devices"}


def _kinds_text(devices: list[Device]) -> str:
    """``8 whole GPUs (NVIDIA A100-SXM4-40GB)``: the devices by type and product."""
    kinds: dict[tuple[str, str], int] = {}
    for device in devices:
        kind = device.attributes.get("type", "")
        key = (_KIND_WORDS.get(kind, f"devices of type {kind or 'unknown'}"), device.attributes.get("productName", "?"))
        kinds[key] = kinds.get(key, 0) + 1
    return ", ".join(f"{count} {words} ({product})" for (words, product), count in sorted(kinds.items()))


def _profiles(devices: list[Device]) -> str:
    """``16 1g.5gb, 8 3g.20gb``: MIG devices by profile."""
    found: dict[str, int] = {}
    for device in devices:
        profile = device.attributes.get("profile", "?")
        found[profile] = found.get(profile, 0) + 1
    return ", ".join(f"{count} {profile}" for profile, count in sorted(found.items()))


def _mig_pending(view: NodeView) -> str | None:
    state = view.node.labels.get(MIG_CONFIG_STATE_LABEL)
    if view.pool.pool.sharing.strategy != "mig" or state in (None, "success"):
        return None
    return (
        f"the mig-manager has not finished ({MIG_CONFIG_STATE_LABEL}={state}, see mig-state): a GPU in MIG mode "
        f"without MIG devices is not published; once it is done, {_delete_plugin(view)}"
    )


def _driver_root(view: NodeView) -> str:
    root = dra_release(view.expected.cluster).values.get("nvidiaDriverRoot")
    where = "the GPU Operator installs it" if view.expected.cluster.operator.driver_enabled else "the nodes have it"
    return f"{VALUES_FILE} sets nvidiaDriverRoot {root}, where {where} (operator.driver.enabled in the fleet)"


def _operator_plugin_cause(pod: Pod) -> str:
    return (
        f"the GPU Operator's own device plugin runs on the node (pod {pod.name}): the DRA driver must not share a "
        "node with it; turn it off (nvidia.com/gpu.deploy.device-plugin=false, devicePlugin.enabled: false; see "
        "label-mismatch, clusterpolicy and operator-pods)"
    )


def _plugin_pod(view: NodeView) -> Pod | None:
    return next((p for p in view.state.release_pods_on(view.node.name) if p.owner == PLUGIN), None)


def _plugin_pod_cause(view: NodeView, pod: Pod) -> tuple[str, bool]:
    """What the kubelet plugin's pod on the node shows, and whether that names the driver as the likely cause."""
    namespace = _namespace(view)
    failing = pod.failing
    if not failing:
        if pod.ready:
            return (
                f"pod {pod.name} runs and is ready, yet publishes no ResourceSlice: its log says why; "
                + commands.logs(view.expected.cluster, namespace, pod.name)
            ), False
        return not_ready_yet(view.expected.cluster, pod, namespace), False
    container = failing[0]
    state = container.trouble
    kind = "init container" if container.init else "container"
    return (
        f"{kind} {container.name} ({state}) of pod {pod.name} fails: {NO_DRIVER} ({_driver_root(view)}), or its "
        f"log says what else; {commands.logs(view.expected.cluster, namespace, pod.name, container.name)}"
    ), True


def _namespace(view: NodeView) -> str:
    return dra_options(view.expected.cluster).namespace


def _plugin_pods(view: NodeView) -> str:
    return commands.pods_on(view.expected.cluster, _namespace(view), view.node.name)


def _delete_plugin(view: NodeView) -> str:
    """Restarts the kubelet plugin on the node only: its pod goes and the DaemonSet makes a new one there; the
    whole DaemonSet when its pod is not known."""
    pod = _plugin_pod(view)
    if pod is None:
        return commands.run(
            view.expected.cluster, "rollout", "restart", "-n", _namespace(view), KUBELET_PLUGIN_DAEMONSET
        )
    return commands.run(view.expected.cluster, "-n", _namespace(view), "delete", "pod", pod.name)
