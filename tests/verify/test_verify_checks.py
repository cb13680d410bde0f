"""Each check of ``verify``: silent on clusters that match the fleet, and one fixture it fails, per check id."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dra_helpers import DRA_ONLY
from hami_helpers import HAMI_ONLY
from verify_helpers import EXAMPLE, Files, both, cluster, item, label, node, set_advertised, state, verify

from gpustack_gen import load_fleet
from gpustack_gen.errors import ExitCode, Severity
from gpustack_gen.model.fleet import Cluster
from gpustack_gen.verify import verify_cluster
from gpustack_gen.verify.checks import CHECK_IDS, CHECKS, get


def test_the_registry_lists_every_check_module_once() -> None:
    checks = Path(__file__).resolve().parents[2] / "gpustack_gen" / "verify" / "checks"
    modules = {path.stem.replace("_", "-") for path in checks.glob("*.py") if path.stem != "__init__"}
    assert sorted(CHECK_IDS) == sorted(modules)
    assert all(check.__doc__ and check.NEEDS for check in CHECKS)


@pytest.mark.parametrize("check", CHECK_IDS)
@pytest.mark.parametrize(("name", "scenario"), [("prod", "prod-healthy"), ("train", "train-healthy")])
def test_a_matching_cluster_passes(check: str, name: str, scenario: str, tmp_path: Path) -> None:
    result = verify(name, scenario, tmp_path / "state")
    assert [f for f in result.findings if f.check == check] == []
    assert result.exit_code is ExitCode.OK
    assert result.skipped == ()


def _remove_node(name: str) -> Callable[[Files], None]:
    def edit(files: Files) -> None:
        files["nodes.json"]["items"].remove(node(files, name))

    return edit


def _add_gpu_node(files: Files) -> None:
    extra = json_copy(node(files, "gpu-t4-c"))
    extra["metadata"]["name"] = "gpu-l4-a"
    extra["metadata"]["labels"].update(
        {
            "node.kubernetes.io/instance-type": "g6.xlarge",
            "nvidia.com/gpu.product": "NVIDIA-L4",
            "kubernetes.io/hostname": "gpu-l4-a",
        }
    )
    files["nodes.json"]["items"].append(extra)


def _select_cpu_node(files: Files) -> None:
    node(files, "system-1")["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "gpu-t4"


def json_copy(data: Any) -> Any:
    import json

    return json.loads(json.dumps(data))


def _advertise(name: str, resource: str, value: int) -> Callable[[Files], None]:
    return lambda files: set_advertised(files, name, resource, value)


def _replicas(files: Files) -> None:
    configmap = item(files, "configmaps.json", "ConfigMap", "gpustack-device-plugin-config")
    configmap["data"]["t4"] = configmap["data"]["t4"].replace("replicas: 4", "replicas: 5")


def _unready(daemonset: str) -> Callable[[Files], None]:
    def edit(files: Files) -> None:
        item(files, "operator.json", "DaemonSet", daemonset)["status"]["numberReady"] = 2

    return edit


def _policy(path: tuple[str, ...], value: Any) -> Callable[[Files], None]:
    def edit(files: Files) -> None:
        data = files["clusterpolicy.json"]["items"][0]
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value

    return edit


# check id -> (cluster, scenario, edit, [(pool, node, subject, severity)], a phrase the first hint holds)
FAILING: dict[str, tuple[str, str, Callable[[Files], None], list[tuple[Any, ...]], str]] = {
    "pool-size": ("prod", "prod-healthy", _remove_node("gpu-t4-c"), [("t4", None, "nodes", "error")], "--selector"),
    "unmatched-gpu-node": (
        "prod", "prod-healthy", _add_gpu_node, [(None, "gpu-l4-a", "nodeSelector", "error")], "add a pool",
    ),
    "gpu-not-advertised": (
        "prod", "prod-healthy", _advertise("gpu-t4-b", "nvidia.com/gpu", 0),
        [("t4", "gpu-t4-b", "nvidia.com/gpu", "error")], "CRI-O",
    ),
    "capacity-mismatch": (
        "prod", "prod-healthy", _advertise("gpu-t4-c", "nvidia.com/gpu", 2),
        [("t4", "gpu-t4-c", "nvidia.com/gpu", "error")], "has not reloaded",
    ),
    "label-mismatch": (
        "train", "train-healthy", label("gpu-a100-1", "nvidia.com/mig.config", "all-balanced"),
        [("a100", "gpu-a100-1", "label nvidia.com/mig.config", "error")], "kubectl --context train label node gpu-a100-1",
    ),
    "product-mismatch": (
        "prod", "prod-healthy", label("gpu-t4-c", "nvidia.com/gpu.product", "NVIDIA-L4-SHARED"),
        [("t4", "gpu-t4-c", "label nvidia.com/gpu.product", "error")], "nodeSelector",
    ),
    "mig-state": (
        "train", "train-healthy",
        both(label("gpu-a100-2", "nvidia.com/mig.config.state", "failed"), label("gpu-a100-1", "nvidia.com/mig-1g.5gb.count", "8")),
        [("a100", "gpu-a100-1", "MIG devices", "error"), ("a100", "gpu-a100-2", "label nvidia.com/mig.config.state", "error")],
        "mig-manager",
    ),
    "clusterpolicy": (
        "train", "train-healthy", both(_policy(("spec", "mig", "strategy"), "single"), _policy(("status", "state"), "notReady")),
        [(None, None, "spec.mig.strategy", "error"), (None, None, "status.state", "error")], "helm upgrade",
    ),
    "configmap-drift": (
        "prod", "prod-healthy", _replicas,
        [(None, None, "ConfigMap gpu-operator/gpustack-device-plugin-config key t4", "error")], "kubectl --context prod apply -k rendered/prod",
    ),
    "operator-pods": (
        "train", "train-healthy", _unready("gpu-feature-discovery"),
        [(None, None, "DaemonSet gpu-operator/gpu-feature-discovery", "error")], "rollout status",
    ),
}  # fmt: skip


def test_every_check_has_a_failing_fixture() -> None:
    """Those that only a backend with a registration or a release of its own can fail: test_verify_hami.py;
    those that only the DRA backend's objects can: test_verify_dra.py."""
    assert sorted(FAILING) == sorted(set(CHECK_IDS) - HAMI_ONLY - DRA_ONLY)


@pytest.mark.parametrize("check", sorted(FAILING))
def test_a_cluster_that_differs_fails_the_check(check: str, tmp_path: Path) -> None:
    name, scenario, edit, expected, phrase = FAILING[check]
    result = verify(name, scenario, tmp_path / "state", edit)
    found = sorted(
        ((f.pool, f.node, f.subject, f.severity.value) for f in result.findings if f.check == check),
        key=repr,
    )
    assert found == sorted(expected, key=repr)
    first = next(f for f in result.findings if f.check == check)
    assert phrase in first.hint
    assert result.exit_code is ExitCode.DIFFERS
    assert check == get(check).ID


def test_capacity_and_replicas_name_the_values(tmp_path: Path) -> None:
    result = verify("prod", "prod-healthy", tmp_path / "a", _replicas)
    (finding,) = result.findings
    assert finding.message == (
        "ConfigMap gpu-operator/gpustack-device-plugin-config key t4: sharing.timeSlicing.resources[0].replicas: "
        "expected 4, actual 5"
    )
    result = verify("prod", "prod-healthy", tmp_path / "b", _advertise("gpu-t4-c", "nvidia.com/gpu", 2))
    (finding,) = result.findings
    assert (finding.message, finding.expected, finding.actual) == ("nvidia.com/gpu: expected 4, actual 2", 4, 2)
    assert finding.hint.startswith("likely: the plugin has not reloaded since ConfigMap gpustack-device-plugin-config")


def test_a_selected_node_without_gpu_is_counted_and_says_so(tmp_path: Path) -> None:
    result = verify("prod", "prod-healthy", tmp_path / "state", _select_cpu_node)
    assert [(f.check, f.node) for f in result.findings] == [
        ("pool-size", None),
        ("capacity-mismatch", "system-1"),
        ("label-mismatch", "system-1"),
    ]
    assert "no GPU shows on the node" in result.findings[1].hint


def test_an_unlabelled_node_that_any_covers_is_a_warning(tmp_path: Path) -> None:
    result = verify(
        "prod", "prod-healthy", tmp_path / "state", label("gpu-t4-a", "nvidia.com/device-plugin.config", None)
    )
    (finding,) = result.findings
    assert (finding.check, finding.severity, finding.node) == ("label-mismatch", Severity.WARNING, "gpu-t4-a")
    assert finding.message == (
        "label nvidia.com/device-plugin.config: expected t4, actual absent: covered by any, which holds the same config "
        "(time-slicing, 4 per GPU); label it, so that a later change to the pool reaches it"
    )
    assert result.exit_code is ExitCode.OK


def _prod_with(pool: str) -> Cluster:
    """examples/fleet.yaml's prod with one more pool (a flow mapping) after its t4 pool."""
    selector = "        nodeSelector: {node.kubernetes.io/instance-type: gpu-t4}\n"
    text = EXAMPLE.read_text(encoding="utf-8").replace(selector, f"{selector}      - {pool}\n", 1)
    prod = load_fleet(text, name="fleet.yaml").cluster("prod")
    assert prod is not None
    return prod


def test_an_unlabelled_node_that_any_gives_whole_gpus_is_an_error(tmp_path: Path) -> None:
    # With a second pool of another config, `any` holds whole GPUs: an unlabelled T4 node is not shared.
    prod = _prod_with(
        "{name: l4, gpu: l4, nodes: 0, gpusPerNode: 1, nodeSelector: {node.kubernetes.io/instance-type: gpu-l4}}"
    )
    observed = state("prod-healthy", tmp_path / "state", label("gpu-t4-a", "nvidia.com/device-plugin.config", None))
    result = verify_cluster(prod, observed, fleet_label="fleet.yaml")
    labels = [f for f in result.findings if f.check == "label-mismatch"]
    assert [(f.node, f.severity) for f in labels] == [("gpu-t4-a", Severity.ERROR)]
    assert labels[0].message.endswith("it gets any, which holds whole GPUs, instead of t4's time-slicing, 4 per GPU")


def test_a_node_two_pools_select_is_counted_once(tmp_path: Path) -> None:
    prod = _prod_with(
        "{name: t4-zone-a, gpu: tesla-t4, nodes: 1, gpusPerNode: 1, nodeSelector: {topology.kubernetes.io/zone: eu-west-1c}}"
    )
    result = verify_cluster(prod, state("prod-healthy", tmp_path / "state"), fleet_label="fleet.yaml")
    sizes = [(f.pool, f.node, f.actual) for f in result.findings if f.check == "pool-size"]
    assert sizes == [("t4-zone-a", None, 0), ("t4", "gpu-t4-c", ["t4", "t4-zone-a"])]


def test_the_cluster_is_matched_by_its_own_backend_hook() -> None:
    from gpustack_gen.verify.backends import VERIFY_BACKENDS, verify_backend

    assert verify_backend(cluster("prod")) is VERIFY_BACKENDS["gpu-operator"]


def test_a_failed_mig_config_names_the_node_s_mig_manager_logs(tmp_path: Path) -> None:
    # kubectl logs takes no --field-selector: the node's pod comes from kubectl get, which does.
    result = verify(
        "train", "train-healthy", tmp_path / "state", label("gpu-a100-2", "nvidia.com/mig.config.state", "failed")
    )
    (finding,) = [f for f in result.findings if f.check == "mig-state"]
    assert (
        "kubectl --context train -n gpu-operator get pods -l app=nvidia-mig-manager "
        "--field-selector spec.nodeName=gpu-a100-2 -o name | xargs kubectl --context train -n gpu-operator logs"
    ) in finding.hint
