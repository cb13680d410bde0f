"""Which HAMi chart values gpustack-gen may write, per chart version, and the check of ``hami-values.yaml``.

The gate table says which key paths exist in which chart version (conformance tests hold it against
each verified version's ``charts/hami/values.yaml``); :data:`KEY_SCHEMAS` says which values each takes.
:func:`check_hami_values` refuses any key outside the table or the version, a value of the wrong type,
and a per-node config (a JSON string) that HAMi's device plugin would not read as written.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from ...versions.hami import HamiVersion
from ..findings import SchemaFinding, findings_from_errors
from ..operator_keys import KeyGate, gated_values_schema
from ..schema_files import SchemaValidator, compile_schema

_FIRST = "2.10.0"  # the oldest chart gpustack-gen knows


_STRING = {"type": "string", "minLength": 1}
_POLICY = {"type": "string", "enum": ["binpack", "spread"]}

# Key path -> JSON Schema of its value (Project-HAMi/HAMi@v2.10.0 charts/hami/values.yaml and templates).
KEY_SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "resourceName": _STRING,
    "resourceMem": _STRING,
    "resourceMemPercentage": _STRING,
    "resourceCores": _STRING,
    "devicePlugin.deviceSplitCount": {"type": "integer", "minimum": 1},
    "devicePlugin.deviceMemoryScaling": {"type": "number", "exclusiveMinimum": 0},
    "devicePlugin.nvidiaNodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
    "devicePlugin.nodeConfiguration.config": {"type": "string"},
    "devicePlugin.runtimeClassName": _STRING,
    "devicePlugin.gpuOperatorToolkitReady.enabled": {"type": "boolean"},
    "devicePlugin.tolerations": {"type": "array", "items": {"type": "object"}},
    "scheduler.kubeScheduler.image.registry": _STRING,
    "scheduler.kubeScheduler.image.repository": _STRING,
    "scheduler.defaultSchedulerPolicy.nodeSchedulerPolicy": _POLICY,
    "scheduler.defaultSchedulerPolicy.gpuSchedulerPolicy": _POLICY,
}
VALUES_KEYS: tuple[KeyGate, ...] = tuple(KeyGate(path, since=_FIRST) for path in KEY_SCHEMAS)

# The per-node config's entries (pkg/device/nvidia/device.go DevicePluginConfigs, NodeDefaultConfig), as the
# device plugin reads config.json: the fields gpustack-gen writes.
_NODE_ENTRY_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["nodeconfig"],
    "properties": {
        "nodeconfig": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "operatingmode", "devicesplitcount", "devicememoryscaling"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "operatingmode": {"enum": ["hami-core"]},
                    "devicesplitcount": {"type": "integer", "minimum": 1},
                    "devicememoryscaling": {"type": "number", "exclusiveMinimum": 0},
                    "devicecorescaling": {"type": "number", "exclusiveMinimum": 0},
                },
            },
        }
    },
}


def values_schema(release: HamiVersion) -> dict[str, Any]:
    """The strict JSON Schema of the values gpustack-gen writes for ``release``."""
    return gated_values_schema(VALUES_KEYS, KEY_SCHEMAS, release)


@functools.cache
def _values_validator(release: HamiVersion) -> SchemaValidator:
    """Compiled once per chart version: every HAMi cluster of a fleet checks its values."""
    return compile_schema(values_schema(release))


@functools.cache
def _node_entry_validator() -> SchemaValidator:
    return compile_schema(_NODE_ENTRY_SCHEMA)


def check_hami_values(values: Mapping[str, Any], release: HamiVersion) -> list[SchemaFinding]:
    """Findings for a ``hami-values.yaml`` document against chart ``release``, sorted."""
    findings = findings_from_errors(_values_validator(release).iter_errors(values))
    config = values.get("devicePlugin", {}).get("nodeConfiguration", {}).get("config")
    if isinstance(config, str):
        path = "devicePlugin.nodeConfiguration.config"
        try:
            parsed = json.loads(config)
        except ValueError as error:
            findings.append(SchemaFinding(path, f"not JSON: {error}"))
        else:
            entries = findings_from_errors(_node_entry_validator().iter_errors(parsed))
            findings += [SchemaFinding(f"{path}:{f.path}", f.message, f.hint) for f in entries]
    return sorted(set(findings))
