"""The commands verify's hints print, each naming the cluster's kube context (built by :mod:`gpustack_gen.shell`).

Node, pod and container names come from the cluster's state (files or the API): they are arguments, never text
formatted into a command.
"""

from __future__ import annotations

from ..model.fleet import Cluster
from ..shell import Script, kubectl, text_in


def shown(cluster: Cluster, script: Script) -> str:
    return text_in(cluster.kube_context, script)


def run(cluster: Cluster, *args: str) -> str:
    """``kubectl --context C ARGS`` as text."""
    return shown(cluster, kubectl(*args))


def label_node(cluster: Cluster, node: str, label: str, value: str) -> str:
    return run(cluster, "label", "node", node, f"{label}={value}", "--overwrite")


def logs(cluster: Cluster, namespace: str, pod: str, container: str | None = None) -> str:
    """The pod's log: of ``container``, or of all its containers."""
    which = ("-c", container) if container is not None else ("--all-containers",)
    return run(cluster, "-n", namespace, "logs", pod, *which)


def pods_on(cluster: Cluster, namespace: str, node: str, *selector: str) -> str:
    """The pods of ``namespace`` (``selector``: ``-l`` and a label selector) on one node, with where they run."""
    return run(
        cluster, "-n", namespace, "get", "pods", "-o", "wide", *selector, "--field-selector", f"spec.nodeName={node}"
    )


def describe(cluster: Cluster, namespace: str, kind: str, name: str) -> str:
    return run(cluster, "-n", namespace, "describe", kind, name)
