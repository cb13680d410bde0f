"""A cluster moves between the GPU Operator's device plugin and HAMi (either way).

Both plugins advertise ``nvidia.com/gpu`` and must never run on a node at the same time (HAMi web
docs/troubleshooting/troubleshooting.md, docs/faq/faq.md): one is gone before the other starts. HAMi's
scheduler does not see the GPU pods the default scheduler placed, so the pools are drained first and the
workloads come back with their new limits (``workload-values``).

To HAMi: the Operator's device plugin turns off (``devicePlugin.enabled: false``) and its DaemonSet goes,
HAMi is installed, the nodes get ``gpu=on`` (the node selector of HAMi's device plugin) and lose the
device-plugin label; MIG-capable nodes are set to ``all-disabled``; the ConfigMaps nothing reads any more
are deleted. Back: the ConfigMaps and the device-plugin label come first, HAMi is uninstalled, then the
Operator's device plugin turns on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ...compile.artifact import DEVICE_PLUGIN_DAEMONSET, DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL
from ...compile.backends import backend_of
from ...compile.operator import operand_daemonsets
from ...model.backends import gpu_operator, hami
from ...model.fleet import Pool
from .. import commands, steps
from ..context import ClusterChange
from ..model import Action, Finding, Level, Outcome, Phase, Step

ID = "backend-switch"
LEVEL = Level.DISRUPTIVE
_PAIR = {gpu_operator.NAME, hami.NAME}


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    old, new = change.both
    if old.backend == new.backend or {old.backend, new.backend} != _PAIR:
        return
    pools = steps.pools_with_nodes([after for _, after in change.common_pools])
    plan = [
        step
        for pool in pools
        for step in steps.drain(pool, "GPU pods placed for one device plugin must not outlive it", ID)
    ]
    plan += _to_hami(change, pools) if new.backend == hami.NAME else _to_gpu_operator(change, pools)
    plan += [steps.allocatable(new, pool, ID) for pool in pools]
    plan += [steps.uncordon(pool, ID) for pool in pools]
    before = "; ".join(f"{p.name}: {p.sharing.describe()}" for p in old.pools) or "no pools"
    after = "; ".join(f"{p.name}: {p.sharing.describe()}" for p in new.pools) or "no pools"
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"backend {old.backend} -> {new.backend} ({before} -> {after}): the GPU pools are drained while one "
            "device plugin hands the GPUs to the other (they never run on a node together), and the workloads "
            "are redeployed with their new limits",
            None,
            tuple(pool.name for pool in new.pools),
        ),
        tuple(plan),
    )


def _to_hami(change: ClusterChange, pools: list[Pool]) -> list[Step]:
    old, new = change.both
    (release,) = backend_of(new).releases(new)
    plan = [
        steps.operator(change, "turn the GPU Operator's device plugin off (devicePlugin.enabled: false)", ID),
        Step(
            Action.WAIT,
            commands.wait_daemonset_deleted(new, DEVICE_PLUGIN_DAEMONSET),
            commands.wait_cluster_policy_ready(),
            "the Operator deletes its device plugin; HAMi's must not start on a node before it is gone",
            None,
            ID,
            Phase.OPERATOR_WAIT,
        ),
        # Once the Operator's plugin is gone; HAMi's starts on a node when the node gets gpu=on.
        replace(
            steps.release(change, new, release, f"install HAMi (chart {release.chart} {release.version})", ID),
            phase=Phase.OPERATOR_WAIT,
        ),
    ]
    for pool in pools:
        labels: dict[str, str | None] = {DEVICE_PLUGIN_LABEL: None}
        labels.update({k: v for k, v in change.new_labels[pool.name].items() if k != MIG_CONFIG_LABEL})
        mig = _mig_off(change, pool)
        plan += mig
        # Right before the label step, not earlier: a node born with gpu=on before HAMi runs would get no plugin.
        plan.append(steps.node_group(change, pool, ID, Phase.SETTLE if mig else Phase.LABELS))
        plan.append(
            steps.label_nodes(
                pool,
                labels,
                "HAMi's device plugin runs on nodes labelled gpu=on"
                + (", once MIG is off" if mig else "")
                + "; the device-plugin label is no longer read",
                ID,
                Phase.SETTLE if mig else Phase.LABELS,
            )
        )
    unused = [
        document["metadata"]["name"] for artifact in backend_of(old).objects(old) for document in artifact.documents
    ]
    if unused:
        plan.append(
            Step(
                Action.PRUNE,
                commands.delete_configmaps(new, unused),
                None,
                "the GPU Operator no longer names these ConfigMaps, and nothing renders them any more",
                None,
                ID,
                Phase.SETTLE,
            )
        )
    return plan


def _to_gpu_operator(change: ClusterChange, pools: list[Pool]) -> list[Step]:
    old, new = change.both
    (release,) = backend_of(old).releases(old)
    plan = [
        steps.apply_configmaps(change, new, "create the device-plugin ConfigMap the Operator will read", ID),
    ]
    for pool in pools:
        labels: dict[str, str | None] = {hami.NODE_LABEL: None}
        labels.update({k: v for k, v in change.new_labels[pool.name].items() if k != MIG_CONFIG_LABEL})
        plan.append(steps.node_group(change, pool, ID, Phase.DRAIN))  # with the labels, once HAMi's are not needed
        plan.append(
            steps.label_nodes(
                pool,
                labels,
                "once the pool is drained: the device-plugin label before the Operator's plugin starts; without "
                "gpu=on HAMi's plugin leaves the node",
                ID,
                Phase.DRAIN,
            )
        )
    plan += [
        Step(
            Action.BACKEND,
            release.uninstall_command(),
            commands.release_gone(release),
            f"uninstall HAMi before the GPU Operator's device plugin starts: this must list nothing "
            f"(its webhook and scheduler go too; chart {release.chart} {release.version})",
            None,
            ID,
            Phase.OPERATOR,
        ),
        steps.operator(change, "turn the GPU Operator's device plugin on, with the device-plugin ConfigMap", ID),
        steps.rollout_wait(
            new, operand_daemonsets(new), "the Operator deploys its device plugin and GFD on every GPU node", ID
        ),
    ]
    for pool in pools:
        plan += _mig_off(change, pool)
    return plan


def _mig_off(change: ClusterChange, pool: Pool) -> list[Step]:
    """A MIG-capable pool whose ``nvidia.com/mig.config`` changes: relabel with the old state cleared, and wait."""
    before = change.old_labels.get(pool.name, {}).get(MIG_CONFIG_LABEL)
    after = change.new_labels[pool.name].get(MIG_CONFIG_LABEL)
    if after is None or before == after:
        return []
    return [
        steps.relabel_mig(
            pool,
            after,
            f"clear the old state and set {MIG_CONFIG_LABEL}={after}: the mig-manager acts only on a changed value",
            ID,
        ),
        steps.mig_success(pool, ID),
    ]
