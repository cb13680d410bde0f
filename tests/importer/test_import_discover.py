"""Pool discovery: grouping, the proposed nodeSelector, versions from nodeInfo, and safe fleet text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen import load_fleet
from gpustack_gen.importer import InputText, import_cluster
from gpustack_gen.importer.discover import discover, label_tier
from gpustack_gen.importer.inputs import read_inputs


def node(
    name: str, labels: dict[str, str], kubelet: str = "v1.30.4", runtime: str = "containerd://1.7.2"
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "status": {"nodeInfo": {"kubeletVersion": kubelet, "containerRuntimeVersion": runtime}},
    }


def nodes_text(*items: dict[str, Any]) -> InputText:
    return InputText("nodes.yaml", json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}))


T4 = {"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.count": "1"}
L4 = {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.count": "2"}


@pytest.mark.parametrize(
    ("key", "tier"),
    [
        ("kubernetes.io/hostname", None),
        ("nvidia.com/gpu.product", None),
        ("nvidia.com/device-plugin.config", None),
        ("feature.node.kubernetes.io/pci-10de.present", None),
        ("beta.kubernetes.io/instance-type", None),
        ("node.kubernetes.io/instance-type", 0),
        ("karpenter.sh/nodepool", 0),
        ("cloud.google.com/gke-nodepool", 0),
        ("eks.amazonaws.com/nodegroup", 0),
        ("pool", 0),
        ("team", 1),
        ("topology.kubernetes.io/zone", 2),
        ("kubernetes.io/arch", 2),
    ],
)
def test_label_tiers(key: str, tier: int | None) -> None:
    assert label_tier(key) == tier


def test_pool_label_preferred_to_instance_type_and_never_hostnames() -> None:
    inputs = read_inputs(
        nodes=nodes_text(
            node("a", {**T4, "node.kubernetes.io/instance-type": "g4dn", "karpenter.sh/nodepool": "t4"}),
            node("b", {**T4, "node.kubernetes.io/instance-type": "g4dn", "karpenter.sh/nodepool": "t4"}),
            node("c", {"node.kubernetes.io/instance-type": "m5", "karpenter.sh/nodepool": "system"}),
        )
    )
    (group,) = discover(inputs.nodes).groups
    assert group.selector == {"karpenter.sh/nodepool": "t4"}
    assert (group.name, group.node_names, group.gpus_per_node) == ("t4", ("a", "b"), 1)


def test_the_smallest_combination_of_plain_labels_is_found() -> None:
    inputs = read_inputs(
        nodes=nodes_text(
            node("a", {**T4, "team": "ml", "rack": "r1"}),
            node("b", {**T4, "team": "ml", "rack": "r1"}),
            node("c", {"team": "ml", "rack": "r2"}),
            node("d", {"team": "web", "rack": "r1"}),
        )
    )
    (group,) = discover(inputs.nodes).groups
    assert group.selector == {"rack": "r1", "team": "ml"}
    assert group.selector_exact
    assert group.name == "tesla-t4"  # no pool-like label: named after the GPU


def test_groups_split_by_config_labels_and_pool_labels() -> None:
    inputs = read_inputs(
        nodes=nodes_text(
            node("a", {**T4, "pool": "x", "nvidia.com/device-plugin.config": "ts-2"}),
            node("b", {**T4, "pool": "x"}),
            node("c", {**T4, "pool": "y"}),
            node("d", {**L4, "pool": "x"}),
        )
    )
    groups = discover(inputs.nodes).groups
    assert [(g.product, g.plugin_config, g.node_names) for g in groups] == [
        ("NVIDIA-L4", None, ("d",)),
        ("Tesla-T4", None, ("b",)),
        ("Tesla-T4", None, ("c",)),
        ("Tesla-T4", "ts-2", ("a",)),
    ]
    assert [g.name for g in groups] == ["x", "x-2", "y", "x-3"]
    # pool=x also selects the other nodes of pool x: only the NVIDIA labels (never proposed) and hostnames differ.
    assert [g.selector_exact for g in groups] == [False, False, True, False]
    assert groups[2].selector == {"pool": "y"}
    assert groups[3].selector == {"gpustack-gen.dev/pool": "x-3"}


def test_versions_and_runtimes_from_node_info() -> None:
    inputs = read_inputs(
        nodes=nodes_text(
            node("a", T4, kubelet="v1.29.15+k3s1", runtime="containerd://1.7.23-k3s2"),
            node("b", T4, kubelet="v1.29.15+k3s1", runtime="containerd://1.7.23-k3s2"),
            node("c", T4, kubelet="v1.28.9+k3s1", runtime="docker://24.0.7"),
        )
    )
    found = discover(inputs.nodes)
    assert (found.kubernetes, found.runtime) == ("1.29.15", "containerd")
    assert [t.message for t in found.todos] == [
        "the nodes run kubelets 1.28.9, 1.29.15; took 1.29.15, the most common: set the version the cluster will run",
        "the nodes run container runtimes containerd, docker; took containerd",
    ]


def test_docker_runtime_is_a_todo() -> None:
    inputs = read_inputs(nodes=nodes_text(node("a", T4, runtime="docker://24.0.7")))
    found = discover(inputs.nodes)
    assert found.runtime is None
    assert "container runtime 'docker' is not one the fleet model knows" in found.todos[0].message


@pytest.mark.parametrize("value", ["true", "1.10", "on", "0o17", "null", "2024-01-01", "8"])
def test_label_values_other_types_would_read_as_are_quoted(value: str) -> None:
    result = import_cluster(
        "c",
        nodes=nodes_text(node("a", {**T4, "pool": value}), node("b", {"pool": "other"})),
        operator_version="v25.3.3",
    )
    (pool,) = load_fleet(result.fleet_text).clusters[0].pools
    assert dict(pool.node_selector) == {"pool": value}


def test_hostile_values_cannot_inject_yaml_or_comments() -> None:
    hostile = "x\n    sharing: {strategy: mps}\n# TODO: injected"
    result = import_cluster(
        "c",
        nodes=nodes_text(
            node("a", {**T4, "pool": hostile, "nvidia.com/device-plugin.config": "k\nkind: Evil"}),
            node("b", {"pool": "other"}),
        ),
        kubernetes="1.30.4",
        operator_version="v25.3.3",
    )
    document = YAML(typ="safe", pure=True).load(result.fleet_text)
    (pool,) = document["clusters"][0]["nodePools"]
    assert pool["nodeSelector"] == {"pool": hostile}
    assert pool["sharing"] == {"strategy": "none"}
    assert document["kind"] == "Fleet"
    lines = result.fleet_text.splitlines()
    assert not any(line.lstrip().startswith("# TODO: injected") for line in lines)
    assert not any(line.lstrip().startswith("kind: Evil") for line in lines)
    assert any("the imported fleet does not validate" in t for t in result.todos)  # the label value is invalid
