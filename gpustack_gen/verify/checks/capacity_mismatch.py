"""A node advertises another amount of its pool's resource than the fleet says (1 instead of 4...), or registers
another amount with its backend's scheduler (HAMi: vGPUs, GPU memory and cores in the node's annotation; the
DRA driver: the devices of each of the pool's DeviceClasses in its ResourceSlices).

Where the backend puts nothing in the allocatable (DRA), an ``nvidia.com/`` resource there is a device plugin that
still registers it with the kubelet (the Operator's, which must not share a node with the DRA driver): expected 0.
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
from ..observed import (
    GPU_COUNT_LABEL,
    GPU_PRESENT_LABELS,
    NVIDIA_RESOURCE_PREFIX,
    Observed,
    advertised,
    advertises,
    count,
    has_gpu,
)
from ..state import REGISTRATION

ID = "capacity-mismatch"
NEEDS = ("nodes", REGISTRATION)

NO_GPU = (
    f"no GPU shows on the node (no {', '.join(GPU_PRESENT_LABELS)} or {GPU_COUNT_LABEL} label, no nvidia.com resource): "
    "the pool's nodeSelector selects a node without GPUs, or NFD and the driver have not come up on it"
)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool in expected.pools:
        for node in observed.nodes_of(pool):
            view = NodeView(expected, pool, node, observed.state)
            yield from _plugin_resources(view)
            gpu = has_gpu(node)
            if gpu and not advertises(expected, pool, node, observed.state):
                continue  # gpu-not-advertised
            reported = set()
            for resource, want in pool.resources.items():
                got = advertised(node, resource)
                if got == want:
                    continue
                reported.add(resource)
                causes = expected.backend.capacity_causes(view, resource, got) if gpu else (NO_GPU,)
                yield _finding(pool, node.name, resource, differs(resource, want, got), want, got, causes)
            yield from _registered(view, reported, None if gpu else (NO_GPU,))


def _plugin_resources(view: NodeView) -> Iterator[Finding]:
    """The ``nvidia.com/`` resources a node offers in its allocatable where its pool's backend puts none there."""
    if view.pool.resources:
        return
    for resource, quantity in sorted(view.node.allocatable.items()):
        got = count(quantity) or 0
        if resource.startswith(NVIDIA_RESOURCE_PREFIX) and got:
            causes = view.expected.backend.capacity_causes(view, resource, got)
            yield _finding(view.pool, view.node.name, resource, differs(resource, 0, got), 0, got, causes)


def _registered(view: NodeView, reported: set[str], causes: tuple[str, ...] | None) -> Iterator[Finding]:
    """The registration's figures against what each node of the pool offers in all (a resource the allocatable
    already got wrong is not reported twice: both come from the same plugin settings); ``causes`` when the
    backend's do not apply (a node without a GPU)."""
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
        why = causes or view.expected.backend.capacity_causes(view, resource, got)
        yield _finding(view.pool, view.node.name, subject, message, want, got, why)


def _finding(
    pool: PoolExpectation, node: str, subject: str, message: str, want: int, got: int, causes: tuple[str, ...]
) -> Finding:
    return Finding(ID, Severity.ERROR, subject, message, pool.name, node, want, got, causes_hint(causes))
