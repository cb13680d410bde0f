"""The DRA fixture, ResourceSlices as the NVIDIA DRA driver's kubelet plugin publishes them, and edits of both.

``data/train-dra-healthy`` is examples/dra/fleet.yaml's train as it runs once the render is rolled out on
Kubernetes 1.34: two p4d nodes of A100s partitioned 3g.20gb + 2g.10gb + 2 x 1g.5gb, one of A100s in the
all-balanced layout, two p5 nodes of whole H100s, each labelled ``nvidia.com/dra-kubelet-plugin=true`` and
``nvidia.com/gpu.deploy.device-plugin=false`` and advertising no ``nvidia.com/*`` resource; GFD and the
mig-manager in gpu-operator, the device plugin gone; ``resourceslices.json`` as ``kubectl get resourceslices
-o json`` writes it (one slice per node, a device per MIG device or whole GPU, with the attributes and
capacities of dra-driver ``cmd/gpu-kubelet-plugin/deviceinfo.go``); ``dra.json`` with the chart's DeviceClasses,
the render's, its ResourceClaimTemplates and two claims the control plane made from them for pods;
``nvidia-dra-driver-gpu.json`` with the kubelet plugin's DaemonSet and pods. :func:`node_slice` builds the same
slices for any pool, for the property test.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verify_helpers import ROOT, Files, add_operator_plugin, both, copy_state, item, label, node

from gpustack_gen import load_fleet
from gpustack_gen.catalog.placement import place_layout
from gpustack_gen.model.fleet import Cluster, Pool, Sharing
from gpustack_gen.verify import VerifyResult, read_state_dir, verify_cluster

DRA_EXAMPLE = ROOT / "examples" / "dra" / "fleet.yaml"
HEALTHY = "train-dra-healthy"
DRIVER = "gpu.nvidia.com"
PLUGIN = "nvidia-dra-driver-gpu-kubelet-plugin"
PCI_ROOTS = ("10", "20", "90", "a0", "10", "20", "90", "a0")  # two GPUs behind each PCIe root (p4d, p5)
# NVML GPU-instance profile IDs by (compute slices, memory fraction of 8, +me), as nvidia-smi mig -lgip lists them.
GI_PROFILE_IDS = {(1, 1, False): 19, (1, 1, True): 20, (1, 2, False): 15, (2, 2, False): 14, (3, 4, False): 9}
GI_PROFILE_IDS |= {(4, 4, False): 5, (7, 8, False): 0}
COMPUTE_CAPABILITY = {"ampere": "8.0.0", "hopper": "9.0.0", "ada": "8.9.0", "turing": "7.5.0", "blackwell": "10.0.0"}
DRIVER_VERSION = "595.91.7"  # the Operator v26.7.0's 595.91.07, as semver (the plugin parses it)
DRA_ONLY = frozenset({"dra-objects"})  # the checks only a backend that renders DRA objects can fail
A100 = "gpu-a100-1"
H100 = "gpu-h100-2"
RELEASE = "nvidia-dra-driver-gpu.json"

Edit = Callable[[Files], None]


def train() -> Cluster:
    found = load_fleet(DRA_EXAMPLE).cluster("train")
    assert found is not None
    return found


def verify_train(target: Path, edit: Edit | None = None, cluster: Cluster | None = None) -> VerifyResult:
    cluster = cluster or train()
    state = read_state_dir(copy_state(HEALTHY, target, edit), cluster)
    return verify_cluster(cluster, state, fleet_label="examples/dra/fleet.yaml")


# --- the driver's devices ----------------------------------------------------------------------------------


def _uuid(prefix: str, *parts: object) -> str:
    return f"{prefix}-{uuid.uuid5(uuid.NAMESPACE_URL, '/'.join(map(str, parts)))}"


def _common(pool: Pool, minor: int) -> dict[str, Any]:
    """The attributes a GPU and its MIG devices share: the GPU's model, driver and PCI address."""
    gpu = pool.gpu
    return {
        "productName": {"string": gpu.nvml_names[0]},
        "brand": {"string": "Nvidia"},
        "architecture": {"string": gpu.architecture.capitalize()},
        "cudaComputeCapability": {"version": COMPUTE_CAPABILITY.get(gpu.architecture, "8.0.0")},
        "driverVersion": {"version": DRIVER_VERSION},
        "cudaDriverVersion": {"version": "13.0.0"},
        "resource.kubernetes.io/pciBusID": {"string": f"0000:{PCI_ROOTS[minor % 8]}:1{'cd'[minor % 2]}.0"},
        "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{PCI_ROOTS[minor % 8]}"},
    }


def gpu_device(pool: Pool, node_name: str, minor: int) -> dict[str, Any]:
    """A full GPU as deviceinfo.go GpuInfo.GetDevice publishes it."""
    memory = f"{(pool.gpu.memory_gb or 16) * 1024}Mi"
    attributes = {"type": {"string": "gpu"}, "uuid": {"string": _uuid("GPU", node_name, minor)}, **_common(pool, minor)}
    return {"name": f"gpu-{minor}", "attributes": attributes, "capacity": {"memory": {"value": memory}}}


def mig_device(pool: Pool, node_name: str, minor: int, profile_name: str, start: int) -> dict[str, Any]:
    """A static MIG device as deviceinfo.go MigDeviceInfo.GetDevice publishes it."""
    profile = pool.gpu.profile(profile_name)
    assert profile is not None and pool.gpu.memory_slices is not None
    fraction = profile.memory_slices * 8 // pool.gpu.memory_slices
    profile_id = GI_PROFILE_IDS.get((profile.compute_slices, fraction, "+me" in profile_name), 0)
    memory_mib = (pool.gpu.memory_gb or 40) * 1024 * profile.memory_slices // pool.gpu.memory_slices * 95 // 100
    attributes = {
        "type": {"string": "mig"},
        "uuid": {"string": _uuid("MIG", node_name, minor, profile_name, start)},
        "parentUUID": {"string": _uuid("GPU", node_name, minor)},
        "profile": {"string": profile_name},
        **_common(pool, minor),
    }
    capacity = {
        "multiprocessors": {"value": str(14 * profile.compute_slices)},
        "copyEngines": {"value": str(profile.compute_slices)},
        "decoders": {"value": str(profile.compute_slices if profile.compute_slices > 1 else 0)},
        "encoders": {"value": "0"},
        "jpegEngines": {"value": "0"},
        "ofaEngines": {"value": "0"},
        "memory": {"value": f"{memory_mib}Mi"},
        **{f"memorySlice{i}": {"value": "1"} for i in range(start, start + profile.memory_slices)},
    }
    name = f"gpu-{minor}-mig-{profile_name.replace('.', '').replace('+', '')}-{profile_id}-{start}"
    return {"name": name, "attributes": attributes, "capacity": capacity}


def node_devices(pool: Pool, node_name: str) -> list[dict[str, Any]]:
    """Every device a node of the pool publishes once its layout is applied: its MIG devices, or its GPUs whole."""
    layout = dict(pool.mig_devices())
    if not layout:
        return [gpu_device(pool, node_name, minor) for minor in range(pool.gpus_per_node)]
    placement = place_layout(pool.gpu, layout)
    slots = placement.slots or tuple((name, index) for name, count in layout.items() for index in range(count))
    return [mig_device(pool, node_name, m, name, start) for m in range(pool.gpus_per_node) for name, start in slots]


def node_slice(
    node_name: str, devices: list[dict[str, Any]], api_version: str = "resource.k8s.io/v1", generation: int = 1
) -> dict[str, Any]:
    """The node's one ResourceSlice, as ``kubectl get resourceslices -o json`` lists it (v1beta1: under ``basic``)."""
    if api_version.endswith("v1beta1"):
        devices = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}} for d in devices]
    return {
        "apiVersion": api_version,
        "kind": "ResourceSlice",
        "metadata": {
            "creationTimestamp": "2026-10-02T09:14:51Z",
            "generateName": f"{node_name}-{DRIVER}-",
            "generation": 1,
            "name": f"{node_name}-{DRIVER}-{_uuid('x', node_name)[2:7]}",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "controller": True,
                    "kind": "Node",
                    "name": node_name,
                    "uid": _uuid("n", node_name)[2:],
                }
            ],
            "resourceVersion": "48213411",
            "uid": _uuid("s", node_name)[2:],
        },
        "spec": {
            "driver": DRIVER,
            "nodeName": node_name,
            "pool": {"generation": generation, "name": node_name, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


# --- edits of the fixture ----------------------------------------------------------------------------------------


def slice_of(files: Files, node_name: str) -> dict[str, Any]:
    return next(i for i in files["resourceslices.json"]["items"] if i["spec"]["nodeName"] == node_name)


def devices_of(files: Files, node_name: str) -> list[dict[str, Any]]:
    devices: list[dict[str, Any]] = slice_of(files, node_name)["spec"]["devices"]
    return devices


def drop_slice(node_name: str) -> Edit:
    """The node publishes nothing (its plugin never ran, or could not reach the driver)."""
    return lambda files: files["resourceslices.json"]["items"].remove(slice_of(files, node_name))


def keep_devices(node_name: str, test: Callable[[dict[str, Any]], bool]) -> Edit:
    def edit(files: Files) -> None:
        devices = devices_of(files, node_name)
        devices[:] = [d for d in devices if test(d)]

    return edit


def republish(node_name: str, pool: Pool) -> Edit:
    """The node publishes what a node of ``pool`` would (another layout, or its GPUs whole)."""
    return lambda files: devices_of(files, node_name).__setitem__(slice(None), node_devices(pool, node_name))


def plugin_pod(files: Files, node_name: str) -> dict[str, Any]:
    return next(i for i in files[RELEASE]["items"] if i["kind"] == "Pod" and i["spec"].get("nodeName") == node_name)


def plugin_crashes(node_name: str) -> Edit:
    """The kubelet plugin's container on the node crash-loops, and the DaemonSet counts it not ready."""

    def edit(files: Files) -> None:
        pod = plugin_pod(files, node_name)
        pod["status"]["phase"] = "Running"
        container = pod["status"]["containerStatuses"][0]
        container.update(ready=False, restartCount=7, started=False, state={"waiting": {"reason": "CrashLoopBackOff"}})
        container["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error"}}
        status = item(files, RELEASE, "DaemonSet", PLUGIN)["status"]
        status["numberReady"] -= 1
        status["numberAvailable"] -= 1
        status["numberUnavailable"] = 1

    return edit


def operator_plugin_runs(on: str) -> Edit:
    """The GPU Operator's own device plugin still on the node (the deploy label back to true)."""

    def edit(files: Files) -> None:
        add_operator_plugin(files, on, "train-healthy", 1)
        node(files, on)["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] = "true"

    return edit


def published_whole(node_name: str) -> Edit:
    """The kubelet plugin started before the mig-manager applied the layout: it publishes the A100s whole."""
    pool = train().pool("a100")
    assert pool is not None
    return republish(node_name, dataclasses.replace(pool, sharing=Sharing(strategy="none")))


def plugin_leaves(node_name: str) -> Edit:
    """The kubelet plugin leaves the node (it lost its label): one node fewer in the DaemonSet."""

    def edit(files: Files) -> None:
        files[RELEASE]["items"].remove(plugin_pod(files, node_name))
        status = item(files, RELEASE, "DaemonSet", PLUGIN)["status"]
        for key in ("currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberReady"):
            status[key] -= 1
        status["updatedNumberScheduled"] -= 1

    return edit


def unlabelled(node_name: str) -> Edit:
    """A node that came up without nvidia.com/dra-kubelet-plugin=true: the plugin never ran there."""
    return both(
        label(node_name, "nvidia.com/dra-kubelet-plugin", None), drop_slice(node_name), plugin_leaves(node_name)
    )


def _template_deleted(files: Files) -> None:
    files["dra.json"]["items"].remove(item(files, "dra.json", "ResourceClaimTemplate", "llm-finetune.h100.gpu.x8"))


# The README's broken train: the kubelet plugin on one A100 node started before the mig-manager was done, one H100
# node came up without the plugin's label, and llm-finetune's ResourceClaimTemplate was deleted by hand.
BROKEN = both(published_whole("gpu-a100-2"), unlabelled(H100), _template_deleted)
