"""``gpustack-gen plan``: the ordered rollout of a fleet change, cluster by cluster.

    from gpustack_gen import load_fleet
    from gpustack_gen.plan import plan_fleets

    result = plan_fleets(load_fleet(Path("old.yaml")), load_fleet(Path("fleet.yaml")), rendered="rendered")
    for cluster in result.clusters:
        for step in cluster.steps:
            print(step.action, step.command_text)

Every command runs from the folder the plan is for: ``rendered`` is where ``render --out`` wrote the new
fleet, and ``fleet_dir`` is the fleet file's folder (its own paths, such as values files, are rebased).
The steps come from the same rules as ``diff``'s findings (:mod:`gpustack_gen.change`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..change.model import Level
from ..workdir import Paths
from .result import ClusterRunbook, PlanResult

if TYPE_CHECKING:
    from ..diff.inputs import Side
    from ..model.fleet import Fleet

__all__ = ["ClusterRunbook", "PlanResult", "plan_fleets", "plan_sides"]


def plan_fleets(
    old: Fleet,
    new: Fleet,
    *,
    rendered: str = "rendered",
    fleet_dir: str = ".",
    clusters: Iterable[str] | None = None,
    old_label: str | None = None,
    new_label: str | None = None,
) -> PlanResult:
    """The runbook of every cluster whose intent differs (or only of ``clusters``), in name order."""
    from ..change.analysis import analyse

    paths = Paths(rendered=rendered.rstrip("/") or ".", fleet_dir=fleet_dir)
    before = {c.name: c for c in old.clusters}
    after = {c.name: c for c in new.clusters}
    wanted = set(clusters) if clusters is not None else None
    runbooks = []
    for name in sorted(before.keys() | after.keys()):
        if wanted is not None and name not in wanted:
            continue
        if before.get(name) == after.get(name):
            continue
        analysis = analyse(before.get(name), after.get(name), paths)
        cluster = after.get(name) or before[name]
        notes = tuple(o.finding for o in analysis.outcomes if not o.steps and o.finding.level is not Level.ERROR)
        if analysis.errors:
            runbooks.append(ClusterRunbook(name, cluster.kube_context, (), analysis.errors, notes))
        elif analysis.steps or notes:
            runbooks.append(ClusterRunbook(name, cluster.kube_context, analysis.steps, (), notes))
    return PlanResult(old_label or old.source, new_label or new.source, paths.rendered, tuple(runbooks))


def plan_sides(
    old: Side, new: Side, *, rendered: str = "rendered", fleet_dir: str = ".", clusters: Iterable[str] | None = None
) -> PlanResult:
    """Plan between two diff sides; both must be fleets (a rendered folder holds no intent)."""
    from ..diff.result import DiffInputError

    for side in (old, new):
        if side.fleet is None:
            raise DiffInputError(f"{side.label}: plan needs fleet files on both sides, not a rendered folder")
    assert old.fleet is not None and new.fleet is not None
    return plan_fleets(
        old.fleet,
        new.fleet,
        rendered=rendered,
        fleet_dir=fleet_dir,
        clusters=clusters,
        old_label=old.label,
        new_label=new.label,
    )
