"""The GPU Operator version of an import: taken where an input names it, said where from, never guessed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpustack_gen import load_fleet
from gpustack_gen.cli import main
from gpustack_gen.errors import FleetError
from gpustack_gen.importer import InputText, check_roundtrip, import_cluster

# A v25.3 values file as people keep them: the settings they changed, no image versions.
V25_3_VALUES = "cdi:\n  enabled: true\n  default: true\nmig:\n  strategy: single\n"


def _policy(labels: dict[str, str], validator: str | None = None) -> InputText:
    spec: dict[str, object] = {"cdi": {"enabled": True, "default": True}}
    if validator is not None:
        spec["validator"] = {"version": validator}
    policy = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy", "labels": labels},
        "spec": spec,
    }
    return InputText("clusterpolicy.yaml", json.dumps(policy))


def _refusal(**inputs: Any) -> str:
    with pytest.raises(FleetError) as caught:
        import_cluster("prod", **inputs)
    (problem,) = caught.value.problems
    assert problem.file == "--operator-version"
    assert "pass --operator-version" in problem.hint
    return problem.message


def test_without_a_version_in_the_inputs_the_import_is_refused(data: Path, tmp_path: Path) -> None:
    """Assuming the newest version dropped cdi.default from a v25.3 values file, and the round trip said nothing."""
    message = _refusal(values=InputText("values.yaml", V25_3_VALUES), nodes=data / "nodes-crio.yaml")
    assert message.startswith("no input tells the GPU Operator version (the ClusterPolicy's helm.sh/chart label")
    values = tmp_path / "values.yaml"
    values.write_text(V25_3_VALUES, encoding="utf-8")
    args = ["import", "--cluster", "prod", "--values", str(values), "--nodes", str(data / "nodes-crio.yaml")]
    result = CliRunner().invoke(main, [*args, "--check-roundtrip"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("--operator-version: no input tells the GPU Operator version")


def test_with_the_version_given_the_v25_3_settings_are_kept(data: Path) -> None:
    result = import_cluster(
        "prod",
        values=InputText("values.yaml", V25_3_VALUES),
        nodes=data / "nodes-crio.yaml",
        operator_version="v25.3.3",
    )
    operator = load_fleet(result.fleet_text).clusters[0].operator
    assert (operator.release.version, operator.cdi_enabled, operator.cdi_default) == ("v25.3.3", True, True)
    assert check_roundtrip(result).ok


@pytest.mark.parametrize(
    ("policy", "values", "version", "source"),
    [
        (
            _policy({"helm.sh/chart": "gpu-operator-v25.3.0"}),
            None,
            "v25.3.0",
            "clusterpolicy.yaml label helm.sh/chart=gpu-operator-v25.3.0",
        ),
        (
            _policy({"app.kubernetes.io/version": "v24.9.2"}),
            None,
            "v24.9.2",
            "clusterpolicy.yaml label app.kubernetes.io/version=v24.9.2",
        ),
        (_policy({}, validator="v25.3.3"), None, "v25.3.3", "clusterpolicy.yaml spec.validator.version v25.3.3"),
        (None, V25_3_VALUES + "operator:\n  version: v25.3.3\n", "v25.3.3", "values.yaml operator.version v25.3.3"),
    ],
)
def test_the_version_comes_from_where_an_input_names_it(
    data: Path, policy: InputText | None, values: str | None, version: str, source: str
) -> None:
    result = import_cluster(
        "prod",
        values=None if values is None else InputText("values.yaml", values),
        clusterpolicy=policy,
        nodes=data / "nodes-crio.yaml",
    )
    assert re.search(rf"\n      version: {re.escape(version)} +# {re.escape(source)}\n", result.fleet_text)
    assert not any("operator.version" in todo for todo in result.todos)  # the value is the release's own
    assert load_fleet(result.fleet_text).clusters[0].operator.release.version == version


def test_inputs_naming_different_versions_are_refused(data: Path) -> None:
    message = _refusal(
        values=InputText("values.yaml", "operator:\n  version: v25.3.3\n"),
        clusterpolicy=_policy({"helm.sh/chart": "gpu-operator-v24.9.2"}),
        nodes=data / "nodes-crio.yaml",
    )
    assert message == (
        "the inputs name different GPU Operator versions: v24.9.2 (clusterpolicy.yaml label "
        "helm.sh/chart=gpu-operator-v24.9.2); v25.3.3 (values.yaml operator.version v25.3.3)"
    )


def test_a_version_gpustack_gen_does_not_know_is_refused(data: Path) -> None:
    message = _refusal(clusterpolicy=_policy({"helm.sh/chart": "gpu-operator-v25.3.1"}), nodes=data / "nodes-crio.yaml")
    assert message.startswith(
        "GPU Operator v25.3.1 (clusterpolicy.yaml label helm.sh/chart=gpu-operator-v25.3.1) is not a version "
        "gpustack-gen knows; known: v23.9.2, "
    )


def test_component_versions_no_release_ships_are_refused(data: Path) -> None:
    message = _refusal(
        values=InputText("values.yaml", "devicePlugin:\n  version: v0.99.0\n"), nodes=data / "nodes.yaml"
    )
    assert message == "no GPU Operator version gpustack-gen knows ships devicePlugin.version v0.99.0 (values.yaml)"
