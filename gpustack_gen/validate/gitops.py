"""Checks of the GitOps wrappers: the project's strict schema, and agreement with the values they carry.

The schema (``schemas/gitops.schema.json``) covers exactly the subset gpustack-gen writes; the upstream
CRDs are held against the same documents in the test suite. :func:`wrapper_disagreements` makes sure no
wrapper pins another chart version or carries other values than the values file of its chart
(``gpu-operator-values.yaml``, or a backend's own, such as ``hami-values.yaml`` or ``dra-driver-values.yaml``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpustack_gen.validate.findings import SchemaFinding, schema_findings
from gpustack_gen.validate.memo import MEMO_SIZE
from gpustack_gen.validate.schema_files import schema_validator
from gpustack_gen.validate.shape import ValidShapes, checked_by_shape

SCHEMA_NAME = "gitops.schema.json"

__all__ = ["SCHEMA_NAME", "check_gitops_document", "pinned_charts", "wrapper_disagreements"]


def check_gitops_document(document: Mapping[str, Any]) -> list[SchemaFinding]:
    """Findings of one wrapper document (a Kubernetes object or a helmfile) against the strict schema."""
    validator = schema_validator(SCHEMA_NAME)
    return checked_by_shape(_valid_shapes, (), validator.schema, document, lambda: schema_findings(validator, document))


_valid_shapes = ValidShapes(MEMO_SIZE)


def pinned_charts(document: Mapping[str, Any]) -> list[tuple[str | None, str | None, Any]]:
    """(chart, version, inline values) of each chart a wrapper document pins; values is None where it has none
    inline, version None where it pins none (a HelmRelease's chartRef leaves the version to its source)."""
    kind = document.get("kind")
    spec = document.get("spec", {})
    if kind == "Application":
        source = spec.get("source", {})
        chart = source.get("chart")
        url = str(source.get("repoURL", ""))
        if chart is None and url.startswith("oci://"):  # an OCI source: its URL ends with the chart
            chart = url.rsplit("/", 1)[-1]
        return [(chart, source.get("targetRevision"), source.get("helm", {}).get("valuesObject"))]
    if kind == "HelmRelease":
        if "chartRef" in spec:
            return [(spec["chartRef"].get("name"), None, spec.get("values"))]
        chart = spec.get("chart", {}).get("spec", {})
        return [(chart.get("chart"), chart.get("version"), spec.get("values"))]
    if kind == "OCIRepository":
        return [(document.get("metadata", {}).get("name"), spec.get("ref", {}).get("tag"), None)]
    if "releases" in document:
        return [(str(r.get("chart", "")).rsplit("/", 1)[-1], r.get("version"), None) for r in document["releases"]]
    return []


def wrapper_disagreements(
    charts: Mapping[str, tuple[str, Mapping[str, Any], str]], documents: Iterable[tuple[str, Mapping[str, Any]]]
) -> list[tuple[str, str]]:
    """(path, message) for every wrapper document that pins another version or carries other values.

    ``charts`` maps each chart the cluster installs to (its version, its values, the values file's name).
    """
    problems: list[tuple[str, str]] = []
    for path, document in documents:
        chart_ref = document.get("kind") == "HelmRelease" and "chartRef" in document.get("spec", {})
        for chart, pinned, carried in pinned_charts(document):
            if chart is None or chart not in charts:
                problems.append((path, f"wraps chart {chart}, which no values file of the cluster is for"))
                continue
            version, values, values_file = charts[chart]
            if pinned is None and not chart_ref:
                problems.append((path, f"{document.get('kind', 'helmfile')} pins no chart version"))
            elif pinned is not None and pinned != version:
                problems.append((path, f"pins chart version {pinned}, the values are for {version}"))
            if carried is not None and carried != values:
                problems.append((path, f"carries other values than {values_file}"))
    return problems
