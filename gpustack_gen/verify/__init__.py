"""``gpustack-gen verify``: does a running cluster match the fleet, node by node, and if not, why not.

    from pathlib import Path
    from gpustack_gen import load_fleet
    from gpustack_gen.verify import read_state_dir, verify_cluster

    fleet = load_fleet(Path("fleet.yaml"))
    cluster = fleet.cluster("prod")
    state = read_state_dir(Path("state"), cluster)      # or verify.live.read_live_state(cluster, ...)
    result = verify_cluster(cluster, state, fleet_label="fleet.yaml")
    result.exit_code                # 0: the cluster matches; 1: an error finding

Each node is matched to the pool whose ``nodeSelector`` it satisfies; the checks of
:mod:`gpustack_gen.verify.checks` compare it with what the fleet says (:mod:`.expected`). The library
never prints or exits; reports are in :mod:`.report`.
"""

from __future__ import annotations

from ..errors import FleetError, Problem, Severity
from ..model.fleet import Cluster
from .backends import VERIFY_BACKENDS, verify_backend
from .checks import CHECKS
from .expected import Expected, expected_state
from .model import Finding
from .observed import Observed, observe, offered
from .result import NodeStatus, PoolSummary, Skipped, Tally, VerifyResult
from .state import REGISTRATION, ClusterState, StatePart, read_state_dir, state_parts

__all__ = ["ClusterState", "StatePart", "VerifyResult", "read_state_dir", "state_parts", "verify_cluster"]


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
    expected = expected_state(cluster, backend, rendered)
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
    registered = all(state.has(part) for part in backend.REGISTRATION_PARTS)
    pools = _summaries(expected, observed, findings, registered) if state.nodes is not None else None
    return VerifyResult(fleet_label, cluster.name, state.source, pools, tuple(findings), tuple(skipped))


def _summaries(
    expected: Expected, observed: Observed, findings: list[Finding], registered: bool
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
