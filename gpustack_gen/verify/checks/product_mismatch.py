"""A node's GPU is not the pool's model: its ``nvidia.com/gpu.product`` label names another catalog model.

GPU feature discovery appends ``-SHARED`` to a shared GPU's product and ``-MIG-<profile>`` under the single
MIG strategy (k8s-device-plugin ``internal/lm/resource.go``); the catalog lookup drops both.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog import PRODUCT_LABEL, get_gpu
from ...errors import Severity
from ..expected import Expected
from ..model import Finding, differs
from ..observed import Observed

ID = "product-mismatch"
NEEDS = ("nodes",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool in expected.pools:
        model = pool.pool.gpu
        label = model.product_labels[0] if model.product_labels else model.id
        for node in observed.nodes_of(pool):
            product = node.labels.get(PRODUCT_LABEL)
            found = get_gpu(product) if product else None
            if product is None or (found is not None and found.id == model.id):
                continue
            what = f"{found.id}, " if found is not None else "not in the catalog, "
            yield Finding(
                ID,
                Severity.ERROR,
                f"label {PRODUCT_LABEL}",
                differs(f"label {PRODUCT_LABEL}", label, product) + f" ({what}not {model.id})",
                pool.name,
                node.name,
                label,
                product,
                f"the pool's nodeSelector selects a node of another GPU model: narrow the selector, or set the pool's gpu to "
                f"{found.id if found is not None else 'the model the node has'}",
            )
