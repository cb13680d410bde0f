"""The autoscaler on the model (``sim/autoscaler.py``): a node it adds for the drained pool's Pending pods comes from
the node-group template as it is then, and an empty one is removed."""

from __future__ import annotations

from pathlib import Path

from sim.simulator import Simulation

from gpustack_gen import load_fleet

CHANGES = Path(__file__).resolve().parent.parent / "changes"


def _fleets(kind: str):  # type: ignore[no-untyped-def]
    folder = CHANGES / kind
    return load_fleet(folder / "old.yaml", name="old.yaml"), load_fleet(folder / "new.yaml", name="new.yaml")


def test_without_the_pool_autoscaled_the_mig_layout_plan_passes(upstream: Path, tmp_path: Path) -> None:
    old, new = _fleets("mig-layout")
    assert Simulation(upstream, tmp_path, old, new, "prod").run().steps_run > 0


def test_a_node_the_autoscaler_adds_mid_plan_comes_from_the_old_template(upstream: Path, tmp_path: Path) -> None:
    """The drain leaves the notebooks Pending; the autoscaler adds a node with the template's old
    nvidia.com/mig.config and no rollout mark, which no later step (they select the marked nodes) touches. Here it
    is still repartitioning when the marked nodes are uncordoned, the pods go back there, and it is removed empty."""
    old, new = _fleets("mig-layout")
    simulation = Simulation(upstream, tmp_path, old, new, "prod", {"autoscaler": {"pools": ["a100"]}})
    assert simulation.cluster.autoscaler is None  # set once the old fleet is installed
    joined: list[dict[str, str]] = []
    join = simulation.cluster.join

    def recording(node):  # type: ignore[no-untyped-def]
        joined.append(dict(node.labels))
        join(node)

    simulation.cluster.join = recording  # type: ignore[method-assign]
    simulation.run()
    autoscaler = simulation.cluster.autoscaler
    assert autoscaler is not None and autoscaler.count == 1
    (labels,) = joined
    assert labels["nvidia.com/mig.config"] == "custom-3g.20gb-2g.10gb-1g.5gbx2"
    assert "gpustack-gen.dev/rollout" not in labels
    assert "a100-auto-0" not in simulation.cluster.nodes
