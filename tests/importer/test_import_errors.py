"""Error paths of ``gpustack-gen import``: round-trip differences of an edited fleet, and malformed inputs."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from gpustack_gen.errors import FleetError
from gpustack_gen.importer import ImportResult, InputText, check_roundtrip, import_cluster
from gpustack_gen.importer.inputs import read_inputs

A100_NODES = "ip-10-0-64-201.eu-west-1.compute.internal, ip-10-0-65-201.eu-west-1.compute.internal"
H100_NODES = "ip-10-0-96-44.eu-west-1.compute.internal, ip-10-0-97-44.eu-west-1.compute.internal"
T4_NODES = (
    "ip-10-0-32-17.eu-west-1.compute.internal, ip-10-0-33-17.eu-west-1.compute.internal, "
    "ip-10-0-34-17.eu-west-1.compute.internal"
)


@pytest.fixture
def v24(data: Path) -> ImportResult:
    return import_cluster(
        "train",
        values=data / "values-v24.9.yaml",
        configmaps=[data / "time-slicing-config-fine.yaml", data / "custom-mig-config.yaml"],
        nodes=data / "nodes.yaml",
    )


def edited(result: ImportResult, old: str, new: str) -> ImportResult:
    assert result.fleet_text.count(old) >= 1, old
    return dataclasses.replace(result, fleet_text=result.fleet_text.replace(old, new, 1))


# --- check_roundtrip: one edit of the imported fleet, one difference ----------------------------------


def test_the_unedited_import_round_trips(v24: ImportResult) -> None:
    assert check_roundtrip(v24).differences == ()


@pytest.mark.parametrize(
    ("old", "new", "difference"),
    [
        pytest.param(
            "1g.5gb: 5",
            "1g.5gb: 4",
            f"pool gpu-a100 ({A100_NODES}): MIG: inputs {{1g.5gb: 5, 2g.10gb: 1}}, rendered {{1g.5gb: 4, 2g.10gb: 1}}",
            id="mig-layout-count",
        ),
        pytest.param(
            "cdi:\n        enabled: false",
            "cdi:\n        enabled: true",
            "values cdi.enabled: inputs false, rendered true",
            id="cdi-enabled",
        ),
        pytest.param(
            "eks.amazonaws.com/nodegroup: gpu-t4",
            "eks.amazonaws.com/nodegroup: gpu-t4x",
            f"no pool ({T4_NODES}): selects this GPU node: it would not be managed",
            id="no-pool-selects-the-node",
        ),
        pytest.param(
            "eks.amazonaws.com/nodegroup: gpu-h100",
            "eks.amazonaws.com/nodegroup: gpu-a100",
            "the imported fleet does not validate: clusters[0].nodePools[1].nodeSelector: "
            "pool 'gpu-h100' has the same nodeSelector as pool 'gpu-a100'",
            id="duplicate-node-selector",
        ),
        pytest.param(
            "replicas: 4",
            "replicas: 2",
            f"pool gpu-t4 ({T4_NODES}): device-plugin config sharing.timeSlicing.resources: "
            "inputs [{'name': 'nvidia.com/gpu', 'replicas': 4}], rendered [{'name': 'nvidia.com/gpu', 'replicas': 2}]",
            id="time-slicing-replicas",
        ),
        pytest.param(
            "gpu: h100-80gb",
            "gpu: a100-80gb",
            f"pool gpu-h100 ({H100_NODES}): GPU model: node has h100-80gb, pool has a100-80gb",
            id="gpu-model",
        ),
        pytest.param(
            "version: v24.9.2",
            "version: v25.3.0",
            "GPU Operator version: inputs v24.9.2, fleet v25.3.0",
            id="operator-version",
        ),
        pytest.param(
            "namespace: gpu-operator",
            "namespace: other",
            "namespace of the ConfigMaps: inputs gpu-operator, rendered other",
            id="namespace",
        ),
        pytest.param(
            "gpusPerNode: 8",
            "gpusPerNode: eight",
            "the imported fleet does not validate: clusters[0].nodePools[0].gpusPerNode: "
            "expected an integer, got the string 'eight'",
            id="fleet-does-not-validate",
        ),
    ],
)
def test_a_single_edit_is_one_difference(v24: ImportResult, old: str, new: str, difference: str) -> None:
    report = check_roundtrip(edited(v24, old, new))
    assert not report.ok
    assert report.differences == (difference,)


def test_a_selector_that_selects_other_pools_nodes_names_both_pools(v24: ImportResult) -> None:
    report = check_roundtrip(
        edited(v24, "eks.amazonaws.com/nodegroup: gpu-t4", "feature.node.kubernetes.io/pci-10de.present: 'true'")
    )
    assert report.differences == (
        f"pools gpu-a100, gpu-t4 ({A100_NODES}): all select this GPU node",
        f"pools gpu-h100, gpu-t4 ({H100_NODES}): all select this GPU node",
    )


def test_a_selector_that_selects_nodes_without_gpus(v24: ImportResult) -> None:
    report = check_roundtrip(edited(v24, "eks.amazonaws.com/nodegroup: gpu-t4", "kubernetes.io/os: linux"))
    assert report.differences[-1] == (
        "pool gpu-t4 (ip-10-0-8-5.eu-west-1.compute.internal): its nodeSelector also selects nodes without GPUs"
    )
    assert len(report.differences) == 3


# --- malformed inputs --------------------------------------------------------------------------------


def doc(kind: str, name: str | None = "x", **fields: Any) -> dict[str, Any]:
    metadata = {"name": name, "namespace": "gpu-operator"} if name is not None else {"namespace": "gpu-operator"}
    return {"apiVersion": "v1", "kind": kind, "metadata": metadata, **fields}


def stream(*documents: Any) -> str:
    return "---\n".join(json.dumps(d) + "\n" for d in documents)


POLICY = doc("ClusterPolicy", "cluster-policy", spec={"mig": {"strategy": "single"}})
NODE = doc("Node", "gpu-1", spec={}, status={})
NODE["metadata"]["labels"] = {"nvidia.com/gpu.product": "Tesla-T4"}


@pytest.mark.parametrize(
    ("option", "text", "message", "line", "path"),
    [
        pytest.param(
            "values",
            "mig:\n  strategy: single\n---\ncdi:\n  enabled: true\n",
            "found 2 YAML documents; a values file holds one",
            4,
            "",
            id="values-with-two-documents",
        ),
        pytest.param(
            "configmaps",
            stream(doc("ConfigMap", None, data={"config.yaml": "version: v1\n"})),
            "a ConfigMap without metadata.name",
            1,
            "",
            id="configmap-without-name",
        ),
        pytest.param(
            "configmaps",
            json.dumps({"apiVersion": "v1", "kind": "List", "items": [doc("ConfigMap", "")]}),
            "a ConfigMap without metadata.name",
            1,
            "items[0]",
            id="configmap-in-a-list-with-empty-name",
        ),
        pytest.param(
            "configmaps",
            stream(doc("ConfigMap", "plugin", data={"any": {"version": "v1"}})),
            "ConfigMap plugin: data must map keys to strings (config files)",
            1,
            "",
            id="configmap-data-value-not-a-string",
        ),
        pytest.param(
            "configmaps",
            stream(doc("ConfigMap", "plugin", data=["version: v1"])),
            "ConfigMap plugin: data must map keys to strings (config files)",
            1,
            "",
            id="configmap-data-not-a-mapping",
        ),
        pytest.param(
            "clusterpolicy",
            stream(doc("ClusterPolicy", "cluster-policy")),
            "a ClusterPolicy without spec",
            1,
            "",
            id="clusterpolicy-without-spec",
        ),
        pytest.param(
            "clusterpolicy",
            stream(doc("ClusterPolicy", "cluster-policy", spec="mig")),
            "a ClusterPolicy without spec",
            1,
            "",
            id="clusterpolicy-spec-not-a-mapping",
        ),
        pytest.param(
            "clusterpolicy",
            stream(POLICY, POLICY),
            "found 2 ClusterPolicies; a cluster has one",
            3,
            "",
            id="two-clusterpolicies",
        ),
        pytest.param(
            "clusterpolicy",
            json.dumps({"apiVersion": "v1", "kind": "ClusterPolicyList", "items": []}),
            "no ClusterPolicy in the file",
            0,
            "",
            id="no-clusterpolicy",
        ),
        pytest.param(
            "clusterpolicy",
            stream(doc("ConfigMap", "plugin", data={})),
            "a ConfigMap (plugin), not a ClusterPolicy",
            1,
            "",
            id="configmap-as-clusterpolicy",
        ),
        pytest.param(
            "nodes",
            stream(doc("Node", None)),
            "a Node without metadata.name or with malformed labels",
            1,
            "",
            id="node-without-name",
        ),
        pytest.param(
            "nodes",
            json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"labels": ["a=b"]}}]}),
            "a Node without metadata.name or with malformed labels",
            1,
            "items[0]",
            id="node-in-a-nodelist-with-list-labels",
        ),
    ],
)
@pytest.mark.parametrize("reader", [read_inputs, partial(import_cluster, "c")], ids=["read_inputs", "import_cluster"])
def test_malformed_input_is_refused(
    reader: Callable[..., object], option: str, text: str, message: str, line: int, path: str
) -> None:
    source = InputText(f"{option}.yaml", text)
    with pytest.raises(FleetError) as error:
        reader(**{option: [source] if option == "configmaps" else source})
    problem = error.value.problems[0]
    assert problem.message == message
    assert (problem.file, problem.line, problem.path) == (f"{option}.yaml", line, path)


def test_two_clusterpolicies_hint_how_to_get_the_one() -> None:
    with pytest.raises(FleetError) as error:
        read_inputs(clusterpolicy=InputText("cp.yaml", stream(POLICY, POLICY, POLICY)))
    (problem,) = error.value.problems
    assert problem.message == "found 3 ClusterPolicies; a cluster has one"
    assert problem.hint == "kubectl get clusterpolicy cluster-policy -o yaml"


def test_a_wrong_document_suppresses_no_clusterpolicy() -> None:
    # Only the wrong document is reported, not also "no ClusterPolicy in the file".
    with pytest.raises(FleetError) as error:
        read_inputs(clusterpolicy=InputText("cp.yaml", stream(NODE)))
    (problem,) = error.value.problems
    assert problem.message == "a Node (gpu-1), not a ClusterPolicy"
    assert problem.hint == "pass it as --nodes"


def test_every_malformed_input_is_reported_together() -> None:
    with pytest.raises(FleetError) as error:
        read_inputs(
            values=InputText("values.yaml", "mig: {}\n---\ncdi: {}\n"),
            configmaps=[InputText("cm.yaml", stream(doc("ConfigMap", None)))],
            clusterpolicy=InputText("cp.yaml", stream(doc("ClusterPolicy"))),
            nodes=InputText("nodes.yaml", stream(NODE, doc("Node", None))),
        )
    assert [(p.file, p.message) for p in error.value.problems] == [
        ("cm.yaml", "a ConfigMap without metadata.name"),
        ("cp.yaml", "a ClusterPolicy without spec"),
        ("nodes.yaml", "a Node without metadata.name or with malformed labels"),
        ("values.yaml", "found 2 YAML documents; a values file holds one"),
    ]
    assert str(error.value).endswith("(and 3 more)")
