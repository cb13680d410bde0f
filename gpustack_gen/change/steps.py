"""Step builders the rules share: each pairs a command with the check that shows it finished."""

from __future__ import annotations

from ..compile.artifact import MIG_CONFIG_LABEL, MIG_CONFIG_STATE_LABEL
from ..compile.releases import ChartRelease
from ..model.fleet import Cluster, Pool, Workload
from ..shell import Script, all_of
from . import commands
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
        commands.wait_cluster_policy_ready(),
        f"{reason}: {how}",
        None,
        rule,
        Phase.OPERATOR,
    )


def release(change: ClusterChange, cluster: Cluster, chart: ChartRelease, reason: str, rule: str) -> Step:
    """Install or upgrade a backend's own chart with its whole values file, after the Operator's step."""
    return Step(
        Action.BACKEND,
        commands.release_upgrade(cluster, chart, change.paths),
        commands.release_rollout(chart),
        f"{reason}: helm upgrade --install with the rendered values (never --reuse-values)",
        None,
        rule,
        Phase.OPERATOR,
    )


def driver_wait(version: str | None, reason: str, rule: str, phase: Phase) -> Step:
    """Every GPU node runs the driver: at ``version`` where the change loads a new one (GFD's label of the loaded
    driver cannot pass early), else the upgrade controller's state (a roll of the same version)."""
    return Step(
        Action.WAIT,
        commands.wait_driver_upgraded() if version is None else commands.wait_driver_version(version),
        commands.show_driver_versions(),
        reason,
        None,
        rule,
        phase,
    )


def rollout_wait(cluster: Cluster, daemonsets: tuple[str, ...], reason: str, rule: str) -> Step:
    return Step(
        Action.WAIT,
        commands.rollout_status(cluster, *daemonsets),
        commands.wait_cluster_policy_ready(),
        reason,
        None,
        rule,
        Phase.OPERATOR_WAIT,
    )


def restart_device_plugin(change: ClusterChange, reason: str, rule: str, *, mps_daemon: bool) -> Step:
    """``mps_daemon``: a changed config is MPS's, so its control daemon restarts too (on every MPS node)."""
    _, new = change.both
    return Step(
        Action.RESTART_DEVICE_PLUGIN,
        commands.restart_device_plugin(new, mps_daemon),
        commands.device_plugin_rollout(new, mps_daemon),
        reason,
        None,
        rule,
        Phase.RESTART,
    )


def drain(pool: Pool, reason: str, rule: str, phase: Phase = Phase.DRAIN) -> Step:
    return Step(Action.DRAIN, commands.drain(pool), commands.wait_cordoned(pool), reason, pool.name, rule, phase)


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
    plan = [label_nodes(pool, labels, reason, rule)] if labels else []
    if config is not None:
        plan += [
            relabel_mig(pool, config, f"set nvidia.com/mig.config={config} where the template did not", rule),
            mig_success(pool, rule),
        ]
    return plan


def mig_relabel(change: ClusterChange, pool: Pool, config: str, rule: str, settle: Step) -> list[Step]:
    """A pool's nodes to MIG config ``config``: the config reaches the mig-manager before the label changes, the
    nodes are drained first (it does not drain, and fails on GPUs in use), the old state is cleared with the
    relabel, then ``settle`` (the resources the pool advertises once the mig-manager is done), and uncordon."""
    _, new = change.both
    plan = [apply_configmaps(change, new, f"add MIG config {config} to the mig-parted ConfigMap", rule)]
    if pool.nodes > 0:
        plan += [
            mig_sync(new, config, rule, pool.name),
            drain(pool, "the mig-manager does not drain, and fails on GPUs in use", rule),
            relabel_mig(
                pool,
                config,
                f"clear the old state and set nvidia.com/mig.config={config}: the mig-manager acts only on a "
                "changed value; also set it in the pool's node group template",
                rule,
            ),
            mig_success(pool, rule),
            settle,
            uncordon(pool, rule),
        ]
    return plan


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


def pools_with_nodes(pools: list[Pool]) -> list[Pool]:
    """Per-node steps need nodes: a pool scaled to zero has none to label, drain or wait for."""
    return [pool for pool in pools if pool.nodes > 0]
