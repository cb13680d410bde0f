"""Drains against what real clusters run: PodDisruptionBudgets, pods without a controller, and the batch marks
that keep later steps off nodes the rollout did not drain (kubectl drain semantics: sim/drain.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sim import extras
from sim.cluster import Node, SimulationError
from sim.scripts import script
from sim.simulator import Simulation

from gpustack_gen import load_fleet
from gpustack_gen.change import Action, analyse
from gpustack_gen.change.commands import Paths

KIND = Path(__file__).resolve().parent.parent / "changes" / "mig-layout-pdb-bare-pod"


def _fleets(*, force: bool = True):  # type: ignore[no-untyped-def]
    texts = [(KIND / name).read_text(encoding="utf-8") for name in ("old.yaml", "new.yaml")]
    if not force:
        texts = [text.replace(", deletePodsWithoutController: true", "") for text in texts]
    return [load_fleet(text) for text in texts]


def _simulation(upstream: Path, tmp_path: Path, *, force: bool = True) -> Simulation:
    old, new = _fleets(force=force)
    return Simulation(upstream, tmp_path, old, new, "prod", extras.load(KIND / "cluster.yaml"))


def test_the_preflight_stops_on_a_bare_pod_before_anything_is_cordoned(upstream: Path, tmp_path: Path) -> None:
    simulation = _simulation(upstream, tmp_path, force=False)
    with pytest.raises(
        SimulationError, match=r"check: .*kubectl .*drain .*--dry-run=client.*cannot delete Pods that declare"
    ):
        simulation.run()
    assert not any(node.unschedulable for node in simulation.cluster.nodes.values())


def test_a_drain_without_force_fails_on_the_bare_pod_and_exits_1(upstream: Path, tmp_path: Path) -> None:
    """kubectl drains the other nodes, then exits 1: the node with the bare pod stays cordoned with its pods."""
    old, new = _fleets(force=False)
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    unchecked = [step for step in steps if step.action is not Action.CHECK]
    simulation = _simulation(upstream, tmp_path, force=False)
    with pytest.raises(SimulationError, match="There are pending nodes to be drained"):
        simulation.run(unchecked)


def test_a_whole_pool_drain_with_a_timeout_gives_up_on_the_budget(upstream: Path, tmp_path: Path) -> None:
    """The whole pool cordoned: the evicted notebook cannot be placed, so the budget's refusal lasts until the
    timeout (better than forever, but the plan stops)."""
    old, new = _fleets()
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    drain = next(step for step in steps if step.action is Action.DRAIN)
    whole = dataclasses.replace(
        drain,
        command=script(
            "kubectl drain --selector pool=a100 --ignore-daemonsets --delete-emptydir-data --force --timeout=15m"
        ),
    )
    with pytest.raises(SimulationError, match="global timeout reached"):
        _simulation(upstream, tmp_path).run([whole if step is drain else step for step in steps])


def test_the_batches_drain_one_node_each_and_leave_the_pool_unmarked(upstream: Path, tmp_path: Path) -> None:
    simulation = _simulation(upstream, tmp_path)
    simulation.run()
    nodes = [node for node in simulation.cluster.nodes.values() if node.pool == "a100"]
    assert len(nodes) == 2
    assert not any("gpustack-gen.dev/rollout" in node.labels for node in nodes)
    assert not any(pod.workload == "research/scratch" for pod in simulation.cluster.pods)  # --force deleted it


def test_a_node_that_joins_mid_rollout_is_not_relabelled(upstream: Path, tmp_path: Path) -> None:
    """A node an autoscaler adds with the pool's labels after the mark is never taken into a batch: the batch
    marks and the relabel select the rollout label, which it lacks, so it keeps the layout it came up with."""
    old, new = _fleets()
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    simulation = _simulation(upstream, tmp_path)
    simulation.bootstrap()
    template = next(node for node in simulation.cluster.nodes.values() if node.pool == "a100")
    for step in steps:
        simulation._step(step, set())
        if "=pending" in (step.command_text or ""):
            joined = Node(
                "a100-joined", "a100", template.facts, template.gpus, {"pool": "a100"}, gpu_id=template.gpu_id
            )
            simulation.cluster.join(joined)
            before = dict(joined.labels)
    assert joined.labels.get("nvidia.com/mig.config") == before.get("nvidia.com/mig.config")
    assert "gpustack-gen.dev/rollout" not in joined.labels
    assert not joined.unschedulable
