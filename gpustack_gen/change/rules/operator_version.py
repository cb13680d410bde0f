"""The GPU Operator chart version changes: helm upgrade to it; every operand DaemonSet rolls node by node.

The chart's pre-upgrade hook applies the new CRDs and needs ``--disable-openapi-validation``
(``operator.upgradeCRD`` in values.yaml). ``--reuse-values`` would keep the old chart's defaults and
operand images (helm ``pkg/action/upgrade.go`` ``reuseValues``), so the values are passed whole.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import MIG_MANAGER_DAEMONSET, MPS_DAEMONSET, TOOLKIT_DAEMONSET
from ...compile.operator import RELEASE_NAME, operand_daemonsets
from ...shell import helm
from .. import commands, steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome, Step
from ..namespace_move import namespace_move

ID = "operator-version"
LEVEL = Level.RESTART


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None or not change.operator_on_both():
        return
    old, new = change.both
    before, after = old.operator, new.operator
    if before.namespace != after.namespace:
        yield namespace_move(
            ID,
            "the GPU Operator",
            "operator.namespace",
            old,
            before.namespace,
            after.namespace,
            helm("uninstall", RELEASE_NAME, "-n", before.namespace),
            then=", then roll the cluster out as a new one",
        )
        return
    if before.release.version == after.release.version:
        return
    daemonsets = (*operand_daemonsets(new), commands.VALIDATOR_DAEMONSET)
    if change.new_names.uses_mps:
        daemonsets += (MPS_DAEMONSET,)
    if change.new_names.uses_mig_parted_config:
        daemonsets += (MIG_MANAGER_DAEMONSET,)
    if after.toolkit_enabled:
        daemonsets += (TOOLKIT_DAEMONSET,)
    plan: list[Step] = [
        steps.operator(change, f"GPU Operator {before.release.version} -> {after.release.version}", ID),
        steps.rollout_wait(
            new,
            (commands.OPERATOR_DEPLOYMENT, *daemonsets),
            "the new Operator rolls every operand DaemonSet, one node at a time; each MIG node's mig-manager "
            "re-asserts its labelled config (success, no change)",
            ID,
        ),
    ]
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"GPU Operator {before.release.version} -> {after.release.version} (device plugin "
            f"{before.release.device_plugin} -> {after.release.device_plugin}, mig-manager {before.release.mig_manager} "
            f"-> {after.release.mig_manager}): its operand DaemonSets roll on every GPU node",
        ),
        tuple(plan),
    )
