"""What a HAMi cluster renders: HAMi's values, the Operator with its device plugin off, fragments, capacity, wrappers."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from hami_fleets import T4, hami_fleet, hami_fleets
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpustack_gen import FleetError, InternalError, load_fleet, render
from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.artifact import kind_of_file
from gpustack_gen.compile.operator import clusterpolicy_patch, operator_settings
from gpustack_gen.model import Cluster
from gpustack_gen.model.backends.hami import hami_options, node_names
from gpustack_gen.validate.artifacts import validate_artifacts
from gpustack_gen.validate.backends.hami import check_hami_values


def cluster_of(data: dict[str, Any]) -> Cluster:
    return load_fleet(data).clusters[0]


def artifacts(data: dict[str, Any], *wrap: str) -> dict[str, tuple[dict[str, Any], ...]]:
    cluster = cluster_of(data)
    compiled = compile_cluster(cluster, wrap)
    validate_artifacts(cluster, compiled)
    return {a.path: a.documents for a in compiled}


def values(data: dict[str, Any]) -> dict[str, Any]:
    (document,) = artifacts(data)["hami-values.yaml"]
    return document


def test_values_carry_the_split_and_the_node_selector() -> None:
    plugin = values(hami_fleet())["devicePlugin"]
    assert plugin["deviceSplitCount"] == 5
    assert plugin["deviceMemoryScaling"] == 1
    assert plugin["nvidiaNodeSelector"] == {"gpu": "on"}
    assert json.loads(plugin["nodeConfiguration"]["config"]) == {"nodeconfig": []}
    assert plugin["gpuOperatorToolkitReady"] == {"enabled": True}
    # Only the kube-scheduler image, never the chart's mirror registry.
    assert values(hami_fleet())["scheduler"] == {
        "kubeScheduler": {"image": {"registry": "registry.k8s.io", "repository": "kube-scheduler"}}
    }


def test_named_nodes_get_their_own_entries() -> None:
    whole = {"name": "a100", "gpu": "a100-40gb", "nodes": 2, "nodeSelector": {"pool": "a100"}, "nodeNames": ["a", "b"]}
    shared = {**T4, "sharing": {"strategy": "hami", "split": 4, "memoryScaling": 1.5}}
    plugin = values(hami_fleet(shared, whole))["devicePlugin"]
    assert (plugin["deviceSplitCount"], plugin["deviceMemoryScaling"]) == (4, 1.5)
    entries = json.loads(plugin["nodeConfiguration"]["config"])["nodeconfig"]
    assert [(e["name"], e["devicesplitcount"], e["devicememoryscaling"], e["operatingmode"]) for e in entries] == [
        ("a", 1, 1, "hami-core"),
        ("b", 1, 1, "hami-core"),
    ]


@pytest.mark.parametrize(
    ("operator", "runtime_class"),
    [
        ({"version": "v25.3.3", "cdi": {"enabled": True, "default": True}}, None),
        ({"version": "v26.7.0"}, "nvidia"),  # CDI on by default from v25.10.0: nvidia is no longer the default
        ({"version": "v26.7.0", "cdi": {"enabled": False}}, None),
    ],
)
def test_the_runtime_class_follows_the_operator(operator: dict[str, Any], runtime_class: str | None) -> None:
    assert values(hami_fleet(operator=operator))["devicePlugin"].get("runtimeClassName") == runtime_class


def test_no_toolkit_wait_without_the_operators_toolkit() -> None:
    plugin = values(hami_fleet(operator={"version": "v25.3.3", "toolkit": {"enabled": False}}))["devicePlugin"]
    assert "gpuOperatorToolkitReady" not in plugin


def test_the_policy_sets_both_scheduler_policies() -> None:
    pool = {**T4, "sharing": {"strategy": "hami", "split": 5, "policy": "binpack"}}
    assert values(hami_fleet(pool))["scheduler"]["defaultSchedulerPolicy"] == {
        "nodeSchedulerPolicy": "binpack",
        "gpuSchedulerPolicy": "binpack",
    }


def test_the_operator_turns_its_device_plugin_off_and_drops_the_configmaps() -> None:
    cluster = cluster_of(hami_fleet())
    assert operator_settings(cluster)["devicePlugin"] == {"enabled": False}
    assert "migManager" not in operator_settings(cluster)
    spec = clusterpolicy_patch(cluster).documents[0]["spec"]
    assert spec["devicePlugin"] == {"enabled": False, "config": None}
    assert spec["migManager"] == {"config": {"name": None}}
    paths = set(artifacts(hami_fleet()))
    assert not paths & {"device-plugin-config.yaml", "mig-parted-config.yaml"}
    assert {"hami-values.yaml", "node-labels.yaml"} <= paths


def test_node_labels_are_gpu_on_and_mig_off() -> None:
    a100 = {"name": "a100", "gpu": "a100-40gb", "nodes": 1, "nodeSelector": {"pool": "a100"}, "nodeNames": ["n"]}
    (labels,) = artifacts(hami_fleet({**T4, "sharing": {"strategy": "hami", "split": 5}}, a100))["node-labels.yaml"]
    by_pool = {pool["name"]: pool for pool in labels["pools"]}
    assert by_pool["t4"]["labels"] == {"gpu": "on"}
    assert by_pool["a100"]["labels"] == {"gpu": "on", "nvidia.com/mig.config": "all-disabled"}
    assert by_pool["a100"]["nodeNames"] == ["n"]
    assert by_pool["t4"]["command"] == "kubectl --context c1 label nodes --selector pool=t4 gpu=on --overwrite"


@pytest.mark.parametrize(
    ("workload", "limits"),
    [
        ({"gpuMemory": "3Gi"}, {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "3072"}),
        (
            {"gpuMemory": "1500Mi", "gpuCores": 30},
            {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1500", "nvidia.com/gpucores": "30"},
        ),
        ({"gpuMemoryPercent": 40}, {"nvidia.com/gpu": "1", "nvidia.com/gpumem-percentage": "40"}),
        ({}, {"nvidia.com/gpu": "1"}),
    ],
)
def test_fragments_ask_for_memory_in_mib_and_cores(workload: dict[str, Any], limits: dict[str, str]) -> None:
    data = hami_fleet(workloads=[{"name": "api", "namespace": "ml", "pool": "t4", **workload}])
    (fragment,) = artifacts(data)["workloads/ml.api.yaml"]  # validate_artifacts: kubernetes-validate passed
    assert fragment["resources"]["limits"] == limits


def test_fragment_notes_name_the_webhook_and_the_guarantee() -> None:
    data = hami_fleet(
        operator={"version": "v26.7.0"},
        workloads=[{"name": "api", "namespace": "ml", "pool": "t4", "gpuMemory": "3Gi"}],
    )
    cluster = cluster_of(data)
    notes = "\n".join(next(a.notes for a in compile_cluster(cluster) if a.path == "workloads/ml.api.yaml"))
    assert "3072 MiB of GPU memory" in notes
    assert "schedulerName: hami-scheduler and runtimeClassName: nvidia" in notes
    assert "refuses privileged containers" in notes


def test_capacity_says_what_each_pod_is_guaranteed_and_how() -> None:
    data = hami_fleet(
        workloads=[
            {"name": "api", "namespace": "ml", "pool": "t4", "replicas": 2, "gpuMemory": "3Gi", "gpuCores": 25},
            {"name": "batch", "namespace": "ml", "pool": "t4"},
        ]
    )
    (capacity,) = artifacts(data)["capacity.yaml"]
    (pool,) = capacity["pools"]
    assert pool["sharing"] == {"strategy": "hami", "split": 5, "memoryScaling": 1}
    assert pool["perNode"] == {"nvidia.com/gpu": 5, "nvidia.com/gpumem": 16384, "nvidia.com/gpucores": 100}
    assert pool["total"] == {"nvidia.com/gpu": 10, "nvidia.com/gpumem": 32768, "nvidia.com/gpucores": 200}
    assert pool["requested"] == {"nvidia.com/gpu": 3, "nvidia.com/gpucores": 150, "nvidia.com/gpumem": 22528}
    assert list(pool["requested"]) == list(pool["perNode"]) == list(pool["total"])  # one order for one table
    assert (pool["gpuMemoryPerGpuMiB"], pool["gpuMemoryPerGpuAtLeastMiB"]) == (16384, 14746)  # NVML: up to 10 % less
    assert pool["guarantees"] == [
        {"workload": "ml/api", "gpus": 1, "memoryPerGpuMiB": 3072, "coresPerGpu": 25},
        {"workload": "ml/batch", "gpus": 1, "memoryPerGpuMiB": 16384, "coresPerGpu": 100},
    ]
    assert "CUDA" in pool["enforcement"] and "software" in pool["isolation"]
    assert any("CUDA_DISABLE_CONTROL" in item for item in pool["notEnforced"])
    assert any("Docker-in-Docker" in item for item in pool["notEnforced"])


def test_every_artifact_kind_is_the_one_its_file_name_says() -> None:
    cluster = cluster_of(hami_fleet(workloads=[{"name": "api", "namespace": "ml", "pool": "t4"}]))
    for artifact in compile_cluster(cluster, ("argocd", "flux", "helmfile")):
        assert kind_of_file(artifact.path) == artifact.kind, artifact.path


def test_wrappers_install_hami_after_the_operator() -> None:
    data = hami_fleet()
    found = artifacts(data, "argocd", "flux", "helmfile")
    hami_values = found["hami-values.yaml"][0]
    _, hami_app = found["delivery/argocd-application.yaml"]
    assert hami_app["metadata"]["name"] == "hami-c1"
    assert hami_app["metadata"]["annotations"] == {"argocd.argoproj.io/sync-wave": "2"}
    assert hami_app["spec"]["source"] == {
        "repoURL": "https://project-hami.github.io/HAMi/",
        "chart": "hami",
        "targetRevision": "2.10.0",
        "helm": {"releaseName": "hami", "valuesObject": hami_values},
    }
    assert hami_app["spec"]["destination"]["namespace"] == "kube-system"
    _, _, repository, release = found["delivery/flux-helmrelease.yaml"]
    assert repository["spec"]["url"] == "https://project-hami.github.io/HAMi/"
    assert release["spec"]["dependsOn"] == [{"name": "gpu-operator"}]
    assert release["spec"]["values"] == hami_values
    (helmfile,) = found["helmfile.yaml"]
    operator, hami = helmfile["releases"]
    assert (hami["chart"], hami["version"], hami["values"]) == ("hami-charts/hami", "2.10.0", ["hami-values.yaml"])
    assert hami["needs"] == [f"{operator['namespace']}/{operator['name']}"]


def test_a_hami_wrapper_that_disagrees_with_its_values_is_an_internal_error() -> None:
    cluster = cluster_of(hami_fleet())
    compiled = compile_cluster(cluster, ("argocd",))
    index = next(i for i, a in enumerate(compiled) if a.path == "delivery/argocd-application.yaml")
    operator_app, hami_app = copy.deepcopy(compiled[index].documents)
    hami_app["spec"]["source"]["helm"]["valuesObject"]["devicePlugin"]["deviceSplitCount"] = 7
    compiled[index] = dataclasses.replace(compiled[index], documents=(operator_app, hami_app))
    with pytest.raises(InternalError, match=r"other values than hami-values\.yaml"):
        validate_artifacts(cluster, compiled)


def test_the_values_check_refuses_what_the_chart_lacks() -> None:
    cluster = cluster_of(hami_fleet())
    good = values(hami_fleet())
    assert check_hami_values(good, hami_options(cluster).release) == []
    bad = copy.deepcopy(good)
    bad["devicePlugin"]["deviceSplitCount"] = "5"
    bad["devicePlugin"]["splitCount"] = 5
    bad["devicePlugin"]["nodeConfiguration"]["config"] = json.dumps({"nodeconfig": [{"name": "n", "split": 2}]})
    paths = {finding.path for finding in check_hami_values(bad, hami_options(cluster).release)}
    assert paths == {
        "devicePlugin.deviceSplitCount",
        "devicePlugin.splitCount",
        "devicePlugin.nodeConfiguration.config:nodeconfig[0].split",
        *(
            f"devicePlugin.nodeConfiguration.config:nodeconfig[0].{key}"
            for key in ("devicesplitcount", "devicememoryscaling", "operatingmode")
        ),
    }
    unreadable = copy.deepcopy(good)
    unreadable["devicePlugin"]["nodeConfiguration"]["config"] = "{"
    (finding,) = check_hami_values(unreadable, hami_options(cluster).release)
    assert "not JSON" in finding.message


def test_a_bad_values_artifact_is_an_internal_error() -> None:
    cluster = cluster_of(hami_fleet())
    compiled = compile_cluster(cluster)
    index = next(i for i, a in enumerate(compiled) if a.kind == "hami-values")
    (document,) = copy.deepcopy(compiled[index].documents)
    document["devicePlugin"]["migStrategy"] = "mixed"
    compiled[index] = dataclasses.replace(compiled[index], documents=(document,))
    with pytest.raises(InternalError, match=r"HAMi chart 2\.10\.0"):
        validate_artifacts(cluster, compiled)


def test_render_writes_the_helm_command_in_the_header() -> None:
    text = render(load_fleet(hami_fleet())).files["c1/hami-values.yaml"].text
    assert "# helm repo add hami-charts https://project-hami.github.io/HAMi/\n# helm repo update hami-charts\n" in text
    assert (
        "# helm upgrade --install hami hami-charts/hami --namespace kube-system --create-namespace --version 2.10.0 "
        "--values hami-values.yaml --kube-context c1\n"
    ) in text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hami_fleets(), st.lists(st.sampled_from(["argocd", "flux", "helmfile"]), unique=True, max_size=2))
def test_a_valid_hami_fleet_renders_and_fits(data: dict[str, Any], wrap: list[str]) -> None:
    """Whatever the checks accept renders (every artifact validated, wrappers included), the workloads fit
    their pools in every resource, and the values name every named node once."""
    try:
        loaded = load_fleet(data)
    except FleetError:
        assume(False)
        raise
    if "argocd" in wrap and "flux" in wrap:
        wrap = ["argocd"]
    bundle = render(loaded, wrap=wrap)
    (cluster,) = loaded.clusters
    for pool in cluster.pools:
        asked = cluster.requested_by_pool().get(pool.name, {})
        total = cluster.resources_total(pool)
        assert all(count <= total.get(resource, 0) for resource, count in asked.items()), pool.name
    (values,) = bundle.files[f"{cluster.name}/hami-values.yaml"].documents
    named = [e["name"] for e in json.loads(values["devicePlugin"]["nodeConfiguration"]["config"])["nodeconfig"]]
    assert sorted(named) == sorted(name for pool in cluster.pools for name in node_names(pool))
