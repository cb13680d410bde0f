"""A GPU node without a device-plugin config label, on a device plugin whose config-manager can block forever on
it (before v0.18.2: k8s-device-plugin cmd/config-manager/main.go:104-114): the plan's restart refuses to start."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim import extras
from sim.cluster import Node, SimulationError
from sim.simulator import Simulation

from gpustack_gen import load_fleet

KIND = Path(__file__).resolve().parent.parent / "changes" / "replicas"


def _simulation(upstream: Path, tmp_path: Path) -> Simulation:
    old, new = (load_fleet(KIND / name, name=name) for name in ("old.yaml", "new.yaml"))
    return Simulation(upstream, tmp_path, old, new, "prod")


def test_the_restart_waits_for_every_gpu_node_to_carry_its_config_label(upstream: Path, tmp_path: Path) -> None:
    simulation = _simulation(upstream, tmp_path)
    simulation.bootstrap()
    template = next(node for node in simulation.cluster.nodes.values() if node.pool == "t4")
    # A T4 node outside every pool's selector: GFD labels it a GPU node, nothing gives it a config label.
    stray = Node("stray-t4", "", template.facts, template.gpus, {}, gpu_id=template.gpu_id)
    simulation.cluster.join(stray)
    simulation.bootstrap = lambda: None  # type: ignore[method-assign]
    with pytest.raises(SimulationError, match=r"restart-device-plugin.*precondition lists 'node/stray-t4'"):
        simulation.run()


def test_with_every_node_labelled_the_restart_runs(upstream: Path, tmp_path: Path) -> None:
    assert _simulation(upstream, tmp_path).run().steps_run > 0


SECOND_POOL = KIND.parent / "second-pool-beside-unlabelled-nodes"


def test_a_gpu_node_outside_every_pool_stops_the_plan_before_any_changes(upstream: Path, tmp_path: Path) -> None:
    """Pool t4 ran unlabelled; a second pool turns `any` into whole GPUs. The plan labels t4's nodes by its
    selector, but a GPU node no pool selects would fall from 4 to 1 GPU: the check before the apply fails."""
    old, new = (load_fleet(SECOND_POOL / name, name=name) for name in ("old.yaml", "new.yaml"))
    simulation = Simulation(upstream, tmp_path, old, new, "prod", extras.load(SECOND_POOL / "cluster.yaml"))
    simulation.bootstrap()
    template = next(node for node in simulation.cluster.nodes.values() if node.pool == "t4")
    simulation.cluster.join(Node("stray-t4", "", template.facts, template.gpus, {}, gpu_id=template.gpu_id))
    simulation.bootstrap = lambda: None  # type: ignore[method-assign]
    with pytest.raises(SimulationError, match=r"\(check: .*precondition lists 'node/stray-t4'"):
        simulation.run()
