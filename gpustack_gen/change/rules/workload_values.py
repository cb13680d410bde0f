"""Workloads whose values fragment changes, or that are new: redeploy them with the fragment.

The fragment goes last and without ``--reuse-values``: Helm merges maps key by key, so a reused
``limits.nvidia.com/gpu`` would stay beside a new ``nvidia.com/gpu.shared`` and the pod would ask for
both and never schedule.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...compile.workloads import workload_values
from .. import steps
from ..context import ClusterChange
from ..model import Finding, Level, Outcome

ID = "workload-values"
LEVEL = Level.RESTART


def outcomes(change: ClusterChange) -> Iterator[Outcome]:
    if change.old is None or change.new is None:
        return
    old, new = change.both
    before = {(w.namespace, w.name): w for w in old.workloads}
    changed, added = [], []
    # Some backends' moves redeploy every workload pool by pool, as each pool moves.
    moving = old.backend != new.backend and (old.semantics.REDEPLOYS_ON_MOVE or new.semantics.REDEPLOYS_ON_MOVE)
    for workload in [] if moving else new.workloads:
        previous = before.get((workload.namespace, workload.name))
        if previous is None:
            added.append(workload)
        elif workload_values(old, previous) != workload_values(new, workload) or (
            previous.helm != workload.helm and workload.helm is not None
        ):
            changed.append(workload)
    kept = {(w.namespace, w.name) for w in new.workloads}
    removed = [w for w in old.workloads if (w.namespace, w.name) not in kept]
    if changed or added:
        plan = [
            steps.update_workload(
                change, new, w, f"redeploy {w.namespace}/{w.name} with its new GPU resources and scheduling", ID
            )
            for w in changed
        ]
        plan += [steps.update_workload(change, new, w, f"deploy {w.namespace}/{w.name}", ID) for w in added]
        names = [f"{w.namespace}/{w.name}" for w in changed]
        new_names = [f"{w.namespace}/{w.name}" for w in added]
        parts = []
        if names:
            parts.append(f"values fragments change for {', '.join(sorted(names))}: redeploying rolls their pods")
        if new_names:
            parts.append(f"new workloads {', '.join(sorted(new_names))}")
        yield Outcome(Finding(ID, LEVEL, "; ".join(parts), None, tuple(sorted(names + new_names))), tuple(plan))
    if removed:
        names = sorted(f"{w.namespace}/{w.name}" for w in removed)
        yield Outcome(
            Finding(
                ID,
                Level.NONE,
                f"workloads leave the fleet: {', '.join(names)}; their fragments are no longer rendered (remove "
                "their GPU values, or the workloads themselves)",
                None,
                tuple(names),
            )
        )
