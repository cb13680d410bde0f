"""The checks of ``verify``, one module each, in report order; each module has ``ID``, ``NEEDS`` and ``findings``.

A check compares what the fleet says (:class:`~gpustack_gen.verify.expected.Expected`) with what the cluster
shows (:class:`~gpustack_gen.verify.observed.Observed`) and yields
:class:`~gpustack_gen.verify.model.Finding` objects. ``NEEDS`` names the parts of the cluster state it reads
(:class:`~gpustack_gen.verify.state.StatePart`); a check whose parts were not read is skipped, and the report
says so, and one that reads a part the cluster does not have (``release`` on a cluster whose backend installs
no release, ``dra`` on one that renders no DRA objects) does not apply.
:data:`~gpustack_gen.verify.state.REGISTRATION` in ``NEEDS`` stands for the parts the backend keeps its
registration in (none beyond the nodes, or the DRA driver's ResourceSlices). Each module's docstring says what
it covers and cites the upstream behaviour it relies on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from ..expected import Expected
from ..model import Finding
from ..observed import Observed
from . import (
    capacity_mismatch,
    clusterpolicy,
    configmap_drift,
    dra_objects,
    gpu_health,
    gpu_not_advertised,
    label_mismatch,
    mig_state,
    node_registration,
    operator_pods,
    pool_size,
    product_mismatch,
    release_pods,
    unmatched_gpu_node,
)


class Check(Protocol):
    ID: str

    @property
    def NEEDS(self) -> tuple[str, ...]: ...  # read-only, so that a module's ("nodes",) satisfies it

    def findings(self, expected: Expected, observed: Observed) -> Iterator[Finding]: ...


# Each module is typed as the protocol itself, so mypy checks its names and signatures against it.
CHECKS: tuple[Check, ...] = (
    pool_size,
    unmatched_gpu_node,
    gpu_not_advertised,
    capacity_mismatch,
    node_registration,
    gpu_health,
    label_mismatch,
    product_mismatch,
    mig_state,
    clusterpolicy,
    configmap_drift,
    dra_objects,
    operator_pods,
    release_pods,
)
CHECK_IDS: tuple[str, ...] = tuple(check.ID for check in CHECKS)


def get(check_id: str) -> Check:
    for check in CHECKS:
        if check_id == check.ID:
            return check
    raise KeyError(f"no such check: {check_id!r}")
