"""The backend's namespace (the Operator's), so that ``kubectl apply -k`` can create the ConfigMaps before the chart
exists."""

from __future__ import annotations

from typing import Any

from ..model.fleet import Cluster
from .artifact import MANAGED_BY, Artifact

NAMESPACE_FILE = "namespace.yaml"


def namespace_object(cluster: Cluster, targets: tuple[str, ...], name: str) -> Artifact:
    """The Namespace; GitOps tools named in ``targets`` are told never to prune it."""
    annotations: dict[str, str] = {}
    if "argocd" in targets:
        annotations["argocd.argoproj.io/sync-options"] = "Prune=false"
    if "flux" in targets:
        annotations["kustomize.toolkit.fluxcd.io/prune"] = "disabled"
    metadata: dict[str, Any] = {
        "name": name,
        "labels": {**MANAGED_BY, "pod-security.kubernetes.io/enforce": "privileged"},
    }
    if annotations:
        metadata["annotations"] = annotations
    return Artifact(
        NAMESPACE_FILE,
        "namespace",
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata},),
        (
            "The Operator namespace, created before the ConfigMaps that live in it. Its pods are privileged,",
            "hence the pod-security label (GPU Operator install guide).",
        ),
    )
