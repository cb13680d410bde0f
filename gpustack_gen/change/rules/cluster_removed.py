"""A cluster leaves the fleet: gpustack-gen stops rendering it; nothing is uninstalled."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "cluster-removed"
LEVEL = Level.NONE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.new is not None or change.old is None:
        return
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"cluster {change.old.name} leaves the fleet: gpustack-gen stops rendering it; nothing is uninstalled",
        )
    )
