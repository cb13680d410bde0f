"""A node lacks one of the labels its pool's nodes carry, or carries another value.

The labels are the backend's ``pool_labels`` (what ``plan`` sets). Without a label a node may still get
what the pool needs: the backend hook says what stands in for it (the GPU Operator's ``any`` key), and
the finding is then a warning.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from .. import commands
from ..expected import Expected
from ..model import Finding, NodeView, differs
from ..observed import Observed

ID = "label-mismatch"
NEEDS = ("nodes",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool in expected.pools:
        for node in observed.nodes_of(pool):
            for label, value in pool.labels.items():
                actual = node.labels.get(label)
                if actual == value:
                    continue
                command = commands.label_node(expected.cluster, node.name, label, value)
                hint = (
                    f"{command}, and set it in the pool's node group template; gpustack-gen plan orders label changes"
                )
                severity = Severity.ERROR
                message = differs(f"label {label}", value, actual)
                if actual is None:
                    fallback = expected.backend.unlabelled(NodeView(expected, pool, node, observed.state), label)
                    if fallback is not None:
                        severity = fallback.severity
                        message += f": {fallback.text}"
                yield Finding(ID, severity, f"label {label}", message, pool.name, node.name, value, actual, hint)
