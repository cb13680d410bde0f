"""The plan of a label change names the pool's node-group file, to update before the rollout's nodes."""

from __future__ import annotations

from fleets import base, fleet

from gpustack_gen.plan import plan_fleets


def _mig_change(provider: str | None) -> tuple[str, ...]:
    old = base()
    if provider is not None:
        old["clusters"][0]["nodeGroups"] = {"provider": provider}
    new = base()
    new["clusters"][0].update({k: v for k, v in old["clusters"][0].items() if k == "nodeGroups"})
    new["clusters"][0]["nodePools"][1]["sharing"] = {"strategy": "mig", "layout": {"3g.20gb": 1, "1g.5gb": 4}}
    old_layout = old["clusters"][0]["nodePools"][1]["sharing"]["layout"]  # kept while nodes still carry it
    new["clusters"][0]["retired"] = {"migConfigs": [{"gpu": "a100-40gb", "layout": old_layout}]}
    (runbook,) = plan_fleets(fleet(old), fleet(new), rendered="out").clusters
    return tuple(step.reason for step in runbook.steps if step.pool == "a100")


def test_a_mig_relabel_names_the_node_group_file_to_update_first() -> None:
    reasons = _mig_change("karpenter")
    (mark,) = [r for r in reasons if "pending" in r and "update it first" in r]
    assert "the node group template out/prod/node-groups/a100.karpenter.yaml (update it first)" in mark
    assert any(
        "also set it in the pool's node group template out/prod/node-groups/a100.karpenter.yaml" in r for r in reasons
    )


def test_without_a_provider_the_plan_names_no_file() -> None:
    reasons = _mig_change(None)
    assert any("the node group template (update it first)" in r for r in reasons)
    assert not any("node-groups/" in r for r in reasons)
