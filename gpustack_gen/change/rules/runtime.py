"""CDI, NRI or toolkit settings change: the toolkit reconfigures the container runtime on every GPU node.

``containerRuntime`` alone changes no generated file: it describes the nodes (the Operator reads each
node's runtime from its status), so changing it is a node replacement done outside gpustack-gen.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import DEVICE_PLUGIN_DAEMONSET, TOOLKIT_DAEMONSET
from ...compile.operator import operand_daemonsets
from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "runtime"
LEVEL = Level.RESTART


def _flag(value: object) -> str:
    if value is None:
        return "unset"
    return str(value).lower() if isinstance(value, bool) else str(value)


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    old, new = change.both
    before, after = old.operator, new.operator
    changes = [
        f"{label} {_flag(a)} -> {_flag(b)}"
        for label, a, b in (
            ("cdi.enabled", before.cdi_enabled, after.cdi_enabled),
            ("cdi.default", before.cdi_default, after.cdi_default),
            ("cdi.nriPluginEnabled", before.nri_plugin_enabled, after.nri_plugin_enabled),
            ("toolkit.enabled", before.toolkit_enabled, after.toolkit_enabled),
        )
        if a != b and a is not None and b is not None  # a key one chart version lacks: operator-version
    ]
    if changes:
        # The Operator's device plugin takes its device-list strategy from the CDI settings; a backend that
        # turns it off (HAMi) has only the toolkit roll.
        plugin = DEVICE_PLUGIN_DAEMONSET in operand_daemonsets(new)
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"container runtime settings change ({'; '.join(changes)}): the toolkit reconfigures and restarts "
                "the container runtime on every GPU node"
                + (", and the device plugin rolls with the new device-list strategy" if plugin else ""),
                None,
                tuple(p.name for p in new.pools),
            ),
            (
                steps.operator(change, f"runtime settings change ({'; '.join(changes)})", ID),
                steps.rollout_wait(
                    new,
                    (TOOLKIT_DAEMONSET, *((DEVICE_PLUGIN_DAEMONSET,) if plugin else ())),
                    "the toolkit and the device plugin roll on every GPU node"
                    if plugin
                    else "the toolkit rolls on every GPU node",
                    ID,
                ),
            ),
        )
    if old.container_runtime != new.container_runtime:
        yield Outcome(
            Finding(
                ID,
                Level.NONE,
                f"containerRuntime {old.container_runtime} -> {new.container_runtime}: no generated file changes; the "
                "Operator reads each node's runtime from the node, so the toolkit configures the new runtime as "
                "nodes with it join (replacing the nodes is done outside gpustack-gen)",
            )
        )
