"""What a compiler produces: an artifact is one output file holding plain-data documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEVICE_PLUGIN_CONFIGMAP = "gpustack-device-plugin-config"
MIG_PARTED_CONFIGMAP = "gpustack-mig-parted-config"
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpustack-gen"}
# Operator operands that read the ConfigMaps and must be restarted to see a change (they do not watch them).
DEVICE_PLUGIN_DAEMONSET = "daemonset/nvidia-device-plugin-daemonset"
MPS_DAEMONSET = "daemonset/nvidia-device-plugin-mps-control-daemon"


@dataclass(frozen=True)
class EmbeddedYaml:
    """A YAML file stored as a string inside another document (a ConfigMap ``data`` value).

    Compilers keep it as data so that validation sees the structure; the emitter serializes it.
    """

    data: dict[str, Any]


@dataclass(frozen=True)
class Artifact:
    """One generated file: its path relative to the cluster folder, its kind and its documents."""

    path: str
    kind: str  # schema / validation key, e.g. "helm-values", "device-plugin-configmap"
    documents: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = field(default=())  # extra header lines: how to apply the file
