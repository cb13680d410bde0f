"""Check a k8s-device-plugin config (``version: v1``) the way upstream should, but does not.

Upstream ignores unknown and misplaced keys, silently resets some of the keys it parses and only
finds some conflicts at run time. :func:`check_device_plugin_config` reports all of that up front:

1. the strict schema ``schemas/device-plugin-config.schema.json``;
2. version gates: a field (``x-since``) or a value (``x-since-values``) newer than the target device
   plugin, read from the schema so that the table lives in one place;
3. cross-field rules from upstream ``validateFlags`` and ``DisableResourceNamingInConfig``.

Pure: no printing, no file writes beyond the one-time schema load. Results are memoised on the
config's content (:func:`json_key`): a fleet repeats the same few configs across its clusters.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gpustack_gen.validate.findings import SchemaFinding, format_path, schema_findings
from gpustack_gen.validate.memo import MEMO_SIZE, json_key
from gpustack_gen.validate.schema_files import load_schema, schema_validator

__all__ = ["MISPLACED_KEYS", "SCHEMA_NAME", "check_device_plugin_config"]

SCHEMA_NAME = "device-plugin-config.schema.json"

_STRATEGIES = ("timeSlicing", "mps")

# Keys people put in the wrong place. Upstream ignores them there without a word
# (NVIDIA/k8s-device-plugin#1433: renameByDefault/failRequestsGreaterThanOne under ``flags``).
# Generic paths: list indices are written ``[]``; lookups are case-insensitive.
MISPLACED_KEYS: Mapping[str, str] = {
    "flags.renameByDefault": "sharing.timeSlicing.renameByDefault",
    "flags.failRequestsGreaterThanOne": "sharing.timeSlicing.failRequestsGreaterThanOne",
    "flags.sharing": "sharing",
    "flags.timeSlicing": "sharing.timeSlicing",
    "flags.mps": "sharing.mps",
    "flags.resources": "sharing.timeSlicing.resources",
    "flags.imex": "imex",
    "flags.channelIDs": "imex.channelIDs",
    "flags.passDeviceSpecs": "flags.plugin.passDeviceSpecs",
    "flags.deviceListStrategy": "flags.plugin.deviceListStrategy",
    "flags.deviceIDStrategy": "flags.plugin.deviceIDStrategy",
    "flags.cdiAnnotationPrefix": "flags.plugin.cdiAnnotationPrefix",
    "flags.nvidiaCTKPath": "flags.plugin.nvidiaCTKPath",
    "flags.containerDriverRoot": "flags.plugin.containerDriverRoot",
    "flags.sharedDevicesAllocationPolicy": "flags.plugin.sharedDevicesAllocationPolicy",
    "flags.oneshot": "flags.gfd.oneshot",
    "flags.noTimestamp": "flags.gfd.noTimestamp",
    "flags.sleepInterval": "flags.gfd.sleepInterval",
    "flags.outputFile": "flags.gfd.outputFile",
    "flags.machineTypeFile": "flags.gfd.machineTypeFile",
    "flags.plugin.migStrategy": "flags.migStrategy",
    "flags.plugin.mpsRoot": "flags.mpsRoot",
    "flags.plugin.nvidiaDriverRoot": "flags.nvidiaDriverRoot",
    "flags.gfd.useNodeFeatureAPI": "flags.useNodeFeatureAPI",
    "migStrategy": "flags.migStrategy",
    "failOnInitError": "flags.failOnInitError",
    "nvidiaDriverRoot": "flags.nvidiaDriverRoot",
    "mpsRoot": "flags.mpsRoot",
    "plugin": "flags.plugin",
    "gfd": "flags.gfd",
    "timeSlicing": "sharing.timeSlicing",
    "mps": "sharing.mps",
    "renameByDefault": "sharing.timeSlicing.renameByDefault",
    "failRequestsGreaterThanOne": "sharing.timeSlicing.failRequestsGreaterThanOne",
    "channelIDs": "imex.channelIDs",
    "sharing.renameByDefault": "sharing.timeSlicing.renameByDefault",
    "sharing.failRequestsGreaterThanOne": "sharing.timeSlicing.failRequestsGreaterThanOne",
    "sharing.resources": "sharing.timeSlicing.resources",
    "sharing.time-slicing": "sharing.timeSlicing",
    "sharing.timeslicing": "sharing.timeSlicing",
    **{f"sharing.{s}.replicas": f"sharing.{s}.resources[].replicas" for s in _STRATEGIES},
    **{f"sharing.{s}.name": f"sharing.{s}.resources[].name" for s in _STRATEGIES},
    **{f"sharing.{s}.resources[].renameByDefault": f"sharing.{s}.renameByDefault" for s in _STRATEGIES},
    **{
        f"sharing.{s}.resources[].failRequestsGreaterThanOne": f"sharing.{s}.failRequestsGreaterThanOne"
        for s in _STRATEGIES
    },
}

_UNKNOWN_KEY_HINT = "the device plugin silently ignores keys it does not know, so this setting would have no effect"

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+][0-9A-Za-z.+-]*)?\Z")


def _parse_version(text: str) -> tuple[int, int, int]:
    """``"v0.17.4"`` -> ``(0, 17, 4)``; a pre-release or build suffix is ignored. Raises ValueError."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a device plugin version: {text!r} (expected a version such as 'v0.17.4')")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def _get(value: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _deref(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow local ``$ref``s (``#/$defs/...``) to the schema that holds properties/items."""
    seen = 0
    while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/") and seen < 32:
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node, seen = target, seen + 1
    return node


def _since_of(root: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """The ``x-since`` of the field at ``keys`` (such as ``["sharing", "mps"]``), if any."""
    node: Mapping[str, Any] = root
    for key in keys:
        node = _deref(root, node).get("properties", {}).get(key, {})
    since = node.get("x-since")
    return since if isinstance(since, str) else None


def _version_gates(
    root: Mapping[str, Any],
    node: Mapping[str, Any],
    value: object,
    parts: list[object],
    version: tuple[int, int, int],
    version_text: str,
    out: list[SchemaFinding],
) -> None:
    since = node.get("x-since")
    if isinstance(since, str) and version < _parse_version(since):
        out.append(
            SchemaFinding(
                format_path(parts),
                f"not supported by device plugin {version_text} (added in {since})",
                f"device plugin {version_text} silently ignores it: remove it, or target device plugin "
                f"{since} or newer (a newer GPU Operator)",
            )
        )
        return
    target = _deref(root, node)
    for holder in (node, target):
        value_since = holder.get("x-since-values")
        if not isinstance(value_since, Mapping):
            continue
        items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
        for index, item in items:
            added = value_since.get(item) if isinstance(item, str) else None
            if isinstance(added, str) and version < _parse_version(added):
                where = parts if index is None else [*parts, index]
                out.append(
                    SchemaFinding(
                        format_path(where),
                        f"{item!r} is not supported by device plugin {version_text} (added in {added})",
                        f"device plugin {version_text} rejects it: pick another value, or target device "
                        f"plugin {added} or newer",
                    )
                )
        break
    properties = target.get("properties")
    if isinstance(properties, Mapping) and isinstance(value, Mapping):
        for key, child in value.items():
            if key in properties:
                _version_gates(root, properties[key], child, [*parts, key], version, version_text, out)
    items_schema = target.get("items")
    if isinstance(items_schema, Mapping) and isinstance(value, list):
        for index, child in enumerate(value):
            _version_gates(root, items_schema, child, [*parts, index], version, version_text, out)


def _shared_resources(config: Mapping[str, Any], strategy: str) -> list[tuple[int, Mapping[str, Any]]]:
    resources = _get(config, "sharing", strategy, "resources")
    if not isinstance(resources, list):
        return []
    return [(i, r) for i, r in enumerate(resources) if isinstance(r, Mapping)]


def _quoted_replicas(config: Mapping[str, Any]) -> list[SchemaFinding]:
    out = []
    for strategy in _STRATEGIES:
        for index, resource in _shared_resources(config, strategy):
            replicas = resource.get("replicas")
            if not (isinstance(replicas, str) and replicas.strip().isdigit()):
                continue  # anything else is left to the schema's type error
            number = int(replicas.strip())
            message = f"replicas must not be quoted: expected an integer >= 2, got {replicas!r} (a string)"
            hint = f"write replicas: {number} without quotes; the device plugin rejects quoted numbers"
            if number < 2:
                hint += " (and it must be at least 2)"
            path = format_path(["sharing", strategy, "resources", index, "replicas"])
            out.append(SchemaFinding(path, message, hint))
    return out


def _ignored_keys(config: Mapping[str, Any]) -> list[SchemaFinding]:
    out = []
    if "resources" in config:
        out.append(
            SchemaFinding(
                "resources",
                "has no effect: the device plugin parses 'resources' and then drops it (custom resource "
                "naming is disabled upstream)",
                "remove it; full GPUs are advertised as nvidia.com/gpu and MIG devices according to flags.migStrategy",
            )
        )
    for strategy in _STRATEGIES:
        for index, resource in _shared_resources(config, strategy):
            base = ["sharing", strategy, "resources", index]
            if "rename" in resource:
                out.append(
                    SchemaFinding(
                        format_path([*base, "rename"]),
                        "has no effect: the device plugin resets 'rename' to '' (or to '<name>.shared' "
                        "with renameByDefault)",
                        f"remove it; set sharing.{strategy}.renameByDefault: true to advertise '<name>.shared' instead",
                    )
                )
            if "devices" in resource and resource["devices"] != "all":
                out.append(
                    SchemaFinding(
                        format_path([*base, "devices"]),
                        "has no effect: the device plugin resets 'devices' to 'all', so every matching "
                        "device is shared",
                        "remove it; to share only some nodes' GPUs, give those nodes their own config "
                        "(label nvidia.com/device-plugin.config)",
                    )
                )
    return out


def _mps_rules(
    config: Mapping[str, Any],
    *,
    version: tuple[int, int, int],
    version_text: str,
    mps_root_from_operator: bool,
) -> list[SchemaFinding]:
    out: list[SchemaFinding] = []
    sharing = config.get("sharing")
    if not isinstance(sharing, Mapping) or "mps" not in sharing:
        return out
    if "timeSlicing" in sharing:
        out.append(
            SchemaFinding(
                "sharing.timeSlicing",
                "ignored: sharing.mps is also set and the device plugin uses MPS when both are present",
                "keep one sharing strategy per config; give nodes that need the other strategy their own "
                "config (label nvidia.com/device-plugin.config)",
            )
        )
    if not _shared_resources(config, "mps"):
        return out
    if _get(config, "flags", "migStrategy") == "mixed":
        out.append(
            SchemaFinding(
                "flags.migStrategy",
                "migStrategy 'mixed' is not supported with MPS sharing (upstream: using --mig-strategy=mixed "
                "is not supported with MPS)",
                "use migStrategy 'none' for MPS nodes, or switch these nodes to sharing.timeSlicing; "
                "MPS does not work on MIG devices",
            )
        )
    mps_root = _get(config, "flags", "mpsRoot")
    if not mps_root_from_operator and not (isinstance(mps_root, str) and mps_root):
        out.append(
            SchemaFinding(
                "flags.mpsRoot",
                "MPS sharing requires flags.mpsRoot (upstream: using MPS requires --mps-root to be specified)",
                "set flags.mpsRoot: /run/nvidia/mps, or deploy through the GPU Operator, which passes MPS_ROOT",
            )
        )
    forced = (0, 17, 0) <= version < (0, 18, 0)
    if forced and _get(config, "sharing", "mps", "failRequestsGreaterThanOne") is False:
        out.append(
            SchemaFinding(
                "sharing.mps.failRequestsGreaterThanOne",
                f"has no effect: device plugin {version_text} forces it to true for MPS",
                "remove it; requests for more than one MPS replica always fail on this version",
            )
        )
    return out


# Bound of each validator's memo (distinct configs or fragments; a 1000-cluster fleet has a few thousand).
def check_device_plugin_config(
    config: Mapping[str, Any], *, device_plugin_version: str, mps_root_from_operator: bool
) -> list[SchemaFinding]:
    """Every problem in device-plugin ``config`` for ``device_plugin_version`` (such as ``"v0.17.4"``).

    ``mps_root_from_operator``: the config is deployed by the GPU Operator (or the Helm chart), which
    passes ``MPS_ROOT`` itself, so MPS does not need ``flags.mpsRoot``.

    Returns the findings sorted by path (a new list on every call); ``[]`` means the config is valid and
    every key in it takes effect. Raises :class:`ValueError` when ``device_plugin_version`` is not a
    version.
    """
    key = json_key(config)
    if key is None:
        return _check(config, device_plugin_version, mps_root_from_operator)
    return list(_memoised(key, device_plugin_version, mps_root_from_operator))


@functools.lru_cache(maxsize=MEMO_SIZE)
def _memoised(key: str, device_plugin_version: str, mps_root_from_operator: bool) -> tuple[SchemaFinding, ...]:
    version = _parse_version(device_plugin_version)  # a bad version raises before anything is checked
    config = json.loads(key)
    return tuple(_check(config, device_plugin_version, mps_root_from_operator, _memoised_unversioned(key), version))


# The schema and the rules that do not depend on the target version are checked once per config: a fleet
# renders the same few configs for many device plugin versions.
@functools.lru_cache(maxsize=MEMO_SIZE)
def _memoised_unversioned(key: str) -> tuple[SchemaFinding, ...]:
    return tuple(_unversioned(json.loads(key)))


def _check(
    config: Mapping[str, Any],
    device_plugin_version: str,
    mps_root_from_operator: bool,
    unversioned: Sequence[SchemaFinding] | None = None,
    version: tuple[int, int, int] | None = None,
) -> list[SchemaFinding]:
    if version is None:
        version = _parse_version(device_plugin_version)
    findings = list(_unversioned(config) if unversioned is None else unversioned)
    root = load_schema(SCHEMA_NAME)
    _version_gates(root, root, config, [], version, device_plugin_version, findings)
    if isinstance(config, Mapping):
        mps_since = _since_of(root, ["sharing", "mps"])
        if mps_since is None or version >= _parse_version(mps_since):
            findings.extend(
                _mps_rules(
                    config,
                    version=version,
                    version_text=device_plugin_version,
                    mps_root_from_operator=mps_root_from_operator,
                )
            )
    return sorted(set(findings))


def _unversioned(config: Mapping[str, Any]) -> list[SchemaFinding]:
    """The findings that do not depend on the device plugin version: the schema's, quoted replicas and
    keys that have no effect."""
    quoted = _quoted_replicas(config)
    superseded = {f.path for f in quoted}
    validator = schema_validator(SCHEMA_NAME)
    raw = schema_findings(validator, config, misplaced=MISPLACED_KEYS, unknown_key_hint=_UNKNOWN_KEY_HINT)
    findings = [f for f in raw if f.path not in superseded]
    findings.extend(quoted)
    if isinstance(config, Mapping):
        # "has no effect" only for values upstream would accept; a schema finding there says more.
        invalid = [f.path for f in raw]
        findings.extend(
            f
            for f in _ignored_keys(config)
            if not any(p == f.path or p.startswith((f"{f.path}.", f"{f.path}[")) for p in invalid)
        )
    return findings
