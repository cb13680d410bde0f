"""The DRA backend holds against the NVIDIA DRA driver's own files in ``../shared/upstream/dra-driver/``.

- the version table: chart names and versions, the feature gates each release knows;
- the driver values gpustack-gen writes: keys of the pinned chart's ``values.yaml``, with the default's type;
- the DeviceClasses' CEL selectors: only attributes the kubelet plugin publishes for that device type;
- the opaque-config rules: the field names of the API types and the messages of ``validate.go``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from gpustack_gen import load_fleet, render
from gpustack_gen.compile.backends.dra.driver import dra_release, driver_values
from gpustack_gen.model.backends.dra import DraOptions, dra_options, gpu_config
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.versions.dra import DRA_VERSIONS, DraDriverVersion

ROOT = Path(__file__).resolve().parents[2]
VERIFIED = tuple(v for v in DRA_VERSIONS if v.verified)
FOLDERS = {"25.12.0": "v25.12.0", "0.4.1": "v0.4.1"}
_SAFE = YAML(typ="safe", pure=True)

SHARED_FLEET = """
apiVersion: gpustack-gen/v1alpha1
kind: Fleet
defaults: {operator: {version: v26.7.0}}
clusters:
  - name: c
    kubernetes: "1.34.2"
    backend: dra
    nodePools:
      - {name: t4, gpu: tesla-t4, nodes: 2, nodeSelector: {pool: t4}, sharing: {strategy: time-slicing, replicas: 4}}
      - name: l4
        gpu: l4
        nodes: 1
        nodeSelector: {pool: l4}
        sharing: {strategy: mps, replicas: 2, pinnedMemoryLimit: 10Gi}
"""


def _folder(upstream: Path, release: DraDriverVersion) -> Path:
    return upstream / "dra-driver" / FOLDERS[release.version]


def _chart(upstream: Path, release: DraDriverVersion) -> Path:
    return _folder(upstream, release) / "deployments" / "helm" / release.chart


def _example_clusters() -> list[Cluster]:
    fleets = [load_fleet(ROOT / "examples" / "dra" / "fleet.yaml"), load_fleet(SHARED_FLEET)]
    return [cluster for fleet in fleets for cluster in fleet.clusters]


def test_verified_versions_are_the_upstream_folders(upstream: Path) -> None:
    folders = sorted(p.name for p in (upstream / "dra-driver").iterdir() if p.is_dir())
    assert folders == sorted(FOLDERS[v.version] for v in VERIFIED)


@pytest.mark.parametrize("release", VERIFIED, ids=lambda v: v.version)
def test_chart_name_and_version(upstream: Path, release: DraDriverVersion) -> None:
    chart = _SAFE.load((_chart(upstream, release) / "Chart.yaml").read_text(encoding="utf-8"))
    assert (chart["name"], chart["version"]) == (release.chart, release.version)
    if release.oci:  # the install guide's chart reference
        install = (_folder(upstream, release) / "docs" / "install.md").read_text(encoding="utf-8")
        cluster = _example_clusters()[0]
        assert dra_release(dataclasses.replace(cluster, backend_options=DraOptions(release))).reference in install


@pytest.mark.parametrize("release", VERIFIED, ids=lambda v: v.version)
def test_feature_gates_are_the_drivers(upstream: Path, release: DraDriverVersion) -> None:
    source = (_folder(upstream, release) / "pkg" / "featuregates" / "featuregates.go").read_text(encoding="utf-8")
    declared = set(re.findall(r'^\s*(\w+)\s+featuregate\.Feature = "(\w+)"', source, re.M))
    assert {name for name, _ in declared} == release.gates
    assert all(name == value for name, value in declared)


def _leaves(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value and key not in ("featureGates", "nodeSelector"):
            found.update(_leaves(value, f"{prefix}{key}."))
        else:
            found[f"{prefix}{key}"] = value
    return found


@pytest.mark.parametrize("release", VERIFIED, ids=lambda v: v.version)
def test_driver_values_keys_exist_in_the_pinned_chart(upstream: Path, release: DraDriverVersion) -> None:
    chart_values = _SAFE.load((_chart(upstream, release) / "values.yaml").read_text(encoding="utf-8"))
    for cluster in _example_clusters():
        values = driver_values(
            dataclasses.replace(cluster, backend_options=DraOptions(release, dra_options(cluster).namespace))
        )
        for path, value in _leaves(values).items():
            default: Any = chart_values
            for part in path.split("."):
                assert isinstance(default, dict) and part in default, f"{path} is not in {release.chart} values.yaml"
                default = default[part]
            assert type(value) is type(default), (path, value, default)


def _published(upstream: Path) -> dict[str, set[str]]:
    """Device type -> the attribute names the GPU kubelet plugin publishes (deviceinfo.go, partitions.go)."""
    plugin = upstream / "dra-driver" / "v25.12.0" / "cmd" / "gpu-kubelet-plugin"
    deviceinfo = (plugin / "deviceinfo.go").read_text(encoding="utf-8")
    partitions = (plugin / "partitions.go").read_text(encoding="utf-8")

    def body(source: str, signature: str, end: str = "\nfunc ") -> str:
        start = source.index(signature)
        return source[start : source.index(end, start + 1)]

    def keys(text: str) -> set[str]:
        return set(re.findall(r'^\s*"(\w+)": *\{', text, re.M)) | set(re.findall(r'Attributes\["(\w+)"\]', text))

    gpu = keys(body(partitions, "func (d *GpuInfo) PartDevAttributes()")) | keys(
        body(deviceinfo, "func (d *GpuInfo) GetDevice()")
    )
    mig = keys(body(deviceinfo, "func (d *MigDeviceInfo) GetDevice()", "Capacity:"))
    return {"gpu": gpu, "mig": mig}


def test_cel_selectors_name_only_published_attributes(upstream: Path) -> None:
    published = _published(upstream)
    assert {"type", "productName"} <= published["gpu"] and {"type", "productName", "profile"} <= published["mig"]
    chart_classes = upstream / "dra-driver" / "v0.4.1" / "deployments" / "helm" / "dra-driver-nvidia-gpu" / "templates"
    seen = 0
    fleets = [load_fleet(ROOT / "examples" / "dra" / "fleet.yaml"), load_fleet(SHARED_FLEET)]
    classes = [
        doc for fleet in fleets for f in render(fleet).values() if f.kind == "dra-device-classes" for doc in f.documents
    ]
    for device_class in classes:
        (selector,) = device_class["spec"]["selectors"]
        expression = selector["cel"]["expression"]
        kind = re.search(r"\.type == '(\w+)'", expression)
        assert kind is not None, expression
        # the chart's own classes select the same types
        assert f"type == '{kind.group(1)}'" in (chart_classes / f"deviceclass-{kind.group(1)}.yaml").read_text()
        names = set(re.findall(r"device\.attributes\['gpu\.nvidia\.com'\]\.(\w+)", expression))
        assert names and names <= published[kind.group(1)], (names, kind.group(1))
        seen += 1
    assert seen >= 8


def test_no_index_attribute_is_published(upstream: Path) -> None:
    """dra.md §6: gpu-test6.yaml selects on .index, which the plugin never publishes; we never do."""
    assert "index" not in _published(upstream)["gpu"]


@pytest.mark.parametrize("release", VERIFIED, ids=lambda v: v.version)
def test_opaque_config_fields_are_the_api_types(upstream: Path, release: DraDriverVersion) -> None:
    api = _folder(upstream, release) / "api" / "nvidia.com" / "resource" / "v1beta1"
    sharing = (api / "sharing.go").read_text(encoding="utf-8")

    def fields(struct: str) -> set[str]:
        block = re.search(rf"type {struct} struct \{{(.*?)\n\}}", sharing, re.S)
        assert block is not None, struct
        return set(re.findall(r'json:"(\w+)', block.group(1)))

    assert fields("GpuSharing") == gpu_config._SHARING_FIELDS[gpu_config.GPU_CONFIG]
    assert fields("MigDeviceSharing") == gpu_config._SHARING_FIELDS[gpu_config.MIG_DEVICE_CONFIG]
    assert fields("TimeSlicingConfig") == gpu_config._TIME_SLICING_FIELDS
    assert fields("MpsConfig") == gpu_config._MPS_FIELDS
    for interval in gpu_config.INTERVALS:
        assert f'TimeSliceInterval = "{interval}"' in sharing
    for strategy in (gpu_config.TIME_SLICING, gpu_config.MPS):
        assert f'= "{strategy}"' in sharing


def test_rule_messages_are_upstreams(upstream: Path) -> None:
    api = upstream / "dra-driver" / "v0.4.1" / "api" / "nvidia.com" / "resource" / "v1beta1"
    source = "".join((api / name).read_text(encoding="utf-8") for name in ("validate.go", "sharing.go"))
    for message in (
        gpu_config.thread_percentage_problem(-1),
        gpu_config.thread_percentage_problem(101),
        "cannot use MpsConfig with the '%v' strategy",
        "cannot use TimeSlicingConfig with the '%v' strategy",
        "default value set too low",
        "unknown time-slice interval: %v, supported time-slice intervals: %s, %s, %s, %s",
        "is selected as the GPU sharing strategy, but the %q feature gate is not enabled",
    ):
        assert message in source, message
