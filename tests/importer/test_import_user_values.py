"""Values the fleet model does not own survive import: they go to a values file beside the fleet, which the
plan's helm upgrade passes before gpustack-gen's, so the upgrade keeps them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from gpustack_gen import load_fleet
from gpustack_gen.cli import main
from gpustack_gen.plan import plan_fleets
from gpustack_gen.yamlio.load import load_data

USER = "nfd:\n  enabled: false\ndaemonsets:\n  tolerations:\n  - {key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}\n"


def test_nfd_off_and_custom_tolerations_reach_the_helm_step(data: Path, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text((data / "values-v24.9.yaml").read_text(encoding="utf-8") + USER, encoding="utf-8")
    out = tmp_path / "fleet.yaml"
    result = CliRunner().invoke(
        main,
        ["import", "--cluster", "train", "--values", str(values), "--nodes", str(data / "nodes.yaml"),
         "--configmap", str(data / "time-slicing-config-fine.yaml"), "--configmap", str(data / "custom-mig-config.yaml"),
         "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "nfd.enabled" not in result.stderr and "daemonsets" not in result.stderr  # no TODO for them
    passed = load_data((tmp_path / "train-operator-values.yaml").read_text(encoding="utf-8"))
    assert passed["nfd"] == {"enabled": False}
    assert passed["daemonsets"]["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    ]
    imported = load_fleet(out)
    changed = load_fleet(out.read_text(encoding="utf-8").replace("version: v24.9.2", "version: v25.3.3", 1))
    (runbook,) = plan_fleets(imported, changed, fleet_dir="fleet-dir").clusters
    (operator,) = [step for step in runbook.steps if step.action.value == "operator"]
    command = operator.command_text or ""
    # checked against the live release, then passed before gpustack-gen's values
    assert (
        "| gpustack-gen values-kept fleet-dir/train-operator-values.yaml rendered/train/gpu-operator-values.yaml &&"
        in command
    )
    assert "--values fleet-dir/train-operator-values.yaml --values rendered/train/gpu-operator-values.yaml" in command
