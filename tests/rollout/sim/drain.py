"""``kubectl drain`` as kubectl v0.29.0 runs it, against PodDisruptionBudgets and pods without a controller.

* It fixes the node list at the start and cordons every selected node before draining any
  (``kubernetes/kubectl@v0.29.0 pkg/cmd/drain/drain.go:320,326-364``).
* Per node, the pod filters run first: a pod without a controller fails the node without ``--force``, one with
  an emptyDir without ``--delete-emptydir-data`` (``pkg/drain/filters.go:32-37,174-244``); a failed node keeps its
  pods and stays cordoned, the next node is drained (``pkg/cmd/drain/drain.go:346-364,367-371``).
* Evictions run in parallel per node (``pkg/drain/drain.go:280``); one a budget refuses (429) is retried every 5 s
  without limit (``:318-320``), until ``--timeout`` (default 0: forever, ``:270-276``), then ``global timeout
  reached``. A failed node makes the command exit 1 (``There are pending nodes to be drained``).
* ``--dry-run=client`` runs the filters and prints, but cordons and evicts nothing.

Forever is modelled as a day of simulated time: no plan step should wait that long.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cluster import Cluster, Node, SimulationError, WorkloadPod

RETRY_SECONDS = 5
FOREVER = 24 * 3600


@dataclass(frozen=True)
class DrainFlags:
    force: bool
    delete_emptydir: bool
    ignore_daemonsets: bool
    timeout: int  # seconds; 0: forever
    dry_run: bool


def _blocking(pods: list[WorkloadPod], flags: DrainFlags) -> list[str]:
    errors = []
    bare = [p.workload for p in pods if not p.controller]
    if bare and not flags.force:
        errors.append(f"cannot delete Pods that declare no controller (use --force to override): {', '.join(bare)}")
    local = [p.workload for p in pods if p.empty_dir]
    if local and not flags.delete_emptydir:
        errors.append(
            f"cannot delete Pods with local storage (use --delete-emptydir-data to override): {', '.join(local)}"
        )
    return errors


def disruption_allowed(cluster: Cluster, pod: WorkloadPod) -> bool:
    """The eviction API's check: the budget's healthy pods minus this one still meet minAvailable (the model's
    pods are Ready once they are bound)."""
    minimum = cluster.pdbs.get(pod.workload)
    if minimum is None:
        return True
    healthy = sum(1 for p in cluster.pods if p.workload == pod.workload and p.node is not None)
    return healthy - 1 >= minimum


def drain(cluster: Cluster, nodes: list[Node], flags: DrainFlags) -> None:
    if not flags.ignore_daemonsets:
        # Every GPU node runs the Operator's DaemonSets.
        raise SimulationError("error: cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)")
    if flags.dry_run:
        failed = {n.name: _blocking(cluster.pods_on(n.name), flags) for n in nodes}
        errors = [f'unable to drain node "{name}" due to error: {"; ".join(e)}' for name, e in failed.items() if e]
        if errors:
            raise SimulationError("; ".join(errors) + " (dry run)")
        return
    for node in nodes:
        node.unschedulable = True
    deadline = cluster.now + (flags.timeout or FOREVER)
    pending: list[str] = []
    for node in nodes:
        errors = _blocking(cluster.pods_on(node.name), flags)
        if errors:
            pending.append(
                f'unable to drain node "{node.name}" due to error: {"; ".join(errors)}, continuing command...'
            )
            continue
        for pod in [p for p in cluster.pods_on(node.name) if not p.controller]:
            cluster.pods.remove(pod)  # --force: deleted, nothing recreates it
        while True:
            left = cluster.pods_on(node.name)
            if not left:
                break
            for pod in left:
                if disruption_allowed(cluster, pod):
                    pod.node = None  # its controller recreates it; the scheduler places it where it fits
            cluster.settle()
            if not cluster.pods_on(node.name):
                break
            if cluster.now >= deadline:
                if not flags.timeout:
                    raise SimulationError(
                        f"kubectl drain never returns: evictions on {node.name} are refused by a "
                        "PodDisruptionBudget and retried every 5s without --timeout"
                    )
                raise SimulationError(f'unable to drain node "{node.name}": global timeout reached')
            cluster.advance(RETRY_SECONDS)
    if pending:
        raise SimulationError(" ".join(pending) + " There are pending nodes to be drained (exit 1)")
