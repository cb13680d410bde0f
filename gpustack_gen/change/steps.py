"""Step builders the rules share: each pairs a command with the check that shows it finished."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from ..compile.artifact import DEVICE_PLUGIN_LABEL, MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL
from ..compile.backends import backend_of
from ..compile.node_groups import PROVIDERS, node_group_file, template_of
from ..compile.node_labels import config_manager_handles_unlabelled_nodes
from ..compile.releases import ChartRelease
from ..model.fleet import Cluster, Drain, Pool, Workload
from ..shell import Script, all_of
from . import commands, delivery
from .context import ClusterChange
from .model import Action, Phase, Step


def apply_configmaps(change: ClusterChange, cluster: Cluster, reason: str, rule: str, pool: str | None = None) -> Step:
    return Step(
        Action.APPLY_CONFIGMAPS,
        commands.apply(cluster, change.paths),
        commands.diff(cluster, change.paths),
        reason + "; with Argo CD or Flux this step is the sync of the rendered folder",
        pool,
        rule,
        Phase.APPLY,
    )


def volume_sync(cluster: Cluster, verify: Script, rule: str, pool: str | None = None) -> Step:
    return Step(
        Action.WAIT,
        commands.sleep_for_volume_sync(),
        verify,
        "the kubelet copies a changed ConfigMap into the operand pods' volumes on its own schedule (about a "
        "minute); a config-manager or mig-manager that reads a key before it arrives fails",
        pool,
        rule,
        Phase.SYNC,
    )


def device_plugin_sync(cluster: Cluster, key: str, rule: str, pool: str | None = None) -> Step:
    return volume_sync(cluster, commands.show_device_plugin_config(cluster, key), rule, pool)


def mig_sync(cluster: Cluster, config: str, rule: str, pool: str | None = None) -> Step:
    return volume_sync(cluster, commands.assert_mig_config(cluster, config), rule, pool)


def operator(change: ClusterChange, reason: str, rule: str) -> Step:
    """The Operator's step; every rule that needs it builds the same command, so the plan runs it once (a new
    chart version adds the CRD upgrade's ``--disable-openapi-validation`` whichever rule asks)."""
    old, new = change.both
    if delivery.controller(new) is not None:
        return delivered(change, new, reason, rule)
    how = (
        "the merge patch of the installed ClusterPolicy (operator.install: external)"
        if new.operator.install == "external"
        else "helm upgrade with your values files first and gpustack-gen's last (never --reuse-values: across "
        "chart versions it keeps the old chart's defaults)"
    )
    return Step(
        Action.OPERATOR,
        commands.operator_update(
            new, change.paths, new_chart_version=old.operator.release.version != new.operator.release.version
        ),
        commands.wait_cluster_policy_ready(_ready_timeout(change)),
        f"{reason}: {how}",
        None,
        rule,
        Phase.OPERATOR,
    )


def _loaded_driver(cluster: Cluster) -> tuple[bool, str | None]:
    operator = cluster.operator
    return operator.driver_enabled, operator.driver_version or operator.release.driver


def _ready_timeout(change: ClusterChange) -> str:
    """The ClusterPolicy is notReady while a driver pod reloads (the driver DaemonSet has an unavailable pod), so
    where the driver changes, ready waits for the whole upgrade as the driver rule's wait does."""
    old, new = change.both
    if _loaded_driver(old) == _loaded_driver(new) or not new.operator.driver_enabled:
        return "20m"
    upgrade = commands.driver_upgrade_timeout(
        sum(pool.nodes for pool in new.pools), new.operator.driver_upgrade.max_parallel_upgrades
    )
    return f"{int(upgrade.removesuffix('m')) + 20}m"


def release(change: ClusterChange, cluster: Cluster, chart: ChartRelease, reason: str, rule: str) -> Step:
    """Install or upgrade a backend's own chart with its whole values file, after the Operator's step."""
    if delivery.controller(cluster) is not None:
        return delivered(change, cluster, reason, rule)
    return Step(
        Action.BACKEND,
        commands.release_upgrade(cluster, chart, change.paths),
        commands.release_rollout(chart),
        f"{reason}: helm upgrade --install with the rendered values (never --reuse-values)",
        None,
        rule,
        Phase.OPERATOR,
    )


UPGRADE_FAILED_HINT = (
    "a node in upgrade-failed stays cordoned and blocks the others (it counts as in progress): its GPU pods "
    "could not be deleted; delete them yourself (or allow it: driver.upgradePolicy deleteEmptyDir, force), then "
    "delete the node's nvidia-driver-daemonset pod to retry"
)


def delivered(change: ClusterChange, new: Cluster, reason: str, rule: str) -> Step:
    """The Operator's and the backend charts' step where Argo CD or Flux delivers them: one sync of the wrapper
    folder (the same command for every rule, so the plan runs it once)."""
    tool = {"argocd": "Argo CD", "flux": "Flux"}[delivery.controller(new) or ""]
    return Step(
        Action.OPERATOR,
        delivery.sync(new, change.paths),
        all_of(delivery.synced(new), commands.wait_cluster_policy_ready())
        if backend_of(new).INSTALLS_OPERATOR
        else delivery.synced(new),
        f"{reason}: apply the {tool} objects, which hand the new values to {tool}; it syncs them itself (never "
        "helm upgrade a release the controller owns). With the wrapper folder in Git, this step is its sync",
        None,
        rule,
        Phase.OPERATOR,
    )


def no_bare_gpu_pods(rule: str) -> Step:
    """Before a driver change: the upgrade controller cannot delete a GPU pod without a controller (its
    ``gpuPodDeletion.force`` is off), so that pod's node goes ``upgrade-failed`` and holds every other node."""
    return Step(
        Action.CHECK,
        commands.no_bare_gpu_pods(),
        commands.show_pod_controllers(),
        "nothing is upgraded yet: a GPU pod without a controller (a notebook started by hand) would send its node "
        "to upgrade-failed, which holds the upgrade of every other node, so this check fails while one runs: save "
        "its work and delete it, or set operator.driver.upgradePolicy.force in the fleet to let the upgrade delete it (it is not "
        "recreated)",
        None,
        rule,
        Phase.CHECK,
    )


def every_gpu_node_labelled(cluster: Cluster, why: str, rule: str) -> list[Step]:
    """``why`` restarts the device plugin on GPU nodes: on a plugin whose config-manager can block forever on a
    node without its config label, a check that every GPU node carries it."""
    plugin = cluster.operator.release.device_plugin
    if config_manager_handles_unlabelled_nodes(plugin):
        return []
    return [
        Step(
            Action.CHECK,
            commands.every_gpu_node_labelled(),
            commands.gpu_node_labels(),
            f"{why}, and the config-manager of device plugin {plugin} can block forever on a GPU node without "
            f"{DEVICE_PLUGIN_LABEL} (fixed in v0.18.2 and v0.19.0): this check fails while one lacks it: label such "
            "nodes into their pool first (node-labels.yaml has each pool's command)",
            None,
            rule,
            Phase.CHECK,
        )
    ]


def driver_wait(cluster: Cluster, version: str | None, reason: str, rule: str, phase: Phase) -> Step:
    """Every GPU node runs the driver: at ``version`` where the change loads a new one (GFD's label of the loaded
    driver cannot pass early), else the upgrade controller's state (a roll of the same version); the timeout
    grows with the nodes and ``maxParallelUpgrades``."""
    operator = cluster.operator
    timeout = commands.driver_upgrade_timeout(
        sum(pool.nodes for pool in cluster.pools), operator.driver_upgrade.max_parallel_upgrades
    )
    full = operator.release.gfd_labels_full_driver_version
    return Step(
        Action.WAIT,
        commands.wait_driver_upgraded(timeout)
        if version is None
        else commands.wait_driver_version(version, timeout, full_label=full),
        commands.show_driver_versions(full_label=full),
        f"{reason}; {UPGRADE_FAILED_HINT}",
        None,
        rule,
        phase,
    )


def rollout_wait(
    cluster: Cluster, daemonsets: tuple[str, ...], reason: str, rule: str, reconciled: Script | None = None
) -> Step:
    """``reconciled``: a wait that passes only once the Operator has re-rendered the changed template, run first so
    that ``rollout status`` cannot pass on the old one."""
    status = commands.rollout_status(cluster, *daemonsets)
    return Step(
        Action.WAIT,
        status if reconciled is None else all_of(reconciled, status),
        commands.wait_cluster_policy_ready(),
        reason,
        None,
        rule,
        Phase.OPERATOR_WAIT,
    )


def restart_device_plugin(change: ClusterChange, reason: str, rule: str, *, mps_daemon: bool) -> Step:
    """``mps_daemon``: a changed config is MPS's, so its control daemon restarts too (on every MPS node)."""
    _, new = change.both
    restart = commands.restart_device_plugin(new, mps_daemon)
    plugin = new.device_plugin_version
    if not config_manager_handles_unlabelled_nodes(plugin):
        restart = all_of(commands.every_gpu_node_labelled(), restart)
        reason += (
            f"; the config-manager of device plugin {plugin} can block forever on a GPU node without "
            f"{DEVICE_PLUGIN_LABEL} (fixed in v0.18.2 and v0.19.0), stopping the rolling restart there: the "
            "command restarts only once every GPU node carries it (label such nodes into their pool first)"
        )
    return Step(
        Action.RESTART_DEVICE_PLUGIN,
        restart,
        commands.device_plugin_rollout(new, mps_daemon),
        reason,
        None,
        rule,
        Phase.RESTART,
    )


def drain_preflight(pool: Pool, rule: str, phase: Phase, *, whole_pool: bool = False) -> Step:
    """Right before the pool's first drain (after the labels it selects by are set): the pods that would fail the
    drain, and the PodDisruptionBudgets that would refuse its evictions. Drained in batches, an evicted pod runs
    again on a node already done, so only a budget allowing no eviction now blocks; drained whole, no evicted pod
    runs again before the change is done, so a budget allowing fewer evictions than it has pods on the pool
    blocks too (its next eviction waits for a pod that cannot start)."""
    if pool.drain.delete_pods_without_controller:
        bare = "pods without a controller on them are deleted and not recreated (drain.deletePodsWithoutController)"
    else:
        bare = (
            "a pod without a controller (a notebook started by hand) fails this check: save its work and delete "
            "it, or set drain.deletePodsWithoutController on the pool to let the drain delete it"
        )
    if whole_pool:
        blocking = (
            "the whole pool is drained at once and its evicted pods cannot run again before the change is done, so "
            "a PodDisruptionBudget whose ALLOWED is below the number of its pods on the pool"
        )
        remedy = "relax or delete the budget first (more replicas do not help: their pods cannot start either)"
    else:
        blocking = "a PodDisruptionBudget with ALLOWED 0 whose pods run on the pool"
        remedy = "scale that workload up or relax the budget first"
    return Step(
        Action.CHECK,
        all_of(commands.drain_preflight(pool), commands.budgets_allow_drain(pool, whole_pool=whole_pool)),
        commands.show_pdbs(),
        f"nothing of the pool is cordoned yet: {bare}; {blocking} would hold the drain until its "
        f"{pool.drain.timeout_minutes}m timeout, so this check fails while one does: {remedy}",
        pool.name,
        rule,
        phase,
    )


def drain(pool: Pool, reason: str, rule: str, phase: Phase = Phase.DRAIN) -> list[Step]:
    """The pool's pre-flight and its drain (the whole pool at once: the change leaves no node of it usable)."""
    return [
        drain_preflight(pool, rule, phase, whole_pool=True),
        Step(Action.DRAIN, commands.drain(pool), commands.wait_cordoned(pool), reason, pool.name, rule, phase),
    ]


def uncordon(pool: Pool, rule: str) -> Step:
    return Step(
        Action.UNCORDON,
        commands.uncordon(pool),
        commands.list_nodes(pool),
        "the pool's nodes are ready again: let pods schedule on them",
        pool.name,
        rule,
        Phase.UNCORDON,
    )


def label_nodes(
    pool: Pool,
    labels: dict[str, str | None],
    reason: str,
    rule: str,
    phase: Phase = Phase.LABELS,
    *,
    labelled: Pool | None = None,
) -> Step:
    """The check waits for every label set (a removal only shows: an absent label has no value to wait for), on
    the nodes as ``labelled`` selects them afterwards (default ``pool``: a relabel of a selector's own label
    leaves nothing the old selector matches)."""
    after = labelled or pool
    waits = [commands.wait_label(after, label, value) for label, value in labels.items() if value is not None]
    verify = all_of(*waits) if waits else commands.list_nodes(after, *labels)
    return Step(Action.LABEL_NODES, commands.label_pool(pool, labels), verify, reason, pool.name, rule, phase)


def relabel_mig(pool: Pool, config: str, reason: str, rule: str) -> Step:
    return Step(
        Action.LABEL_NODES,
        commands.relabel_mig(pool, config),
        commands.list_nodes(pool, MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL),
        reason,
        pool.name,
        rule,
        Phase.LABELS,
    )


def mig_success(pool: Pool, rule: str) -> Step:
    return Step(
        Action.WAIT,
        commands.wait_mig_success(pool),
        commands.list_nodes(pool, MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL),
        "the mig-manager repartitions each node and sets nvidia.com/mig.config.state=success (failed: fix the "
        "cause, then delete the node's nvidia-mig-manager pod to retry; do not switch to another config)",
        pool.name,
        rule,
        Phase.SETTLE,
    )


def label_new_nodes(change: ClusterChange, pool: Pool, reason: str, rule: str) -> list[Step]:
    """New nodes of a pool get its labels; on MIG GPUs the MIG config is set as a relabel (which clears a state
    the Operator's default config left) and waited for."""
    labels: dict[str, str | None] = dict(change.new_labels[pool.name])
    config = labels.pop(MIG_CONFIG_LABEL, None)
    plan = [node_group(change, pool, rule)]
    plan += [label_nodes(pool, labels, reason, rule)] if labels else []
    if config is not None:
        plan += [
            relabel_mig(pool, config, f"set nvidia.com/mig.config={config} where the template did not", rule),
            mig_success(pool, rule),
        ]
    return plan


def batches(pool: Pool) -> list[tuple[Pool, int]]:
    """The pool cut into batches of ``drain.maxUnavailable`` nodes: each as the pool narrowed to the nodes marked
    with its batch label, and its size."""
    size = pool.drain.max_unavailable
    count = -(-pool.nodes // size)
    return [
        (
            dataclasses.replace(pool, node_selector=(*pool.node_selector, (commands.ROLLOUT_LABEL, f"batch-{n + 1}"))),
            min(size, pool.nodes - n * size),
        )
        for n in range(count)
    ]


def drain_batch(pool: Pool, batch: Pool, size: int, reason: str, rule: str, phase: Phase) -> list[Step]:
    """Mark the next ``size`` pending nodes with the batch's label, drain only them, and check that no pod but
    the DaemonSets' is left on them."""
    label = dict(batch.node_selector)[commands.ROLLOUT_LABEL]
    return [
        Step(
            Action.LABEL_NODES,
            commands.mark_batch(pool, label, size),
            commands.list_nodes(batch),
            f"take the next {size} pending node{'s' if size > 1 else ''} of the pool as {commands.ROLLOUT_LABEL}={label}: "
            "the batch's steps touch only them",
            pool.name,
            rule,
            phase,
        ),
        Step(
            Action.DRAIN,
            commands.drain(batch),
            all_of(*(commands.no_pods_left(batch, index) for index in range(size))),
            f"{reason}; {_batching(pool, size)}; the drain gives up after {pool.drain.timeout_minutes}m (see the "
            "pre-flight)",
            pool.name,
            rule,
            phase,
        ),
    ]


def _batching(pool: Pool, size: int) -> str:
    if size >= pool.nodes:
        return "the whole pool at once: its pods could not run on a node that is not changed yet"
    return (
        f"a batch at a time (drain.maxUnavailable {pool.drain.max_unavailable}), so evicted pods find room on the "
        "rest of the pool and a PodDisruptionBudget can be met"
    )


def node_group(
    change: ClusterChange,
    pool: Pool,
    rule: str,
    phase: Phase = Phase.NODE_GROUPS,
    *,
    during: Mapping[str, str] | None = None,
) -> Step:
    """The pool's node-group template gets the pool's new labels and taints before any node is relabelled or
    drained: an autoscaler gives a node it adds the template's labels of that moment (research node-groups.md
    §1-§5), so a node added mid-rollout would come up with the old ones. Where the template is an object in the
    cluster (a Karpenter NodePool, a Cluster API MachineDeployment) the check waits until it carries each label.
    ``during``: labels the template also carries until the change is done (a move's switches)."""
    new = change.new
    assert new is not None
    template = template_of(new, pool)
    wanted = {**template.labels, **(during or {})}
    labels = ", ".join(f"{key}={value}" for key, value in wanted.items()) or "none"
    if during:
        labels += f" ({', '.join(during)} only until this change is done)"
    taints = ", ".join(taint.text for taint in template.taints) or "none"
    path = node_group_file(new, pool)
    if path is None:
        where = f"in what creates pool {pool.name}'s nodes (autoscaler node group, cloud node pool)"
    else:
        where = f"merge {change.paths.rendered_file(new, path)} over node group {template.name} and apply it"
    resource = None if new.node_group_provider is None else PROVIDERS[new.node_group_provider].TEMPLATE_RESOURCE
    verify = None if resource is None or not wanted else commands.wait_template_labels(resource, template.name, wanted)
    checked = (
        "the check waits until the template carries them"
        if verify is not None
        else "no command can read the template back here: confirm it by hand"
    )
    return Step(
        Action.NODE_GROUP,
        None,
        verify,
        f"set the node-group template of pool {pool.name} before its nodes change, so a node an autoscaler adds "
        f"meanwhile is born right: labels {labels}; taints {taints}; {where}; {checked}",
        pool.name,
        rule,
        phase,
    )


def mark_pool(change: ClusterChange, pool: Pool, rule: str, phase: Phase) -> Step:
    return _rollout_mark(
        pool,
        commands.mark_pool(pool),
        f"mark the pool's nodes {commands.ROLLOUT_LABEL}={commands.PENDING}: the rollout changes these and no "
        "other; a node an autoscaler adds meanwhile comes from the node-group template (updated first)",
        rule,
        phase,
    )


def unmark(pool: Pool, rule: str, phase: Phase) -> Step:
    return _rollout_mark(
        pool,
        commands.unmark(pool),
        f"every node of the pool is done: remove the rollout mark {commands.ROLLOUT_LABEL}",
        rule,
        phase,
    )


def _rollout_mark(pool: Pool, command: Script, reason: str, rule: str, phase: Phase) -> Step:
    verify = commands.list_nodes(pool, commands.ROLLOUT_LABEL)
    return Step(Action.LABEL_NODES, command, verify, reason, pool.name, rule, phase)


def mig_relabel(
    change: ClusterChange, pool: Pool, config: str, rule: str, settle: Callable[[Pool], Step], *, batched: bool
) -> list[Step]:
    """A pool's nodes to MIG config ``config``: the config reaches the mig-manager before the label changes, the
    nodes are drained first (it does not drain, and fails on GPUs in use), the old state is cleared with the
    relabel, then ``settle`` (the resources the batch advertises once the mig-manager is done), and uncordon.

    ``batched``: the pool's pods can run on either layout, so it goes ``drain.maxUnavailable`` nodes at a time,
    each batch changed and uncordoned before the next; otherwise the pool is one batch."""
    _, new = change.both
    plan = [
        apply_configmaps(change, new, f"add MIG config {config} to the mig-parted ConfigMap", rule),
        node_group(change, pool, rule),
    ]
    if pool.nodes == 0:
        return plan
    phases = (Phase.LABELS,) * 4 if batched else (Phase.DRAIN, Phase.LABELS, Phase.SETTLE, Phase.UNCORDON)
    plan += [
        mig_sync(new, config, rule, pool.name),
        _labelled_for_restart(new, pool, drain_preflight(pool, rule, phases[0], whole_pool=not batched)),
        mark_pool(change, pool, rule, phases[0]),
    ]
    cuts = batches(pool) if batched else [(batches(dataclasses.replace(pool, drain=_whole(pool)))[0][0], pool.nodes)]
    for batch, size in cuts:
        plan += drain_batch(
            pool, batch, size, "the mig-manager does not drain, and fails on GPUs in use", rule, phases[0]
        )
        plan += [
            dataclasses.replace(
                relabel_mig(
                    batch,
                    config,
                    f"clear the old state and set nvidia.com/mig.config={config} on the marked nodes: the mig-manager "
                    "acts only on a changed value",
                    rule,
                ),
                phase=phases[1],
            ),
            dataclasses.replace(mig_success(batch, rule), phase=phases[2]),
            dataclasses.replace(settle(batch), phase=phases[2]),
            dataclasses.replace(uncordon(batch, rule), phase=phases[3]),
        ]
    plan.append(unmark(pool, rule, Phase.UNCORDON))
    return plan


def _labelled_for_restart(cluster: Cluster, pool: Pool, preflight: Step) -> Step:
    """The mig-manager restarts the device plugin on each node it repartitions: on a plugin whose config-manager
    can block forever on a node without its config label, the pre-flight also fails while a node of the pool
    lacks it."""
    plugin = cluster.operator.release.device_plugin
    if config_manager_handles_unlabelled_nodes(plugin) or preflight.command is None:
        return preflight
    return dataclasses.replace(
        preflight,
        command=all_of(commands.pool_nodes_labelled(pool), preflight.command),
        reason=f"{preflight.reason}; the mig-manager restarts the device plugin on each node it repartitions, and "
        f"the config-manager of device plugin {plugin} can block forever on a node without {DEVICE_PLUGIN_LABEL} "
        f"(fixed in v0.18.2 and v0.19.0), so it fails too while a node of the pool lacks it: label it "
        f"{DEVICE_PLUGIN_LABEL}={pool.name} first (node-labels.yaml has the pool's command)",
    )


def _whole(pool: Pool) -> Drain:
    """One batch of the whole pool."""
    return dataclasses.replace(pool.drain, max_unavailable=max(pool.nodes, 1))


def allocatable(cluster: Cluster, pool: Pool, rule: str) -> Step:
    """Every node of the pool advertises what it offers (DRA devices: the kubelet plugin publishes them)."""
    if not cluster.semantics.EXTENDED_RESOURCES:
        devices = cluster.resources_per_node(pool)
        listed = ", ".join(f"{count} {resource}" for resource, count in sorted(devices.items()))
        return Step(
            Action.WAIT,
            commands.dra_plugin_rollout(cluster),
            commands.show_resource_slices(),
            f"the DRA kubelet plugin runs on the pool's nodes and publishes their devices (per node of pool "
            f"{pool.name}: {listed})",
            pool.name,
            rule,
            Phase.SETTLE,
        )
    per_node = cluster.allocatable_per_node(pool)
    shown = ", ".join(f"{count} {resource}" for resource, count in sorted(per_node.items()))
    return Step(
        Action.WAIT,
        commands.wait_allocatable(pool, per_node),
        commands.show_allocatable(pool, sorted(per_node)),
        f"every node of pool {pool.name} advertises {shown}",
        pool.name,
        rule,
        Phase.SETTLE,
    )


def update_workload(change: ClusterChange, cluster: Cluster, workload: Workload, reason: str, rule: str) -> Step:
    fragment = change.paths.rendered_file(cluster, f"workloads/{workload.file_stem}.yaml")
    if workload.helm is None:
        command = None
        replaces = (
            "it replaces resources.limits"
            if cluster.semantics.EXTENDED_RESOURCES
            else "its resourceClaims and resources.claims replace resources.limits"
        )
        reason += (
            f"; merge {fragment} into the service's values ({replaces}) and redeploy it, "
            "or give the workload a helm: release in the fleet for a command"
        )
    else:
        command = commands.helm_workload(cluster, workload, workload.helm, change.paths)
    return Step(
        Action.UPDATE_WORKLOADS,
        command,
        commands.show_workload(workload),
        reason,
        workload.pool,
        rule,
        Phase.WORKLOADS,
    )


def pods_fit_either_layout(change: ClusterChange, before: Pool, after: Pool) -> bool:
    """A pool can change a batch at a time when its pods ask for the same resources before and after, and both
    the old and the new nodes offer them: a pod evicted from a batch lands on either. More than one batch needs
    more nodes than ``drain.maxUnavailable``."""
    old, new = change.both
    if after.nodes <= after.drain.max_unavailable:
        return False
    offered = set(old.resources_per_node(before)) & set(new.resources_per_node(after))
    for workload in new.workloads:
        if workload.pool != after.name:
            continue
        earlier = next((w for w in old.workloads if (w.namespace, w.name) == (workload.namespace, workload.name)), None)
        limits = new.workload_limits(workload)
        if earlier is None or earlier.pool != before.name or old.workload_limits(earlier) != limits:
            return False
        if not set(limits) <= offered:
            return False
    return True


def pools_with_nodes(pools: list[Pool]) -> list[Pool]:
    """Per-node steps need nodes: a pool scaled to zero has none to label, drain or wait for."""
    return [pool for pool in pools if pool.nodes > 0]
