"""``import`` from a standalone nvidia-device-plugin release: the cluster's state is simulated from the rendered
example (examples/device-plugin), imported, and rendered again; and each way the inputs can be refused."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from gpustack_gen.cli import main
from gpustack_gen.errors import FleetError
from gpustack_gen.importer import ImportResult, InputText, check_roundtrip, import_cluster
from gpustack_gen.importer.standalone import refusal
from gpustack_gen.model import load_fleet
from gpustack_gen.model.backends.device_plugin import device_plugin_options
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.rendering import render
from gpustack_gen.versions.device_plugin import device_plugin_version_names
from gpustack_gen.yamlio.load import load_plain

EXAMPLE = Path(__file__).parents[2] / "examples" / "device-plugin"
VALUES = "nvidia-device-plugin-values.yaml"


def _clusters() -> list[Cluster]:
    return list(load_fleet(EXAMPLE / "fleet.yaml").clusters)


def _rendered(cluster: Cluster, name: str) -> Any:
    return load_plain((EXAMPLE / "rendered" / cluster.name / name).read_text(encoding="utf-8"))


def cluster_state(cluster: Cluster) -> dict[str, InputText]:
    """What `helm get values nvdp`, `kubectl get configmap`, `kubectl get nodes` and `kubectl get daemonset` give
    once the rendered files are applied: the values as passed, the chart's ConfigMap from config.map, each pool's
    nodes with node-labels.yaml's labels (and GFD's), and the plugin's DaemonSet with the chart's labels."""
    values = _rendered(cluster, VALUES)
    options = device_plugin_options(cluster)
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "nvdp-nvidia-device-plugin-configs", "namespace": options.namespace},
        "data": values["config"]["map"],
    }
    labels = {p["name"]: p["labels"] for p in _rendered(cluster, "node-labels.yaml")["pools"]}
    nodes = []
    for pool in cluster.pools:
        shared = "-SHARED" if pool.sharing.strategy != "none" else ""
        for index in range(pool.nodes):
            node_labels = {
                **dict(pool.node_selector),
                **labels[pool.name],
                "nvidia.com/gpu.product": pool.gpu.product_labels[0] + shared,
                "nvidia.com/gpu.count": str(pool.gpus_per_node),
            }
            nodes.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": f"{cluster.name}-{pool.name}-{index}", "labels": node_labels},
                    "status": {
                        "nodeInfo": {
                            "kubeletVersion": f"v{cluster.kubernetes}",
                            "containerRuntimeVersion": f"{cluster.container_runtime}://1.28.4",
                        }
                    },
                }
            )
    version = options.release.version
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "nvdp-nvidia-device-plugin",
            "namespace": options.namespace,
            "labels": {
                "helm.sh/chart": f"nvidia-device-plugin-{version}",
                "app.kubernetes.io/name": "nvidia-device-plugin",
            },
        },
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nvidia-device-plugin-ctr", "image": f"nvcr.io/nvidia/k8s-device-plugin:v{version}"}
                    ]
                }
            }
        },
    }
    return {
        "values": InputText("values.json", json.dumps(values, indent=1)),
        "configmap": InputText("configmap.json", json.dumps(configmap, indent=1)),
        "nodes": InputText("nodes.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}, indent=1)),
        "daemonsets": InputText(
            "daemonsets.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [daemonset]}, indent=1)
        ),
    }


STATE = EXAMPLE / "cluster-state"  # the docs' import example reads these


@pytest.mark.parametrize("cluster", _clusters(), ids=lambda c: c.name)
def test_committed_cluster_state_is_the_simulated_one(cluster: Cluster) -> None:
    """examples/device-plugin/cluster-state/<cluster>/ is what cluster_state() gives (UPDATE_GOLDEN=1 rewrites it)."""
    import os

    for state in cluster_state(cluster).values():
        path = STATE / cluster.name / state.name
        if os.environ.get("UPDATE_GOLDEN") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(state.text + "\n", encoding="utf-8")
        assert path.read_text(encoding="utf-8") == state.text + "\n", path


def _import(cluster: str, state: dict[str, InputText]) -> ImportResult:
    return import_cluster(
        cluster,
        values=state.get("values"),
        configmaps=[state["configmap"]] if "configmap" in state else [],
        nodes=state["nodes"],
        daemonsets=state.get("daemonsets"),
    )


@pytest.mark.parametrize("cluster", _clusters(), ids=lambda c: c.name)
def test_rendered_example_round_trips(cluster: Cluster) -> None:
    result = _import(cluster.name, cluster_state(cluster))
    assert result.todos == ()
    report = check_roundtrip(result)
    assert report.differences == ()
    imported = load_fleet(result.fleet_text, name="fleet.yaml").clusters[0]
    assert imported.backend == "device-plugin"
    assert device_plugin_options(imported) == device_plugin_options(cluster)
    bundle = render(load_fleet(result.fleet_text, name="fleet.yaml"))
    again = load_plain(bundle.files[f"{cluster.name}/{VALUES}"].text)
    assert again == _rendered(cluster, VALUES)


def test_round_trip_finds_an_edited_sharing() -> None:
    cluster = _clusters()[1]
    result = _import(cluster.name, cluster_state(cluster))
    text = result.fleet_text.replace("replicas: 5", "replicas: 3", 1)
    assert text != result.fleet_text
    report = check_roundtrip(dataclasses.replace(result, fleet_text=text))
    assert any("replicas" in line for line in report.differences)


def test_unset_version_is_a_todo_naming_the_known_ones() -> None:
    cluster = _clusters()[0]
    state = cluster_state(cluster)
    del state["daemonsets"]
    result = _import(cluster.name, state)
    version_todos = [t for t in result.todos if "chart version" in t]
    assert len(version_todos) == 1
    assert all(v in version_todos[0] for v in device_plugin_version_names())
    assert 'version: "' not in result.fleet_text


def test_value_the_fleet_does_not_render_is_a_todo() -> None:
    cluster = _clusters()[0]
    state = cluster_state(cluster)
    values = json.loads(state["values"].text)
    values["image"] = {"tag": "v0.17.4-ubi9"}
    state["values"] = InputText("values.json", json.dumps(values))
    result = _import(cluster.name, state)
    assert any("image.tag" in t for t in result.todos)
    assert any("image.tag" in line for line in check_roundtrip(result).differences)


# --- refused inputs: exit 2, located ------------------------------------------------------------------


def _cli(tmp_path: Path, state: dict[str, InputText]) -> Any:
    args = ["import", "--cluster", "edge"]
    for option, key in (
        ("--values", "values"),
        ("--configmap", "configmap"),
        ("--nodes", "nodes"),
        ("--daemonsets", "daemonsets"),
    ):
        if key in state:
            path = tmp_path / state[key].name
            path.write_text(state[key].text, encoding="utf-8")
            args += [option, str(path)]
    return CliRunner().invoke(main, args)


def _edge() -> dict[str, InputText]:
    return cluster_state(_clusters()[0])


def test_bad_yaml_values(tmp_path: Path) -> None:
    state = _edge()
    state["values"] = InputText("values.yaml", "config:\n  map: [unclosed\n")
    run = _cli(tmp_path, state)
    assert run.exit_code == 2, run.output
    assert "values.yaml:3:" in run.output or "values.yaml:2:" in run.output


def test_config_name_without_its_configmap(tmp_path: Path) -> None:
    state = _edge()
    del state["configmap"]
    state["values"] = InputText("values.yaml", "deviceListStrategy: envvar\nconfig:\n  name: time-slicing\n")
    run = _cli(tmp_path, state)
    assert run.exit_code == 2, run.output
    assert "values.yaml:3:" in run.output and "ConfigMap time-slicing" in run.output


def test_unknown_chart_version(tmp_path: Path) -> None:
    state = _edge()
    state["daemonsets"] = InputText("daemonsets.json", state["daemonsets"].text.replace("0.17.4", "0.16.1"))
    run = _cli(tmp_path, state)
    assert run.exit_code == 2, run.output
    assert "daemonsets.json:" in run.output and "0.16.1" in run.output
    assert all(v in run.output for v in device_plugin_version_names())


def test_a_config_the_plugin_refuses(tmp_path: Path) -> None:
    state = _edge()
    values = _rendered(_clusters()[0], VALUES)
    values["config"]["map"]["t4"] = values["config"]["map"]["t4"].replace("replicas: 4", "replicas: 1")
    assert "replicas: 1" in values["config"]["map"]["t4"]
    out = io.StringIO()
    YAML().dump(values, out)
    text = out.getvalue()
    state["values"] = InputText("values.yaml", text)
    run = _cli(tmp_path, state)
    assert run.exit_code == 2, run.output
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip().startswith("t4:"))
    assert f"values.yaml:{line}:" in run.output and "replicas must be >= 2" in run.output


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"version": "v2"}, "unknown version"),
        ({"sharing": {"timeSlicing": {}}}, "no resources specified"),
        ({"sharing": {"mps": {"resources": [{"replicas": 2}]}}}, "no resource name"),
        ({"sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": "4"}]}}}, ">= 2"),
    ],
)
def test_refusal_rules(config: dict[str, Any], reason: str) -> None:
    assert reason in (refusal(config) or "")


def test_operator_version_refused_for_a_standalone_release() -> None:
    state = _edge()
    with pytest.raises(FleetError, match="standalone"):
        import_cluster("edge", values=state["values"], nodes=state["nodes"], operator_version="v25.3.3")


def _renamed(state: dict[str, InputText], release: str, *, label: bool) -> dict[str, InputText]:
    """The state of a release named ``release``: its DaemonSet's name and, with ``label``, its instance label."""
    listing = json.loads(state["daemonsets"].text)
    (daemonset,) = listing["items"]
    daemonset["metadata"]["name"] = f"{release}-nvidia-device-plugin"
    if label:
        daemonset["metadata"]["labels"]["app.kubernetes.io/instance"] = release
    configmap = json.loads(state["configmap"].text)
    configmap["metadata"]["name"] = f"{release}-nvidia-device-plugin-configs"
    return {
        **state,
        "daemonsets": InputText("daemonsets.json", json.dumps(listing, indent=1)),
        "configmap": InputText("configmap.json", json.dumps(configmap, indent=1)),
    }


@pytest.mark.parametrize("label", [True, False], ids=["instance-label", "daemonset-name"])
def test_a_release_of_another_name_is_imported_under_its_name(label: bool) -> None:
    """Rendered as nvdp, it would be a second release: a second plugin on every node."""
    cluster = _clusters()[1]
    result = _import(cluster.name, _renamed(cluster_state(cluster), "gpu-plugin", label=label))
    imported = load_fleet(result.fleet_text, name="fleet.yaml").clusters[0]
    assert device_plugin_options(imported).release_name == "gpu-plugin"
    values = render(load_fleet(result.fleet_text, name="fleet.yaml")).files[f"{cluster.name}/{VALUES}"].text
    assert "helm upgrade --install gpu-plugin nvdp/nvidia-device-plugin" in values
    assert check_roundtrip(result).differences == ()


def test_no_input_naming_the_release_is_a_todo() -> None:
    cluster = _clusters()[0]
    state = cluster_state(cluster)
    del state["daemonsets"], state["configmap"]
    todos = [t for t in _import(cluster.name, state).todos if "release's name " in t]
    assert len(todos) == 1 and "devicePlugin.releaseName" in todos[0]
