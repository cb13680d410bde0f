"""A ClusterPolicy, or a ``spec:``-only patch of one: its ``apiVersion``, and its spec's keys as
``operator-keys`` checks them (an unknown field is pruned by the API server, so Argo CD never syncs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..detect import DocumentKind
from ..locate import Source
from ..reporter import LintOptions, Reporter
from . import operator_keys

ID = "clusterpolicy"
KINDS: tuple[DocumentKind, ...] = ("clusterpolicy", "clusterpolicy-patch")


def check(doc: Any, kind: DocumentKind, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    with r.running(ID):
        if kind == "clusterpolicy" and doc.get("apiVersion") != "nvidia.com/v1":
            r.add(source, prefix, "apiVersion", f"expected 'nvidia.com/v1', got {doc.get('apiVersion')!r}")
        spec = doc.get("spec")
        if not isinstance(spec, Mapping):
            r.add(source, prefix, "spec", "expected a mapping under spec")
            return
        # Nested ruamel nodes carry absolute positions: the spec mapping is a source of its own.
        operator_keys.check_subset(spec, "clusterpolicy-spec", Source(spec, anchor=source.anchor), "spec", r, o)
