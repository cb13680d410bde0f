"""``gpustack-gen verify``: does a running cluster match the fleet, node by node, and if not, why not.

    from pathlib import Path
    from gpustack_gen import load_fleet
    from gpustack_gen.verify import read_state_dir, verify_cluster

    fleet = load_fleet(Path("fleet.yaml"))
    cluster = fleet.cluster("prod")
    state = read_state_dir(Path("state"), cluster)      # or verify.live.read_live_state(cluster, ...)
    result = verify_cluster(cluster, state, fleet_label="fleet.yaml")
    result.exit_code                # 0: the cluster matches; 1: an error finding; 4: only nodes mid-rollout differ

Each node is matched to the pool whose ``nodeSelector`` it satisfies; the checks of
:mod:`gpustack_gen.verify.checks` compare it with what the fleet says (:mod:`.expected`). The library
never prints or exits; reports are in :mod:`.report`. A node in a step a rollout passes through (MIG
repartitioning, a driver upgrade, cordoned: :mod:`.in_progress`) is reported in progress, and what that step
accounts for on it is a warning, not an error.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..errors import FleetError, Problem, Severity
from ..model.fleet import Cluster
from . import state as _state
from .backends import VERIFY_BACKENDS, verify_backend
from .checks import CHECKS
from .expected import Expected, expected_state
from .in_progress import InProgress, node_in_progress
from .model import Finding
from .observed import Observed, observe, offered
from .result import NodeProgress, NodeStatus, PoolSummary, Skipped, Tally, VerifyResult
from .state import REGISTRATION, ClusterState, StatePart

__all__ = ["ClusterState", "StatePart", "VerifyResult", "read_state_dir", "state_parts", "verify_cluster"]


def state_parts(cluster: Cluster) -> tuple[StatePart, ...]:
    """The parts ``verify`` reads of ``cluster``, its backend's among them (:func:`.state.state_parts`)."""
    backend = verify_backend(cluster)
    return _state.state_parts(cluster, backend.state_parts(cluster) if backend is not None else ())


def read_state_dir(directory: Path, cluster: Cluster) -> ClusterState:
    """The files of ``directory`` (see :func:`state_parts`); raises :class:`FleetError` on unreadable or wrong input."""
    return _state.read_state_dir(directory, cluster, state_parts(cluster))


def verify_cluster(
    cluster: Cluster, state: ClusterState, *, fleet_label: str, rendered: str = "rendered"
) -> VerifyResult:
    """Run every check whose inputs were read; raises :class:`FleetError` for a backend verify does not know.

    A check that reads a part the cluster does not have (the workloads of releases a gpu-operator cluster never
    installs) does not apply to it: it is neither run nor reported as skipped."""
    backend = verify_backend(cluster)
    if backend is None:
        known = ", ".join(VERIFY_BACKENDS)
        raise FleetError(
            [Problem(fleet_label, 0, 0, "", f"verify does not know backend {cluster.backend} yet (it knows {known})")]
        )
    expected = expected_state(cluster, backend, rendered, fleet_label)
    observed = observe(expected, state)
    findings: list[Finding] = []
    skipped: list[Skipped] = []
    parts = {part.name for part in state_parts(cluster)}
    for check in CHECKS:
        needs = [p for need in check.NEEDS for p in (backend.REGISTRATION_PARTS if need == REGISTRATION else (need,))]
        if not parts.issuperset(needs):
            continue
        absent = [part for part in needs if not state.has(part)]
        if absent:
            skipped.append(Skipped(check.ID, "; ".join(state.missing.get(p, f"{p} not read") for p in absent)))
            continue
        findings.extend(check.findings(expected, observed))
    progress = _in_progress(expected, observed) if state.nodes is not None else {}
    findings = [_as_in_progress(finding, progress) for finding in findings]
    registered = all(state.has(part) for part in backend.REGISTRATION_PARTS)
    pools = _summaries(expected, observed, findings, registered, progress) if state.nodes is not None else None
    rollouts = tuple(NodeProgress(pool, node, step.state, step.ends) for (pool, node), step in sorted(progress.items()))
    return VerifyResult(fleet_label, cluster.name, state.source, pools, tuple(findings), tuple(skipped), rollouts)


def _in_progress(expected: Expected, observed: Observed) -> dict[tuple[str, str], InProgress]:
    """(pool, node) -> the rollout step each node of a pool is in, for those in one."""
    found = {}
    for pool in expected.pools:
        for node in observed.nodes_of(pool):
            step = node_in_progress(expected.cluster, node)
            if step is not None:
                found[(pool.name, node.name)] = step
    return found


def _as_in_progress(finding: Finding, progress: dict[tuple[str, str], InProgress]) -> Finding:
    """A finding on a node mid-rollout that its rollout step accounts for is a warning saying so."""
    step = progress.get((finding.pool or "", finding.node or ""))
    if step is None or finding.check not in step.explains:
        return finding
    hint = f"in progress: {step.state}; ends {step.ends}" + (f"; if not: {finding.hint}" if finding.hint else "")
    return replace(finding, severity=Severity.WARNING, hint=hint)


def _summaries(
    expected: Expected,
    observed: Observed,
    findings: list[Finding],
    registered: bool,
    progress: dict[tuple[str, str], InProgress],
) -> tuple[PoolSummary, ...]:
    """Per pool, its nodes and what they offer; without the registration's parts, only what the allocatable shows."""
    failing = {(f.pool, f.node) for f in findings if f.severity is Severity.ERROR and f.node is not None}
    summaries = []
    for pool in expected.pools:
        shown = pool.offered if registered else pool.resources
        nodes = tuple(
            NodeStatus(
                node.name,
                (pool.name, node.name) not in failing,
                {r: n for r, n in offered(expected, pool, node, observed.state).items() if r in shown},
                step.state if (step := progress.get((pool.name, node.name))) is not None else None,
            )
            for node in observed.nodes_of(pool)
        )
        tallies = tuple(
            Tally(resource, sum(n.advertised[resource] for n in nodes), total)
            for resource, total in expected.cluster.resources_total(pool.pool).items()
            if resource in shown
        )
        summaries.append(
            PoolSummary(pool.name, pool.pool.gpu.id, pool.pool.sharing.describe(), pool.pool.nodes, nodes, tallies)
        )
    return tuple(summaries)
