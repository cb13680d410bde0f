"""The standalone device plugin chart's version or values change on a cluster that stays on it: helm upgrade.

With ``config.map`` the pod template carries ``checksum/config``, the sha256 of the rendered ConfigMap
(chart-v0.17.4 ``templates/_helpers.tpl:250-258``), so a changed config, like any changed value the template
renders, rolls every plugin pod under the chart's ``RollingUpdate`` (``values.yaml:54-55``): one node at a time,
each advertising nothing while its pod restarts (``../shared/research/standalone-plugin.md`` §1). Helm writes the
new template itself, so ``rollout status`` right after it waits for that roll. A node without its config label
can hang the new pod's config-manager before device plugin v0.18.2 (real-world.md §6): the upgrade goes only once
every GPU node carries it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from .....compile.backends import backend_of
from .....compile.node_labels import config_manager_handles_unlabelled_nodes
from .....model.backends.device_plugin import NAME
from .....shell import all_of
from .... import commands, steps
from ....context import ClusterChange
from ....model import Finding, Level, Outcome, Step

ID = "device-plugin-values"
LEVEL = Level.RESTART


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    old, new = change.both
    (before,) = backend_of(old).releases(old)
    (after,) = backend_of(new).releases(new)
    if (before.version, before.namespace, before.values) == (after.version, after.namespace, after.values):
        return
    if before.namespace != after.namespace:
        yield Outcome(
            Finding(
                ID,
                Level.ERROR,
                f"the standalone device plugin moves from namespace {before.namespace} to {after.namespace}: a second "
                "release there would run a second plugin on every node",
                None,
                (),
                "keep devicePlugin.namespace as it is",
            )
        )
        return
    what = [f"chart {before.version} -> {after.version}"] if before.version != after.version else []
    changed = [
        (p, pool) for p, pool in change.common_pools if old.resources_per_node(p) != new.resources_per_node(pool)
    ]
    what += [f"{pool.name}: {p.sharing.describe()} -> {pool.sharing.describe()}" for p, pool in changed]
    upgrade = steps.release(
        change, new, after, f"the standalone device plugin changes ({'; '.join(what or ['values'])})", ID
    )
    plugin = new.device_plugin_version
    if not config_manager_handles_unlabelled_nodes(plugin):
        assert upgrade.command is not None
        upgrade = replace(
            upgrade,
            command=all_of(commands.every_gpu_node_labelled(), upgrade.command),
            reason=upgrade.reason
            + f"; the config-manager of device plugin {plugin} can block forever on a GPU node without its config "
            "label (fixed in v0.18.2), stopping the roll there: the upgrade runs only once every GPU node carries it",
        )
    plan: list[Step] = [upgrade]
    plan += [steps.allocatable(new, pool, ID) for _, pool in changed if pool.nodes > 0]
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"the standalone device plugin changes ({'; '.join(what or ['values'])}): helm upgrade rolls every plugin "
            "pod, one node at a time, each node advertising nothing while its pod restarts",
            None,
            tuple(pool.name for _, pool in changed),
        ),
        tuple(plan),
    )
