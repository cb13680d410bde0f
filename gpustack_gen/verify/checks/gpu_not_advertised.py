"""A node with a GPU that advertises none of its pool's resources: the Pending pod this tool exists to prevent.

What it advertises is its allocatable, or on a backend that puts nothing there (DRA), the pool's devices it
publishes (:attr:`~gpustack_gen.verify.expected.PoolExpectation.advertised`). A GPU shows in labels the
device plugin does not set: the Operator's ``nvidia.com/gpu.present``, GFD's ``nvidia.com/gpu.count`` or
NFD's ``feature.node.kubernetes.io/pci-10de.present``. The backend hook names the likely causes, those the
cluster shows first.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from ..expected import Expected
from ..model import Finding, NodeView, causes_hint, differs
from ..observed import Observed, has_gpu, offered
from ..state import REGISTRATION

ID = "gpu-not-advertised"
NEEDS = ("nodes", REGISTRATION)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool in expected.pools:
        wanted = pool.advertised
        for node in observed.nodes_of(pool):
            if not wanted or not has_gpu(node):
                continue
            shown = offered(expected, pool, node, observed.state)
            actual = {resource: shown.get(resource, 0) for resource in wanted}
            if any(actual.values()):
                continue
            view = NodeView(expected, pool, node, observed.state)
            yield Finding(
                ID,
                Severity.ERROR,
                ", ".join(wanted),
                "; ".join(differs(r, wanted[r], actual[r]) for r in wanted),
                pool.name,
                node.name,
                dict(wanted),
                actual,
                causes_hint(expected.backend.not_advertised_causes(view)),
            )
