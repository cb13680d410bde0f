"""The move from the standalone device plugin to the GPU Operator, as facts about its steps (the replay on the
rollout model is tests/changes/device-plugin-to-gpu-operator): every node kept off the Operator's plugin before it
exists, each template changed once it runs (a pool at 0 nodes too), the release named as the fleet names it, and
nothing uninstalled while one of its pods is left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpustack_gen import load_fleet
from gpustack_gen.change import analyse
from gpustack_gen.change.model import Action

CASE = Path(__file__).resolve().parent.parent / "changes" / "device-plugin-to-gpu-operator"


def _data(name: str) -> Any:
    return YAML(typ="safe").load((CASE / name).read_text(encoding="utf-8"))


def _plan(edit_old: Any = None, edit_new: Any = None) -> Any:
    old, new = _data("old.yaml"), _data("new.yaml")
    for data, edit in ((old, edit_old), (new, edit_new)):
        if edit is not None:
            edit(data["clusters"][0])
    return analyse(load_fleet(old).clusters[0], load_fleet(new).clusters[0])


def test_every_node_is_kept_off_the_operators_plugin_before_it_is_installed() -> None:
    steps = _plan().steps
    label = steps[[s.action for s in steps].index(Action.LABEL_NODES)]
    assert label.pool is None
    assert "--selector '!nvidia.com/gpu.deploy.device-plugin'" in (label.command_text or "")
    assert steps.index(label) < [s.action for s in steps].index(Action.OPERATOR)


def test_a_pool_at_zero_nodes_gets_its_template_changed_after_the_operator() -> None:
    def no_l4(cluster: dict[str, Any]) -> None:
        cluster["nodePools"][1]["nodes"] = 0

    steps = _plan(no_l4, no_l4).steps
    (group,) = [s for s in steps if s.action is Action.NODE_GROUP and s.pool == "l4"]
    assert "gpustack.io/standalone-plugin=off" in group.reason
    assert [s.action for s in steps].index(Action.OPERATOR) < steps.index(group)
    assert not [s for s in steps if s.pool == "l4" and s.action is Action.DRAIN]


def test_the_release_is_named_as_the_fleet_names_it_and_uninstalled_only_once_no_pod_is_left() -> None:
    def renamed(cluster: dict[str, Any]) -> None:
        cluster["devicePlugin"]["releaseName"] = "gpu-plugin"

    steps = _plan(renamed).steps
    uninstall = next(s for s in steps if s.action is Action.BACKEND)
    assert (uninstall.command_text or "").startswith("helm uninstall gpu-plugin ")
    check = steps[steps.index(uninstall) - 1]
    assert check.action is Action.CHECK
    assert "app.kubernetes.io/instance=gpu-plugin" in (check.command_text or "")


def test_a_release_a_gitops_controller_delivers_is_not_moved_by_helm() -> None:
    """The move ends with helm uninstall, which Argo CD or Flux would undo: refused with what to do first."""

    def delivered(cluster: dict[str, Any]) -> None:
        cluster["delivery"] = {"wrap": ["flux"]}

    analysis = _plan(delivered, delivered)
    assert [f.rule for f in analysis.errors] == ["device-plugin-move"]
    assert "delivered by flux" in analysis.errors[0].message
    assert analysis.steps == ()
