"""Kubernetes objects of a render, validated strictly against the cluster's Kubernetes version."""

from __future__ import annotations

import pytest

from gpustack_gen.validate import kubernetes as k8s
from gpustack_gen.validate.kubernetes import (
    KubernetesSchemaNotFound,
    check_kubernetes_object,
    check_workload_fragment,
    kubernetes_validator,
    schema_dir_for,
    schema_versions,
    select_schema_version,
    workload_pod,
)

NEWEST = "{}.{}".format(*schema_versions()[-1])


def _configmap(**changes: object) -> dict[str, object]:
    document: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "gpustack-device-plugin-config", "namespace": "gpu-operator", "labels": {"a": "b"}},
        "data": {"whole-gpu": "version: v1\n"},
    }
    document.update(changes)
    return document


FRAGMENT = {
    "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "300m", "memory": "3Gi"}},
    "nodeSelector": {"pool": "t4"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
}


@pytest.mark.parametrize("version", ["1.29.15", NEWEST])
def test_valid_objects_pass(version: str) -> None:
    assert check_kubernetes_object(_configmap(), version) == []
    assert check_workload_fragment(FRAGMENT, version) == []


def test_broken_configmap_fails_strictly() -> None:
    findings = check_kubernetes_object(
        _configmap(metadata={"name": "x", "namepsace": "gpu-operator"}, data={"a": 4}), "1.29"
    )
    assert [(f.path, f.message) for f in findings] == [
        ("data.a", "expected a string or null, got 4 (an integer)"),
        ("metadata.namepsace", "unknown key 'namepsace' (did you mean metadata.namespace?)"),
    ]


def test_bad_quantity_fails() -> None:
    fragment = {"resources": {"limits": {"nvidia.com/gpu": True}, "requests": {"memory": "3 GiB"}}}
    findings = check_workload_fragment(fragment, "1.29")
    assert [(f.path, f.message) for f in findings] == [
        ('resources.limits["nvidia.com/gpu"]', "expected a Kubernetes quantity, got true (a boolean)"),
        ("resources.requests.memory", "expected a Kubernetes quantity, got '3 GiB' (a string)"),
    ]


def test_unknown_pod_field_fails_with_fragment_paths() -> None:
    fragment = {**FRAGMENT, "tolerations": [{"key": "a", "operater": "Exists"}], "resources": {"limit": {}}}
    findings = check_workload_fragment(fragment, "1.30")
    assert [(f.path, f.message) for f in findings] == [
        ("resources.limit", "unknown key 'limit' (did you mean resources.limits?)"),
        ("tolerations[0].operater", "unknown key 'operater' (did you mean tolerations[0].operator?)"),
    ]


def test_workload_pod_wraps_only_the_pod_spec_parts() -> None:
    pod = workload_pod({**FRAGMENT, "replicaCount": 3})
    assert pod["spec"]["containers"] == [{"name": "x", "image": "x", "resources": FRAGMENT["resources"]}]
    assert set(pod["spec"]) == {"containers", "nodeSelector", "tolerations"}


AVAILABLE = ((1, 25), (1, 26), (1, 29), (1, 30))


@pytest.mark.parametrize(
    ("cluster", "chosen"),
    [
        ("1.29.15", (1, 29)),  # exact minor
        ("v1.29", (1, 29)),
        ("1.28.3", (1, 26)),  # newest not newer than the cluster
        ("1.31.0", (1, 30)),  # newer than everything: newest
        ("1.20.1", (1, 25)),  # older than everything: oldest
    ],
)
def test_version_selection_rule(cluster: str, chosen: tuple[int, int]) -> None:
    assert select_schema_version(cluster, AVAILABLE) == chosen


def test_version_selection_against_shipped_schemas() -> None:
    shipped = schema_versions()
    assert (1, 29) in shipped
    assert select_schema_version("1.99.0") == shipped[-1]
    assert schema_dir_for("1.29.15").name == "v1.29.0-local-strict"
    with pytest.raises(ValueError, match="not a Kubernetes version"):
        select_schema_version("latest")


def test_validators_are_built_once_per_schema_dir_and_kind() -> None:
    kubernetes_validator.cache_clear()
    k8s.kind_schema.cache_clear()
    k8s._definitions.cache_clear()
    k8s._memoised_part.cache_clear()  # else the fragment below is answered from the memo
    k8s._memoised_object.cache_clear()
    k8s._valid_shapes.clear()
    check_kubernetes_object(_configmap(), "1.29.15")
    check_kubernetes_object(_configmap(), "1.29.2")  # same schema folder, same document: the memo answers
    check_kubernetes_object({**_configmap(), "data": {"whole-gpu": "x"}}, "1.29.2")  # same shape: so does it
    assert k8s._memoised_object.cache_info().misses == 1
    assert len(k8s._valid_shapes) == 1
    check_kubernetes_object({**_configmap(), "data": {"a": "x", "b": "y"}}, "1.29.2")  # new shape, same validator
    assert k8s._memoised_object.cache_info().misses == 2
    assert kubernetes_validator.cache_info().misses == 1
    check_workload_fragment(FRAGMENT, "1.29")  # another kind, same definitions
    assert kubernetes_validator.cache_info().misses == 2
    assert k8s._definitions.cache_info().misses == 1


def test_kind_without_schema_is_reported() -> None:
    with pytest.raises(KubernetesSchemaNotFound, match="Kustomization"):
        check_kubernetes_object({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}, "1.29")


def _example_cluster_artifacts(name: str):  # type: ignore[no-untyped-def]
    from pathlib import Path

    from gpustack_gen.compile import compile_cluster
    from gpustack_gen.model import load_fleet

    fleet = load_fleet(Path(__file__).resolve().parents[2] / "examples" / "fleet.yaml")
    cluster = fleet.cluster(name)
    assert cluster is not None
    return cluster, compile_cluster(cluster)


def test_render_validation_reports_a_bad_workload_fragment_as_internal_error() -> None:
    from gpustack_gen.errors import InternalError
    from gpustack_gen.validate.artifacts import validate_artifacts

    cluster, artifacts = _example_cluster_artifacts("prod")
    validate_artifacts(cluster, artifacts)  # the real output is valid
    fragment = next(a for a in artifacts if a.kind == "workload-values")
    fragment.documents[0]["tolerations"] = [{"key": "a", "efect": "NoSchedule"}]
    with pytest.raises(InternalError) as caught:
        validate_artifacts(cluster, artifacts)
    assert caught.value.artifact == fragment.path
    assert caught.value.path == "tolerations[0].efect"
    assert "Kubernetes 1.29.15 schema" in str(caught.value)


def test_render_validation_reports_a_bad_configmap_as_internal_error() -> None:
    from gpustack_gen.errors import InternalError
    from gpustack_gen.validate.artifacts import validate_artifacts

    cluster, artifacts = _example_cluster_artifacts("train")
    configmap = next(a for a in artifacts if a.kind == "mig-parted-configmap")
    configmap.documents[0]["metadata"]["annotation"] = {"x": "y"}
    with pytest.raises(InternalError) as caught:
        validate_artifacts(cluster, artifacts)
    assert (caught.value.artifact, caught.value.path) == ("mig-parted-config.yaml", "metadata.annotation")
