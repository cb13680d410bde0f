"""A healthy cluster's ClusterPolicy as the API server stores it verifies clean, on every known Operator version.

The live object is built as a real cluster gets it: the fixture's ClusterPolicy with the rendered merge patch
applied (RFC 7386: a ``null`` removes the field), then the pinned version's CRD defaults filled in as the API
server does (``kubernetes/apiextensions-apiserver@v0.34.0 pkg/apiserver/schema/defaulting/algorithm.go:34-47``: an
absent field, or a null where the schema is not nullable, gets its default; ``prunenulls.go``: other nulls are
dropped). The defaults are read from the CRD of ../shared/upstream here, not from gpustack-gen's table.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from verify_helpers import EXAMPLE, ROOT, copy_state

from gpustack_gen import load_fleet
from gpustack_gen.compile import compile_cluster
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.verify import read_state_dir, verify_cluster
from gpustack_gen.verify.crd_defaults import STAND_INS
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

# fixture folder -> the fleet file and cluster it matches
HEALTHY = {
    "prod-healthy": (EXAMPLE, "prod"),
    "train-healthy": (EXAMPLE, "train"),
    "stage-hami-healthy": (ROOT / "examples" / "hami" / "fleet.yaml", "stage"),
}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def apply_defaults(schema: Mapping[str, Any], value: Any) -> Any:
    """``value`` with the structural schema's defaults filled in and nulls pruned, as the API server stores it."""
    if isinstance(value, list):
        items = schema.get("items") or {}
        return [apply_defaults(items, item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    properties = schema.get("properties") or {}
    for key, sub in properties.items():
        if (key not in value or (value[key] is None and not sub.get("nullable"))) and "default" in sub:
            out[key] = copy.deepcopy(sub["default"])
    for key, item in value.items():
        if key in out:
            continue
        sub = properties.get(
            key, schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else {}
        )
        if item is None and not sub.get("nullable"):
            continue
        out[key] = apply_defaults(sub, item)
    return out


def crd_spec(upstream: Path, release: OperatorVersion) -> Mapping[str, Any]:
    version = STAND_INS.get(release.version, release.version)  # a version whose CRD was not read: its stand-in
    crd = YAML(typ="safe").load((upstream / "gpu-operator" / version / "nvidia.com_clusterpolicies.yaml").read_text())
    spec: Mapping[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


def pinned(fleet_file: Path, name: str, release: OperatorVersion) -> Cluster:
    data = YAML(typ="safe").load(fleet_file.read_text(encoding="utf-8"))
    operator = data["defaults"]["operator"]
    operator["version"] = release.version
    if not release.has_cdi_default:
        operator["cdi"].pop("default", None)
    found = load_fleet(data).cluster(name)
    assert found is not None
    return found


@pytest.mark.parametrize("release", OPERATOR_VERSIONS, ids=lambda release: release.version)
@pytest.mark.parametrize("scenario", sorted(HEALTHY))
def test_a_healthy_cluster_as_stored_verifies_clean(
    upstream: Path, tmp_path: Path, scenario: str, release: OperatorVersion
) -> None:
    fleet_file, name = HEALTHY[scenario]
    cluster = pinned(fleet_file, name, release)
    patch = next(a for a in compile_cluster(cluster) if a.kind == "clusterpolicy-patch").documents[0]["spec"]
    schema = crd_spec(upstream, release)

    def store(files: dict[str, Any]) -> None:
        policy = files["clusterpolicy.json"]["items"][0]
        policy["spec"] = apply_defaults(schema, merge_patch(policy["spec"], json.loads(json.dumps(patch))))

    folder = copy_state(scenario, tmp_path / "state", store)
    result = verify_cluster(cluster, read_state_dir(folder, cluster), fleet_label=fleet_file.name)
    assert [f.message for f in result.findings if f.check == "clusterpolicy"] == []
    assert result.exit_code == 0, [f.message for f in result.findings]


def test_the_stored_default_is_what_a_null_brings_back(upstream: Path) -> None:
    """The case the table exists for: v25.3.3 stores the CRD default where the patch deletes the name."""
    release = next(r for r in OPERATOR_VERSIONS if r.version == "v25.3.3")
    stored = apply_defaults(crd_spec(upstream, release), {"migManager": {"config": {"name": None}}})
    assert stored["migManager"]["config"] == {"name": "default-mig-parted-config", "default": "all-disabled"}
