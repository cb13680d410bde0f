"""Check a mig-parted config (``version: v1``, ``mig-configs``) before mig-manager sees it.

:func:`check_mig_parted_config` runs the strict schema ``schemas/mig-parted-config.schema.json`` and then
the rules upstream applies across fields (``api/spec/v1`` and ``pkg/types/mig_config.go``). Whether a
profile exists on the hardware and whether the instances fit the GPU are checked elsewhere (against
the GPU facts), because mig-parted itself only finds out in ``apply``.

Pure: no printing, no file writes beyond the one-time schema load. Results are memoised on the
config's content, as the device-plugin check does, and each ``mig-configs`` entry is checked once per
process: entries repeat across a fleet's configs far more than whole configs do.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack_gen.validate.findings import SchemaFinding, format_path, schema_findings
from gpustack_gen.validate.memo import MEMO_SIZE, json_key
from gpustack_gen.validate.schema_files import schema_validator

__all__ = ["SCHEMA_NAME", "check_mig_parted_config"]

SCHEMA_NAME = "mig-parted-config.schema.json"

_UNKNOWN_KEY_HINT = "mig-parted rejects unknown keys ('unexpected field') and matches keys case-sensitively"


def _entries(config: Mapping[str, Any]) -> Iterator[tuple[list[object], Mapping[str, Any]]]:
    """Each ``mig-configs.<name>[i]`` entry that is a mapping, with its path parts."""
    configs = config.get("mig-configs")
    if not isinstance(configs, Mapping):
        return
    for name, specs in configs.items():
        if not isinstance(specs, list):
            continue
        for index, spec in enumerate(specs):
            if isinstance(spec, Mapping):
                yield ["mig-configs", name, index], spec


def _profile_findings(parts: list[object], profile: str) -> list[SchemaFinding]:
    path = format_path([*parts, "mig-devices", profile])
    if "+" in profile and "-" in profile:
        return [
            SchemaFinding(
                path,
                f"MIG profile {profile!r} has both '+' and '-' attributes (upstream: contains both '+/-' attributes)",
                "use either +attr[,attr] (require attributes) or -attr[,attr] (exclude them), not both",
            )
        ]
    for sign in "+-":
        if sign in profile:
            attributes = profile.split(sign, 1)[1].split(",")
            repeated = sorted({a for a in attributes if attributes.count(a) > 1})
            if repeated:
                return [
                    SchemaFinding(
                        path,
                        f"MIG profile {profile!r} repeats attribute {repeated[0]!r} (upstream: non unique "
                        "attribute in list)",
                        "list each attribute once",
                    )
                ]
    return []


def _entry_findings(parts: list[object], spec: Mapping[str, Any]) -> list[SchemaFinding]:
    out = []
    enabled = spec.get("mig-enabled")
    devices = spec.get("mig-devices")
    devices_path = format_path([*parts, "mig-devices"])
    if enabled is False and isinstance(devices, Mapping) and devices:
        out.append(
            SchemaFinding(
                devices_path,
                "mig-devices is set but mig-enabled is false (upstream: MIG devices included when "
                "'mig-enabled' is false)",
                "set mig-enabled: true to create these MIG devices, or remove mig-devices",
            )
        )
    if enabled is True and "mig-devices" not in spec:
        out.append(
            SchemaFinding(
                devices_path,
                "missing mig-devices: it is required when mig-enabled is true",
                "list the MIG profiles to create, or write mig-devices: {} to only enable MIG mode",
            )
        )
    if isinstance(devices, Mapping) and devices:
        counts = list(devices.values())
        if all(isinstance(c, int) and not isinstance(c, bool) and c == 0 for c in counts):
            out.append(
                SchemaFinding(
                    devices_path,
                    "all counts are 0 (upstream: all counts for all MigProfiles are 0)",
                    "set at least one count above 0, or write mig-devices: {} to only enable MIG mode",
                )
            )
        for profile in devices:
            if isinstance(profile, str):
                out.extend(_profile_findings(parts, profile))
    return out


def _unquoted_filters(config: Mapping[str, Any]) -> dict[str, int]:
    """Path -> integer for every device-filter that YAML read as a number (an unquoted 0x... ID)."""
    found: dict[str, int] = {}
    for parts, spec in _entries(config):
        value = spec.get("device-filter")
        if isinstance(value, int) and not isinstance(value, bool):
            found[format_path([*parts, "device-filter"])] = value
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, int) and not isinstance(item, bool):
                    found[format_path([*parts, "device-filter", index])] = item
    return found


def _quote_hint(number: int) -> str:
    if 0 <= number <= 0xFFFFFFFF:
        return (
            f'quote it: "0x{number:08X}" (YAML reads an unquoted hex ID as the integer {number}, which '
            "mig-parted rejects)"
        )
    return 'quote the PCI ID, such as "0x20B010DE": YAML reads an unquoted number as an integer'


def check_mig_parted_config(config: Mapping[str, Any]) -> list[SchemaFinding]:
    """Every problem in mig-parted ``config``, sorted by path (a new list on every call); ``[]`` means
    mig-parted accepts it."""
    key = json_key(config)
    if key is None:
        return _check(config)
    return [] if _clean_by_parts(config) else list(_memoised(key))


# Stands in for an entry that is clean on its own. The schema and the rules here judge each entry by itself
# and each mig-config name by itself; of an entry list only its length counts (``minItems``). So a config
# whose names and entries are each clean has the findings of its skeleton: the same other keys, and
# names and entries replaced by fixed clean ones. The parts repeat across a fleet's configs far more than
# whole configs do; a config with any finding is checked whole, so that findings read as they always did.
_CLEAN_ENTRY: dict[str, object] = {"devices": "all", "mig-enabled": False}


def _clean_by_parts(config: Mapping[str, Any]) -> bool:
    """Whether ``config`` (plain JSON data) is clean, judged by its parts; False also when that cannot tell."""
    configs = config.get("mig-configs")
    if not isinstance(configs, dict):
        return False
    lengths = []
    for name, specs in configs.items():
        if not (isinstance(specs, list) and specs and _clean_name(name)):
            return False
        if not all(isinstance(spec, dict) and _clean_entry(json.dumps(spec, sort_keys=True)) for spec in specs):
            return False
        lengths.append(len(specs))
    skeleton = {**config, "mig-configs": {f"c{i}": [_CLEAN_ENTRY] * n for i, n in enumerate(lengths)}}
    return _clean_skeleton(json.dumps(skeleton, sort_keys=True))


@functools.lru_cache(maxsize=MEMO_SIZE)
def _clean_entry(key: str) -> bool:
    """Whether the entry ``key`` (its JSON text) has no finding, checked in a config of its own."""
    return not _check({"version": "v1", "mig-configs": {"entry": [json.loads(key)]}})


@functools.lru_cache(maxsize=MEMO_SIZE)
def _clean_name(name: str) -> bool:
    return not _check({"version": "v1", "mig-configs": {name: [_CLEAN_ENTRY]}})


@functools.lru_cache(maxsize=MEMO_SIZE)
def _clean_skeleton(key: str) -> bool:
    return not _memoised(key)


@functools.lru_cache(maxsize=MEMO_SIZE)
def _memoised(key: str) -> tuple[SchemaFinding, ...]:
    return tuple(_check(json.loads(key)))


def _check(config: Mapping[str, Any]) -> list[SchemaFinding]:
    specific: list[SchemaFinding] = []
    if isinstance(config, Mapping):
        for parts, spec in _entries(config):
            specific.extend(_entry_findings(parts, spec))
    superseded = {f.path for f in specific if "mig-devices[" in f.path or "mig-devices." in f.path}
    unquoted = _unquoted_filters(config) if isinstance(config, Mapping) else {}
    findings = []
    for finding in schema_findings(schema_validator(SCHEMA_NAME), config, unknown_key_hint=_UNKNOWN_KEY_HINT):
        if finding.path in superseded:
            continue
        if finding.path in unquoted:
            finding = dataclasses.replace(finding, hint=_quote_hint(unquoted[finding.path]))
        findings.append(finding)
    findings.extend(specific)
    return sorted(set(findings))
