"""Clusters two loads of one fleet's versions (diff, plan) resolve once: the second takes the first's results.

A cluster's resolved form and its problems depend only on its own data, the fleet defaults and its index
(every problem and origin path starts with ``clusters[index]``). So a cluster the first load resolved and
checked without an error, whose parsed data and defaults the second load repeats at the same index,
resolves the same there, with the same warnings: those are located again in the second file (the same
data may be written on other lines). Data is compared by a BLAKE2b digest of its ``repr``: ``repr`` tells
``1`` from ``True`` and ``1.0`` and keeps key order, which ``==`` does not; the digest (128 bits) keeps
only 16 bytes per cluster in memory. A cluster with an error is resolved again.

When the first file's reading is kept (``yamlio/reread.py``), the second is re-read from it: the clusters
whose text is the same are the first document's own items (``SourceDocument.kept_items``; no digest
needed), and their validated models (pydantic) are kept too, so that the second load validates only what
changed. If the second file must be read in full after all, the models are dropped before that read
(``Reading.when_released``): they would otherwise be held, about as large as the parsed data, through it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import Problem, Severity
from ..yamlio.source import PathKey, SourceDocument
from . import intent
from .fleet import Cluster
from .resolve import ClusterOrigin, Report

if TYPE_CHECKING:
    from ..yamlio.reread import Reading

Resolved = tuple[Cluster, ClusterOrigin]


@dataclass(frozen=True)
class _Warning:
    path: PathKey
    key: bool
    message: str
    hint: str


@dataclass(frozen=True)
class Taken:
    """A cluster of the first load that the second repeats: resolved, its warnings, and maybe its model."""

    data: bytes  # digest of the cluster's parsed data
    resolved: Resolved
    warnings: tuple[_Warning, ...]
    model: intent.Cluster | None  # the validated item, while the second file may be re-read

    def warn_again(self, report: Report) -> None:
        for warning in self.warnings:
            report.warn(warning.path, warning.message, warning.hint, key=warning.key)


@dataclass
class ClusterShare:
    """Filled by the first load it is passed to, taken by the second, then empty (its memory freed)."""

    defaults: bytes | None = None
    clean: dict[int, Taken] = field(default_factory=dict)
    filled: bool = False
    reading: Reading | None = None  # the first file's, for re-reading the second

    def reading_options(self) -> tuple[Reading | None, bool]:
        """How the load given this share reads its file (``read_source``'s ``previous`` and ``keep``): the first
        keeps its reading, the second is re-read from it (the share no longer holds it: the reader releases it)."""
        reading, self.reading = self.reading, None
        return reading, not self.filled

    def take(self, doc: SourceDocument) -> dict[int, Taken]:
        """The clean clusters of the first load that ``doc`` (the second load's document) repeats, by index."""
        clean, self.clean = self.clean, {}
        data = doc.data
        clusters = data.get("clusters") if isinstance(data, dict) else None
        if not clean or not isinstance(clusters, list) or _digest(data.get("defaults")) != self.defaults:
            return {}
        return {
            index: entry
            for index, entry in clean.items()
            if index < len(clusters) and (index in doc.kept_items or _digest(clusters[index]) == entry.data)
        }

    def keep(
        self, doc: SourceDocument, index: int, resolved: Resolved, report: Report, found: int, model: intent.Cluster
    ) -> None:
        """Keep cluster ``index`` if ``report.problems[found:]``, what resolving and checking it added, are warnings.

        Its ``model`` is kept only when ``doc`` keeps its reading: only a re-read second file reuses it.
        """
        added: list[Problem] = report.problems[found:]
        if any(problem.severity is not Severity.WARNING for problem in added):
            return
        warnings = tuple(_Warning(*report.warned[id(p)], p.message, p.hint) for p in added)
        if self.defaults is None:
            self.defaults = _digest(doc.data.get("defaults"))
        kept_model = model if doc.reading is not None else None
        self.clean[index] = Taken(_digest(doc.data["clusters"][index]), resolved, warnings, kept_model)

    def fill(self, doc: SourceDocument) -> None:
        """The first load is done: keep its reading, and drop the models if the reading is released unused."""
        self.filled = True
        if doc.reading is not None:
            self.reading = doc.reading
            doc.reading.when_released(self._drop_models)

    def _drop_models(self) -> None:
        self.clean = {index: replace(entry, model=None) for index, entry in self.clean.items()}


def _digest(data: Any) -> bytes:
    return hashlib.blake2b(repr(data).encode("utf-8", "surrogatepass"), digest_size=16).digest()
