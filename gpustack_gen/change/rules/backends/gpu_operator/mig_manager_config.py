"""The cluster gets its first MIG-capable pool, or loses its last: the values name the mig-parted ConfigMap.

Changing ``migManager.config.name`` rolls the mig-manager on every node; each restarted mig-manager
re-asserts the config its node is labelled with (mig-parted ``cmd/nvidia-mig-manager/main.go``: Add
replays the label at start), which is already applied: success, no change.
"""

from __future__ import annotations

from collections.abc import Iterator

from .....compile.artifact import MIG_MANAGER_DAEMONSET
from .....model.backends.gpu_operator import NAME
from .... import steps
from ....context import ClusterChange
from ....model import Finding, Level, Outcome

ID = "mig-manager-config"
LEVEL = Level.RESTART


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if not change.on(NAME):
        return
    before, after = change.old_names.uses_mig_parted_config, change.new_names.uses_mig_parted_config
    if before == after:
        return
    _, new = change.both
    what = "names the cluster's mig-parted ConfigMap" if after else "no longer names a mig-parted ConfigMap"
    plan = [steps.operator(change, f"migManager.config {what}", ID)]
    if after:
        plan.append(steps.rollout_wait(new, (MIG_MANAGER_DAEMONSET,), "the mig-manager rolls on every node", ID))
    yield Outcome(
        Finding(ID, LEVEL, f"the Operator's migManager.config {what}: the mig-manager restarts on every node"),
        tuple(plan),
    )
