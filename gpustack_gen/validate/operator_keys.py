"""Which GPU Operator values and ClusterPolicy keys gpustack-gen may write, per chart version.

The version-gate table: a key path, the chart version it appeared in, and the version from which it
must no longer be written (removed, or a no-op). Conformance tests hold it against each version's
``values.yaml`` and ClusterPolicy CRD.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..versions import VersionTuple, parse_version


class Versioned(Protocol):
    """A chart version of a table (GPU Operator, HAMi): what a gate compares."""

    @property
    def key(self) -> VersionTuple: ...


@dataclass(frozen=True, slots=True)
class KeyGate:
    path: str
    since: str = "v23.9.0"
    until: str | None = None  # first version where it is not written

    def allows(self, release: Versioned) -> bool:
        since = parse_version(self.since)
        until = parse_version(self.until) if self.until else None
        assert since is not None
        return release.key >= since and (until is None or release.key < until)


def gated_values_schema(
    gates: Sequence[KeyGate], schemas: Mapping[str, Mapping[str, Any]], release: Versioned
) -> dict[str, Any]:
    """The strict JSON Schema of the values a backend chart's gate table allows for ``release``: each allowed key
    path with its value's schema (``schemas``), every object closed to other keys."""
    root: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {}}
    for gate in gates:
        if not gate.allows(release):
            continue
        node = root
        *parents, leaf = gate.path.split(".")
        for part in parents:
            node = node["properties"].setdefault(
                part, {"type": "object", "additionalProperties": False, "properties": {}}
            )
        node["properties"][leaf] = dict(schemas[gate.path])
    return root


_SHARED_KEYS = (
    KeyGate("cdi.enabled"),
    KeyGate("cdi.default", until="v25.10.0"),
    KeyGate("cdi.nriPluginEnabled", since="v26.3.0"),
    KeyGate("driver.enabled"),
    KeyGate("driver.version"),
    KeyGate("toolkit.enabled"),
    KeyGate("mig.strategy"),
    KeyGate("driver.manager.env"),
    KeyGate("driver.upgradePolicy.autoUpgrade"),
    KeyGate("driver.upgradePolicy.maxParallelUpgrades"),
    KeyGate("devicePlugin.enabled"),
    KeyGate("devicePlugin.config.name"),
    KeyGate("devicePlugin.config.default"),
    KeyGate("migManager.config.name"),
    KeyGate("migManager.config.default"),
    KeyGate("daemonsets.tolerations"),
)

# The chart's gpuPodDeletion is the ClusterPolicy's podDeletion (gpu-operator templates/clusterpolicy.yaml).
VALUES_KEYS: tuple[KeyGate, ...] = (
    *_SHARED_KEYS,
    KeyGate("driver.upgradePolicy.gpuPodDeletion.deleteEmptyDir"),
    KeyGate("driver.upgradePolicy.gpuPodDeletion.force"),
)
CLUSTERPOLICY_SPEC_KEYS: tuple[KeyGate, ...] = (
    *_SHARED_KEYS,
    KeyGate("devicePlugin.mps.root", since="v24.3.0"),
    KeyGate("driver.upgradePolicy.podDeletion.deleteEmptyDir"),
    KeyGate("driver.upgradePolicy.podDeletion.force"),
)
