"""Kubernetes schemas with their references inlined validate exactly as the schemas as written do.

Every Kubernetes object the example fleets render, and mutations of them (unknown keys, wrong types,
removed keys), get the same findings from the inlined validator as from one that resolves each
``$ref`` through the registry; mutations are still caught.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from ruamel.yaml import YAML

from gpustack_gen import load_fleet, render
from gpustack_gen.validate.findings import findings_from_errors
from gpustack_gen.validate.inline_refs import inline_refs
from gpustack_gen.validate.kubernetes import (
    KubernetesSchemaNotFound,
    check_kubernetes_object,
    kind_schema,
    kubernetes_validator,
    schema_dir_for,
    workload_pod,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FLEETS = ("fleet.yaml", "hami/fleet.yaml", "dra/fleet.yaml")


@functools.cache
def rendered_objects() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(Kubernetes version, object as written) of every object with a schema that the examples render."""
    yaml = YAML(typ="safe", pure=True)
    found = []
    for name in FLEETS:
        fleet = load_fleet(EXAMPLES / name)
        versions = {c.name: c.kubernetes for c in fleet.clusters}
        for path, rendered in render(fleet).files.items():
            for document in yaml.load_all(rendered.text):
                if not isinstance(document, dict) or "kind" not in document:
                    continue
                try:
                    kind_schema(
                        str(schema_dir_for(versions[path.split("/")[0]])), document["kind"], document["apiVersion"]
                    )
                except KubernetesSchemaNotFound:
                    continue
                found.append((versions[path.split("/")[0]], document))
    fragment = {"resources": {"limits": {"nvidia.com/gpu": 1}}, "tolerations": [{"key": "k", "operator": "Exists"}]}
    found.append(("1.30.2", workload_pod(fragment)))
    return tuple(found)


def _both(document: dict[str, Any], kubernetes: str) -> tuple[list[Any], list[Any]]:
    schema_dir = str(schema_dir_for(kubernetes))
    schema, _, registry = kind_schema(schema_dir, document["kind"], document["apiVersion"])
    as_written = Draft202012Validator(schema, registry=registry, format_checker=None)
    inlined = kubernetes_validator(schema_dir, document["kind"], document["apiVersion"])
    return findings_from_errors(as_written.iter_errors(document)), findings_from_errors(inlined.iter_errors(document))


def test_the_examples_render_objects_of_several_kinds() -> None:
    kinds = {document["kind"] for _, document in rendered_objects()}
    assert {"ConfigMap", "Pod", "Namespace"} <= kinds, kinds


@pytest.mark.parametrize("index", range(len(rendered_objects())))
def test_rendered_objects_are_valid_both_ways(index: int) -> None:
    kubernetes, document = rendered_objects()[index]
    assert _both(document, kubernetes) == ([], [])


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, sub in value.items():
            out += _places(sub, (*path, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            out += _places(sub, (*path, index))
    return out


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


MUTATIONS = ("unknown key", "integer", "list", "mapping", "string", "remove")


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_objects_get_the_same_findings(data: st.DataObject) -> None:
    kubernetes, original = data.draw(st.sampled_from(rendered_objects()))
    document = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_places(document)))
        mutation = data.draw(st.sampled_from(MUTATIONS))
        target = _at(document, path)
        if mutation == "unknown key":
            if isinstance(target, dict):
                target["notAField"] = 1
        elif path and path[0] not in ("apiVersion", "kind"):  # those pick the schema
            parent = _at(document, path[:-1])
            if mutation == "remove":
                parent.pop(path[-1]) if isinstance(parent, dict) else parent.__delitem__(path[-1])
            else:
                parent[path[-1]] = {"integer": 7, "list": [1], "mapping": {"a": [1]}, "string": "x"}[mutation]
    as_written, inlined = _both(document, kubernetes)
    assert inlined == as_written


def test_mutations_are_still_caught() -> None:
    kubernetes, configmap = next((v, d) for v, d in rendered_objects() if d["kind"] == "ConfigMap")
    broken = copy.deepcopy(configmap)
    broken["metadata"]["nam"] = broken["metadata"].pop("name")
    broken["metadata"]["labels"] = ["not", "a", "map"]
    paths = {finding.path for finding in check_kubernetes_object(broken, kubernetes)}
    assert {"metadata.nam", "metadata.labels"} <= paths, paths
    pod = workload_pod({"tolerations": [{"key": "k", "operator": "Exists", "efect": "NoSchedule"}]})
    assert [f.path for f in check_kubernetes_object(pod, "1.30.2")] == ["spec.tolerations[0].efect"]


def _registry(*resources: tuple[str, dict[str, Any]]) -> Any:
    return Registry().with_resources([(uri, Resource.from_contents(body)) for uri, body in resources])


def test_a_recursive_reference_stays_a_reference_and_still_validates() -> None:
    tree = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {
            "node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}, "additionalProperties": False}
        },
        "$ref": "#/$defs/node",
    }
    registry = _registry(("https://x.test/tree", tree))
    inlined = inline_refs(tree, "https://x.test/tree", registry)
    assert inlined["allOf"][0]["properties"]["child"] == {"$ref": "https://x.test/tree#/$defs/node"}
    validator = Draft202012Validator(inlined, registry=registry)
    assert validator.is_valid({"child": {"child": {}}})
    assert not validator.is_valid({"child": {"child": {"other": 1}}})


def test_a_property_named_ref_is_a_name_and_validation_siblings_are_kept() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"text": {"type": "string"}},
        "properties": {
            "$ref": {"$ref": "#/$defs/text", "description": "a property named $ref"},
            "short": {"$ref": "#/$defs/text", "maxLength": 2},
        },
    }
    inlined = inline_refs(schema, "https://x.test/s", _registry(("https://x.test/s", schema)))
    assert inlined["properties"]["$ref"] == {"description": "a property named $ref", "allOf": [{"type": "string"}]}
    assert inlined["properties"]["short"] == {"maxLength": 2, "allOf": [{"type": "string"}]}
    validator = Draft202012Validator(inlined)
    assert validator.is_valid({"$ref": "x", "short": "ab"})
    assert not validator.is_valid({"short": "abc"})
    assert not validator.is_valid({"$ref": 1})
