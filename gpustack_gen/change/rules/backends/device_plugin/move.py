"""A cluster moves from the standalone device plugin chart to the GPU Operator, one batch of nodes at a time.

Both plugins register ``nvidia.com/gpu`` on the same kubelet socket (``nvidia-gpu.sock``): the second to start
deletes the first's socket and takes it, and either one stopping removes the socket the other may serve
(k8s-device-plugin@v0.20.0 ``internal/plugin/server.go:103-107,163-179``; ``../shared/research/
standalone-plugin.md`` §5). So no node may run both, and a node switches while it is cordoned and empty:

1. every node gets ``nvidia.com/gpu.deploy.device-plugin=false`` before the Operator is installed: the
   Operator adds its state labels only where the key is absent (gpu-operator@v25.3.3
   ``controllers/state_manager.go:380``; v26.7.0 keeps a non-empty value, ``:470-482``), so its device plugin
   starts nowhere while its driver validation, toolkit, GFD and DCGM deploy;
2. the Operator is installed with the fleet's values (CDI on, the hosts' driver and toolkit as the fleet says);
3. per pool, a batch at a time: drain, ``gpustack.io/standalone-plugin=off`` (every term of the chart's rendered
   node affinity requires it not to be ``off``, so the DaemonSet controller deletes the pod there), wait until
   the batch advertises no GPU, ``deploy.device-plugin=true`` with the pool's labels, wait for its GPUs,
   uncordon: outside the drained batch every node keeps one plugin;
4. a check that no standalone plugin pod is left (a GPU node outside every pool), ``helm uninstall`` of the
   release, and the off switch removed. Each pool's node-group template gets the switch labels once the
   Operator runs, so a node born meanwhile has the Operator's plugin only.

The move back is refused: it would hand the GPUs back to the host's own runtime hook, the setup whose
Kubernetes upgrade lost them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from .....compile.backends import backend_of
from .....compile.operator import operand_daemonsets
from .....model.backends import device_plugin, gpu_operator
from .....model.backends.device_plugin import SWITCH_LABEL, plugin_daemonset
from .....model.fleet import Pool
from .....shell import all_of
from .... import commands, delivery, steps
from ....context import ClusterChange
from ....model import Action, Finding, Level, Outcome, Phase, Step

ID = "device-plugin-move"
LEVEL = Level.DISRUPTIVE
DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
# What a pool's node-group template carries while the move runs, set once the Operator runs: a node born meanwhile
# (an autoscaler's, or Karpenter replacing drifted nodes) gets the Operator's plugin only, never none or both.
DURING = {SWITCH_LABEL: "off", DEPLOY_LABEL: "true"}


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    old, new = change.both
    if old.backend == new.backend or device_plugin.NAME not in (old.backend, new.backend):
        return
    blockers = list(_blockers(change))
    for message, hint, pool in blockers:
        yield Outcome(Finding(ID, Level.ERROR, message, pool, (pool,) if pool else (), hint))
    if blockers:
        return
    moved = [pool.name for pool in new.pools]
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"cluster {new.name} moves from the standalone device plugin to the GPU Operator "
            f"{new.operator.release.version}, a batch of nodes at a time ({', '.join(moved)}): each batch is "
            "drained, the standalone plugin switched off there and the Operator's on; no node runs both, and no "
            "pool advertises nothing outside its drained batch",
            None,
            tuple(moved),
        ),
        tuple(_to_operator(change)),
    )


def _blockers(change: ClusterChange) -> Iterator[tuple[str, str, str | None]]:
    old, new = change.both
    if new.backend == device_plugin.NAME:
        yield (
            f"cluster {new.name} moves from backend {old.backend} to {device_plugin.NAME}: gpustack-gen plans the move "
            "from the standalone device plugin to the GPU Operator only; back, the GPUs would depend on the hosts' own "
            "runtime hook again, the setup a Kubernetes upgrade broke in the write-up",
            f"keep backend {old.backend}; to stop the Operator managing the driver or toolkit, set "
            "operator.driver.enabled or operator.toolkit.enabled to false",
            None,
        )
        return
    if new.backend != gpu_operator.NAME:
        yield (
            f"cluster {new.name} moves from backend {old.backend} to {new.backend}: gpustack-gen plans the move from "
            f"the standalone device plugin to the GPU Operator's device plugin only",
            f"move to backend {gpu_operator.NAME} in one change, then to {new.backend} in another",
            None,
        )
        return
    tool = delivery.controller(old)
    if tool is not None:
        yield (
            f"cluster {new.name}'s standalone device plugin release is delivered by {tool}: the move ends with a helm "
            "uninstall, which the controller would undo (reinstalling the plugin beside the Operator's), and pruning "
            "its object would take the plugin off every node at once",
            "move the release out of the controller first (delivery.wrap without it, and the controller told to "
            "orphan the release), then move to the Operator",
            None,
        )
    for pool in new.pools:
        if pool.sharing.strategy == "mig":
            yield (
                f"pool {pool.name} starts MIG while its cluster moves to the GPU Operator: the Operator's device "
                "plugin would start on GPUs the MIG manager is repartitioning",
                "move with the pool's current sharing, then change it to MIG in a change of its own",
                pool.name,
            )


def _to_operator(change: ClusterChange) -> list[Step]:
    old, new = change.both
    (release,) = backend_of(old).releases(old)
    pools = steps.pools_with_nodes(list(new.pools))
    plan: list[Step] = [
        Step(
            Action.CHECK,
            commands.wait_second_affinity_key(release.namespace, plugin_daemonset(old), SWITCH_LABEL),
            None,
            f"the running release has the off switch of the rendered values ({SWITCH_LABEL} in its node affinity): a "
            "release installed otherwise (imported) does not, and switching a batch off would then do nothing; if "
            "this fails, upgrade the release once with the old fleet's nvidia-device-plugin-values.yaml (it rolls "
            "every plugin pod, one node at a time), then start again",
            None,
            ID,
            Phase.CHECK,
        ),
        Step(
            Action.LABEL_NODES,
            commands.label_unlabelled_nodes(DEPLOY_LABEL, "false"),
            commands.every_node_labelled(DEPLOY_LABEL),
            f"every node, in a pool or not, gets {DEPLOY_LABEL}=false before the Operator exists: it adds its state "
            "labels only where the key is absent, so its device plugin starts on no node the standalone one may "
            "serve (its NFD labels every NVIDIA node, which the standalone chart's affinity also matches)",
            None,
            ID,
            Phase.FIRST_LABELS,
        ),
        steps.apply_configmaps(change, new, "create the Operator's namespace and the device-plugin ConfigMap", ID),
        steps.operator(
            change,
            f"install the GPU Operator {new.operator.release.version}; its device plugin starts on no node yet "
            f"({DEPLOY_LABEL}=false)",
            ID,
        ),
        steps.rollout_wait(
            new,
            operand_daemonsets(new),
            "the Operator deploys its operands; its device plugin's DaemonSet schedules on no node yet",
            ID,
        ),
    ]
    for pool in new.pools:
        # A pool at 0 nodes still has a template: an autoscaler may bring a node from it during the move.
        plan += _pool(change, pool) if pool.nodes else [steps.node_group(change, pool, ID, Phase.LABELS, during=DURING)]
    plan += [
        Step(
            Action.CHECK,
            commands.release_pods_left(release.chart, release.name),
            None,
            "no node may still need the standalone plugin: this lists what is left of it, on nodes outside every "
            f"pool; add such a node to a pool (or drain it and switch it as the plan did: {SWITCH_LABEL}=off, then "
            f"{DEPLOY_LABEL}=true) before the uninstall",
            None,
            ID,
            Phase.FINISH,
        ),
        Step(
            Action.BACKEND,
            release.uninstall_command(),
            commands.release_gone(release),
            f"no node uses the standalone device plugin any more: uninstall it (chart {release.chart} "
            f"{release.version}); this must list nothing. On CRI-O hosts, also delete a legacy OCI hook left by old "
            "toolkit packages (/usr/share/containers/oci/hooks.d/oci-nvidia-hook.json): it still fires for every "
            "container and conflicts with CDI",
            None,
            ID,
            Phase.FINISH,
        ),
        *(
            dataclasses.replace(
                steps.label_nodes(
                    pool,
                    {SWITCH_LABEL: None},
                    "the off switch has nothing left to switch (drop it from the node-group template too)",
                    ID,
                ),
                phase=Phase.FINISH,
            )
            for pool in pools
        ),
    ]
    return plan


def _pool(change: ClusterChange, pool: Pool) -> list[Step]:
    """The pool's batches, each drained, switched and uncordoned before the next (the pool's workloads ask the
    same resources of either plugin, so they run on the nodes not yet switched)."""
    old, new = change.both
    (release,) = backend_of(old).releases(old)
    # Then the node status shows it too: the allocatable wait after the Operator's plugin starts cannot pass on the
    # count the standalone plugin advertised.
    gone = {resource: 0 for resource in old.resources_per_node(change.old_pools[pool.name])}
    plan = [
        steps.node_group(change, pool, ID, Phase.LABELS, during=DURING),
        steps.drain_preflight(pool, ID, Phase.LABELS),
        steps.mark_pool(change, pool, ID, Phase.LABELS),
    ]
    for batch, size in steps.batches(pool):
        plan += steps.drain_batch(
            pool, batch, size, "a node changes plugins only while no GPU pod runs on it", ID, Phase.LABELS
        )
        switched = steps.label_nodes(
            batch, {SWITCH_LABEL: "off"}, "switch the standalone plugin off on the batch", ID, Phase.LABELS
        )
        plan += [
            dataclasses.replace(
                switched,
                verify=all_of(
                    *(commands.release_pods_on(batch, index, release.chart, release.name) for index in range(size)),
                    commands.wait_allocatable(batch, gone),
                ),
                reason=switched.reason
                + ": the chart's node affinity no longer holds there, so the DaemonSet controller deletes its pod; the "
                "check fails while a pod of the release is still on the batch (run it again while the pod terminates, "
                "up to its 30 s grace period), then waits until the batch advertises no GPU: the Operator's plugin "
                "must not start beside it (the two share the kubelet socket), and its own wait must not pass on the "
                "old count",
            ),
            steps.label_nodes(
                batch,
                {DEPLOY_LABEL: "true", **change.new_labels[pool.name]},
                "start the Operator's device plugin on the batch, with the pool's config",
                ID,
                Phase.LABELS,
            ),
            dataclasses.replace(steps.allocatable(new, batch, ID), phase=Phase.LABELS),
            dataclasses.replace(steps.uncordon(batch, ID), phase=Phase.LABELS),
        ]
    plan.append(steps.unmark(pool, ID, Phase.LABELS))
    return plan
