"""Shapes: which strings a schema cannot reject are left out, and a malformed object of a known shape is caught."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack_gen.errors import InternalError
from gpustack_gen.validate import kubernetes as k8s
from gpustack_gen.validate.kubernetes import check_kubernetes_object
from gpustack_gen.validate.shape import NotPlain, shape_key

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "free": {"type": "string", "description": "any string"},
        "nullable": {"type": ["string", "null"]},
        "wrapped": {"description": "a reference with a sibling", "allOf": [{"type": "string"}]},
        "pattern": {"type": "string", "pattern": "^x$"},
        "enum": {"type": "string", "enum": ["a", "b"]},
        "length": {"type": "string", "maxLength": 3},
        "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "matching": {"oneOf": [{"type": "string", "pattern": "^x$"}, {"type": "integer"}]},
        "count": {"type": "integer"},
        "bounded": {"type": "integer", "maximum": 3},
        "unique": {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
        "listed": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "whole": {"type": "object", "enum": [{"k": "v"}], "properties": {"k": {"type": "string"}}},
        "opaque": {"type": "object"},
    },
}


def _shape(**values: Any) -> str:
    return shape_key(values, SCHEMA)


def test_strings_no_keyword_can_reject_are_left_out() -> None:
    for field in ("free", "nullable", "wrapped", "either"):
        assert _shape(**{field: "one"}) == _shape(**{field: "two"})
    assert _shape(count=1) == _shape(count=5) == _shape(either=7).replace("either", "count")
    assert _shape(listed=["a", "b"]) == _shape(listed=["c", "d"])
    assert _shape(labels={"pool": "a"}) == _shape(labels={"zone": "b"})  # a map: its key names too
    assert _shape(opaque={"a": [1]}) == _shape(opaque={})  # nothing below a type-only schema is looked at


@pytest.mark.parametrize(
    ("field", "one", "two"),
    [
        ("pattern", "x", "y"),
        ("enum", "a", "c"),
        ("length", "abc", "abcd"),
        ("matching", "x", "y"),
        ("bounded", 1, 4),
        ("count", 1, 1.0),
        ("count", 1, True),
        ("labels", {"a": "b"}, {"a": "b", "c": "d"}),
        ("unique", ["a", "b"], ["a", "a"]),
        ("whole", {"k": "v"}, {"k": "w"}),
        ("unknown", "a", "b"),  # no schema for it: kept
    ],
)
def test_values_a_keyword_looks_at_are_kept(field: str, one: Any, two: Any) -> None:
    assert _shape(**{field: one}) != _shape(**{field: two})


def test_keys_types_and_order_are_kept() -> None:
    assert _shape(whole={"k": "v"}) != _shape(whole={"j": "v"})
    assert _shape(free="1") != _shape(free=1)
    assert _shape(listed=[1]) != _shape(listed=[True]) != _shape(listed=[1.0])
    assert _shape(free="a", listed=[]) != _shape(listed=[], free="a")


def test_data_that_is_not_plain_json_has_no_shape() -> None:
    with pytest.raises(NotPlain):
        shape_key({"listed": ("a",)}, SCHEMA)
    with pytest.raises(NotPlain):
        shape_key({1: "a"}, SCHEMA)
    with pytest.raises(NotPlain):
        shape_key({"opaque": {"a": ("b",)}}, SCHEMA)


def _configmap(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "gpu"}, "data": data}


def test_a_malformed_object_of_a_shape_that_passed_is_still_caught() -> None:
    k8s._valid_shapes.clear()
    assert check_kubernetes_object(_configmap("a", {"config": "x"}), "1.29.15") == []
    assert check_kubernetes_object(_configmap("b", {"config": "y"}), "1.29.15") == []  # the same shape
    assert len(k8s._valid_shapes) == 1

    wrong_type = check_kubernetes_object(_configmap("c", {"config": 3}), "1.29.15")
    unknown_key = check_kubernetes_object({**_configmap("d", {"config": "z"}), "extra": "e"}, "1.29.15")

    assert [f.path for f in wrong_type] == ["data.config"]
    assert [f.path for f in unknown_key] == ["extra"]


def test_findings_of_a_failing_shape_name_each_document_s_own_values() -> None:
    k8s._valid_shapes.clear()
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}
    first = check_kubernetes_object({**pod, "spec": {"containers": [{"name": "a", "image": 1}]}}, "1.29.15")
    second = check_kubernetes_object({**pod, "spec": {"containers": [{"name": "b", "image": 2}]}}, "1.29.15")
    assert first and second
    assert "1" in first[0].message and "2" in second[0].message


def test_render_validation_still_reports_a_bad_document_injected_after_a_good_one() -> None:
    from pathlib import Path

    from gpustack_gen.compile import compile_cluster
    from gpustack_gen.model import load_fleet
    from gpustack_gen.validate.artifacts import validate_artifacts

    fleet = load_fleet(Path(__file__).resolve().parents[2] / "examples" / "fleet.yaml")
    cluster = fleet.clusters[0]
    artifacts = compile_cluster(cluster)
    validate_artifacts(cluster, artifacts)  # every shape of the real output is now known to pass
    configmap = next(a for a in artifacts if a.documents and a.documents[0].get("kind") == "ConfigMap")
    configmap.documents[0]["metadata"]["name"] = ["not", "a", "string"]

    with pytest.raises(InternalError) as caught:
        validate_artifacts(cluster, artifacts)

    assert (caught.value.artifact, caught.value.path) == (configmap.path, "metadata.name")


def test_a_workload_fragment_of_a_passing_shape_still_has_its_quantities_checked() -> None:
    k8s._valid_shapes.clear()
    good = {"resources": {"limits": {"nvidia.com/gpu": "1"}}, "nodeSelector": {"pool": "t4"}}
    assert k8s.check_workload_fragment(good, "1.29.15") == []
    bad_quantity = {"resources": {"limits": {"nvidia.com/gpu": "one"}}, "nodeSelector": {"pool": "a10"}}
    bad_type = {"resources": {"limits": {"nvidia.com/gpu": "1"}}, "nodeSelector": {"pool": 4}}

    assert [f.path for f in k8s.check_workload_fragment(bad_quantity, "1.29.15")] == [
        'resources.limits["nvidia.com/gpu"]'
    ]
    assert [f.path for f in k8s.check_workload_fragment(bad_type, "1.29.15")] == ["nodeSelector.pool"]


def test_a_malformed_gitops_document_of_a_shape_that_passed_is_still_caught() -> None:
    from gpustack_gen.validate import gitops

    gitops._valid_shapes.clear()
    application = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "gpu-operator", "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": "https://helm.ngc.nvidia.com/nvidia",
                "chart": "gpu-operator",
                "targetRevision": "v25.3.3",
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "gpu-operator"},
        },
    }
    first = gitops.check_gitops_document(application)
    renamed = {**application, "metadata": {"name": "other", "namespace": "argocd"}}
    assert gitops.check_gitops_document(renamed) == first
    broken = {**application, "metadata": {"name": 3, "namespace": "argocd"}}

    assert gitops.check_gitops_document(broken) != first


# Parts of workload fragments, valid and not, alike and unlike in what the Pod schema looks at.
_PARTS: dict[str, list[Any]] = {
    "resources": [
        {"limits": {"nvidia.com/gpu": "1"}},
        {"limits": {"nvidia.com/gpu": "2"}},
        {"limits": {"nvidia.com/gpu": 1}, "requests": {"memory": "4Gi"}},
        {"limits": {"nvidia.com/gpu": True}},
        {"limts": {}},
        {"claims": [{"name": "gpu"}]},
    ],
    "nodeSelector": [{"pool": "a"}, {"pool": "b", "zone": "z"}, {"pool": 4}, {}],
    "tolerations": [
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        [{"key": "other", "operator": "Exists", "effect": "NoSchedule"}],
        [{"key": "nvidia.com/gpu", "operator": "Exist"}],
        [],
    ],
    "resourceClaims": [[{"name": "gpu", "resourceClaimName": "c"}], [{"name": "gpu", "bogus": 1}]],
}


def _fragments() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{}]
    for part, values in _PARTS.items():
        out = [*out, *({**fragment, part: value} for fragment in out[:12] for value in values)]
    return out


def test_a_fragment_s_shape_by_its_parts_tells_pods_apart_as_the_pod_s_own_shape_does() -> None:
    version = "1.31.0"
    schema = k8s.kubernetes_validator(str(k8s.schema_dir_for(version)), "Pod", "v1").schema
    by_parts: dict[Any, set[str]] = {}
    for fragment in _fragments():
        by_parts.setdefault(k8s._pod_shape(fragment, version), set()).add(shape_key(k8s.workload_pod(fragment), schema))
    assert all(len(shapes) == 1 for shapes in by_parts.values())  # one part-shape, one Pod shape
    assert len(by_parts) > 10  # and the parts' shapes do tell fragments apart
    assert k8s._pod_shape({"nodeSelector": {"pool": 4.5j}}, version) is None  # not plain JSON: no shape


def test_fragments_checked_through_their_parts_shapes_have_their_own_findings() -> None:
    k8s._valid_shapes.clear()
    k8s._memoised_part.cache_clear()
    fragments = _fragments()
    assert any(k8s._check_fragment(fragment, "1.31.0") for fragment in fragments)
    for fragment in [*fragments, *reversed(fragments)]:  # each answered after shapes passed and failed
        assert k8s.check_workload_fragment(fragment, "1.31.0") == k8s._check_fragment(fragment, "1.31.0")
