"""A node's GPU is not the pool's model: its ``nvidia.com/gpu.product`` label names another catalog model, or
(where the label agrees or is absent) the GPU type its backend registered does (HAMi: ``type`` in
``hami.io/node-nvidia-register``, the NVML name).

GPU feature discovery appends ``-SHARED`` to a shared GPU's product and ``-MIG-<profile>`` under the single
MIG strategy (k8s-device-plugin ``internal/lm/resource.go``); the catalog lookup drops both.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...catalog import PRODUCT_LABEL, get_gpu
from ...errors import Severity
from ..expected import Expected
from ..model import Finding, NodeView, differs
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
                yield from _registered(NodeView(expected, pool, node, observed.state))
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
                _hint(found.id if found is not None else None),
            )


def _registered(view: NodeView) -> Iterator[Finding]:
    registration = view.expected.backend.registration(view)
    model = view.pool.pool.gpu
    others = [d for d in (registration.devices or ()) if d.catalog_id != model.id] if registration else []
    if registration is None or not others:
        return
    types = sorted({d.model for d in others})
    ids = sorted({d.catalog_id or "not in the catalog" for d in others})
    subject = f"GPU type in {registration.source}"
    yield Finding(
        ID, Severity.ERROR, subject, differs(subject, model.name, ", ".join(types)) + f" ({', '.join(ids)}, not {model.id})",
        view.pool.name, view.node.name, model.name, types, _hint(next((d.catalog_id for d in others if d.catalog_id), None)),
    )  # fmt: skip


def _hint(found: str | None) -> str:
    return (
        "the pool's nodeSelector selects a node of another GPU model: narrow the selector, or set the pool's gpu to "
        f"{found or 'the model the node has'}"
    )
