"""A cluster whose Operator runs with its own ConfigMaps: import records them (operator.adoptFrom), and the
first plan switches the ClusterPolicy to gpustack-gen's ConfigMaps before it labels any node with their keys."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gpustack_gen import load_fleet
from gpustack_gen.change import Action, analyse
from gpustack_gen.cli import main
from gpustack_gen.yamlio.load import load_data

ADOPT_FROM_LINES = ("adoptFrom:", "devicePluginConfig:", "migConfig:")


def _import(data: Path, tmp_path: Path) -> Path:
    out = tmp_path / "fleet.yaml"
    result = CliRunner().invoke(
        main,
        ["import", "--cluster", "train", "--values", str(data / "values-v24.9.yaml"), "--nodes", str(data / "nodes.yaml"),
         "--configmap", str(data / "time-slicing-config-fine.yaml"), "--configmap", str(data / "custom-mig-config.yaml"),
         "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _actions(fleet: Path) -> list[Action]:
    (cluster,) = load_fleet(fleet).clusters
    return [step.action for step in analyse(None, cluster).steps]


def test_import_records_the_configmaps_the_operator_reads_today(data: Path, tmp_path: Path) -> None:
    (cluster,) = load_data(_import(data, tmp_path).read_text(encoding="utf-8"))["clusters"]
    assert cluster["operator"]["adoptFrom"] == {
        "devicePluginConfig": "time-slicing-config-fine",
        "migConfig": "custom-mig-config",
    }


def test_the_first_plan_switches_the_operator_before_any_label(data: Path, tmp_path: Path) -> None:
    actions = _actions(_import(data, tmp_path))
    assert Action.LABEL_NODES in actions
    switch = actions.index(Action.OPERATOR)
    assert actions.index(Action.APPLY_CONFIGMAPS) < switch
    assert actions[switch + 1] is Action.WAIT  # the Operator has rolled the operands onto the new ConfigMaps
    assert switch < actions.index(Action.LABEL_NODES)


def test_without_adopt_from_a_new_cluster_is_labelled_before_the_operator_installs(data: Path, tmp_path: Path) -> None:
    fleet = _import(data, tmp_path)
    text = fleet.read_text(encoding="utf-8")
    kept = [line for line in text.splitlines(keepends=True) if not line.lstrip().startswith(ADOPT_FROM_LINES)]
    assert len(kept) == len(text.splitlines()) - 3
    fleet.write_text("".join(kept), encoding="utf-8")
    actions = _actions(fleet)
    assert actions.index(Action.LABEL_NODES) < actions.index(Action.OPERATOR)
