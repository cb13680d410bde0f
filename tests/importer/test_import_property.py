"""Property: render a random small fleet, import what it renders (plus nodes made from it), get it back."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gpustack_gen import load_fleet, render
from gpustack_gen.catalog import builtin_mig_config, builtin_mig_config_names, get_gpu, place_layout
from gpustack_gen.importer import InputText, check_roundtrip, import_cluster
from gpustack_gen.model import Pool

WHOLE_GPUS = ("tesla-t4", "l4", "a10g", "l40s")
MIG_GPUS = ("a100-40gb", "a100-80gb", "h100-80gb", "a30-24gb")
VERSIONS = ("v24.9.2", "v25.3.3", "v26.7.0")


@st.composite
def sharing_policies(draw: st.DrawFn, gpu_id: str, mig_strategy: str) -> dict[str, Any]:
    gpu = get_gpu(gpu_id)
    assert gpu is not None
    kinds = ["none", "time-slicing"] + (["mps"] if mig_strategy == "single" else [])
    if gpu.mig_capable:
        kinds += ["mig-layout", "mig-config"]
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return {"strategy": "none"}
    if kind in ("time-slicing", "mps"):
        policy: dict[str, Any] = {"strategy": kind, "replicas": draw(st.integers(2, 8))}
        if draw(st.booleans()):
            policy["renameByDefault"] = draw(st.booleans())
        if kind == "time-slicing" and draw(st.booleans()):
            policy["failRequestsGreaterThanOne"] = draw(st.booleans())
        return policy
    if kind == "mig-config":
        names = [
            name
            for name in builtin_mig_config_names(gpu)
            if (entry := builtin_mig_config(gpu, name)) is not None
            and entry.mig_enabled
            and entry.mig_devices
            and (mig_strategy == "mixed" or len(entry.mig_devices) == 1)
        ]
        return {"strategy": "mig", "config": draw(st.sampled_from(sorted(names)))}
    profiles = [p for p in gpu.profiles if "+" not in p.name and "-" not in p.name]
    count = 1 if mig_strategy == "single" else draw(st.integers(1, 2))
    chosen = draw(st.lists(st.sampled_from(profiles), min_size=count, max_size=count, unique_by=lambda p: p.name))
    layout = {p.name: draw(st.integers(1, p.max_instances)) for p in chosen}
    assume(place_layout(gpu, layout).ok)
    return {"strategy": "mig", "layout": layout}


@st.composite
def fleets(draw: st.DrawFn) -> dict[str, Any]:
    mig_strategy = draw(st.sampled_from(["single", "mixed"]))
    pools = []
    for index in range(draw(st.integers(1, 3))):
        gpu_id = draw(st.sampled_from(WHOLE_GPUS + MIG_GPUS))
        pools.append(
            {
                "name": f"p{index}",
                "gpu": gpu_id,
                "nodes": draw(st.integers(1, 3)),
                "gpusPerNode": draw(st.sampled_from([1, 2, 4, 8])),
                "nodeSelector": {"pool": f"p{index}"},
                "sharing": draw(sharing_policies(gpu_id, mig_strategy)),
            }
        )
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "clusters": [
            {
                "name": "c1",
                "kubernetes": draw(st.sampled_from(["1.29.15", "1.30.8", "1.31.2"])),
                "containerRuntime": draw(st.sampled_from(["containerd", "cri-o"])),
                "mig": {"strategy": mig_strategy},
                "operator": {"version": draw(st.sampled_from(VERSIONS)), "cdi": {"enabled": True}},
                "nodePools": pools,
            }
        ],
    }


def synthetic_nodes(pools: tuple[Pool, ...], labels: dict[str, dict[str, str]], kubernetes: str, runtime: str) -> str:
    """`kubectl get nodes -o yaml` for the fleet: its selectors, its NVIDIA labels and what GFD would add."""
    items = []
    for pool in pools:
        product = pool.gpu.product_labels[0]
        if pool.sharing.strategy == "mig" and len(pool.mig_devices()) == 1:
            product += "-MIG-" + pool.mig_devices()[0][0]  # the single strategy's suffix (harmless otherwise)
        if pool.sharing.is_shared and not pool.sharing.rename_by_default:
            product += "-SHARED"
        for index in range(pool.nodes):
            name = f"{pool.name}-node-{index}"
            node_labels = {
                **dict(pool.node_selector),
                **labels[pool.name],
                "kubernetes.io/hostname": name,
                "nvidia.com/gpu.product": product,
                "nvidia.com/gpu.count": str(pool.gpus_per_node),
                "nvidia.com/gpu.present": "true",
            }
            items.append(_node(name, node_labels, kubernetes, runtime))
    items.append(_node("cpu-0", {"kubernetes.io/hostname": "cpu-0", "pool": "system"}, kubernetes, runtime))
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


def _node(name: str, labels: dict[str, str], kubernetes: str, runtime: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"nodeInfo": {"kubeletVersion": f"v{kubernetes}", "containerRuntimeVersion": f"{runtime}://1.0.0"}},
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(fleets())
def test_rendered_fleets_import_back_to_an_equivalent_fleet(data: dict[str, Any]) -> None:
    original = load_fleet(data)
    cluster = original.clusters[0]
    files = {path.split("/", 1)[1]: f.text for path, f in render(original).files.items()}
    node_labels = YAML(typ="safe", pure=True).load(files["node-labels.yaml"])
    labels = {entry["name"]: entry["labels"] for entry in node_labels["pools"]}
    configmaps = [
        InputText(name, files[name])
        for name in ("device-plugin-config.yaml", "mig-parted-config.yaml")
        if name in files
    ]
    result = import_cluster(
        "c1",
        values=InputText("gpu-operator-values.yaml", files["gpu-operator-values.yaml"]),
        configmaps=configmaps,
        nodes=InputText(
            "nodes.yaml", synthetic_nodes(cluster.pools, labels, cluster.kubernetes, cluster.container_runtime)
        ),
        operator_version=cluster.operator.release.version,
    )
    assert result.todos == ()
    imported = load_fleet(result.fleet_text).clusters[0]
    assert (imported.kubernetes, imported.container_runtime, imported.mig_strategy) == (
        cluster.kubernetes,
        cluster.container_runtime,
        cluster.mig_strategy,
    )
    assert imported.operator == cluster.operator
    assert _pools(imported.pools) == _pools(cluster.pools)
    report = check_roundtrip(result)
    assert report.differences == ()


def _pools(pools: tuple[Pool, ...]) -> dict[str, tuple[Any, ...]]:
    return {
        pool.name: (
            pool.gpu.id,
            pool.nodes,
            pool.gpus_per_node,
            dict(pool.node_selector),
            pool.sharing.strategy,
            pool.sharing.replicas,
            pool.sharing.rename_by_default,
            pool.sharing.fail_requests_greater_than_one,
            dict(pool.sharing.mig_layout),
            pool.sharing.mig_config,
        )
        for pool in pools
    }
