"""``verify`` on a HAMi cluster: HAMi's node registration where capacity is checked, its GPUs' health and type,
HAMi's workloads, the Operator's own device plugin off; each check silent on the healthy stage and failed by one
fixture; the registration read as HAMi v2.10.0 reads it (JSON, and the legacy string form)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hami_helpers import (
    BROKEN,
    HAMI_EXAMPLE,
    HAMI_ONLY,
    HEALTHY,
    REGISTER,
    Edit,
    advertise,
    annotate,
    operator_plugin_runs,
    plugin_leaves,
    register,
    scheduler_crashes,
    stage,
    unlabelled_node,
    verify_stage,
)
from verify_helpers import DATA, Files, both, copy_state, item, label, node

from gpustack_gen.cli import main
from gpustack_gen.compile.backends.hami.values import hami_release
from gpustack_gen.errors import ExitCode
from gpustack_gen.model.backends.hami import node_names
from gpustack_gen.shell import text_in
from gpustack_gen.verify import state_parts
from gpustack_gen.verify.backends import VERIFY_BACKENDS, verify_backend
from gpustack_gen.verify.backends.hami.registration import parse_registration
from gpustack_gen.verify.checks import CHECK_IDS, get

T4_B = "stage-t4-b"
LEGACY = "GPU-a86d27e9-41c5-f3b0-7d18-c29e64f05b83,5,15360,100,NVIDIA-Tesla T4,0,true:"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_a_hami_cluster_has_its_own_backend_hook_and_state_part() -> None:
    assert verify_backend(stage()) is VERIFY_BACKENDS["hami"]
    assert text_in("stage", state_parts(stage())[-1].command_into(Path("."))) == (
        "kubectl --context stage get daemonsets,deployments,pods -n kube-system -l app.kubernetes.io/instance=hami -o json > hami.json"
    )


def test_the_example_on_a_healthy_cluster_exits_0_and_reads_the_registration() -> None:
    code, out = run("verify", str(HAMI_EXAMPLE), "--cluster", "stage", "--from", str(DATA / HEALTHY))
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == (
        "  t4 (tesla-t4, HAMi, 5 per GPU): 2/2 nodes ok; nvidia.com/gpu 10/10, nvidia.com/gpumem 30720/32768, "
        "nvidia.com/gpucores 200/200"
    )
    assert [line for line in lines if line.startswith("  stage-t4-")] == [
        f"  stage-t4-{n}: ok (nvidia.com/gpu 5, nvidia.com/gpumem 15360, nvidia.com/gpucores 100)" for n in "ab"
    ]
    assert lines[-1] == "the cluster matches the fleet: 0 errors, 0 warnings"


@pytest.mark.parametrize("check", CHECK_IDS)
def test_the_healthy_stage_passes(check: str, tmp_path: Path) -> None:
    result = verify_stage(tmp_path / "state")
    assert [f.message for f in result.findings if f.check == check] == []
    assert result.skipped == ()


def test_the_broken_stage_exits_1_with_a_line_per_node_and_cause(tmp_path: Path) -> None:
    folder = copy_state(HEALTHY, tmp_path / "state", BROKEN)
    code, out = run("verify", str(HAMI_EXAMPLE), "--cluster", "stage", "--from", str(folder))
    assert code == 1
    (a_advertised, a_label) = [line for line in out.splitlines() if line.startswith("  stage-t4-a: ")]
    (b_memory,) = [line for line in out.splitlines() if line.startswith("  stage-t4-b: ")]
    assert a_advertised.startswith(
        "  stage-t4-a: error gpu-not-advertised: nvidia.com/gpu: expected 5, actual 0 (likely: the node is not "
        "labelled gpu=on, so HAMi's device plugin does not run there"
    )
    assert a_label.startswith('  stage-t4-a: error label-mismatch: label gpu: expected "on", actual absent')
    assert b_memory.startswith(
        "  stage-t4-b: error capacity-mismatch: nvidia.com/gpumem in annotation hami.io/node-nvidia-register: "
        "expected 16384, actual 30720 (at least 14746: the catalog's memory is nominal"
    )
    assert "a higher deviceMemoryScaling on the node" in b_memory
    assert "  error release-pods: Deployment kube-system/hami-scheduler: not rolled out" in out


def _remove_node(files: Files) -> None:
    files["nodes.json"]["items"].remove(node(files, T4_B))


def _foreign_gpu_node(files: Files) -> None:
    extra = json.loads(json.dumps(node(files, T4_B)))
    extra["metadata"]["name"] = "stage-l4-a"
    extra["metadata"]["labels"].update({"pool": "l4", "nvidia.com/gpu.product": "NVIDIA-L4"})
    files["nodes.json"]["items"].append(extra)


def _policy_plugin_on(files: Files) -> None:
    files["clusterpolicy.json"]["items"][0]["spec"]["devicePlugin"]["enabled"] = True


def _gfd_unready(files: Files) -> None:
    item(files, "operator.json", "DaemonSet", "gpu-feature-discovery")["status"]["numberReady"] = 1


def _toolkit_unready(files: Files) -> None:
    """HAMi's device plugin waits for the toolkit (an init container), so verify waits for it too."""
    item(files, "operator.json", "DaemonSet", "nvidia-container-toolkit-daemonset")["status"]["numberReady"] = 1


# check id -> [(edit, [(pool, node, subject, severity)], a phrase the check's first hint holds)]
HAMI_FAILING: dict[str, list[tuple[Edit, list[tuple[Any, ...]], str]]] = {
    "pool-size": [(_remove_node, [("t4", None, "nodes", "error")], "--selector pool=t4")],
    "unmatched-gpu-node": [(_foreign_gpu_node, [(None, "stage-l4-a", "nodeSelector", "error")], "add a pool")],
    "gpu-not-advertised": [
        (unlabelled_node(T4_B), [("t4", T4_B, "nvidia.com/gpu", "error")], "not labelled gpu=on"),
        (
            both(advertise(T4_B, 0), register(T4_B, health=None)),
            [("t4", T4_B, "nvidia.com/gpu", "error")],
            "registered unhealthy",
        ),
        (
            both(advertise(T4_B, 0), annotate(T4_B, "hami.io/node-handshake", None)),
            [("t4", T4_B, "nvidia.com/gpu", "error")],
            "pod hami-device-plugin-9dq4m runs and is ready",
        ),
    ],
    "capacity-mismatch": [
        (
            register(T4_B, devmem=8192),
            [("t4", T4_B, "nvidia.com/gpumem in annotation hami.io/node-nvidia-register", "error")],
            "under 14746",
        ),
        (
            register(T4_B, devcore=50),
            [("t4", T4_B, "nvidia.com/gpucores in annotation hami.io/node-nvidia-register", "error")],
            "deviceCoreScaling is not 1",
        ),
        (
            both(advertise(T4_B, 10), register(T4_B, count=10)),
            [("t4", T4_B, "nvidia.com/gpu", "error")],
            "splits each GPU into 10",
        ),
        (
            both(operator_plugin_runs(T4_B), advertise(T4_B, 1)),
            [("t4", T4_B, "nvidia.com/gpu", "error")],
            "the GPU Operator's own device plugin runs on the node (pod nvidia-device-plugin-daemonset-x0k2p)",
        ),
    ],
    "node-registration": [
        (annotate(T4_B, REGISTER, LEGACY), [("t4", T4_B, "annotation hami.io/node-nvidia-register", "error")], "older"),
        (annotate(T4_B, REGISTER, None), [("t4", T4_B, "annotation hami.io/node-nvidia-register", "error")], "logs"),
        (
            annotate(T4_B, REGISTER, '[{"id": "GPU-1", "count": "5"}]'),
            [("t4", T4_B, "annotation hami.io/node-nvidia-register", "error")],
            "cannot read it either",
        ),
        (register(T4_B, mode="mig"), [("t4", T4_B, "annotation hami.io/node-nvidia-register", "error")], "dynamic MIG"),
    ],
    "gpu-health": [
        (
            register(T4_B, health=None),
            [("t4", T4_B, "GPU 0 (GPU-a86d27e9-41c5-f3b0-7d18-c29e64f05b83)", "error")],
            "critical Xid",
        )
    ],
    "label-mismatch": [
        (label(T4_B, "gpu", None), [("t4", T4_B, "label gpu", "error")], "kubectl --context stage label node")
    ],
    "product-mismatch": [
        (
            both(register(T4_B, type="NVIDIA-Tesla V100-PCIE-16GB"), label(T4_B, "nvidia.com/gpu.product", None)),
            [("t4", T4_B, "GPU type in annotation hami.io/node-nvidia-register", "error")],
            "set the pool's gpu to v100",
        )
    ],
    "clusterpolicy": [(_policy_plugin_on, [(None, None, "spec.devicePlugin.enabled", "error")], "helm upgrade")],
    "operator-pods": [
        (
            operator_plugin_runs(T4_B),
            [(None, None, "DaemonSet gpu-operator/nvidia-device-plugin-daemonset", "error")],
            "must not run on one node",
        ),
        (_gfd_unready, [(None, None, "DaemonSet gpu-operator/gpu-feature-discovery", "error")], "rollout status"),
        (
            _toolkit_unready,
            [(None, None, "DaemonSet gpu-operator/nvidia-container-toolkit-daemonset", "error")],
            "rollout status",
        ),
    ],
    "release-pods": [
        (scheduler_crashes, [(None, None, "Deployment kube-system/hami-scheduler", "error")], "failurePolicy Ignore"),
        (
            lambda files: files["hami.json"]["items"].remove(
                item(files, "hami.json", "DaemonSet", "hami-device-plugin")
            ),
            [(None, None, "DaemonSet kube-system/hami-device-plugin", "error")],
            "helm upgrade --install hami hami-charts/hami",
        ),
    ],
}
CASES = [
    pytest.param(check, *case, id=f"{check}-{index}")
    for check, cases in HAMI_FAILING.items()
    for index, case in enumerate(cases)
]


def test_every_hami_only_check_has_a_failing_fixture() -> None:
    assert set(HAMI_FAILING) >= HAMI_ONLY
    assert set(HAMI_FAILING) <= set(CHECK_IDS)


@pytest.mark.parametrize(("check", "edit", "expected", "phrase"), CASES)
def test_a_hami_cluster_that_differs_fails_the_check(
    check: str, edit: Callable[[Files], None], expected: list[tuple[Any, ...]], phrase: str, tmp_path: Path
) -> None:
    result = verify_stage(tmp_path / "state", edit)
    found = sorted(
        ((f.pool, f.node, f.subject, f.severity.value) for f in result.findings if f.check == check), key=repr
    )
    assert found == sorted(expected, key=repr)
    first = next(f for f in result.findings if f.check == check)
    assert phrase in first.hint
    assert result.exit_code is ExitCode.DIFFERS
    assert check == get(check).ID


def test_every_helm_command_verify_prints_adds_hami_s_repository_first(tmp_path: Path) -> None:
    """A fix command runs where nobody added HAMi's chart repository yet (CI, a colleague's machine)."""
    release = hami_release(stage())
    install = f"helm upgrade --install {release.name} {release.reference}"
    repo_add = release.repo_add_command()
    assert repo_add is not None
    add = text_in("stage", repo_add)
    hints = [
        finding.hint
        for index, case in enumerate(CASES)
        for finding in verify_stage(tmp_path / str(index), case.values[1]).findings
        if install in finding.hint
    ]
    assert len(hints) >= 4  # release-pods, capacity-mismatch (memory, split), node-registration
    for hint in hints:
        assert hint.count(install) == hint.count(f"{add} && {install}"), hint


@pytest.mark.parametrize(
    ("edit", "runs_there"),
    [
        pytest.param(unlabelled_node(T4_B), False, id="never-labelled"),
        pytest.param(both(label(T4_B, "gpu", None), advertise(T4_B, 0)), True, id="label-gone-plugin-still-there"),
        pytest.param(
            both(plugin_leaves(T4_B), advertise(T4_B, None), annotate(T4_B, REGISTER, None)),
            True,
            id="labelled-plugin-absent",
        ),
    ],
)
def test_the_no_driver_cause_only_where_hami_s_plugin_runs_or_would(
    edit: Edit, runs_there: bool, tmp_path: Path
) -> None:
    result = verify_stage(tmp_path / "state", edit)
    (finding,) = [f for f in result.findings if f.check == "gpu-not-advertised"]
    assert ("HAMi's device plugin gets no driver" in finding.hint) is runs_there


@pytest.mark.parametrize(("devmem", "matches"), [(16384, True), (14746, True), (14745, False), (16385, False)])
def test_memory_matches_down_to_the_stated_shortfall_and_never_above(
    devmem: int, matches: bool, tmp_path: Path
) -> None:
    result = verify_stage(tmp_path / "state", register(T4_B, devmem=devmem))
    assert (result.exit_code is ExitCode.OK) is matches
    if not matches:
        (finding,) = result.findings
        assert finding.message == (
            f"nvidia.com/gpumem in annotation hami.io/node-nvidia-register: expected 16384, actual {devmem} (at least "
            "14746: the catalog's memory is nominal, NVML reports up to 10 % less)"
        )


def test_the_least_memory_verify_accepts_is_what_capacity_yaml_states(tmp_path: Path) -> None:
    """One margin for the render's capacity check and for verify: a node that registers the least capacity.yaml
    promises passes, one MiB less fails."""
    from gpustack_gen import load_fleet, render

    (capacity,) = render(load_fleet(HAMI_EXAMPLE))["stage/capacity.yaml"].documents
    (pool,) = capacity["pools"]
    least = pool["gpuMemoryPerGpuAtLeastMiB"]
    assert least < pool["gpuMemoryPerGpuMiB"]
    assert verify_stage(tmp_path / "at", register(T4_B, devmem=least)).exit_code is ExitCode.OK
    assert verify_stage(tmp_path / "under", register(T4_B, devmem=least - 1)).exit_code is ExitCode.DIFFERS


def test_a_wrong_split_is_reported_once_not_again_for_the_registration(tmp_path: Path) -> None:
    result = verify_stage(tmp_path / "state", both(advertise(T4_B, 10), register(T4_B, count=10)))
    assert [(f.check, f.subject, f.expected, f.actual) for f in result.findings] == [
        ("capacity-mismatch", "nvidia.com/gpu", 5, 10)
    ]
    assert "devicePlugin.deviceSplitCount in hami-values.yaml, unless the node's entry" in result.findings[0].hint


def test_a_missing_hami_file_skips_only_release_pods(tmp_path: Path) -> None:
    folder = copy_state(HEALTHY, tmp_path / "state")
    (folder / "hami.json").unlink()
    code, out = run("verify", str(HAMI_EXAMPLE), "--cluster", "stage", "--from", str(folder))
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("skipped ")] == [
        "skipped release-pods: hami.json not found (write it with kubectl --context stage get daemonsets,deployments,pods -n "
        f"kube-system -l app.kubernetes.io/instance=hami -o json > {folder.as_posix()}/hami.json)"
    ]


def test_a_deployment_in_operator_json_belongs_in_hami_json(tmp_path: Path) -> None:
    def edit(files: Files) -> None:
        files["operator.json"]["items"].append(item(files, "hami.json", "Deployment", "hami-scheduler"))

    folder = copy_state(HEALTHY, tmp_path / "state", edit)
    result = CliRunner().invoke(main, ["verify", str(HAMI_EXAMPLE), "--cluster", "stage", "--from", str(folder)])
    assert result.exit_code == 2
    assert (
        "a Deployment (hami-scheduler), not a DaemonSet or Pod (hint: it belongs in hami.json: kubectl --context stage get "
        f"daemonsets,deployments,pods -n kube-system -l app.kubernetes.io/instance=hami -o json > {folder.as_posix()}/hami.json)"
    ) in result.stderr


# --- the registration, read as HAMi v2.10.0 reads it ---------------------------------------------------------


def test_json_fields_left_out_are_zero_and_health_left_out_is_unhealthy() -> None:
    text = (
        '[{"id":"GPU-0","count":5,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true},'
        '{"id":"GPU-1","index":1,"count":5,"devmem":15360,"devcore":100,"type":"NVIDIA-Tesla T4","numa":1,"mode":"hami-core"}]'
    )
    devices, problem, legacy = parse_registration(text)
    assert (problem, legacy) == (None, False)
    assert devices is not None
    assert [(d.id, d.index, d.healthy, d.catalog_id, d.mode) for d in devices] == [
        ("GPU-0", 0, True, "tesla-t4", "hami-core"),
        ("GPU-1", 1, False, "tesla-t4", "hami-core"),
    ]
    assert devices[0].resources == {"nvidia.com/gpu": 5, "nvidia.com/gpumem": 15360, "nvidia.com/gpucores": 100}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(LEGACY, [("GPU-a86d27e9-41c5-f3b0-7d18-c29e64f05b83", 0, True, "hami-core")], id="7-fields"),
        pytest.param(
            "GPU-0,10,40960,100,NVIDIA A100-SXM4-40GB,0,true,0,hami-core:GPU-1,10,40960,100,NVIDIA A100-SXM4-40GB,1,false,1,mig:",
            [("GPU-0", 0, True, "hami-core"), ("GPU-1", 1, False, "mig")],
            id="9-fields",
        ),
    ],
)
def test_the_legacy_string_form_is_read_too(text: str, expected: list[tuple[Any, ...]]) -> None:
    devices, problem, legacy = parse_registration(text)
    assert (problem, legacy) == (None, True)
    assert devices is not None
    assert [(d.id, d.index, d.healthy, d.mode) for d in devices] == expected


@pytest.mark.parametrize(
    ("model", "catalog_id"),
    [
        ("NVIDIA-Tesla T4", "tesla-t4"),  # NVML "Tesla T4": prefixed
        ("NVIDIA A100-SXM4-40GB", "a100-40gb"),  # NVML names starting with NVIDIA are kept as they are
        ("NVIDIA-NVIDIA L40S", "l40s"),  # as HAMi's FAQ shows it (older plugins prefixed every name)
        ("NVIDIA-Some Future GPU", None),
    ],
)
def test_registered_types_name_catalog_models(model: str, catalog_id: str | None) -> None:
    devices, _, _ = parse_registration(json.dumps([{"id": "GPU-0", "type": model, "health": True}]))
    assert devices is not None and devices[0].catalog_id == catalog_id


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[{", "not valid JSON"),
        ('{"id": "GPU-0"}', "a JSON dict, not an array of GPUs"),
        ('["GPU-0"]', "entry 0 is not an object"),
        ('[{"devmem": 15360.5}]', "entry 0: devmem is 15360.5, not a whole number"),
        ('[{"health": "true"}]', 'entry 0: health is "true", not true or false'),
        ("GPU-0,5,15360", "neither a JSON array nor GPUs separated by ':'"),
        ("GPU-0,5,15360,100:", "has 4 fields, not 7 or 9"),
        ("GPU-0,5,15360,100,T4,0,yes:", "health true or false"),
    ],
)
def test_an_unreadable_registration_says_why(text: str, problem: str) -> None:
    devices, found, _ = parse_registration(text)
    assert devices is None and found is not None and problem in found


def test_null_registers_no_gpu(tmp_path: Path) -> None:
    assert parse_registration("null") == ((), None, False)
    result = verify_stage(tmp_path / "state", annotate(T4_B, REGISTER, "[]"))
    assert [(f.check, f.subject, f.actual) for f in result.findings] == [
        ("capacity-mismatch", "nvidia.com/gpu in annotation hami.io/node-nvidia-register", 0),
        ("capacity-mismatch", "nvidia.com/gpumem in annotation hami.io/node-nvidia-register", 0),
        ("capacity-mismatch", "nvidia.com/gpucores in annotation hami.io/node-nvidia-register", 0),
    ]
    assert "HAMi registers 0 GPUs on the node" in result.findings[0].hint


def test_a_gpu_operator_cluster_never_reads_a_registration(tmp_path: Path) -> None:
    from verify_helpers import verify

    def edit(files: Files) -> None:
        node(files, "gpu-t4-a")["metadata"]["annotations"][REGISTER] = "garbage"

    result = verify("prod", "prod-healthy", tmp_path / "state", edit)
    assert (result.findings, result.exit_code) == ((), ExitCode.OK)


def test_a_node_the_scheduler_dropped_says_so(tmp_path: Path) -> None:
    result = verify_stage(tmp_path / "state", both(advertise(T4_B, 0), annotate(T4_B, "hami.io/node-handshake", None)))
    (finding,) = result.findings
    assert finding.hint.split("; or: ")[1].startswith(
        "HAMi's scheduler has dropped the node's GPUs: it removes hami.io/node-handshake"
    )


def test_a_node_left_out_of_node_names_runs_with_the_chart_s_settings(tmp_path: Path) -> None:
    from gpustack_gen import load_fleet
    from gpustack_gen.verify import read_state_dir, verify_cluster

    text = HAMI_EXAMPLE.read_text(encoding="utf-8").replace(
        "sharing: {strategy: hami, split: 5}",
        "sharing: {strategy: hami, split: 5}\n        nodeNames: [stage-t4-a, stage-t4-c]",
    )
    named = load_fleet(text, name="fleet.yaml").cluster("stage")
    assert named is not None and node_names(named.pools[0]) == ("stage-t4-a", "stage-t4-c")
    state = read_state_dir(copy_state(HEALTHY, tmp_path / "state", register(T4_B, devcore=200)), named)
    (finding,) = verify_cluster(named, state, fleet_label="fleet.yaml").findings
    assert (
        "the node is not in pool t4's nodeNames, so no entry of devicePlugin.nodeConfiguration applies" in finding.hint
    )


def test_the_toolkit_is_waited_for_only_where_the_operator_runs_it() -> None:
    from gpustack_gen import load_fleet

    text = HAMI_EXAMPLE.read_text(encoding="utf-8")
    assert "toolkit: {enabled: true}" in text
    without = load_fleet(text.replace("toolkit: {enabled: true}", "toolkit: {enabled: false}")).cluster("stage")
    assert without is not None
    backend = VERIFY_BACKENDS["hami"]
    assert "nvidia-container-toolkit-daemonset" in backend.daemonsets(stage())
    assert "nvidia-container-toolkit-daemonset" not in backend.daemonsets(without)


def _plugin_pending(files: Files) -> None:
    """HAMi's device plugin pod on T4_B is scheduled but has no container started yet."""
    status = item(files, "hami.json", "Pod", "hami-device-plugin-9dq4m")["status"]
    status.update(phase="Pending", containerStatuses=[])


def test_a_pending_plugin_pod_is_described(tmp_path: Path) -> None:
    result = verify_stage(tmp_path / "state", both(advertise(T4_B, 0), _plugin_pending))
    hints = [f.hint for f in result.findings if f.check == "gpu-not-advertised" and f.node == T4_B]
    assert len(hints) == 1
    assert (
        "pod hami-device-plugin-9dq4m is not ready yet (Pending): "
        "kubectl --context stage -n kube-system describe pod hami-device-plugin-9dq4m"
    ) in hints[0]
