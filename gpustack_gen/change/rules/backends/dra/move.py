"""A cluster moves between the GPU Operator's device plugin and the NVIDIA DRA driver, one pool at a time.

The two must not serve one node (the DRA chart refuses GPU allocation beside the device plugin:
``templates/validation.yaml``), and the Operator turns its device plugin off per node where
``nvidia.com/gpu.deploy.device-plugin`` is ``false`` (gpu-operator ``controllers/state_manager.go``), so each
pool moves on its own: drain it, turn the old backend off on its nodes and wait until it is gone, turn the
new one on, redeploy the pool's workloads with what they ask on the new backend, uncordon. To DRA: the
DeviceClasses and claims are applied and the driver installed first (its kubelet plugin runs only on
labelled nodes), and the Operator's device plugin is turned off cluster-wide (the rendered values) only
once no pool uses it; its ConfigMap goes last. Back: the Operator's values come first (every node still
carries ``deploy.device-plugin=false``), the driver and the DRA objects go last.

A change that also changes the Operator's own settings or a pool's MIG layout is refused: the Operator
upgrade those need applies the new values at once, which would turn the device plugin off (or on) on
every node before the pools move, leaving pools with neither backend.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from .....compile.artifact import DEVICE_PLUGIN_CONFIGMAP, DEVICE_PLUGIN_LABEL
from .....compile.backends.dra.claims import claim_object, shares_claim
from .....compile.backends.dra.device_classes import device_classes
from .....compile.operator import operator_settings
from .....model.backends import dra, gpu_operator
from .....model.backends.dra import DEVICE_PLUGIN_DEPLOY_LABEL, KUBELET_PLUGIN_LABEL, dra_options
from .....model.fleet import Cluster, Pool, Workload
from .... import commands, steps
from ....context import ClusterChange
from ....model import Action, Finding, Level, Outcome, Phase, Step

ID = "dra-move"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    old, new = change.both
    if old.backend == new.backend or dra.NAME not in (old.backend, new.backend):
        return
    blockers = list(_blockers(change))
    for message, hint, pool in blockers:
        yield Outcome(Finding(ID, Level.ERROR, message, pool, (pool,) if pool else (), hint))
    if blockers:
        return
    to_dra = new.backend == dra.NAME
    plan = _to_dra(change) if to_dra else _from_dra(change)
    driver = f"the NVIDIA DRA driver {dra_options(new).release.version}" if to_dra else "the NVIDIA DRA driver"
    source, target = ("the GPU Operator's device plugin", driver) if to_dra else (driver, "the device plugin")
    moved = [pool.name for pool in new.pools]
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"cluster {new.name} moves from {source} to {target}, one pool at a time ({', '.join(moved)}): each "
            "pool is drained, the old backend turned off on its nodes and the new one on, and its workloads "
            "redeployed with what they ask on the new backend; no node runs both",
            None,
            tuple(moved),
        ),
        tuple(plan),
    )
    for workload in new.workloads:
        before = next((w for w in old.workloads if (w.namespace, w.name) == (workload.namespace, workload.name)), None)
        yield Outcome(
            Finding(
                ID,
                Level.RESTART,
                f"{workload.namespace}/{workload.name} asked {_asks(old, before)}; now asks {_asks(new, workload)}",
                workload.pool,
                (f"{workload.namespace}/{workload.name}",),
            )
        )


def _blockers(change: ClusterChange) -> Iterator[tuple[str, str, str | None]]:
    """(message, hint, pool) for what would leave a pool with neither backend during the move."""
    old, new = change.both
    if gpu_operator.NAME not in (old.backend, new.backend):
        yield (
            f"cluster {new.name} moves from backend {old.backend} to {new.backend}: gpustack-gen plans moves between "
            f"the GPU Operator's device plugin and another backend only",
            f"move to backend {gpu_operator.NAME} in one change, then to {new.backend} in another",
            None,
        )
        return
    as_before = dataclasses.replace(new, backend=old.backend, semantics=old.semantics)
    if operator_settings(as_before) != operator_settings(old) or old.operator != new.operator:
        yield (
            f"cluster {new.name} changes backend ({old.backend} -> {new.backend}) and the GPU Operator's own settings "
            "in one change: the Operator upgrade those need applies the new values at once, which turns the device "
            f"plugin {'off' if new.backend == dra.NAME else 'on'} on every node before the pools move, leaving pools "
            "with neither backend (or both on one node)",
            "change the Operator first (keep backend as it is), then the backend in a change of its own",
            None,
        )
    old_names, new_names = change.old_names, change.new_names
    for before, after in change.common_pools:
        if after.nodes and old_names.mig_config_label(before) != new_names.mig_config_label(after):
            yield (
                f"pool {after.name} changes its MIG layout while its cluster changes backend: the new backend would "
                "start on GPUs that are being repartitioned",
                "change the layout in one change, the backend in another",
                after.name,
            )


def _asks(cluster: Cluster, workload: Workload | None) -> str:
    if workload is None:
        return "nothing (new)"
    request = cluster.workload_request(workload)
    if cluster.semantics.EXTENDED_RESOURCES:
        return ", ".join(f"{resource}: {count}" for resource, count in request.items()) + " per pod"
    ((device_class, count),) = request.items()
    document = claim_object(cluster, workload)
    kind, name = document["kind"], document["metadata"]["name"]
    if shares_claim(cluster, workload):
        pool = cluster.pool(workload.pool)
        assert pool is not None
        return (
            f"{kind} {name} shared by its {workload.replicas} pods on one node ({count} x {device_class}, at most "
            f"{pool.sharing.replicas} pods per claim)"
        )
    return f"a claim per pod from {kind} {name} ({count} x {device_class})"


def _each_pool(
    change: ClusterChange,
    drained_because: str,
    turn_off: Callable[[Pool, Pool], list[Step]],
    turn_on: Callable[[Pool, bool], list[Step]],
    redeployed_because: str,
) -> list[Step]:
    """Per pool with nodes, in the pool's order and one phase (so its steps stay together): drain it, ``turn_off``
    the old backend (old pool, new pool), ``turn_on`` the new one (new pool, whether it ran before), redeploy its
    workloads, uncordon. A pool new in this change has nothing to drain or turn off."""
    _, new = change.both
    plan: list[Step] = []
    for pool in steps.pools_with_nodes(list(new.pools)):
        before = change.old_pools.get(pool.name)
        running = before is not None and before.nodes > 0
        plan.append(steps.node_group(change, pool, ID))
        if before is not None and running:
            plan += steps.drain(pool, drained_because, ID, Phase.LABELS)
            plan += turn_off(before, pool)
        plan += turn_on(pool, running)
        plan += [
            dataclasses.replace(steps.update_workload(change, new, w, redeployed_because, ID), phase=Phase.LABELS)
            for w in new.workloads
            if w.pool == pool.name
        ]
        if running:
            plan.append(dataclasses.replace(steps.uncordon(pool, ID), phase=Phase.LABELS))
    return plan


def _to_dra(change: ClusterChange) -> list[Step]:
    old, new = change.both

    def device_plugin_off(before: Pool, pool: Pool) -> list[Step]:
        gone = {resource: 0 for resource in old.resources_per_node(before)}
        return [
            steps.label_nodes(
                pool,
                {DEVICE_PLUGIN_DEPLOY_LABEL: "false", DEVICE_PLUGIN_LABEL: None},
                "turn the Operator's device plugin off on the pool's nodes (its DaemonSet leaves them; GFD stays)",
                ID,
            ),
            Step(
                Action.WAIT,
                commands.wait_allocatable(pool, gone),
                commands.show_allocatable(pool, sorted(gone)),
                "the device plugin is gone from the pool's nodes once they advertise none of its resources: the "
                "DRA kubelet plugin must not start beside it",
                pool.name,
                ID,
                Phase.LABELS,
            ),
        ]

    def dra_on(pool: Pool, running: bool) -> list[Step]:
        labels = {
            k: v for k, v in change.new_labels[pool.name].items() if not running or k != DEVICE_PLUGIN_DEPLOY_LABEL
        }
        label = steps.label_nodes(
            pool,
            dict(labels),
            "start the DRA kubelet plugin on the pool's nodes (the check waits until the plugin runs on every labelled node)",
            ID,
        )
        return [dataclasses.replace(label, verify=commands.dra_plugin_rollout(new))]

    plan = [
        steps.apply_configmaps(
            change,
            new,
            "create the DeviceClasses and the workloads' claims (nothing uses them yet); the device-plugin "
            "ConfigMap is no longer rendered but stays until the last step (keep GitOps pruning off for it until "
            "then)",
            ID,
        ),
        Step(
            Action.BACKEND,
            commands.dra_driver_upgrade(new, change.paths),
            commands.show_dra_driver(new),
            f"install the NVIDIA DRA driver {dra_options(new).release.version} with the feature gates the pools need; its "
            f"kubelet plugin runs only on nodes labelled {KUBELET_PLUGIN_LABEL}=true, none yet",
            None,
            ID,
            Phase.OPERATOR,
        ),
        *_each_pool(
            change,
            "its pods ask for the device plugin's resources, which the pool stops advertising",
            device_plugin_off,
            dra_on,
            "redeploy with its claim, on DRA now",
        ),
        dataclasses.replace(
            steps.operator(change, "no pool uses the device plugin any more: turn it off in the Operator", ID),
            phase=Phase.FINISH,
        ),
    ]
    if new.operator.driver_enabled:
        plan.append(_driver_rolls(new))
    plan.append(
        Step(
            Action.PRUNE,
            commands.delete_configmaps(new, [DEVICE_PLUGIN_CONFIGMAP]),
            commands.show_configmaps(new),
            "nothing reads the device-plugin ConfigMap any more",
            None,
            ID,
            Phase.FINISH,
        )
    )
    return plan


def _driver_rolls(cluster: Cluster) -> Step:
    return steps.driver_wait(
        cluster,
        None,
        "the driver manager's NODE_LABEL_FOR_GPU_POD_EVICTION (the DRA kubelet plugin, evicted before a driver reload) "
        "changes the driver DaemonSet: the upgrade controller rolls it node by node as driver.upgradePolicy says",
        ID,
        Phase.FINISH,
    )


def _from_dra(change: ClusterChange) -> list[Step]:
    old, new = change.both
    plan = [
        steps.apply_configmaps(
            change,
            new,
            "create the device-plugin ConfigMap; the DeviceClasses and claims are no longer rendered but stay until "
            "the last step (keep GitOps pruning off for them until then)",
            ID,
        ),
        steps.operator(
            change,
            "the Operator deploys its device plugin again, but on no node yet: each still carries "
            f"{DEVICE_PLUGIN_DEPLOY_LABEL}=false",
            ID,
        ),
    ]
    if old.operator.driver_enabled:
        plan.append(dataclasses.replace(_driver_rolls(new), phase=Phase.OPERATOR_WAIT))
    if new.operator.install == "external":
        # A merge patch keeps what it does not name, and the device plugin's patch does not name `enabled`.
        plan.append(
            Step(
                Action.OPERATOR,
                commands.enable_device_plugin(),
                commands.wait_cluster_policy_ready(),
                "the ClusterPolicy still says devicePlugin.enabled: false from the DRA backend: turn it back on",
                None,
                ID,
                Phase.OPERATOR,
            )
        )

    def dra_off(before: Pool, pool: Pool) -> list[Step]:
        label = steps.label_nodes(
            pool,
            {KUBELET_PLUGIN_LABEL: None},
            "stop the DRA kubelet plugin on the pool's nodes (the check waits until its DaemonSet has settled on the "
            "nodes left)",
            ID,
        )
        return [dataclasses.replace(label, verify=commands.dra_plugin_rollout(old))]

    def device_plugin_on(pool: Pool, running: bool) -> list[Step]:
        labels: dict[str, str | None] = {DEVICE_PLUGIN_DEPLOY_LABEL: "true", **change.new_labels[pool.name]}
        return [
            steps.label_nodes(
                pool,
                labels,
                "start the Operator's device plugin on the pool's nodes with the pool's config",
                ID,
            ),
            dataclasses.replace(steps.allocatable(new, pool, ID), phase=Phase.LABELS),
        ]

    plan += _each_pool(
        change,
        "its pods hold DRA claims on the pool's devices, which the DRA driver stops serving",
        dra_off,
        device_plugin_on,
        "redeploy with its GPU resources, on the device plugin now",
    )
    objects = [*device_classes(old), *(claim_object(old, w) for w in old.workloads)]
    plan += [
        Step(
            Action.BACKEND,
            commands.dra_driver_uninstall(old),
            commands.show_dra_driver(old),
            "no pool uses the DRA driver any more: uninstall it",
            None,
            ID,
            Phase.FINISH,
        ),
        Step(
            Action.PRUNE,
            commands.delete_objects(objects),
            commands.show_device_classes(),
            "delete the DeviceClasses and claims nothing uses any more",
            None,
            ID,
            Phase.FINISH,
        ),
    ]
    return plan
