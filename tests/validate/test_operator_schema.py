"""Per-version schemas of the GPU Operator subset, generated from the version-gate table."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from gpustack_gen.validate.operator_keys import CLUSTERPOLICY_SPEC_KEYS, VALUES_KEYS
from gpustack_gen.validate.operator_schema import (
    KEY_DOCS,
    OPERATOR_SCHEMA_KINDS,
    check_operator_keys,
    operator_schema,
)
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, get_operator_version


def _properties(node: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    for key, child in node.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        yield path, child
        yield from _properties(child, path)


def test_every_gate_path_and_parent_has_docs() -> None:
    for gate in (*VALUES_KEYS, *CLUSTERPOLICY_SPEC_KEYS):
        parts = gate.path.split(".")
        for depth in range(1, len(parts) + 1):
            assert ".".join(parts[:depth]) in KEY_DOCS


@pytest.mark.parametrize("kind", OPERATOR_SCHEMA_KINDS)
@pytest.mark.parametrize("release", OPERATOR_VERSIONS, ids=lambda v: v.version)
def test_schema_is_strict_and_documented(kind: str, release: Any) -> None:
    schema = operator_schema(kind, release.version)
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"https://gpustack-gen.dev/schemas/{kind}/{release.version}.schema.json"
    assert schema["additionalProperties"] is False
    leaves = []
    for path, node in _properties(schema):
        assert node["description"], path
        if node.get("type") == "object":
            assert node["additionalProperties"] is False, path
        if "x-since" in node:
            leaves.append(path)
    gates = VALUES_KEYS if kind == "gpu-operator-values" else CLUSTERPOLICY_SPEC_KEYS
    assert sorted(leaves) == sorted(g.path for g in gates if g.allows(release))


def test_schema_follows_the_version_gates() -> None:
    old = operator_schema("clusterpolicy-spec", "v23.9.2")
    new = operator_schema("clusterpolicy-spec", "v26.7.0")
    assert "mps" not in old["properties"]["devicePlugin"]["properties"]
    assert new["properties"]["devicePlugin"]["properties"]["mps"]["properties"]["root"]["x-since"] == "v24.3.0"
    assert "default" in old["properties"]["cdi"]["properties"]
    assert "default" not in new["properties"]["cdi"]["properties"]
    assert "nriPluginEnabled" in new["properties"]["cdi"]["properties"]
    with pytest.raises(ValueError, match="not a GPU Operator version"):
        operator_schema("clusterpolicy-spec", "latest")


def test_check_operator_keys_ignores_unrelated_keys_and_gates_known_ones() -> None:
    release = get_operator_version("v25.3.3")
    assert release is not None
    values = {
        "cdi": {"enabled": True, "nriPluginEnabled": True},
        "mig": {"strategy": "Mixed"},
        "dcgmExporter": {"enabled": False},  # not in the subset: not looked at
        "driver": {"enabled": True, "repository": "nvcr.io/nvidia"},
    }
    findings = check_operator_keys(values, "gpu-operator-values", release)
    assert [(f.path, f.message) for f in findings] == [
        ("cdi.nriPluginEnabled", "not in GPU Operator v25.3.3 (added in v26.3.0)"),
        ("mig.strategy", "expected one of 'none', 'single', 'mixed', got 'Mixed'"),
    ]


def test_schema_command_prints_each_kind() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "gpustack_gen", "schema", *args]
        return subprocess.run(command, capture_output=True, text=True, check=False)

    values = json.loads(run("--kind", "gpu-operator-values", "--operator-version", "v24.3.0").stdout)
    assert values == operator_schema("gpu-operator-values", "v24.3.0")
    newest = json.loads(run("--kind", "clusterpolicy-spec").stdout)
    assert newest["$id"].endswith(f"/{OPERATOR_VERSIONS[-1].version}.schema.json")
    assert json.loads(run("--kind", "mig-parted-config").stdout)["$id"].endswith("mig-parted-config.schema.json")
    assert json.loads(run().stdout)["$id"].endswith("fleet.schema.json")
    assert run("--kind", "fleet", "--operator-version", "v25.3.3").returncode == 2
    unknown = run("--kind", "clusterpolicy-spec", "--operator-version", "v9.9.9")
    assert unknown.returncode == 2 and "unknown GPU Operator version" in unknown.stderr
