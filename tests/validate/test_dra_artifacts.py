"""Validation of the DRA backend's artifacts: the driver's opaque-config rules one by one, the driver values,
the Kubernetes schema of each ``resource.k8s.io`` version, and the InternalError a broken artifact raises."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.artifact import Artifact
from gpustack_gen.errors import InternalError
from gpustack_gen.model import Cluster, load_fleet
from gpustack_gen.model.backends.dra.gpu_config import config_problems
from gpustack_gen.validate.artifacts import validate_artifacts
from gpustack_gen.validate.backends.dra import check_driver_values
from gpustack_gen.validate.kubernetes import check_workload_fragment
from gpustack_gen.versions.dra import DRA_VERSIONS, NEWEST_DRA

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "dra" / "fleet.yaml"
GATES = frozenset({"TimeSlicingSettings", "MPSSupport"})
SHARED = """
apiVersion: gpustack-gen/v1alpha1
kind: Fleet
defaults: {operator: {version: v26.7.0}}
clusters:
  - name: c
    kubernetes: "KUBERNETES"
    backend: dra
    nodePools:
      - {name: t4, gpu: tesla-t4, nodes: 2, nodeSelector: {pool: t4}, sharing: {strategy: time-slicing, replicas: 4}}
      - {name: h100, gpu: h100-80gb, nodes: 1, gpusPerNode: 8, nodeSelector: {pool: h100}}
    workloads:
      - {name: api, namespace: ml, pool: t4, replicas: 4}
      - {name: train, namespace: ml, pool: h100, gpus: 8}
"""


def _cluster(kubernetes: str = "1.34.2") -> Cluster:
    (cluster,) = load_fleet(SHARED.replace("KUBERNETES", kubernetes)).clusters
    return cluster


def _gpu_config(sharing: dict[str, Any], kind: str = "GpuConfig") -> dict[str, Any]:
    return {"apiVersion": "resource.nvidia.com/v1beta1", "kind": kind, "sharing": sharing}


# --- the driver's rules, one by one -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sharing", "kind", "path", "message"),
    [
        ({"strategy": "Spatial"}, "GpuConfig", "sharing.strategy", "unknown GPU sharing strategy: Spatial"),
        (
            {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Forever"}},
            "GpuConfig",
            "sharing.timeSlicingConfig.interval",
            "unknown time-slice interval: Forever",
        ),
        (
            {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 101}},
            "GpuConfig",
            "sharing.mpsConfig.defaultActiveThreadPercentage",
            "must not be greater than 100",
        ),
        (
            {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": -5}},
            "GpuConfig",
            "sharing.mpsConfig.defaultActiveThreadPercentage",
            "must not be negative",
        ),
        (
            {"strategy": "MPS", "mpsConfig": {"defaultPinnedDeviceMemoryLimit": "1000Ki"}},
            "GpuConfig",
            "sharing.mpsConfig.defaultPinnedDeviceMemoryLimit",
            "value set too low",
        ),
        (
            {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}, "mpsConfig": {}},
            "GpuConfig",
            "sharing.mpsConfig",
            "cannot use MpsConfig with the 'TimeSlicing' strategy",
        ),
        (
            {"strategy": "MPS", "timeSlicingConfig": {"interval": "Long"}},
            "GpuConfig",
            "sharing.timeSlicingConfig",
            "cannot use TimeSlicingConfig with the 'MPS' strategy",
        ),
        (
            {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}},
            "MigDeviceConfig",
            "sharing.timeSlicingConfig",
            'unknown field "timeSlicingConfig"',
        ),
        ({"strategy": "MPS", "replicas": 4}, "GpuConfig", "sharing.replicas", 'unknown field "replicas"'),
    ],
)
def test_each_opaque_config_rule(sharing: dict[str, Any], kind: str, path: str, message: str) -> None:
    problems = config_problems(_gpu_config(sharing, kind), GATES)
    assert [p for p, _ in problems] == [path], problems
    assert message in problems[0][1]


def test_a_strategy_whose_gate_is_off() -> None:
    ((path, message),) = config_problems(_gpu_config({"strategy": "MPS"}), frozenset({"TimeSlicingSettings"}))
    assert path == "sharing.strategy"
    assert message == '"MPS" is selected as the GPU sharing strategy, but the "MPSSupport" feature gate is not enabled'


def test_accepted_configs() -> None:
    for sharing in (
        {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Short"}},
        {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 0, "defaultPinnedDeviceMemoryLimit": "1Mi"}},
        {"strategy": "MPS", "mpsConfig": {"defaultPinnedDeviceMemoryLimit": "10G"}},
    ):
        assert config_problems(_gpu_config(sharing), GATES) == [], sharing
    assert config_problems(_gpu_config({"strategy": "MPS"}, "MigDeviceConfig"), GATES) == []


# --- the driver values ----------------------------------------------------------------------------------


def _values(cluster: Cluster) -> dict[str, Any]:
    return copy.deepcopy(next(a for a in compile_cluster(cluster) if a.kind == "dra-driver-values").documents[0])


def test_driver_values_enable_exactly_the_gates_in_use() -> None:
    values = _values(_cluster())
    assert values["featureGates"] == {"TimeSlicingSettings": True}
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resources"]["computeDomains"] == {"enabled": False}
    assert check_driver_values(values, NEWEST_DRA) == []


def test_a_gate_the_pinned_driver_lacks() -> None:
    values = _values(_cluster())
    values["featureGates"]["DeviceMetadata"] = True  # arrived in 0.4.0
    (finding,) = check_driver_values(values, DRA_VERSIONS[0])
    assert finding.path == "featureGates.DeviceMetadata"
    assert "has no feature gate DeviceMetadata" in finding.message


def test_gpu_allocation_without_the_override_does_not_render() -> None:
    values = _values(_cluster())
    values["gpuResourcesEnabledOverride"] = False
    (finding,) = check_driver_values(values, NEWEST_DRA)
    assert finding.path == "gpuResourcesEnabledOverride"


def test_driver_values_keys_outside_the_subset() -> None:
    values = _values(_cluster())
    values["resources"]["gpu"] = {"enabled": True}
    (finding,) = check_driver_values(values, NEWEST_DRA)
    assert finding.path == "resources.gpu"


# --- the rendered objects, per Kubernetes minor ----------------------------------------------------------


@pytest.mark.parametrize(
    ("kubernetes", "api_version"),
    [("1.32.4", "resource.k8s.io/v1beta1"), ("1.33.1", "resource.k8s.io/v1beta2"), ("1.34.2", "resource.k8s.io/v1")],
)
def test_each_minor_gets_the_api_version_it_serves(kubernetes: str, api_version: str) -> None:
    cluster = _cluster(kubernetes)
    artifacts = compile_cluster(cluster)
    validate_artifacts(cluster, artifacts)  # kubernetes-validate for that minor
    objects = [d for a in artifacts if a.kind in ("dra-device-classes", "dra-claims") for d in a.documents]
    assert {d["apiVersion"] for d in objects} == {api_version}
    template = next(d for d in objects if d["kind"] == "ResourceClaimTemplate")
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    # v1beta1 keeps the device class on the request; later versions nest it under `exactly`
    assert ("deviceClassName" in request) == api_version.endswith("v1beta1")
    assert _values(cluster)["resourceApiVersion"] == api_version


def _broken(cluster: Cluster, kind: str, change: Any) -> tuple[str, str, str]:
    artifacts = compile_cluster(cluster)
    index = next(i for i, a in enumerate(artifacts) if a.kind == kind)
    documents = [copy.deepcopy(d) for d in artifacts[index].documents]
    change(documents)
    artifacts[index] = Artifact(artifacts[index].path, kind, tuple(documents), artifacts[index].notes)
    with pytest.raises(InternalError) as caught:
        validate_artifacts(cluster, artifacts)
    return caught.value.artifact, caught.value.path, str(caught.value)


def test_a_device_class_config_the_driver_refuses() -> None:
    def change(documents: list[dict[str, Any]]) -> None:
        documents[0]["spec"]["config"][0]["opaque"]["parameters"]["sharing"]["timeSlicingConfig"]["interval"] = "Lnog"

    artifact, path, _ = _broken(_cluster(), "dra-device-classes", change)
    assert (artifact, path) == (
        "dra-device-classes.yaml",
        "spec.config[0].opaque.parameters.sharing.timeSlicingConfig.interval",
    )


def test_a_v1_request_shape_on_a_1_32_cluster() -> None:
    def change(documents: list[dict[str, Any]]) -> None:
        request = documents[1]["spec"]["spec"]["devices"]["requests"][0]
        request["exactly"] = {"deviceClassName": request.pop("deviceClassName")}

    artifact, path, message = _broken(_cluster("1.32.4"), "dra-claims", change)
    assert artifact == "dra-claims.yaml"
    assert path.startswith("spec.spec.devices.requests[0]")
    assert "Kubernetes 1.32.4 schema" in message


def test_the_example_objects_pass_kubernetes_validate_for_1_34() -> None:
    (cluster,) = load_fleet(EXAMPLE).clusters
    artifacts = compile_cluster(cluster)
    validate_artifacts(cluster, artifacts)
    kinds = sorted({d["kind"] for a in artifacts for d in a.documents if "apiVersion" in d})
    assert {"DeviceClass", "ResourceClaimTemplate"} <= set(kinds)


def test_workload_fragments_check_their_resource_claims() -> None:
    fragment = {"resources": {"claims": [{"name": "gpu"}]}, "resourceClaims": [{"name": "gpu", "claim": "x"}]}
    (finding,) = check_workload_fragment(fragment, "1.34.2")
    assert finding.path == "resourceClaims[0].claim"
