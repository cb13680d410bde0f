"""The NVIDIA DRA driver's rules for its opaque device configs (``resource.nvidia.com/v1beta1``), as upstream applies them.

A ``GpuConfig`` or ``MigDeviceConfig`` is decoded strictly (an unknown field is an error: ``api.go``
``StrictDecoder``), then ``Normalize()``-d and ``Validate()``-d by the admission webhook and again by the
kubelet plugin when it prepares a device (``validate.go``, ``gpuconfig.go``, ``migconfig.go``). At prepare
the plugin also refuses a TimeSlicing config that carries ``mpsConfig``, an MPS config that carries
``timeSlicingConfig`` (``sharing.go`` ``GetTimeSlicingConfig``/``GetMpsConfig``), and a pinned memory
limit under 1 MiB (``sharing.go`` ``Normalize``). The messages are v0.4.1's.

The fleet's checks use the single-value rules (located at the fleet's lines), and the artifact
validation runs :func:`config_problems` on every config gpustack-gen writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ....versions.dra import GATE_MPS, GATE_TIME_SLICING
from ...names import MAX_QUANTITY_EXPONENT, MAX_QUANTITY_LENGTH

API_VERSION = "resource.nvidia.com/v1beta1"
DRIVER = "gpu.nvidia.com"
TIME_SLICING = "TimeSlicing"
MPS = "MPS"
STRATEGY_GATES = {TIME_SLICING: GATE_TIME_SLICING, MPS: GATE_MPS}
INTERVALS = ("Default", "Short", "Medium", "Long")
GPU_CONFIG = "GpuConfig"
MIG_DEVICE_CONFIG = "MigDeviceConfig"

# The JSON fields of each type (api/nvidia.com/resource/v1beta1: GpuSharing, MigDeviceSharing, TimeSlicingConfig,
# MpsConfig); the strict decoder refuses any other.
_TOP_FIELDS = frozenset({"apiVersion", "kind", "sharing"})
_SHARING_FIELDS = {
    GPU_CONFIG: frozenset({"strategy", "timeSlicingConfig", "mpsConfig"}),
    MIG_DEVICE_CONFIG: frozenset({"strategy", "mpsConfig"}),
}
_TIME_SLICING_FIELDS = frozenset({"interval"})
_MPS_FIELDS = frozenset(
    {"defaultActiveThreadPercentage", "defaultPinnedDeviceMemoryLimit", "defaultPerDevicePinnedMemoryLimit"}
)

_QUANTITY = re.compile(r"^[+]?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[KMGTPE]i|[numkKMGTPE])?$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1)}
_DECIMAL.update({"k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12")})
_DECIMAL.update({"P": Decimal("1e15"), "E": Decimal("1e18")})
MIB = 2**20


def strategy_problem(strategy: object, gates: frozenset[str]) -> str | None:
    """Why the driver refuses a sharing strategy with these feature gates on (``validateSharingStrategy``)."""
    if strategy in STRATEGY_GATES:
        gate = STRATEGY_GATES[str(strategy)]
        if gate in gates:
            return None
        return f'"{strategy}" is selected as the GPU sharing strategy, but the "{gate}" feature gate is not enabled'
    return f"unknown GPU sharing strategy: {strategy}, supported GPU sharing strategies: {TIME_SLICING}, {MPS}"


def interval_problem(interval: object) -> str | None:
    """Why the driver refuses a time-slice interval (``TimeSliceInterval.Validate``)."""
    if interval in INTERVALS:
        return None
    return f"unknown time-slice interval: {interval}, supported time-slice intervals: {', '.join(INTERVALS)}"


def thread_percentage_problem(value: object) -> str | None:
    """Why the driver refuses ``defaultActiveThreadPercentage`` (``MpsConfig.Validate``)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return f"active thread percentage must be an integer, got {value!r}"
    if value < 0:
        return "active thread percentage must not be negative"
    if value > 100:
        return "active thread percentage must not be greater than 100"
    return None


def quantity_bytes(text: object) -> Decimal | None:
    """A Kubernetes quantity's value (``"10Gi"`` -> 10737418240); None when it is not one."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text) if text.bit_length() < 256 else ""  # str() of a huge int raises; no memory is that large
    match = _QUANTITY.fullmatch(text) if isinstance(text, str) and len(text) <= MAX_QUANTITY_LENGTH else None
    if match is None:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    try:
        value = Decimal(number)
        if suffix in _BINARY:
            return value * _BINARY[suffix]
        if suffix[:1] in ("e", "E") and suffix[1:] not in ("", "i"):  # an exponent; "E" is exa, "Ei" exbi
            if abs(int(suffix[1:])) > MAX_QUANTITY_EXPONENT:
                return None
            return value * Decimal(10) ** int(suffix[1:])
        return value * _DECIMAL[suffix]
    except (ArithmeticError, KeyError):  # decimal's InvalidOperation and Overflow
        return None


def pinned_limit_problem(value: object) -> str | None:
    """Why the driver refuses a pinned device memory limit: not a quantity, or under 1 MiB once floored to MiB."""
    amount = quantity_bytes(value)
    if amount is None:
        return f"quantities must match the regular expression of a Kubernetes quantity, got {value!r}"
    if int(amount) // MIB <= 0:
        return f"invalid limit: default value set too low: {value}"
    return None


def config_problems(parameters: Mapping[str, Any], gates: frozenset[str]) -> list[tuple[str, str]]:
    """(path, message) for each reason the driver would refuse one opaque config; empty when it accepts it."""
    kind = parameters.get("kind")
    if parameters.get("apiVersion") != API_VERSION or kind not in _SHARING_FIELDS:
        return [("", f"not a {API_VERSION} {GPU_CONFIG} or {MIG_DEVICE_CONFIG}: {parameters.get('apiVersion')} {kind}")]
    problems = _unknown("", parameters, _TOP_FIELDS)
    sharing = parameters.get("sharing")
    if sharing is None:
        return problems
    if not isinstance(sharing, Mapping):
        return [*problems, ("sharing", "sharing must be an object")]
    problems += _unknown("sharing.", sharing, _SHARING_FIELDS[kind])
    strategy = sharing.get("strategy")
    wrong = strategy_problem(strategy, gates)
    if wrong is not None:
        return [*problems, ("sharing.strategy", wrong)]
    time_slicing, mps = sharing.get("timeSlicingConfig"), sharing.get("mpsConfig")
    if strategy == TIME_SLICING and mps is not None:
        problems.append(("sharing.mpsConfig", f"cannot use MpsConfig with the '{TIME_SLICING}' strategy"))
    if strategy == MPS and time_slicing is not None:
        problems.append(("sharing.timeSlicingConfig", f"cannot use TimeSlicingConfig with the '{MPS}' strategy"))
    if isinstance(time_slicing, Mapping) and kind == GPU_CONFIG:
        problems += _unknown("sharing.timeSlicingConfig.", time_slicing, _TIME_SLICING_FIELDS)
        # An absent interval is set to Default by Normalize only when the whole timeSlicingConfig is absent.
        interval = interval_problem(time_slicing.get("interval"))
        if interval is not None:
            problems.append(("sharing.timeSlicingConfig.interval", interval))
    if isinstance(mps, Mapping):
        problems += _unknown("sharing.mpsConfig.", mps, _MPS_FIELDS)
        if "defaultActiveThreadPercentage" in mps:
            percentage = thread_percentage_problem(mps["defaultActiveThreadPercentage"])
            if percentage is not None:
                problems.append(("sharing.mpsConfig.defaultActiveThreadPercentage", percentage))
        if "defaultPinnedDeviceMemoryLimit" in mps:
            limit = pinned_limit_problem(mps["defaultPinnedDeviceMemoryLimit"])
            if limit is not None:
                problems.append(("sharing.mpsConfig.defaultPinnedDeviceMemoryLimit", limit))
    return problems


def _unknown(prefix: str, value: Mapping[str, Any], known: frozenset[str]) -> list[tuple[str, str]]:
    return [(f"{prefix}{key}", f'json: unknown field "{key}"') for key in value if key not in known]
