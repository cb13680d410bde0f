"""A cluster joins the fleet: apply its ConfigMaps, label its nodes, install the GPU Operator, deploy."""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.artifact import DEVICE_PLUGIN_CONFIGMAP, DEVICE_PLUGIN_DAEMONSET
from ...compile.backends import backend_of
from ...compile.operator import operand_daemonsets
from ...shell import all_of
from .. import commands, delivery, steps
from ..context import ClusterChange
from ..model import Action, Finding, Level, Outcome, Phase, Step

ID = "cluster-added"
LEVEL = Level.NONE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is not None or change.new is None:
        return
    new = change.new
    backend = backend_of(new)
    namespace = "the Operator's namespace and the ConfigMaps it reads" if backend.INSTALLS_OPERATOR else "its namespace"
    plan: list[Step] = [steps.apply_configmaps(change, new, f"create {namespace}", ID)]
    pools = steps.pools_with_nodes(list(new.pools))
    label_reason, label_phase = _labels_when(new.operator.adopt_from is not None)
    for pool in pools:
        plan.append(steps.node_group(change, pool, ID, label_phase))  # new nodes carry the labels no earlier
        plan.append(steps.label_nodes(pool, dict(change.new_labels[pool.name]), label_reason, ID, label_phase))
    if backend.INSTALLS_OPERATOR:
        plan += _operator(change)
    releases = backend.releases(new)
    plan += [
        steps.release(change, new, release, f"install {release.chart} {release.version}", ID) for release in releases
    ]
    for pool in pools:
        if change.new_names.mig_config_label(pool) is not None:
            plan.append(steps.mig_success(pool, ID))
        plan.append(steps.allocatable(new, pool, ID))
    for workload in new.workloads:
        plan.append(steps.update_workload(change, new, workload, f"deploy {workload.namespace}/{workload.name}", ID))
    installed = [f"the GPU Operator {new.operator.release.version}"] if backend.INSTALLS_OPERATOR else []
    installed += [f"{r.chart} {r.version}" for r in releases]
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"cluster {new.name} joins the fleet: apply its ConfigMaps, label its nodes, install "
            + " and ".join(installed)
            + " and deploy its workloads",
            None,
            tuple(pool.name for pool in new.pools),
        ),
        tuple(plan),
    )


def _operator(change: ClusterChange) -> list[Step]:
    """Install (or patch) the GPU Operator and wait for its operands."""
    new = change.new
    assert new is not None
    plan: list[Step] = []
    external = new.operator.install == "external"
    install = f"install the GPU Operator {new.operator.release.version} with the rendered values"
    plan.append(
        steps.delivered(change, new, install, ID)
        if delivery.controller(new) is not None
        else Step(
            Action.OPERATOR,
            commands.operator_update(new, change.paths),
            commands.wait_cluster_policy_ready(),
            f"patch the ClusterPolicy of the GPU Operator {new.operator.release.version} your installer deployed"
            if external
            else install,
            None,
            ID,
            Phase.OPERATOR,
        )
    )
    operands = operand_daemonsets(new)
    ready = commands.wait_cluster_policy_ready("30m")
    if new.operator.adopt_from is not None and DEVICE_PLUGIN_DAEMONSET in operands:
        # The running Operator's ClusterPolicy is ready from before the upgrade: only the re-rendered template
        # shows it reconciled the change, before the labels name keys only gpustack-gen's ConfigMap has.
        ready = all_of(commands.wait_template_configmap(new, DEVICE_PLUGIN_DAEMONSET, DEVICE_PLUGIN_CONFIGMAP), ready)
    plan.append(
        Step(
            Action.WAIT,
            ready,
            commands.rollout_status(new, *operands),
            "the Operator deploys the driver, toolkit"
            + (", device plugin" if DEVICE_PLUGIN_DAEMONSET in operands else "")
            + " and GFD on every GPU node",
            None,
            ID,
            Phase.OPERATOR_WAIT,
        )
    )
    return plan


def _labels_when(adopting: bool) -> tuple[str, Phase]:
    """A new cluster's labels go before the Operator's first reconcile. A running Operator being taken over
    (operator.adoptFrom) still mounts its own ConfigMaps: a label naming one of gpustack-gen's keys there makes
    the config-manager exit (k8s-device-plugin@v0.17.4 cmd/config-manager/main.go:351-354), so the labels wait
    until the ClusterPolicy reads gpustack-gen's ConfigMaps, whose default keeps unlabelled nodes as they are."""
    if adopting:
        return (
            "label the pool's nodes once the ClusterPolicy reads gpustack-gen's ConfigMaps (the Operator's own "
            "ConfigMaps lack these keys), and set the labels in the node group template",
            Phase.LABELS,
        )
    return (
        "label the pool's nodes before the Operator's first reconcile, and set the labels in the node "
        "group template: unlabelled MIG-capable nodes would be labelled all-disabled by the Operator and "
        "repartitioned twice",
        Phase.FIRST_LABELS,
    )
