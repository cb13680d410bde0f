"""A device-plugin config (bare, or a key of a device-plugin ConfigMap's data): its schema, and what it does.

- misplaced or misspelled keys: an error with "did you mean", since the device plugin ignores keys it does
  not know (k8s-device-plugin#1433);
- ``replicas: 1`` and quoted replicas: an error, with the "a config without sharing" hint
  (k8s-device-plugin#1022); a wildcard resource name is an error;
- MPS with ``migStrategy: mixed``, or MPS on a device plugin without it: an error;
- ``renameByDefault: true``: a warning, as workloads must then ask for ``<name>.shared`` (bottlerocket#4250);
- ``failRequestsGreaterThanOne: true`` under time-slicing: a warning, as pods asking for more than one
  replica fail (k8s-device-plugin#321).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...validate.device_plugin import check_device_plugin_config
from ...validate.findings import SchemaFinding
from ..detect import DocumentKind
from ..locate import Source
from ..reporter import WARNING, LintOptions, Reporter, get, value_at

ID = "device-plugin-config"
KINDS: tuple[DocumentKind, ...] = ("device-plugin-config",)

_STRATEGIES = ("timeSlicing", "mps")


def _hint(config: Mapping[str, Any], finding: SchemaFinding) -> SchemaFinding:
    value = value_at(config, finding.path)
    hint = finding.hint
    if finding.path.endswith(".replicas") and str(value).strip() == "1":
        extra = (
            "replicas: 1 does not turn sharing off: to hand out whole GPUs on some nodes, add a config "
            "without a sharing section and label those nodes nvidia.com/device-plugin.config=<that key> "
            "(k8s-device-plugin#1022)"
        )
        hint = f"{hint}; {extra}" if hint else extra
    elif finding.path.endswith(".name") and isinstance(value, str) and "*" in value:
        extra = (
            "a wildcard is not a resource name: list each MIG resource, such as nvidia.com/mig-1g.10gb, "
            "or share whole GPUs as nvidia.com/gpu"
        )
        hint = f"{hint}; {extra}" if hint else extra
    return SchemaFinding(finding.path, finding.message, hint)


def check(config: Any, kind: DocumentKind, source: Source, prefix: str, r: Reporter, o: LintOptions) -> None:
    with r.running(ID):
        findings = check_device_plugin_config(
            config, device_plugin_version=o.operator.device_plugin, mps_root_from_operator=True
        )
        r.add_findings(source, prefix, [_hint(config, f) for f in findings])
        for strategy in _STRATEGIES:
            block = get(config, "sharing", strategy)
            if isinstance(block, Mapping):
                _sharing(block, strategy, source, prefix, r)


def _sharing(block: Mapping[str, Any], strategy: str, source: Source, prefix: str, r: Reporter) -> None:
    resources = block.get("resources")
    names = [
        str(item.get("name"))
        for item in (resources if isinstance(resources, list) else [])
        if isinstance(item, Mapping) and isinstance(item.get("name"), str)
    ]
    names = [n if "/" in n else f"nvidia.com/{n}" for n in names] or ["nvidia.com/gpu"]
    if block.get("renameByDefault") is True:
        shared = ", ".join(f"{n}.shared" for n in names)
        r.add(
            source,
            prefix,
            f"sharing.{strategy}.renameByDefault",
            f"renames the shared resources to {shared}: workloads must request {shared}, not {', '.join(names)}",
            f"pods asking for {names[0]} stay Pending on these nodes (the node no longer advertises it); "
            "update their limits, or set renameByDefault: false",
            WARNING,
        )
    if block.get("failRequestsGreaterThanOne") is True and strategy == "timeSlicing":
        r.add(
            source,
            prefix,
            f"sharing.{strategy}.failRequestsGreaterThanOne",
            f"pods asking for more than one {names[0]} fail to start on these nodes",
            "a replica is a time slice, not a GPU: request 1, or set it to false (k8s-device-plugin#321)",
            WARNING,
        )
