"""Fixture folders of cluster state (kubectl get -o json output) and edits of them, for the verify tests.

``data/prod-healthy`` and ``data/train-healthy`` are clusters that match examples/fleet.yaml's prod (T4s
time-sliced 4 ways, CRI-O) and train (A100s under mixed MIG, H100s whole, containerd); ``data/prod-seed``
is prod as found: one node's plugin cannot load NVML (CRI-O with CDI off), one still runs the config it
started with.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpustack_gen import load_fleet
from gpustack_gen.model.fleet import Cluster, Fleet
from gpustack_gen.verify import ClusterState, VerifyResult, read_state_dir, verify_cluster

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
EXAMPLE = ROOT / "examples" / "fleet.yaml"

Files = dict[str, Any]  # file name -> its JSON


def example_fleet() -> Fleet:
    return load_fleet(EXAMPLE)


def cluster(name: str, fleet: Fleet | None = None) -> Cluster:
    found = (fleet or example_fleet()).cluster(name)
    assert found is not None
    return found


def copy_state(scenario: str, target: Path, edit: Callable[[Files], None] | None = None) -> Path:
    """The scenario's folder copied to ``target``, with ``edit`` applied to its files' JSON."""
    shutil.copytree(DATA / scenario, target)
    if edit is not None:
        files = {path.name: json.loads(path.read_text(encoding="utf-8")) for path in target.glob("*.json")}
        edit(files)
        for path in target.glob("*.json"):
            path.unlink()
        for name, data in files.items():
            (target / name).write_text(json.dumps(data, indent=4) + "\n", encoding="utf-8")
    return target


def state(
    scenario: str, target: Path, edit: Callable[[Files], None] | None = None, of: Cluster | None = None
) -> ClusterState:
    """The scenario's state as ``of`` (default: examples/fleet.yaml's prod) reads it."""
    return read_state_dir(copy_state(scenario, target, edit), of or cluster("prod"))


def verify(name: str, scenario: str, target: Path, edit: Callable[[Files], None] | None = None) -> VerifyResult:
    return verify_cluster(
        cluster(name), state(scenario, target, edit, cluster(name)), fleet_label="examples/fleet.yaml"
    )


def item(files: Files, file: str, kind: str, name: str) -> dict[str, Any]:
    """The object ``name`` of ``kind`` in ``file``."""
    return next(i for i in files[file]["items"] if i["kind"] == kind and i["metadata"]["name"] == name)


def node(files: Files, name: str) -> dict[str, Any]:
    return item(files, "nodes.json", "Node", name)


def set_advertised(files: Files, name: str, resource: str, value: int) -> None:
    for key in ("allocatable", "capacity"):
        node(files, name)["status"][key][resource] = str(value)


def put(mapping: dict[str, Any], key: str, value: Any) -> None:
    """``mapping[key] = value``; None removes the key."""
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def label(name: str, key: str, value: str | None) -> Callable[[Files], None]:
    """Set (None: remove) one label of the node ``name``."""
    return lambda files: put(node(files, name)["metadata"]["labels"], key, value)


def both(*edits: Callable[[Files], None]) -> Callable[[Files], None]:
    def edit(files: Files) -> None:
        for one in edits:
            one(files)

    return edit


def add_operator_plugin(files: Files, on: str, scenario: str, nodes: int) -> None:
    """The GPU Operator's own device plugin as ``scenario`` (a gpu-operator cluster) runs it, added to operator.json:
    its DaemonSet rolled out on ``nodes`` nodes, and one of its pods on node ``on``."""
    items = json.loads((DATA / scenario / "operator.json").read_text(encoding="utf-8"))["items"]
    daemonset = next(i for i in items if i["metadata"]["name"] == "nvidia-device-plugin-daemonset")
    scheduled = ("currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberReady")
    daemonset["status"].update({key: nodes for key in (*scheduled, "updatedNumberScheduled")})
    pod = next(i for i in items if i["kind"] == "Pod" and i["metadata"]["name"].startswith("nvidia-device"))
    pod["spec"]["nodeName"] = on
    files["operator.json"]["items"] += [daemonset, pod]
