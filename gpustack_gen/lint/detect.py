"""What a YAML document is: which GPU Operator config format, if any.

:func:`detect` looks only at the shape of a parsed document (top-level keys, ``kind``, and for
ConfigMaps the text of the data values), never at file names:

=============================  ===============================================================
kind                           recognized by
=============================  ===============================================================
``device-plugin-configmap``    ``kind: ConfigMap`` whose data values are device-plugin configs
                               (``version:``, ``flags:`` or ``sharing:`` at the start of a line)
``mig-parted-configmap``       ``kind: ConfigMap`` with a value holding ``mig-configs:``, or a
                               ``config.yaml`` key, or named ``default-mig-parted-config``
``device-plugin-config``       a bare config: top-level ``version``, ``flags`` or ``sharing``
``mig-parted-config``          a bare config: top-level ``mig-configs``
``clusterpolicy``              ``kind: ClusterPolicy``
``clusterpolicy-patch``        only ``spec`` (and maybe ``metadata``), ``spec`` holding Operator keys
                               (what ``gpustack-gen render`` writes as ``clusterpolicy-patch.yaml``)
``gpu-operator-values``        no ``kind``; top-level keys of the GPU Operator chart
                               (``operator``, ``driver``, ``devicePlugin``, ``migManager``, ``cdi``...)
``workload-values``            only ``resources``, ``nodeSelector``, ``tolerations`` and ``resourceClaims``
``gpustack-gen-report``        ``cluster`` and ``pools`` (``node-labels.yaml``, ``capacity.yaml``)
``other-kubernetes-object``    any other object with ``apiVersion`` and ``kind``
``unknown``                    anything else
=============================  ===============================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, get_args

__all__ = ["LINTED_KINDS", "OPERATOR_TOP_LEVEL_KEYS", "DocumentKind", "detect"]

DocumentKind = Literal[
    "device-plugin-configmap",
    "mig-parted-configmap",
    "device-plugin-config",
    "mig-parted-config",
    "clusterpolicy",
    "clusterpolicy-patch",
    "gpu-operator-values",
    "workload-values",
    "gpustack-gen-report",
    "other-kubernetes-object",
    "unknown",
]

# Documents lint checks; the others are reported as skipped (other objects) or unrecognized.
LINTED_KINDS: frozenset[str] = frozenset(get_args(DocumentKind)) - {
    "gpustack-gen-report",
    "other-kubernetes-object",
    "unknown",
}

# Top-level keys of the GPU Operator chart's values.yaml (v23.9.2 .. v26.7.0) and of ClusterPolicy spec.
OPERATOR_TOP_LEVEL_KEYS: frozenset[str] = frozenset(
    {
        "ccManager",
        "cdi",
        "clusterPolicy",
        "daemonsets",
        "dcgm",
        "dcgmExporter",
        "devicePlugin",
        "draDriver",
        "driver",
        "extraObjects",
        "gdrcopy",
        "gds",
        "gfd",
        "gpuCluster",
        "hostPaths",
        "kataManager",
        "kataSandboxDevicePlugin",
        "mig",
        "migManager",
        "nfd",
        "node-feature-discovery",
        "nodeStatusExporter",
        "operator",
        "platform",
        "psa",
        "psp",
        "sandboxDevicePlugin",
        "sandboxWorkloads",
        "toolkit",
        "validator",
        "vfioManager",
        "vgpuDeviceManager",
        "vgpuManager",
    }
)
_OPERATOR_KEYS_LOWER = frozenset(k.lower() for k in OPERATOR_TOP_LEVEL_KEYS)
_WORKLOAD_KEYS = frozenset({"resources", "nodeSelector", "tolerations", "resourceClaims"})  # resourceClaims: DRA
_DEVICE_PLUGIN_KEYS = frozenset({"version", "flags", "sharing"})
_MIG_CONFIGS = re.compile(r"^mig-configs\s*:", re.M)
_DEVICE_PLUGIN_TEXT = re.compile(r"^(version|flags|sharing)\s*:", re.M)


def _operator_keys(data: Mapping[object, object]) -> int:
    """How many top-level keys are GPU Operator keys (compared case-insensitively, to catch typos)."""
    return sum(1 for key in data if isinstance(key, str) and key.lower() in _OPERATOR_KEYS_LOWER)


def _configmap_kind(document: Mapping[object, object]) -> DocumentKind:
    data = document.get("data")
    texts = [v for v in data.values() if isinstance(v, str)] if isinstance(data, Mapping) else []
    if any(_MIG_CONFIGS.search(text) for text in texts):
        return "mig-parted-configmap"
    if any(_DEVICE_PLUGIN_TEXT.search(text) for text in texts):
        return "device-plugin-configmap"
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if (isinstance(data, Mapping) and "config.yaml" in data) or name == "default-mig-parted-config":
        return "mig-parted-configmap"
    return "other-kubernetes-object"


def detect(document: object) -> DocumentKind:
    """The kind of one parsed YAML document (see the module docstring)."""
    if not isinstance(document, Mapping):
        return "unknown"
    kind = document.get("kind")
    if isinstance(kind, str) and "apiVersion" in document:
        if kind == "ConfigMap":
            return _configmap_kind(document)
        if kind == "ClusterPolicy":
            return "clusterpolicy"
        return "other-kubernetes-object"
    if kind == "ClusterPolicy":
        return "clusterpolicy"
    keys = {k for k in document if isinstance(k, str)}
    if "mig-configs" in keys:
        return "mig-parted-config"
    if keys & _DEVICE_PLUGIN_KEYS:
        return "device-plugin-config"
    spec = document.get("spec")
    if keys <= {"spec", "metadata"} and isinstance(spec, Mapping) and _operator_keys(spec):
        return "clusterpolicy-patch"
    if _operator_keys(document):
        return "gpu-operator-values"
    if keys and keys <= _WORKLOAD_KEYS:
        return "workload-values"
    if {"cluster", "pools"} <= keys:
        return "gpustack-gen-report"
    return "unknown"
