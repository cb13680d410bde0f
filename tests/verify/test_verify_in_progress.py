"""Nodes mid-rollout are reported in progress with their expected end, not as errors: exit 4 when nothing else
differs, exit 1 when something does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from verify_helpers import EXAMPLE, Files, both, copy_state, label, node, verify

from gpustack_gen.cli import main
from gpustack_gen.errors import ExitCode, Severity
from gpustack_gen.verify.report import render_text

A100 = "gpu-a100-1"
MIG_RESOURCES = ("nvidia.com/mig-3g.20gb", "nvidia.com/mig-2g.10gb", "nvidia.com/mig-1g.5gb")
OPERANDS = ("device-plugin", "gpu-feature-discovery", "dcgm-exporter", "dcgm")


def mig_pending(files: Files) -> None:
    """gpu-a100-1 as the mig-manager leaves it while it repartitions: state pending, operands paused, the plugin
    gone (allocatable 0, the kubelet keeps the capacity), GFD's MIG labels not yet rewritten."""
    labels = node(files, A100)["metadata"]["labels"]
    labels["nvidia.com/mig.config.state"] = "pending"
    for operand in OPERANDS:
        labels[f"nvidia.com/gpu.deploy.{operand}"] = "paused-for-mig-change"
    for resource in MIG_RESOURCES:
        node(files, A100)["status"]["allocatable"][resource] = "0"


def cordoned(files: Files) -> None:
    node(files, A100)["spec"]["unschedulable"] = True


def upgrading(state: str) -> Any:
    def edit(files: Files) -> None:
        label(A100, "nvidia.com/gpu-driver-upgrade-state", state)(files)
        for resource in MIG_RESOURCES:
            node(files, A100)["status"]["allocatable"][resource] = "0"

    return edit


def test_a_node_mid_mig_change_is_in_progress_not_an_error(tmp_path: Path) -> None:
    result = verify("train", "train-healthy", tmp_path / "state", mig_pending)
    assert result.count(Severity.ERROR) == 0
    assert result.exit_code is ExitCode.IN_PROGRESS
    [step] = result.in_progress
    assert (step.pool, step.node) == ("a100", A100)
    assert step.state.startswith("MIG reconfiguration to custom-3g.20gb-2g.10gb-1g.5gbx2 pending, operands paused")
    assert (
        "nvidia.com/mig.config.state=success" in step.ends
        and "kubectl --context train wait node/gpu-a100-1" in step.ends
    )
    hints = [f.hint for f in result.findings if f.node == A100]
    assert hints and all(hint.startswith("in progress: ") for hint in hints)
    assert not any("CRI-O" in hint or "containerd" in hint or "runtime" in hint for hint in hints)
    text = render_text(result)
    assert f"  {A100}: in progress: MIG reconfiguration" in text
    assert text.endswith("a rollout is in progress: 1 node mid-rollout: 0 errors, " + text.rsplit(", ", 1)[1])


def test_the_pending_hint_says_busy_gpus_make_it_fail_not_wait(tmp_path: Path) -> None:
    result = verify("train", "train-healthy", tmp_path / "state", mig_pending)
    [finding] = [f for f in result.findings if f.check == "mig-state"]
    assert "over 15 minutes" not in finding.hint
    assert "a GPU a pod still holds makes it go failed" in finding.hint


def test_a_failed_mig_change_is_an_error_even_with_operands_paused(tmp_path: Path) -> None:
    edit = both(mig_pending, label(A100, "nvidia.com/mig.config.state", "failed"))
    result = verify("train", "train-healthy", tmp_path / "state", edit)
    assert result.in_progress == ()
    assert result.exit_code is ExitCode.DIFFERS


@pytest.mark.parametrize("state", ["cordon-required", "pod-deletion-required", "drain-required", "validation-required"])
def test_a_driver_upgrade_in_progress(tmp_path: Path, state: str) -> None:
    result = verify("train", "train-healthy", tmp_path / "state", upgrading(state))
    assert result.exit_code is ExitCode.IN_PROGRESS
    assert [step.state for step in result.in_progress] == [
        f"driver upgrade in progress (nvidia.com/gpu-driver-upgrade-state={state})"
    ]


def test_a_failed_driver_upgrade_is_an_error(tmp_path: Path) -> None:
    result = verify("train", "train-healthy", tmp_path / "state", upgrading("upgrade-failed"))
    assert result.in_progress == ()
    assert result.exit_code is ExitCode.DIFFERS


def test_a_cordoned_node_is_in_progress_with_its_uncordon(tmp_path: Path) -> None:
    result = verify("train", "train-healthy", tmp_path / "state", cordoned)
    assert result.findings == ()
    assert result.exit_code is ExitCode.IN_PROGRESS
    assert [step.ends for step in result.in_progress] == [
        f"when its step ends and it is uncordoned: kubectl --context train uncordon {A100}"
    ]


def test_an_error_elsewhere_still_exits_1(tmp_path: Path) -> None:
    edit = both(mig_pending, label("gpu-h100-1", "nvidia.com/mig.config", "all-1g.10gb"))
    result = verify("train", "train-healthy", tmp_path / "state", edit)
    assert result.in_progress and result.exit_code is ExitCode.DIFFERS


def test_the_cli_exits_4_and_json_lists_the_node(tmp_path: Path) -> None:
    folder = copy_state("train-healthy", tmp_path / "state", mig_pending)
    args = ["verify", str(EXAMPLE), "--cluster", "train", "--from", str(folder), "--format", "json"]
    outcome = CliRunner().invoke(main, args, catch_exceptions=False)
    assert outcome.exit_code == 4
    data = json.loads(outcome.stdout)
    assert data["matches"] is False and data["summary"]["inProgress"] == 1
    assert [entry["node"] for entry in data["inProgress"]] == [A100]
    statuses = {n["name"]: n["inProgress"] for pool in data["pools"] for n in pool["nodeStatus"]}
    assert statuses[A100].startswith("MIG reconfiguration") and statuses["gpu-a100-2"] is None
