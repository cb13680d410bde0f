"""The driver changes (enabled, pinned version, or the chart's default under a new chart version)."""

from __future__ import annotations

from collections.abc import Iterator

from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome, Phase

ID = "driver"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None or not change.operator_on_both():
        return
    old, new = change.both
    before, after = old.operator, new.operator
    release_changed = before.release.version != after.release.version
    what = []
    if before.driver_enabled != after.driver_enabled:
        what.append(f"driver.enabled {str(before.driver_enabled).lower()} -> {str(after.driver_enabled).lower()}")
    elif after.driver_enabled and before.driver_version != after.driver_version:
        what.append(
            f"driver.version {before.driver_version or 'chart default'} -> {after.driver_version or 'chart default'}"
        )
    elif (
        after.driver_enabled
        and after.driver_version is None
        and release_changed
        and (before.release.driver is None or before.release.driver != after.release.driver)
    ):
        what.append(
            f"driver.version: chart default of {before.release.version} ({before.release.driver or 'unknown'}) "
            f"-> chart default of {after.release.version} ({after.release.driver or 'unknown'})"
        )
    if not what:
        return
    plan = [steps.operator(change, f"the driver changes ({'; '.join(what)})", ID)]
    if after.driver_enabled:
        why = "each node's driver reload restarts its device plugin"
        plan[:0] = [*steps.every_gpu_node_labelled(new, why, ID)]
        if not after.driver_upgrade.force:
            plan.insert(0, steps.no_bare_gpu_pods(ID))
    if after.driver_enabled:
        version = after.driver_version or after.release.driver
        plan.append(
            steps.driver_wait(
                new,
                version,
                "the driver upgrade controller cordons, drains and upgrades the GPU nodes as driver.upgradePolicy "
                "says (one at a time by default), and each node's GFD reports the driver it loaded"
                + ("" if version is None else f" ({version})"),
                ID,
                Phase.SETTLE,
            )
        )
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"driver changes ({'; '.join(what)}): the driver pods roll and each GPU node is cordoned and drained as "
            "the upgrade policy (driver.upgradePolicy) says; its GPU pods stop",
            None,
            tuple(p.name for p in new.pools),
        ),
        tuple(plan),
    )
