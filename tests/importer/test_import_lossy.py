"""Inputs the fleet model cannot express: each one is a TODO (in the file and in the result), never dropped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from gpustack_gen import load_fleet
from gpustack_gen.importer import InputText, check_roundtrip, import_cluster
from gpustack_gen.lint import lint_files

# What values-v24.9.yaml sets outside the fleet model: passed through in the user's values file, no TODO.
V24_PASSED = {
    "operator": {"defaultRuntime": "containerd"},
    "migManager": {"env": [{"name": "WITH_REBOOT", "value": "false"}]},
}


def test_missing_key_and_time_sliced_mig_devices(data: Path, nodes_with: Callable[..., InputText]) -> None:
    nodes = nodes_with(
        {
            "gpu-a100": {"nvidia.com/device-plugin.config": "a100-80gb"},  # no such key in the ConfigMap
            "gpu-h100": {"nvidia.com/device-plugin.config": "a100-40gb"},  # time-slices MIG devices too
        }
    )
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=nodes,
    )
    assert list(result.todos) == [
        "node label nvidia.com/device-plugin.config=a100-80gb names key a100-80gb, which ConfigMap "
        "time-slicing-config-fine does not have (the device plugin cannot load it); imported as whole GPUs",
        "ConfigMap time-slicing-config-fine key a100-40gb: sharing.timeSlicing.resources for nvidia.com/mig-1g.5gb, "
        "nvidia.com/mig-2g.10gb, nvidia.com/mig-3g.20gb, nvidia.com/mig-7g.40gb (sharing MIG devices) outside the "
        "fleet model; not imported",
    ]
    assert result.plan.state.user_values == V24_PASSED
    text = result.fleet_text
    # Pool TODOs sit in the pool they concern.
    a100 = text.index("- name: gpu-a100")
    assert (
        a100
        < text.index("# TODO: node label nvidia.com/device-plugin.config=a100-80gb")
        < text.index("- name: gpu-h100")
    )
    pools = {p.name: p for p in load_fleet(text).clusters[0].pools}
    assert (pools["gpu-h100"].sharing.strategy, pools["gpu-h100"].sharing.replicas) == ("time-slicing", 8)
    report = check_roundtrip(result)
    assert not report.ok
    assert [d.split(": ", 1)[0].split(" (")[0] for d in report.differences] == ["pool gpu-a100", "pool gpu-h100"]
    assert (
        "device-plugin config: inputs missing (key a100-80gb is not in ConfigMap time-slicing-config-fine)"
        in (report.differences[0])
    )
    assert "device-plugin config sharing.timeSlicing.resources: inputs [" in report.differences[1]


def test_unused_and_unrelated_configmaps_are_listed(data: Path) -> None:
    dcgm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "dcgm-metrics", "namespace": "gpu-operator"},
        "data": {"dcgm-metrics.csv": "DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).\n"},
    }
    extra = InputText("extra.yaml", json.dumps(dcgm) + "\n---\n" + (data / "time-slicing-config-all.yaml").read_text())
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml", extra],
        nodes=data / "nodes.yaml",
    )
    assert list(result.todos) == [
        "ConfigMap dcgm-metrics is neither a device-plugin nor a mig-parted config; not imported",
        "ConfigMap time-slicing-config-all holds device-plugin configs but the Operator does not use it; not imported",
        "ConfigMap time-slicing-config-fine: no node uses key a100-40gb (not the default, and no node is labelled "
        "nvidia.com/device-plugin.config with it); not imported",
    ]
    assert result.plan.state.user_values == V24_PASSED
    assert check_roundtrip(result).ok


def test_settings_outside_the_model_and_conflicts_with_the_clusterpolicy(data: Path) -> None:
    values = (data / "values-v25.3.yaml").read_text() + (
        "\ndcgmExporter:\n  serviceMonitor:\n    enabled: true\nmps:\n  ignored: 1\n"
    )
    values = values.replace("  strategy: single", "  strategy: mixed")
    result = import_cluster(
        "prod",
        values=InputText("values.yaml", values),
        configmaps=[data / "time-slicing-config-all.yaml"],
        clusterpolicy=data / "clusterpolicy-v25.3.yaml",
        nodes=data / "nodes-crio.yaml",
        operator_version="v25.3.3",
    )
    assert list(result.todos) == [
        "mig.strategy: values.yaml says mixed but the ClusterPolicy says single; took the ClusterPolicy's (what runs now)",
        "ClusterPolicy spec fields outside the fleet model were not imported (daemonsets, dcgm, dcgmExporter, gfd, "
        "nodeStatusExporter, operator, validator, and image, env and resource settings): keep any you changed in a "
        "values file",
    ]
    assert result.plan.state.user_values == {
        "driver": {"kernelModuleType": "auto"},
        "dcgmExporter": {"serviceMonitor": {"enabled": True}},
        "mps": {"ignored": 1},
    }
    assert load_fleet(result.fleet_text).clusters[0].mig_strategy == "single"
    assert check_roundtrip(result).ok


def test_no_effect_settings_are_warnings(data: Path, nodes_with: Callable[..., InputText]) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "plugin", "namespace": "gpu-operator"},
        "data": {
            "t4": "version: v1\nresources:\n  gpus: [{pattern: '*', name: gpu}]\nsharing:\n  timeSlicing:\n"
            "    renameByDefault: true\n    resources:\n    - name: gpu\n      replicas: 3\n      rename: foo\n"
            "      devices: all\n"
        },
    }
    nodes = nodes_with({"g4dn.xlarge": {}}, source="nodes-crio.yaml")
    result = import_cluster(
        "prod",
        configmaps=[InputText("plugin.yaml", json.dumps(config))],
        nodes=nodes,
        operator_version="v25.3.3",
        kubernetes="v1.29.15",
    )
    assert list(result.todos) == [
        "no --values or --clusterpolicy tells devicePlugin.config.name; assumed ConfigMap plugin (the one holding "
        "the keys the nodes name)",
        "ConfigMap plugin: no node uses key t4 (not the default, and no node is labelled "
        "nvidia.com/device-plugin.config with it); not imported",
    ]
    assert list(result.warnings) == []
    labelled = nodes_with({"gpu-t4": {"nvidia.com/device-plugin.config": "t4"}}, source="nodes-crio.yaml")
    result = import_cluster(
        "prod",
        configmaps=[InputText("plugin.yaml", json.dumps(config))],
        nodes=labelled,
        operator_version="v25.3.3",
    )
    assert list(result.warnings) == [
        "ConfigMap plugin key t4: resources (the device plugin drops it) has no effect; dropped",
        "ConfigMap plugin key t4: sharing.timeSlicing.resources[].rename (the device plugin resets it) has no effect; "
        "dropped",
        "ConfigMap plugin key t4: sharing.timeSlicing.resources[].devices (the device plugin resets it) has no "
        "effect; dropped",
    ]
    (pool,) = load_fleet(result.fleet_text).clusters[0].pools
    assert (pool.sharing.replicas, pool.sharing.rename_by_default) == (3, True)
    assert check_roundtrip(result).ok


def test_unknown_gpu_and_pools_without_a_selecting_label(data: Path, nodes_with: Callable[..., InputText]) -> None:
    nodes = nodes_with(
        {
            "gpu-h100": {"nvidia.com/gpu.product": "NVIDIA-Z900", "eks.amazonaws.com/nodegroup": "gpu-t4"},
            "gpu-t4": {"nvidia.com/gpu.count": None},
        }
    )
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=nodes,
    )
    pools = {todo.place: todo.message for todo in result.todo_items if todo.place.startswith("pool:")}
    assert "GPU NVIDIA-Z900 (nvidia.com/gpu.product) is not in the catalog" in "\n".join(result.todos)
    assert "the nodes have no nvidia.com/gpu.count label; assumed 1 GPU per node" in result.todos
    assert any(t.startswith("the imported fleet does not validate: ") for t in result.todos)
    assert pools  # each sits in its pool
    report = check_roundtrip(result)
    assert not report.ok
    assert report.differences[0].startswith("the imported fleet does not validate: ")


def test_nodes_that_no_label_set_separates_get_a_new_pool_label(
    data: Path, nodes_with: Callable[..., InputText]
) -> None:
    # Two T4 nodes of one node group move to another config: only their hostnames tell them apart.
    document = json.loads(nodes_with({}).text)
    for item in document["items"][:2]:
        item["metadata"]["labels"]["nvidia.com/device-plugin.config"] = "a100-40gb"
        item["metadata"]["labels"]["topology.kubernetes.io/zone"] = "eu-west-1c"
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=InputText("nodes.yaml", json.dumps(document)),
    )
    new_label = [t for t in result.todos if "gpustack-gen.dev/pool" in t]
    assert new_label == [
        "no set of existing labels selects exactly these nodes; label them first: kubectl --context train label nodes "
        "ip-10-0-32-17.eu-west-1.compute.internal ip-10-0-33-17.eu-west-1.compute.internal "
        "gpustack-gen.dev/pool=gpu-t4",
        "no set of existing labels selects exactly these nodes; label them first: kubectl --context train label nodes "
        "ip-10-0-34-17.eu-west-1.compute.internal gpustack-gen.dev/pool=gpu-t4-2",
    ]
    assert not check_roundtrip(result).ok  # the nodes do not carry the label yet


def test_configmap_created_by_the_chart_from_values_data(data: Path) -> None:
    values = """
driver:
  version: 550.10
devicePlugin:
  config:
    create: true
    name: plugin-config
    default: ts
    data:
      ts: |
        version: v1
        sharing:
          timeSlicing:
            failRequestsGreaterThanOne: true
            resources:
            - name: nvidia.com/gpu
              replicas: 2
"""
    result = import_cluster(
        "prod",
        values=InputText("values.yaml", values),
        nodes=data / "nodes-crio.yaml",
        operator_version="v25.3.3",
    )
    assert list(result.todos) == [
        "driver.version: 550.1 (values.yaml driver.version) is not a string (YAML read a number: quote it); "
        "not imported",
        "no input tells the Operator's namespace (the ConfigMaps must be in it); left to the default, gpu-operator",
    ]
    (pool,) = load_fleet(result.fleet_text).clusters[0].pools
    assert (pool.sharing.strategy, pool.sharing.replicas, pool.sharing.fail_requests_greater_than_one) == (
        "time-slicing",
        2,
        True,
    )
    assert "devicePlugin.config.data in values.yaml key ts (devicePlugin.config.default)" in result.fleet_text
    assert check_roundtrip(result).ok


def test_import_and_lint_give_one_verdict_on_the_plugin_configs_mig_strategy(data: Path) -> None:
    """NVIDIA's sample sets flags.migStrategy none on key tesla-t4 of a mixed cluster: harmless, since the Operator's
    MIG_STRATEGY overrides it (and a node without MIG devices is the same under every strategy). lint finds
    nothing in the file, so import does not warn about it either."""
    report = lint_files([data / "time-slicing-config-fine.yaml"])
    assert report.problems == ()
    result = import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=data / "nodes.yaml",
    )
    assert load_fleet(result.fleet_text).clusters[0].mig_strategy == "mixed"
    assert not [line for line in (*result.warnings, *result.todos) if "migStrategy" in line]
