"""Backend device-plugin (the standalone NVIDIA device plugin chart): its values hold only keys the pinned chart
has (held against each version's values.yaml upstream), its configs are the Operator backend's and pass the
device plugin's own rules, and the fleet's rules for it refuse what the chart cannot do."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen import FleetError, load_fleet
from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.backends.device_plugin.values import device_plugin_values
from gpustack_gen.validate.backends.device_plugin import VALUES_KEYS, check_device_plugin_values
from gpustack_gen.versions.device_plugin import DEVICE_PLUGIN_VERSIONS, DevicePluginVersion

BASE: dict[str, Any] = {
    "apiVersion": "gpustack-gen/v1alpha1",
    "kind": "Fleet",
    "clusters": [
        {
            "name": "c1",
            "kubernetes": "1.28.15",
            "containerRuntime": "cri-o",
            "backend": "device-plugin",
            "sharing": {"tesla-t4": {"strategy": "time-slicing", "replicas": 4}},
            "nodePools": [
                {"name": "t4", "gpu": "tesla-t4", "nodes": 2, "nodeSelector": {"pool": "t4"}},
                {
                    "name": "l4",
                    "gpu": "l4",
                    "nodes": 1,
                    "nodeSelector": {"pool": "l4"},
                    "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                },
            ],
            "workloads": [{"name": "api", "namespace": "ml", "pool": "t4", "replicas": 2}],
        }
    ],
}


def _fleet(**cluster: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data["clusters"][0].update(cluster)
    return data


def _chart_values(upstream: Path, release: DevicePluginVersion) -> dict[str, Any]:
    path = upstream / "device-plugin" / f"k8s-device-plugin-v{release.version}-helm-values.yaml"
    data: dict[str, Any] = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    return data


def _in_chart(values: Any, path: str) -> bool:
    """The chart declares the key path, or a parent left free-form (``{}`` or null: any value goes there)."""
    node = values
    for part in path.split("."):
        if node is None or node == {}:
            return True
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _leaf_paths(data: Any, prefix: str = "") -> list[str]:
    if isinstance(data, dict) and data:
        return [p for key, value in data.items() for p in _leaf_paths(value, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


@pytest.mark.parametrize("release", DEVICE_PLUGIN_VERSIONS, ids=lambda r: r.version)
def test_every_gated_key_is_in_that_chart_version(upstream: Path, release: DevicePluginVersion) -> None:
    chart = _chart_values(upstream, release)
    missing = [gate.path for gate in VALUES_KEYS if gate.allows(release) and not _in_chart(chart, gate.path)]
    assert missing == []


@pytest.mark.parametrize("release", DEVICE_PLUGIN_VERSIONS, ids=lambda r: r.version)
def test_rendered_values_hold_only_keys_of_the_pinned_chart(upstream: Path, release: DevicePluginVersion) -> None:
    cluster = load_fleet(_fleet(devicePlugin={"version": release.version, "runtimeClassName": "nvidia"})).clusters[0]
    values = device_plugin_values(cluster)
    assert check_device_plugin_values(values, release) == []
    chart = _chart_values(upstream, release)
    written = [p for p in _leaf_paths({k: v for k, v in values.items() if k != "config"})]
    written += [f"config.{key}" for key in values["config"]]
    assert [p for p in written if not _in_chart(chart, p)] == []


def test_the_configs_are_the_operator_backends_under_the_same_keys() -> None:
    standalone = load_fleet(_fleet()).clusters[0]
    operator = load_fleet(_fleet(backend="gpu-operator")).clusters[0]
    values = device_plugin_values(standalone)
    (configmap,) = next(a for a in compile_cluster(operator) if a.kind == "device-plugin-configmap").documents
    assert {k: v.data for k, v in values["config"]["map"].items()} == {k: v.data for k, v in configmap["data"].items()}
    assert values["config"]["default"] == "any"


def test_tolerations_keep_the_charts_and_add_each_pool_taint() -> None:
    values = device_plugin_values(load_fleet(_fleet()).clusters[0])
    assert values["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    ]


def test_every_affinity_term_carries_the_off_switch() -> None:
    values = device_plugin_values(load_fleet(_fleet()).clusters[0])
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert len(terms) == 3
    for term in terms:
        assert {"key": "gpustack.io/standalone-plugin", "operator": "NotIn", "values": ["off"]} in term[
            "matchExpressions"
        ]


def test_nodes_are_labelled_gpu_present_and_workloads_ask_one_gpu() -> None:
    artifacts = {a.path: a for a in compile_cluster(load_fleet(_fleet()).clusters[0])}
    (labels,) = artifacts["node-labels.yaml"].documents
    assert all(pool["labels"]["nvidia.com/gpu.present"] == "true" for pool in labels["pools"])
    (fragment,) = artifacts["workloads/ml.api.yaml"].documents
    assert fragment["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert "gpu-operator-values.yaml" not in artifacts and "clusterpolicy-patch.yaml" not in artifacts


def test_a_config_the_plugin_refuses_and_a_default_naming_no_key_are_findings() -> None:
    release = DEVICE_PLUGIN_VERSIONS[-1]
    values = device_plugin_values(load_fleet(_fleet()).clusters[0])
    broken = copy.deepcopy(values)
    broken["config"]["map"]["t4"].data["sharing"]["timeSlicing"]["resources"][0]["replicas"] = 1
    broken["config"]["default"] = "missing"
    paths = [finding.path for finding in check_device_plugin_values(broken, release)]
    assert "config.default" in paths
    assert any(path.startswith("config.map.t4:sharing.timeSlicing.resources") for path in paths), paths


def test_a_key_the_chart_version_lacks_is_a_finding() -> None:
    values = {**device_plugin_values(load_fleet(_fleet()).clusters[0]), "mps": {"root": "/run/nvidia/mps"}}
    assert [f.path for f in check_device_plugin_values(values, DEVICE_PLUGIN_VERSIONS[0])] == ["mps"]


@pytest.mark.parametrize(
    ("cluster", "expected"),
    [
        (
            {"devicePlugin": {"version": "0.14.5"}, "sharing": {"tesla-t4": {"strategy": "mps", "replicas": 2}}},
            "shares by MPS, which the nvidia-device-plugin chart has from 0.15.0",
        ),
        ({"devicePlugin": {"version": "0.16.0"}}, "unknown nvidia-device-plugin chart version '0.16.0'"),
        (
            {
                "devicePlugin": {"version": "0.17.4"},
                "mig": {"strategy": "single"},
                "sharing": {"tesla-t4": {"strategy": "mps", "replicas": 2, "failRequestsGreaterThanOne": False}},
            },
            "failRequestsGreaterThanOne: false cannot be honoured on MPS by device plugin v0.17.4",
        ),
        ({"devicePlugin": {"namespace": "default"}}, "refuses to install into namespace default"),
        (
            {"sharing": {"tesla-t4": {"strategy": "mig", "config": "all-1g.5gb"}}},
            "strategy mig does not exist on backend device-plugin",
        ),
    ],
)
def test_what_the_chart_cannot_do_is_refused_at_its_line(cluster: dict[str, Any], expected: str) -> None:
    with pytest.raises(FleetError) as error:
        load_fleet(_fleet(**cluster))
    assert any(expected in problem.message for problem in error.value.errors), [p.message for p in error.value.errors]
