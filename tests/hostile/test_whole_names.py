"""Names are checked whole: a value that ends in a newline is not a name, in every reader that checks names; and
the fields of a state object are of their type, or a problem that names them.

Python's ``$`` also matches just before a final newline, so ``re.match(r"^[a-z]+$", "ml\\n")`` matches; a namespace
written ``namespace: |`` followed by ``ml`` then reads as ``"ml\\n"``, which splits every printed command it lands in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_helpers import state_with_node, verify_from

from gpustack_gen import FleetError, load_fleet
from gpustack_gen.errors import Problem
from gpustack_gen.k8s_state import Document, Where, read_objects
from gpustack_gen.k8s_state.objects import READERS
from gpustack_gen.lint import default_options, lint_text
from gpustack_gen.validate.schema_files import schema_validator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "fleet.yaml").read_text(encoding="utf-8")

# (field, the line of examples/fleet.yaml, the same value with a newline at its end)
FLEET_FIELDS = [
    ("operator namespace", "    namespace: gpu-operator\n", "    namespace: |\n      gpu-operator\n"),
    ("cluster name", "  - name: prod\n", "  - name: |\n      prod\n"),
    ("pool name", "      - name: t4\n", "      - name: |\n          t4\n"),
    ("workload name", "      - name: inference-api\n", '      - name: "inference-api\\n"\n'),
    ("workload namespace", "        namespace: ml\n", "        namespace: |\n          ml\n"),
    (
        "node selector key",
        "nodeSelector: {node.kubernetes.io/instance-type: gpu-t4}",
        'nodeSelector: {"node.kubernetes.io/instance-type\\n": gpu-t4}',
    ),
    (
        "node selector value",
        "nodeSelector: {node.kubernetes.io/instance-type: gpu-t4}",
        'nodeSelector: {node.kubernetes.io/instance-type: "gpu-t4\\n"}',
    ),
    ("kubernetes version", 'kubernetes: "1.29.15"', 'kubernetes: "1.29.15\\n"'),
    ("cpu quantity", "cpu: 300m", 'cpu: "300m\\n"'),
    ("memory quantity", "memory: 3Gi", 'memory: "3Gi\\n"'),
]


@pytest.mark.parametrize(("field", "line", "hostile"), FLEET_FIELDS, ids=[f[0] for f in FLEET_FIELDS])
def test_fleet_refuses_a_trailing_newline(field: str, line: str, hostile: str) -> None:
    assert line in EXAMPLE
    with pytest.raises(FleetError) as refused:
        load_fleet(EXAMPLE.replace(line, hostile, 1))
    assert any("\\n" in problem.message for problem in refused.value.errors), refused.value.errors


def test_fleet_refuses_a_trailing_newline_in_a_driver_version() -> None:
    text = EXAMPLE.replace("    driver: {enabled: true}\n", '    driver: {enabled: true, version: "580.82.07\\n"}\n')
    with pytest.raises(FleetError, match="is not a driver version"):
        load_fleet(text)


@pytest.mark.parametrize(
    ("schema", "document"),
    [
        (
            "mig-parted-config.schema.json",
            {"version": "v1", "mig-configs": {"all-off\n": [{"devices": "all", "mig-enabled": False}]}},
        ),
        (
            "device-plugin-config.schema.json",
            {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu\n", "replicas": 2}]}}},
        ),
    ],
)
def test_schema_patterns_match_the_whole_string(schema: str, document: dict[str, object]) -> None:
    """jsonschema's own ``pattern`` uses ``re.search``; JSON Schema's ``$`` is the end of the string (ECMA-262)."""
    validator = schema_validator(schema)
    fixed = json.loads(json.dumps(document).replace("\\n", ""))
    assert validator.is_valid(fixed)
    assert not validator.is_valid(document)


def test_lint_refuses_a_resource_name_with_a_trailing_newline() -> None:
    text = 'version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: "nvidia.com/gpu\\n"\n      replicas: 4\n'
    problems, _, readable = lint_text(text, "config.yaml", default_options(None, "gpu-operator", None))
    assert readable
    assert any("nvidia.com/gpu\\n" in problem.message for problem in problems), problems


def test_import_refuses_a_cluster_name_with_a_trailing_newline(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gpustack_gen", "import", "--cluster", "prod\n", "--kubernetes", "1.29.15"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "'prod\\n' is not a valid name" in result.stderr


STATE_OBJECTS = [
    ("v1", "Node", {"metadata": {"name": "gpu-a\n"}}),
    ("v1", "Pod", {"metadata": {"name": "plugin-x\n", "namespace": "gpu-operator"}}),
    ("v1", "Pod", {"metadata": {"name": "plugin-x", "namespace": "gpu-operator\n"}}),
    ("v1", "Pod", {"metadata": {"name": "plugin-x"}, "spec": {"nodeName": "gpu-a\n"}}),
    ("v1", "ConfigMap", {"metadata": {"name": "time-slicing-config\n"}, "data": {}}),
    ("apps/v1", "DaemonSet", {"metadata": {"name": "nvidia-device-plugin-daemonset\n"}}),
    ("nvidia.com/v1", "ClusterPolicy", {"metadata": {"name": "cluster-policy\n"}, "spec": {}}),
    (
        "resource.k8s.io/v1",
        "ResourceSlice",
        {"metadata": {"name": "s"}, "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "p"}, "nodeName": "a\n"}},
    ),
    ("resource.k8s.io/v1", "ResourceClaim", {"metadata": {"name": "claim\n", "namespace": "ml"}, "spec": {}}),
]


@pytest.mark.parametrize(("api_version", "kind", "data"), STATE_OBJECTS)
def test_state_objects_refuse_a_name_with_a_trailing_newline(
    api_version: str, kind: str, data: dict[str, object]
) -> None:
    read = READERS[(api_version, kind)]
    problem = read({"apiVersion": api_version, "kind": kind, **data}, Where("state.json", 1))
    assert isinstance(problem, str), problem
    assert "\\n'" in problem


def test_verify_from_refuses_a_node_name_with_a_trailing_newline(tmp_path: Path) -> None:
    def rename(node: dict[str, Any]) -> None:
        node["metadata"]["name"] += "\n"

    result = verify_from(state_with_node(tmp_path, rename))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "is not a Kubernetes object name" in result.stderr
    assert "kubectl" not in result.stdout


WRONG_TYPES = [
    ("v1", "Node", {"metadata": {"name": "gpu-a"}, "spec": {"taints": 5}}, "spec.taints is an integer"),
    ("v1", "Pod", {"metadata": {"name": "p", "ownerReferences": "ds"}}, "metadata.ownerReferences is a string"),
    ("v1", "Pod", {"metadata": {"name": "p"}, "status": {"containerStatuses": {"a": 1}}}, "containerStatuses is a"),
    (
        "resource.k8s.io/v1",
        "ResourceSlice",
        {"metadata": {"name": "s"}, "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "p"}, "devices": 3}},
        "spec.devices is an integer",
    ),
    (
        "resource.k8s.io/v1",
        "ResourceClaim",
        {"metadata": {"name": "c", "namespace": "ml"}, "spec": {}, "status": {"reservedFor": 2}},
        "status.reservedFor is an integer",
    ),
]


@pytest.mark.parametrize(("api_version", "kind", "data", "message"), WRONG_TYPES)
def test_a_field_of_the_wrong_type_is_a_problem_not_a_crash(
    api_version: str, kind: str, data: dict[str, object], message: str
) -> None:
    problems: list[Problem] = []
    document = Document({"kind": "List", "items": [{"apiVersion": api_version, "kind": kind, **data}]}, 1)
    assert (
        read_objects("state.json", [document], (kind,), lambda *_: Problem("state.json", 0, 0, "", ""), problems) == []
    )
    (problem,) = problems
    assert message in problem.message


def test_verify_from_exits_2_on_a_taint_list_of_the_wrong_type(tmp_path: Path) -> None:
    def taint(node: dict[str, Any]) -> None:
        node.setdefault("spec", {})["taints"] = "NoSchedule"

    result = verify_from(state_with_node(tmp_path, taint))
    assert result.returncode == 2, result.stderr
    assert "a Node: spec.taints is a string; the API gives a list" in result.stderr
