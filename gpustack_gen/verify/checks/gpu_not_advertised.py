"""A node with a GPU that advertises none of its pool's resources: the Pending pod this tool exists to prevent.

A GPU shows in labels the device plugin does not set: the Operator's ``nvidia.com/gpu.present``, GFD's
``nvidia.com/gpu.count`` or NFD's ``feature.node.kubernetes.io/pci-10de.present``. The backend hook names
the likely causes, those the cluster shows first.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from ..expected import Expected
from ..model import Finding, NodeView, causes_hint, differs
from ..observed import Observed, advertised, advertises, has_gpu

ID = "gpu-not-advertised"
NEEDS = ("nodes",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool in expected.pools:
        for node in observed.nodes_of(pool):
            if not pool.resources or not has_gpu(node) or advertises(pool, node):
                continue
            actual = {resource: advertised(node, resource) for resource in pool.resources}
            view = NodeView(expected, pool, node, observed.state)
            yield Finding(
                ID,
                Severity.ERROR,
                ", ".join(pool.resources),
                "; ".join(differs(r, pool.resources[r], actual[r]) for r in pool.resources),
                pool.name,
                node.name,
                dict(pool.resources),
                actual,
                causes_hint(expected.backend.not_advertised_causes(view)),
            )
