"""HAMi's chart or values change on a HAMi cluster: helm upgrade, restart its device plugin and scheduler.

Helm rolls the device plugin when the scheduler's device config changes (its DaemonSet carries a checksum
of it: charts/hami/templates/device-plugin/daemonsetnvidia.yaml), but not for the per-node config
(``hami-device-plugin`` ConfigMap), and HAMi's docs ask to restart the components after any config edit
(web docs/userguide/configure.md): the plan restarts both and waits. Running pods keep their vGPUs; a
lower split or memory scaling leaves nodes over-committed until they end. ``mig.strategy`` on a HAMi
cluster only changes what GPU Feature Discovery labels: an Operator upgrade.
"""

from __future__ import annotations

from collections.abc import Iterator

from ....compile.backends import backend_of
from ....compile.operator import operand_daemonsets
from ....model.backends.hami import NAME, node_names, node_settings
from ... import commands, steps
from ...context import ClusterChange
from ...model import Action, Finding, Level, Outcome, Phase, Step
from ...namespace_move import namespace_move

ID = "hami-settings"
LEVEL = Level.RESTART


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    old, new = change.both
    if old.mig_strategy != new.mig_strategy:
        yield Outcome(
            Finding(ID, LEVEL, f"mig.strategy {old.mig_strategy} -> {new.mig_strategy}: GFD relabels the GPU nodes"),
            (
                steps.operator(change, f"mig.strategy {old.mig_strategy} -> {new.mig_strategy}", ID),
                steps.rollout_wait(new, operand_daemonsets(new), "GPU Feature Discovery rolls on every GPU node", ID),
            ),
        )
    (before,) = backend_of(old).releases(old)
    (after,) = backend_of(new).releases(new)
    if before.namespace != after.namespace:
        yield namespace_move(
            ID,
            "HAMi",
            "hami.namespace",
            old,
            before.namespace,
            after.namespace,
            before.uninstall_command(),
            ", whose device plugin would run on the same nodes",
        )
        return
    if (before.version, before.values) == (after.version, after.values):
        return
    what = []
    if before.version != after.version:
        what.append(f"chart {before.version} -> {after.version}")
    changed = [
        (previous, pool)
        for previous, pool in change.common_pools
        if node_settings(previous) != node_settings(pool) or node_names(previous) != node_names(pool)
    ]
    what += [f"{pool.name}: {node_settings(p).describe()} -> {node_settings(pool).describe()}" for p, pool in changed]
    if not what:
        what.append("values")
    shrink = [
        pool.name
        for previous, pool in changed
        if node_settings(pool).split < node_settings(previous).split
        or node_settings(pool).memory_scaling < node_settings(previous).memory_scaling
    ]
    note = (
        f"; pool{'s' if len(shrink) > 1 else ''} {', '.join(shrink)} shrink: running pods keep their vGPUs, so the "
        "nodes stay over-committed until those pods end"
        if shrink
        else ""
    )
    plan: list[Step] = [
        steps.release(change, new, after, f"HAMi's values change ({'; '.join(what)})", ID),
        Step(
            Action.RESTART_DEVICE_PLUGIN,
            commands.restart_release(after),
            commands.release_rollout(after),
            "HAMi's device plugin reads its per-node config, and the scheduler its device config, when they start: "
            "restart them (a rolling restart, one node at a time)",
            None,
            ID,
            Phase.RESTART,
        ),
    ]
    plan += [
        steps.allocatable(new, pool, ID)
        for previous, pool in changed
        if pool.nodes > 0 and old.allocatable_per_node(previous) != new.allocatable_per_node(pool)
    ]
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"HAMi changes ({'; '.join(what)}): helm upgrade, then its device plugin and scheduler restart{note}",
            None,
            tuple(pool.name for _, pool in changed),
        ),
        tuple(plan),
    )
