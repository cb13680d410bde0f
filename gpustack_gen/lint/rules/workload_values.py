"""A workload's values fragment (``resources``, ``nodeSelector``, ``tolerations``): the pod-spec schema, and
GPU requests the scheduler cannot serve.

- ``nvidia.com/mig-*`` or another wildcard resource name: an error, as the device plugin advertises one
  resource per MIG profile;
- a fractional or non-numeric GPU count: an error, as extended resources are whole numbers;
- an extended resource in ``requests`` without the same value in ``limits``: an error, as Kubernetes
  requires it in limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...validate.findings import format_path
from ...validate.kubernetes import check_workload_fragment
from ..detect import DocumentKind
from ..locate import Source
from ..reporter import LintOptions, Reporter, mapping

ID = "workload-values"
KINDS: tuple[DocumentKind, ...] = ("workload-values",)


def check(doc: Any, kind: DocumentKind, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    with r.running(ID):
        r.add_findings(source, prefix, check_workload_fragment(doc, o.kubernetes))
        resources = doc.get("resources")
        if isinstance(resources, Mapping):
            _resources(resources, source, prefix, r)


def _resources(resources: Mapping[str, Any], source: Source, prefix: str, r: Reporter) -> None:
    limits = mapping(resources.get("limits"))
    requests = mapping(resources.get("requests"))
    for section, values in (("limits", limits), ("requests", requests)):
        for name, value in values.items():
            if not (isinstance(name, str) and name.startswith("nvidia.com/")):
                continue
            path = format_path(["resources", section, name])
            text = str(value).strip()
            if "*" in name:
                r.add(
                    source,
                    prefix,
                    path,
                    f"{name!r} is not a resource: the device plugin advertises one resource per MIG profile",
                    "request one profile, such as nvidia.com/mig-1g.10gb (see gpustack-gen gpus <gpu>)",
                )
            elif not text.isdigit():
                r.add(
                    source,
                    prefix,
                    path,
                    f"{name} must be a whole number, got {value!r}",
                    "a GPU (or a shared replica) cannot be split in a request: share GPUs with time-slicing, "
                    "MPS or MIG instead",
                )
            elif section == "requests" and str(limits.get(name, "")).strip() != text:
                r.add(
                    source,
                    prefix,
                    path,
                    f"extended resource {name} must be set in limits (a request, if any, must equal the limit)",
                    f'set resources.limits["{name}"]: "{text}"',
                )
