"""Clusters two loads of one fleet's versions (diff, plan) resolve once: the second takes the first's results.

A cluster's resolved form and its problems depend only on its own data, the fleet defaults and its index
(every problem and origin path starts with ``clusters[index]``). So a cluster the first load resolved and
checked without an error, whose parsed data and defaults the second load repeats at the same index,
resolves the same there, with the same warnings: those are located again in the second file (the same
data may be written on other lines). Data is compared by a BLAKE2b digest of its ``repr``: ``repr`` tells
``1`` from ``True`` and ``1.0`` and keeps key order, which ``==`` does not; the digest (128 bits) keeps
only 16 bytes per cluster in memory. A cluster with an error is resolved again. Every cluster is still
validated (pydantic) on both sides: keeping the first side's validated models for the second would hold
them, several times the resolved fleet's size, through the second file's parse.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem, Severity
from ..yamlio.source import PathKey
from .fleet import Cluster
from .resolve import ClusterOrigin, Report

Resolved = tuple[Cluster, ClusterOrigin]


@dataclass(frozen=True)
class _Warning:
    path: PathKey
    key: bool
    message: str
    hint: str


@dataclass(frozen=True)
class _Clean:
    data: bytes  # digest of the cluster's parsed data
    resolved: Resolved
    warnings: tuple[_Warning, ...]

    def warn_again(self, report: Report) -> None:
        for warning in self.warnings:
            report.warn(warning.path, warning.message, warning.hint, key=warning.key)


@dataclass
class ClusterShare:
    """Filled by the first load it is passed to, taken by the second, then empty (its memory freed)."""

    defaults: bytes | None = None
    clean: dict[int, _Clean] = field(default_factory=dict)
    filled: bool = False

    def take(self, data: Any) -> dict[int, _Clean]:
        """The clean clusters of the first load that ``data`` (the second load's document) repeats, by index."""
        clean, self.clean = self.clean, {}
        clusters = data.get("clusters") if isinstance(data, dict) else None
        if not clean or not isinstance(clusters, list) or _digest(data.get("defaults")) != self.defaults:
            return {}
        return {
            index: entry
            for index, entry in clean.items()
            if index < len(clusters) and _digest(clusters[index]) == entry.data
        }

    def keep(self, data: dict[str, Any], index: int, resolved: Resolved, report: Report, found: int) -> None:
        """Keep cluster ``index`` if ``report.problems[found:]``, what resolving and checking it added, are warnings."""
        added: list[Problem] = report.problems[found:]
        if any(problem.severity is not Severity.WARNING for problem in added):
            return
        warnings = tuple(_Warning(*report.warned[id(p)], p.message, p.hint) for p in added)
        if self.defaults is None:
            self.defaults = _digest(data.get("defaults"))
        self.clean[index] = _Clean(_digest(data["clusters"][index]), resolved, warnings)


def _digest(data: Any) -> bytes:
    return hashlib.blake2b(repr(data).encode("utf-8", "surrogatepass"), digest_size=16).digest()
