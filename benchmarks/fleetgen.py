"""A deterministic fleet generator for the benchmarks.

``generate_fleet(clusters, seed=...)`` returns a plain mapping (what ``yaml.safe_load`` of a fleet file
gives) that ``gpustack_gen.load_fleet`` accepts: N clusters x 8 pools x 20 workloads, every GPU model of
the catalog and every sharing strategy:

- ``none``, ``time-slicing`` (with and without renameByDefault / failRequestsGreaterThanOne);
- ``mps``, only in clusters whose ``mig.strategy`` is ``single`` and whose operator is v24.3.0 or newer;
- ``mig`` with a custom per-GPU layout (checked with ``place_layout``) or a built-in config name; under
  ``mig.strategy: single`` only layouts and configs with one profile type, and only profile names the
  cluster's mig-manager can parse.

Workloads stay within each pool's capacity (for the resource the pool offers least of), so every
generated fleet loads without errors. The same ``(clusters, seed)`` always gives the same mapping.
"""

from __future__ import annotations

import copy
import random
from functools import cache
from typing import Any

from gpustack_gen.catalog import (
    GPUS,
    GpuModel,
    builtin_mig_config,
    builtin_mig_config_names,
    get_gpu,
    place_layout,
)
from gpustack_gen.catalog.profile_grammar import reads_profile
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

POOLS_PER_CLUSTER = 8
WORKLOADS_PER_CLUSTER = 20
DEFAULT_SEED = 20240601

_KUBERNETES = ("1.28.9", "1.29.15", "1.30.8", "1.31.4", "1.32.2")
_NAMESPACES = ("ml", "research", "serving")
_MODEL_STRIDE = 3  # pool i of cluster c uses model (8c + 3i) mod len(GPUS): one cluster mixes MIG and non-MIG

Layout = tuple[tuple[str, int], ...]


@cache
def _layouts(gpu: GpuModel) -> tuple[tuple[Layout, ...], tuple[Layout, ...]]:
    """Placeable custom layouts of a MIG model: (one profile type, several profile types)."""
    single: list[Layout] = []
    multi: list[Layout] = []
    for profile in gpu.profiles:
        for count in range(1, profile.max_instances + 1):
            if place_layout(gpu, {profile.name: count}).ok:
                single.append(((profile.name, count),))
    names = [p.name for p in gpu.profiles]
    candidates = [tuple(gpu.all_balanced)]
    candidates += [((a, 1), (b, 1)) for i, a in enumerate(names) for b in names[i + 1 :]]
    candidates += [((a, 2), (b, 1)) for i, a in enumerate(names) for b in names[i + 1 :]]
    for layout in candidates:
        if len(layout) > 1 and place_layout(gpu, dict(layout)).ok:
            multi.append(layout)
    return tuple(single), tuple(multi)


@cache
def _configs(gpu: GpuModel) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Built-in configs that create MIG devices: (one profile type, several profile types)."""
    single: list[str] = []
    multi: list[str] = []
    for name in builtin_mig_config_names(gpu):
        entry = builtin_mig_config(gpu, name)
        if entry is None or not entry.mig_enabled or not entry.mig_devices:
            continue
        (single if len(entry.mig_devices) == 1 else multi).append(name)
    return tuple(single), tuple(multi)


def _sharing(rng: random.Random, gpu: GpuModel, mig_strategy: str, release: OperatorVersion) -> dict[str, Any]:
    strategies = ["none", "time-slicing"]
    if mig_strategy == "single" and release.has_mps:
        strategies.append("mps")
    if gpu.mig_capable:
        strategies += ["mig-layout", "mig-config"]
    strategy = rng.choice(strategies)
    if strategy == "none":
        return {"strategy": "none"}
    if strategy == "time-slicing":
        policy: dict[str, Any] = {"strategy": "time-slicing", "replicas": rng.randint(2, 8)}
        if rng.random() < 0.3:
            policy["renameByDefault"] = True
        if rng.random() < 0.3:
            policy["failRequestsGreaterThanOne"] = True
        return policy
    if strategy == "mps":
        policy = {"strategy": "mps", "replicas": rng.randint(2, min(8, gpu.mps_max_replicas))}
        if rng.random() < 0.3:
            policy["renameByDefault"] = True
        return policy
    single_layouts, multi_layouts = _layouts(gpu)
    single_configs, multi_configs = _configs(gpu)

    def readable(devices: Layout) -> bool:  # profile names the release's mig-manager can parse
        return all(reads_profile(release, profile) for profile, _ in devices)

    if strategy == "mig-config":
        names = single_configs if mig_strategy == "single" else single_configs + multi_configs
        names = tuple(n for n in names if readable(_config_devices(gpu, n)))
        return {"strategy": "mig", "config": rng.choice(names)}
    layouts = single_layouts if mig_strategy == "single" else single_layouts + multi_layouts
    return {"strategy": "mig", "layout": dict(rng.choice([layout for layout in layouts if readable(layout)]))}


def _config_devices(gpu: GpuModel, name: str) -> Layout:
    entry = builtin_mig_config(gpu, name)
    assert entry is not None
    return entry.mig_devices


def _per_gpu(gpu: GpuModel, sharing: dict[str, Any], mig_strategy: str) -> dict[str, int]:
    """Resource -> count one GPU advertises (keys only need to tell profiles apart)."""
    strategy = sharing["strategy"]
    if strategy in ("time-slicing", "mps"):
        return {"gpu": sharing["replicas"]}
    if strategy != "mig":
        return {"gpu": 1}
    devices = tuple(sharing["layout"].items()) if "layout" in sharing else _config_devices(gpu, sharing["config"])
    if mig_strategy == "single":
        return {"gpu": sum(n for _, n in devices)}
    return dict(devices)


def _cluster(rng: random.Random, index: int) -> dict[str, Any]:
    release = rng.choice(OPERATOR_VERSIONS)
    mig_strategy = rng.choice(("single", "mixed"))
    runtime = rng.choice(("containerd", "cri-o"))
    cluster: dict[str, Any] = {
        "name": f"cluster-{index:04d}",
        "kubernetes": rng.choice(_KUBERNETES),
        "containerRuntime": runtime,
        "mig": {"strategy": mig_strategy},
        "operator": {"version": release.version},
    }
    if runtime == "cri-o":
        cluster["operator"]["cdi"] = {"enabled": True}
    pools: list[dict[str, Any]] = []
    offers: list[tuple[dict[str, int], int, bool]] = []  # per-GPU resources, GPUs per node, one pod per GPU
    for p in range(POOLS_PER_CLUSTER):
        gpu = GPUS[(index * POOLS_PER_CLUSTER + p * _MODEL_STRIDE) % len(GPUS)]
        sharing = _sharing(rng, gpu, mig_strategy, release)
        gpus_per_node = rng.choice((2, 4, 8))
        name = f"pool-{p}-{gpu.id}"[:63].rstrip("-.")
        pool: dict[str, Any] = {
            "name": name,
            "gpu": gpu.id if rng.random() < 0.8 or not gpu.product_labels else gpu.product_labels[0],
            "nodes": rng.randint(2, 16),
            "gpusPerNode": gpus_per_node,
            "nodeSelector": {"gpustack.dev/pool": name, "node.kubernetes.io/instance-type": f"gpu-{gpu.id}"},
            "sharing": sharing,
        }
        if rng.random() < 0.4:
            pool["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
        pools.append(pool)
        one_per_pod = sharing["strategy"] == "mps" or bool(sharing.get("failRequestsGreaterThanOne"))
        offers.append((_per_gpu(gpu, sharing, mig_strategy), gpus_per_node, one_per_pod))
    cluster["nodePools"] = pools
    cluster["workloads"] = _workloads(rng, pools, offers, mig_strategy)
    return cluster


def _workloads(
    rng: random.Random,
    pools: list[dict[str, Any]],
    offers: list[tuple[dict[str, int], int, bool]],
    mig_strategy: str,
) -> list[dict[str, Any]]:
    on_pool = [[w for w in range(WORKLOADS_PER_CLUSTER) if w % len(pools) == p] for p in range(len(pools))]
    workloads: list[dict[str, Any]] = []
    for w in range(WORKLOADS_PER_CLUSTER):
        p = w % len(pools)
        pool = pools[p]
        per_gpu, gpus_per_node, one_per_pod = offers[p]
        least = min(per_gpu.values())
        total = least * gpus_per_node * pool["nodes"]
        gpus = 1 if one_per_pod or pool["sharing"]["strategy"] == "mig" else rng.choice((1, 1, 2))
        sharers = len(on_pool[p])
        if total // (sharers * gpus) == 0:
            gpus = 1  # total >= 2 nodes x 2 GPUs >= sharers, so one GPU per pod always fits
        workload: dict[str, Any] = {
            "name": f"svc-{w:02d}",
            "namespace": _NAMESPACES[w % len(_NAMESPACES)],
            "pool": pool["name"],
            "gpus": gpus,
            "replicas": min(total // (sharers * gpus), 64),
        }
        if pool["sharing"]["strategy"] == "mig" and mig_strategy == "mixed" and len(per_gpu) > 1:
            workload["migProfile"] = sorted(per_gpu)[on_pool[p].index(w) % len(per_gpu)]
        if rng.random() < 0.7:
            workload["cpu"] = rng.choice(("500m", "2", "8"))
            workload["memory"] = rng.choice(("4Gi", "16Gi", "64Gi"))
        workloads.append(workload)
    return workloads


def generate_fleet(clusters: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """A fleet mapping of ``clusters`` clusters, 8 pools and 20 workloads each, deterministic from ``seed``."""
    if clusters < 1:
        raise ValueError("a fleet has at least one cluster")
    rng = random.Random(seed)
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "defaults": {
            "operator": {"namespace": "gpu-operator", "driver": {"enabled": True}, "toolkit": {"enabled": True}},
            "sharing": {"default": {"strategy": "none"}},
        },
        "clusters": [_cluster(rng, index) for index in range(clusters)],
    }


def perturb(fleet: dict[str, Any], fraction: float = 0.01, seed: int = DEFAULT_SEED) -> tuple[dict[str, Any], int]:
    """A copy of ``fleet`` with ``fraction`` of its pools changed (one more node each); also the count changed.

    More nodes only add capacity, so the copy stays valid.
    """
    changed = copy.deepcopy(fleet)
    pools = [pool for cluster in changed["clusters"] for pool in cluster["nodePools"]]
    count = max(1, round(len(pools) * fraction))
    for pool in random.Random(seed + 1).sample(pools, count):
        pool["nodes"] += 1
    return changed, count


def coverage(fleet: dict[str, Any]) -> dict[str, set[str]]:
    """What a generated fleet exercises: GPU model ids, strategies, MIG forms, cluster MIG strategies."""
    found: dict[str, set[str]] = {"gpus": set(), "strategies": set(), "mig": set(), "mig_strategies": set()}
    for cluster in fleet["clusters"]:
        found["mig_strategies"].add(cluster["mig"]["strategy"])
        for pool in cluster["nodePools"]:
            gpu = get_gpu(pool["gpu"])
            found["gpus"].add(gpu.id if gpu else pool["gpu"])
            sharing = pool["sharing"]
            found["strategies"].add(sharing["strategy"])
            if sharing["strategy"] == "mig":
                found["mig"].add("layout" if "layout" in sharing else "config")
    return found


# --- a mixed fleet: the generator's GPU Operator clusters plus HAMi and DRA clusters ----------------------

_HAMI_GPUS = ("tesla-t4", "l4", "a100-40gb", "v100")
_DRA_GPUS = ("tesla-t4", "l4", "a100-40gb", "h100-80gb")
_DRA_SHARING = {
    "none": {"strategy": "none"},
    "time-slicing": {"strategy": "time-slicing", "replicas": 3, "interval": "Medium"},
    "mps": {"strategy": "mps", "replicas": 2},
    "mig": {"strategy": "mig", "config": "all-balanced"},
}
_DRA_MIG_PROFILES = {"a100-40gb": "1g.5gb", "h100-80gb": "1g.10gb"}  # in each model's all-balanced
_BACKEND_STRIDE = 10  # of every 10 clusters, one on HAMi and one on DRA: ~10 % each


def _hami_cluster(rng: random.Random, name: str) -> dict[str, Any]:
    """A HAMi cluster (the shape of examples/hami): pools split into vGPUs, workloads holding GPU memory."""
    pools: list[dict[str, Any]] = []
    workloads: list[dict[str, Any]] = []
    split = rng.randint(2, 10)  # the chart sets one split for the cluster (per-node settings need node names)
    for p in range(4):
        gpu = _HAMI_GPUS[p]
        pool: dict[str, Any] = {
            "name": f"pool-{p}-{gpu}",
            "gpu": gpu,
            "nodes": rng.randint(1, 8),
            "gpusPerNode": rng.choice((1, 2, 4, 8)),
            "nodeSelector": {"gpustack.dev/pool": f"pool-{p}-{gpu}"},
            "sharing": {"strategy": "hami", "split": split},
        }
        pools.append(pool)
        capacity = pool["nodes"] * pool["gpusPerNode"] * split
        for w in range(2):
            workload: dict[str, Any] = {
                "name": f"svc-{p}-{w}",
                "namespace": _NAMESPACES[(p + w) % len(_NAMESPACES)],
                "pool": pool["name"],
                "gpus": 1,
                "replicas": rng.randint(0, capacity // 4),  # each of the two within a quarter of the pool
            }
            if w == 0:
                workload["gpuMemory"] = rng.choice(("1Gi", "3Gi", "3000Mi"))
            else:
                workload["gpuMemoryPercent"] = rng.randint(1, 100 // split)
                workload["gpuCores"] = rng.randint(1, 100 // split)
            workloads.append(workload)
    return {
        "name": name,
        "kubernetes": rng.choice(_KUBERNETES),
        "backend": "hami",
        "operator": {"version": "v25.3.3"},
        "nodePools": pools,
        "workloads": workloads,
    }


def _dra_cluster(rng: random.Random, name: str) -> dict[str, Any]:
    """A DRA cluster (the shape of examples/dra): DeviceClasses and claims, every sharing strategy."""
    pools: list[dict[str, Any]] = []
    workloads: list[dict[str, Any]] = []
    for p, gpu in enumerate(_DRA_GPUS):
        kinds = ["none", "time-slicing", "mps", *(["mig"] if gpu in _DRA_MIG_PROFILES else [])]
        sharing = _DRA_SHARING[rng.choice(kinds)]
        pool: dict[str, Any] = {
            "name": f"pool-{p}-{gpu}",
            "gpu": gpu,
            "nodes": rng.randint(1, 4),
            "gpusPerNode": rng.choice((1, 2, 8)),
            "nodeSelector": {"gpustack.dev/pool": f"pool-{p}-{gpu}"},
            "sharing": sharing,
        }
        pools.append(pool)
        workload: dict[str, Any] = {
            "name": f"svc-{p}",
            "namespace": _NAMESPACES[p % len(_NAMESPACES)],
            "pool": pool["name"],
            # the pods of a workload share one claim, so one node and one GPU's sharers
            "replicas": rng.randint(0, sharing.get("replicas", 1)),
            "gpus": 1,
        }
        if sharing["strategy"] == "mig":
            workload["migProfile"] = _DRA_MIG_PROFILES[gpu]
        workloads.append(workload)
    return {
        "name": name,
        "kubernetes": rng.choice(("1.32.4", "1.33.1", "1.34.2", "1.35.0")),
        "backend": "dra",
        "operator": {"version": "v26.7.0"},
        "nodePools": pools,
        "workloads": workloads,
    }


def generate_mixed_fleet(clusters: int, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """``generate_fleet`` with cluster 10k+5 on HAMi and 10k+9 on DRA (about 10 % each; same names)."""
    fleet = generate_fleet(clusters, seed)
    rng = random.Random(seed + 2)
    for index, cluster in enumerate(fleet["clusters"]):
        if index % _BACKEND_STRIDE == 5:
            fleet["clusters"][index] = _hami_cluster(rng, cluster["name"])
        elif index % _BACKEND_STRIDE == 9:
            fleet["clusters"][index] = _dra_cluster(rng, cluster["name"])
    return fleet
