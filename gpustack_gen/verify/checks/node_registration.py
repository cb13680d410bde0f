"""A node's registration with its backend's scheduler does not serve its pool: absent, unreadable, in a form the
scheduler does not read, or in another mode (HAMi: the ``hami.io/node-nvidia-register`` annotation).

Applies where the backend keeps such a record (not to the GPU Operator's device plugin, whose record is
the node's allocatable). Nodes that advertise none of the pool's resources are ``gpu-not-advertised``'s
(or ``capacity-mismatch``'s when they show no GPU), whose hints say what the registration shows.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from ..expected import Expected
from ..model import Finding
from ..observed import Observed, registered_nodes
from ..state import REGISTRATION

ID = "node-registration"
NEEDS = ("nodes", REGISTRATION)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool, node, registration in registered_nodes(expected, observed):
        for issue in registration.issues:
            yield Finding(
                ID, Severity.ERROR, registration.source, f"{registration.source}: {issue.message}", pool.name,
                node.name, issue.expected, issue.actual, issue.hint,
            )  # fmt: skip
