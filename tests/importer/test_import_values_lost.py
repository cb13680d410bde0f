"""``import --check-roundtrip`` fails on a value the cluster's release has that the plan's helm upgrade would
lose: neither modelled nor passed through in the user values file, or set otherwise by gpustack-gen's values."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from gpustack_gen.cli import main
from gpustack_gen.importer.values_lost import values_lost

PASSED_THROUGH = "nfd:\n  enabled: false\n"
DRIVER = "\ndriver:\n  enabled: true\n"


def _roundtrip(data: Path, tmp_path: Path, driver: str = "") -> Result:
    """Import values-v24.9.yaml with ``nfd.enabled: false`` and ``driver`` added to its driver section."""
    text = (data / "values-v24.9.yaml").read_text(encoding="utf-8")
    assert text.count(DRIVER) == 1
    values = tmp_path / "values.yaml"
    values.write_text(text.replace(DRIVER, DRIVER + driver) + PASSED_THROUGH, encoding="utf-8")
    return CliRunner().invoke(
        main,
        ["import", "--cluster", "train", "--values", str(values), "--nodes", str(data / "nodes.yaml"),
         "--configmap", str(data / "time-slicing-config-fine.yaml"), "--configmap", str(data / "custom-mig-config.yaml"),
         "--out", str(tmp_path / "fleet.yaml"), "--check-roundtrip"],
    )  # fmt: skip


def _would_change(result: Result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("would change: values ")]


def test_values_passed_through_round_trip(data: Path, tmp_path: Path) -> None:
    result = _roundtrip(data, tmp_path)
    assert result.exit_code == 0, result.output
    assert _would_change(result) == []


def test_a_value_gpustack_gen_renders_otherwise_fails_the_round_trip(data: Path, tmp_path: Path) -> None:
    # driver.upgradePolicy is rendered by gpustack-gen and passed last: a key the fleet does not model is replaced
    result = _roundtrip(data, tmp_path, "  upgradePolicy:\n    autoUpgrade: false\n")
    assert result.exit_code == 1, result.output
    assert _would_change(result) == [
        "would change: values driver.upgradePolicy.autoUpgrade: the release has false, the upgrade passes true"
    ]


def test_a_value_neither_passed_nor_accounted_for_is_lost() -> None:
    release = {"nfd": {"enabled": False}, "devicePlugin": {"version": "v0.17.0"}, "cdi": {"enabled": True}}
    lost = values_lost(release, {}, {"cdi": {"enabled": False}}, frozenset({"devicePlugin.version"}))
    # cdi.enabled is a setting the model owns, compared on its own; the image version is the release's own
    assert list(lost) == ["values nfd.enabled: the release has false; the fleet neither models nor passes it"]


def test_the_users_list_items_must_survive_gpustack_gens_list() -> None:
    toleration = {"key": "dedicated", "operator": "Exists"}
    release = {"daemonsets": {"tolerations": [toleration]}}
    user = {"daemonsets": {"tolerations": [toleration]}}
    assert (
        list(values_lost(release, user, {"daemonsets": {"tolerations": [toleration, {"key": "x"}]}}, frozenset())) == []
    )
    assert list(values_lost(release, user, {"daemonsets": {"tolerations": [{"key": "x"}]}}, frozenset())) == [
        f"values daemonsets.tolerations: the release has {[toleration]}; the fleet neither models nor passes it"
    ]
