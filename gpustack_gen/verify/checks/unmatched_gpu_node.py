"""A node with a GPU that no pool's ``nodeSelector`` selects: the fleet does not manage it.

It gets whatever the backend gives unlabelled nodes (the GPU Operator: the ``any`` key), which may not be
what its workloads expect; and nothing the fleet renders counts its capacity.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog import PRODUCT_LABEL
from ...errors import Severity
from ..expected import Expected
from ..model import Finding
from ..observed import Observed

ID = "unmatched-gpu-node"
NEEDS = ("nodes",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    selectors = "; ".join(
        f"{pool.name}: " + ",".join(f"{k}={v}" for k, v in pool.pool.node_selector) for pool in expected.pools
    )
    for node in observed.unmatched_gpu_nodes:
        product = node.labels.get(PRODUCT_LABEL, "a GPU")
        yield Finding(
            ID,
            Severity.ERROR,
            "nodeSelector",
            f"has {product} but no pool selects it",
            None,
            node.name,
            None,
            product,
            "add a pool for it to the fleet, or label it so that a pool's nodeSelector selects it"
            + (f" ({selectors})" if selectors else ""),
        )
