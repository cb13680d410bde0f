"""The standalone device plugin fixture and edits of it, for the verify tests.

``data/lab-device-plugin-healthy`` is examples/device-plugin/fleet.yaml's lab as chart nvidia-device-plugin 0.17.4
(release nvdp in nvidia-device-plugin) shows it once the render is rolled out: two nodes labelled ``pool=t4``,
``nvidia.com/device-plugin.config=t4`` and ``nvidia.com/gpu.present=true``, each with one Tesla T4 time-sliced 5
ways, on CRI-O 1.28 and Kubernetes 1.28.15; the chart's ConfigMap ``nvdp-nvidia-device-plugin-configs`` with keys
``any`` and ``t4`` (``configmaps.json``); the plugin's DaemonSet and its pods, with the config-manager's init
container and sidecar (``nvdp.json``). No GPU Operator: no ClusterPolicy, no ``operator.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from verify_helpers import ROOT, Files, both, copy_state, item, label, node, put

from gpustack_gen import load_fleet
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.verify import VerifyResult, read_state_dir, verify_cluster

DEVICE_PLUGIN_EXAMPLE = ROOT / "examples" / "device-plugin" / "fleet.yaml"
HEALTHY = "lab-device-plugin-healthy"
RELEASE_FILE = "nvdp.json"
PLUGIN = "nvdp-nvidia-device-plugin"
BROKEN_NODE = "lab-t4-a"

Edit = Callable[[Files], None]


def lab() -> Cluster:
    found = load_fleet(DEVICE_PLUGIN_EXAMPLE).cluster("lab")
    assert found is not None
    return found


def verify_lab(target: Path, edit: Edit | None = None) -> VerifyResult:
    cluster = lab()
    state = read_state_dir(copy_state(HEALTHY, target, edit), cluster)
    return verify_cluster(cluster, state, fleet_label="examples/device-plugin/fleet.yaml")


def plugin_pod(files: Files, on: str) -> dict[str, Any]:
    return next(
        i
        for i in files[RELEASE_FILE]["items"]
        if i["kind"] == "Pod" and i["spec"].get("nodeName") == on and i["metadata"]["name"].startswith(PLUGIN)
    )


def advertise(name: str, count: int) -> Edit:
    """The node's nvidia.com/gpu in allocatable and capacity, as the kubelet shows it without a plugin."""

    def edit(files: Files) -> None:
        for key in ("allocatable", "capacity"):
            put(node(files, name)["status"][key], "nvidia.com/gpu", str(count))

    return edit


def _unready(files: Files, on: str) -> dict[str, Any]:
    """The plugin pod on ``on`` not ready, and its DaemonSet one ready pod short."""
    status = item(files, RELEASE_FILE, "DaemonSet", PLUGIN)["status"]
    for key in ("numberReady", "numberAvailable"):
        status[key] -= 1
    status["numberUnavailable"] = 1
    pod = plugin_pod(files, on)
    pod["status"]["conditions"] = [{"status": "False", "type": "Ready"}]
    return pod


def _plugin_container(pod: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in pod["status"]["containerStatuses"] if c["name"] == "nvidia-device-plugin-ctr")


def hook_fails(on: str) -> Edit:
    """CRI-O cannot create the plugin container: the host's legacy OCI hook fails (the write-up's upgrade)."""

    def edit(files: Files) -> None:
        container = _plugin_container(_unready(files, on))
        container.update(ready=False, started=False, restartCount=0, containerID=None)
        container["state"] = {
            "waiting": {
                "reason": "CreateContainerError",
                "message": "container create failed: error executing hook `/usr/bin/nvidia-container-toolkit` "
                "(exit code: 1)",
            }
        }

    return both(edit, advertise(on, 0))


def nvml_missing(on: str, *, message: bool = True) -> Edit:
    """The plugin starts without NVML and exits (fail-on-init-error), crash-looping; ``message``: its last run's
    termination message (FallbackToLogsOnError) holds the log line."""

    def edit(files: Files) -> None:
        container = _plugin_container(_unready(files, on))
        container.update(ready=False, started=False, restartCount=7)
        container["state"] = {
            "waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}
        }
        terminated: dict[str, Any] = {"exitCode": 1, "reason": "Error"}
        if message:
            terminated["message"] = (
                "E1006 09:14:58.113 factory.go:112] Failed to initialize NVML: could not load NVML library. If this is "
                "a GPU node, did you set the docker default runtime to `nvidia`?"
            )
        container["lastState"] = {"terminated": terminated}

    return both(edit, advertise(on, 0))


def missing_key(on: str, key: str = "t4-shared") -> Edit:
    """The node's config label names a key the chart's ConfigMap lacks: the config-manager init container exits."""

    def edit(files: Files) -> None:
        pod = _unready(files, on)
        pod["status"]["phase"] = "Pending"
        for container in pod["status"]["containerStatuses"]:
            container.update(ready=False, started=False)
            container["state"] = {"waiting": {"reason": "PodInitializing"}}
        init = pod["status"]["initContainerStatuses"][0]
        init.update(ready=False, restartCount=4)
        init["state"] = {
            "waiting": {"reason": "CrashLoopBackOff", "message": "back-off 1m20s restarting failed container"}
        }
        init["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error"}}

    return both(edit, label(on, "nvidia.com/device-plugin.config", key), advertise(on, 0))


def plugin_gone(on: str) -> Edit:
    """No plugin pod on the node (the DaemonSet no longer places one there)."""

    def edit(files: Files) -> None:
        files[RELEASE_FILE]["items"].remove(plugin_pod(files, on))
        status = item(files, RELEASE_FILE, "DaemonSet", PLUGIN)["status"]
        for key in ("currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberReady"):
            status[key] -= 1
        status["updatedNumberScheduled"] -= 1

    return both(edit, advertise(on, 0))


def gfd_pod_on(on: str) -> Edit:
    """A GFD pod of the same release on the node: same labels as the plugin's, another DaemonSet and container."""

    def edit(files: Files) -> None:
        pod = dict(plugin_pod(files, on))
        pod["metadata"] = {
            **pod["metadata"],
            "name": "nvdp-nvidia-device-plugin-gpu-feature-discovery-h2c8w",
            "ownerReferences": [{"kind": "DaemonSet", "name": f"{PLUGIN}-gpu-feature-discovery", "controller": True}],
        }
        pod["status"] = {
            **pod["status"],
            "containerStatuses": [{"name": "gpu-feature-discovery-ctr", "ready": True, "restartCount": 0,
                                   "state": {"running": {"startedAt": "2026-09-14T06:30:21Z"}}}],
            "initContainerStatuses": [],
        }  # fmt: skip
        files[RELEASE_FILE]["items"].append(pod)

    return edit


def moved_to(namespace: str) -> Edit:
    """The release installed in another namespace than the fleet's: its objects live there."""

    def edit(files: Files) -> None:
        for file in (RELEASE_FILE, "configmaps.json"):
            for entry in files[file]["items"]:
                entry["metadata"]["namespace"] = namespace

    return edit


BROKEN = hook_fails(BROKEN_NODE)


def config_replicas(key: str, replicas: int) -> Edit:
    """The chart's ConfigMap key ``key`` time-slices each GPU ``replicas`` ways."""

    def edit(files: Files) -> None:
        data = item(files, "configmaps.json", "ConfigMap", "nvdp-nvidia-device-plugin-configs")["data"]
        data[key] = data[key].replace("replicas: 5", f"replicas: {replicas}")

    return edit
