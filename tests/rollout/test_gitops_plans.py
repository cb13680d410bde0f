"""Clusters whose charts Argo CD or Flux deliver: no step before the drain hands the Operator the new values,
and the Operator step is the controller's sync of the wrapper, never a helm upgrade of the release it owns."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from sim.gitops import REACTION_SECONDS
from sim.scripts import script
from sim.simulator import Simulation

from gpustack_gen import load_fleet, render
from gpustack_gen.change import Action, Step, analyse
from gpustack_gen.workdir import Paths

CHANGES = Path(__file__).resolve().parent.parent / "changes"
KINDS = ("argocd-mig-strategy", "flux-mig-strategy")


class Recording(Simulation):
    """Records the MIG strategy the ClusterPolicy holds after each step, by the step's action, once the controllers
    have handled what the step queued: a person takes at least that long to the next step."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.strategies: list[tuple[str, str | None]] = []

    def bootstrap(self) -> None:
        super().bootstrap()
        self.strategies.clear()  # the old fleet's own install

    def _step(self, step: Step, both: set[str]) -> None:
        super()._step(step, both)
        self.cluster.advance(REACTION_SECONDS)
        spec = self.cluster.spec or {}
        self.strategies.append((step.action.value, spec.get("mig", {}).get("strategy")))


def _fleets(kind: str):  # type: ignore[no-untyped-def]
    folder = CHANGES / kind
    return load_fleet(folder / "old.yaml", name="old.yaml"), load_fleet(folder / "new.yaml", name="new.yaml")


def _strategy_before_drain(simulation: Recording) -> set[str | None]:
    actions = [action for action, _ in simulation.strategies]
    return {strategy for _, strategy in simulation.strategies[: actions.index("drain")]}


@pytest.mark.parametrize("kind", KINDS)
def test_the_operator_gets_the_new_values_only_after_the_drain(kind: str, upstream: Path, tmp_path: Path) -> None:
    old, new = _fleets(kind)
    steps = analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps
    assert not any("helm upgrade" in (step.command_text or "") for step in steps)
    simulation = Recording(upstream, tmp_path, old, new, "prod")
    simulation.run(steps)
    assert _strategy_before_drain(simulation) == {"single"}
    assert simulation.strategies[-1][1] == "mixed"


@pytest.mark.parametrize("kind", KINDS)
def test_a_wrapper_applied_with_the_configmaps_changes_the_operator_before_the_drain(
    kind: str, upstream: Path, tmp_path: Path
) -> None:
    """The old layout: the cluster folder listed the Application or HelmRelease, so its first apply delivered it."""
    old, new = _fleets(kind)
    steps = list(analyse(old.cluster("prod"), new.cluster("prod"), Paths(rendered="rendered")).steps)
    operator = next(step for step in steps if step.action is Action.OPERATOR)
    first = dataclasses.replace(
        steps[0], command=script("kubectl apply -k rendered/prod && kubectl apply -k rendered/prod/delivery")
    )
    simulation = Recording(upstream, tmp_path, old, new, "prod")
    simulation.run([first, *(step for step in steps[1:] if step is not operator)])
    assert "mixed" in _strategy_before_drain(simulation)


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_applied_folder_holds_no_controller_object(kind: str) -> None:
    _, new = _fleets(kind)
    files = render(new).files
    root = [document.get("kind") for path, file in files.items() if path.count("/") == 1 for document in file.documents]
    assert "Application" not in root and "HelmRelease" not in root
    delivery = files["prod/delivery/kustomization.yaml"].documents[0]["resources"]
    assert delivery == [{"argocd-mig-strategy": "argocd-application.yaml"}.get(kind, "flux-helmrelease.yaml")]
