"""Backend dra in the model: the Kubernetes and Operator gates, the driver's option rules at the fleet's lines,
the sharing semantics (one claim per workload on shared pools) and their capacity, and what DRA cannot enforce.

Each test changes a line or two of ``DRA``, a small valid fleet on backend dra (line numbers in the comment).
"""

from __future__ import annotations

import dataclasses

import pytest
from fleet_text import check, edit, load, the_error

from gpustack_gen.compile import compile_cluster
from gpustack_gen.compile.backends.dra.claims import claim_object
from gpustack_gen.compile.backends.dra.device_classes import gpu_config
from gpustack_gen.model.backends import dra as dra_backend
from gpustack_gen.model.backends.dra import device_class
from gpustack_gen.versions.gpu_operator import NEWEST_OPERATOR

# fleet_text.BASE with backend dra on line 8 (its containerRuntime line), so the line numbers are BASE's.
DRA = edit(
    {
        4: "operator: {version: v26.7.0}",
        7: 'kubernetes: "1.34.2"',
        8: "backend: dra",
        16: "sharing: {strategy: time-slicing, replicas: 4}",
        18: "- {name: app, namespace: ml, pool: pool, replicas: 4}",
    }
)
#  4 operator   7 kubernetes   8 backend   9 mig   12 gpu   16 sharing   18 workload
POOL = "clusters[0].nodePools[0]"
A100 = {12: "gpu: a100-40gb"}


def dra(changes: dict[int, str]) -> str:
    return edit(changes, DRA)


def warnings(text: str) -> list[str]:
    return [p.format() for p in load(text).warnings]


# --- Kubernetes and Operator versions -------------------------------------------------------------------


def test_kubernetes_below_1_32_is_refused() -> None:
    problem = the_error(dra({7: 'kubernetes: "1.31.9"'}))
    check(problem, "fleet.yaml:7:17", "clusters[0].kubernetes", "backend dra needs Kubernetes 1.32", "1.34 or newer")


def test_1_32_and_1_33_warn_about_the_feature_gate_and_runtime_config() -> None:
    for version, api in (("1.32.4", "v1beta1=true on"), ("1.33.1", "v1beta1=true,resource.k8s.io/v1beta2=true")):
        (warning,) = [w for w in warnings(dra({7: f'kubernetes: "{version}"'})) if "kubernetes" in w]
        assert "DynamicResourceAllocation feature gate" in warning
        assert f"--runtime-config=resource.k8s.io/{api}" in warning
        assert "documents Kubernetes v1.34.2 or newer" in warning
        assert "on a new install (there is no downgrade), pin dra.version 25.12.0" in warning


def test_1_34_before_the_drivers_prerequisite_warns() -> None:
    (warning,) = [w for w in warnings(dra({7: 'kubernetes: "1.34.1"'})) if "kubernetes" in w]
    assert "the DRA driver 0.4.1 documents Kubernetes v1.34.2 or newer" in warning
    assert not [w for w in warnings(DRA) if "kubernetes" in w]


def test_an_operator_before_v25_10_is_refused() -> None:
    problem = the_error(dra({4: "operator: {version: v25.3.3}"}))
    check(problem, "fleet.yaml:4:23", "defaults.operator.version", "needs GPU Operator v25.10.0", "v26.7.0")


def test_the_operator_hint_names_the_newest_known_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    newer = dataclasses.replace(NEWEST_OPERATOR, version="v27.1.0")
    monkeypatch.setattr(dra_backend, "NEWEST_OPERATOR", newer)
    problem = the_error(dra({4: "operator: {version: v25.3.3}"}))
    check(
        problem,
        "fleet.yaml:4:23",
        "defaults.operator.version",
        "needs GPU Operator v25.10.0",
        "pin operator.version v27.1.0",
    )


def test_cdi_off_is_refused_on_a_runtime_that_does_not_read_cdi_by_default() -> None:
    """The DRA driver hands devices to containers by CDI: the Operator's toolkit enables it in the runtime, or the
    runtime reads it by default (containerd 2.0+, CRI-O 1.27+)."""
    changes = {
        4: "operator: {version: v26.7.0, cdi: {enabled: false}}",
        8: 'backend: dra\ncontainerRuntimeVersion: "1.7.24"',
    }
    problem = the_error(dra(changes))
    check(problem, "fleet.yaml:9:30", "clusters[0].containerRuntimeVersion", "CDI", "cdi.enabled: true")


def test_cdi_off_with_no_runtime_version_is_a_warning() -> None:
    (warning,) = [w for w in warnings(dra({4: "operator: {version: v26.7.0, cdi: {enabled: false}}"})) if "CDI" in w]
    assert "fleet.yaml:4:47: warning: defaults.operator.cdi.enabled:" in warning and "containerd 2.0" in warning


def test_a_gpu_driver_before_565_is_refused_and_before_580_warned_about() -> None:
    problem = the_error(dra({4: "operator: {version: v26.7.0, driver: {version: 550.144.03}}"}))
    check(problem, "fleet.yaml:4:50", "defaults.operator.driver.version", "565 or newer", "580")
    (warning,) = [
        w for w in warnings(dra({4: "operator: {version: v26.7.0, driver: {version: 570.195.03}}"})) if "570" in w
    ]
    assert "defaults.operator.driver.version" in warning and "580 or newer" in warning
    assert not [w for w in warnings(DRA) if "driver 5" in w]  # the chart's default, 595.91.07


def test_an_unknown_driver_version_suggests_known_ones() -> None:
    problem = the_error(dra({8: "backend: dra\ndra: {version: 0.4.2}"}))
    check(problem, "fleet.yaml:9:20", "clusters[0].dra.version", "unknown DRA driver chart version '0.4.2'", "0.4.1")


def test_a_gpu_without_a_known_nvml_name_is_refused() -> None:
    problem = the_error(
        dra({12: "gpu: b300", 16: "sharing: {strategy: none}", 18: "- {name: app, namespace: ml, pool: pool}"})
    )
    check(problem, "fleet.yaml:12:14", f"{POOL}.gpu", "NVML name (productName)", "backend gpu-operator")


# --- the driver's rules for the sharing options, at the fleet's lines -----------------------------------


def test_an_unknown_interval() -> None:
    problem = the_error(dra({16: "sharing: {strategy: time-slicing, replicas: 4, interval: Lnog}"}))
    check(
        problem,
        "fleet.yaml:16:66",
        f"{POOL}.sharing.interval",
        "unknown time-slice interval: Lnog, supported time-slice intervals: Default, Short, Medium, Long",
        "one of Default",
    )


def test_thread_percentage_out_of_range() -> None:
    for value, said in ((120, "must not be greater than 100"), (-1, "must not be negative")):
        problem = the_error(dra({16: f"sharing: {{strategy: mps, replicas: 4, activeThreadPercentage: {value}}}"}))
        check(problem, "fleet.yaml:16:71", f"{POOL}.sharing.activeThreadPercentage", said, "0 to 100")


def test_a_pinned_limit_under_one_mebibyte() -> None:
    problem = the_error(dra({16: "sharing: {strategy: mps, replicas: 4, pinnedMemoryLimit: 512Ki}"}))
    check(problem, "fleet.yaml:16:66", f"{POOL}.sharing.pinnedMemoryLimit", "value set too low", "at least 1Mi")


def test_time_slicing_and_mps_options_do_not_mix() -> None:
    problem = the_error(dra({16: "sharing: {strategy: mps, replicas: 4, interval: Long}"}))
    check(
        problem,
        "fleet.yaml:16:47",
        f"{POOL}.sharing.interval",
        "cannot use TimeSlicingConfig with the 'MPS' strategy",
        "remove interval",
    )
    problem = the_error(dra({16: "sharing: {strategy: time-slicing, replicas: 4, activeThreadPercentage: 50}"}))
    check(problem, "fleet.yaml:16:56", f"{POOL}.sharing.activeThreadPercentage", "cannot use MpsConfig", "remove")


def test_no_time_slicing_config_on_mig_devices() -> None:
    problem = the_error(dra({**A100, 16: 'sharing: {strategy: mig, layout: {"3g.20gb": 2}, interval: Long}'}))
    check(
        problem, "fleet.yaml:16:58", f"{POOL}.sharing.interval", "(MigDeviceConfig) has no timeSlicingConfig", "remove"
    )


def test_options_a_backend_does_not_read_are_warned_about() -> None:
    shown = warnings(dra({16: "sharing: {strategy: time-slicing, replicas: 4, renameByDefault: true}"}))
    assert any("renameByDefault has no effect on backend dra" in w for w in shown)
    on_gpu_operator = dra(
        {8: "backend: gpu-operator", 16: "sharing: {strategy: time-slicing, replicas: 4, interval: Long}"}
    )
    assert any("interval has no effect on backend gpu-operator" in w for w in warnings(on_gpu_operator))


def test_sharing_gates_are_alpha_and_replicas_are_not_enforced() -> None:
    shown = warnings(DRA)
    assert any("TimeSlicingSettings feature gate, which is alpha" in w for w in shown)
    assert any("no DRA object enforces the number" in w and "sharing.replicas" in w for w in shown)


# --- sharing semantics and capacity ----------------------------------------------------------------------


def test_a_workload_with_more_pods_than_a_claim_may_share_is_refused() -> None:
    problem = the_error(dra({18: "- {name: app, namespace: ml, pool: pool, replicas: 5}"}))
    check(
        problem,
        "fleet.yaml:18:58",
        "clusters[0].workloads[0].replicas",
        "the 5 pods of ml/app share one ResourceClaim, so all of them run on one node",
        "split the workload",
    )


def test_a_shared_claim_takes_its_devices_whatever_its_pod_count() -> None:
    """A shared ResourceClaim is allocated its ``gpus`` devices for itself: the pods of other workloads cannot
    join it, so a pool's capacity is its physical GPUs, and each workload takes its ``gpus`` of them."""
    (cluster,) = load(DRA).clusters
    (pool,) = cluster.pools
    assert cluster.resources_per_node(pool) == {"pool.gpu.gpustack-gen.dev": 1}
    assert cluster.resources_total(pool) == {"pool.gpu.gpustack-gen.dev": 2}
    assert cluster.requested_by_pool() == {"pool": {"pool.gpu.gpustack-gen.dev": 1}}
    capacity = next(a for a in compile_cluster(cluster) if a.kind == "capacity").documents[0]
    details = capacity["pools"][0]["dra"]
    assert details["podsPerClaim"] == 4
    claim = claim_object(cluster, cluster.workloads[0])["metadata"]["name"]
    assert details["sharedClaims"] == {f"ml/{claim}": {"devices": 1, "pods": 4}}


def test_shared_claims_of_small_workloads_need_a_gpu_each() -> None:
    """One T4 time-sliced by 4 and three workloads of 1, 1 and 2 pods: 4 pods, but three claims for one GPU."""
    workloads = "\n".join(
        f"- {{name: app{index}, namespace: ml, pool: pool, replicas: {pods}}}" for index, pods in enumerate((1, 1, 2))
    )
    problem = the_error(dra({13: "nodes: 1", 18: workloads}))
    check(
        problem,
        "fleet.yaml:19:9",
        "clusters[0].workloads[1]",
        "workloads ask for 3 pool.gpu.gpustack-gen.dev of pool 'pool' (app0 1, app1 1, app2 1), which has 1: app1",
        "each workload's claim holds its gpus devices whatever its pod count",
    )


def test_a_shared_pool_gets_one_claim_per_workload_named_by_every_pod() -> None:
    (cluster,) = load(DRA).clusters
    artifacts = {a.path: a for a in compile_cluster(cluster)}
    (claim,) = artifacts["dra-claims.yaml"].documents
    name = claim["metadata"]["name"]
    assert (claim["kind"], name.rsplit(".", 1)[0], claim["metadata"]["namespace"]) == (
        "ResourceClaim",
        "app.pool.gpu",
        "ml",
    )
    fragment = artifacts["workloads/ml.app.yaml"].documents[0]
    assert fragment["resourceClaims"] == [{"name": "gpu", "resourceClaimName": name}]
    assert fragment["resources"]["claims"] == [{"name": "gpu"}]
    assert "limits" not in fragment["resources"]


def test_a_sharing_change_renames_the_shared_claim() -> None:
    """Kubernetes copies the class's config into a claim when it allocates it, and a shared claim stays allocated
    while any pod uses it: only a new claim gets the new config, so the name carries the config's digest."""

    def claim(text: str) -> str:
        (cluster,) = load(text).clusters
        return str(claim_object(cluster, cluster.workloads[0])["metadata"]["name"])

    default, short = claim(DRA), claim(dra({16: "sharing: {strategy: time-slicing, replicas: 4, interval: Short}"}))
    assert default.startswith("app.pool.gpu.") and short.startswith("app.pool.gpu.")
    assert default != short
    assert claim(dra({16: "sharing: {strategy: time-slicing, replicas: 4, interval: Default}"})) == default
    fewer = dra({16: "sharing: {strategy: time-slicing, replicas: 3}", 18: "- {name: app, namespace: ml, pool: pool}"})
    assert claim(fewer) == default  # time-slicing's replicas are in no config


def test_whole_gpus_get_a_claim_per_pod_from_a_template() -> None:
    (cluster,) = load(
        dra({16: "sharing: {strategy: none}", 18: "- {name: app, namespace: ml, pool: pool, replicas: 2}"})
    ).clusters
    artifacts = {a.path: a for a in compile_cluster(cluster)}
    (template,) = artifacts["dra-claims.yaml"].documents
    assert template["kind"] == "ResourceClaimTemplate"
    request = template["spec"]["spec"]["devices"]["requests"][0]
    assert request["exactly"] == {
        "deviceClassName": "pool.gpu.gpustack-gen.dev",
        "allocationMode": "ExactCount",
        "count": 1,
    }
    fragment = artifacts["workloads/ml.app.yaml"].documents[0]
    assert fragment["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": template["metadata"]["name"]}]


def test_mps_gives_each_client_its_share_of_the_threads_unless_told() -> None:
    (cluster,) = load(
        dra({16: "sharing: {strategy: mps, replicas: 3}", 18: "- {name: app, namespace: ml, pool: pool}"})
    ).clusters
    config = gpu_config(cluster.pools[0].sharing)
    assert config is not None
    assert config["sharing"] == {"strategy": "MPS", "mpsConfig": {"defaultActiveThreadPercentage": 33}}
    (cluster,) = load(
        dra({16: "sharing: {strategy: mps, replicas: 3, activeThreadPercentage: 50, pinnedMemoryLimit: 4Gi}"}).replace(
            "replicas: 4}", "replicas: 3}"
        )
    ).clusters
    config = gpu_config(cluster.pools[0].sharing)
    assert config is not None
    assert config["sharing"]["mpsConfig"] == {
        "defaultActiveThreadPercentage": 50,
        "defaultPinnedDeviceMemoryLimit": "4Gi",
    }


def test_mig_profiles_are_device_classes_whatever_mig_strategy_says() -> None:
    """Under the device plugin, mig.strategy single allows one profile type per node and needs no migProfile;
    on dra each profile is its own DeviceClass, so a mixed layout is fine and a workload names its profile."""
    layout = 'sharing: {strategy: mig, layout: {"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2}}'
    problem = the_error(dra({**A100, 16: layout, 18: "- {name: app, namespace: ml, pool: pool}"}))
    check(problem, "fleet.yaml:18:9", "clusters[0].workloads[0]", "offers several MIG profiles", "migProfile")
    (cluster,) = load(
        dra({**A100, 16: layout, 18: "- {name: app, namespace: ml, pool: pool, migProfile: 2g.10gb}"})
    ).clusters
    pool = cluster.pools[0]
    assert cluster.workload_request(cluster.workloads[0]) == {device_class(pool, "2g.10gb"): 1}


def test_mps_under_mig_strategy_mixed_is_fine_on_dra() -> None:
    """The device plugin refuses MPS under mixed; on dra the driver runs MPS per claim, whatever the strategy."""
    (cluster,) = load(dra({9: "mig: {strategy: mixed}", 16: "sharing: {strategy: mps, replicas: 4}"})).clusters
    assert cluster.pools[0].sharing.strategy == "mps"
    assert the_error(
        edit(
            {9: "mig: {strategy: mixed}", 16: "sharing: {strategy: mps, replicas: 4}"},
            DRA.replace("backend: dra", "backend: gpu-operator"),
        )
    ).message.startswith("MPS cannot be used in a cluster whose mig.strategy is mixed")


def test_a_shared_claim_is_on_one_node() -> None:
    """Slots per node (4 per T4) would let a pod ask for 2, but its claim's 2 devices must be on one node."""
    problem = the_error(dra({18: "- {name: app, namespace: ml, pool: pool, gpus: 2, replicas: 2}"}))
    check(problem, "fleet.yaml:18:54", "clusters[0].workloads[0].gpus", "asks for 2 GPUs of one node", "gpus: 1")


def test_several_gpus_of_a_shared_pool_are_distinct_devices_on_dra() -> None:
    """The device plugin may serve a request for several shared GPUs with slices of one (a warning there)."""
    text = dra({14: "gpusPerNode: 2", 18: "- {name: app, namespace: ml, pool: pool, gpus: 2, replicas: 2}"})
    assert not [w for w in warnings(text) if "slices of one GPU" in w]


# --- MPS isolation: what the pool's GpuConfig limits ------------------------------------------------------


def _mps_capacity(sharing: str) -> tuple[dict[str, object], list[str]]:
    text = dra({16: sharing, 18: "- {name: app, namespace: ml, pool: pool}"})
    (cluster,) = load(text).clusters
    capacity = next(a for a in compile_cluster(cluster) if a.kind == "capacity").documents[0]
    return capacity["pools"][0], [w for w in warnings(text) if "fault isolation" in w or "memory isolation" in w]


def test_mps_with_a_pinned_limit_limits_each_pods_memory_to_it() -> None:
    pool, (warning,) = _mps_capacity("sharing: {strategy: mps, replicas: 4, pinnedMemoryLimit: 4Gi}")
    assert pool["dra"]["pinnedMemoryLimit"] == "4Gi"
    assert "25% of the GPU's threads and 4Gi of pinned device memory" in pool["isolation"]
    assert "4Gi of pinned device memory" in warning
    assert "1/replicas" not in warning and "no memory isolation" not in warning


def test_mps_without_a_pinned_limit_does_not_split_memory_on_dra() -> None:
    """The device plugin gives each MPS replica 1/replicas of the memory; the DRA driver only the pinned limit."""
    pool, (warning,) = _mps_capacity("sharing: {strategy: mps, replicas: 4}")
    assert "none" in pool["dra"]["pinnedMemoryLimit"] and "not split" in pool["dra"]["pinnedMemoryLimit"]
    assert "no limit on its memory" in pool["isolation"]
    assert "no limit on its memory" in warning and "1/replicas" not in warning
