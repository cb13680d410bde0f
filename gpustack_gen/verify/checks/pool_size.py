"""A pool's ``nodeSelector`` selects fewer or more nodes than its ``nodes``, or a node more than one pool selects."""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.node_labels import selector_text
from ...errors import Severity
from .. import commands
from ..expected import Expected
from ..model import Finding, differs
from ..observed import Observed

ID = "pool-size"
NEEDS = ("nodes",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool in expected.pools:
        nodes = observed.nodes_of(pool)
        if len(nodes) == pool.pool.nodes:
            continue
        selector = selector_text(pool.pool)
        listed = ", ".join(node.name for node in nodes) or "none"
        yield Finding(
            ID,
            Severity.ERROR,
            "nodes",
            differs("nodes", pool.pool.nodes, len(nodes)) + f" (selected: {listed})",
            pool.name,
            None,
            pool.pool.nodes,
            len(nodes),
            f"{commands.run(expected.cluster, 'get', 'nodes', '--selector', selector)} lists them; scale the node group, or change the "
            "pool's nodes or nodeSelector",
        )
    for node, pools in observed.overlaps:
        yield Finding(
            ID,
            Severity.ERROR,
            "nodeSelector",
            f"selected by pools {', '.join(pools)}; counted in {pools[0]}",
            pools[0],
            node.name,
            pools[0],
            list(pools),
            "narrow the pools' nodeSelectors so that each node has one pool",
        )
