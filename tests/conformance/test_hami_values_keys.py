"""The HAMi tables hold against the chart in ``../shared/upstream/hami/<version>/``.

- ``HAMI_VERSIONS``: every chart folder upstream is a verified entry, and its Chart.yaml has that version;
- ``validate/backends/hami.py``: every key gpustack-gen may write is a key of that version's values.yaml, and
  what gpustack-gen renders for HAMi clusters uses those keys only;
- the facts the backend builds on: the resource names, the node selector, the per-node config's fields.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _fleets import has_path, lookup
from ruamel.yaml import YAML

from gpustack_gen import load_fleet, render
from gpustack_gen.model.backends.hami import RESOURCE_CORES, RESOURCE_GPU, RESOURCE_MEMORY, RESOURCE_MEMORY_PERCENTAGE
from gpustack_gen.validate.backends.hami import VALUES_KEYS
from gpustack_gen.versions.hami import HAMI_VERSIONS, NEWEST_HAMI, HamiVersion

ROOT = Path(__file__).resolve().parents[2]
VERIFIED = tuple(v for v in HAMI_VERSIONS if v.verified)


def chart(upstream: Path, release: HamiVersion) -> Path:
    return upstream / "hami" / f"v{release.version}" / "charts" / "hami"


def chart_values(upstream: Path, release: HamiVersion) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load((chart(upstream, release) / "values.yaml").read_text(encoding="utf-8"))
    return data


def leaves(data: Any, prefix: str = "") -> list[str]:
    if not isinstance(data, dict) or not data:
        return [prefix]
    return [path for key, value in data.items() for path in leaves(value, f"{prefix}.{key}" if prefix else key)]


def ids(release: HamiVersion) -> str:
    return release.version


def test_upstream_folders_are_exactly_the_verified_versions(upstream: Path) -> None:
    folders = sorted(p.name for p in (upstream / "hami").iterdir() if p.is_dir())
    assert folders == sorted(f"v{v.version}" for v in VERIFIED)
    assert HAMI_VERSIONS[-1] == NEWEST_HAMI


@pytest.mark.parametrize("release", VERIFIED, ids=ids)
def test_the_chart_is_the_version_the_table_says(upstream: Path, release: HamiVersion) -> None:
    meta = YAML(typ="safe").load((chart(upstream, release) / "Chart.yaml").read_text(encoding="utf-8"))
    assert (meta["name"], str(meta["version"])) == ("hami", release.version)


@pytest.mark.parametrize("release", VERIFIED, ids=ids)
def test_allowed_keys_exist_in_the_chart(upstream: Path, release: HamiVersion) -> None:
    values = chart_values(upstream, release)
    allowed = [gate.path for gate in VALUES_KEYS if gate.allows(release)]
    assert allowed
    assert [path for path in allowed if not has_path(values, path)] == []


def _hami_fleets() -> list[dict[str, Any]]:
    """HAMi fleets that between them write every key the table allows."""
    example = YAML(typ="safe").load((ROOT / "examples" / "hami" / "fleet.yaml").read_text(encoding="utf-8"))
    pools = [
        {
            "name": "t4",
            "gpu": "tesla-t4",
            "nodes": 1,
            "nodeSelector": {"pool": "t4"},
            "sharing": {"strategy": "hami", "split": 4, "memoryScaling": 1.5, "policy": "spread"},
        },
        {
            "name": "h100",
            "gpu": "h100-80gb",
            "nodes": 1,
            "nodeSelector": {"pool": "h100"},
            "nodeNames": ["h100-a"],
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],  # devicePlugin.tolerations
        },
    ]
    everything = {
        "apiVersion": "gpustack-gen/v1alpha1",
        "kind": "Fleet",
        "clusters": [
            {
                "name": "c1",
                "kubernetes": "1.31.1",
                "backend": "hami",
                "operator": {"version": "v26.7.0"},
                "nodePools": pools,
            }
        ],
    }
    return [example, everything]


@pytest.mark.parametrize("release", VERIFIED, ids=ids)
def test_rendered_values_use_chart_keys_only(upstream: Path, release: HamiVersion) -> None:
    values = chart_values(upstream, release)
    written: set[str] = set()
    for data in _hami_fleets():
        for cluster in data["clusters"]:
            cluster.setdefault("hami", {})["version"] = release.version
        bundle = render(load_fleet(data))
        for file in bundle.values():
            if file.kind == "hami-values":
                (document,) = file.documents
                written.update(leaves(document))
    # nvidiaNodeSelector is a map the chart holds too (its gpu key is the chart's own default).
    assert [path for path in sorted(written) if not has_path(values, path)] == []
    assert written >= {gate.path for gate in VALUES_KEYS if gate.allows(release)} - {"devicePlugin.nvidiaNodeSelector"}


@pytest.mark.parametrize("release", VERIFIED, ids=ids)
def test_the_backends_facts_are_the_charts(upstream: Path, release: HamiVersion) -> None:
    values = chart_values(upstream, release)
    assert [values[k] for k in ("resourceName", "resourceMem", "resourceMemPercentage", "resourceCores")] == [
        RESOURCE_GPU,
        RESOURCE_MEMORY,
        RESOURCE_MEMORY_PERCENTAGE,
        RESOURCE_CORES,
    ]
    assert lookup(values, "devicePlugin.nvidiaNodeSelector") == {"gpu": "on"}
    assert lookup(values, "devicePlugin.runtimeClassName") == ""
    daemonset = (chart(upstream, release) / "templates" / "device-plugin" / "daemonsetnvidia.yaml").read_text()
    assert "nodeSelector: {{ toYaml .Values.devicePlugin.nvidiaNodeSelector" in daemonset
    assert "runtimeClassName: {{ .Values.devicePlugin.runtimeClassName }}" in daemonset
    assert "toolkit-ready" in daemonset


@pytest.mark.parametrize("release", VERIFIED, ids=ids)
def test_the_per_node_config_fields_are_the_ones_upstream_documents(upstream: Path, release: HamiVersion) -> None:
    values = chart_values(upstream, release)
    example = json.loads(lookup(values, "devicePlugin.nodeConfiguration.config"))
    configure = (
        upstream / "hami" / f"v{release.version}" / "website" / "docs" / "userguide" / "configure.md"
    ).read_text()
    documented = set(example["nodeconfig"][0]) | set(re.findall(r"^- `([a-z]+)`:", configure, re.M))
    (cluster,) = load_fleet(_hami_fleets()[1]).clusters
    bundle = render(load_fleet(_hami_fleets()[1]))
    (document,) = bundle.files[f"{cluster.name}/hami-values.yaml"].documents
    entries = json.loads(document["devicePlugin"]["nodeConfiguration"]["config"])["nodeconfig"]
    assert entries and {key for entry in entries for key in entry} <= documented
    assert {entry["operatingmode"] for entry in entries} <= {"hami-core"}
