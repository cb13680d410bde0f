"""The pre-flights that stop a plan on what the cluster runs beyond the fleet, replayed on the model: each stops
the plan before it touches a node, and the plan without it stalls (``gpustack-gen blockers``, sim/listing.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from sim.cluster import Blocked, SimulationError
from sim.simulator import Simulation

from gpustack_gen import load_fleet
from gpustack_gen.change import Action, Step, analyse
from gpustack_gen.shell import AllOf, all_of, text_in
from gpustack_gen.workdir import Paths

CHANGES = Path(__file__).resolve().parent.parent / "changes"
API_BUDGET = {"podDisruptionBudgets": [{"workload": "ml/api", "minAvailable": 1}]}
BARE_T4_POD = {"barePods": [{"name": "research/scratch", "pool": "t4", "requests": {"nvidia.com/gpu": 1}}]}


def _simulation(kind: str, tmp_path: Path, upstream: Path, extras: dict[str, Any]) -> tuple[Simulation, list[Step]]:
    old, new = (load_fleet(CHANGES / kind / name, name=name) for name in ("old.yaml", "new.yaml"))
    steps = list(analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps)
    return Simulation(upstream, tmp_path, old, new, "prod", extras), steps


def _without(steps: list[Step], words: str) -> list[Step]:
    """``steps`` as the plan was before the check: each command loses its parts that have ``words`` (a step left
    with none goes)."""
    kept = []
    for step in steps:
        command = step.command
        parts = command.parts if isinstance(command, AllOf) else (() if command is None else (command,))
        left = [part for part in parts if words not in text_in("prod", part)]
        if command is None or len(left) == len(parts):
            kept.append(step)
        elif left:
            kept.append(dataclasses.replace(step, command=all_of(*left)))
    return kept


def test_a_budget_that_would_hold_a_whole_pool_drain_stops_the_preflight(upstream: Path, tmp_path: Path) -> None:
    """Four api pods on the two T4 nodes under minAvailable 1: the budget allows 3 evictions, and the fourth
    waits for a pod that cannot start while the pool is cordoned."""
    simulation, _ = _simulation("rename-on", tmp_path, upstream, API_BUDGET)
    with pytest.raises(Blocked, match="PodDisruptionBudget ml/api allows 3 of its 4 pods there"):
        simulation.run()
    assert simulation.failed_step is not None and simulation.failed_step.action is Action.CHECK
    assert not any(node.unschedulable for node in simulation.cluster.nodes.values())


def test_without_the_budget_check_the_whole_pool_drain_times_out(upstream: Path, tmp_path: Path) -> None:
    simulation, steps = _simulation("rename-on", tmp_path, upstream, API_BUDGET)
    with pytest.raises(SimulationError, match="global timeout reached"):
        simulation.run(_without(steps, "gpustack-gen blockers"))


def test_a_bare_gpu_pod_stops_the_driver_change_before_the_upgrade(upstream: Path, tmp_path: Path) -> None:
    simulation, _ = _simulation("driver-version-v25.3.3", tmp_path, upstream, BARE_T4_POD)
    with pytest.raises(Blocked, match="pod research/scratch has no controller"):
        simulation.run()
    assert simulation.failed_step is not None and "--bare-pods" in (simulation.failed_step.command_text or "")
    assert not any(node.unschedulable for node in simulation.cluster.nodes.values())


def test_without_the_bare_pod_check_the_driver_upgrade_stalls(upstream: Path, tmp_path: Path) -> None:
    """The controller cannot delete the bare pod: its node goes upgrade-failed and holds every other node."""
    simulation, steps = _simulation("driver-version-v25.3.3", tmp_path, upstream, BARE_T4_POD)
    with pytest.raises(SimulationError, match=r"timed out waiting for .*driver-version"):
        simulation.run(_without(steps, "--bare-pods"))
    assert "upgrade-failed" in {
        n.labels.get("nvidia.com/gpu-driver-upgrade-state") for n in simulation.cluster.nodes.values()
    }


@pytest.mark.parametrize("kind", ["driver-version-v25.3.3", "mig-layout"])
def test_an_unlabelled_node_stops_a_plugin_restart_on_a_racy_plugin(kind: str, upstream: Path, tmp_path: Path) -> None:
    """v25.3.3's device plugin v0.17.4 can hang on a node without its config label when the driver reload or the
    mig-manager restarts it: the plan stops first, and without the check the restart hangs."""
    pool = "t4" if kind.startswith("driver") else "a100"
    simulation, steps = _simulation(kind, tmp_path, upstream, {"unlabelledPools": [pool]})
    with pytest.raises(Blocked, match=f"node/{pool}-0"):
        simulation.run()
    simulation, steps = _simulation(kind, tmp_path / "unchecked", upstream, {"unlabelledPools": [pool]})
    with pytest.raises(SimulationError, match=r"timed out|advertises no GPU"):
        simulation.run(_without(steps, "!nvidia.com/device-plugin.config"))
