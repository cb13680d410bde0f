"""The HAMi fixture and edits of it, for the verify tests.

``data/stage-hami-healthy`` is examples/hami/fleet.yaml's stage as HAMi 2.10.0 shows it once the render is
rolled out: two g4dn.xlarge nodes (one Tesla T4 each, 15360 MiB as NVML reports it) labelled ``pool=t4`` and
``gpu=on``, each advertising 5 vGPUs and registering its GPU in ``hami.io/node-nvidia-register`` (JSON, as
the v2.10.0 device plugin writes it: ``index`` and ``numa`` 0 left out), the scheduler's handshake on every
node; the ClusterPolicy with the Operator's device plugin off; GFD but no device plugin in gpu-operator;
HAMi's device plugin DaemonSet, scheduler Deployment and their pods in kube-system (``hami.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verify_helpers import ROOT, Files, add_operator_plugin, both, copy_state, item, label, node, put

from gpustack_gen import load_fleet
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.verify import VerifyResult, read_state_dir, verify_cluster

HAMI_EXAMPLE = ROOT / "examples" / "hami" / "fleet.yaml"
HEALTHY = "stage-hami-healthy"
REGISTER = "hami.io/node-nvidia-register"
# The checks only a backend with a registration or a release of its own can fail.
HAMI_ONLY = frozenset({"node-registration", "gpu-health", "release-pods"})

Edit = Callable[[Files], None]


def stage() -> Cluster:
    found = load_fleet(HAMI_EXAMPLE).cluster("stage")
    assert found is not None
    return found


def verify_stage(target: Path, edit: Edit | None = None) -> VerifyResult:
    cluster = stage()
    state = read_state_dir(copy_state(HEALTHY, target, edit), cluster)
    return verify_cluster(cluster, state, fleet_label="examples/hami/fleet.yaml")


def annotate(name: str, key: str, value: str | None) -> Edit:
    """Set (None: remove) one annotation of the node ``name``."""
    return lambda files: put(node(files, name)["metadata"]["annotations"], key, value)


def register(name: str, **fields: Any) -> Edit:
    """Change fields of the node's first registered GPU (None leaves a field out, as omitempty does)."""

    def edit(files: Files) -> None:
        annotations = node(files, name)["metadata"]["annotations"]
        devices = json.loads(annotations[REGISTER])
        for key, value in fields.items():
            put(devices[0], key, value)
        annotations[REGISTER] = json.dumps(devices, separators=(",", ":"))

    return edit


def advertise(name: str, count: int | None) -> Edit:
    """The node's nvidia.com/gpu in allocatable and capacity (None: the resource was never registered)."""

    def edit(files: Files) -> None:
        for key in ("allocatable", "capacity"):
            put(node(files, name)["status"][key], "nvidia.com/gpu", None if count is None else str(count))

    return edit


def plugin_leaves(name: str) -> Edit:
    """HAMi's device plugin pod leaves the node (it lost gpu=on): one node fewer in the DaemonSet."""

    def edit(files: Files) -> None:
        pods = files["hami.json"]["items"]
        pods[:] = [i for i in pods if not (i["kind"] == "Pod" and i["spec"].get("nodeName") == name)]
        status = item(files, "hami.json", "DaemonSet", "hami-device-plugin")["status"]
        for key in (
            "currentNumberScheduled",
            "desiredNumberScheduled",
            "numberAvailable",
            "numberReady",
            "updatedNumberScheduled",
        ):
            status[key] -= 1

    return edit


def unlabelled_node(name: str) -> Edit:
    """A node that came up without gpu=on: HAMi never ran there, so no vGPU and no registration."""
    return both(label(name, "gpu", None), plugin_leaves(name), advertise(name, None), annotate(name, REGISTER, None))


def scheduler_crashes(files: Files) -> None:
    deployment = item(files, "hami.json", "Deployment", "hami-scheduler")["status"]
    deployment.update(readyReplicas=0, availableReplicas=0, unavailableReplicas=1)
    pod = item(files, "hami.json", "Pod", "hami-scheduler-6c9f8d7b5-kq2lx")
    pod["status"]["conditions"] = [{"status": "False", "type": "Ready"}]
    extender = pod["status"]["containerStatuses"][1]
    extender.update(ready=False, restartCount=6, started=False, state={"waiting": {"reason": "CrashLoopBackOff"}})
    extender["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error"}}


def operator_plugin_runs(on: str) -> Edit:
    """The GPU Operator's own device plugin still on (its ClusterPolicy never patched), one of its pods on ``on``."""

    def edit(files: Files) -> None:
        add_operator_plugin(files, on, "prod-healthy", 2)
        files["clusterpolicy.json"]["items"][0]["spec"]["devicePlugin"]["enabled"] = True

    return edit


# The README's broken stage: a node that came up without gpu=on, a node whose device plugin was given memory
# scaling 2 by hand, and HAMi's scheduler crash-looping.
BROKEN = both(unlabelled_node("stage-t4-a"), register("stage-t4-b", devmem=30720), scheduler_crashes)
