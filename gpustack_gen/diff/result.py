"""What a diff finds: plain, immutable data that the reports format and ``as_dict`` serializes.

Nothing here imports deepdiff, jinja2 or the models, so that building and reading results stays cheap.
Findings and capacity come from :mod:`gpustack_gen.change`, the rules ``plan`` orders into steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..change.capacity import CapacityChange
from ..change.model import Finding, Level
from ..errors import InputError, UsageError


class DiffInputError(InputError):
    """A side of the diff cannot be read: a missing path, a git ref or file that is not there, bad YAML."""


class DiffUsageError(UsageError):
    """The sides were given the wrong way: not OLD NEW, or --base REF with more than one FLEET."""


class Status(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True)
class Change:
    """One difference inside a document.

    ``kind`` is ``changed`` (old -> new), ``added`` (old is None), ``removed`` (new is None) or
    ``renamed`` (a ConfigMap key renamed with a similar value: old and new are the key names, and the
    value's own changes follow under the old key's path).
    """

    path: str
    kind: str
    old: Any = None
    new: Any = None

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class DocumentDiff:
    index: int  # 0-based position in the file (the new file's, or the old one's for a removed document)
    identity: str  # "ConfigMap gpu-operator/gpustack-device-plugin-config", or "document 1"
    status: Status
    changes: tuple[Change, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "id": self.identity,
            "status": self.status.value,
            "changes": [c.as_dict() for c in self.changes],
        }


@dataclass(frozen=True)
class FileDiff:
    path: str  # relative to the cluster folder: "device-plugin-config.yaml", "workloads/ml.api.yaml"
    kind: str
    status: Status
    documents: tuple[DocumentDiff, ...] = ()
    notes: tuple[Change, ...] = ()  # header notes that changed (e.g. the chart version in the helm command)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "status": self.status.value,
            "documents": [d.as_dict() for d in self.documents],
            "notes": [n.as_dict() for n in self.notes],
        }


@dataclass(frozen=True)
class ClusterDiff:
    name: str
    status: Status
    files: tuple[FileDiff, ...] = ()
    capacity: tuple[CapacityChange, ...] = ()
    findings: tuple[Finding, ...] = ()

    @property
    def level(self) -> Level:
        return max((f.level for f in self.findings), key=lambda level: level.rank, default=Level.NONE)

    def file_counts(self) -> dict[str, int]:
        counts = {status.value: 0 for status in Status}
        for file in self.files:
            counts[file.status.value] += 1
        return counts

    def summary(self) -> list[str]:
        """One line per capacity change and per finding: ``prod: [restart] ...``."""
        lines = [f"{self.name}: capacity {c.line()}" for c in self.capacity]
        lines += [f"{self.name}: [{f.level.value}] {f.message}" for f in self.findings]
        return lines

    def as_dict(self, impact: bool) -> dict[str, Any]:
        result: dict[str, Any] = {
            "name": self.name,
            "status": self.status.value,
            "level": self.level.value if impact else None,
            "files": [f.as_dict() for f in self.files],
        }
        result["capacity"] = [c.as_dict() for c in self.capacity] if impact else None
        result["findings"] = [f.as_dict() for f in self.findings] if impact else None
        return result


JSON_FORMAT = "gpustack-gen-diff/v2"
IMPACT_NEEDS_FLEETS = "capacity and impact need fleet files on both sides (a rendered folder holds no intent)"


@dataclass(frozen=True)
class DiffResult:
    """Everything that differs between two sides, cluster by cluster (sorted by name)."""

    old_label: str
    new_label: str
    clusters: tuple[ClusterDiff, ...] = ()
    impact_available: bool = True  # False when a side is a rendered folder: no capacity, no findings

    @property
    def empty(self) -> bool:
        return not self.clusters

    @property
    def level(self) -> Level:
        return max((c.level for c in self.clusters), key=lambda level: level.rank, default=Level.NONE)

    @property
    def findings(self) -> list[tuple[str, Finding]]:
        return [(c.name, f) for c in self.clusters for f in c.findings]

    def summary(self) -> list[str]:
        return [line for cluster in self.clusters for line in cluster.summary()]

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON document (see :mod:`gpustack_gen.diff.report` for the format)."""
        cluster_counts = {status.value: 0 for status in Status}
        file_counts = {status.value: 0 for status in Status}
        for cluster in self.clusters:
            cluster_counts[cluster.status.value] += 1
            for status, count in cluster.file_counts().items():
                file_counts[status] += count
        return {
            "format": JSON_FORMAT,
            "old": self.old_label,
            "new": self.new_label,
            "changed": not self.empty,
            "impactAvailable": self.impact_available,
            "impactNote": None if self.impact_available else IMPACT_NEEDS_FLEETS,
            "level": self.level.value if self.impact_available else None,
            "summary": {"clusters": cluster_counts, "files": file_counts},
            "clusters": [c.as_dict(self.impact_available) for c in self.clusters],
        }
