"""Per-version JSON Schemas of the GPU Operator subset gpustack-gen reads or writes, and the check built on them.

The version-gate tables (``operator_keys.VALUES_KEYS`` and ``CLUSTERPOLICY_SPEC_KEYS``) say which key
paths exist in which chart version. :func:`operator_schema` turns them, for one Operator version, into a
strict JSON Schema (draft 2020-12, ``additionalProperties: false`` at every level, a ``$id``, and a
description plus ``x-since``/``x-until`` on every property) of:

- ``gpu-operator-values``: the Helm values subset;
- ``clusterpolicy-spec``: the ClusterPolicy ``spec`` subset.

Descriptions and value types live in :data:`KEY_DOCS` here, so that the gate table stays a plain table.

:func:`check_operator_keys` checks a real values file or ClusterPolicy spec for one version without
flagging the many keys outside the subset: keys the gate table knows but the version lacks are
reported (gpu-operator#654: Argo CD fails to sync a ClusterPolicy field the installed CRD lacks), and
the known keys the version has are validated against the schema. Pure: no printing.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..versions import parse_version
from ..versions.gpu_operator import OperatorVersion
from .findings import SchemaFinding, findings_from_errors
from .operator_keys import CLUSTERPOLICY_SPEC_KEYS, VALUES_KEYS, KeyGate
from .schema_files import SchemaValidator, compile_schema

__all__ = [
    "KEY_DOCS",
    "OPERATOR_SCHEMA_KINDS",
    "KeyDoc",
    "OperatorSchemaKind",
    "check_operator_keys",
    "gates_for",
    "operator_schema",
    "operator_validator",
    "without_deletions",
]

OperatorSchemaKind = Literal["gpu-operator-values", "clusterpolicy-spec"]
OPERATOR_SCHEMA_KINDS: tuple[OperatorSchemaKind, ...] = ("gpu-operator-values", "clusterpolicy-spec")

SCHEMA_BASE_URL = "https://gpustack-gen.dev/schemas"

_MIG_STRATEGIES = ["none", "single", "mixed"]


@dataclass(frozen=True, slots=True)
class KeyDoc:
    """What one key path means and which values it takes (a JSON Schema fragment without ``description``)."""

    description: str
    schema: Mapping[str, Any] = field(default_factory=dict)


_OBJECT: Mapping[str, Any] = {"type": "object"}
_BOOL: Mapping[str, Any] = {"type": "boolean"}
_STRING: Mapping[str, Any] = {"type": "string"}

KEY_DOCS: Mapping[str, KeyDoc] = {
    "cdi": KeyDoc("Container Device Interface (CDI) settings of the container toolkit and device plugin.", _OBJECT),
    "cdi.enabled": KeyDoc(
        "Enable CDI: the toolkit writes CDI specs and the device plugin hands out devices by CDI name. "
        "Default false up to v25.3.x, true from v25.10.0.",
        _BOOL,
    ),
    "cdi.default": KeyDoc(
        "Make the CDI runtime class the default (only meaningful with cdi.enabled). Ignored from v25.10.0, "
        "where CDI injection is native.",
        _BOOL,
    ),
    "cdi.nriPluginEnabled": KeyDoc(
        "Run the NRI plugin in the toolkit DaemonSet to inject devices (needs cdi.enabled and "
        "toolkit.enabled); no nvidia RuntimeClass is created then.",
        _BOOL,
    ),
    "driver": KeyDoc("The NVIDIA driver DaemonSet.", _OBJECT),
    "driver.enabled": KeyDoc(
        "Install the driver with a container; false when the nodes have a driver preinstalled.", _BOOL
    ),
    "driver.version": KeyDoc("Driver version (image tag), such as 570.124.06.", {"type": "string", "minLength": 1}),
    "driver.upgradePolicy": KeyDoc("How the driver upgrade controller rolls a new driver node by node.", _OBJECT),
    "driver.upgradePolicy.autoUpgrade": KeyDoc(
        "Let the controller upgrade the nodes (the driver DaemonSet is OnDelete: without it nothing rolls).", _BOOL
    ),
    "driver.upgradePolicy.maxParallelUpgrades": KeyDoc(
        "Nodes upgraded at once; 0: no limit.", {"type": "integer", "minimum": 0}
    ),
    "driver.upgradePolicy.gpuPodDeletion": KeyDoc(
        "How the controller deletes the GPU pods of a node (values).", _OBJECT
    ),
    "driver.upgradePolicy.gpuPodDeletion.deleteEmptyDir": KeyDoc(
        "Delete GPU pods with emptyDir volumes; false fails the node (upgrade-failed) on such a pod.", _BOOL
    ),
    "driver.upgradePolicy.gpuPodDeletion.force": KeyDoc(
        "Delete GPU pods without a controller; false fails the node (upgrade-failed) on such a pod.", _BOOL
    ),
    "driver.upgradePolicy.podDeletion": KeyDoc(
        "How the controller deletes the GPU pods of a node (the ClusterPolicy's name for gpuPodDeletion).", _OBJECT
    ),
    "driver.upgradePolicy.podDeletion.deleteEmptyDir": KeyDoc(
        "Delete GPU pods with emptyDir volumes; false fails the node (upgrade-failed) on such a pod.", _BOOL
    ),
    "driver.upgradePolicy.podDeletion.force": KeyDoc(
        "Delete GPU pods without a controller; false fails the node (upgrade-failed) on such a pod.", _BOOL
    ),
    "driver.manager": KeyDoc("The k8s-driver-manager init container of the driver DaemonSet.", _OBJECT),
    "driver.manager.env": KeyDoc(
        "Environment of the driver manager; NODE_LABEL_FOR_GPU_POD_EVICTION names the node label it turns off to "
        "evict GPU pods, such as the DRA driver's kubelet plugin, before the driver reloads.",
        {"type": "array", "items": {"type": "object", "required": ["name"]}},
    ),
    "toolkit": KeyDoc("The NVIDIA container toolkit DaemonSet.", _OBJECT),
    "toolkit.enabled": KeyDoc("Install the container toolkit; false when the nodes have it preinstalled.", _BOOL),
    "mig": KeyDoc("Multi-Instance GPU settings.", _OBJECT),
    "mig.strategy": KeyDoc(
        "How MIG devices are advertised: single (as nvidia.com/gpu, one profile type per node) or mixed "
        "(as nvidia.com/mig-<profile>); none disables MIG support in the device plugin.",
        {"type": "string", "enum": _MIG_STRATEGIES},
    ),
    "devicePlugin": KeyDoc(
        "The NVIDIA device plugin DaemonSet (and GPU Feature Discovery, which shares its config).", _OBJECT
    ),
    "devicePlugin.enabled": KeyDoc(
        "Deploy the NVIDIA device plugin; false where another component advertises the GPUs (HAMi's device plugin, "
        "the DRA driver).",
        _BOOL,
    ),
    "devicePlugin.config": KeyDoc("The device-plugin config ConfigMap to use.", _OBJECT),
    "devicePlugin.config.name": KeyDoc(
        "Name of a ConfigMap in the Operator namespace whose data keys are device-plugin configs.", _STRING
    ),
    "devicePlugin.config.default": KeyDoc(
        "Data key used by nodes without the nvidia.com/device-plugin.config label.", _STRING
    ),
    "devicePlugin.mps": KeyDoc("MPS settings of the device plugin and the MPS control daemon.", _OBJECT),
    "devicePlugin.mps.root": KeyDoc(
        "Host directory for the MPS pipes and logs, passed as MPS_ROOT (CRD default /run/nvidia/mps). "
        "Settable on the ClusterPolicy only: the chart does not render the value.",
        {"type": "string", "pattern": "^/", "x-pattern-description": "an absolute path such as /run/nvidia/mps"},
    ),
    "daemonsets": KeyDoc("Settings shared by every operand DaemonSet.", _OBJECT),
    "daemonsets.tolerations": KeyDoc(
        "Tolerations of every operand (driver, toolkit, device plugin, GFD...): the chart's nvidia.com/gpu "
        "NoSchedule toleration plus one per pool taint it does not tolerate; a list replaces the chart's whole.",
        {"type": "array", "items": {"type": "object"}},
    ),
    "migManager": KeyDoc("The MIG manager DaemonSet, which applies mig-parted configs.", _OBJECT),
    "migManager.config": KeyDoc("The mig-parted config ConfigMap to use.", _OBJECT),
    "migManager.config.name": KeyDoc(
        "Name of a ConfigMap in the Operator namespace with a mig-parted config under the key config.yaml. "
        "Empty means default-mig-parted-config before v26.3.0 and a per-node generated config from v26.3.0.",
        _STRING,
    ),
    "migManager.config.default": KeyDoc(
        "MIG config applied to nodes without the nvidia.com/mig.config label.",
        {"type": "string", "enum": ["all-disabled", ""]},
    ),
}

_TITLES: Mapping[OperatorSchemaKind, str] = {
    "gpu-operator-values": "GPU Operator Helm values read or written by gpustack-gen",
    "clusterpolicy-spec": "GPU Operator ClusterPolicy spec fields read or written by gpustack-gen",
}


def gates_for(kind: OperatorSchemaKind) -> tuple[KeyGate, ...]:
    """The version-gate table of ``kind``."""
    if kind == "gpu-operator-values":
        return VALUES_KEYS
    if kind == "clusterpolicy-spec":
        return CLUSTERPOLICY_SPEC_KEYS
    raise ValueError(f"unknown operator schema kind {kind!r}; expected one of {', '.join(OPERATOR_SCHEMA_KINDS)}")


def _doc(path: str) -> KeyDoc:
    doc = KEY_DOCS.get(path)
    if doc is not None:
        return doc
    leaf = path.rsplit(".", 1)[-1]
    return KeyDoc(f"GPU Operator key {path} ({leaf}).")


def _property(path: str, gate: KeyGate | None) -> dict[str, Any]:
    doc = _doc(path)
    node: dict[str, Any] = {**doc.schema, "description": doc.description}
    if gate is not None:
        node["x-since"] = gate.since
        if gate.until:
            node["x-until"] = gate.until
    return node


@functools.cache
def operator_schema(kind: OperatorSchemaKind, version: str) -> Mapping[str, Any]:
    """The strict JSON Schema of ``kind`` for GPU Operator ``version`` (such as ``"v25.3.3"``).

    Only the keys the gate table allows for that version appear. Cached; treat the result as read-only.
    Raises ValueError for an unknown kind or a malformed version.
    """
    if parse_version(version) is None:
        raise ValueError(f"not a GPU Operator version: {version!r} (expected a version such as 'v25.3.3')")
    release = _release(version)
    root: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{SCHEMA_BASE_URL}/{kind}/{version}.schema.json",
        "title": f"{_TITLES[kind]}, GPU Operator {version}",
        "description": (
            f"Strict schema of the {kind} subset gpustack-gen reads or writes, for GPU Operator {version}. "
            "Generated from the version-gate table in gpustack_gen/validate/operator_keys.py; x-since and "
            "x-until give the chart versions in which each key exists."
        ),
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    }
    for gate in gates_for(kind):
        if not gate.allows(release):
            continue
        node = root
        parts = gate.path.split(".")
        for depth, part in enumerate(parts):
            path = ".".join(parts[: depth + 1])
            leaf = depth == len(parts) - 1
            properties = node.setdefault("properties", {})
            if part not in properties:
                properties[part] = _property(path, gate if leaf else None)
                if not leaf:
                    properties[part].update({"type": "object", "additionalProperties": False, "properties": {}})
            node = properties[part]
    return root


def _release(version: str) -> OperatorVersion:
    """An :class:`OperatorVersion` for ``version``; gates only read its number."""
    from ..versions.gpu_operator import get_operator_version

    known = get_operator_version(version)
    if known is not None:
        return known
    return OperatorVersion(version if version.startswith("v") else f"v{version}", "", "", verified=False)


@functools.cache
def operator_validator(kind: OperatorSchemaKind, version: str) -> SchemaValidator:
    """A compiled validator of :func:`operator_schema`, cached per (kind, version)."""
    return compile_schema(operator_schema(kind, version))


def _known_prefixes(kind: OperatorSchemaKind, release: OperatorVersion) -> tuple[frozenset[str], frozenset[str]]:
    """Every leaf path of the table, and the inner paths that hold a leaf ``release`` has."""
    leaves = frozenset(gate.path for gate in gates_for(kind))
    allowed = [gate.path for gate in gates_for(kind) if gate.allows(release)]
    inner = frozenset(".".join(p.split(".")[:i]) for p in allowed for i in range(1, p.count(".") + 1))
    return leaves, inner


def _project(
    data: Mapping[str, Any], prefix: str, leaves: frozenset[str], inner: frozenset[str], dropped: set[str]
) -> dict[str, Any]:
    """The part of ``data`` on known key paths, without the leaves in ``dropped``."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if path in leaves:
            if path not in dropped:
                out[key] = value
        elif path in inner:
            out[key] = _project(value, path, leaves, inner, dropped) if isinstance(value, Mapping) else value
    return out


def _leaf_values(data: Mapping[str, Any], prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        out[path] = value
        if isinstance(value, Mapping):
            out.update(_leaf_values(value, path))
    return out


def without_deletions(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` without null leaves: in Helm values and in a merge patch, null deletes the key."""
    pruned = {key: without_deletions(value) if isinstance(value, Mapping) else value for key, value in data.items()}
    return {key: value for key, value in pruned.items() if value is not None and value != {}}


def check_operator_keys(
    data: Mapping[str, Any], kind: OperatorSchemaKind, release: OperatorVersion
) -> list[SchemaFinding]:
    """Findings for the known keys of a values file (or ClusterPolicy ``spec``) for ``release``, sorted.

    Keys outside the gate table are not looked at, nor are null leaves (deletions). A known key the version lacks is reported with the
    version that added or dropped it; the known keys it has are validated against
    :func:`operator_schema` (types and enums).
    """
    data = without_deletions(data)
    leaves, inner = _known_prefixes(kind, release)
    present = _leaf_values(data)
    target = "the ClusterPolicy CRD" if kind == "clusterpolicy-spec" else "the chart"
    findings: list[SchemaFinding] = []
    dropped: set[str] = set()
    for gate in gates_for(kind):
        if gate.path not in present or gate.allows(release):
            continue
        dropped.add(gate.path)
        since = parse_version(gate.since)
        if since is not None and release.key < since:
            message = f"not in GPU Operator {release.version} (added in {gate.since})"
            hint = f"remove it, or pin GPU Operator {gate.since} or newer"
        else:
            message = f"not used by GPU Operator {release.version} (dropped in {gate.until})"
            hint = f"remove it: {target} of {release.version} ignores it"
        if kind == "clusterpolicy-spec" and since is not None and release.key < since:
            hint += "; an older CRD lacks the field, so the API server prunes it and Argo CD never syncs"
        findings.append(SchemaFinding(gate.path, message, hint))
    projected = _project(data, "", leaves, inner, dropped)
    validator = operator_validator(kind, release.version)
    findings.extend(findings_from_errors(validator.iter_errors(projected)))
    return sorted(set(findings))
