"""One test per semantic error and warning of checks.py, resolve.py and load.py.

Each test changes one or two lines of the small valid fleet in ``fleet_text.BASE`` and asserts the exact
``file:line:col``, the field path, and fragments of the message and of the hint.
"""

from __future__ import annotations

import pytest
from fleet_text import BASE, check, edit, load, problems, the_error

from gpustack_gen.compile import compile_cluster
from gpustack_gen.errors import Severity
from gpustack_gen.model.resolve import Report
from gpustack_gen.yamlio.source import SourceDocument

A100 = {12: "gpu: a100-40gb"}
MIXED = {9: "mig: {strategy: mixed}"}
POOL = "clusters[0].nodePools[0]"
WORKLOAD = "clusters[0].workloads[0]"
TIME_SLICED_T4 = "defaults:\n  sharing: {tesla-t4: {strategy: time-slicing, replicas: 4}}"  # replaces line 3


def test_base_fleet_is_valid() -> None:
    fleet = load(BASE)
    assert [c.name for c in fleet.clusters] == ["prod"]
    assert fleet.warnings == ()


# --- MIG geometry -------------------------------------------------------------------------------------


def test_mig_on_a_gpu_without_mig() -> None:
    problem = the_error(edit({16: 'sharing: {strategy: mig, layout: {"1g.5gb": 7}}'}))
    check(problem, "fleet.yaml:16:29", f"{POOL}.sharing.strategy", "Tesla T4 has no MIG", "use time-slicing or mps")


def test_unknown_mig_profile_suggests_the_closest() -> None:
    problem = the_error(edit({**A100, **MIXED, 16: 'sharing: {strategy: mig, layout: {"1g.6gb": 7}}'}))
    check(
        problem,
        "fleet.yaml:16:43",
        f'{POOL}.sharing.layout["1g.6gb"]',
        "A100-40GB has no MIG profile '1g.6gb'",
        "did you mean '1g.5gb'",
    )


def test_layout_over_the_memory_slices() -> None:
    problem = the_error(edit({**A100, **MIXED, 16: 'sharing: {strategy: mig, layout: {"3g.20gb": 2, "1g.5gb": 1}}'}))
    check(
        problem,
        "fleet.yaml:16:42",
        f"{POOL}.sharing.layout",
        "cannot be created on one A100-40GB: the layout needs 9 of 8 memory slices",
        "fewer or smaller instances",
    )


def test_1g_10gb_takes_two_memory_slices_on_a100_40gb() -> None:
    problem = the_error(edit({**A100, **MIXED, 16: 'sharing: {strategy: mig, layout: {"1g.10gb": 4, "1g.5gb": 1}}'}))
    check(problem, "fleet.yaml:16:42", f"{POOL}.sharing.layout", "1g.10gb x4 = 8", "fewer or smaller instances")


def test_a_layout_that_fits_is_accepted() -> None:
    fleet = load(
        edit(
            {
                **A100,
                **MIXED,
                16: 'sharing: {strategy: mig, layout: {"4g.20gb": 1, "3g.20gb": 1}}',
                18: "- {name: app, namespace: ml, pool: pool, migProfile: 3g.20gb}",
            }
        )
    )
    pool = fleet.clusters[0].pools[0]
    assert pool.mig_devices() == (("4g.20gb", 1), ("3g.20gb", 1))
    assert fleet.warnings == ()


def test_single_strategy_with_two_profile_types() -> None:
    problem = the_error(edit({**A100, 16: 'sharing: {strategy: mig, layout: {"4g.20gb": 1, "3g.20gb": 1}}'}))
    check(
        problem,
        "fleet.yaml:16:42",
        f"{POOL}.sharing.layout",
        "mig.strategy single allows one MIG profile type per node; this layout has 2",
        "mig.strategy: mixed",
    )


def test_builtin_config_unknown() -> None:
    problem = the_error(edit({**A100, **MIXED, 16: "sharing: {strategy: mig, config: all-balansed}"}))
    check(
        problem,
        "fleet.yaml:16:42",
        f"{POOL}.sharing.config",
        "no built-in MIG config 'all-balansed' for A100-40GB",
        "did you mean 'all-balanced'",
    )


def test_builtin_config_all_disabled() -> None:
    problem = the_error(edit({**A100, 16: "sharing: {strategy: mig, config: all-disabled}"}))
    check(
        problem, "fleet.yaml:16:42", f"{POOL}.sharing.config", "all-disabled creates no MIG devices", "strategy: none"
    )


def test_builtin_config_all_enabled() -> None:
    problem = the_error(edit({**A100, 16: "sharing: {strategy: mig, config: all-enabled}"}))
    check(problem, "fleet.yaml:16:42", f"{POOL}.sharing.config", "all-enabled creates no MIG devices", "all-balanced")


def test_builtin_config_with_several_profiles_under_single() -> None:
    problem = the_error(edit({**A100, 16: "sharing: {strategy: mig, config: all-balanced}"}))
    check(
        problem,
        "fleet.yaml:16:42",
        f"{POOL}.sharing.config",
        "all-balanced creates 3 MIG profile types on A100-40GB, but mig.strategy single allows one",
        "all-<profile> config",
    )


def test_unverified_placement_is_a_warning() -> None:
    fleet = load(
        edit(
            {
                12: "gpu: h200-141gb",
                16: 'sharing: {strategy: mig, layout: {"1g.18gb": 7}}',
                18: "- {name: app, namespace: ml, pool: pool}",
            }
        )
    )
    (warning,) = fleet.warnings
    assert warning.severity is Severity.WARNING
    check(warning, "fleet.yaml:16:42", f"{POOL}.sharing.layout", "not verified on hardware", "nvidia-smi mig -lgipp")


# --- workloads -------------------------------------------------------------------------------------------


def test_workload_on_unknown_pool() -> None:
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool2}"}))
    check(
        problem,
        "fleet.yaml:18:42",
        f"{WORKLOAD}.pool",
        "no pool named 'pool2' in cluster 'prod'",
        "did you mean 'pool'",
    )


def test_mig_profile_not_in_the_layout() -> None:
    problem = the_error(
        edit(
            {
                **A100,
                16: 'sharing: {strategy: mig, layout: {"3g.20gb": 2}}',
                18: "- {name: app, namespace: ml, pool: pool, migProfile: 1g.5gb}",
            }
        )
    )
    check(
        problem,
        "fleet.yaml:18:60",
        f"{WORKLOAD}.migProfile",
        "pool 'pool' has no MIG profile '1g.5gb' in its layout",
        "the pool offers 3g.20gb",
    )


def test_mig_profile_on_a_pool_without_mig() -> None:
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool, migProfile: 1g.5gb}"}))
    check(problem, "fleet.yaml:18:60", f"{WORKLOAD}.migProfile", "pool 'pool' does not use MIG", "remove migProfile")


def test_mixed_pool_with_several_profiles_needs_a_mig_profile() -> None:
    problem = the_error(edit({**A100, **MIXED, 16: 'sharing: {strategy: mig, layout: {"4g.20gb": 1, "3g.20gb": 1}}'}))
    check(
        problem,
        "fleet.yaml:18:9",
        WORKLOAD,
        "pool 'pool' offers several MIG profiles (4g.20gb, 3g.20gb); say which one",
        "add migProfile: 4g.20gb",
    )


def test_more_than_one_gpu_with_fail_requests_greater_than_one() -> None:
    problem = the_error(
        edit(
            {
                16: "sharing: {strategy: time-slicing, replicas: 4, failRequestsGreaterThanOne: true}",
                18: "- {name: app, namespace: ml, pool: pool, gpus: 2}",
            }
        )
    )
    check(
        problem,
        "fleet.yaml:18:54",
        f"{WORKLOAD}.gpus",
        "refuses requests for more than one shared GPU (failRequestsGreaterThanOne)",
        "ask for gpus: 1",
    )


def test_more_than_one_gpu_on_mps() -> None:
    problem = the_error(
        edit({16: "sharing: {strategy: mps, replicas: 4}", 18: "- {name: app, namespace: ml, pool: pool, gpus: 2}"})
    )
    check(
        problem, "fleet.yaml:18:54", f"{WORKLOAD}.gpus", "uses MPS, which refuses requests for more than one", "gpus: 1"
    )


def test_capacity_exceeded() -> None:
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool, replicas: 3}"}))
    check(
        problem,
        "fleet.yaml:18:9",
        WORKLOAD,
        "workloads ask for 3 nvidia.com/gpu of pool 'pool' (app 3), which has 2: app takes the total past it",
        "add nodes or GPUs per node",
    )


def test_capacity_is_located_at_the_workload_that_overflows_the_pool() -> None:
    problem = the_error(
        edit(
            {
                18: "- {name: app, namespace: ml, pool: pool}\n"
                "- {name: batch, namespace: ml, pool: pool}\n"
                "- {name: late, namespace: ml, pool: pool}"
            }
        )
    )
    check(
        problem,
        "fleet.yaml:20:9",
        "clusters[0].workloads[2]",
        "workloads ask for 3 nvidia.com/gpu of pool 'pool' (app 1, batch 1, late 1), which has 2: late takes the "
        "total past it",
        "add nodes or GPUs per node",
    )


def test_capacity_of_a_shared_pool_counts_replicas() -> None:
    problem = the_error(
        edit(
            {
                16: "sharing: {strategy: time-slicing, replicas: 4}",
                18: "- {name: app, namespace: ml, pool: pool, replicas: 9}",
            }
        )
    )
    check(
        problem,
        "fleet.yaml:18:9",
        WORKLOAD,
        "ask for 9 nvidia.com/gpu of pool 'pool' (app 9), which has 8",
        "sharing replicas",
    )


def test_pod_larger_than_a_node() -> None:
    problem = the_error(edit({13: "nodes: 4", 18: "- {name: app, namespace: ml, pool: pool, gpus: 2}"}))
    check(
        problem,
        "fleet.yaml:18:54",
        f"{WORKLOAD}.gpus",
        "one pod asks for 2 nvidia.com/gpu, but a node of pool 'pool' advertises 1",
        "pods cannot span nodes",
    )


# --- sharing limits and Operator versions ------------------------------------------------------------------


def test_mps_before_v24_3_0() -> None:
    problem = the_error(edit({4: "operator: {version: v23.9.2}", 16: "sharing: {strategy: mps, replicas: 4}"}))
    check(
        problem,
        "fleet.yaml:16:29",
        f"{POOL}.sharing.strategy",
        "MPS needs GPU Operator v24.3.0 or newer (pinned: v23.9.2)",
        "or use time-slicing",
    )


def test_mps_in_a_mixed_cluster() -> None:
    problem = the_error(edit({**MIXED, 16: "sharing: {strategy: mps, replicas: 4}"}))
    check(
        problem,
        "fleet.yaml:16:29",
        f"{POOL}.sharing.strategy",
        "MPS cannot be used in a cluster whose mig.strategy is mixed",
        "mig.strategy: single",
    )


def test_mps_replicas_over_48() -> None:
    problem = the_error(edit({16: "sharing: {strategy: mps, replicas: 49}"}))
    check(
        problem,
        "fleet.yaml:16:44",
        f"{POOL}.sharing.replicas",
        "49 replicas is more than mps allows on Tesla T4 (at most 48)",
        "2 to 8",
    )


def test_time_slicing_replicas_over_128() -> None:
    problem = the_error(edit({16: "sharing: {strategy: time-slicing, replicas: 129}"}))
    check(
        problem,
        "fleet.yaml:16:53",
        f"{POOL}.sharing.replicas",
        "129 replicas is more than time-slicing allows on Tesla T4 (at most 128)",
        "2 to 8",
    )


def test_cdi_default_is_a_no_op_from_v25_10_and_left_out_of_the_artifacts() -> None:
    """A warning, so that an Operator bump past v25.3 need not also edit cdi (the v26.7.0 chart has no key)."""
    fleet = load(edit({4: "operator: {version: v26.7.0, cdi: {default: true}}"}))
    (warning,) = fleet.warnings
    check(
        warning,
        "fleet.yaml:4:47",
        "defaults.operator.cdi.default",
        "cdi.default has no effect from GPU Operator v25.10.0 (pinned: v26.7.0)",
        "remove it",
    )
    assert warning.severity is Severity.WARNING
    documents = [doc for artifact in compile_cluster(fleet.clusters[0]) for doc in artifact.documents]
    assert not [doc for doc in documents if "default" in (doc.get("cdi") or doc.get("spec", {}).get("cdi") or {})]


def test_cdi_default_with_cdi_disabled() -> None:
    problem = the_error(edit({4: "operator: {version: v25.3.3, cdi: {enabled: false, default: true}}"}))
    check(
        problem,
        "fleet.yaml:4:63",
        "defaults.operator.cdi.default",
        "cdi.default: true needs cdi.enabled: true",
        "enable CDI",
    )


def test_nri_plugin_before_v26_3_0() -> None:
    problem = the_error(edit({4: "operator: {version: v25.10.1, cdi: {nriPluginEnabled: true}}"}))
    check(
        problem,
        "fleet.yaml:4:57",
        "defaults.operator.cdi.nriPluginEnabled",
        "does not exist in GPU Operator v25.10.1",
        "v26.3.0",
    )


def test_nri_plugin_with_cdi_disabled() -> None:
    problem = the_error(edit({4: "operator: {version: v26.7.0, cdi: {enabled: false, nriPluginEnabled: true}}"}))
    check(
        problem,
        "fleet.yaml:4:72",
        "defaults.operator.cdi.nriPluginEnabled",
        "cannot be enabled when CDI is disabled",
        "cdi.enabled: true",
    )


def test_nri_plugin_with_toolkit_disabled() -> None:
    problem = the_error(
        edit({4: "operator: {version: v26.7.0, cdi: {nriPluginEnabled: true}, toolkit: {enabled: false}}"})
    )
    check(
        problem,
        "fleet.yaml:4:56",
        "defaults.operator.cdi.nriPluginEnabled",
        "runs in the toolkit DaemonSet, which is disabled",
        "toolkit.enabled: true",
    )


def test_unknown_operator_version() -> None:
    problem = the_error(edit({4: "operator: {version: v25.3.2}"}))
    check(
        problem,
        "fleet.yaml:4:23",
        "defaults.operator.version",
        "unknown GPU Operator version 'v25.3.2'; known: v23.9.2",
        "did you mean v25.3.",
    )


# --- names and keys ---------------------------------------------------------------------------------------


def test_duplicate_cluster_names() -> None:
    second = "\n".join(BASE.splitlines()[5:16])  # the cluster without its workloads
    problem = the_error(BASE + second + "\n")
    check(
        problem,
        "fleet.yaml:19:11",
        "clusters[1].name",
        "duplicate cluster name 'prod' (also clusters[0])",
        "each is an output folder",
    )


def test_duplicate_pool_names() -> None:
    problem = the_error(
        edit({10: "nodePools:\n  - {name: pool, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: other}}"})
    )
    check(
        problem,
        "fleet.yaml:12:15",
        "clusters[0].nodePools[1].name",
        "duplicate pool name 'pool' (also nodePools[0])",
        "unique in a cluster",
    )


def test_duplicate_workload_names() -> None:
    problem = the_error(
        edit({18: "- {name: app, namespace: ml, pool: pool}\n- {name: app, namespace: ml, pool: pool}"})
    )
    check(
        problem,
        "fleet.yaml:19:16",
        "clusters[0].workloads[1].name",
        "duplicate workload ml/app",
        "unique per namespace",
    )


def test_identical_node_selectors() -> None:
    problem = the_error(
        edit({10: "nodePools:\n  - {name: other, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: pool}}"})
    )
    check(
        problem,
        "fleet.yaml:16:23",
        "clusters[0].nodePools[1].nodeSelector",
        "pool 'pool' has the same nodeSelector as pool 'other'",
        "select only its own nodes",
    )


def test_node_selector_that_is_a_subset_of_another_pools() -> None:
    # S4: every node of pool 'big' also matches pool 'pool's selector.
    problem = the_error(
        edit({10: "nodePools:\n  - {name: big, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: pool, size: big}}"})
    )
    check(
        problem,
        "fleet.yaml:16:23",
        "clusters[0].nodePools[1].nodeSelector",
        "the nodeSelector of pool 'pool' also matches the nodes of pool 'big' (which adds size=big)",
        "select only its own nodes",
    )


def test_node_selectors_that_differ_in_a_value_do_not_overlap() -> None:
    fleet = load(
        edit({10: "nodePools:\n  - {name: other, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: other, size: big}}"})
    )
    assert [p.name for p in fleet.clusters[0].pools] == ["other", "pool"]


def test_pool_paths_skip_a_pool_with_an_unknown_gpu() -> None:
    # The third pool is nodePools[2] even though the unknown-GPU pool before it is left out.
    text = edit(
        {
            10: "nodePools:\n  - {name: x, gpu: tesla-t5, nodes: 1, nodeSelector: {pool: x}}"
            "\n  - {name: big, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: pool, size: big}}"
        }
    )
    errors = [p for p in problems(text) if p.severity is Severity.ERROR]
    assert [p.path for p in errors] == ["clusters[0].nodePools[0].gpu", "clusters[0].nodePools[2].nodeSelector"]


@pytest.mark.parametrize("label", ["nvidia.com/device-plugin.config", "nvidia.com/mig.config"])
def test_node_selector_on_a_label_gpustack_gen_sets(label: str) -> None:
    # B4: node-labels.yaml writes these labels with `kubectl label --selector <nodeSelector> --overwrite`.
    problem = the_error(edit({15: f"nodeSelector: {{pool: pool, {label}: x}}"}))
    check(
        problem,
        "fleet.yaml:15:36",
        f'{POOL}.nodeSelector["{label}"]',
        f"pool 'pool' selects its nodes by {label}, a label gpustack-gen sets on them",
        "select on a label your node group sets",
    )


@pytest.mark.parametrize("label", ["nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy"])
@pytest.mark.parametrize(
    ("changes", "strategy"),
    [
        ({16: "sharing: {strategy: time-slicing, replicas: 4}"}, "time-slicing"),
        ({16: "sharing: {strategy: mps, replicas: 4}"}, "mps"),
        ({**A100, 16: 'sharing: {strategy: mig, layout: {"1g.5gb": 7}}'}, "mig"),
    ],
    ids=["time-slicing", "mps", "mig"],
)
def test_node_selector_on_a_label_the_device_plugin_rewrites(
    label: str, changes: dict[int, str], strategy: str
) -> None:
    # B4: the labeller sets replicas and sharing-strategy from the policy (k8s-device-plugin internal/lm/resource.go).
    problem = the_error(edit({**changes, 15: f"nodeSelector: {{{label}: x}}"}))
    check(
        problem,
        "fleet.yaml:15:24",
        f'{POOL}.nodeSelector["{label}"]',
        f"pool 'pool' uses {strategy}, so the device plugin rewrites {label} on its nodes",
        "instance-type or a pool label",
    )


def test_node_selector_on_gpu_product_of_whole_gpus_is_fine() -> None:
    fleet = load(edit({15: "nodeSelector: {nvidia.com/gpu.product: Tesla-T4}"}))
    assert fleet.clusters[0].pools[0].node_selector == (("nvidia.com/gpu.product", "Tesla-T4"),)


@pytest.mark.parametrize(
    ("changes", "suffix"),
    [
        # internal/lm/resource.go productLabel: "-SHARED" for a shared resource that is not renamed.
        ({16: "sharing: {strategy: time-slicing, replicas: 4}"}, "-SHARED (time-slicing without renameByDefault)"),
        ({16: "sharing: {strategy: mps, replicas: 4}"}, "-SHARED (mps without renameByDefault)"),
        # internal/lm/mig-strategy.go newMigStrategySingleLabeler: MIG devices labelled as nvidia.com/gpu,
        # with "MIG" and the profile appended to the product.
        ({**A100, 16: 'sharing: {strategy: mig, layout: {"1g.5gb": 7}}'}, "-MIG-<profile> (mig.strategy single)"),
    ],
    ids=["time-slicing", "mps", "mig-single"],
)
def test_node_selector_on_gpu_product_where_the_device_plugin_changes_it(changes: dict[int, str], suffix: str) -> None:
    problem = the_error(edit({**changes, 15: "nodeSelector: {nvidia.com/gpu.product: x}"}))
    check(
        problem,
        "fleet.yaml:15:24",
        f'{POOL}.nodeSelector["nvidia.com/gpu.product"]',
        f"the device plugin appends {suffix} to nvidia.com/gpu.product on the nodes of pool 'pool'",
        "instance-type or a pool label",
    )


@pytest.mark.parametrize(
    "changes",
    [
        # internal/lm/resource.go: a renamed shared resource keeps the plain product name.
        {16: "sharing: {strategy: time-slicing, replicas: 4, renameByDefault: true}"},
        {16: "sharing: {strategy: mps, replicas: 4, renameByDefault: true}"},
        # internal/lm/mig-strategy.go newGPULabelers: under mixed, MIG-enabled GPUs are labelled without sharing
        # and without a MIG suffix; their devices get nvidia.com/mig-<profile>.product labels instead.
        {**A100, **MIXED, 16: 'sharing: {strategy: mig, layout: {"1g.5gb": 7}}'},
    ],
    ids=["time-slicing-renamed", "mps-renamed", "mig-mixed"],
)
def test_node_selector_on_gpu_product_where_it_stays_the_same_is_accepted(changes: dict[int, str]) -> None:
    fleet = load(edit({**changes, 15: "nodeSelector: {nvidia.com/gpu.product: x}"}))
    assert fleet.clusters[0].pools[0].node_selector == (("nvidia.com/gpu.product", "x"),)


def test_unknown_gpu_model() -> None:
    problem = the_error(edit({12: "gpu: tesla-t5"}))
    check(problem, "fleet.yaml:12:14", f"{POOL}.gpu", "unknown GPU model 'tesla-t5'", "did you mean 'tesla-t4'")


def test_two_sharing_keys_that_name_the_same_gpu() -> None:
    # S1: Tesla-T4 is tesla-t4's product label.
    problem = the_error(
        edit({9: "mig: {strategy: single}\nsharing:\n  tesla-t4: {strategy: none}\n  Tesla-T4: {strategy: none}"})
    )
    check(
        problem,
        "fleet.yaml:12:7",
        "clusters[0].sharing.Tesla-T4",
        "'tesla-t4' and 'Tesla-T4' both name tesla-t4",
        "keep one entry per GPU model",
    )


def test_sharing_key_that_is_not_a_gpu() -> None:
    problem = the_error(edit({3: "defaults:\n  sharing: {tesla-t5: {strategy: none}}"}))
    check(
        problem,
        "fleet.yaml:4:13",
        "defaults.sharing.tesla-t5",
        "'tesla-t5' is neither 'default' nor a GPU model",
        "did you mean 'tesla-t4'",
    )


def test_missing_kubernetes_version() -> None:
    problem = the_error(edit({7: "# no kubernetes version"}))
    check(problem, "fleet.yaml:6:5", "clusters[0]", "cluster 'prod' has no kubernetes version", 'kubernetes: "1.29.15"')


def test_kubernetes_version_without_a_patch() -> None:
    # S5: the hint says major.minor.patch, so the check asks for it.
    problem = the_error(edit({7: 'kubernetes: "1.29"'}))
    check(
        problem, "fleet.yaml:7:17", "clusters[0].kubernetes", "'1.29' is not a Kubernetes version", "major.minor.patch"
    )


def test_malformed_kubernetes_version() -> None:
    problem = the_error(edit({7: 'kubernetes: "v1.29.15"'}))
    check(
        problem,
        "fleet.yaml:7:17",
        "clusters[0].kubernetes",
        "'v1.29.15' is not a Kubernetes version",
        "major.minor.patch",
    )


# --- sharing fields -----------------------------------------------------------------------------------------


def test_sharing_options_without_a_strategy() -> None:
    problem = the_error(edit({16: "sharing: {replicas: 4}"}))
    check(
        problem,
        "fleet.yaml:16:18",
        f"{POOL}.sharing",
        "sharing options (replicas) are given but no strategy",
        "add strategy",
    )


def test_option_that_does_not_apply_to_the_strategy() -> None:
    problem = the_error(edit({16: "sharing: {strategy: none, replicas: 4}"}))
    check(
        problem,
        "fleet.yaml:16:35",
        f"{POOL}.sharing.replicas",
        "replicas does not apply to strategy none",
        "whole GPUs",
    )


def test_fail_requests_greater_than_one_on_strategy_none() -> None:
    problem = the_error(edit({16: "sharing: {strategy: none, failRequestsGreaterThanOne: true}"}))
    check(
        problem,
        "fleet.yaml:16:35",
        f"{POOL}.sharing.failRequestsGreaterThanOne",
        "failRequestsGreaterThanOne does not apply to strategy none",
        "whole GPUs",
    )


def test_mps_fail_requests_false_before_device_plugin_v0_20() -> None:
    # S3: device plugins before v0.20.0 force failRequestsGreaterThanOne to true for MPS.
    problem = the_error(edit({16: "sharing: {strategy: mps, replicas: 4, failRequestsGreaterThanOne: false}"}))
    check(
        problem,
        "fleet.yaml:16:75",
        f"{POOL}.sharing.failRequestsGreaterThanOne",
        "failRequestsGreaterThanOne: false cannot be honoured on MPS with device plugin v0.17.4 (GPU Operator v25.3.3)",
        "pin operator.version v26.7.0 or newer (device plugin v0.20.0)",
    )


def test_mps_fail_requests_true_before_device_plugin_v0_20_is_a_quiet_no_op() -> None:
    fleet = load(edit({16: "sharing: {strategy: mps, replicas: 4, failRequestsGreaterThanOne: true}"}))
    assert fleet.clusters[0].pools[0].sharing.fail_requests_greater_than_one is True
    assert [w.message for w in fleet.warnings] == [
        "mps on pool 'pool' in cluster 'prod' gives no fault isolation: the MPS server limits each client to "
        "1/replicas of the GPU's memory and compute, but the clients share one MPS server, so a fatal GPU error in "
        "one ends the others"
    ]


def test_mps_fail_requests_false_from_device_plugin_v0_20_allows_several_replicas_per_pod() -> None:
    fleet = load(
        edit(
            {
                4: "operator: {version: v26.7.0}",
                16: "sharing: {strategy: mps, replicas: 4, failRequestsGreaterThanOne: false}",
                18: "- {name: app, namespace: ml, pool: pool, gpus: 2}",
            }
        )
    )
    assert fleet.clusters[0].pools[0].sharing.fail_requests_greater_than_one is False
    assert fleet.clusters[0].operator.mps_fail_requests_configurable
    assert [w.path for w in fleet.warnings] == [f"{POOL}.sharing.strategy", f"{WORKLOAD}.gpus"]


@pytest.mark.parametrize(
    ("sharing", "version"),
    [("time-slicing, replicas: 4", "v25.3.3"), ("mps, replicas: 4, failRequestsGreaterThanOne: false", "v26.7.0")],
    ids=["time-slicing", "mps"],
)
def test_more_than_one_gpu_on_a_shared_pool_that_allows_it_warns(sharing: str, version: str) -> None:
    """k8s-device-plugin README, "Shared Access to GPUs": several replicas may be slices of one GPU and bring no
    more compute; failRequestsGreaterThanOne refuses such requests (the error case of the tests above)."""
    fleet = load(
        edit(
            {
                4: f"operator: {{version: {version}}}",
                16: f"sharing: {{strategy: {sharing}}}",
                18: "- {name: app, namespace: ml, pool: pool, gpus: 2}",
            }
        )
    )
    warning = next(w for w in fleet.warnings if w.path == f"{WORKLOAD}.gpus")
    strategy = sharing.split(",")[0]
    check(
        warning,
        "fleet.yaml:18:54",
        f"{WORKLOAD}.gpus",
        f"a pod asking for 2 GPUs of pool 'pool' in cluster 'prod', which {strategy} shares, gets replicas that may "
        "all be slices of one GPU",
        "set the pool's failRequestsGreaterThanOne: true",
    )


def test_more_than_one_gpu_on_mps_from_device_plugin_v0_20_names_the_option() -> None:
    problem = the_error(
        edit(
            {
                4: "operator: {version: v26.7.0}",
                16: "sharing: {strategy: mps, replicas: 4}",
                18: "- {name: app, namespace: ml, pool: pool, gpus: 2}",
            }
        )
    )
    check(
        problem,
        "fleet.yaml:18:54",
        f"{WORKLOAD}.gpus",
        "uses MPS, which refuses requests for more than one replica",
        "or set the pool's failRequestsGreaterThanOne: false",
    )


def test_time_slicing_without_replicas() -> None:
    problem = the_error(edit({16: "sharing: {strategy: time-slicing}"}))
    check(problem, "fleet.yaml:16:18", f"{POOL}.sharing", "time-slicing needs replicas", "add replicas: 4")


def test_mig_without_layout_or_config() -> None:
    problem = the_error(edit({**A100, 16: "sharing: {strategy: mig}"}))
    check(
        problem,
        "fleet.yaml:16:18",
        f"{POOL}.sharing",
        "mig needs a layout (profile -> count per GPU) or a built-in config",
        "config: all-balanced",
    )


# --- warnings ------------------------------------------------------------------------------------------------


def test_time_slicing_warns_about_memory_isolation() -> None:
    fleet = load(edit({16: "sharing: {strategy: time-slicing, replicas: 4}"}))
    (warning,) = fleet.warnings
    assert warning.severity is Severity.WARNING
    check(
        warning,
        "fleet.yaml:16:29",
        f"{POOL}.sharing.strategy",
        "time-slicing on pool 'pool' in cluster 'prod' gives no memory isolation",
        "1/replicas",
    )


def test_mps_warns_about_fault_isolation() -> None:
    fleet = load(edit({16: "sharing: {strategy: mps, replicas: 4}"}))
    (warning,) = fleet.warnings
    check(
        warning,
        "fleet.yaml:16:29",
        f"{POOL}.sharing.strategy",
        "mps on pool 'pool' in cluster 'prod' gives no fault isolation",
        "different GPUs",
    )


def test_cri_o_with_cdi_disabled_warns() -> None:
    fleet = load(edit({8: "containerRuntime: cri-o"}))
    (warning,) = fleet.warnings
    assert warning.severity is Severity.WARNING
    check(
        warning,
        "fleet.yaml:8:23",
        "clusters[0].containerRuntime",
        "CRI-O with CDI disabled uses the legacy OCI hook",
        "operator.cdi.enabled: true",
    )


def test_cri_o_from_the_fleet_defaults_warns_at_the_defaults() -> None:
    # S5: the warning points where containerRuntime was written, not at the cluster that lacks the key.
    fleet = load(edit({3: "defaults:\n  containerRuntime: cri-o", 8: "# from the defaults"}))
    (warning,) = fleet.warnings
    check(
        warning,
        "fleet.yaml:4:21",
        "defaults.containerRuntime",
        "CRI-O with CDI disabled uses the legacy OCI hook",
        "operator.cdi.enabled: true",
    )


def test_cri_o_with_cdi_disabled_in_the_file_warns_at_cdi_enabled() -> None:
    fleet = load(edit({4: "operator: {version: v25.3.3, cdi: {enabled: false}}", 8: "containerRuntime: cri-o"}))
    (warning,) = fleet.warnings
    check(
        warning,
        "fleet.yaml:4:47",
        "defaults.operator.cdi.enabled",
        "CRI-O with CDI disabled",
        "operator.cdi.enabled: true",
    )


def test_driver_version_with_the_driver_disabled_warns() -> None:
    # B8: the Operator deploys no driver, so the version is never used.
    fleet = load(edit({4: "operator: {version: v25.3.3, driver: {enabled: false, version: '580.82.07'}}"}))
    (warning,) = fleet.warnings
    assert warning.severity is Severity.WARNING
    check(
        warning,
        "fleet.yaml:4:66",
        "defaults.operator.driver.version",
        "driver.version 580.82.07 has no effect: driver.enabled is false",
        "remove driver.version, or set driver.enabled: true",
    )


def test_cri_o_with_cdi_enabled_does_not_warn() -> None:
    fleet = load(edit({4: "operator: {version: v25.3.3, cdi: {enabled: true}}", 8: "containerRuntime: cri-o"}))
    assert fleet.warnings == ()


# --- the report ----------------------------------------------------------------------------------------------


def test_the_report_counts_errors_as_they_are_added() -> None:
    # D1: checks ask for the count once per pool; it is a counter, not a scan of every problem.
    report = Report(SourceDocument("fleet.yaml", {}, {}, {}))
    report.error(("clusters",), "one", "hint")
    report.warn(("clusters",), "a warning", "hint")
    report.error(("clusters",), "two", "hint")
    assert report.error_count() == 2
    assert len(report.problems) == 3


def test_warnings_name_the_cluster_beside_the_pool() -> None:
    """Two clusters with a pool 'pool' under one fleet default: one warning each, told apart by the cluster."""
    second = '  - name: stage\n    kubernetes: "1.29.15"\n    nodePools:\n      - {name: pool, gpu: tesla-t4, nodes: 1, nodeSelector: {pool: pool}}\n'
    fleet = load(edit({3: TIME_SLICED_T4, 16: "# sharing: the fleet default"}) + second)
    assert [(w.line, w.message.split(" gives ")[0]) for w in fleet.warnings] == [
        (4, "time-slicing on pool 'pool' in cluster 'prod'"),
        (4, "time-slicing on pool 'pool' in cluster 'stage'"),
    ]


def test_a_pool_in_error_gets_no_warnings() -> None:
    """Only the error: the isolation warning about a policy that cannot be rendered is noise."""
    problems_found = problems(edit({16: "sharing: {strategy: time-slicing, replicas: 200}"}))
    assert [(p.severity, p.path) for p in problems_found] == [(Severity.ERROR, f"{POOL}.sharing.replicas")]


def test_a_mig_layout_on_a_time_sliced_t4_reports_only_the_error() -> None:
    """The layout merges over the fleet's time-slicing for T4: an error, and no isolation warning beside it."""
    (problem,) = problems(edit({3: TIME_SLICED_T4, 16: 'sharing: {layout: {"1g.5gb": 7}}'}))
    check(problem, "fleet.yaml:17:19", f"{POOL}.sharing.layout", "layout does not apply to strategy time-slicing", "")


# --- sharing entries that no pool uses -----------------------------------------------------------------------

CLUSTER_T4_REPLICAS_5 = "mig: {strategy: single}\nsharing: {tesla-t4: {replicas: 5}}"  # replaces line 9


def _unused(fleet_text: str) -> list[str]:
    return [w.format() for w in load(fleet_text).warnings if "never used" in w.message]


def test_a_cluster_sharing_entry_every_pool_overrides_is_reported_with_what_overrides_it() -> None:
    (warning,) = _unused(edit({9: CLUSTER_T4_REPLICAS_5, 16: "sharing: {strategy: time-slicing, replicas: 4}"}))
    assert warning == (
        "fleet.yaml:10:15: warning: clusters[0].sharing.tesla-t4: this sharing entry is never used: every value it "
        "sets is overridden for pool 'pool' in cluster 'prod' (by clusters[0].nodePools[0].sharing, line 17) "
        "(hint: remove it, or the values that override it)"
    )


def test_a_fleet_default_that_a_pool_starts_over_from_is_reported() -> None:
    (warning,) = _unused(edit({3: TIME_SLICED_T4, 16: "sharing: {strategy: mps, replicas: 2}"}))
    assert warning.startswith("fleet.yaml:4:13: warning: defaults.sharing.tesla-t4: this sharing entry is never used")


@pytest.mark.parametrize(
    "changes",
    [
        # The pool's entry is partial: it merges over the cluster's, which gives it its replicas.
        {9: CLUSTER_T4_REPLICAS_5, 16: "sharing: {strategy: time-slicing, renameByDefault: true}"},
        # No pool of the cluster has the GPU model: a policy for later, not a mistake.
        {9: "mig: {strategy: single}\nsharing: {a100-40gb: {strategy: mig, config: all-balanced}}"},
    ],
    ids=["merged", "no-such-pool"],
)
def test_sharing_entries_that_some_pool_uses_or_none_could_are_not_reported(changes: dict[int, str]) -> None:
    assert _unused(edit(changes)) == []


# --- MIG profile names the pinned mig-manager cannot read ---------------------------------------------------

RTX = {12: "gpu: rtx-pro-6000-blackwell-96gb", 9: "mig: {strategy: mixed}"}


@pytest.mark.parametrize(
    ("sharing", "where", "path", "profile"),
    [
        ('sharing: {strategy: mig, layout: {"1g.24gb-me": 4}}', "16:43", '.layout["1g.24gb-me"]', "1g.24gb-me"),
        ("sharing: {strategy: mig, config: all-1g.24gb.me.all}", "16:42", ".config", "1g.24gb+me.all"),
    ],
    ids=["layout", "config"],
)
def test_rtx_pro_6000_media_engine_profiles_need_mig_manager_v0_12_3(
    sharing: str, where: str, path: str, profile: str
) -> None:
    """go-nvlib's MIG profile parser in mig-parted <= v0.12.1 splits on '+' only and takes alphanumeric attributes:
    '-me' and '+me.all' fail it, and with them the whole config file (catalog/profile_grammar.py)."""
    old = {**RTX, 4: "operator: {version: v25.3.0}", 16: sharing, 18: "- {name: app, namespace: ml, pool: pool}"}
    problem = the_error(edit(old))
    check(
        problem,
        f"fleet.yaml:{where}",
        f"{POOL}.sharing{path}",
        f"MIG profile '{profile}' cannot be read by mig-manager v0.12.1 (GPU Operator v25.3.0)",
        "pin operator.version v25.3.3 or newer",
    )
    fleet = load(edit({**old, 4: "operator: {version: v25.3.3}"}))
    assert fleet.clusters[0].pools[0].mig_devices()[0][0] == profile


@pytest.mark.parametrize(
    ("policy", "message", "hint"),
    [
        ("{strategy: mig}", "MIG layouts are not device-plugin configs", "under retired.migConfigs"),
        ("{replicas: 4}", "needs the strategy it had: none, time-slicing or mps", "{strategy: time-slicing"),
    ],
)
def test_a_retired_device_plugin_config_needs_a_device_plugin_strategy(policy: str, message: str, hint: str) -> None:
    problem = the_error(BASE + f"    retired: {{devicePluginConfigs: {{old: {policy}}}}}\n")
    check(problem, "fleet.yaml:19:42", "clusters[0].retired.devicePluginConfigs.old", message, hint)
