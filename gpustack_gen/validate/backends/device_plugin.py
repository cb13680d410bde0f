"""Which standalone device plugin chart values gpustack-gen may write, per chart version, and the check of
``nvidia-device-plugin-values.yaml``.

The gate table says which key paths exist in which chart version (a conformance test holds it against each
version's ``values.yaml`` in ``../shared/upstream/device-plugin/``); :data:`KEY_SCHEMAS` says which values each
takes. :func:`check_device_plugin_values` refuses any key outside the table or the version, a value of the wrong
type, the chart's own install-time failures (``templates/validation.yml``), and any embedded config the plugin
would not accept as written (:func:`~gpustack_gen.validate.device_plugin.check_device_plugin_config`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ...compile.artifact import EmbeddedYaml
from ...versions.device_plugin import DevicePluginVersion
from ..device_plugin import check_device_plugin_config
from ..findings import SchemaFinding, findings_from_errors
from ..operator_keys import KeyGate, gated_values_schema
from ..schema_files import SchemaValidator, compile_schema

_FIRST = "0.14.5"  # the oldest chart gpustack-gen knows
_STRING = {"type": "string", "minLength": 1}
_TERMS = {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["matchExpressions"]}}

# Key path -> JSON Schema of its value (k8s-device-plugin-v<version>-helm-values.yaml; config at :20-28,
# deviceListStrategy :33, affinity :63, tolerations :85, runtimeClassName :100 at v0.17.4).
KEY_SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "config.map": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "object"}},
    "config.default": _STRING,
    "deviceListStrategy": {"enum": ["envvar", "volume-mounts", "cdi-annotations", "cdi-cri"]},
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms": _TERMS,
    "tolerations": {"type": "array", "items": {"type": "object", "required": ["key", "operator"]}},
    "runtimeClassName": _STRING,
}
VALUES_KEYS: tuple[KeyGate, ...] = tuple(KeyGate(path, since=_FIRST) for path in KEY_SCHEMAS)


def values_schema(release: DevicePluginVersion) -> dict[str, Any]:
    """The strict JSON Schema of the values gpustack-gen writes for ``release``."""
    return gated_values_schema(VALUES_KEYS, KEY_SCHEMAS, release)


@functools.cache
def _values_validator(release: DevicePluginVersion) -> SchemaValidator:
    """Compiled once per chart version: every device-plugin cluster of a fleet checks its values."""
    return compile_schema(values_schema(release))


def _plain(value: Any) -> Any:
    return value.data if isinstance(value, EmbeddedYaml) else value


def check_device_plugin_values(values: Mapping[str, Any], release: DevicePluginVersion) -> list[SchemaFinding]:
    """Findings for a ``nvidia-device-plugin-values.yaml`` document against chart ``release``, sorted."""
    config = values.get("config") or {}
    embedded = config.get("map") or {}
    plain = {**values, "config": {**config, "map": {k: _plain(v) for k, v in embedded.items()}}} if config else values
    findings = findings_from_errors(_values_validator(release).iter_errors(plain))
    # templates/validation.yml:44-53: an embedded map needs a default that names one of its keys (or a fallback).
    default = config.get("default")
    if embedded and default is not None and default not in embedded:
        findings.append(SchemaFinding("config.default", f"names no key of config.map ({', '.join(sorted(embedded))})"))
    for key, entry in embedded.items():
        for finding in check_device_plugin_config(
            _plain(entry), device_plugin_version=release.plugin, mps_root_from_operator=True
        ):
            findings.append(SchemaFinding(f"config.map.{key}:{finding.path}", finding.message, finding.hint))
    return sorted(set(findings))
