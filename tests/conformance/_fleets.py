"""Shared helpers of the Operator conformance tests: pinned fleets and upstream chart lookups.

Every read of ``../shared/upstream`` goes through a Path handed in by the ``upstream`` fixture, so that
a missing folder fails in CI instead of silently skipping.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion, get_operator_version

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_FLEET = REPO_ROOT / "examples" / "fleet.yaml"

VERIFIED = tuple(v for v in OPERATOR_VERSIONS if v.verified)

# Keys that a gate stops writing although upstream still accepts them: key path -> (first version where
# it is a no-op, reason). Only these may be present upstream where the gate table does not allow them.
NO_OP_KEYS: dict[str, tuple[str, str]] = {
    "cdi.default": (
        "v25.10.0",
        "GPU Operator v25.10.0 made CDI the default and deprecated cdi.default ('will be ignored'); the "
        "ClusterPolicy CRD keeps the field (default false, 'Deprecated: This field is no longer used') and "
        "the chart renders it up to v26.3.x, but it has no effect, so gpustack-gen stops writing it there.",
    ),
}


def release(version: str) -> OperatorVersion:
    found = get_operator_version(version)
    assert found is not None, version
    return found


# --- upstream chart files ------------------------------------------------------------------------------


def operator_dir(upstream: Path, version: str) -> Path:
    return upstream / "gpu-operator" / version


@cache
def _load_yaml(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def chart_values(upstream: Path, version: str) -> dict[str, Any]:
    data = _load_yaml(operator_dir(upstream, version) / "values.yaml")
    assert isinstance(data, dict)
    return copy.deepcopy(data)


def clusterpolicy_crd(upstream: Path, version: str) -> dict[str, Any]:
    data = _load_yaml(operator_dir(upstream, version) / "nvidia.com_clusterpolicies.yaml")
    assert isinstance(data, dict) and data["spec"]["names"]["kind"] == "ClusterPolicy"
    return copy.deepcopy(data)


def crd_spec_schema(crd: Mapping[str, Any]) -> dict[str, Any]:
    """The OpenAPI v3 schema of ``spec`` in the single served version (``nvidia.com/v1``)."""
    versions = crd["spec"]["versions"]
    assert [v["name"] for v in versions] == ["v1"]
    spec = versions[0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert isinstance(spec, dict)
    return spec


_MISSING = object()


def lookup(values: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of the chart values, or ``MISSING`` when some key is absent."""
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def has_path(values: Mapping[str, Any], path: str) -> bool:
    return lookup(values, path) is not _MISSING


def crd_has_path(spec_schema: Mapping[str, Any], path: str) -> bool:
    node: Any = spec_schema
    for part in path.split("."):
        properties = node.get("properties") if isinstance(node, Mapping) else None
        if not isinstance(properties, Mapping) or part not in properties:
            return False
        node = properties[part]
    return True


def leaf_items(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            yield from leaf_items(value, path)
        else:
            yield path, value


# --- fleets pinned to one Operator version -------------------------------------------------------------


def example_fleet() -> dict[str, Any]:
    data = YAML(typ="safe").load(EXAMPLE_FLEET.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def pin(fleet: Mapping[str, Any], target: OperatorVersion) -> dict[str, Any]:
    """``fleet`` with ``defaults.operator.version`` set to ``target``, adapted to what it has.

    Drops ``cdi.default`` where it is a no-op (v25.10.0+) and MPS pools / policies before v24.3.0.
    """
    data = copy.deepcopy(dict(fleet))
    operator = data.setdefault("defaults", {}).setdefault("operator", {})
    operator["version"] = target.version
    settings = [operator, *(c.get("operator", {}) for c in data.get("clusters", []))]
    if not target.has_cdi_default:
        for block in settings:
            block.get("cdi", {}).pop("default", None)
    if not target.has_mps:
        _drop_mps(data)
    return data


def _is_mps(policy: Any) -> bool:
    return isinstance(policy, Mapping) and policy.get("strategy") == "mps"


def _drop_mps(data: dict[str, Any]) -> None:
    policies = [data.get("defaults", {}).get("sharing", {})]
    for cluster in data.get("clusters", []):
        policies.append(cluster.get("sharing", {}))
        dropped = {p["name"] for p in cluster.get("nodePools", []) if _is_mps(p.get("sharing"))}
        cluster["nodePools"] = [p for p in cluster.get("nodePools", []) if p["name"] not in dropped]
        cluster["workloads"] = [w for w in cluster.get("workloads", []) if w["pool"] not in dropped]
    for policy in policies:
        for gpu in [gpu for gpu, entry in policy.items() if _is_mps(entry)]:
            del policy[gpu]


def _fleet(target: OperatorVersion, operator: dict[str, Any], cluster: dict[str, Any]) -> dict[str, Any]:
    base_cluster = {"name": "c", "kubernetes": "1.29.15", "containerRuntime": "containerd"}
    return {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "defaults": {"operator": {"version": target.version, **operator}},
        "clusters": [{**base_cluster, **cluster}],
    }


def _pool(name: str, gpu: str, sharing: dict[str, Any], gpus_per_node: int = 1) -> dict[str, Any]:
    return {
        "name": name,
        "gpu": gpu,
        "nodes": 2,
        "gpusPerNode": gpus_per_node,
        "nodeSelector": {"pool": name},
        "sharing": sharing,
    }


T4_WHOLE = _pool("t4", "tesla-t4", {"strategy": "none"})
T4_WHOLE_2 = _pool("t4-whole", "tesla-t4", {"strategy": "none"})
T4_TIME_SLICED = _pool("t4", "tesla-t4", {"strategy": "time-slicing", "replicas": 4})
T4_TIME_SLICED_RENAMED = _pool(
    "t4r",
    "tesla-t4",
    {"strategy": "time-slicing", "replicas": 8, "renameByDefault": True, "failRequestsGreaterThanOne": True},
)
T4_MPS = _pool("t4", "tesla-t4", {"strategy": "mps", "replicas": 4})
A100_LAYOUT = _pool(
    "a100", "a100-40gb", {"strategy": "mig", "layout": {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}, gpus_per_node=8
)
A100_BUILTIN = _pool("a100b", "a100-40gb", {"strategy": "mig", "config": "all-1g.5gb"}, gpus_per_node=8)
A100_BALANCED = _pool("a100c", "a100-40gb", {"strategy": "mig", "config": "all-balanced"}, gpus_per_node=8)


def branch_fleets(target: OperatorVersion) -> dict[str, dict[str, Any]]:
    """Small fleets pinned to ``target``, one per branch of the Operator settings compiler."""
    fleets = {
        "no-sharing": _fleet(target, {}, {"nodePools": [T4_WHOLE]}),
        "time-slicing": _fleet(target, {}, {"nodePools": [T4_TIME_SLICED, T4_TIME_SLICED_RENAMED, T4_WHOLE_2]}),
        "mig-layout": _fleet(target, {}, {"mig": {"strategy": "mixed"}, "nodePools": [A100_LAYOUT]}),
        "mig-builtin-single": _fleet(target, {}, {"mig": {"strategy": "single"}, "nodePools": [A100_BUILTIN]}),
        "mig-builtin-and-layout": _fleet(
            target, {}, {"mig": {"strategy": "mixed"}, "nodePools": [A100_LAYOUT, A100_BALANCED]}
        ),
        "mig-and-time-slicing": _fleet(
            target, {}, {"mig": {"strategy": "mixed"}, "nodePools": [A100_LAYOUT, T4_TIME_SLICED]}
        ),
        "driver-disabled": _fleet(target, {"driver": {"enabled": False}}, {"nodePools": [T4_WHOLE]}),
        "driver-version": _fleet(target, {"driver": {"version": "570.124.06"}}, {"nodePools": [T4_WHOLE]}),
        "cdi-and-toolkit-off": _fleet(
            target, {"cdi": {"enabled": False}, "toolkit": {"enabled": False}}, {"nodePools": [T4_WHOLE]}
        ),
        "cdi-on": _fleet(target, {"cdi": {"enabled": True}}, {"nodePools": [T4_TIME_SLICED]}),
    }
    if target.has_cdi_default:
        fleets["cdi-default"] = _fleet(target, {"cdi": {"enabled": True, "default": True}}, {"nodePools": [T4_WHOLE]})
    if target.has_mps:
        fleets["mps"] = _fleet(target, {}, {"nodePools": [T4_MPS, T4_WHOLE_2]})
    if target.has_nri_plugin:
        fleets["nri-plugin"] = _fleet(
            target, {"cdi": {"enabled": True, "nriPluginEnabled": True}}, {"nodePools": [T4_TIME_SLICED]}
        )
    return fleets
