"""``examples/fleet.yaml`` renders when pinned to every Operator version the tool knows.

The emitted Helm values keys are exactly those the version-gate table allows for that version (less the
ones the example has no reason to set), and the ClusterPolicy patch carries the same settings. These
need no upstream files, so they cover the unverified versions too.
"""

from __future__ import annotations

from typing import Any

import pytest
from _fleets import example_fleet, leaf_items, pin

from gpustack_gen import load_fleet, render
from gpustack_gen.emit import Bundle
from gpustack_gen.validate.operator_keys import CLUSTERPOLICY_SPEC_KEYS, VALUES_KEYS
from gpustack_gen.validate.operator_schema import without_deletions
from gpustack_gen.versions.gpu_operator import OPERATOR_VERSIONS, OperatorVersion

# Allowed keys the pinned example does not write, and why.
EXAMPLE_LEAVES_OUT = {
    "driver.version": "the example keeps the driver the chart version ships",
    "devicePlugin.mps.root": "the example has no MPS pool (only the ClusterPolicy patch would carry it)",
    "devicePlugin.enabled": "the example keeps the Operator's device plugin (backends hami and dra turn it off)",
    "driver.manager.env": "written on backend dra only (the driver manager evicts the DRA kubelet plugin)",
    "daemonsets.tolerations": "the chart's default tolerates the example's only taint, nvidia.com/gpu:NoSchedule",
}
# Keys the patch writes out although the values leave them to the chart: a merge patch that omitted them
# would keep what the live ClusterPolicy has.
PATCH_WRITES_OUT = {"driver.version"}


def render_example(target: OperatorVersion) -> Bundle:
    return render(load_fleet(pin(example_fleet(), target), name="examples/fleet.yaml"))


def keys_of_kind(bundle: Bundle, kind: str) -> set[str]:
    keys: set[str] = set()
    documents: list[dict[str, Any]] = [doc for f in bundle.values() if f.kind == kind for doc in f.documents]
    assert len(documents) == 3, f"one {kind} document per example cluster"
    for document in documents:
        body = document["spec"] if kind == "clusterpolicy-patch" else document
        keys.update(path for path, _ in leaf_items(body))
    return keys


def test_every_version_is_covered() -> None:
    assert len(OPERATOR_VERSIONS) >= 10
    assert {v.version for v in OPERATOR_VERSIONS} >= {"v23.9.2", "v25.3.3", "v26.7.0"}


@pytest.mark.parametrize("target", OPERATOR_VERSIONS, ids=lambda v: v.version)
def test_example_renders_with_exactly_the_allowed_values_keys(target: OperatorVersion) -> None:
    bundle = render_example(target)
    allowed = {gate.path for gate in VALUES_KEYS if gate.allows(target)}
    assert keys_of_kind(bundle, "helm-values") == allowed - set(EXAMPLE_LEAVES_OUT)


@pytest.mark.parametrize("target", OPERATOR_VERSIONS, ids=lambda v: v.version)
def test_example_patch_has_exactly_the_allowed_spec_keys(target: OperatorVersion) -> None:
    bundle = render_example(target)
    allowed = {gate.path for gate in CLUSTERPOLICY_SPEC_KEYS if gate.allows(target)}
    written_out = PATCH_WRITES_OUT if target.driver is not None else set()
    assert keys_of_kind(bundle, "clusterpolicy-patch") == (allowed - set(EXAMPLE_LEAVES_OUT)) | written_out


@pytest.mark.parametrize("target", OPERATOR_VERSIONS, ids=lambda v: v.version)
def test_values_and_patch_agree(target: OperatorVersion) -> None:
    bundle = render_example(target)
    for cluster in ("prod", "stage", "train"):
        (values,) = bundle[f"{cluster}/gpu-operator-values.yaml"].documents
        (patch,) = bundle[f"{cluster}/clusterpolicy-patch.yaml"].documents
        # No MPS pool: the two carry the same settings; the patch also deletes the references it does not use,
        # writes out the chart's driver version and names the chart's gpuPodDeletion as the CRD does.
        spec = without_deletions(patch["spec"])
        assert spec["driver"].pop("version", None) == target.driver, cluster
        policy = spec["driver"]["upgradePolicy"]
        policy["gpuPodDeletion"] = policy.pop("podDeletion")
        assert set(patch) == {"spec"} and spec == values, cluster
        text = bundle[f"{cluster}/gpu-operator-values.yaml"].text
        assert f"--version {target.version} " in text


@pytest.mark.parametrize("target", OPERATOR_VERSIONS, ids=lambda v: v.version)
def test_pinned_example_keeps_the_story(target: OperatorVersion) -> None:
    """cdi.default stays where it means something; the time-slicing replicas are 4 and 5."""
    bundle = render_example(target)
    (prod,) = bundle["prod/gpu-operator-values.yaml"].documents
    assert prod["cdi"]["enabled"] is True
    if target.has_cdi_default:
        assert prod["cdi"]["default"] is True
    else:
        assert "default" not in prod["cdi"]
    replicas = {}
    for cluster in ("prod", "stage"):
        (configmap,) = bundle[f"{cluster}/device-plugin-config.yaml"].documents
        shared = [v.data for v in configmap["data"].values() if "sharing" in v.data]
        assert len(shared) == 2, cluster  # the pool's key, and `any` for unlabelled nodes (one pool kind)
        replicas[cluster] = shared[0]["sharing"]["timeSlicing"]["resources"][0]["replicas"]
    assert replicas == {"prod": 4, "stage": 5}


@pytest.mark.parametrize("target", OPERATOR_VERSIONS, ids=lambda v: v.version)
def test_example_with_an_mps_pool_is_adapted_before_v24_3(target: OperatorVersion) -> None:
    """``pin`` drops MPS pools (and the workloads on them) where the Operator has no MPS."""
    fleet = example_fleet()
    stage = next(c for c in fleet["clusters"] if c["name"] == "stage")
    stage["nodePools"].append(
        {
            "name": "t4-mps",
            "gpu": "tesla-t4",
            "nodes": 1,
            "nodeSelector": {"pool": "t4-mps"},
            "sharing": {"strategy": "mps", "replicas": 4},
        }
    )
    stage["workloads"].append({"name": "batch", "namespace": "ml", "pool": "t4-mps", "replicas": 4})
    bundle = render(load_fleet(pin(fleet, target)))
    (patch,) = bundle["stage/clusterpolicy-patch.yaml"].documents
    (configmap,) = bundle["stage/device-plugin-config.yaml"].documents
    has_mps_config = any("mps" in v.data.get("sharing", {}) for v in configmap["data"].values())
    assert has_mps_config is target.has_mps
    assert ("mps" in patch["spec"]["devicePlugin"]) is target.has_mps
    assert ("stage/workloads/ml.batch.yaml" in bundle.files) is target.has_mps
