"""``load_fleet``: from a path, YAML text or a mapping to a checked :class:`Fleet`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..errors import FleetError, Problem, Severity
from ..gcpause import gc_paused
from ..yamlio.source import SourceDocument, read_source
from . import intent
from .backends import RANGE_HINTS
from .checks import check_cluster, check_unused_sharing_entries
from .fleet import Fleet
from .resolve import Report, resolve_cluster
from .validation_errors import problems_from_validation_error

if TYPE_CHECKING:
    from .share import ClusterShare, Taken


def load_fleet(
    source: str | Path | Mapping[str, Any], *, name: str | None = None, share: ClusterShare | None = None
) -> Fleet:
    """Read, validate and resolve a fleet.

    ``source`` is a path, YAML text, or an already parsed mapping. Raises :class:`FleetError` with
    every problem found; warnings of a valid fleet are on ``Fleet.warnings``. Two loads given one
    ``share`` (the two versions a diff compares) resolve each cluster they have in common once, and the
    second parses only the clusters whose text differs (``yamlio/reread.py``).
    """
    # One pause for reading and checking: the objects the reader builds are scanned by no collection.
    with gc_paused():
        if isinstance(source, Mapping):
            doc = SourceDocument(name or "<mapping>", dict(source), {}, {})
        elif share is None:
            doc = read_source(source, name=name)
        else:
            previous, keep = share.reading_options()
            doc = read_source(source, name=name, previous=previous, keep=keep)
        return fleet_from_document(doc, share)


def fleet_from_document(doc: SourceDocument, share: ClusterShare | None = None) -> Fleet:
    with gc_paused():
        return _fleet_from_document(doc, share)


def _fleet_from_document(doc: SourceDocument, share: ClusterShare | None) -> Fleet:
    taken = share.take(doc) if share is not None and share.filled else {}
    keep = share is not None and not share.filled
    try:
        spec = intent.FleetSpec.model_validate(_with_models(doc.data, taken))
    except ValidationError as exc:
        raise FleetError(problems_from_validation_error(exc, doc, intent.FleetSpec, RANGE_HINTS)) from None
    report = Report(doc)
    _check_cluster_names(spec, report)
    resolved = []
    for index, cluster_spec in enumerate(spec.clusters):
        if index in taken:
            taken[index].warn_again(report)
            resolved.append(taken[index].resolved)
            continue
        found_before = len(report.problems)
        found = resolve_cluster(cluster_spec, index, spec.defaults, report)
        if found is None:
            continue
        check_cluster(*found, report)
        resolved.append(found)
        if keep:
            assert share is not None
            share.keep(doc, index, found, report, found_before, cluster_spec)
    if share is not None:
        share.fill(doc)
    _check_sharing_keys(spec, report)
    if not report.error_count():  # which entries apply is only known once every pool resolved
        check_unused_sharing_entries(resolved, report)
    clusters = [cluster for cluster, _ in resolved]
    problems = _dedupe(report.problems)
    if any(p.severity is Severity.ERROR for p in problems):
        raise FleetError(problems)
    return Fleet(source=doc.name, clusters=tuple(clusters), warnings=tuple(sorted(problems)))


def _with_models(data: Any, taken: Mapping[int, Taken]) -> Any:
    """``data`` with each taken cluster's item replaced by its validated model, which pydantic takes as it is."""
    models = {index: entry.model for index, entry in taken.items() if entry.model is not None}
    if not models:
        return data
    clusters = list(data["clusters"])
    for index, model in models.items():
        clusters[index] = model
    return {**data, "clusters": clusters}


def _check_cluster_names(spec: intent.FleetSpec, report: Report) -> None:
    seen: dict[str, int] = {}
    for index, cluster in enumerate(spec.clusters):
        if cluster.name in seen:
            report.error(
                ("clusters", index, "name"),
                f"duplicate cluster name {cluster.name!r} (also clusters[{seen[cluster.name]}])",
                "cluster names are unique in a fleet; each is an output folder",
            )
        seen.setdefault(cluster.name, index)


def _check_sharing_keys(spec: intent.FleetSpec, report: Report) -> None:
    from ..catalog import get_gpu, suggest_gpus

    tables: list[tuple[tuple[str | int, ...], dict[str, intent.SharingPolicy] | None]] = [
        (("defaults", "sharing"), spec.defaults.sharing if spec.defaults else None)
    ]
    tables += [(("clusters", i, "sharing"), c.sharing) for i, c in enumerate(spec.clusters)]
    for base, table in tables:
        named: dict[str, str] = {}  # GPU model id -> the first key of this table that names it
        for key in table or {}:
            if key == "default":
                continue
            gpu = get_gpu(key)
            if gpu is None:
                close = suggest_gpus(key)
                report.error(
                    (*base, key),
                    f"{key!r} is neither 'default' nor a GPU model",
                    f"did you mean {' or '.join(repr(c) for c in close)}?" if close else "",
                    key=True,
                )
            elif gpu.id in named:
                report.error(
                    (*base, key),
                    f"{named[gpu.id]!r} and {key!r} both name {gpu.id}",
                    f"keep one entry per GPU model: merge this one into {named[gpu.id]!r}",
                    key=True,
                )
            else:
                named[gpu.id] = key


def _dedupe(problems: list[Problem]) -> list[Problem]:
    # A fleet-wide default that is wrong would otherwise be reported once per cluster that inherits it.
    return sorted(set(problems))
