"""A node advertises another amount of its pool's resource than the fleet says (1 instead of 4...), or registers
another amount with its backend's scheduler (HAMi: vGPUs, GPU memory and cores in the node's annotation).

Nodes that advertise nothing at all while they have a GPU are ``gpu-not-advertised``'s. A registration the
scheduler cannot use is ``node-registration``'s; its figures are compared here once they can be read. GPU
memory is registered as NVML reports it, which is less than the catalog's nominal size: it matches down to
the backend's stated shortfall (HAMi: 10 %), and never above the fleet's figure.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from ..expected import Expected, PoolExpectation
from ..model import Finding, NodeView, causes_hint, differs
from ..observed import GPU_COUNT_LABEL, GPU_PRESENT_LABELS, Observed, advertised, advertises, has_gpu

ID = "capacity-mismatch"
NEEDS = ("nodes",)

NO_GPU = (
    f"no GPU shows on the node (no {', '.join(GPU_PRESENT_LABELS)} or {GPU_COUNT_LABEL} label, no nvidia.com resource): "
    "the pool's nodeSelector selects a node without GPUs, or NFD and the driver have not come up on it"
)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool in expected.pools:
        for node in observed.nodes_of(pool):
            gpu = has_gpu(node)
            if gpu and not advertises(pool, node):
                continue  # gpu-not-advertised
            view = NodeView(expected, pool, node, observed.state)
            reported = set()
            for resource, want in pool.resources.items():
                got = advertised(node, resource)
                if got == want:
                    continue
                reported.add(resource)
                causes = expected.backend.capacity_causes(view, resource, got) if gpu else (NO_GPU,)
                yield _finding(pool, node.name, resource, differs(resource, want, got), want, got, causes)
            if gpu:
                yield from _registered(view, reported)


def _registered(view: NodeView, reported: set[str]) -> Iterator[Finding]:
    """The registration's figures against what each node of the pool offers in all (a resource the allocatable
    already got wrong is not reported twice: both come from the same plugin settings)."""
    registration = view.expected.backend.registration(view)
    if registration is None or registration.devices is None:
        return
    for resource, want in view.pool.offered.items():
        if resource in reported:
            continue
        got = registration.total(resource)
        least = registration.least(resource, want)
        if least <= got <= want:
            continue
        subject = f"{resource} in {registration.source}"
        message = differs(subject, want, got)
        if least < want:
            message += f" (at least {least}: {registration.shortfall[resource][1]})"
        causes = view.expected.backend.capacity_causes(view, resource, got)
        yield _finding(view.pool, view.node.name, subject, message, want, got, causes)


def _finding(
    pool: PoolExpectation, node: str, subject: str, message: str, want: int, got: int, causes: tuple[str, ...]
) -> Finding:
    return Finding(ID, Severity.ERROR, subject, message, pool.name, node, want, got, causes_hint(causes))
