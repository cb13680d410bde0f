"""Checks of the GitOps wrappers: the project's strict schema, and agreement with the values they carry.

The schema (``schemas/gitops.schema.json``) covers exactly the subset gpustack-gen writes; the upstream
CRDs are held against the same documents in the test suite. :func:`wrapper_disagreements` makes sure no
wrapper pins another chart version or carries other values than ``gpu-operator-values.yaml``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpustack_gen.validate.findings import SchemaFinding, schema_findings
from gpustack_gen.validate.schema_files import schema_validator

SCHEMA_NAME = "gitops.schema.json"

__all__ = ["SCHEMA_NAME", "check_gitops_document", "pinned_chart", "wrapper_disagreements"]


def check_gitops_document(document: Mapping[str, Any]) -> list[SchemaFinding]:
    """Findings of one wrapper document (a Kubernetes object or a helmfile) against the strict schema."""
    return schema_findings(schema_validator(SCHEMA_NAME), document)


def pinned_chart(document: Mapping[str, Any]) -> tuple[str | None, Any]:
    """(chart version, inline values) a wrapper document pins; values is None where it has none inline."""
    kind = document.get("kind")
    spec = document.get("spec", {})
    if kind == "Application":
        source = spec.get("source", {})
        return source.get("targetRevision"), source.get("helm", {}).get("valuesObject")
    if kind == "HelmRelease":
        version = spec.get("chart", {}).get("spec", {}).get("version")
        return version, spec.get("values")
    if kind == "OCIRepository":
        return spec.get("ref", {}).get("tag"), None
    if "releases" in document:
        releases = document["releases"]
        return (releases[0].get("version") if releases else None), None
    return None, None


def wrapper_disagreements(
    version: str, values: Mapping[str, Any], documents: Iterable[tuple[str, Mapping[str, Any]]]
) -> list[tuple[str, str]]:
    """(path, message) for every wrapper document that pins another version or carries other values."""
    problems: list[tuple[str, str]] = []
    for path, document in documents:
        pinned, carried = pinned_chart(document)
        if document.get("kind") in ("Application", "HelmRelease", "OCIRepository") or "releases" in document:
            if pinned is None and not (document.get("kind") == "HelmRelease" and "chartRef" in document["spec"]):
                problems.append((path, f"{document.get('kind', 'helmfile')} pins no chart version"))
            elif pinned is not None and pinned != version:
                problems.append((path, f"pins chart version {pinned}, the values are for {version}"))
        if carried is not None and carried != values:
            problems.append((path, "carries other values than gpu-operator-values.yaml"))
    return problems
