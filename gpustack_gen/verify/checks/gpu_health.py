"""A GPU a node registers as unhealthy (HAMi: ``health`` false or absent in ``hami.io/node-nvidia-register``; the
DRA driver: a device with a NoSchedule or NoExecute taint in its ResourceSlice).

Applies where the backend keeps a registration of its own. An unhealthy GPU's shares are not in the node's
allocatable and its backend's scheduler places no pod on it, so the pool is short of it until it recovers.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from ..expected import Expected
from ..model import Finding
from ..observed import Observed, registered_nodes
from ..state import REGISTRATION

ID = "gpu-health"
NEEDS = ("nodes", REGISTRATION)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    for pool, node, registration in registered_nodes(expected, observed):
        for device in registration.devices or ():
            if device.healthy:
                continue
            subject = f"{device.name or f'GPU {device.index}'} ({device.id})"
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject} in {registration.source}: unhealthy", pool.name, node.name,
                "healthy", "unhealthy", registration.unhealthy_hint,
            )  # fmt: skip
