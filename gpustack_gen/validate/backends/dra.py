"""Checks of the DRA backend's artifacts beyond their Kubernetes schemas: the driver's values and opaque configs.

- The driver values: only the keys gpustack-gen writes, with their types (the chart has no values schema;
  the conformance tests hold these keys against each verified chart's ``values.yaml``), feature gates the
  pinned driver knows, and the chart's own render-time checks (``templates/validation.yaml``: GPU
  allocation needs ``gpuResourcesEnabledOverride``; a ``resource.k8s.io`` version it supports).
- Every opaque config in a DeviceClass or claim: the driver's rules (:mod:`...model.backends.dra.gpu_config`)
  with the gates the values turn on.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from ...model.backends.dra import gpu_config
from ...versions.dra import DraDriverVersion
from ..findings import SchemaFinding, findings_from_errors
from ..schema_files import SchemaValidator, compile_schema

RESOURCE_API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")

_BOOL = {"type": "boolean"}
_STRING = {"type": "string", "minLength": 1}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties, "required": list(required)}


# The subset of the chart's values gpustack-gen writes (the same keys in 25.12.0 and 0.4.x).
DRIVER_VALUES_SCHEMA: Mapping[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_object(
        {
            "nameOverride": _STRING,
            "nvidiaDriverRoot": {"type": "string", "pattern": "^/"},
            "gpuResourcesEnabledOverride": _BOOL,
            "resourceApiVersion": {"enum": list(RESOURCE_API_VERSIONS)},
            "resources": _object({"gpus": _object({"enabled": _BOOL}), "computeDomains": _object({"enabled": _BOOL})}),
            "featureGates": {"type": "object", "additionalProperties": _BOOL},
            "kubeletPlugin": _object(
                {
                    "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
                    "tolerations": {"type": "array", "items": {"type": "object"}},
                }
            ),
        },
        ("nvidiaDriverRoot", "gpuResourcesEnabledOverride", "resourceApiVersion", "resources", "featureGates"),
    ),
}


@functools.cache
def _validator() -> SchemaValidator:
    """Compiled once per process: every DRA cluster of a fleet checks its driver values."""
    return compile_schema(DRIVER_VALUES_SCHEMA)


def check_driver_values(values: Mapping[str, Any], release: DraDriverVersion) -> list[SchemaFinding]:
    """Findings for the driver's values at ``release``, sorted by path; empty when the chart renders them."""
    findings = findings_from_errors(_validator().iter_errors(values))
    if findings:
        return findings
    for gate in values["featureGates"]:
        if gate not in release.gates:
            findings.append(
                SchemaFinding(
                    f"featureGates.{gate}",
                    f"the DRA driver {release.version} has no feature gate {gate}",
                    f"its gates: {', '.join(sorted(release.gates))}",
                )
            )
    if values["resources"]["gpus"]["enabled"] and not values["gpuResourcesEnabledOverride"]:
        findings.append(
            SchemaFinding(
                "gpuResourcesEnabledOverride",
                "resources.gpus.enabled needs gpuResourcesEnabledOverride: true, or the chart refuses to render",
                "set gpuResourcesEnabledOverride: true once the device plugin is off on the driver's nodes",
            )
        )
    return findings


def opaque_configs(document: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(path, parameters) of each opaque config of a DeviceClass, ResourceClaim or ResourceClaimTemplate."""
    spec = document.get("spec", {})
    places = {
        "DeviceClass": ("spec.config", spec.get("config")),
        "ResourceClaim": ("spec.devices.config", spec.get("devices", {}).get("config")),
        "ResourceClaimTemplate": ("spec.spec.devices.config", spec.get("spec", {}).get("devices", {}).get("config")),
    }
    base, configs = places.get(str(document.get("kind")), ("", None))
    for index, config in enumerate(configs or ()):
        opaque = config.get("opaque")
        if isinstance(opaque, Mapping) and opaque.get("driver") == gpu_config.DRIVER:
            yield f"{base}[{index}].opaque.parameters", opaque.get("parameters", {})


def check_opaque_configs(document: Mapping[str, Any], gates: frozenset[str]) -> list[SchemaFinding]:
    """The driver's rules for every ``gpu.nvidia.com`` opaque config in ``document``, with these gates on."""
    findings = []
    for base, parameters in opaque_configs(document):
        for path, message in gpu_config.config_problems(parameters, gates):
            findings.append(SchemaFinding(f"{base}.{path}" if path else base, message, "the DRA driver refuses it"))
    return findings
