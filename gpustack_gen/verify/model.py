"""What ``verify`` finds: plain, immutable data."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import Severity

if TYPE_CHECKING:
    from ..k8s_state import Node
    from .expected import Expected, PoolExpectation
    from .state import ClusterState


@dataclass(frozen=True)
class Finding:
    """One way the cluster differs from the fleet: what, where, expected and actual values, and why and how to fix it."""

    check: str  # the check's stable id, e.g. "capacity-mismatch"
    severity: Severity
    subject: str  # what differs: "nvidia.com/gpu", "label nvidia.com/mig.config", "spec.cdi.enabled"
    message: str  # one line: the subject and how it differs
    pool: str | None = None
    node: str | None = None
    expected: Any = None
    actual: Any = None
    hint: str = ""  # the likely causes, most likely first, and the fix

    def as_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity.value,
            "pool": self.pool,
            "node": self.node,
            "subject": self.subject,
            "message": self.message,
            "expected": self.expected,
            "actual": self.actual,
            "hint": self.hint or None,
        }


@dataclass(frozen=True)
class Fallback:
    """What a node gets without one of its pool's labels, and whether that is what the pool needs."""

    severity: Severity  # warning: the node gets the pool's config anyway; error: it gets something else
    text: str


@dataclass(frozen=True)
class RegisteredDevice:
    """One GPU (or MIG device) as a node registered it with its backend's scheduler (HAMi: an entry of the node
    annotation; the DRA driver: a device of its ResourceSlices)."""

    id: str  # the GPU's (or MIG device's) UUID
    index: int
    resources: dict[str, int]  # resource -> what the GPU registers of it: vGPU slots, MiB of memory, cores
    model: str  # the GPU type as registered ("NVIDIA-Tesla T4")
    catalog_id: str | None  # the catalog model that type names; None when the catalog does not know it
    mode: str | None  # how the backend shares it (HAMi: hami-core, or mig for dynamic MIG; DRA: gpu, mig); None: absent
    healthy: bool
    name: str | None = None  # how the backend names the device (a DRA device: gpu-0-mig-1g5gb-19-0); None: by index


@dataclass(frozen=True)
class RegistrationIssue:
    """Why a node's registration does not serve its pool: what is wrong, the values compared, and the fix."""

    message: str  # "absent", "GPU mode: expected hami-core, actual mig"
    expected: Any
    actual: Any
    hint: str


@dataclass(frozen=True)
class Registration:
    """What a node registered with its backend's scheduler beyond its allocatable, and whether it serves the pool."""

    source: str  # where it is kept: "annotation hami.io/node-nvidia-register"
    devices: tuple[RegisteredDevice, ...] | None  # None: absent or unreadable
    issues: tuple[RegistrationIssue, ...] = ()
    shortfall: dict[str, tuple[float, str]] = field(default_factory=dict)  # resource -> how far under the
    # fleet's figure it may be and still match (a fraction), and why
    unhealthy_hint: str = ""  # why the backend marks a GPU unhealthy, and what to do

    def total(self, resource: str) -> int:
        """What the node registers of ``resource`` over all its GPUs (0 when nothing could be read)."""
        return sum(device.resources.get(resource, 0) for device in self.devices or ())

    def least(self, resource: str, expected: int) -> int:
        """The least of ``resource`` the node may register and still match ``expected``."""
        fraction, _ = self.shortfall.get(resource, (0.0, ""))
        return math.ceil(expected * (1 - fraction))


@dataclass(frozen=True)
class NodeView:
    """One node of a pool with everything a backend hook may weigh when it explains what the node shows."""

    expected: Expected
    pool: PoolExpectation
    node: Node
    state: ClusterState


def causes_hint(causes: tuple[str, ...] | list[str]) -> str:
    """``likely: A; or: B; or: C``: the causes, most likely first, in one line."""
    return "; ".join(f"{'likely' if index == 0 else 'or'}: {cause}" for index, cause in enumerate(causes))


def differs(subject: str, expected: Any, actual: Any) -> str:
    """``subject: expected 4, actual 0``, values as JSON where they are not plain words."""
    from ..formatting import format_value

    def text(value: Any) -> str:
        return "absent" if value is None else format_value(value)

    return f"{subject}: expected {text(expected)}, actual {text(actual)}"


def first_difference(want: Any, got: Any, path: str = "", *, defaults: bool = False) -> tuple[str, Any, Any] | None:
    """The first path (``sharing.timeSlicing.resources[0].replicas``) where two values differ, with both values;
    ``defaults``: keys only ``got`` has are defaults its reader filled in (an API server's), not differences."""
    if isinstance(want, dict) and isinstance(got, dict):
        keys = [*want, *(k for k in got if k not in want and not defaults)]
        for key in keys:
            found = first_difference(
                want.get(key), got.get(key), f"{path}.{key}" if path else str(key), defaults=defaults
            )
            if found is not None:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for index, (a, b) in enumerate(zip(want, got, strict=True)):
            found = first_difference(a, b, f"{path}[{index}]", defaults=defaults)
            if found is not None:
                return found
        return None
    return None if want == got else (path, want, got)
