"""The issue's "done means": prod's three T4 nodes advertise 0, 1 and 4; then all three 4."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from verify_helpers import DATA, EXAMPLE, copy_state, set_advertised

from gpustack_gen.cli import main


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_three_nodes_at_0_1_and_4_exit_1_with_a_line_each() -> None:
    code, out = run("verify", str(EXAMPLE), "--cluster", "prod", "--from", str(DATA / "prod-seed"))
    assert code == 1
    lines = {
        name: [line for line in out.splitlines() if line.startswith(f"  {name}: ")]
        for name in ("gpu-t4-a", "gpu-t4-b", "gpu-t4-c")
    }
    (zero,) = lines["gpu-t4-a"]
    (one,) = lines["gpu-t4-b"]
    (four,) = lines["gpu-t4-c"]
    assert "gpu-not-advertised: nvidia.com/gpu: expected 4, actual 0 (likely: " in zero
    assert "CRI-O without CDI (cdi.enabled false in the ClusterPolicy)" in zero
    assert "capacity-mismatch: nvidia.com/gpu: expected 4, actual 1 (likely: " in one
    assert "the plugin has not reloaded since ConfigMap gpustack-device-plugin-config changed" in one
    assert four == "  gpu-t4-c: ok (nvidia.com/gpu 4)"
    assert "  t4 (tesla-t4, time-slicing, 4 per GPU): 1/3 nodes ok; nvidia.com/gpu 5/12" in out.splitlines()[:2]


def test_all_three_at_4_exit_0(tmp_path: Path) -> None:
    code, out = run("verify", str(EXAMPLE), "--cluster", "prod", "--from", str(DATA / "prod-healthy"))
    assert code == 0
    assert re.findall(r"^  (gpu-t4-\w): ok \(nvidia.com/gpu 4\)$", out, re.M) == ["gpu-t4-a", "gpu-t4-b", "gpu-t4-c"]
    assert out.endswith("the cluster matches the fleet: 0 errors, 0 warnings\n")


@pytest.mark.parametrize("advertised", [0, 1, 4])
def test_only_the_nodes_file_is_enough(advertised: int, tmp_path: Path) -> None:
    def edit(files: dict[str, object]) -> None:
        set_advertised(files, "gpu-t4-b", "nvidia.com/gpu", advertised)  # type: ignore[arg-type]

    folder = copy_state("prod-healthy", tmp_path / "state", edit)
    for name in ("clusterpolicy.json", "configmaps.json", "operator.json"):
        (folder / name).unlink()
    code, out = run("verify", str(EXAMPLE), "--cluster", "prod", "--from", str(folder))
    assert code == (0 if advertised == 4 else 1)
    skipped = [line.split(":")[0] for line in out.splitlines() if line.startswith("skipped ")]
    assert skipped == ["skipped clusterpolicy", "skipped configmap-drift", "skipped operator-pods"]
    assert (
        "skipped operator-pods: operator.json not found (write it with kubectl --context prod get daemonsets,pods -n gpu-operator "
        f"-o json > {folder.as_posix()}/operator.json)" in out
    )
