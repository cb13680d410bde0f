"""Realistic input sets import, validate and round-trip with no change; their TODOs are listed exactly."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gpustack_gen import load_fleet
from gpustack_gen.importer import check_roundtrip, import_cluster

OUTSIDE = "is outside the fleet model; not imported: keep it in a values file applied after gpu-operator-values.yaml"
V25_VERSION_TODO = (
    "devicePlugin.version v0.17.4 ({files}), migManager.version v0.12.3-ubuntu20.04 ({files}) ships with GPU "
    "Operator v25.3.3 and v25.3.4; took v25.3.3: pass --operator-version if it is another"
)
POLICY_TODO = (
    "ClusterPolicy spec fields outside the fleet model were not imported (daemonsets, dcgm, dcgmExporter, gfd, "
    "nodeStatusExporter, operator, validator, and image, env and resource settings): keep any you changed in a "
    "values file"
)


def _pools(text: str) -> dict[str, Any]:
    cluster = load_fleet(text).clusters[0]
    return {pool.name: pool for pool in cluster.pools}


def test_eks_cluster_v24_9_with_fine_time_slicing_and_custom_mig(data: Path) -> None:
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=data / "nodes.yaml",
    )
    assert list(result.todos) == [
        f"values-v24.9.yaml: operator.defaultRuntime: containerd {OUTSIDE}",
        f'values-v24.9.yaml: migManager.env: [{{"name": "WITH_REBOOT", "value": "false"}}] {OUTSIDE}',
        "ConfigMap time-slicing-config-fine: no node uses key a100-40gb (not the default, and no node is labelled "
        "nvidia.com/device-plugin.config with it); not imported",
    ]
    assert result.warnings == ()
    fleet = load_fleet(result.fleet_text)
    cluster = fleet.clusters[0]
    assert (cluster.name, cluster.kubernetes, cluster.container_runtime, cluster.mig_strategy) == (
        "train",
        "1.30.8",
        "containerd",
        "mixed",
    )
    operator = cluster.operator
    assert operator.release.version == "v24.9.2"
    assert (operator.namespace, operator.cdi_enabled, operator.cdi_default) == ("gpu-operator", False, False)
    assert (operator.driver_enabled, operator.driver_version, operator.toolkit_enabled) == (True, "550.144.03", True)
    pools = {pool.name: pool for pool in cluster.pools}
    assert sorted(pools) == ["gpu-a100", "gpu-h100", "gpu-t4"]
    t4, a100, h100 = pools["gpu-t4"], pools["gpu-a100"], pools["gpu-h100"]
    assert (t4.gpu.id, t4.nodes, t4.gpus_per_node) == ("tesla-t4", 3, 1)
    assert dict(t4.node_selector) == {"eks.amazonaws.com/nodegroup": "gpu-t4"}
    assert (t4.sharing.strategy, t4.sharing.replicas, t4.sharing.rename_by_default) == ("time-slicing", 4, False)
    assert (a100.gpu.id, a100.nodes, a100.gpus_per_node, a100.sharing.strategy) == ("a100-40gb", 2, 8, "mig")
    assert dict(a100.sharing.mig_layout) == {"1g.5gb": 5, "2g.10gb": 1}
    assert [(t.key, t.value, t.effect) for t in a100.taints] == [("nvidia.com/gpu", None, "NoSchedule")]
    assert (h100.gpu.id, h100.nodes, h100.sharing.strategy) == ("h100-80gb", 2, "none")
    report = check_roundtrip(result)
    assert report.differences == ()
    assert report.ok
    assert "values migManager.config.name: custom-mig-config -> gpustack-mig-parted-config" in report.expected
    assert any("label nvidia.com/mig.config=custom-2g.10gb-1g.5gbx5 (now five-1g-one-2g)" in e for e in report.expected)


@pytest.mark.parametrize("with_policy", [True, False])
def test_crio_cluster_v25_3_with_time_slicing_for_all(data: Path, with_policy: bool) -> None:
    result = import_cluster(
        "prod",
        values=data / "values-v25.3.yaml",
        configmaps=[data / "time-slicing-config-all.yaml"],
        clusterpolicy=data / "clusterpolicy-v25.3.yaml" if with_policy else None,
        nodes=data / "nodes-crio.yaml",
    )
    # The ClusterPolicy names the release (its validator image carries the chart's appVersion); the values
    # file alone names only component versions that two releases ship.
    version_todo = [] if with_policy else [V25_VERSION_TODO.format(files="values-v25.3.yaml")]
    expected = [*version_todo, f"values-v25.3.yaml: driver.kernelModuleType: auto {OUTSIDE}"]
    assert list(result.todos) == [*expected, *([POLICY_TODO] if with_policy else [])]
    source = "clusterpolicy-v25.3.yaml spec.validator.version v25.3.3" if with_policy else "ships with GPU Operator"
    assert re.search(rf"\n      version: v25\.3\.3 +# .*{source}", result.fleet_text)
    cluster = load_fleet(result.fleet_text).clusters[0]
    assert (cluster.kubernetes, cluster.container_runtime, cluster.mig_strategy) == ("1.29.15", "cri-o", "single")
    assert (cluster.operator.release.version, cluster.operator.cdi_enabled, cluster.operator.cdi_default) == (
        "v25.3.3",
        True,
        True,
    )
    (pool,) = cluster.pools
    assert (pool.name, pool.gpu.id, pool.nodes, pool.gpus_per_node) == ("gpu-t4", "tesla-t4", 3, 1)
    assert dict(pool.node_selector) == {"node.kubernetes.io/instance-type": "gpu-t4"}
    assert (pool.sharing.strategy, pool.sharing.replicas) == ("time-slicing", 4)
    assert pool.taints == ()  # the control-plane taint is on the control-plane node only
    report = check_roundtrip(result)
    assert report.ok, report.differences
    assert (
        "values devicePlugin.config.name: time-slicing-config-all -> gpustack-device-plugin-config" in report.expected
    )
    # NVIDIA's documented default key is the one gpustack-gen uses: unlabelled nodes keep their config.
    assert not any("config.default" in line for line in report.expected)


def test_clusterpolicy_alone_tells_the_settings(data: Path) -> None:
    result = import_cluster(
        "prod",
        configmaps=[data / "time-slicing-config-all.yaml"],
        clusterpolicy=data / "clusterpolicy-v25.3.yaml",
        nodes=data / "nodes-crio.yaml",
        operator_version="v25.3.3",
    )
    assert list(result.todos) == [POLICY_TODO]
    assert "# TODO: " + POLICY_TODO in result.fleet_text
    (pool,) = load_fleet(result.fleet_text).clusters[0].pools
    assert (pool.sharing.strategy, pool.sharing.replicas) == ("time-slicing", 4)
    assert check_roundtrip(result).ok


def test_operator_version_option_wins_and_values_naming_another_plugin_version_is_listed(data: Path) -> None:
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=data / "nodes.yaml",
        operator_version="v25.3.3",
    )
    assert re.search(r"\n      version: v25\.3\.3 +# --operator-version\n", result.fleet_text)
    assert f"values-v24.9.yaml: devicePlugin.version: v0.17.0 {OUTSIDE}" in result.todos
    assert f"values-v24.9.yaml: migManager.version: v0.10.0-ubuntu20.04 {OUTSIDE}" in result.todos
    report = check_roundtrip(result)
    assert report.ok, report.differences  # the version was not told by the inputs once overridden


def test_without_values_the_configmaps_and_node_labels_are_used(data: Path) -> None:
    result = import_cluster(
        "train",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=data / "nodes.yaml",
        operator_version="v24.9.2",
    )
    assert list(result.todos) == [
        "no --values or --clusterpolicy tells devicePlugin.config.name; assumed ConfigMap time-slicing-config-fine "
        "(the one holding the keys the nodes name)",
        "no --values or --clusterpolicy tells migManager.config.name; assumed ConfigMap custom-mig-config",
        "ConfigMap time-slicing-config-fine: no node uses key a100-40gb (not the default, and no node is labelled "
        "nvidia.com/device-plugin.config with it); not imported",
    ]
    cluster = load_fleet(result.fleet_text).clusters[0]
    assert cluster.mig_strategy == "mixed"  # from the nvidia.com/mig.strategy label GFD sets
    assert "node label nvidia.com/mig.strategy (set by GPU feature discovery)" in result.fleet_text
    assert check_roundtrip(result).ok


def test_fleet_text_carries_its_sources_and_todos_as_comments(data: Path) -> None:
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=data / "nodes.yaml",
    )
    text = result.fleet_text
    assert text.startswith("# Imported by gpustack-gen import from values-v24.9.yaml, time-slicing-config-fine.yaml")
    for todo in result.todos:
        assert f"# TODO: {todo}\n" in text
    assert (
        "# ConfigMap time-slicing-config-fine key tesla-t4 (node label nvidia.com/device-plugin.config=tesla-t4)"
        in (text)
    )
    assert "# ConfigMap custom-mig-config config five-1g-one-2g (node label nvidia.com/mig.config=five-1g-one-2g)" in (
        text
    )
    assert "# values-v24.9.yaml cdi.enabled" in text
    assert 'kubernetes: "1.30.8"' in text
