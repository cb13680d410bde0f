"""``gpustack-gen import``: exit 0 / 1 / 2, TODOs on stderr, and inputs that are not what they claim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpustack_gen import load_fleet
from gpustack_gen.cli import main
from gpustack_gen.errors import FleetError
from gpustack_gen.importer import InputText, import_cluster


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["import", *args])


def v24_args(data: Path) -> list[str]:
    return [
        "--cluster",
        "train",
        "--values",
        str(data / "values-v24.9.yaml"),
        "--configmap",
        str(data / "time-slicing-config-fine.yaml"),
        "--configmap",
        str(data / "custom-mig-config.yaml"),
        "--nodes",
        str(data / "nodes.yaml"),
    ]


def test_writes_the_fleet_and_round_trips(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "fleet.yaml"
    result = run(*v24_args(data), "--out", str(out), "--check-roundtrip")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert load_fleet(out).clusters[0].name == "train"
    stderr = result.stderr.splitlines()
    assert sum(line.startswith("warning: TODO: ") for line in stderr) == 1
    assert f"{out}: 3 pools, 1 TODO" in stderr
    # The release's values outside the fleet model are beside the fleet, listed first in operator.valuesFiles.
    assert load_fleet(out).clusters[0].operator.values_files == ("train-operator-values.yaml",)
    assert "  defaultRuntime: containerd\n" in (tmp_path / "train-operator-values.yaml").read_text(encoding="utf-8")
    assert any(line.startswith("expected rename: ") for line in stderr)
    assert stderr[-1] == "round trip: rendering the imported fleet changes nothing the fleet model owns"
    # The written file is what `validate` accepts.
    validated = CliRunner().invoke(main, ["validate", str(out)])
    assert validated.exit_code == 0, validated.output


def test_prints_the_fleet_without_out(data: Path) -> None:
    result = run(
        "--cluster",
        "prod",
        "--values",
        str(data / "values-v25.3.yaml"),
        "--configmap",
        str(data / "time-slicing-config-all.yaml"),
        "--clusterpolicy",
        str(data / "clusterpolicy-v25.3.yaml"),
        "--nodes",
        str(data / "nodes-crio.yaml"),
        "--operator-version",
        "v25.3.3",
    )
    assert result.exit_code == 0, result.output
    assert load_fleet(result.stdout).clusters[0].operator.release.version == "v25.3.3"


def test_exit_1_when_the_round_trip_would_change_something(data: Path, tmp_path: Path) -> None:
    nodes = json.loads(json.dumps(_yaml(data / "nodes.yaml")))
    for item in nodes["items"]:
        if item["metadata"]["labels"].get("eks.amazonaws.com/nodegroup") == "gpu-h100":
            item["metadata"]["labels"]["nvidia.com/device-plugin.config"] = "a100-40gb"
    path = tmp_path / "nodes.yaml"
    path.write_text(json.dumps(nodes))
    args = v24_args(data)
    args[args.index("--nodes") + 1] = str(path)
    result = run(*args, "--out", str(tmp_path / "fleet.yaml"), "--check-roundtrip")
    assert result.exit_code == 1, result.output
    changes = [line for line in result.stderr.splitlines() if line.startswith("would change: ")]
    assert len(changes) == 1
    assert changes[0].startswith("would change: pool gpu-h100 (")
    assert result.stderr.splitlines()[-1] == "round trip: 1 differences in what the fleet model owns"


def _yaml(path: Path) -> object:
    from ruamel.yaml import YAML

    return YAML(typ="safe", pure=True).load(path.read_text())


@pytest.mark.parametrize(
    ("option", "file", "message"),
    [
        (
            "--nodes",
            "values-v25.3.yaml",
            "values-v25.3.yaml:3:1: a GPU Operator values file, not a Node (kubectl get nodes -o yaml) "
            "(hint: pass it as --values)",
        ),
        (
            "--values",
            "nodes.yaml",
            "nodes.yaml:1:1: a List of Node, not a GPU Operator values file (hint: pass it as --nodes)",
        ),
        (
            "--clusterpolicy",
            "custom-mig-config.yaml",
            "custom-mig-config.yaml:3:1: a ConfigMap (custom-mig-config), not a ClusterPolicy "
            "(hint: pass it as --configmap)",
        ),
        (
            "--configmap",
            "secret-in-configmaps.yaml",
            "secret-in-configmaps.yaml:18:1: items[1]: a Secret (ngc-api-key), not a ConfigMap (hint: gpustack-gen "
            "reads only ConfigMaps and never Secrets: remove it from the file, and do not share it)",
        ),
        (
            "--configmap",
            "clusterpolicy-v25.3.yaml",
            "clusterpolicy-v25.3.yaml:3:1: a ClusterPolicy (cluster-policy), not a ConfigMap "
            "(hint: pass it as --clusterpolicy)",
        ),
    ],
)
def test_inputs_that_are_not_what_they_claim_exit_2(
    data: Path, monkeypatch: pytest.MonkeyPatch, option: str, file: str, message: str
) -> None:
    monkeypatch.chdir(data)
    args = ["--cluster", "c", option, file]
    if option != "--nodes":
        args += ["--nodes", "nodes.yaml"] if file != "nodes.yaml" else ["--nodes", "nodes-crio.yaml"]
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [message, "1 error; nothing was written."]


def test_secret_data_never_reaches_the_output(data: Path) -> None:
    result = run(
        "--cluster", "c", "--configmap", str(data / "secret-in-configmaps.yaml"), "--nodes", str(data / "nodes.yaml")
    )
    assert result.exit_code == 2
    assert "bm90LWEtcmVhbC1rZXk" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cluster", "Prod_1", "--nodes", "nodes.yaml"], "--cluster: 'Prod_1' is not a valid name"),
        (
            ["--cluster", "c", "--kubernetes", "latest", "--nodes", "nodes.yaml"],
            "--kubernetes: 'latest' is not a Kubernetes version",
        ),
        (
            ["--cluster", "c", "--operator-version", "v9.9.9", "--nodes", "nodes.yaml"],
            "--operator-version: unknown GPU Operator version 'v9.9.9'",
        ),
        (["--cluster", "c"], "--nodes: no GPU nodes (nodes labelled nvidia.com/gpu.product) to import pools from"),
        (["--cluster", "c", "--nodes", "missing.yaml"], "missing.yaml: cannot read file: No such file or directory"),
    ],
)
def test_bad_usage_exits_2(data: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    monkeypatch.chdir(data)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(message), result.stderr


def test_invalid_yaml_is_located() -> None:
    with pytest.raises(FleetError) as error:
        import_cluster("c", nodes=InputText("nodes.yaml", "apiVersion: v1\nitems: [\n  - a: b\n"))
    (problem,) = error.value.problems
    assert (problem.file, problem.line > 1) == ("nodes.yaml", True)
    assert problem.message.startswith("invalid YAML: ")


def test_cpu_only_nodes_have_nothing_to_import() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1", "labels": {"kubernetes.io/os": "linux"}}}
    with pytest.raises(FleetError) as error:
        import_cluster("c", nodes=InputText("nodes.yaml", json.dumps({"kind": "List", "items": [node]})))
    assert error.value.problems[0].message.startswith("no GPU nodes")
    assert "is the GPU Operator running?" in error.value.problems[0].hint


def test_every_problem_of_every_input_is_reported_at_once(data: Path) -> None:
    with pytest.raises(FleetError) as error:
        import_cluster(
            "c",
            values=data / "nodes.yaml",
            configmaps=[data / "secret-in-configmaps.yaml", data / "time-slicing-config-all.yaml"],
            nodes=data / "values-v24.9.yaml",
        )
    assert [p.file for p in error.value.problems] == [
        "nodes.yaml",
        "secret-in-configmaps.yaml",
        "time-slicing-config-all.yaml",
        "values-v24.9.yaml",
    ]
    assert "is given twice" in error.value.problems[2].message


def test_the_written_fleet_file_gets_ordinary_permissions(data: Path, tmp_path: Path) -> None:
    """Written atomically, yet readable as any file the user creates (umask applies, not 0600)."""
    import os
    import stat

    out = tmp_path / "fleet.yaml"
    old = os.umask(0o022)
    try:
        result = run(*v24_args(data), "--out", str(out))
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    # no temporary file left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet.yaml", "train-operator-values.yaml"]
