"""The state's per-node pod lookups: indexed once, the same pods in the same order as a scan of every pod."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpustack_gen.k8s_state import DaemonSet, Pod
from gpustack_gen.k8s_state.load import Where
from gpustack_gen.verify.state import ClusterState

NODES = ("n0", "n1", "n2", None)


def _pod(index: int, node: str | None) -> Pod:
    return Pod(
        f"p{index}", "gpu-operator", node, {}, "nvidia-device-plugin-daemonset", "Running", (), Where("x", index)
    )


@given(st.lists(st.sampled_from(NODES), max_size=30), st.lists(st.sampled_from(NODES), max_size=30))
def test_pods_on_a_node_are_those_a_scan_finds_in_order(
    operator_nodes: list[str | None], release_nodes: list[str | None]
) -> None:
    pods = tuple(_pod(i, node) for i, node in enumerate(operator_nodes))
    release_pods = tuple(_pod(100 + i, node) for i, node in enumerate(release_nodes))
    daemonset = DaemonSet("hami-device-plugin", "kube-system", 1, 1, 1, True, Where("x", 0))  # not a pod: skipped
    state = ClusterState("x", pods=pods, release=(daemonset, *release_pods))
    for node in ("n0", "n1", "n2", "n3"):
        assert state.pods_on(node) == tuple(p for p in pods if p.node_name == node)
        assert state.release_pods_on(node) == tuple(p for p in release_pods if p.node_name == node)


def test_nothing_read_has_no_pods_on_any_node() -> None:
    state = ClusterState("x")
    assert state.pods_on("n0") == () and state.release_pods_on("n0") == ()
