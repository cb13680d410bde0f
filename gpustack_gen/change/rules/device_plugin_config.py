"""A device-plugin config changes content under its stable key: apply, let it sync, restart, verify.

Neither the Operator nor the config-manager watches the ConfigMap's content (gpu-operator
``controllers/clusterpolicy_controller.go`` watches; k8s-device-plugin ``cmd/config-manager/main.go``
watches the node label only), and the plugin reads its config only when it starts
(``cmd/nvidia-device-plugin/main.go``): the change takes effect at the restart the plan includes. A
change of resource name (renameByDefault) or anything involving MPS drains the pool first: pods asking
for the old name could not be replaced, and the MPS daemon's restart breaks its clients.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...model.backends.gpu_operator import NAME
from ...model.fleet import DEFAULT_DEVICE_PLUGIN_KEY, Pool
from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome, Step

ID = "device-plugin-config"
LEVEL = Level.RESTART


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    old, new = change.both
    changed: list[tuple[Pool, Pool]] = change.device_plugin_changes
    default_changed = change.default_device_plugin_changes
    if not changed and not default_changed:
        return
    disruptive = [
        after
        for before, after in changed
        if set(old.resources_per_gpu(before)) != set(new.resources_per_gpu(after))
        or "mps" in (before.sharing.strategy, after.sharing.strategy)
    ]
    keys = [after.name for _, after in changed] + ([DEFAULT_DEVICE_PLUGIN_KEY] if default_changed else [])
    plan: list[Step] = [
        steps.apply_configmaps(
            change, new, f"new content for device-plugin key{'s' if len(keys) > 1 else ''} {', '.join(keys)}", ID
        ),
        # One wait covers every key: the kubelet writes the whole ConfigMap volume at once.
        steps.device_plugin_sync(new, keys[0], ID),
    ]
    drained = steps.pools_with_nodes(disruptive)
    plan += [
        step
        for pool in drained
        for step in steps.drain(
            pool,
            "the resource name changes or MPS is involved: pods on the pool must stop before the plugin restarts",
            ID,
        )
    ]
    if new.operator.install == "external" and change.old_names.uses_mps != change.new_names.uses_mps:
        plan.append(steps.operator(change, "the ClusterPolicy patch sets devicePlugin.mps.root for MPS", ID))
    plan.append(
        steps.restart_device_plugin(
            change,
            "the device plugin and GFD read their config only when they start: restart them to load the new "
            "content (a rolling restart, one node at a time)"
            + ("; the MPS control daemon too, for the MPS config" if change.mps_config_changes else ""),
            ID,
            mps_daemon=change.mps_config_changes,
        )
    )
    plan += [steps.allocatable(new, after, ID) for _, after in changed if after.nodes > 0]
    plan += [steps.uncordon(pool, ID) for pool in drained]
    details = [f"{after.name} ({before.sharing.describe()} -> {after.sharing.describe()})" for before, after in changed]
    follows = (
        change.new_names.default_from is not None and change.new_names.default_from == change.old_names.default_from
    )
    if default_changed and follows:
        details.append(f"{DEFAULT_DEVICE_PLUGIN_KEY} (unlabelled nodes) follows {change.new_names.default_from}")
    elif default_changed:
        details.append(
            f"{DEFAULT_DEVICE_PLUGIN_KEY} (unlabelled nodes: {change.old_names.default_sharing.describe()} -> "
            f"{change.new_names.default_sharing.describe()})"
        )
    shrink = [
        after.name
        for before, after in changed
        if before.sharing.is_shared and after.sharing.replicas < before.sharing.replicas
    ]
    note = (
        f"; pool{'s' if len(shrink) > 1 else ''} {', '.join(shrink)} shrink: running pods keep their slices, so the "
        "nodes stay over-committed until those pods end"
        if shrink
        else ""
    )
    for before, after in changed:
        lost = sorted(set(old.resources_per_gpu(before)) - set(new.resources_per_gpu(after)))
        if lost:
            now = ", ".join(sorted(new.resources_per_gpu(after)))
            users = sorted(f"{w.namespace}/{w.name}" for w in old.workloads if w.pool == before.name)
            note += (
                f"; pool {after.name} stops advertising {', '.join(lost)} (now {now}): its pods must be redeployed "
                f"with the new name ({', '.join(users) or 'none in the fleet; check pods outside it'})"
            )
    leaving = change.pools_leaving_default_key
    relabelled = ", ".join(pool.name for pool in leaving)
    labels = (
        f"no node label changes but those of pool{'s' if len(leaving) > 1 else ''} {relabelled}, whose nodes may have run on "
        f"{DEFAULT_DEVICE_PLUGIN_KEY} (unlabelled-nodes)"
        if relabelled
        else "no node label changes"
    )
    yield Outcome(
        Finding(
            ID,
            Level.DISRUPTIVE if disruptive else LEVEL,
            f"device-plugin config changes for {'; '.join(details)}: {labels}; apply the ConfigMap and restart the "
            f"device plugin and GFD, which do not reload it{note}",
            None,
            tuple(after.name for _, after in changed),
        ),
        tuple(plan),
    )
