"""CDI, NRI or toolkit settings change: the toolkit reconfigures the container runtime on every GPU node.

What else rolls when ``cdi.enabled`` flips (gpu-operator ``controllers/object_controls.go`` of each tag,
../shared/research/real-world.md §8): the device plugin (its device-list strategy) and the MIG manager (its
``CDI_ENABLED``, on every runtime: v25.3.3 ``:1833-1838``, v25.10.1 ``:1928-1929``, v26.3.3 ``:2045-2046``)
everywhere; on CRI-O from v25.10 also every operand that calls
``setRuntimeClassName``, which on CRI-O sets the class only with CDI on (v25.10.1 ``:2571-2577``, v26.3.3
``:2755-2761``, v26.7.0 ``:2747-2753``): GFD, the device plugin, the MPS daemon, the DCGM exporter, the MIG
manager and the validator (DCGM too, where enabled). Turning CDI off deletes the ``nvidia-cdi`` and
``nvidia-legacy`` RuntimeClasses (v25.3.3 ``:4889-4898``, v25.10.1 ``:5091``, v26.3.3 ``:5292``, v26.7.0
``:5280``): a pod naming one does not start (kubernetes/api@v0.34.0 ``core/v1/types.go:4284``).

``containerRuntime`` alone changes no generated file: it describes the nodes (the Operator reads each
node's runtime from its status), so changing it is a node replacement done outside gpustack-gen.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import (
    DEVICE_PLUGIN_DAEMONSET,
    GFD_DAEMONSET,
    MIG_MANAGER_DAEMONSET,
    MPS_DAEMONSET,
    TOOLKIT_DAEMONSET,
)
from ...compile.operator import operand_daemonsets
from ...model.fleet import Cluster
from ...shell import Script, all_of
from .. import commands, steps
from ..commands import VALIDATOR_DAEMONSET
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

DCGM_EXPORTER_DAEMONSET = "daemonset/nvidia-dcgm-exporter"
RUNTIME_CLASSES_REMOVED = (
    "; turning CDI off deletes the nvidia-cdi and nvidia-legacy RuntimeClasses: pods naming one do not start "
    "(redeploy them without runtimeClassName first)"
)

ID = "runtime"
LEVEL = Level.RESTART


def _flag(value: object) -> str:
    if value is None:
        return "unset"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _cdi_rolls(change: ClusterChange, plugin: bool) -> tuple[str, ...]:
    """The operand DaemonSets a flip of cdi.enabled re-renders, beyond the toolkit, on the pinned version and
    runtime (see the module docstring)."""
    _, new = change.both
    release = new.operator.release
    rolled = [DEVICE_PLUGIN_DAEMONSET] if plugin else []
    if new.container_runtime == "cri-o" and release.at_least("v25.10.0"):
        rolled += [GFD_DAEMONSET, *([MPS_DAEMONSET] if plugin else []), DCGM_EXPORTER_DAEMONSET]
        rolled += [MIG_MANAGER_DAEMONSET, VALIDATOR_DAEMONSET]
    else:
        rolled.append(MIG_MANAGER_DAEMONSET)
    return tuple(rolled)


# What the Operator renders into the pod templates for cdi.enabled (gpu-operator controllers/object_controls.go):
# the toolkit's CDI_ENABLED=true with CDI on, absent with it off (v25.3.3 :149,1257-1258; v26.3.3 :1266,1315);
# the device plugin's DEVICE_LIST_STRATEGY, the asset's ``envvar`` with CDI off
# (assets/state-device-plugin/0500_daemonset.yaml:77-78), with it on ``envvar,cdi-annotations`` on v25.3.x
# (:1438-1440) and ``cdi-annotations,cdi-cri`` from v25.10 (v25.10.1 :1455-1457, v26.3.3 :1509-1511,1584-1585).
# One reconcile walks every state, the toolkit before the device plugin (controllers/clusterpolicy_controller.go
# :155-179, state_manager.go:794-796), so the device plugin's new template shows the toolkit's was written too;
# with CDI off that is the only one kubectl wait can see (it cannot wait for a variable to go).
CDI_ENABLED_ENV = "CDI_ENABLED"
DEVICE_LIST_STRATEGY_ENV = "DEVICE_LIST_STRATEGY"


def _device_list_strategy(cluster: Cluster) -> str:
    if not cluster.operator.cdi_enabled:
        return "envvar"
    return "cdi-annotations,cdi-cri" if cluster.operator.release.at_least("v25.10.0") else "envvar,cdi-annotations"


def _reconciled(cluster: Cluster, plugin: bool) -> Script | None:
    """Waits until the Operator has written the templates of the CDI change, so that rollout status cannot pass
    on the old ones; None where nothing it renders shows the change (CDI off without the Operator's plugin)."""
    waits = [commands.wait_template_env(cluster, TOOLKIT_DAEMONSET, CDI_ENABLED_ENV, "true")]
    waits = waits if cluster.operator.cdi_enabled else []
    if plugin:
        strategy = _device_list_strategy(cluster)
        waits.append(commands.wait_template_env(cluster, DEVICE_PLUGIN_DAEMONSET, DEVICE_LIST_STRATEGY_ENV, strategy))
    return all_of(*waits) if waits else None


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None or not change.operator_on_both():
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
        flipped = before.cdi_enabled != after.cdi_enabled
        rolled = _cdi_rolls(change, plugin) if flipped else ((DEVICE_PLUGIN_DAEMONSET,) if plugin else ())
        removed = RUNTIME_CLASSES_REMOVED if before.cdi_enabled and not after.cdi_enabled else ""
        names = ", ".join(daemonset.removeprefix("daemonset/") for daemonset in rolled)
        yield Outcome(
            Finding(
                ID,
                LEVEL,
                f"container runtime settings change ({'; '.join(changes)}): the toolkit reconfigures and restarts "
                "the container runtime on every GPU node"
                + (f", and {names} roll on {new.container_runtime}" if rolled else "")
                + removed,
                None,
                tuple(p.name for p in new.pools),
            ),
            (
                steps.operator(change, f"runtime settings change ({'; '.join(changes)})", ID),
                steps.rollout_wait(
                    new,
                    (TOOLKIT_DAEMONSET, *rolled),
                    f"the toolkit and {names} roll on every GPU node"
                    if rolled
                    else "the toolkit rolls on every GPU node",
                    ID,
                    _reconciled(new, plugin) if flipped else None,
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
