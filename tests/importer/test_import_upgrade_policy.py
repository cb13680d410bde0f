"""``import`` recovers the driver upgrade controller's settings the fleet models (``driver.upgradePolicy``
``maxParallelUpgrades``, ``gpuPodDeletion.deleteEmptyDir`` and ``force``) from the values or the ClusterPolicy,
so the plan's helm upgrade keeps them; a value it cannot take is a TODO, never a silent change."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpustack_gen.cli import main
from gpustack_gen.yamlio.load import load_plain

DRIVER = "\ndriver:\n  enabled: true\n"


def _import(data: Path, tmp_path: Path, driver: str, policy: str | None = None) -> Result:
    """Import values-v24.9.yaml with ``driver`` added to its driver section (and a ClusterPolicy ``spec.driver``)."""
    text = (data / "values-v24.9.yaml").read_text(encoding="utf-8")
    assert text.count(DRIVER) == 1
    values = tmp_path / "values.yaml"
    values.write_text(text.replace(DRIVER, DRIVER + driver), encoding="utf-8")
    extra = []
    if policy is not None:
        clusterpolicy = tmp_path / "clusterpolicy.yaml"
        clusterpolicy.write_text(
            "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\nspec:\n"
            f"  driver:\n    enabled: true\n{policy}",
            encoding="utf-8",
        )
        extra = ["--clusterpolicy", str(clusterpolicy)]
    return CliRunner().invoke(
        main,
        ["import", "--cluster", "train", "--values", str(values), "--nodes", str(data / "nodes.yaml"),
         "--configmap", str(data / "time-slicing-config-fine.yaml"), "--configmap", str(data / "custom-mig-config.yaml"),
         "--out", str(tmp_path / "fleet.yaml"), "--check-roundtrip", *extra],
    )  # fmt: skip


def _fleet_policy(tmp_path: Path) -> object:
    fleet = load_plain((tmp_path / "fleet.yaml").read_text(encoding="utf-8"))
    return fleet["clusters"][0]["operator"]["driver"].get("upgradePolicy")


def _rendered_policy(tmp_path: Path) -> object:
    CliRunner().invoke(main, ["render", str(tmp_path / "fleet.yaml"), "--out", str(tmp_path / "rendered")])
    values = load_plain((tmp_path / "rendered" / "train" / "gpu-operator-values.yaml").read_text(encoding="utf-8"))
    return values["driver"]["upgradePolicy"]


def test_the_release_policy_round_trips(data: Path, tmp_path: Path) -> None:
    driver = "  upgradePolicy:\n    maxParallelUpgrades: 4\n    gpuPodDeletion:\n      deleteEmptyDir: false\n      force: true\n"
    result = _import(data, tmp_path, driver)
    assert result.exit_code == 0, result.output
    assert _fleet_policy(tmp_path) == {"maxParallelUpgrades": 4, "deleteEmptyDir": False, "force": True}
    assert _rendered_policy(tmp_path) == {
        "autoUpgrade": True,
        "maxParallelUpgrades": 4,
        "gpuPodDeletion": {"deleteEmptyDir": False, "force": True},
    }


def test_no_policy_in_the_release_leaves_the_fleet_defaults(data: Path, tmp_path: Path) -> None:
    result = _import(data, tmp_path, "")
    assert result.exit_code == 0, result.output
    assert _fleet_policy(tmp_path) is None


def test_the_clusterpolicy_wins_and_names_the_conflict(data: Path, tmp_path: Path) -> None:
    # the ClusterPolicy spells the chart's gpuPodDeletion podDeletion (templates/clusterpolicy.yaml)
    driver = "  upgradePolicy:\n    maxParallelUpgrades: 4\n"
    policy = "    upgradePolicy:\n      maxParallelUpgrades: 2\n      podDeletion:\n        force: true\n"
    result = _import(data, tmp_path, driver, policy)
    # what runs now is kept; the round trip names the values file's other value the upgrade replaces
    assert result.exit_code == 1, result.output
    assert "the release has 4, the upgrade passes 2" in result.stderr
    assert _fleet_policy(tmp_path) == {"maxParallelUpgrades": 2, "force": True}
    fleet = (tmp_path / "fleet.yaml").read_text(encoding="utf-8")
    assert "driver.upgradePolicy.maxParallelUpgrades: values.yaml says 4 but the ClusterPolicy says 2" in fleet
    assert "clusterpolicy.yaml spec.driver.upgradePolicy.podDeletion.force" in fleet


@pytest.mark.parametrize(
    ("driver", "todo"),
    [
        ("  upgradePolicy:\n    maxParallelUpgrades: \"4\"\n", "maxParallelUpgrades: 4 (values.yaml driver.upgradePolicy.maxParallelUpgrades) is not a count"),
        ("  upgradePolicy:\n    maxParallelUpgrades: true\n", "is not a count from 0 to 100000"),
        ("  upgradePolicy:\n    maxParallelUpgrades: -1\n", "is not a count from 0 to 100000"),
        ("  upgradePolicy:\n    gpuPodDeletion:\n      force: \"yes\"\n", "gpuPodDeletion.force: yes (values.yaml driver.upgradePolicy.gpuPodDeletion.force) is not a boolean"),
    ],
)  # fmt: skip
def test_a_value_the_fleet_cannot_take_is_a_todo(data: Path, tmp_path: Path, driver: str, todo: str) -> None:
    _import(data, tmp_path, driver)
    fleet = (tmp_path / "fleet.yaml").read_text(encoding="utf-8")
    assert _fleet_policy(tmp_path) is None
    assert todo in fleet and "not imported" in fleet


def test_a_key_the_fleet_does_not_model_stays_a_todo(data: Path, tmp_path: Path) -> None:
    _import(data, tmp_path, "  upgradePolicy:\n    maxParallelUpgrades: 3\n    autoUpgrade: false\n")
    fleet = (tmp_path / "fleet.yaml").read_text(encoding="utf-8")
    assert _fleet_policy(tmp_path) == {"maxParallelUpgrades": 3}
    assert "driver.upgradePolicy.autoUpgrade: false is not imported; the fleet renders true" in fleet


def test_the_clusterpolicys_auto_upgrade_off_is_a_todo(data: Path, tmp_path: Path) -> None:
    _import(data, tmp_path, "", "    upgradePolicy:\n      autoUpgrade: false\n")
    fleet = (tmp_path / "fleet.yaml").read_text(encoding="utf-8")
    assert (
        "clusterpolicy.yaml: driver.upgradePolicy.autoUpgrade: false is not imported; the fleet renders true" in fleet
    )
