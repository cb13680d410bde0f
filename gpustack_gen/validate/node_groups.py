"""Checks of the node-group fragments: what each provider refuses that a plain schema would let through.

The upstream CRDs and schemas (Karpenter's NodePool, eksctl's ClusterConfig, Cluster API's MachineDeployment)
are held against the same documents in the test suite; these are the rules they carry in CEL or in code
(node-groups.md §9.2): Karpenter's restricted label domains (kubernetes-sigs/karpenter@v1.14.1
``pkg/apis/v1/labels.go:137-152``), eksctl's and GKE's reserved ``kubernetes.io/`` and ``k8s.io/`` prefixes,
label syntax, and each format's taint effects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..compile.artifact import NODE_GROUP_KINDS
from ..compile.node_groups.nodes import KUBERNETES_DOMAINS, in_domains
from ..model.names import explain_label_key, explain_label_value
from .findings import SchemaFinding

__all__ = ["check_node_group_document"]

K8S_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
GKE_EFFECTS = ("NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE")
KARPENTER_MAX_LABELS = 100  # the CRD's maxProperties of spec.template.metadata.labels
KARPENTER_ALLOWED = ("karpenter.sh/capacity-type",)
KARPENTER_RESTRICTED = ("kubernetes.io/hostname",)
AKS_TAINT = re.compile(r"^(?P<key>[^=:]+)(=(?P<value>[^:]*))?:(?P<effect>[A-Za-z]+)$")


def _labels(path: str, labels: Mapping[str, Any]) -> Iterator[SchemaFinding]:
    for key, value in labels.items():
        problem = explain_label_key(key) or (
            explain_label_value(value) if isinstance(value, str) else "a label value is a string"
        )
        if problem:
            yield SchemaFinding(f"{path}.{key}", problem)


def _taints(path: str, taints: list[Any], effects: tuple[str, ...]) -> Iterator[SchemaFinding]:
    for index, taint in enumerate(taints):
        if taint.get("effect") not in effects:
            yield SchemaFinding(f"{path}[{index}].effect", f"effect {taint.get('effect')!r} is not one of {effects}")
        problem = explain_label_key(str(taint.get("key", "")))
        if problem:
            yield SchemaFinding(f"{path}[{index}].key", problem)


def _reserved(path: str, labels: Mapping[str, Any], domains: tuple[str, ...]) -> Iterator[SchemaFinding]:
    for key in labels:
        if in_domains(key, domains):
            yield SchemaFinding(
                f"{path}.{key}", f"label {key} has a prefix the provider reserves ({', '.join(domains)})"
            )


def _karpenter(document: Mapping[str, Any]) -> Iterator[SchemaFinding]:
    template = document["spec"]["template"]
    labels = template["metadata"]["labels"]
    path = "spec.template.metadata.labels"
    yield from _labels(path, labels)
    if len(labels) > KARPENTER_MAX_LABELS:
        yield SchemaFinding(path, f"{len(labels)} labels, Karpenter takes at most {KARPENTER_MAX_LABELS}")
    for key in labels:
        if key in KARPENTER_RESTRICTED or (in_domains(key, ("karpenter.sh",)) and key not in KARPENTER_ALLOWED):
            yield SchemaFinding(f"{path}.{key}", f"Karpenter refuses the label {key} in a NodePool template")
    yield from _taints("spec.template.spec.taints", template.get("spec", {}).get("taints", []), K8S_EFFECTS)


def _eksctl(document: Mapping[str, Any]) -> Iterator[SchemaFinding]:
    for index, group in enumerate(document["managedNodeGroups"]):
        path = f"managedNodeGroups[{index}]"
        yield from _labels(f"{path}.labels", group["labels"])
        yield from _reserved(f"{path}.labels", group["labels"], KUBERNETES_DOMAINS)
        yield from _taints(f"{path}.taints", group.get("taints", []), K8S_EFFECTS)


def _gke(document: Mapping[str, Any]) -> Iterator[SchemaFinding]:
    config = document["node_config"]
    yield from _labels("node_config.labels", config["labels"])
    yield from _reserved("node_config.labels", config["labels"], KUBERNETES_DOMAINS)
    yield from _taints("node_config.taint", config.get("taint", []), GKE_EFFECTS)


def _aks(document: Mapping[str, Any]) -> Iterator[SchemaFinding]:
    properties = document["properties"]
    yield from _labels("properties.nodeLabels", properties["nodeLabels"])
    for index, text in enumerate(properties.get("nodeTaints", [])):
        found = AKS_TAINT.match(text)
        if found is None or found["effect"] not in K8S_EFFECTS or explain_label_key(found["key"]):
            yield SchemaFinding(f"properties.nodeTaints[{index}]", f"{text!r} is not key=value:Effect")


def _cluster_api(document: Mapping[str, Any]) -> Iterator[SchemaFinding]:
    template = document["spec"]["template"]
    yield from _labels("spec.template.metadata.labels", template["metadata"]["labels"])
    taints = template.get("spec", {}).get("taints", [])
    yield from _taints("spec.template.spec.taints", taints, K8S_EFFECTS)
    for index, taint in enumerate(taints):
        if taint.get("propagation") not in ("Always", "OnInitialization"):
            yield SchemaFinding(f"spec.template.spec.taints[{index}].propagation", "Always or OnInitialization")


_CHECKS: Mapping[str, Callable[[Mapping[str, Any]], Iterator[SchemaFinding]]] = {
    NODE_GROUP_KINDS["karpenter"]: _karpenter,
    NODE_GROUP_KINDS["eksctl"]: _eksctl,
    NODE_GROUP_KINDS["gke"]: _gke,
    NODE_GROUP_KINDS["aks"]: _aks,
    NODE_GROUP_KINDS["cluster-api"]: _cluster_api,
}


def check_node_group_document(kind: str, document: Mapping[str, Any]) -> list[SchemaFinding]:
    """Findings of one node-group fragment of artifact kind ``kind``."""
    return list(_CHECKS[kind](document))
