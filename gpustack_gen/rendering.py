"""``render``: compile every cluster, validate every artifact, serialize to a :class:`Bundle`."""

from __future__ import annotations

from collections.abc import Iterable

from .compile import compile_cluster
from .compile.gitops import WRAPPERS
from .emit import Bundle, RenderedFile, dump_yaml, header
from .errors import FleetError, Problem
from .gcpause import gc_paused
from .model import Cluster, Fleet
from .validate.artifacts import validate_artifacts


def render(fleet: Fleet, clusters: Iterable[str] | None = None, wrap: Iterable[str] = ()) -> Bundle:
    """Render ``fleet`` (or only the named clusters) to files; raises InternalError on a bad artifact.

    ``wrap`` adds GitOps wrappers (argocd, flux, helmfile) to every cluster, beside those the fleet asks for.
    """
    selected = _select(fleet, clusters)
    wrappers = _wrappers(fleet, wrap)
    with gc_paused():
        return _render(fleet, selected, wrappers, scoped=clusters is not None)


def _render(fleet: Fleet, selected: list[Cluster], wrappers: tuple[str, ...], *, scoped: bool) -> Bundle:
    files: dict[str, RenderedFile] = {}
    for cluster in selected:
        artifacts = compile_cluster(cluster, wrappers)
        validate_artifacts(cluster, artifacts)
        for artifact in artifacts:
            path = f"{cluster.name}/{artifact.path}"
            body = "".join(
                dump_yaml(doc) if i == 0 else "---\n" + dump_yaml(doc) for i, doc in enumerate(artifact.documents)
            )
            text = header(fleet.source, cluster.name, artifact.notes) + body
            files[path] = RenderedFile(path, artifact.kind, text, artifact.documents)
    scope = tuple(c.name for c in selected) if scoped else None
    return Bundle(files, scope)


def _wrappers(fleet: Fleet, wrap: Iterable[str]) -> tuple[str, ...]:
    names = (wrap,) if isinstance(wrap, str) else tuple(wrap)  # "argocd" is one name, not six letters
    unknown = [n for n in names if n not in WRAPPERS]
    if unknown:
        raise FleetError(
            [
                Problem(fleet.source, 0, 0, "", f"unknown wrapper {n!r}", "choose argocd, flux or helmfile")
                for n in unknown
            ]
        )
    return names


def _select(fleet: Fleet, names: Iterable[str] | None) -> list[Cluster]:
    if names is None:
        return list(fleet.clusters)
    wanted = list(dict.fromkeys([names] if isinstance(names, str) else names))  # "prod" is one name
    unknown = [n for n in wanted if fleet.cluster(n) is None]
    if unknown:
        known = ", ".join(c.name for c in fleet.clusters)
        raise FleetError(
            [
                Problem(fleet.source, 0, 0, "", f"no cluster named {n!r} in the fleet", f"clusters: {known}")
                for n in unknown
            ]
        )
    return [c for c in fleet.clusters if c.name in wanted]
