"""Every ClusterPolicy patch and Helm values file gpustack-gen renders fits that chart version, strictly.

The ClusterPolicy CRD's ``openAPIV3Schema`` (the ``spec`` part) is converted at test time into a strict
JSON Schema: Kubernetes prunes unknown fields of a structural schema silently, and Argo CD fails to sync
fields the installed CRD lacks (gpu-operator#654), so here any key the CRD does not declare is an error.
The Helm values are held against the chart's ``values.yaml``: every leaf path exists, and where the chart
default is a scalar, the value has the same type.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from _fleets import (
    NO_OP_KEYS,
    VERIFIED,
    branch_fleets,
    chart_values,
    clusterpolicy_crd,
    crd_has_path,
    crd_spec_schema,
    example_fleet,
    has_path,
    leaf_items,
    lookup,
    pin,
)
from jsonschema import Draft7Validator

from gpustack_gen import RenderedFile, load_fleet, render
from gpustack_gen.compile.artifact import DEVICE_PLUGIN_CONFIGMAP, MIG_PARTED_CONFIGMAP
from gpustack_gen.compile.backends.gpu_operator import MPS_ROOT
from gpustack_gen.model.fleet import DEFAULT_DEVICE_PLUGIN_KEY
from gpustack_gen.validate.operator_keys import CLUSTERPOLICY_SPEC_KEYS
from gpustack_gen.validate.operator_schema import without_deletions
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

_COMBINATORS = ("anyOf", "allOf", "oneOf")
PLUGIN_CONFIG = {"name": DEVICE_PLUGIN_CONFIGMAP, "default": DEFAULT_DEVICE_PLUGIN_KEY}
MIG_CONFIG = {"name": MIG_PARTED_CONFIGMAP, "default": "all-disabled"}


def strict_json_schema(node: Mapping[str, Any], *, in_list: bool = False) -> dict[str, Any]:
    """A Kubernetes structural schema as a strict Draft 7 JSON Schema.

    - ``x-kubernetes-*`` keywords are dropped; ``x-kubernetes-preserve-unknown-fields`` keeps the object
      open, ``x-kubernetes-int-or-string`` is already spelled as ``anyOf`` integer / string.
    - ``nullable: true`` becomes a ``null`` alternative of the type.
    - An object with ``properties`` and neither ``additionalProperties`` nor preserve-unknown-fields gets
      ``additionalProperties: false``: the API server would prune the unknown key, we reject it.
      ``type: object`` without properties (maps, free-form objects) stays open.
    - ``required`` is dropped on objects outside lists: a merge patch is partial by nature (the CRD
      requires ``spec.daemonsets``, ``spec.driver``... which the live object has). Inside list items it
      stays, since a merge patch replaces a list whole.
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key == "nullable":
            continue
        if key == "properties":
            out[key] = {name: strict_json_schema(sub, in_list=in_list) for name, sub in value.items()}
        elif key == "items" and isinstance(value, Mapping):
            out[key] = strict_json_schema(value, in_list=True)
        elif key == "additionalProperties" and isinstance(value, Mapping):
            out[key] = strict_json_schema(value, in_list=in_list)
        elif key in _COMBINATORS:
            out[key] = [strict_json_schema(sub, in_list=in_list) for sub in value]
        elif key == "not":
            out[key] = strict_json_schema(value, in_list=in_list)
        elif key == "required" and not in_list:
            continue
        else:
            out[key] = copy.deepcopy(value)
    if node.get("nullable") is True and "type" in out:
        out["type"] = [out["type"], "null"]
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    return out


def patch_validator(upstream: Path, version: str) -> Draft7Validator:
    spec = strict_json_schema(crd_spec_schema(clusterpolicy_crd(upstream, version)))
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"spec": spec},
        "required": ["spec"],
        "additionalProperties": False,
    }
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


_validators: dict[tuple[Path, str], Draft7Validator] = {}


def validator_for(upstream: Path, version: str) -> Draft7Validator:
    if (upstream, version) not in _validators:
        _validators[upstream, version] = patch_validator(upstream, version)
    return _validators[upstream, version]


def errors(validator: Draft7Validator, document: Any) -> list[str]:
    return sorted(
        f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in validator.iter_errors(document)
    )


def fleets_for(target: OperatorVersion) -> dict[str, dict[str, Any]]:
    return {"example": pin(example_fleet(), target), **branch_fleets(target)}


def rendered(target: OperatorVersion) -> dict[str, dict[str, RenderedFile]]:
    """Fleet name -> its rendered files, each fleet pinned to ``target``."""
    return {name: render(load_fleet(data, name=name)).files for name, data in fleets_for(target).items()}


def files_of_kind(files: dict[str, RenderedFile], kind: str) -> list[RenderedFile]:
    found = [f for f in files.values() if f.kind == kind]
    assert found, f"no {kind} file rendered"
    return found


def _scalar_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


# --- the converter itself is strict --------------------------------------------------------------------


@pytest.mark.parametrize("target", VERIFIED, ids=lambda v: v.version)
def test_converted_schema_rejects_what_the_crd_lacks(upstream: Path, target: OperatorVersion) -> None:
    validator = validator_for(upstream, target.version)
    assert errors(validator, {"spec": {}}) == []
    assert errors(validator, {"spec": {"cdi": {"enabled": True, "bogus": 1}}}) != []
    assert errors(validator, {"spec": {"devicePlugin": {"config": {"nmae": "x"}}}}) != []
    assert errors(validator, {"spec": {"mig": {"strategy": "both"}}}) != []  # enum
    assert errors(validator, {"spec": {"cdi": {"enabled": "yes"}}}) != []  # type
    assert errors(validator, {"metadata": {}, "spec": {}}) != []
    # A merge patch replaces lists whole, so list items keep their required keys.
    assert errors(validator, {"spec": {"devicePlugin": {"env": [{"value": "x"}]}}}) != []
    assert errors(validator, {"spec": {"devicePlugin": {"env": [{"name": "A", "value": "x"}]}}}) == []
    mps_patch = {"spec": {"devicePlugin": {"mps": {"root": MPS_ROOT}}}}
    assert (errors(validator, mps_patch) == []) is target.has_mps
    nri_patch = {"spec": {"cdi": {"nriPluginEnabled": True}}}
    assert (errors(validator, nri_patch) == []) is target.has_nri_plugin


# --- the gate table against the CRD --------------------------------------------------------------------


@pytest.mark.parametrize("target", VERIFIED, ids=lambda v: v.version)
def test_clusterpolicy_gates_agree_with_the_crd(upstream: Path, target: OperatorVersion) -> None:
    spec = crd_spec_schema(clusterpolicy_crd(upstream, target.version))
    for gate in CLUSTERPOLICY_SPEC_KEYS:
        present = crd_has_path(spec, gate.path)
        if gate.allows(target):
            assert present, f"spec.{gate.path} is written for {target.version} but its CRD lacks it"
        elif present:
            assert gate.path in NO_OP_KEYS, f"spec.{gate.path} is in the {target.version} CRD but not written"
            assert target.at_least(NO_OP_KEYS[gate.path][0])


def test_no_op_exceptions_are_still_needed(upstream: Path) -> None:
    """Each NO_OP_KEYS entry is present upstream in at least one version whose gate drops it."""
    for path, (since_no_op, _) in NO_OP_KEYS.items():
        versions = [
            target.version
            for target in VERIFIED
            if target.at_least(since_no_op)
            and (
                crd_has_path(crd_spec_schema(clusterpolicy_crd(upstream, target.version)), path)
                or has_path(chart_values(upstream, target.version), path)
            )
        ]
        assert versions, f"{path}: no verified version keeps it after {since_no_op}; drop the exception"


# --- rendered files against each version ---------------------------------------------------------------


@pytest.mark.parametrize("target", VERIFIED, ids=lambda v: v.version)
def test_clusterpolicy_patches_validate_against_the_crd(upstream: Path, target: OperatorVersion) -> None:
    validator = validator_for(upstream, target.version)
    checked = 0
    for fleet, files in rendered(target).items():
        for patch in files_of_kind(files, "clusterpolicy-patch"):
            (document,) = patch.documents
            assert set(document) == {"spec"}
            # null deletes a key in a merge patch: what remains must fit the CRD, and what is deleted must
            # be a field the CRD has (deleting an unknown field would be a silent no-op).
            assert errors(validator, {"spec": without_deletions(document["spec"])}) == [], f"{fleet}: {patch.path}"
            for path, value in leaf_items(document["spec"]):
                if value is None:
                    assert crd_has_path(crd_spec_schema(clusterpolicy_crd(upstream, target.version)), path), (
                        f"{fleet}: deletes {path}"
                    )
            checked += 1
    assert checked >= len(fleets_for(target))


@pytest.mark.parametrize("target", VERIFIED, ids=lambda v: v.version)
def test_helm_values_exist_in_the_chart_with_the_default_type(upstream: Path, target: OperatorVersion) -> None:
    chart = chart_values(upstream, target.version)
    problems: list[str] = []
    for fleet, files in rendered(target).items():
        for values in files_of_kind(files, "helm-values"):
            (document,) = values.documents
            for path, value in leaf_items(document):
                where = f"{fleet}: {values.path}: {path}"
                default = lookup(chart, path)
                if not has_path(chart, path):
                    problems.append(f"{where}: not in values.yaml {target.version}")
                elif _scalar_kind(default) is not None and _scalar_kind(default) != _scalar_kind(value):
                    problems.append(f"{where}: {value!r} is not of the type of the default {default!r}")
    assert problems == []


@pytest.mark.parametrize("target", OPERATOR_VERSIONS, ids=lambda v: v.version)
def test_each_branch_writes_its_settings(target: OperatorVersion) -> None:
    """The branch fleets really exercise the branches they are named after."""
    patches = {
        name: files["c/clusterpolicy-patch.yaml"].documents[0]["spec"]
        for name, files in rendered(target).items()
        if name != "example"
    }
    # The device-plugin ConfigMap is always named (so sharing on or off changes no ClusterPolicy setting);
    # an unused MIG reference is deleted, and the driver version is the chart default when nothing pins it.
    assert patches["no-sharing"]["devicePlugin"] == {"config": PLUGIN_CONFIG}
    assert patches["no-sharing"]["migManager"] == {"config": {"name": None}}
    if target.driver is not None:
        assert lookup(patches["no-sharing"], "driver.version") == target.driver
    assert lookup(patches["time-slicing"], "devicePlugin.config") == PLUGIN_CONFIG
    assert "mps" not in patches["time-slicing"]["devicePlugin"]
    assert lookup(patches["mig-layout"], "migManager.config") == MIG_CONFIG
    assert lookup(patches["mig-layout"], "mig.strategy") == "mixed"
    # A built-in config gets the cluster's own mig-parted ConfigMap too: it must not depend on the
    # default ConfigMap of whichever mig-manager the chart ships.
    assert lookup(patches["mig-builtin-single"], "migManager.config") == MIG_CONFIG
    assert lookup(patches["mig-builtin-single"], "mig.strategy") == "single"
    assert lookup(patches["driver-disabled"], "driver.enabled") is False
    assert "version" not in patches["driver-disabled"]["driver"]
    assert lookup(patches["driver-version"], "driver.version") == "570.124.06"
    assert lookup(patches["cdi-and-toolkit-off"], "cdi.enabled") is False
    assert lookup(patches["cdi-and-toolkit-off"], "toolkit.enabled") is False
    if target.has_cdi_default:
        assert lookup(patches["cdi-default"], "cdi.default") is True
    if target.has_mps:
        assert lookup(patches["mps"], "devicePlugin.mps.root") == MPS_ROOT
        assert lookup(patches["mps"], "devicePlugin.config") == PLUGIN_CONFIG
    if target.has_nri_plugin:
        assert lookup(patches["nri-plugin"], "cdi.nriPluginEnabled") is True
