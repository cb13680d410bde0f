"""The MPS control daemon restarts on nodes whose pods use it: drain those pools first, uncordon after.

Its pod restarts when the Operator rolls its DaemonSet (a new device-plugin version, config name or default,
MIG strategy or CDI setting) or when the plan restarts it to load a changed MPS config. Stopping, it sends
``quit`` to the MPS control daemon and resets the compute mode (k8s-device-plugin
``cmd/mps-control-daemon/main.go:115-151``, ``mps/daemon.go:160-185``): clients of that MPS server lose it and
their CUDA calls fail (rollout notes §1; invariant 9: drain before any change on MPS nodes).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...model.backends.gpu_operator import NAME
from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome, Step

ID = "mps-clients"
LEVEL = Level.DISRUPTIVE


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    old, _ = change.both
    reconfigured = {before.name for before, _ in change.device_plugin_changes}  # drained by device-plugin-config
    pools = steps.pools_with_nodes(
        [pool for pool in old.pools if pool.sharing.strategy == "mps" and pool.name not in reconfigured]
    )
    causes = []
    if change.device_plugin_rolls():
        causes.append("the Operator rolls its DaemonSet")
    if change.mps_config_changes:
        causes.append("the plan restarts it to load a changed MPS config")
    if not pools or not causes:
        return
    reason = "the MPS control daemon restarts here and ends the MPS server its pods use: stop them first"
    plan: list[Step] = [step for pool in pools for step in steps.drain(pool, reason, ID)]
    now = {**change.new_pools, **{before.name: after for before, after in change.renamed_pools}}
    plan += [steps.uncordon(now[pool.name], ID) for pool in pools if pool.name in now]
    names = ", ".join(pool.name for pool in pools)
    yield Outcome(
        Finding(
            ID,
            LEVEL,
            f"the MPS control daemon restarts on pool{'s' if len(pools) > 1 else ''} {names} ({'; '.join(causes)}): "
            "its pods lose their MPS server, so "
            + ("the pools are" if len(pools) > 1 else "the pool is")
            + " drained first and uncordoned after",
            None,
            tuple(pool.name for pool in pools),
        ),
        tuple(plan),
    )
