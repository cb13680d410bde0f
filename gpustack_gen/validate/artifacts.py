"""Validate every compiled artifact before anything is written.

A failure here is a bug in gpustack-gen (the intent was already checked), reported as InternalError.
"""

from __future__ import annotations

from typing import Any

from ..compile.artifact import Artifact, EmbeddedYaml
from ..errors import InternalError
from ..model.fleet import Cluster
from .device_plugin import check_device_plugin_config
from .mig_parted import check_mig_parted_config
from .operator_keys import CLUSTERPOLICY_SPEC_KEYS, VALUES_KEYS, disallowed_keys


def validate_artifacts(cluster: Cluster, artifacts: list[Artifact]) -> None:
    release = cluster.operator.release
    for artifact in artifacts:
        for document in artifact.documents:
            if artifact.kind == "helm-values":
                _fail_on_keys(artifact, "", disallowed_keys(document, VALUES_KEYS, release), release.version)
            elif artifact.kind == "clusterpolicy-patch":
                _fail_on_keys(
                    artifact,
                    "spec.",
                    disallowed_keys(document["spec"], CLUSTERPOLICY_SPEC_KEYS, release),
                    release.version,
                )
            elif artifact.kind == "device-plugin-configmap":
                for key, config in _embedded(document):
                    findings = check_device_plugin_config(
                        config, device_plugin_version=release.device_plugin, mps_root_from_operator=True
                    )
                    if findings:
                        raise InternalError(artifact.path, f"data.{key}.{findings[0].path}", findings[0].message)
            elif artifact.kind == "mig-parted-configmap":
                for key, config in _embedded(document):
                    findings = check_mig_parted_config(config)
                    if findings:
                        raise InternalError(artifact.path, f"data.{key}.{findings[0].path}", findings[0].message)


def _embedded(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(key, value.data) for key, value in document.get("data", {}).items() if isinstance(value, EmbeddedYaml)]


def _fail_on_keys(artifact: Artifact, prefix: str, keys: list[str], version: str) -> None:
    if keys:
        raise InternalError(artifact.path, prefix + keys[0], f"key not written for GPU Operator {version}")
