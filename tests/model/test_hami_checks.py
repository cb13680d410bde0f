"""One test per rule of the HAMi backend: the fleet's HAMi fields, their checks, capacity and warnings.

``HAMI`` has the line layout of ``fleet_text.BASE`` (line 8 is ``backend: hami``), so each test edits one or
two lines and asserts the exact ``file:line:col``, path, message and hint.
"""

from __future__ import annotations

import pytest
from fleet_text import BASE, check, edit, load, problems, the_error

from gpustack_gen.errors import Severity
from gpustack_gen.model.backends.hami import hami_sharing, node_names, workload_shares

HAMI = edit(
    {
        8: "backend: hami",
        16: "sharing: {strategy: hami, split: 5}",
        18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 3Gi}",
    }
)
POOL = "clusters[0].nodePools[0]"
WORKLOAD = "clusters[0].workloads[0]"


def with_second_pool(second: str, first: str = "sharing: {strategy: hami, split: 5}") -> str:
    """A second pool ``big`` of L4s (``- name: big`` on line 17 when ``first`` is one line) after the first,
    whose sharing line is ``first``; ``second`` ends the new pool (its sharing, its nodeNames)."""
    big = "  - name: big\n    gpu: l4\n    nodes: 2\n    nodeSelector: {pool: big}\n    " + second.replace(
        "\n", "\n    "
    )
    return edit({16: first, 17: f"{big}\nworkloads:"}, HAMI)


def warnings(text: str) -> list[str]:
    return [w.message for w in load(text).warnings]


def test_the_hami_base_fleet_is_valid_and_warns_about_the_isolation_bypasses() -> None:
    fleet = load(HAMI)
    (cluster,) = fleet.clusters
    assert (
        cluster.backend,
        hami_sharing(cluster.pools[0].sharing).split,
        workload_shares(cluster.workloads[0]).gpu_memory_mib,
    ) == ("hami", 5, 3072)
    (warning,) = fleet.warnings
    assert warning.severity is Severity.WARNING
    assert (warning.line, warning.path) == (16, f"{POOL}.sharing.strategy")
    for bypass in ("software", "CUDA_DISABLE_CONTROL=true", "Docker-in-Docker", "call the GPU driver directly"):
        assert bypass in warning.message


def test_hami_on_a_gpu_operator_cluster() -> None:
    problem = the_error(edit({16: "sharing: {strategy: hami, split: 5}"}))
    check(
        problem,
        "fleet.yaml:16:29",
        f"{POOL}.sharing.strategy",
        "strategy hami does not exist on backend gpu-operator",
        "set the cluster's backend: hami for hami",
    )


def test_mig_on_a_hami_cluster() -> None:
    problem = the_error(edit({12: "gpu: a100-40gb", 16: "sharing: {strategy: mig, config: all-balanced}"}, HAMI))
    check(problem, "fleet.yaml:16:29", f"{POOL}.sharing.strategy", "strategy mig does not exist on backend hami", "")


def test_hami_needs_a_split() -> None:
    problem = the_error(edit({16: "sharing: {strategy: hami}"}, HAMI))
    check(problem, "fleet.yaml:16:18", f"{POOL}.sharing", "hami needs split", "add split: 4")


def test_split_belongs_to_hami() -> None:
    problem = the_error(edit({16: "sharing: {strategy: time-slicing, replicas: 4, split: 5}"}))
    check(
        problem,
        "fleet.yaml:16:56",
        f"{POOL}.sharing.split",
        "split does not apply to strategy time-slicing",
        "remove split",
    )


@pytest.mark.parametrize(("split", "message"), [("0", "must be at least 1"), ("129", "must be at most 128")])
def test_split_range(split: str, message: str) -> None:
    problem = the_error(edit({16: f"sharing: {{strategy: hami, split: {split}}}"}, HAMI))
    check(problem, "fleet.yaml:16:42", f"{POOL}.sharing.split", message, "how many pods share one GPU")


def test_memory_above_what_one_gpu_has() -> None:
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 20Gi}"}, HAMI))
    check(
        problem,
        "fleet.yaml:18:59",
        f"{WORKLOAD}.gpuMemory",
        "asks for 20480 MiB of GPU memory per GPU, but one Tesla T4 of pool 'pool' has 16384 MiB (nominal)",
        "ask for at most 16384Mi",
    )


def test_memory_scaling_raises_what_one_gpu_hands_out() -> None:
    text = edit(
        {
            16: "sharing: {strategy: hami, split: 5, memoryScaling: 2}",
            18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 20Gi}",
        },
        HAMI,
    )
    fleet = load(text)
    assert fleet.clusters[0].resources_per_node(fleet.clusters[0].pools[0])["nvidia.com/gpumem"] == 32768
    (scaling,) = [w for w in fleet.warnings if "memoryScaling" in w.message]
    assert (scaling.line, scaling.path) == (16, f"{POOL}.sharing.memoryScaling")
    assert "experimental" in scaling.message


def test_both_memory_forms() -> None:
    problem = the_error(
        edit({18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 3Gi, gpuMemoryPercent: 20}"}, HAMI)
    )
    check(
        problem,
        "fleet.yaml:18:82",
        f"{WORKLOAD}.gpuMemoryPercent",
        "gpuMemory and gpuMemoryPercent cannot be given together",
        "keep one of them",
    )


@pytest.mark.parametrize("field", ["gpuCores", "gpuMemoryPercent"])
@pytest.mark.parametrize(("value", "message"), [("0", "must be at least 1"), ("101", "must be at most 100")])
def test_percentages_are_1_to_100(field: str, value: str, message: str) -> None:
    problem = the_error(edit({18: f"- {{name: app, namespace: ml, pool: pool, {field}: {value}}}"}, HAMI))
    assert (problem.line, problem.path) == (18, f"{WORKLOAD}.{field}")
    assert message in problem.message
    assert "a percentage of each GPU's" in problem.hint


def test_memory_without_a_unit_is_bytes() -> None:
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 3000}"}, HAMI))
    check(problem, "fleet.yaml:18:59", f"{WORKLOAD}.gpuMemory", "less than 1 MiB", "give the unit: 3000Mi")


def test_memory_in_decimal_units_is_rounded_up_to_whole_mib() -> None:
    fleet = load(edit({18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 3G}"}, HAMI))
    assert workload_shares(fleet.clusters[0].workloads[0]).gpu_memory_mib == 2862  # 3e9 bytes = 2861.02 MiB


def test_gpus_above_the_nodes_gpus() -> None:
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool, gpus: 2, gpuMemory: 3Gi}"}, HAMI))
    check(
        problem,
        "fleet.yaml:18:54",
        f"{WORKLOAD}.gpus",
        "a node of pool 'pool' has 1: on HAMi, nvidia.com/gpu in a pod counts physical GPUs",
        "ask for gpus: 1 or fewer",
    )


@pytest.mark.parametrize("field", ["gpuMemory: 3Gi", "gpuMemoryPercent: 20", "gpuCores: 30"])
def test_gpu_shares_need_a_hami_pool(field: str) -> None:
    problem = the_error(
        edit(
            {
                16: "sharing: {strategy: time-slicing, replicas: 4}",
                18: f"- {{name: app, namespace: ml, pool: pool, {field}}}",
            }
        )
    )
    name = field.split(":")[0]
    check(
        problem,
        "fleet.yaml:18:48",
        f"{WORKLOAD}.{name}",
        "needs a pool that shares GPUs by memory and compute (strategy hami); pool 'pool' uses time-slicing",
        "give the pool sharing: {strategy: hami, split: 4} (backend hami)",
    )


def test_whole_gpu_pools_on_hami_take_no_shares() -> None:
    problem = the_error(edit({16: "sharing: {strategy: none}"}, HAMI))
    check(problem, "fleet.yaml:18:48", f"{WORKLOAD}.gpuMemory", "pool 'pool' uses none", "strategy: hami")


def test_a_set_that_fits_by_count_but_not_by_memory() -> None:
    # 10 vGPU slots on 2 T4s (16384 MiB each): 6 pods fit by count, 6 x 6 GiB = 36864 MiB do not.
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool, replicas: 6, gpuMemory: 6Gi}"}, HAMI))
    check(
        problem,
        "fleet.yaml:18:9",
        WORKLOAD,
        "workloads ask for 36864 nvidia.com/gpumem of pool 'pool' (app 36864), which has 32768",
        "lower the workloads' replicas or their GPU memory and cores",
    )


def test_a_set_that_fits_by_memory_but_not_by_count() -> None:
    problem = the_error(edit({18: "- {name: app, namespace: ml, pool: pool, replicas: 11, gpuMemory: 1Gi}"}, HAMI))
    check(problem, "fleet.yaml:18:9", WORKLOAD, "ask for 11 nvidia.com/gpu", "raise the pool's split")


def test_a_set_that_fits_by_count_and_memory_but_not_by_cores() -> None:
    text = edit({18: "- {name: app, namespace: ml, pool: pool, replicas: 4, gpuMemory: 1Gi, gpuCores: 60}"}, HAMI)
    problem = the_error(text)
    check(
        problem, "fleet.yaml:18:9", WORKLOAD, "ask for 240 nvidia.com/gpucores of pool 'pool'", "GPU memory and cores"
    )


def test_pods_without_memory_limits_take_whole_gpus() -> None:
    cluster = load(edit({18: "- {name: app, namespace: ml, pool: pool}"}, HAMI)).clusters[0]
    (workload,) = cluster.workloads
    assert cluster.workload_request(workload) == {
        "nvidia.com/gpu": 1,
        "nvidia.com/gpumem": 16384,
        "nvidia.com/gpucores": 100,
    }
    assert cluster.workload_limits(workload) == {"nvidia.com/gpu": 1}


def test_pools_that_need_other_settings_need_node_names() -> None:
    problem = the_error(with_second_pool("sharing: {strategy: hami, split: 2}"))
    check(
        problem,
        "fleet.yaml:21:42",
        "clusters[0].nodePools[1].sharing.split",
        "pool 'big' (split 2) needs other HAMi settings than pool 'pool' (split 5): the chart sets one split and "
        "memory scaling for the cluster, and per-node settings match nodes by name only",
        "list pool 'big''s nodes under its nodeNames",
    )


def test_named_nodes_carry_their_own_settings() -> None:
    fleet = load(with_second_pool("sharing: {strategy: hami, split: 2}\nnodeNames: [big-0, big-1]"))
    assert [node_names(p) for p in fleet.clusters[0].pools] == [(), ("big-0", "big-1")]


def test_node_names_must_name_every_node() -> None:
    problem = the_error(with_second_pool("sharing: {strategy: hami, split: 2}\nnodeNames: [big-0]"))
    check(
        problem,
        "fleet.yaml:22:20",
        "clusters[0].nodePools[1].nodeNames",
        "pool 'big' names 1 nodes but has 2",
        "list all 2 node names",
    )


def test_a_node_belongs_to_one_pool() -> None:
    text = with_second_pool(
        "sharing: {strategy: hami, split: 2}\nnodeNames: [big-0, n1]",
        first="sharing: {strategy: hami, split: 5}\nnodeNames: [n0, n1]",
    )
    problem = the_error(text)
    check(problem, "fleet.yaml:23:28", "clusters[0].nodePools[1].nodeNames[1]", "node 'n1' is named twice", "remove")


def test_one_scheduler_policy_per_cluster() -> None:
    text = with_second_pool(
        "sharing: {strategy: hami, split: 5, policy: spread}",
        first="sharing: {strategy: hami, split: 5, policy: binpack}",
    )
    problem = the_error(text)
    check(
        problem,
        "fleet.yaml:21:53",
        "clusters[0].nodePools[1].sharing.policy",
        "pool 'big' asks for scheduler policy spread, pool 'pool' for binpack",
        "the same policy",
    )


def test_the_nri_plugin_leaves_hami_without_a_runtime_class() -> None:
    problem = the_error(edit({4: "operator: {version: v26.7.0, cdi: {nriPluginEnabled: true}}"}, HAMI))
    check(
        problem,
        "fleet.yaml:4:56",
        "defaults.operator.cdi.nriPluginEnabled",
        "the GPU Operator creates no nvidia RuntimeClass",
        "turn the NRI plugin off",
    )


def test_hami_must_be_able_to_label_the_nodes_gpu_on() -> None:
    problem = the_error(edit({15: "nodeSelector: {gpu: 't4'}"}, HAMI))
    check(problem, "fleet.yaml:15:24", f"{POOL}.nodeSelector.gpu", "HAMi needs gpu=on", "select on a label")


def test_an_unknown_hami_version() -> None:
    problem = the_error(edit({4: "operator: {version: v25.3.3}\nhami: {version: '2.9.0'}"}, HAMI))
    check(problem, "fleet.yaml:5:19", "defaults.hami.version", "unknown HAMi chart version '2.9.0'", '"2.10.0"')


def test_a_hami_policy_is_no_retired_device_plugin_config() -> None:
    text = BASE + "    retired: {devicePluginConfigs: {old: {strategy: hami, split: 4}}}\n"
    problem = the_error(text)
    check(
        problem, "fleet.yaml:19:42", "clusters[0].retired.devicePluginConfigs.old", "HAMi policies are not", "remove it"
    )


def test_memory_of_a_model_the_catalog_does_not_size_is_not_checked() -> None:
    text = edit({12: "gpu: v100", 18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 20Gi}"}, HAMI)
    assert any("does not know how much memory one V100 has" in w for w in warnings(text))
    cluster = load(text).clusters[0]
    assert "nvidia.com/gpumem" not in cluster.resources_per_node(cluster.pools[0])


def test_problems_of_one_fleet_are_reported_together() -> None:
    text = edit(
        {16: "sharing: {strategy: hami}", 18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 3000}"}, HAMI
    )
    assert {p.path for p in problems(text) if p.severity is Severity.ERROR} == {
        f"{POOL}.sharing",
        f"{WORKLOAD}.gpuMemory",
    }


def test_node_names_on_the_gpu_operator_backend_have_no_effect() -> None:
    (warning,) = load(edit({15: "nodeSelector: {pool: pool}\nnodeNames: [a, b]"})).warnings
    assert (warning.line, warning.path, warning.severity) == (16, f"{POOL}.nodeNames", Severity.WARNING)
    assert "have no effect on backend gpu-operator" in warning.message


def test_memory_within_what_nvml_may_report_less_is_a_warning() -> None:
    # One T4 is 16384 MiB nominal; HAMi registers what NVML reports, up to 10 % less: 14746 MiB at the least.
    text = edit({18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 15000Mi}"}, HAMI)
    (warning,) = [w for w in load(text).warnings if "gpuMemory" in w.path]
    assert (warning.severity, warning.line, warning.path) == (Severity.WARNING, 18, f"{WORKLOAD}.gpuMemory")
    assert "asks for 15000 MiB of GPU memory per GPU, more than the 14746 MiB one Tesla T4" in warning.message
    assert "nvidia-smi --query-gpu=memory.total" in warning.hint
    assert not [
        w
        for w in load(edit({18: "- {name: app, namespace: ml, pool: pool, gpuMemory: 14746Mi}"}, HAMI)).warnings
        if "gpuMemory" in w.path
    ]


def test_a_set_that_fits_nominal_memory_but_not_what_nvml_reports_is_a_warning() -> None:
    # Split 5 on one T4: 5 pods of 3200 MiB fit its nominal 16384 MiB, not the 14746 MiB it may register.
    text = edit({13: "nodes: 1", 18: "- {name: app, namespace: ml, pool: pool, replicas: 5, gpuMemory: 3200Mi}"}, HAMI)
    (warning,) = [w for w in load(text).warnings if w.path == WORKLOAD]
    assert (warning.severity, warning.line) == (Severity.WARNING, 18)
    assert warning.message.startswith(
        "workloads ask for 16000 MiB of GPU memory of pool 'pool' (app 16000) where its GPUs register the least "
        "HAMi may see, 14746 MiB (the catalog's memory is nominal, NVML reports up to 10 % less; 16384 MiB nominal)"
    )
    assert "lower the workloads' gpuMemory or replicas, or add nodes" in warning.hint


@pytest.mark.parametrize(
    "workload",
    [
        "{name: app, namespace: ml, pool: pool, replicas: 4, gpuMemory: 3200Mi}",  # 12800 MiB
        "{name: app, namespace: ml, pool: pool, replicas: 5, gpuMemoryPercent: 20}",  # a share of what is registered
        "{name: app, namespace: ml, pool: pool, replicas: 1}",  # the whole GPU, whatever it registers
    ],
)
def test_memory_that_fits_what_nvml_reports_is_not_warned_about(workload: str) -> None:
    text = edit({13: "nodes: 1", 18: f"- {workload}"}, HAMI)
    assert [w.path for w in load(text).warnings] == [f"{POOL}.sharing.strategy"]  # the isolation bypasses only


def test_a_set_over_the_nominal_memory_gets_its_error_and_no_margin_warning() -> None:
    text = edit({13: "nodes: 1", 18: "- {name: app, namespace: ml, pool: pool, replicas: 5, gpuMemory: 3300Mi}"}, HAMI)
    assert sorted((p.severity.value, p.path) for p in problems(text)) == [
        ("error", WORKLOAD),
        ("warning", f"{POOL}.sharing.strategy"),
    ]


def test_a_set_that_fits_the_totals_but_not_gpu_by_gpu() -> None:
    # Two T4s (16384 MiB each): three pods of 9 GiB are 27648 MiB of 32768, but only one fits on each GPU.
    text = edit({18: "- {name: app, namespace: ml, pool: pool, replicas: 3, gpuMemory: 9Gi}"}, HAMI)
    (warning,) = [w for w in load(text).warnings if "GPU by GPU" in w.message]
    check(warning, "fleet.yaml:18:9", WORKLOAD, "a pod of app needs 9216 MiB", "pack onto the GPUs")


def test_a_set_that_packs_gpu_by_gpu_gets_no_fit_warning() -> None:
    text = edit({18: "- {name: app, namespace: ml, pool: pool, replicas: 2, gpuMemory: 9Gi}"}, HAMI)
    assert not [w for w in load(text).warnings if "GPU by GPU" in w.message]
