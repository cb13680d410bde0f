"""A GPU node without a device-plugin config label, on a device plugin whose config-manager can block forever on
it (before v0.18.2: k8s-device-plugin cmd/config-manager/main.go:104-114): the plan's restart refuses to start."""

from __future__ import annotations

from pathlib import Path

import pytest
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
