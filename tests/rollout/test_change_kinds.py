"""One folder per change kind (``tests/changes/<kind>/``): the plan and diff goldens, the plan replayed on
the model of the upstream controllers, and the broken variants of the plan (``broken*.yaml``: the order or
commands the old diff printed, or another wrong order) failing on the same model. A folder with ``not-simulated.txt`` says why
the model cannot replay its plan (the DRA driver is not modelled); its goldens still hold it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from golden import assert_golden
from ruamel.yaml import YAML
from sim import extras
from sim.cluster import SimulationError
from sim.scripts import script
from sim.simulator import Simulation

from gpustack_gen import load_fleet
from gpustack_gen.change import analyse
from gpustack_gen.diff import diff_fleets
from gpustack_gen.diff.report import ReportContext as DiffContext
from gpustack_gen.diff.report import render_text as diff_text
from gpustack_gen.plan import plan_fleets
from gpustack_gen.plan.report import render_json, render_markdown, render_text
from gpustack_gen.shell import AllOf, Command, all_of
from gpustack_gen.workdir import Paths

CHANGES = Path(__file__).resolve().parent.parent / "changes"
KINDS = sorted(p.name for p in CHANGES.iterdir() if p.is_dir())


def _fleets(kind: str):  # type: ignore[no-untyped-def]
    folder = CHANGES / kind
    return load_fleet(folder / "old.yaml", name="old.yaml"), load_fleet(folder / "new.yaml", name="new.yaml")


@pytest.mark.parametrize("kind", KINDS)
def test_plan_and_diff_goldens(kind: str) -> None:
    old, new = _fleets(kind)
    result = plan_fleets(old, new, rendered="rendered")
    folder = CHANGES / kind
    assert_golden(render_text(result), folder / "plan.txt")
    assert_golden(render_json(result), folder / "plan.json")
    assert_golden(render_markdown(result), folder / "plan.md")
    assert_golden(
        diff_text(diff_fleets(old, new), DiffContext(plan_command="gpustack-gen plan old.yaml new.yaml")),
        folder / "diff.txt",
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_plan_keeps_gpus_alive_on_the_model(kind: str, upstream: Path, tmp_path: Path) -> None:
    unmodelled = CHANGES / kind / "not-simulated.txt"  # why the model cannot replay this kind
    if unmodelled.is_file():
        pytest.skip(" ".join(unmodelled.read_text(encoding="utf-8").split()))
    old, new = _fleets(kind)
    if analyse(old.cluster("prod"), new.cluster("prod")).errors:
        pytest.skip("the plan is refused; its broken variant runs it anyway")
    report = Simulation(upstream, tmp_path, old, new, "prod", extras.load(CHANGES / kind / "cluster.yaml")).run()
    assert report.steps_run > 0


BROKEN = [(kind, path.name) for kind in KINDS for path in sorted((CHANGES / kind).glob("broken*.yaml"))]


@pytest.mark.parametrize(("kind", "variant"), BROKEN)
def test_the_broken_variant_fails_on_the_model(kind: str, variant: str, upstream: Path, tmp_path: Path) -> None:
    old, new = _fleets(kind)
    broken = YAML(typ="safe", pure=True).load((CHANGES / kind / variant).read_text(encoding="utf-8"))
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    commands = broken.get("commands") or {}
    reordered = [
        dataclasses.replace(steps[n - 1], command=script(commands[n])) if n in commands else steps[n - 1]
        for n in broken["steps"]
    ]
    with pytest.raises(SimulationError) as failure:
        Simulation(upstream, tmp_path, old, new, "prod", extras.load(CHANGES / kind / "cluster.yaml")).run(reordered)
    assert broken["error"] in str(failure.value)


def test_a_relabel_that_keeps_the_old_state_lets_a_stale_success_pass(upstream: Path, tmp_path: Path) -> None:
    """The old diff set the label without clearing nvidia.com/mig.config.state: the old ``success`` passes the
    wait at once, and the nodes are uncordoned while the mig-manager is still repartitioning them."""
    old, new = _fleets("mig-layout")
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    by_action = [(s.action.value, s) for s in steps]
    label = next(s for a, s in by_action if a == "label-nodes" and "nvidia.com/mig.config=" in (s.command_text or ""))
    assert "nvidia.com/mig.config.state-" in (label.command_text or "")
    stale = dataclasses.replace(
        label,
        command=script("kubectl label nodes --selector pool=a100 nvidia.com/mig.config=custom-3g.20gbx2 --overwrite"),
    )
    success = next(s for a, s in by_action if a == "wait" and "mig\\.config\\.state" in (s.command_text or ""))
    uncordon = next(s for a, s in by_action if a == "uncordon")
    drained = steps[: steps.index(label)]  # the ConfigMap, its sync, the pre-flight, the mark and the drain
    broken = [*drained, stale, success, uncordon]
    with pytest.raises(SimulationError, match="while its MIG reconfiguration is still pending"):
        Simulation(upstream, tmp_path, old, new, "prod").run(broken)


@pytest.mark.parametrize("kind", ["mig-layout", "pool-starts-mig"])
def test_a_mig_change_without_its_drain_fails_on_the_gpus_in_use(kind: str, upstream: Path, tmp_path: Path) -> None:
    """The mig-manager does not drain: with the pool's pods still on their GPUs the repartition fails, and the
    plan's wait for success (or for the new devices) never ends."""
    old, new = _fleets(kind)
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    undrained = [step for step in steps if step.action.value not in ("drain", "uncordon")]
    assert len(undrained) < len(steps)
    with pytest.raises(SimulationError, match=r"timed out|MIG state failed|advertises"):
        Simulation(upstream, tmp_path, old, new, "prod").run(undrained)


@pytest.mark.parametrize("kind", ["mig-layout", "pool-starts-mig"])
def test_a_mig_relabel_without_its_volume_sync_wait_fails(kind: str, upstream: Path, tmp_path: Path) -> None:
    """Right after the apply the kubelet has not synced the new config into the mig-manager's volume: relabelled
    then, it finds no such config, fails, and acts again only on another label change."""
    old, new = _fleets(kind)
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    hurried = [step for step in steps if not (step.command_text or "").startswith("sleep ")]
    assert len(hurried) < len(steps)
    with pytest.raises(SimulationError, match=r"timed out waiting for .*mig.*state.*=success"):
        Simulation(upstream, tmp_path, old, new, "prod").run(hurried)


def test_the_volume_sync_check_sees_what_the_pod_sees(upstream: Path, tmp_path: Path) -> None:
    """The sync step's check, run at once after the apply (no sleep), does not find the new key yet."""
    old, new = _fleets("pool-renamed")
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    sync = next(step for step in steps if (step.command_text or "").startswith("sleep "))
    assert "/available-configs/serving" in (sync.verify_text or "")
    hurried = [dataclasses.replace(step, command=script("sleep 1")) if step is sync else step for step in steps]
    with pytest.raises(SimulationError, match="No such file or directory"):
        Simulation(upstream, tmp_path, old, new, "prod").run(hurried)


@pytest.mark.parametrize("kind", ["cdi-on-cri-o-v25.3.3", "cdi-off-containerd-v25.3.3"])
def test_rollout_status_before_the_operator_has_reconciled_passes_on_the_old_template(
    kind: str, upstream: Path, tmp_path: Path
) -> None:
    """Without the wait for the Operator's new template, ``rollout status`` right after the upgrade finds the old
    DaemonSet fully rolled out: the plan would move on with nothing rolled."""
    old, new = _fleets(kind)
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    wait = next(step for step in steps if ".spec.template.spec.containers" in (step.command_text or ""))
    assert isinstance(wait.command, AllOf)
    status_only = [part for part in wait.command.parts if isinstance(part, Command) and "rollout" in part.argv[:4]]
    assert 0 < len(status_only) < len(wait.command.parts)
    hurried = [dataclasses.replace(s, command=all_of(*status_only)) if s is wait else s for s in steps]
    with pytest.raises(SimulationError, match="passed on the template the Operator has not re-rendered"):
        Simulation(upstream, tmp_path, old, new, "prod", extras.load(CHANGES / kind / "cluster.yaml")).run(hurried)
