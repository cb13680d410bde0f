"""One test per semantic error and warning of checks.py, resolve.py and load.py.

Each test changes one or two lines of the small valid fleet in ``fleet_text.BASE`` and asserts the exact
``file:line:col``, the field path, and fragments of the message and of the hint.
"""

from __future__ import annotations

from fleet_text import BASE, check, edit, load, the_error

from gpustack_gen.errors import Severity

A100 = {12: "gpu: a100-40gb"}
MIXED = {9: "mig: {strategy: mixed}"}
POOL = "clusters[0].nodePools[0]"
WORKLOAD = "clusters[0].workloads[0]"


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
        "fleet.yaml:13:16",
        f"{POOL}.nodes",
        "workloads ask for 3 nvidia.com/gpu (app 3) but pool 'pool' has 2",
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
        "fleet.yaml:13:16",
        f"{POOL}.nodes",
        "ask for 9 nvidia.com/gpu (app 9) but pool 'pool' has 8",
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


def test_cdi_default_is_a_no_op_from_v25_10() -> None:
    problem = the_error(edit({4: "operator: {version: v26.7.0, cdi: {default: true}}"}))
    check(
        problem,
        "fleet.yaml:4:47",
        "defaults.operator.cdi.default",
        "cdi.default has no effect in GPU Operator v26.7.0",
        "remove it",
    )


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


def test_unknown_gpu_model() -> None:
    problem = the_error(edit({12: "gpu: tesla-t5"}))
    check(problem, "fleet.yaml:12:14", f"{POOL}.gpu", "unknown GPU model 'tesla-t5'", "did you mean 'tesla-t4'")


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


def test_fail_requests_greater_than_one_on_mps() -> None:
    problem = the_error(edit({16: "sharing: {strategy: mps, replicas: 4, failRequestsGreaterThanOne: true}"}))
    check(
        problem,
        "fleet.yaml:16:47",
        f"{POOL}.sharing.failRequestsGreaterThanOne",
        "does not apply to strategy mps",
        "MPS always refuses",
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
        "time-slicing on pool 'pool' gives no memory isolation",
        "1/replicas",
    )


def test_mps_warns_about_memory_isolation() -> None:
    fleet = load(edit({16: "sharing: {strategy: mps, replicas: 4}"}))
    (warning,) = fleet.warnings
    check(
        warning,
        "fleet.yaml:16:29",
        f"{POOL}.sharing.strategy",
        "mps on pool 'pool' gives no memory isolation",
        "1/replicas",
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


def test_cri_o_with_cdi_enabled_does_not_warn() -> None:
    fleet = load(edit({4: "operator: {version: v25.3.3, cdi: {enabled: true}}", 8: "containerRuntime: cri-o"}))
    assert fleet.warnings == ()
