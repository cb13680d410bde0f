"""An Operator DaemonSet the backend needs is missing or not fully rolled out (desired vs ready vs updated).

The Operator rolls its DaemonSets one node at a time (``maxUnavailable: 1``), and a broken template stalls
after the first node; in v25.3.3 the ClusterPolicy can show ``ready`` before a rollout ends
(``isDaemonSetReady``), so the DaemonSets' own counts are what tells.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Severity
from ...k8s_state import DaemonSet, Pod
from ..expected import Expected
from ..model import Finding
from ..observed import Observed

ID = "operator-pods"
NEEDS = ("operator",)
_MAX_PODS = 3


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    namespace = expected.cluster.operator.namespace
    daemonsets = {ds.name: ds for ds in observed.state.daemonsets or () if ds.namespace in (namespace, None)}
    gpu_nodes = sum(len(observed.nodes_of(pool)) for pool in expected.pools)
    for name in expected.backend.daemonsets(expected.cluster):
        subject = f"DaemonSet {namespace}/{name}"
        ds = daemonsets.get(name)
        if ds is None:
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: absent", None, None, "rolled out", None,
                "the ClusterPolicy does not enable it, or the Operator cannot create it: "
                f"kubectl -n {namespace} logs deploy/gpu-operator",
            )  # fmt: skip
            continue
        counts = {"desired": ds.desired, "ready": ds.ready, "updated": ds.updated}
        text = ", ".join(f"{k} {v}" for k, v in counts.items())
        if ds.desired == 0 and gpu_nodes:
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: runs on no node ({text})", None, None, "rolled out", counts,
                "its nodeSelector matches no GPU node: check the nodes' nvidia.com/gpu.deploy.* labels and NFD",
            )  # fmt: skip
        elif not ds.current_generation or ds.ready < ds.desired or ds.updated < ds.desired:
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: not rolled out ({text})", None, None, "rolled out", counts,
                _pods_hint(ds, observed.state.pods or (), namespace),
            )  # fmt: skip


def _pods_hint(ds: DaemonSet, pods: tuple[Pod, ...], namespace: str) -> str:
    status = f"kubectl -n {namespace} rollout status daemonset/{ds.name}"
    waiting = []
    logs = None
    for pod in pods:
        if pod.owner != ds.name or pod.ready:
            continue
        failing = [c for c in pod.containers if not c.ready and (c.waiting or c.last_exit)]
        states = ", ".join(f"{c.name} {c.waiting or c.last_exit}" for c in failing)
        waiting.append(f"{pod.name} on {pod.node_name or 'no node'}" + (f" ({states})" if states else ""))
        if failing and logs is None:
            logs = f"kubectl -n {namespace} logs {pod.name} -c {failing[0].name}"
    if not waiting:
        return f"a rollout is under way or stalled: {status}"
    more = f" and {len(waiting) - _MAX_PODS} more" if len(waiting) > _MAX_PODS else ""
    return f"not ready: {'; '.join(waiting[:_MAX_PODS])}{more}; " + (f"{logs}, " if logs else "") + status
