"""What each pool advertises of each resource, and what its workloads ask, before and after a change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model.fleet import Cluster


@dataclass(frozen=True)
class CapacityChange:
    """What a pool advertises of one resource (all its nodes), and what its workloads ask."""

    pool: str
    resource: str
    old: int
    new: int
    requested_old: int
    requested_new: int

    def line(self) -> str:
        text = f"{self.pool}: {self.resource} {self.old} -> {self.new}"
        if self.requested_old or self.requested_new:
            asked = (
                str(self.requested_new)
                if self.requested_old == self.requested_new
                else f"{self.requested_old} -> {self.requested_new}"
            )
            text += f" (workloads ask {asked})"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "resource": self.resource,
            "old": self.old,
            "new": self.new,
            "requestedOld": self.requested_old,
            "requestedNew": self.requested_new,
        }


def capacity_table(cluster: Cluster | None) -> dict[tuple[str, str], tuple[int, int]]:
    """(pool, resource) -> (advertised in total, asked by the pool's workloads)."""
    if cluster is None:
        return {}
    asked = cluster.requested_by_pool()
    table: dict[tuple[str, str], tuple[int, int]] = {}
    for pool in cluster.pools:
        wanted = asked.get(pool.name, {})
        totals = cluster.resources_total(pool)
        for resource in totals.keys() | wanted.keys():
            table[(pool.name, resource)] = (totals.get(resource, 0), wanted.get(resource, 0))
    return table


def capacity_changes(old: Cluster | None, new: Cluster | None) -> tuple[CapacityChange, ...]:
    before, after = capacity_table(old), capacity_table(new)
    changes = []
    for key in sorted(before.keys() | after.keys()):
        old_total, old_asked = before.get(key, (0, 0))
        new_total, new_asked = after.get(key, (0, 0))
        if (old_total, old_asked) != (new_total, new_asked):
            changes.append(CapacityChange(key[0], key[1], old_total, new_total, old_asked, new_asked))
    return tuple(changes)
