"""The kustomization that applies the cluster's Kubernetes objects (the namespace, the ConfigMaps, DRA objects)."""

from __future__ import annotations

from collections.abc import Iterable

from ..shell import Pipe, Script, all_of, kubectl, text_in
from .artifact import Artifact


def apply_folder(context: str) -> str:
    """``kubectl apply -k .`` on ``context``, as a header says it: run in the folder the header's file is in."""
    return text_in(context, kubectl("apply", "-k", "."))


def namespaces_command(namespaces: Iterable[str]) -> Script:
    """Creates the namespaces where they are missing. Not part of the cluster folder: a namespace dropped from it
    would be pruned with everything in it."""
    return all_of(
        *(
            Pipe((kubectl("create", "namespace", name, "--dry-run=client", "-o", "yaml"), kubectl("apply", "-f", "-")))
            for name in sorted(set(namespaces))
        )
    )


def kustomization(objects: list[Artifact], context: str) -> Artifact:
    """``context``: the kube context the header's commands name."""
    documents = [document for artifact in objects for document in artifact.documents]
    created = {d["metadata"]["name"] for d in documents if d.get("kind") == "Namespace"}
    elsewhere = {d["metadata"].get("namespace") for d in documents} - created - {None}
    notes = [f"{apply_folder(context)} before installing or upgrading the GPU Operator: it reads the ConfigMaps."]
    if elsewhere:  # workloads' namespaces (DRA claims): an apply into a missing one fails
        notes.insert(
            0, f"Create the namespaces its objects go into first: {text_in(context, namespaces_command(elsewhere))}"
        )
    return Artifact(
        "kustomization.yaml",
        "kustomization",
        (
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [a.path for a in objects],
            },
        ),
        tuple(notes),
    )
