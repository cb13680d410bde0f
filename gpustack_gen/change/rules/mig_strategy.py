"""``mig.strategy`` single <-> mixed: every MIG device changes resource name, and the operands roll.

The Operator passes ``MIG_STRATEGY`` to the device plugin, GFD, the MPS daemon and the validator
(gpu-operator ``controllers/object_controls.go`` ``applyMIGConfiguration``), so their DaemonSets roll on
every node; MIG devices move between ``nvidia.com/gpu`` and ``nvidia.com/mig-<profile>``. Pods asking
the old names must be gone before the rename (invariant 10 of the rollout notes): drain the MIG pools,
upgrade, redeploy the workloads with their new limits, uncordon.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import DEVICE_PLUGIN_DAEMONSET, GFD_DAEMONSET
from ...model.backends.gpu_operator import NAME
from ...shell import all_of
from .. import commands, steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome, Step

# applyMIGConfiguration writes it into the device plugin's and GFD's templates (gpu-operator@v25.3.3
# controllers/object_controls.go:2466-2477, called at :1435 and :958): waiting for the new value keeps rollout
# status from passing on the templates the Operator has not re-rendered yet.
MIG_STRATEGY_ENV = "MIG_STRATEGY"

ID = "mig-strategy"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    old, new = change.both
    if old.mig_strategy == new.mig_strategy:
        return
    mig_pools = [after for before, after in change.common_pools if before.mig_devices() and after.mig_devices()]
    drained = steps.pools_with_nodes(mig_pools)
    plan: list[Step] = [
        steps.apply_configmaps(
            change,
            new,
            "the device-plugin configs carry the new flags.migStrategy (the Operator's MIG_STRATEGY wins)",
            ID,
        ),
    ]
    plan += [
        step
        for pool in drained
        for step in steps.drain(
            pool,
            "pods asking for the old resource names must be gone before the names change (their replacements "
            "would ask for names no node advertises any more)",
            ID,
        )
    ]
    plan.append(steps.operator(change, f"mig.strategy {old.mig_strategy} -> {new.mig_strategy}", ID))
    plan.append(
        steps.rollout_wait(
            new,
            (DEVICE_PLUGIN_DAEMONSET, GFD_DAEMONSET),
            "the device plugin and GFD roll on every GPU node with the new MIG_STRATEGY",
            ID,
            all_of(
                *(
                    commands.wait_template_env(new, daemonset, MIG_STRATEGY_ENV, new.mig_strategy)
                    for daemonset in (DEVICE_PLUGIN_DAEMONSET, GFD_DAEMONSET)
                )
            ),
        )
    )
    plan += [steps.allocatable(new, pool, ID) for pool in drained]
    plan += [steps.uncordon(pool, ID) for pool in drained]
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"mig.strategy {old.mig_strategy} -> {new.mig_strategy}: MIG devices change resource name (nvidia.com/gpu "
            "under single, nvidia.com/mig-<profile> under mixed) and the device plugin, GFD, MPS daemon and "
            "validator roll on every GPU node; drain the MIG pools and redeploy their workloads",
            None,
            tuple(pool.name for pool in mig_pools),
        ),
        tuple(plan),
    )
