"""The model of the standalone device plugin chart beside the GPU Operator, on hand-written command sequences:
the write-up's cluster (T4s time-sliced 4 by the ``nvdp`` release, CRI-O, drivers and toolkit on the host) moved to
the Operator pool by pool passes both invariants (no node runs two plugins registering ``nvidia.com/gpu``; no pool
at zero outside its drained batch), and each wrong order fails one of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML
from sim.cluster import DEPLOY_DP_LABEL, DP_LABEL, Cluster, Node, SimulationError, WorkloadPod
from sim.shell import Shell
from sim.simulator import NFD_GPU_LABEL, check_pools_advertise
from sim.upstream import facts_for_product

from gpustack_gen.catalog import get_gpu

CONTEXT = "prod"
OFF_LABEL = "gpustack.io/standalone-plugin"
TIME_SLICED = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
WHOLE = "version: v1\n"
POOLS = {"t4": "tesla-t4", "l4": "l4"}
OPERATOR_NS = "gpu-operator"


def _affinity(off_switch: bool) -> dict[str, object]:
    """The chart's three OR'ed terms, each with the off switch when asked (research standalone-plugin.md §7)."""
    terms = []
    for key, value in (
        (NFD_GPU_LABEL, "true"),
        ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
        ("nvidia.com/gpu.present", "true"),
    ):
        expressions = [{"key": key, "operator": "In", "values": [value]}]
        if off_switch:
            expressions.append({"key": OFF_LABEL, "operator": "NotIn", "values": ["off"]})
        terms.append({"matchExpressions": expressions})
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def _write(path: Path, data: object) -> str:
    yaml = YAML()
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(data, handle)
    return path.name


@pytest.fixture
def move(upstream: Path, tmp_path: Path) -> tuple[Cluster, Shell]:
    """The imported cluster: the standalone chart serving both pools, the Operator not yet installed."""
    cluster = Cluster(upstream, OPERATOR_NS)
    for pool, gpu_id in POOLS.items():
        gpu = get_gpu(gpu_id)
        assert gpu is not None
        facts = facts_for_product(upstream, gpu.product_labels)
        for index in range(2):
            labels = {NFD_GPU_LABEL: "true", "pool": pool, DP_LABEL: pool}
            cluster.join(Node(f"{pool}-{index}", pool, facts, 1, labels, gpu_id=gpu_id))
    config = {"map": {"t4": TIME_SLICED, "l4": WHOLE}}
    _write(tmp_path / "nvdp-before.yaml", {"config": config, "affinity": _affinity(False)})
    _write(
        tmp_path / "nvdp.yaml", {"config": config, "affinity": _affinity(True), "updateStrategy": {"type": "OnDelete"}}
    )
    _write(
        tmp_path / "operator.yaml",
        {
            "driver": {"enabled": False},
            "toolkit": {"enabled": True},
            "cdi": {"enabled": True, "default": True},
            "devicePlugin": {"config": {"name": "device-plugin-config", "default": ""}},
        },
    )
    shell = Shell(cluster, tmp_path, CONTEXT)
    shell.run("helm repo add nvdp https://nvidia.github.io/k8s-device-plugin")
    shell.run("helm repo add nvidia https://helm.ngc.nvidia.com/nvidia")
    shell.run(_nvdp("nvdp-before.yaml"))
    cluster.advance(60)
    for node in cluster.nodes.values():
        assert node.nvdp.running, node.nvdp.error
    cluster.pods = [WorkloadPod("ml/api", {"nvidia.com/gpu": 1}, {"pool": "t4"}) for _ in range(2)]
    cluster.schedule()
    return cluster, shell


def _nvdp(values: str) -> str:
    return (
        f"helm upgrade --install nvdp nvdp/nvidia-device-plugin --version 0.17.4 --namespace nvidia-device-plugin "
        f"--create-namespace -f {values} --kube-context {CONTEXT}"
    )


def _k(text: str) -> str:
    return f"kubectl --context {CONTEXT} {text}"


def _prepare() -> list[str]:
    """Cluster-wide: the chart gets its off switch (OnDelete, so nothing restarts), every GPU node is pre-labelled
    device-plugin=false, the Operator's ConfigMap and the Operator itself."""
    return [
        _nvdp("nvdp.yaml"),
        _k(f"label nodes --selector {NFD_GPU_LABEL}=true {DEPLOY_DP_LABEL}=false --overwrite"),
        "operator-configmap",
        f"helm upgrade --install gpu-operator nvidia/gpu-operator --version v25.3.3 --namespace {OPERATOR_NS} "
        f"-f operator.yaml --disable-openapi-validation --kube-context {CONTEXT}",
    ]


def _pool(pool: str, gpus: int) -> list[str]:
    selector = f"--selector pool={pool}"
    return [
        _k(f"drain {selector} --ignore-daemonsets --delete-emptydir-data --timeout 10m"),
        _k(f"label nodes {selector} {OFF_LABEL}=off --overwrite"),
        _k(f"wait nodes {selector} --for='jsonpath={{.status.allocatable.nvidia\\.com/gpu}}=0' --timeout 5m"),
        _k(f"label nodes {selector} {DEPLOY_DP_LABEL}=true --overwrite"),
        _k(f"wait nodes {selector} --for='jsonpath={{.status.allocatable.nvidia\\.com/gpu}}={gpus}' --timeout 10m"),
        _k(f"uncordon {selector}"),
    ]


def _replay(cluster: Cluster, shell: Shell, commands: list[str]) -> None:
    for number, command in enumerate(commands, 1):
        try:
            if command == "operator-configmap":
                cluster.namespaces.add(OPERATOR_NS)
                cluster.apply_configmap("device-plugin-config", {"t4": TIME_SLICED, "l4": WHOLE})
            else:
                shell.run(command)
            check_pools_advertise(cluster, set(POOLS))
        except SimulationError as error:
            raise SimulationError(f"command {number} ({command}): {error}") from None


def _moved() -> list[str]:
    return [
        *_prepare(),
        *_pool("t4", 4),
        *_pool("l4", 1),
        f"helm uninstall nvdp --namespace nvidia-device-plugin --kube-context {CONTEXT}",
    ]


def test_the_move_pool_by_pool_keeps_one_plugin_per_node_and_gpus_in_every_pool(move: tuple[Cluster, Shell]) -> None:
    cluster, shell = move
    _replay(cluster, shell, _moved())
    cluster.advance(600)
    assert cluster.standalone is None
    for node in cluster.nodes.values():
        assert node.dp.running and not node.nvdp.running
        assert node.allocatable["nvidia.com/gpu"] == (4 if node.pool == "t4" else 1)


def test_the_operators_plugin_on_before_the_standalone_is_off_runs_two_plugins(move: tuple[Cluster, Shell]) -> None:
    cluster, shell = move
    steps = _moved()
    t4 = steps[len(_prepare()) :][:6]
    reordered = [*_prepare(), t4[0], t4[3], t4[1], t4[2], t4[4], t4[5]]
    with pytest.raises(SimulationError, match=r"runs two device plugins that register nvidia\.com/gpu"):
        _replay(cluster, shell, reordered)


def test_the_operator_installed_before_the_nodes_say_device_plugin_false_runs_two_plugins(
    move: tuple[Cluster, Shell],
) -> None:
    """v25.3.3 adds deploy.device-plugin=true where the key is absent: its plugin starts beside the standalone one."""
    cluster, shell = move
    first, label, configmap, install = _prepare()
    with pytest.raises(SimulationError, match="runs two device plugins"):
        _replay(cluster, shell, [first, configmap, install, label])


def test_the_standalone_plugin_off_an_undrained_pool_leaves_it_at_zero(move: tuple[Cluster, Shell]) -> None:
    cluster, shell = move
    t4 = _pool("t4", 4)
    with pytest.raises(SimulationError, match="pool t4 advertises no GPU on its schedulable nodes"):
        _replay(cluster, shell, [*_prepare(), t4[1]])


def test_the_off_switch_rolled_out_as_rolling_update_restarts_every_plugin(move: tuple[Cluster, Shell]) -> None:
    """Without OnDelete the new affinity is a template change: every standalone pod restarts (research §7)."""
    cluster, shell = move
    started = {name: node.nvdp.started for name, node in cluster.nodes.items()}
    cluster.advance(60)
    values = shell.cwd / "nvdp-rolling.yaml"
    values.write_text((shell.cwd / "nvdp.yaml").read_text(encoding="utf-8").replace("OnDelete", "RollingUpdate"))
    shell.run(_nvdp("nvdp-rolling.yaml"))
    assert all(node.nvdp.started > started[name] for name, node in cluster.nodes.items())
    shell.run(_nvdp("nvdp.yaml"))
    restarted = {name: node.nvdp.started for name, node in cluster.nodes.items()}
    cluster.advance(60)
    shell.run(_nvdp("nvdp.yaml"))
    assert {name: node.nvdp.started for name, node in cluster.nodes.items()} == restarted


def test_a_label_naming_no_key_keeps_the_standalone_plugin_from_starting(move: tuple[Cluster, Shell]) -> None:
    """The chart's config-manager init exits on a key its ConfigMap lacks (cmd/config-manager/main.go:351-354)."""
    cluster, shell = move
    node = cluster.nodes["t4-0"]
    shell.run(_k("label nodes t4-0 nvidia.com/device-plugin.config=missing --overwrite"))
    assert node.nvdp.running and "does not exist" in node.nvdp.error  # the sidecar exits, the plugin keeps its config
    cluster.standalone_sync(node, restart=True)
    assert not node.nvdp.running and node.nvdp.error == "specified config missing does not exist"


def test_the_plans_off_switch_check_fails_on_a_release_installed_without_it(move: tuple[Cluster, Shell]) -> None:
    """An imported release has the chart's own affinity: the plan stops at its first step, before any node changes,
    and passes once the release runs the rendered values (here the hand-written ones with the switch)."""
    from gpustack_gen import load_fleet
    from gpustack_gen.change import analyse

    case = Path(__file__).resolve().parent.parent / "changes" / "device-plugin-to-gpu-operator"
    old = load_fleet(case / "old.yaml").cluster(CONTEXT)
    new = load_fleet(case / "new.yaml").cluster(CONTEXT)
    first = analyse(old, new).steps[0]
    assert "gpustack.io/standalone-plugin" in (first.command_text or "")
    _, shell = move
    with pytest.raises(SimulationError, match="timed out"):
        shell.run(first.command_text or "")
    shell.run(_nvdp("nvdp.yaml"))
    shell.run(first.command_text or "")
