"""Changes on a cluster that stays on backend dra (or joins the fleet on it): the driver, its objects, pools.

- The driver's version or values: ``helm upgrade`` of the driver (its kubelet plugin rolls). Its objects keep
  their names across the chart's rename (``nameOverride``, ``docs/upgrade.md``); a move back from 0.4.x to
  25.12.0 is refused (no downgrade, same page), and so is another namespace (a second install).
- DeviceClasses and claims: applied. A claim's name says what it asks, so a changed claim is a new object
  its workload's new fragment names (``workload-values`` redeploys it); objects no longer rendered are
  deleted at the end. A DeviceClass's config is copied into a claim when the claim is allocated, and a shared
  claim stays allocated while any pod uses it, so its name carries a digest of that config
  (``compile/backends/dra/claims.py``): a sharing change gives the workload a new claim, which its new pods get
  allocated with the new config.
- A shared claim replaced: the old claim holds its devices until its last pod ends, and a rolling update
  keeps old pods until new ones run. Where the pool has no free devices for both claims at once, the
  workload's pods are stopped first, or its new pods would wait for devices the old ones never release.
- A pool added: its nodes are labelled and publish their devices. A MIG layout change: as on the device
  plugin (``mig-layout``: the config reaches the mig-manager, drain, relabel, success), then the kubelet
  plugin restarts, since it finds static MIG devices only when it starts (``research/dra.md`` §7; on A100
  the mig-manager does not evict it).
- A shared pool's ``replicas``: no object changes; it is what gpustack-gen checks the workloads against.
- A new cluster: ``cluster-added`` installs the driver after the Operator (it is the backend's release); its
  kubelet plugin restarts once the MIG layouts are applied.
- Claims in namespaces no workload used before: the namespaces are created first, since the cluster folder
  does not hold them (a namespace dropped from it would be pruned with everything in it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .....compile.backends.dra.claims import claim_object, shares_claim
from .....compile.backends.dra.device_classes import device_classes
from .....compile.backends.dra.driver import driver_values
from .....compile.kustomization import namespaces_command
from .....model.backends.dra import NAME, dra_options
from .....model.fleet import Cluster, Pool, Workload
from .....shell import all_of
from .... import commands, steps
from ....context import ClusterChange
from ....model import Action, Finding, Level, Outcome, Phase, Step
from ....namespace_move import namespace_move

ID = "dra-objects"
LEVEL = Level.RESTART

ObjectKey = tuple[str, str | None, str]  # kind, namespace, name


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    new = change.new
    if new is None or new.backend != NAME:
        return
    if change.old is None:  # cluster-added installs the driver's release after the Operator
        namespaces = sorted({w.namespace for w in new.workloads})
        if namespaces:
            yield Outcome(
                Finding(
                    ID,
                    Level.NONE,
                    f"the namespaces of the DRA claims ({', '.join(namespaces)}) are created before the cluster "
                    "folder is applied",
                    None,
                    tuple(namespaces),
                ),
                tuple(_namespaces(namespaces)),
            )
        mig = [pool for pool in steps.pools_with_nodes(list(new.pools)) if change.new_names.mig_config_label(pool)]
        if mig:
            yield Outcome(
                Finding(
                    ID,
                    Level.NONE,
                    "the DRA kubelet plugin is restarted once the MIG layouts are applied, to publish the MIG devices",
                    None,
                    tuple(pool.name for pool in mig),
                ),
                tuple(_republish(new, pool) for pool in mig),
            )
        return
    if not change.on(NAME):
        return  # a move between backends: dra-move
    yield from _driver(change)
    yield from _objects(change)
    yield from _pools(change)


def _install(change: ClusterChange, cluster: Cluster, reason: str) -> Step:
    return Step(
        Action.BACKEND,
        commands.dra_driver_upgrade(cluster, change.paths),
        commands.show_dra_driver(cluster),
        reason,
        None,
        ID,
        Phase.OPERATOR,
    )


def _driver(change: ClusterChange) -> Iterator[Outcome]:
    old, new = change.both
    before, after = dra_options(old), dra_options(new)
    if before.namespace != after.namespace:
        uninstall = commands.dra_driver_uninstall(old)
        yield namespace_move(ID, "the DRA driver", "dra.namespace", old, before.namespace, after.namespace, uninstall)
        return
    if after.release.order < before.release.order:
        yield Outcome(
            Finding(
                ID,
                Level.ERROR,
                f"the DRA driver goes back from {before.release.version} to {after.release.version}, which upstream "
                "does not support (docs/upgrade.md: the kubelet plugin's checkpoints and the ComputeDomain API changed)",
                None,
                (),
                f"keep dra.version {before.release.version}",
            )
        )
        return
    if before.release == after.release and driver_values(old) == driver_values(new):
        return
    what = (
        f"{before.release.version} -> {after.release.version}"
        if before.release != after.release
        else f"{after.release.version}, new values"
    )
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"the NVIDIA DRA driver changes ({what}): its kubelet plugin restarts on every DRA node; prepared claims "
            "keep their devices",
        ),
        (
            _install(change, new, f"upgrade the NVIDIA DRA driver ({what}) with its whole values (no --reuse-values)"),
            Step(
                Action.WAIT,
                commands.dra_plugin_rollout(new),
                commands.show_resource_slices(),
                "the kubelet plugin rolls on every DRA node and publishes the devices again",
                None,
                ID,
                Phase.OPERATOR_WAIT,
            ),
        ),
    )


def _documents(cluster: Cluster) -> dict[ObjectKey, dict[str, Any]]:
    found = [*device_classes(cluster), *(claim_object(cluster, w) for w in cluster.workloads)]
    return {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in found}


def _objects(change: ClusterChange) -> Iterator[Outcome]:
    old, new = change.both
    before, after = _documents(old), _documents(new)
    added = [key for key in after if key not in before]
    changed = [key for key in after if key in before and before[key] != after[key]]
    removed = [key for key in before if key not in after]
    if not (added or changed or removed):
        return
    known = {w.namespace for w in old.workloads}
    plan = _namespaces([namespace for _, namespace, _ in added if namespace is not None and namespace not in known])
    if added or changed:
        plan.append(steps.apply_configmaps(change, new, "apply the new and changed DeviceClasses and claims", ID))
    plan += _stops(change)
    if removed:
        plan.append(
            Step(
                Action.PRUNE,
                commands.delete_objects([before[key] for key in removed]),
                commands.show_device_classes(),
                "delete the DeviceClasses and claims no longer rendered, once the workloads that used them are "
                "redeployed (a claim in use is deleted when its last pod ends)",
                None,
                ID,
                Phase.FINISH,
            )
        )

    def names(keys: list[ObjectKey]) -> str:
        return ", ".join(f"{kind} {namespace + '/' if namespace else ''}{name}" for kind, namespace, name in keys)

    parts = [
        f"{label}: {names(keys)}"
        for label, keys in (("new", added), ("changed", changed), ("removed", removed))
        if keys
    ]
    yield Outcome(Finding(ID, LEVEL, f"DRA objects change ({'; '.join(parts)})"), tuple(plan))


def _namespaces(namespaces: list[str]) -> list[Step]:
    """Before the cluster folder is applied: the namespaces its claims go into, where none exists yet."""
    if not namespaces:
        return []
    names = sorted(set(namespaces))
    return [
        Step(
            Action.APPLY_CONFIGMAPS,
            namespaces_command(names),
            commands.show_namespaces(names),
            "create the namespaces the DRA claims go into, where missing: the cluster folder does not hold them "
            "(a namespace dropped from it would be pruned with everything in it), and applying it fails without them",
            None,
            ID,
            Phase.CHECK,
        )
    ]


def _stops(change: ClusterChange) -> list[Step]:
    """Stop the pods of each workload whose shared claim is replaced while its pool has too few free devices to
    hold the old claim beside the new one: the old claim keeps its devices until its last pod ends."""
    old, new = change.both
    before = {(w.namespace, w.name): w for w in old.workloads}
    asked = new.requested_by_pool()
    found: list[Step] = []
    for workload in new.workloads:
        previous = before.get((workload.namespace, workload.name))
        pool = new.pool(workload.pool)
        if previous is None or pool is None or previous.pool != workload.pool:
            continue
        if not (shares_claim(old, previous) and shares_claim(new, workload)):
            continue
        old_claim, new_claim = claim_object(old, previous), claim_object(new, workload)
        if old_claim["metadata"]["name"] == new_claim["metadata"]["name"]:
            continue
        total = new.resources_total(pool)
        free = {resource: total.get(resource, 0) - asked[pool.name].get(resource, 0) for resource in total}
        held = old.workload_total(previous)
        if all(free.get(resource, 0) >= count for resource, count in held.items()):
            continue
        found.append(_stop(new, workload, old_claim["metadata"]["name"], new_claim["metadata"]["name"]))
    return found


def _stop(cluster: Cluster, workload: Workload, old_claim: str, new_claim: str) -> Step:
    who = f"{workload.namespace}/{workload.name}"
    return Step(
        Action.UPDATE_WORKLOADS,
        None,
        commands.claim_reserved_for(workload.namespace, old_claim),
        f"stop every pod of {who} (scale its Deployment or StatefulSet to 0, and back up after the redeploy if its "
        f"chart does not set the replica count): pool {workload.pool} has no free devices for its new claim {new_claim} while "
        f"the old claim {old_claim} holds its own until its last pod ends, and a rolling update keeps old pods "
        "until new ones run. Done when the check prints nothing (no pod reserves the old claim)",
        workload.pool,
        ID,
        Phase.RESTART,
    )


def _pools(change: ClusterChange) -> Iterator[Outcome]:
    _, new = change.both
    for pool in new.pools:
        if pool.name in change.old_pools or pool.nodes == 0:
            continue
        plan: list[Step] = [
            steps.node_group(change, pool, ID),
            steps.label_nodes(
                pool,
                dict(change.new_labels[pool.name]),
                "label the pool's nodes",
                ID,
            ),
        ]
        if change.new_names.mig_config_label(pool) is not None:
            plan += [steps.mig_success(pool, ID), _republish(new, pool)]
        plan.append(steps.allocatable(new, pool, ID))
        yield Outcome(
            Finding(ID, Level.NONE, f"pool {pool.name} added on DRA: label its nodes", pool.name, (pool.name,)),
            tuple(plan),
        )
    for before, after in change.common_pools:
        yield from _mig_layout(change, before, after)
        if before.sharing.is_shared and after.sharing.is_shared and before.sharing.replicas != after.sharing.replicas:
            yield Outcome(
                Finding(
                    ID,
                    Level.NONE,
                    f"pool {after.name}: replicas {before.sharing.replicas} -> {after.sharing.replicas} changes no DRA "
                    "object: it is the number of pods per claim gpustack-gen checks the workloads against",
                    after.name,
                    (after.name,),
                )
            )


def _mig_layout(change: ClusterChange, before: Pool, after: Pool) -> Iterator[Outcome]:
    _, new = change.both
    old_label = change.old_names.mig_config_label(before)
    new_label = change.new_names.mig_config_label(after)
    if before.gpu.id != after.gpu.id or old_label == new_label or new_label is None:
        return
    plan = steps.mig_relabel(change, after, new_label, ID, lambda batch: _republish(new, batch), batched=False)
    yield Outcome(
        Finding(
            ID,
            Level.DISRUPTIVE,
            f"pool {after.name}: MIG layout changes ({old_label} -> {new_label}): its GPUs are repartitioned and the "
            "DRA kubelet plugin restarts; drain first",
            after.name,
            (after.name,),
        ),
        tuple(plan),
    )


def _republish(cluster: Cluster, pool: Pool) -> Step:
    """After the mig-manager's success: the kubelet plugin finds static MIG devices (and MIG mode) only when it
    starts, so one that started first publishes the old layout or strands the GPU (research/dra.md §7)."""
    per_node = cluster.resources_per_node(pool)
    devices = ", ".join(f"{count} {resource}" for resource, count in sorted(per_node.items()))
    return Step(
        Action.RESTART_DEVICE_PLUGIN,
        commands.restart_dra_plugin(cluster),
        all_of(commands.dra_plugin_rollout(cluster), commands.show_resource_slices()),
        "the DRA kubelet plugin finds static MIG devices only when it starts: restart it once the mig-manager is "
        f"done, to publish per node {devices} (a rolling restart; prepared claims keep their devices)",
        pool.name,
        ID,
        Phase.SETTLE,
    )
