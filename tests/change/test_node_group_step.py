"""Every change case whose pool's node-group template changes (labels or taints) updates it in a node-group step
before any step relabels that pool's nodes: a node an autoscaler adds meanwhile is born with the template's labels
of that moment."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack_gen import load_fleet
from gpustack_gen.change import analyse
from gpustack_gen.change.model import Action
from gpustack_gen.compile.node_groups import template_of
from gpustack_gen.model.fleet import Cluster

CHANGES = Path(__file__).resolve().parent.parent / "changes"
KINDS = sorted(p.name for p in CHANGES.iterdir() if p.is_dir())


def _templates(cluster: Cluster) -> dict[str, tuple[object, ...]]:
    return {
        pool.name: (dict(template_of(cluster, pool).labels), template_of(cluster, pool).taints)
        for pool in cluster.pools
        if pool.nodes > 0
    }


@pytest.mark.parametrize("kind", KINDS)
def test_a_changed_template_is_updated_before_the_pool_is_relabelled(kind: str) -> None:
    old = load_fleet(CHANGES / kind / "old.yaml", name="old.yaml").cluster("prod")
    new = load_fleet(CHANGES / kind / "new.yaml", name="new.yaml").cluster("prod")
    assert new is not None
    analysis = analyse(old, new)  # old is None where the fleet adopts a running Operator
    if analysis.errors:
        pytest.skip("the plan is refused")
    before, after = {} if old is None else _templates(old), _templates(new)
    changed = [pool for pool, template in after.items() if before.get(pool) != template]
    for pool in changed:
        actions = [step.action for step in analysis.steps if step.pool == pool]
        assert Action.NODE_GROUP in actions, f"pool {pool}'s template changes but no step updates it"
        if Action.LABEL_NODES in actions:
            assert actions.index(Action.NODE_GROUP) < actions.index(Action.LABEL_NODES), pool
    assert len([s for s in analysis.steps if s.action is Action.NODE_GROUP]) == len(
        {s.pool for s in analysis.steps if s.action is Action.NODE_GROUP}
    ), "one node-group step per pool"
