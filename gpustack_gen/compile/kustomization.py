"""The kustomization that applies the cluster's Kubernetes objects (the namespace and the ConfigMaps)."""

from __future__ import annotations

from .artifact import Artifact


def kustomization(objects: list[Artifact]) -> Artifact:
    return Artifact(
        "kustomization.yaml",
        "kustomization",
        (
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [artifact.path for artifact in objects],
            },
        ),
        ("kubectl apply -k . before installing or upgrading the GPU Operator: it reads the ConfigMaps.",),
    )
