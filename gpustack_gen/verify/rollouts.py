"""Whether a DaemonSet or Deployment has rolled out, and which of its pods hold it back, for hints."""

from __future__ import annotations

from ..k8s_state import DaemonSet, Deployment, Pod
from ..model.fleet import Cluster
from . import commands
from .pod_failures import show_command

_MAX_PODS = 3

Workload = DaemonSet | Deployment


def counts(workload: Workload) -> dict[str, int]:
    return {"desired": workload.desired, "ready": workload.ready, "updated": workload.updated}


def counts_text(workload: Workload) -> str:
    """``desired 3, ready 2, updated 3``."""
    return ", ".join(f"{k} {v}" for k, v in counts(workload).items())


def rolled_out(workload: Workload) -> bool:
    return workload.current_generation and workload.ready >= workload.desired and workload.updated >= workload.desired


def owns(workload: Workload, pod: Pod) -> bool:
    """Whether ``pod`` is the workload's: a DaemonSet owns its pods, a Deployment through a ReplicaSet named
    ``<deployment>-<pod-template-hash>``."""
    if pod.owner is None or pod.namespace not in (workload.namespace, None):
        return False
    if isinstance(workload, DaemonSet):
        return pod.owner == workload.name
    return pod.owner.rpartition("-")[0] == workload.name


def pods_hint(cluster: Cluster, workload: Workload, pods: tuple[Pod, ...], namespace: str) -> str:
    """The pods that are not ready (with their failing containers), the command that shows why (a container's log,
    or the pod's description where it never started), and the rollout status."""
    kind = "daemonset" if isinstance(workload, DaemonSet) else "deployment"
    status = commands.run(cluster, "-n", namespace, "rollout", "status", f"{kind}/{workload.name}")
    waiting = []
    logs = None
    for pod in pods:
        if not owns(workload, pod) or pod.ready:
            continue
        failing = pod.failing
        states = ", ".join(f"{c.name} {c.waiting or c.last_exit}" for c in failing)
        waiting.append(f"{pod.name} on {pod.node_name or 'no node'}" + (f" ({states})" if states else ""))
        if failing and logs is None:
            logs = show_command(cluster, pod, failing[0], namespace)
    if not waiting:
        return f"a rollout is under way or stalled: {status}"
    more = f" and {len(waiting) - _MAX_PODS} more" if len(waiting) > _MAX_PODS else ""
    return f"not ready: {'; '.join(waiting[:_MAX_PODS])}{more}; " + (f"{logs}, " if logs else "") + status


def not_ready_yet(cluster: Cluster, pod: Pod, namespace: str) -> str:
    """A pod none of whose containers fails, yet not ready: its events say why."""
    return f"pod {pod.name} is not ready yet ({pod.phase or 'no phase'}): " + commands.describe(
        cluster, namespace, "pod", pod.name
    )
