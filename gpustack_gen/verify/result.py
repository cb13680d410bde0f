"""The outcome of ``verify`` for one cluster: a summary per pool, each node's status, the findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ExitCode, Severity
from .model import Finding

JSON_FORMAT = "gpustack-gen-verify/v1"


@dataclass(frozen=True)
class Tally:
    resource: str
    advertised: int  # by the pool's nodes, all together
    intended: int  # by the pool: its nodes x what each advertises


@dataclass(frozen=True)
class NodeStatus:
    name: str
    ok: bool  # no error finding names it
    advertised: dict[str, int]  # the pool's resources: the allocatable, and what the node registers beyond it (HAMi)
    in_progress: str | None = None  # the rollout step the node is in (MIG reconfiguration pending...), or None


@dataclass(frozen=True)
class PoolSummary:
    name: str
    gpu: str  # catalog id
    sharing: str  # the policy in words: "time-slicing, 4 per GPU"
    intended_nodes: int
    nodes: tuple[NodeStatus, ...]  # the nodes its nodeSelector selects
    capacity: tuple[Tally, ...]

    @property
    def ok_nodes(self) -> int:
        return sum(node.ok for node in self.nodes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "gpu": self.gpu,
            "sharing": self.sharing,
            "nodes": {"intended": self.intended_nodes, "found": len(self.nodes), "ok": self.ok_nodes},
            "capacity": [
                {"resource": t.resource, "advertised": t.advertised, "intended": t.intended} for t in self.capacity
            ],
            "nodeStatus": [
                {"name": n.name, "ok": n.ok, "advertised": n.advertised, "inProgress": n.in_progress}
                for n in self.nodes
            ],
        }


@dataclass(frozen=True)
class Skipped:
    check: str
    reason: str


@dataclass(frozen=True)
class NodeProgress:
    """A node in the middle of a rollout step, and when that step ends."""

    pool: str
    node: str
    state: str
    ends: str


@dataclass(frozen=True)
class VerifyResult:
    fleet: str  # how the fleet file is named
    cluster: str
    source: str  # where the cluster state came from: a folder, or "context NAME"
    pools: tuple[PoolSummary, ...] | None  # None: the nodes were not read
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]
    in_progress: tuple[NodeProgress, ...] = ()  # nodes mid-rollout, whose step accounts for what they show

    def count(self, severity: Severity) -> int:
        return sum(finding.severity is severity for finding in self.findings)

    @property
    def exit_code(self) -> ExitCode:
        """1 when a finding is an error; else 4 while a node is mid-rollout; else 0."""
        if self.count(Severity.ERROR):
            return ExitCode.DIFFERS
        return ExitCode.IN_PROGRESS if self.in_progress else ExitCode.OK

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON document (see :mod:`gpustack_gen.verify.report` for the format)."""
        return {
            "format": JSON_FORMAT,
            "fleet": self.fleet,
            "cluster": self.cluster,
            "source": self.source,
            "matches": self.exit_code is ExitCode.OK,
            "summary": {
                "errors": self.count(Severity.ERROR),
                "warnings": self.count(Severity.WARNING),
                "inProgress": len(self.in_progress),
            },
            "pools": None if self.pools is None else [pool.as_dict() for pool in self.pools],
            "findings": [finding.as_dict() for finding in self.findings],
            "skipped": [{"check": s.check, "reason": s.reason} for s in self.skipped],
            "inProgress": [
                {"pool": p.pool, "node": p.node, "state": p.state, "ends": p.ends} for p in self.in_progress
            ],
        }
