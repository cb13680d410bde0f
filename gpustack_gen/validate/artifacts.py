"""Validate every compiled artifact before anything is written.

A failure here is a bug in gpustack-gen (the intent was already checked), reported as InternalError.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from ..compile.artifact import NODE_GROUP_KINDS, Artifact, EmbeddedYaml
from ..compile.backends import backend_of
from ..compile.gitops import GITOPS_KINDS
from ..compile.operator import CHART, VALUES_FILE
from ..errors import InternalError
from ..model.backends.device_plugin import device_plugin_options
from ..model.backends.dra import dra_options
from ..model.backends.dra import gates as dra_gates
from ..model.backends.hami import hami_options
from ..model.fleet import Cluster
from .backends.device_plugin import check_device_plugin_values
from .backends.dra import check_driver_values, check_opaque_configs
from .backends.hami import check_hami_values
from .device_plugin import check_device_plugin_config
from .findings import SchemaFinding, findings_from_errors
from .gitops import check_gitops_document, wrapper_disagreements
from .kubernetes import KubernetesSchemaNotFound, check_kubernetes_object, check_workload_fragment
from .memo import MEMO_SIZE, json_key
from .mig_parted import check_mig_parted_config
from .node_groups import check_node_group_document
from .operator_schema import OperatorSchemaKind, operator_validator, without_deletions
from .prometheus_rule import check_prometheus_rule

# Kubernetes objects whose schema must be found (a Kustomization or a GitOps CRD has none in kubernetes-validate).
ALWAYS_CHECKED_KINDS = ("ConfigMap", "DeviceClass", "ResourceClaimTemplate", "ResourceClaim")


Validator = Callable[[Cluster, Artifact, dict[str, Any]], None]


def validate_artifacts(cluster: Cluster, artifacts: list[Artifact]) -> None:
    for artifact in artifacts:
        validator = VALIDATORS.get(artifact.kind)
        if validator is not None:
            for document in artifact.documents:
                validator(cluster, artifact, document)
    _check_wrappers_agree(cluster, artifacts)
    _validate_kubernetes(cluster, artifacts)


def _operator_values(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    _check_operator_document(artifact, "", document, "gpu-operator-values", cluster.operator.release.version)


def _clusterpolicy_patch(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    # null deletes a key in a merge patch; what remains must fit the version's spec schema.
    spec = without_deletions(document["spec"])
    _check_operator_document(artifact, "spec.", spec, "clusterpolicy-spec", cluster.operator.release.version)


def _device_plugin_configmap(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    for key, config in _embedded(document):
        findings = check_device_plugin_config(
            config, device_plugin_version=cluster.device_plugin_version, mps_root_from_operator=True
        )
        if findings:
            raise InternalError(artifact.path, f"data.{key}.{findings[0].path}", findings[0].message)


def _mig_parted_configmap(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    for key, config in _embedded(document):
        findings = check_mig_parted_config(config)
        if findings:
            raise InternalError(artifact.path, f"data.{key}.{findings[0].path}", findings[0].message)


def _hami_values(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    findings = check_hami_values(document, hami_options(cluster).release)
    if findings:
        first = findings[0]
        raise InternalError(
            artifact.path, first.path, f"{first.message} (HAMi chart {hami_options(cluster).release.version})"
        )


def _device_plugin_values(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    _raise_first(artifact, check_device_plugin_values(document, device_plugin_options(cluster).release))


def _dra_driver_values(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    _raise_first(artifact, check_driver_values(document, dra_options(cluster).release))


def _dra_objects(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    _raise_first(artifact, check_opaque_configs(document, frozenset(dra_gates(cluster))))


def _node_group(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    _raise_first(artifact, check_node_group_document(artifact.kind, document))


def _prometheus_rule(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    _raise_first(artifact, check_prometheus_rule(document))


def _gitops(cluster: Cluster, artifact: Artifact, document: dict[str, Any]) -> None:
    _raise_first(artifact, check_gitops_document(document))


# Artifact kind -> the upstream rules its documents must pass (Kubernetes schemas: _validate_kubernetes).
VALIDATORS: dict[str, Validator] = {
    "helm-values": _operator_values,
    "clusterpolicy-patch": _clusterpolicy_patch,
    "device-plugin-configmap": _device_plugin_configmap,
    "mig-parted-configmap": _mig_parted_configmap,
    "hami-values": _hami_values,
    "device-plugin-values": _device_plugin_values,
    "dra-driver-values": _dra_driver_values,
    "dra-device-classes": _dra_objects,
    "dra-claims": _dra_objects,
    **{kind: _gitops for kind in GITOPS_KINDS},
    **{kind: _node_group for kind in NODE_GROUP_KINDS.values()},
    "prometheus-rule": _prometheus_rule,
}


def _raise_first(artifact: Artifact, findings: list[SchemaFinding]) -> None:
    if findings:
        raise InternalError(artifact.path, findings[0].path, findings[0].message)


def _check_wrappers_agree(cluster: Cluster, artifacts: list[Artifact]) -> None:
    """Every GitOps wrapper pins its chart's version and carries exactly the content of that chart's values file."""
    values = {a.path: a.documents[0] for a in artifacts if a.documents}
    wrappers = [(a.path, d) for a in artifacts if a.kind in GITOPS_KINDS for d in a.documents]
    if not wrappers:
        return
    charts: dict[str, tuple[str, Any, str]] = {}
    if VALUES_FILE in values:
        charts[CHART] = (cluster.operator.release.version, values[VALUES_FILE], VALUES_FILE)
    for release in backend_of(cluster).releases(cluster):
        charts[release.chart] = (release.version, values.get(release.values_file, {}), release.values_file)
    for path, message in wrapper_disagreements(charts, wrappers):
        raise InternalError(path, "", message)


def _validate_kubernetes(cluster: Cluster, artifacts: list[Artifact]) -> None:
    """Kubernetes objects and the pod-spec parts of workload fragments, strictly, for the cluster's version.

    Documents with ``apiVersion`` and ``kind`` are checked when ``kubernetes-validate`` ships a schema for
    them; others (Kustomization, which is not an API object) are skipped. ConfigMaps and the DRA objects
    are always checked: a missing schema for them is an error.
    """
    for artifact in artifacts:
        for document in artifact.documents:
            if artifact.kind == "workload-values":
                findings = check_workload_fragment(document, cluster.kubernetes)
            elif isinstance(document.get("apiVersion"), str) and isinstance(document.get("kind"), str):
                try:
                    findings = check_kubernetes_object(_as_text(document), cluster.kubernetes)
                except KubernetesSchemaNotFound:
                    if document["kind"] in ALWAYS_CHECKED_KINDS:
                        raise
                    continue
            else:
                continue
            if findings:
                first = findings[0]
                raise InternalError(
                    artifact.path, first.path, f"{first.message} (Kubernetes {cluster.kubernetes} schema)"
                )


def _as_text(value: Any) -> Any:
    """Embedded YAML files become strings, as in the written file: the schema only asks for a string."""
    if isinstance(value, EmbeddedYaml):
        return "<embedded YAML>"
    if isinstance(value, dict):
        return {key: _as_text(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_as_text(item) for item in value]
    return value


def _embedded(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(key, value.data) for key, value in document.get("data", {}).items() if isinstance(value, EmbeddedYaml)]


@functools.lru_cache(maxsize=MEMO_SIZE)
def _memoised_operator_findings(kind: OperatorSchemaKind, version: str, key: str) -> tuple[SchemaFinding, ...]:
    return tuple(findings_from_errors(operator_validator(kind, version).iter_errors(json.loads(key))))


def _check_operator_document(
    artifact: Artifact, prefix: str, document: dict[str, Any], kind: OperatorSchemaKind, version: str
) -> None:
    """The strict per-version schema: only keys the chart version has, with the right types and enums."""
    key = json_key(document)
    findings = (
        list(_memoised_operator_findings(kind, version, key))
        if key is not None
        else findings_from_errors(operator_validator(kind, version).iter_errors(document))
    )
    if findings:
        first = findings[0]
        raise InternalError(artifact.path, prefix + first.path, f"{first.message} (GPU Operator {version})")
