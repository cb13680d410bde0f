"""A ConfigMap the backend renders is missing from the cluster, or holds other content than the render.

Each key is compared as data (the YAML files it holds, parsed), so formatting does not count. The device
plugin and the mig-manager read these files only when they start or when a node's label changes, so
content that differs now is what the next restart loads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import Severity
from .. import commands
from ..expected import Expected, RenderedConfigMap
from ..model import Finding, differs, first_difference
from ..observed import Observed

ID = "configmap-drift"
NEEDS = ("configmaps",)


def findings(expected: Expected, observed: Observed) -> Iterator[Finding]:
    cluster = expected.cluster
    apply = f"{commands.run(cluster, 'apply', '-k', f'{expected.rendered}/{cluster.name}')} (gpustack-gen plan gives the restarts it needs)"
    for rendered in expected.configmaps:
        found = observed.state.configmap(rendered.namespace, rendered.name)
        subject = f"ConfigMap {rendered.namespace}/{rendered.name}"
        if found is None:
            yield Finding(
                ID, Severity.ERROR, subject, f"{subject}: absent", None, None, sorted(rendered.data), None, apply
            )
            continue
        for key, want in rendered.data.items():
            yield from _key(rendered, subject, key, want, found.data.get(key), apply)
        for key in sorted(set(found.data) - set(rendered.data)):
            yield Finding(
                ID, Severity.WARNING, f"{subject} key {key}", f"{subject} key {key}: not in the render", None, None,
                None, key, f"no node should name it any more; {apply} removes it",
            )  # fmt: skip


def _key(
    rendered: RenderedConfigMap, subject: str, key: str, want: Any, text: str | None, apply: str
) -> Iterator[Finding]:
    from ...yamlio.load import load_data

    where = f"{subject} key {key}"
    if text is None:
        yield Finding(ID, Severity.ERROR, where, f"{where}: absent", None, None, key, None, apply)
        return
    if isinstance(want, str):
        got: Any = text
    else:
        try:
            got = load_data(text)
        except Exception as exc:  # any YAML error: the component that reads it fails the same way
            message = " ".join(str(exc).split())
            yield Finding(
                ID, Severity.ERROR, where, f"{where}: not valid YAML: {message}", None, None, None, None, apply
            )
            return
    difference = first_difference(want, got)
    if difference is not None:
        path, want_value, got_value = difference
        yield Finding(
            ID, Severity.ERROR, where, differs(f"{where}: {path or 'content'}", want_value, got_value), None, None,
            want, got, apply,
        )  # fmt: skip
