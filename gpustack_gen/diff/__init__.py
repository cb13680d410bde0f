"""``gpustack-gen diff``: what a fleet change does to the generated artifacts, the capacity and the clusters.

    from gpustack_gen import load_fleet
    from gpustack_gen.diff import diff_fleets

    result = diff_fleets(load_fleet(Path("old.yaml")), load_fleet(Path("fleet.yaml")))
    if not result.empty:
        print("\\n".join(result.summary()))

``diff_sides`` takes either side as a rendered folder too (:func:`read_side`); then the result has
no capacity or findings (``impact_available`` is False). The library never prints or exits; the
reports in :mod:`gpustack_gen.diff.report` return text.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..change.capacity import CapacityChange
from ..change.model import Finding, Level
from ..change.sides import (
    DiffInputError,
    DiffUsageError,
    Side,
    SourceFile,
    fleet_at_ref,
    read_at_ref,
    read_rendered,
    read_side,
    read_sides,
)
from .result import (
    Change,
    ClusterDiff,
    DiffResult,
    DocumentDiff,
    FileDiff,
    Status,
)
from .structural import diff_files

if TYPE_CHECKING:
    from ..model.fleet import Fleet

__all__ = [
    "CapacityChange",
    "Change",
    "ClusterDiff",
    "DiffInputError",
    "DiffResult",
    "DiffUsageError",
    "DocumentDiff",
    "FileDiff",
    "Finding",
    "Level",
    "Side",
    "Status",
    "diff_fleets",
    "diff_sides",
    "fleet_at_ref",
    "read_at_ref",
    "read_rendered",
    "read_side",
    "read_sides",
]


def diff_fleets(old: Fleet, new: Fleet) -> DiffResult:
    """Structural diff, capacity and impact of two fleets; only clusters whose intent differs are rendered."""
    return diff_sides(Side.of_fleet(old), Side.of_fleet(new))


def diff_sides(old: Side, new: Side) -> DiffResult:
    """Diff two sides; capacity and findings only when both are fleets."""
    if old.fleet is not None and new.fleet is not None:
        return _diff_intents(old, new, old.fleet, new.fleet)
    clusters = diff_files(_files(old), _files(new))
    return DiffResult(old.label, new.label, tuple(clusters), impact_available=False)


def _diff_intents(old: Side, new: Side, old_fleet: Fleet, new_fleet: Fleet) -> DiffResult:
    from ..change.analysis import analyse

    old_clusters = {c.name: c for c in old_fleet.clusters}
    new_clusters = {c.name: c for c in new_fleet.clusters}
    differing = [
        name
        for name in sorted(old_clusters.keys() | new_clusters.keys())
        if old_clusters.get(name) != new_clusters.get(name)
    ]
    old_files = _render(old_fleet, [n for n in differing if n in old_clusters])
    new_files = _render(new_fleet, [n for n in differing if n in new_clusters])
    structural = {c.name: c for c in diff_files(old_files, new_files)}
    clusters = []
    for name in differing:
        before, after = old_clusters.get(name), new_clusters.get(name)
        analysis = analyse(before, after)
        status = Status.ADDED if before is None else Status.REMOVED if after is None else Status.CHANGED
        base = structural.get(name, ClusterDiff(name, status))
        if not (base.files or analysis.capacity or analysis.findings):
            continue
        clusters.append(replace(base, status=status, capacity=analysis.capacity, findings=analysis.findings))
    return DiffResult(old.label, new.label, tuple(clusters), impact_available=True)


def _render(fleet: Fleet, names: list[str]) -> dict[str, SourceFile]:
    if not names:
        return {}
    from ..rendering import render

    bundle = render(fleet, names)
    return {f.path: SourceFile(f.path, f.kind, f.text, f.documents) for f in bundle.files.values()}


def _files(side: Side) -> dict[str, SourceFile]:
    if side.files is not None:
        return dict(side.files)
    assert side.fleet is not None
    return _render(side.fleet, [c.name for c in side.fleet.clusters])
