"""A node advertises another amount of its pool's resource than the fleet says (1 instead of 4...).

Nodes that advertise nothing at all while they have a GPU are ``gpu-not-advertised``'s.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from ..expected import Expected
from ..model import Finding, NodeView, causes_hint, differs
from ..observed import GPU_COUNT_LABEL, GPU_PRESENT_LABELS, Observed, advertised, has_gpu

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
            if gpu and not any(advertised(node, r) for r in pool.resources):
                continue  # gpu-not-advertised
            view = NodeView(expected, pool, node, observed.state)
            for resource, want in pool.resources.items():
                got = advertised(node, resource)
                if got == want:
                    continue
                causes = expected.backend.capacity_causes(view, resource, got) if gpu else (NO_GPU,)
                yield Finding(
                    ID,
                    Severity.ERROR,
                    resource,
                    differs(resource, want, got),
                    pool.name,
                    node.name,
                    want,
                    got,
                    causes_hint(causes),
                )
