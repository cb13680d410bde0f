"""HAMi v2.10.0 as the model needs it: its release, its device plugin on a node, and how its scheduler fits pods.

Citations as in ``../shared/research/hami.md`` (``hami@v2.10.0 path``, ``web path``):

* the device plugin DaemonSet selects ``devicePlugin.nvidiaNodeSelector`` (``gpu: "on"``) and carries a
  checksum of the scheduler's device config, so a Helm upgrade that changes it rolls the plugin; the
  per-node config (``hami-device-plugin`` ConfigMap) is read at start only (templates/device-plugin/
  daemonsetnvidia.yaml; server.go readFromConfigFile, matched by node name);
* each GPU registers ``deviceSplitCount`` vGPUs (``nvidia.com/gpu`` on the node) and memory x
  ``deviceMemoryScaling`` plus 100 cores in ``hami.io/node-nvidia-register`` (§1, web docs/faq/faq.md);
  the model takes a GPU's memory from the catalog (NVML's figure on hardware);
* with GPU Operator v25.10+ and CDI, the plugin fails without ``runtimeClassName: nvidia``
  (web docs/troubleshooting/troubleshooting.md, Problem 1);
* a pod's ``nvidia.com/gpu`` counts physical GPUs; ``gpumem`` is MiB per GPU, ``gpumem-percentage`` a
  share, ``gpucores`` a percentage; no memory request means all of it, and then no cores means 100
  (exclusive); cores 100 need an unused GPU (§3; device.go Fit, defaultExclusiveCoreIfNeeded);
* its kube-scheduler image is tagged, unless ``scheduler.kubeScheduler.image.tag`` is set, with
  ``.Capabilities.KubeVersion.Version`` (charts/hami/values.yaml:86,94-97, templates/_helpers.tpl:100-118),
  which Helm reads from the live cluster on install and upgrade (helm@v3.21.4 pkg/action/install.go:272-277;
  ../shared/research/real-world.md §12): a Kubernetes upgrade leaves it at the old version until the
  release is upgraded again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpustack_gen.catalog import get_gpu, gpu_memory_mib

from . import helm
from .upstream import load_yaml

GPU = "nvidia.com/gpu"
MEMORY = "nvidia.com/gpumem"
PERCENTAGE = "nvidia.com/gpumem-percentage"
CORES = "nvidia.com/gpucores"
FULL_CORES = 100


def chart_values(upstream: Path, version: str) -> dict[str, Any]:
    path = upstream / "hami" / f"v{version}" / "charts" / "hami" / "values.yaml"
    if not path.is_file():
        raise LookupError(f"no HAMi chart values for {version} in {upstream}")
    data: dict[str, Any] = load_yaml(path)
    return data


@dataclass
class Release:
    version: str
    namespace: str
    values: dict[str, Any]
    scheduler_tag: str  # the kube-scheduler image tag rendered into the Deployment

    @property
    def selector(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.values["devicePlugin"]["nvidiaNodeSelector"].items()}

    def device_config(self) -> tuple[Any, ...]:
        """What the DaemonSet's checksum/hami-scheduler-device-config annotation covers."""
        plugin = self.values["devicePlugin"]
        names = tuple(self.values[k] for k in ("resourceName", "resourceMem", "resourceMemPercentage", "resourceCores"))
        return (plugin["deviceSplitCount"], plugin["deviceMemoryScaling"], plugin["runtimeClassName"], names)

    def node_config(self, node: str) -> dict[str, Any]:
        entries = json.loads(self.values["devicePlugin"]["nodeConfiguration"]["config"])["nodeconfig"]
        merged: dict[str, Any] = {}
        for entry in entries:
            if entry["name"] == node:
                merged.update(entry)
        return merged


def upgrade(upstream: Path, version: str, namespace: str, files: list[dict[str, Any]], kubernetes: str) -> Release:
    """``kubernetes``: the live cluster's version, which Helm renders as ``.Capabilities.KubeVersion``."""
    user: dict[str, Any] = {}
    for document in files:
        user = helm.coalesce(document, user)
    values = helm.coalesce(user, chart_values(upstream, version))
    tag = values["scheduler"]["kubeScheduler"]["image"].get("tag") or f"v{kubernetes}"
    return Release(version, namespace, values, str(tag))


@dataclass
class Plugin:
    """HAMi's device plugin pod on one node, with the settings it read when it started."""

    running: bool = False
    error: str = ""
    split: int = 0
    memory_scaling: float = 1.0


@dataclass
class GpuState:
    slots: int = 0
    memory: int = 0
    cores: int = 0


@dataclass
class Registration:
    """``hami.io/node-nvidia-register``: per GPU, (split, memory MiB, cores)."""

    gpus: list[tuple[int, int, int]] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        if not self.gpus:
            return {}
        return {
            GPU: sum(split for split, _, _ in self.gpus),
            MEMORY: sum(memory for _, memory, _ in self.gpus),
            CORES: sum(cores for _, _, cores in self.gpus),
        }


def start(release: Release, node_name: str, runtime_class_needed: bool) -> Plugin:
    if runtime_class_needed and release.values["devicePlugin"].get("runtimeClassName") != "nvidia":
        return Plugin(False, "Incompatible strategy detected auto (no nvidia runtime: set runtimeClassName nvidia)")
    plugin = release.values["devicePlugin"]
    per_node = release.node_config(node_name)
    split = int(per_node.get("devicesplitcount", plugin["deviceSplitCount"]))
    scaling = float(per_node.get("devicememoryscaling", plugin["deviceMemoryScaling"]))
    return Plugin(True, "", split, scaling)


def registration(plugin: Plugin, gpu_id: str, gpus: int, mig_enabled: bool) -> Registration:
    """A MIG-enabled GPU registers nothing under migStrategy none (the chart default)."""
    if not plugin.running or mig_enabled:
        return Registration()
    gpu = get_gpu(gpu_id)
    memory = gpu_memory_mib(gpu) if gpu is not None else None
    assert memory is not None, f"the model needs the memory of {gpu_id}"
    return Registration([(plugin.split, int(memory * plugin.memory_scaling), FULL_CORES)] * gpus)


def fits(registered: Registration, pods: list[dict[str, int]], pod: dict[str, int]) -> bool:
    """Whether ``pod`` fits beside ``pods`` (already placed on the node), GPU by GPU, first fit."""
    states = [GpuState() for _ in registered.gpus]
    return all(_place(registered, states, placed) for placed in [*pods, pod])


def _place(registered: Registration, states: list[GpuState], pod: dict[str, int]) -> bool:
    wanted = pod.get(GPU, 0)
    chosen = []
    for index, ((split, memory, cores), state) in enumerate(zip(registered.gpus, states, strict=True)):
        if len(chosen) == wanted:
            break
        need_memory = pod.get(MEMORY) or memory * (pod.get(PERCENTAGE) or 100) // 100
        exclusive = MEMORY not in pod and pod.get(PERCENTAGE, 100) == 100
        need_cores = pod.get(CORES, FULL_CORES if exclusive else 0)
        if state.slots >= split or state.memory + need_memory > memory:
            continue
        if need_cores == FULL_CORES and state.slots > 0:
            continue  # exclusive: an unused card only
        if state.cores + need_cores > cores or (need_cores == 0 and state.cores >= cores):
            continue
        chosen.append((index, need_memory, need_cores))
    if len(chosen) < wanted:
        return False
    for index, memory, cores in chosen:
        states[index].slots += 1
        states[index].memory += memory
        states[index].cores += cores
    return True
