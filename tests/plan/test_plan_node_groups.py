"""The plan of a label change updates the pool's node-group template first, in its own step: naming the labels,
the rendered file when the cluster renders node groups, and a read-back where the template is a cluster object."""

from __future__ import annotations

from fleets import base, fleet

from gpustack_gen.change.model import Action, Step
from gpustack_gen.plan import plan_fleets


def _mig_change(provider: str | None) -> tuple[Step, ...]:
    old = base()
    if provider is not None:
        old["clusters"][0]["nodeGroups"] = {"provider": provider}
    new = base()
    new["clusters"][0].update({k: v for k, v in old["clusters"][0].items() if k == "nodeGroups"})
    new["clusters"][0]["nodePools"][1]["sharing"] = {"strategy": "mig", "layout": {"3g.20gb": 1, "1g.5gb": 4}}
    old_layout = old["clusters"][0]["nodePools"][1]["sharing"]["layout"]  # kept while nodes still carry it
    new["clusters"][0]["retired"] = {"migConfigs": [{"gpu": "a100-40gb", "layout": old_layout}]}
    (runbook,) = plan_fleets(fleet(old), fleet(new), rendered="out").clusters
    return tuple(step for step in runbook.steps if step.pool == "a100")


def _node_group(steps: tuple[Step, ...]) -> tuple[int, Step]:
    ((index, step),) = [(n, s) for n, s in enumerate(steps) if s.action is Action.NODE_GROUP]
    return index, step


def test_the_template_step_comes_after_the_config_sync_and_before_any_node_changes() -> None:
    steps = _mig_change("karpenter")
    index, step = _node_group(steps)
    assert [s.action for s in steps[:index]] == [Action.WAIT]  # the kubelet's copy of the new MIG config
    assert {Action.DRAIN, Action.LABEL_NODES} <= {s.action for s in steps[index + 1 :]}
    assert "nvidia.com/mig.config=custom-3g.20gb-1g.5gbx4" in step.reason


def test_karpenter_names_the_file_and_reads_the_template_back() -> None:
    _, step = _node_group(_mig_change("karpenter"))
    assert step.command is None  # a person merges the fragment into their own NodePool
    assert "merge out/prod/node-groups/a100.karpenter.yaml over node group a100" in step.reason
    assert step.verify_text == (
        "kubectl --context prod get nodepools.karpenter.sh --all-namespaces --field-selector=metadata.name=a100 "
        "-o 'jsonpath={.items[*].spec.template.metadata.labels}'"
    )


def test_cluster_api_reads_the_machine_deployment_back() -> None:
    _, step = _node_group(_mig_change("cluster-api"))
    assert step.verify_text is not None and "get machinedeployments.cluster.x-k8s.io" in step.verify_text


def test_a_provider_outside_the_cluster_is_checked_by_hand() -> None:
    _, step = _node_group(_mig_change("gke"))
    assert step.verify is None
    assert "out/prod/node-groups/a100.gke.yaml" in step.reason and "confirm it by hand" in step.reason


def test_without_a_provider_the_plan_names_no_file() -> None:
    _, step = _node_group(_mig_change(None))
    assert step.verify is None and "node-groups/" not in step.reason
