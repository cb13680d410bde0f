"""The autoscaler on the model (``sim/autoscaler.py``): a node it adds for the drained pool's Pending pods comes from
the node-group template as it is then, and an empty one is removed."""

from __future__ import annotations

from pathlib import Path

from sim import autoscaler
from sim.simulator import Simulation

from gpustack_gen import load_fleet

CHANGES = Path(__file__).resolve().parent.parent / "changes"


def _fleets(kind: str):  # type: ignore[no-untyped-def]
    folder = CHANGES / kind
    return load_fleet(folder / "old.yaml", name="old.yaml"), load_fleet(folder / "new.yaml", name="new.yaml")


def test_without_the_pool_autoscaled_the_mig_layout_plan_passes(upstream: Path, tmp_path: Path) -> None:
    old, new = _fleets("mig-layout")
    assert Simulation(upstream, tmp_path, old, new, "prod").run().steps_run > 0


def test_a_node_the_autoscaler_adds_mid_plan_comes_from_the_updated_template(upstream: Path, tmp_path: Path) -> None:
    """The drain leaves the notebooks Pending; the autoscaler adds a node from the template as the plan's
    node-group step left it (the new nvidia.com/mig.config) and with no rollout mark, which no later step (they
    select the marked nodes) touches. Here it is still repartitioning when the marked nodes are uncordoned, the
    pods go back there, and it is removed empty."""
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
    assert labels["nvidia.com/mig.config"] == "custom-3g.20gbx2"
    assert "gpustack-gen.dev/rollout" not in labels
    assert "a100-auto-0" not in simulation.cluster.nodes


def test_the_node_group_step_sets_the_template_to_the_labels_it_names() -> None:
    scaler = autoscaler.Autoscaler({"a100": {"pool": "a100", "kubernetes.io/arch": "amd64", "gone": "x"}}, build=None)  # type: ignore[arg-type]
    scaler.set_template(
        "a100",
        "set the node-group template of pool a100 ...: labels pool=a100, nvidia.com/mig.config=all-1g.5gb; taints none; ...",
    )
    assert scaler.templates["a100"] == {
        "kubernetes.io/arch": "amd64",
        "pool": "a100",
        "nvidia.com/mig.config": "all-1g.5gb",
    }
    scaler.set_template("t4", "labels pool=t4; taints none")  # a pool the autoscaler does not scale
    assert set(scaler.templates) == {"a100"}
